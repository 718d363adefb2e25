// SPDX-License-Identifier: GPL-2.0
/*
 * ojson.c - TRANSITIONAL (issue 19, removed once every stage takes struct outlier): print an OUTLIER object (the contract's JSON form) for people.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/duration.h"
#include "lib/ojson.h"

/**
 * ojson_i64 - integer member @key of @obj; 0 when @obj or the member is missing or null.
 */
int64_t ojson_i64(struct json_object *obj, const char *key)
{
	struct json_object *value;

	if (!json_object_object_get_ex(obj, key, &value) || !value) {
		return 0;
	}
	return json_object_get_int64(value);
}

/**
 * ojson_add_flag - append @text to the "flags" array of @outlier, creating it if needed.
 */
void ojson_add_flag(struct json_object *outlier, const char *text)
{
	struct json_object *flags;

	if (!json_object_object_get_ex(outlier, "flags", &flags) || !flags) {
		flags = json_object_new_array();
		json_object_object_add(outlier, "flags", flags);
	}
	json_object_array_add(flags, json_object_new_string(text));
}

/**
 * ojson_drop_flags - remove every flag of @outlier that starts with @prefix: what was said of
 * a part that has been replaced since.
 */
void ojson_drop_flags(struct json_object *outlier, const char *prefix)
{
	struct json_object *flags;
	size_t i, len = strlen(prefix);

	if (!json_object_object_get_ex(outlier, "flags", &flags) || !flags) {
		return;
	}
	for (i = json_object_array_length(flags); i-- > 0;) {
		if (!strncmp(json_object_get_string(json_object_array_get_idx(flags, i)), prefix,
			     len)) {
			json_object_array_del_idx(flags, i, 1);
		}
	}
}

/**
 * ojson_has_flag - does @outlier carry a flag that starts with @prefix?
 */
bool ojson_has_flag(struct json_object *outlier, const char *prefix)
{
	struct json_object *flags;
	size_t i, len = strlen(prefix);

	if (!json_object_object_get_ex(outlier, "flags", &flags) || !flags) {
		return false;
	}
	for (i = 0; i < json_object_array_length(flags); i++) {
		if (!strncmp(json_object_get_string(json_object_array_get_idx(flags, i)), prefix,
			     len)) {
			return true;
		}
	}
	return false;
}

/**
 * ojson_str - string member @key of @obj; @fallback when @obj or the member is missing or not
 * a string.
 */
const char *ojson_str(struct json_object *obj, const char *key, const char *fallback)
{
	struct json_object *value;

	if (!json_object_object_get_ex(obj, key, &value) || !value ||
	    !json_object_is_type(value, json_type_string)) {
		return fallback;
	}
	return json_object_get_string(value);
}

static void print_share(FILE *out, const char *label, int64_t part, int64_t whole)
{
	char text[LS_DURATION_BUFSZ];

	ls_format_duration(part < 0 ? 0 : (uint64_t)part, text, sizeof(text));
	fprintf(out, "  %s %s (%.1f%%)", label, text, whole > 0 ? 100.0 * part / whole : 0.0);
}

static void print_frames(FILE *out, struct json_object *frames, const char *indent)
{
	size_t i, n = frames ? json_object_array_length(frames) : 0;

	if (!n) {
		fprintf(out, "%s(no frames)\n", indent);
		return;
	}
	for (i = 0; i < n; i++) {
		struct json_object *frame = json_object_array_get_idx(frames, i);
		const char *symbol = ojson_str(frame, "symbol", NULL);
		const char *module = ojson_str(frame, "module", "?");

		if (symbol) {
			fprintf(out, "%s%s+0x%" PRIx64, indent, symbol,
				(uint64_t)ojson_i64(frame, "offset"));
		} else {
			fprintf(out, "%s%s", indent, ojson_str(frame, "addr", "?"));
		}
		if (strcmp(module, "kernel")) {
			fprintf(out, " (%s)", module);
		}
		fputc('\n', out);
	}
}

/**
 * ojson_print_text - one block for @outlier: what, how long, the split, where it waited, who
 * woke it, and what is missing.
 */
/*
 * The wait chain as flightbox put it: "read() 101.0 ms: srvhog 2666 ran 89.8 ms on CPU", then
 * each link's split, and on what it was blocked.
 */
