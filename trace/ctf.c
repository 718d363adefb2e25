// SPDX-License-Identifier: GPL-2.0
/*
 * ctf.c - read the CTF trace of a snapshot: events in time order, their fields as json-c
 * objects, delivered in the caller's process and thread.
 *
 * libbabeltrace2 itself runs in latsnap-trace-reader (trace/ctf-reader.c), a process of its own
 * started with posix_spawn(), which sends the events up a pipe, one JSON line each: a corrupt
 * trace that crashes, hangs or exhausts libbabeltrace2 costs the caller an error, never itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/ctf-reader.h"
#include "lib/util.h"

/* Fields nest this deep at most (ctf-reader.c bounds them so); the lines two levels more. */
#define CTF_FIELD_DEPTH 32
/* The reader has hung when it says nothing this long; it says something each second at least. */
#define CTF_SILENCE_MS 20000
/* No event line is this long; a longer one means the reader has gone wrong. */
#define CTF_LINE_MAX (64U << 20)
#define CTF_READ_CHUNK 65536U

/* One reading (ctf_read() and its siblings): what it asked for, and what became of it. */
struct ctf_call {
	const char *dir;
	const char *prefix;
	ctf_event_fn fn;
	void *ctx;
	struct ctf_trace_info info;
	int cb_ret;
	bool stopped;
};

struct ctf_relay {
	char *buf;
	size_t len, cap;
	bool done;
	bool ended;
};

static uint64_t json_u64(struct json_object *obj)
{
	/* Unsigned values travel as the int64 of their bits. */
	return (uint64_t)json_object_get_int64(obj);
}

/* The reader's "clock" object (ctf-reader.c add_clock()) into @c; unknown when malformed. */
static void read_clock(struct json_object *obj, struct ctf_clock *c)
{
	struct json_object *v;
	const char *uuid;
	unsigned int byte;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (!json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, "freq", &v)) {
		return;
	}
	c->freq = json_u64(v);
	snprintf(c->name, sizeof(c->name), "%s",
		 json_object_get_string(json_object_object_get(obj, "name")) ?: "");
	c->offset_s = json_object_get_int64(json_object_object_get(obj, "offset_s"));
	c->offset_cycles = json_u64(json_object_object_get(obj, "offset"));
	c->precision = json_u64(json_object_object_get(obj, "precision"));
	c->origin_unix = json_object_get_boolean(json_object_object_get(obj, "unix"));
	uuid = json_object_get_string(json_object_object_get(obj, "uuid"));
	if (uuid && strlen(uuid) == 2 * sizeof(c->uuid)) {
		for (i = 0; i < sizeof(c->uuid) && sscanf(uuid + 2 * i, "%2x", &byte) == 1; i++) {
			c->uuid[i] = (uint8_t)byte;
		}
		c->has_uuid = i == sizeof(c->uuid);
	}
	c->known = c->freq != 0 && c->name[0];
}

/*
 * relay_line() - act on one line from the reader: call the user's callback for an event, take
 * the result from the last line.
 *
 * Return: 0, or a negative errno with @why set; the callback's negative value as is.
 */
