// SPDX-License-Identifier: GPL-2.0
/*
 * request.c - read the probe pair of --request START[,END]. The probes themselves are attached
 * by libbpf (its USDT support reads the ELF notes; its uprobes resolve the symbol): see
 * tracker_add_request().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "include/latsnap.h"
#include "tracker/request.h"

static void say(char *why, size_t why_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_size, fmt, ap);
	va_end(ap);
}

static void probe_free(struct request_probe *p)
{
	free(p->path);
	free(p->provider);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

/*
 * parse_key - the "=KEY" suffix of probe @text, cut off @last (its last field): "tid", "argN"
 * or "ret" (a uretprobe's only).
 */
static int parse_key(const char *text, size_t len, char *last, struct request_probe *p, char *why,
		     size_t why_size)
{
	char *eq = strchr(last, '=');
	unsigned long n;
	char *end;

	p->key = LS_REQ_KEY_THREAD;
	if (!eq) {
		return 0;
	}
	*eq++ = '\0';
	if (!strcmp(eq, "tid")) {
		return 0;
	}
	if (!strcmp(eq, "ret")) {
		if (p->kind != REQUEST_URETPROBE) {
			say(why, why_size,
			    "probe '%.*s': only a uretprobe has a return value (=ret)", (int)len,
			    text);
			return -EINVAL;
		}
		p->key = LS_REQ_KEY_RET;
		return 0;
	}
	if (!strncmp(eq, "arg", 3) && eq[3] >= '1' && eq[3] <= '9') {
		n = strtoul(eq + 3, &end, 10);
		if (!*end && n <= (p->kind == REQUEST_USDT ? LS_REQ_KEY_ARGS : 5)) {
			if (p->kind == REQUEST_URETPROBE) {
				say(why, why_size,
				    "probe '%.*s': a uretprobe's arguments are gone "
				    "at its return: key it by =ret",
				    (int)len, text);
				return -EINVAL;
			}
			p->key = (unsigned int)n;
			return 0;
		}
	}
	say(why, why_size, "probe '%.*s': unknown key '=%s' (=tid, =arg1 to =arg%d, or =ret)",
	    (int)len, text, eq, p->kind == REQUEST_USDT ? LS_REQ_KEY_ARGS : 5);
	return -EINVAL;
}

/*
 * parse_probe - "usdt:PATH:PROVIDER:NAME", "uprobe:PATH:SYMBOL" or "uretprobe:PATH:SYMBOL",
 * each with an optional "=KEY", @len bytes of @text. The fields after PATH are split from the
 * end: a path may hold a colon.
 */
static int parse_probe(const char *text, size_t len, struct request_probe *p, char *why,
		       size_t why_size)
{
	char *copy, *rest, *last, *before;
	int ret = -EINVAL;

	memset(p, 0, sizeof(*p));
	copy = strndup(text, len);
	if (!copy) {
		return -ENOMEM;
	}
	rest = strchr(copy, ':');
	if (!rest) {
		say(why, why_size, "'%s' is not KIND:PATH:...", copy);
		goto out;
	}
	*rest++ = '\0';
	if (!strcmp(copy, "usdt")) {
		p->kind = REQUEST_USDT;
	} else if (!strcmp(copy, "uprobe")) {
		p->kind = REQUEST_UPROBE;
	} else if (!strcmp(copy, "uretprobe")) {
		p->kind = REQUEST_URETPROBE;
	} else {
		say(why, why_size, "unknown probe kind '%s' (usdt, uprobe or uretprobe)", copy);
		goto out;
	}
	last = strrchr(rest, ':');
	if (!last || !last[1]) {
		say(why, why_size, "%s probe '%.*s' names no %s", copy, (int)len, text,
		    p->kind == REQUEST_USDT ? "NAME" : "SYMBOL");
		goto out;
	}
	*last++ = '\0';
	if (parse_key(text, len, last, p, why, why_size)) {
		goto out;
	}
	if (!*last) {
		say(why, why_size, "%s probe '%.*s' names no %s", copy, (int)len, text,
		    p->kind == REQUEST_USDT ? "NAME" : "SYMBOL");
		goto out;
	}
	if (p->kind == REQUEST_USDT) {
		before = strrchr(rest, ':');
		if (!before || !before[1]) {
			say(why, why_size, "usdt probe '%.*s' is not usdt:PATH:PROVIDER:NAME",
			    (int)len, text);
			goto out;
		}
		*before++ = '\0';
		p->provider = strdup(before);
	}
	if (!*rest) {
		say(why, why_size, "probe '%.*s' names no PATH", (int)len, text);
		goto out;
	}
	p->path = strdup(rest);
	p->name = strdup(last);
	ret = p->path && p->name && (p->kind != REQUEST_USDT || p->provider) ? 0 : -ENOMEM;
out:
	if (ret) {
		probe_free(p);
	}
	free(copy);
	return ret;
}

/**
 * request_parse() - read --request START[,END]
 * @why: on -EINVAL, what is wrong with @text
 *
 * START alone must be uprobe:PATH:SYMBOL: the request is then the function, from its entry to its
 * return. Keys (=KEY) are given on both probes or on neither: a request that begins on an object
 * ends on the same object.
 *
 * Return: 0 (free @spec with request_spec_free()), -EINVAL, or -ENOMEM.
 */
int request_parse(const char *text, struct request_spec *spec, char *why, size_t why_size)
{
	const char *comma = strchr(text, ',');
	int ret;

	memset(spec, 0, sizeof(*spec));
	spec->text = strdup(text);
	if (!spec->text) {
		return -ENOMEM;
	}
	ret = parse_probe(text, comma ? (size_t)(comma - text) : strlen(text), &spec->start, why,
			  why_size);
	if (!ret && comma) {
		ret = parse_probe(comma + 1, strlen(comma + 1), &spec->end, why, why_size);
	} else if (!ret) {
		if (spec->start.kind != REQUEST_UPROBE) {
			say(why, why_size,
			    "a START alone must be uprobe:PATH:SYMBOL (from the "
			    "function's entry to its return); give START,END");
			ret = -EINVAL;
		} else {
			spec->end.kind = REQUEST_URETPROBE;
			spec->end.path = strdup(spec->start.path);
			spec->end.name = strdup(spec->start.name);
			ret = spec->end.path && spec->end.name ? 0 : -ENOMEM;
		}
	}
	if (!ret &&
	    (spec->start.key == LS_REQ_KEY_THREAD) != (spec->end.key == LS_REQ_KEY_THREAD)) {
		say(why, why_size,
		    "both probes name a key (=argN or =ret), or neither does: the "
		    "object a request starts on is the one it ends on");
		ret = -EINVAL;
	}
	if (ret) {
		request_spec_free(spec);
	}
	return ret;
}

/**
 * request_spec_free() - free what request_parse() made
 */
void request_spec_free(struct request_spec *spec)
{
	free(spec->text);
	probe_free(&spec->start);
	probe_free(&spec->end);
	memset(spec, 0, sizeof(*spec));
}