static void print_wait_chain(FILE *out, struct json_object *outlier)
{
	struct json_object *chain = NULL, *link, *frames = NULL;
	size_t i, n;
	int64_t span;

	json_object_object_get_ex(outlier, "wait_chain", &chain);
	n = chain ? json_object_array_length(chain) : 0;
	if (!n) {
		return;
	}
	fputs("  wait chain (who held it up, nearest first):\n", out);
	for (i = 0; i < n; i++) {
		link = json_object_array_get_idx(chain, i);
		span = ojson_i64(link, "to_ns") - ojson_i64(link, "from_ns");
		fprintf(out,
			"  %*s%" PRId64 ". %s [pid %" PRId64 " tid %" PRId64 "], over %.1f ms:",
			(int)(2 * ojson_i64(link, "depth")) - 2, "", ojson_i64(link, "depth"),
			ojson_str(link, "comm", "?"), ojson_i64(link, "pid"),
			ojson_i64(link, "tid"), span / 1e6);
		print_share(out, "ran", ojson_i64(link, "on_cpu_ns"), span);
		fputs(" on CPU,", out);
		print_share(out, "blocked", ojson_i64(link, "blocked_ns"), span);
		if (json_object_get_string(json_object_object_get(link, "syscall"))) {
			fprintf(out, " in %s()", ojson_str(link, "syscall", "?"));
		}
		fputc(',', out);
		print_share(out, "runqueue", ojson_i64(link, "runqueue_ns"), span);
		if (ojson_i64(link, "unknown_ns")) {
			fputc(',', out);
			print_share(out, "not followed", ojson_i64(link, "unknown_ns"), span);
		}
		fputc('\n', out);
		json_object_object_get_ex(link, "frames", &frames);
		if (frames && json_object_array_length(frames)) {
			print_frames(out, frames, "        ");
		}
	}
}

void ojson_print_text(FILE *out, struct json_object *outlier)
{
	struct json_object *stacks = NULL, *waker = NULL, *flags = NULL, *user = NULL;
	int64_t duration = ojson_i64(outlier, "duration_ns");
	char text[LS_DURATION_BUFSZ];
	size_t i, n;

	ls_format_duration(duration < 0 ? 0 : (uint64_t)duration, text, sizeof(text));
	fprintf(out,
		"%s %s  %s[pid %" PRId64 " tid %" PRId64 "]  %s  at %" PRId64 ".%09" PRId64 "\n",
		ojson_str(outlier, "kind", "?"), ojson_str(outlier, "syscall", "off-cpu"),
		ojson_str(outlier, "comm", "?"), ojson_i64(outlier, "pid"),
		ojson_i64(outlier, "tid"), text, ojson_i64(outlier, "start_ns") / 1000000000,
		ojson_i64(outlier, "start_ns") % 1000000000);
	print_share(out, "on-cpu", ojson_i64(outlier, "on_cpu_ns"), duration);
	print_share(out, "blocked", ojson_i64(outlier, "blocked_ns"), duration);
	print_share(out, "runqueue", ojson_i64(outlier, "runqueue_ns"), duration);
	fprintf(out, "  switches %" PRId64 "\n", ojson_i64(outlier, "switches"));
	fprintf(out, "  cause: %s\n", ojson_str(outlier, "cause", "unknown"));

	json_object_object_get_ex(outlier, "kernel_stacks", &stacks);
	n = stacks ? json_object_array_length(stacks) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *stack = json_object_array_get_idx(stacks, i), *frames = NULL;
		int64_t weight = ojson_i64(stack, "weight_ns");

		ls_format_duration(weight < 0 ? 0 : (uint64_t)weight, text, sizeof(text));
		fprintf(out, "  kernel stack %zu of %zu, waited %s (%.1f%%):\n", i + 1, n, text,
			duration > 0 ? 100.0 * weight / duration : 0.0);
		json_object_object_get_ex(stack, "frames", &frames);
		print_frames(out, frames, "    ");
	}

	json_object_object_get_ex(outlier, "user_stack", &user);
	if (user && strcmp(ojson_str(user, "source", "none"), "none")) {
		struct json_object *frames = NULL;

		fprintf(out, "  user stack (%s):\n", ojson_str(user, "source", "?"));
		json_object_object_get_ex(user, "frames", &frames);
		print_frames(out, frames, "    ");
	}

	if (json_object_object_get_ex(outlier, "waker", &waker) && waker) {
		struct json_object *frames = NULL;

		if (ojson_i64(waker, "tid")) {
			fprintf(out, "  woken by %s[pid %" PRId64 " tid %" PRId64 "]:\n",
				ojson_str(waker, "comm", "?"), ojson_i64(waker, "pid"),
				ojson_i64(waker, "tid"));
		} else {
			fprintf(out, "  woken by %s:\n", ojson_str(waker, "comm", "?"));
		}
		json_object_object_get_ex(waker, "frames", &frames);
		print_frames(out, frames, "    ");
	}

	print_wait_chain(out, outlier);

	json_object_object_get_ex(outlier, "flags", &flags);
	n = flags ? json_object_array_length(flags) : 0;
	for (i = 0; i < n; i++) {
		fprintf(out, "  ! %s\n",
			json_object_get_string(json_object_array_get_idx(flags, i)));
	}
	fputc('\n', out);
}