static int relay_line(struct ctf_call *r, struct ctf_relay *rl, const char *line, size_t n,
		      char *why, size_t len)
{
	struct json_object *obj = NULL, *name, *ts, *fields, *end, *info, *msg, *origin;
	struct ctf_event ev;
	json_tokener *tok;
	int ret = 0;

	if (n == 0) {
		/* A heartbeat. */
		goto out;
	}
	/* Event fields nest CTF_FIELD_DEPTH deep at most, under the line's own two levels. */
	tok = json_tokener_new_ex(CTF_FIELD_DEPTH + 4);
	if (!tok) {
		ret = -ENOMEM;
		snprintf(why, len, "%s", strerror(ENOMEM));
		goto out;
	}
	obj = json_tokener_parse_ex(tok, line, (int)n);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != n || !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	if (!obj) {
		ret = -EPROTO;
		snprintf(why, len, "garbled output from the trace reading process");
		goto out;
	}
	if (json_object_object_get_ex(obj, "n", &name) &&
	    json_object_object_get_ex(obj, "t", &ts) &&
	    json_object_object_get_ex(obj, "f", &fields)) {
		ev.name = json_object_get_string(name);
		ev.ts_ns = json_u64(ts);
		ev.fields = fields;
		ev.origin = json_object_object_get_ex(obj, "o", &origin) ?
				    json_object_get_int(origin) :
				    CTF_ORIGIN_UNKNOWN;
		ret = r->fn(&ev, r->ctx);
		if (ret) {
			/* A positive value is a plain stop; a negative one the callback's error. */
			ret = ret < 0 ? ret : 0;
			r->cb_ret = ret;
			r->stopped = true;
			rl->done = true;
		}
		goto out;
	}
	if (!json_object_object_get_ex(obj, "end", &end)) {
		ret = -EPROTO;
		snprintf(why, len, "garbled output from the trace reading process");
		goto out;
	}
	rl->done = true;
	rl->ended = true;
	ret = json_object_get_int(end);
	if (ret > 0) {
		ret = -EPROTO;
	}
	if (ret) {
		msg = json_object_object_get(obj, "why");
		snprintf(why, len, "%s", msg ? json_object_get_string(msg) : strerror(-ret));
		goto out;
	}
	info = json_object_object_get(obj, "info");
	if (json_object_array_length(info) == 5) {
		r->info.first_ns = json_u64(json_object_array_get_idx(info, 0));
		r->info.last_ns = json_u64(json_object_array_get_idx(info, 1));
		r->info.events = json_u64(json_object_array_get_idx(info, 2));
		r->info.discarded_events = json_u64(json_object_array_get_idx(info, 3));
		r->info.discarded_packets = json_u64(json_object_array_get_idx(info, 4));
	}
	read_clock(json_object_object_get(obj, "clock"), &r->info.clock);
out:
	json_object_put(obj);
	return ret;
}

/*
 * relay() - read the reader's lines from @fd until its last one, a stop, an error, or silence
 * @ended: set when the reader's last line came
 *
 * Return: 0, or a negative errno with @why set; the callback's negative value as is.
 */
static int relay(struct ctf_call *r, int fd, char *why, size_t len, bool *ended)
{
	struct ctf_relay rl = { 0 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t deadline = ls_now_ns() + CTF_SILENCE_MS * 1000000ULL, now;
	size_t start, i;
	ssize_t n;
	char *p;
	int ret = 0;

	while (!rl.done) {
		now = ls_now_ns();
		if (now >= deadline) {
			ret = -ETIMEDOUT;
			snprintf(why, len,
				 "libbabeltrace2 made no progress for %d s: a corrupt trace?",
				 CTF_SILENCE_MS / 1000);
			goto out;
		}
		n = poll(&pfd, 1, (int)((deadline - now) / 1000000 + 1));
		if (n <= 0) {
			if (n < 0 && errno != EINTR) {
				ret = -errno;
				snprintf(why, len, "poll: %s", strerror(errno));
				goto out;
			}
			continue;
		}
		if (rl.cap - rl.len < CTF_READ_CHUNK) {
			if (rl.cap > CTF_LINE_MAX) {
				ret = -EPROTO;
				snprintf(why, len, "an event over %u MiB long", CTF_LINE_MAX >> 20);
				goto out;
			}
			p = realloc(rl.buf, rl.cap * 2 + CTF_READ_CHUNK);
			if (!p) {
				ret = -ENOMEM;
				snprintf(why, len, "%s", strerror(ENOMEM));
				goto out;
			}
			rl.buf = p;
			rl.cap = rl.cap * 2 + CTF_READ_CHUNK;
		}
		n = read(fd, rl.buf + rl.len, rl.cap - rl.len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			/* The reader is gone without its last line: the caller finds out how. */
			if (n < 0) {
				ret = -errno;
				snprintf(why, len, "read: %s", strerror(errno));
			}
			goto out;
		}
		start = 0;
		for (i = rl.len; i < rl.len + (size_t)n && !rl.done; i++) {
			if (rl.buf[i] != '\n') {
				continue;
			}
			ret = relay_line(r, &rl, rl.buf + start, i - start, why, len);
			if (ret) {
				goto out;
			}
			start = i + 1;
		}
		rl.len += (size_t)n;
		memmove(rl.buf, rl.buf + start, rl.len - start);
		rl.len -= start;
		/* From now: the time the callback took is not the reader's silence. */
		deadline = ls_now_ns() + CTF_SILENCE_MS * 1000000ULL;
	}
out:
	free(rl.buf);
	*ended = rl.ended;
	return ret;
}

/*
 * spawn_reader - start latsnap-trace-reader on @r->dir, its stdout the write end @out of a pipe
 * @pid: its pid, on success
 *
 * posix_spawn(), not fork(): latsnap is threaded (lttng-ust, libbpf), and libbabeltrace2 in a
 * forked copy of it could deadlock on a lock some other thread held at the fork. The reader
 * starts with no signal blocked, and with latsnap's environment (the sanitizers' settings).
 */
static int spawn_reader(const struct ctf_call *r, int out, pid_t *pid, char *why, size_t len)
{
	char path[4096], parent[24];
	char *argv[7];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	int ret, argc = 0;

	if (!ls_find_helper(CTF_READER_NAME, path, sizeof(path))) {
		snprintf(why, len, "%s: not found next to latsnap nor in %.300s", CTF_READER_NAME,
			 LS_LIBDIR);
		return -ENOENT;
	}
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	argv[argc++] = path;
	argv[argc++] = parent;
	argv[argc++] = r->fn ? "1" : "0";
	argv[argc++] = ls_verbose_enabled ? "1" : "0";
	argv[argc++] = (char *)r->dir;
	if (r->prefix) {
		argv[argc++] = (char *)r->prefix;
	}
	argv[argc] = NULL;
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	ret = -posix_spawn(pid, path, &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		snprintf(why, len, "%.400s: %s", path, strerror(-ret));
	}
	return ret;
}

/*
 * ctf_run() - read the trace in latsnap-trace-reader, relaying its events to @r->fn, and print
 * the error line on failure.
 *
 * Return: 0, a negative errno, or the callback's negative value.
 */
static int ctf_run(struct ctf_call *r)
{
	char why[512] = "";
	int fds[2] = { -1, -1 };
	pid_t pid = -1;
	bool ended = false, reaped;
	int ret, status = 0, i;

	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		snprintf(why, sizeof(why), "pipe: %s", strerror(errno));
		goto out;
	}
	ret = spawn_reader(r, fds[1], &pid, why, sizeof(why));
	if (ret) {
		goto out;
	}
	close(fds[1]);
	fds[1] = -1;

	ret = relay(r, fds[0], why, sizeof(why), &ended);
	if (!ended) {
		/* Stopped, hung, garbled or dead: it is of no more use. */
		kill(pid, SIGKILL);
	}
	close(fds[0]);
	fds[0] = -1;
	do {
		reaped = waitpid(pid, &status, 0) == pid;
	} while (!reaped && errno == EINTR);
	if (!ret && !ended && !r->stopped) {
		/* The reader died before its last line; say how (unless SIGCHLD is ignored). */
		ret = -EBADMSG;
		if (!reaped) {
			snprintf(why, sizeof(why),
				 "the trace reading process died without a result");
		} else if (WIFSIGNALED(status)) {
			snprintf(why, sizeof(why), "libbabeltrace2 crashed on the trace (%s)",
				 strsignal(WTERMSIG(status)));
		} else {
			snprintf(why, sizeof(why),
				 "the trace reading process exited with status %d",
				 WEXITSTATUS(status));
		}
	}
out:
	for (i = 0; i < 2; i++) {
		if (fds[i] >= 0) {
			close(fds[i]);
		}
	}
	if (ret && !(r->stopped && ret == r->cb_ret)) {
		ls_err("ctf: %s: %s", r->dir, why);
	}
	return ret;
}

/**
 * ctf_field_u64() - integer field @name of an event's @fields, 0 when missing
 * @found: may be NULL; says whether it was there (and an integer)
 *
 * Unsigned values travel as the int64 of their bits: the cast gives them back.
 */
uint64_t ctf_field_u64(struct json_object *fields, const char *name, bool *found)
{
	struct json_object *v;
	bool has = json_object_object_get_ex(fields, name, &v) &&
		   json_object_is_type(v, json_type_int);

	if (found) {
		*found = has;
	}
	return has ? (uint64_t)json_object_get_int64(v) : 0;
}

/**
 * ctf_field_str() - string field @name of an event's @fields, @fallback when missing or not a
 *                   string
 */
const char *ctf_field_str(struct json_object *fields, const char *name, const char *fallback)
{
	struct json_object *v;

	if (json_object_object_get_ex(fields, name, &v) &&
	    json_object_is_type(v, json_type_string)) {
		return json_object_get_string(v);
	}
	return fallback;
}

/*
 * read_trace - the three readers below: check what was given (@r->fn when @need_fn), read, and
 * fill @info (when not NULL) from a whole reading.
 */
static int read_trace(struct ctf_call *r, bool need_fn, struct ctf_trace_info *info)
{
	int ret;

	if (!r->dir || (need_fn && !r->fn)) {
		ls_err("ctf: %s: no %s given", r->dir ? r->dir : "(null)",
		       r->dir ? "callback" : "directory");
		return -EINVAL;
	}
	ret = ctf_run(r);
	if (!ret && info && !r->stopped) {
		*info = r->info;
	}
	return ret;
}

/**
 * ctf_read() - call @fn for each event of the CTF trace in @trace_dir, in time order
 * @trace_dir: a directory holding one or more CTF traces at any depth (a snapshot's trace/,
 *	whose trace is in ust/uid/0/64-bit/)
 * @name_prefix: only events whose name starts with it; NULL for all
 * @fn: called once per event; see ctf_event_fn for what its return value does
 * @ctx: passed to @fn
 *
 * Events are merged across streams (one per CPU) by time. A trace found corrupt part-way has had
 * the events before the damage delivered already.
 *
 * libbabeltrace2 runs in a process of its own (see the top of this file); @fn runs in the
 * caller's process and thread. That process is the caller's child for the duration of the call:
 * a SIGCHLD handler that reaps any child (waitpid(-1)) would take its exit status away.
 *
 * Return: 0; @fn's negative value when it stopped the reading with one; or a negative errno
 * after one "ctf: DIR: why" line on stderr: -ENOENT, -ENOTDIR, -EACCES (no such directory),
 * -ENODATA (no CTF trace in it), -EBADMSG (corrupt or unreadable trace, libbabeltrace2
 * crashed on it), -ETIMEDOUT (libbabeltrace2 hung on it), -ENOMEM, -EINVAL, -EPROTO.
 */
int ctf_read(const char *trace_dir, const char *name_prefix, ctf_event_fn fn, void *ctx)
{
	struct ctf_call r = { .dir = trace_dir, .prefix = name_prefix, .fn = fn, .ctx = ctx };

	return read_trace(&r, true, NULL);
}

/**
 * ctf_read_info() - ctf_read(), and what ctf_trace_info() counts, in one reading of the trace
 * @info: filled when the whole trace was read (0 returned), untouched otherwise; may be NULL
 *
 * Return: as ctf_read().
 */
int ctf_read_info(const char *trace_dir, const char *name_prefix, ctf_event_fn fn, void *ctx,
		  struct ctf_trace_info *info)
{
	struct ctf_call r = { .dir = trace_dir, .prefix = name_prefix, .fn = fn, .ctx = ctx };

	return read_trace(&r, true, info);
}

/**
 * ctf_trace_info() - count the events of a CTF trace and what it lost
 * @trace_dir: as for ctf_read()
 * @info: filled on success (see struct ctf_trace_info), untouched on failure; may be NULL
 *
 * Reads the whole trace, without building the events' fields.
 *
 * Return: 0, or a negative errno as for ctf_read(), after one "ctf: DIR: why" line on stderr.
 */
int ctf_trace_info(const char *trace_dir, struct ctf_trace_info *info)
{
	struct ctf_call r = { .dir = trace_dir };

	return read_trace(&r, false, info);
}
