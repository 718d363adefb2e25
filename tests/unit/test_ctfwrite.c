// SPDX-License-Identifier: GPL-2.0
/*
 * test_ctfwrite.c - trace/ctf-writer.c: events added out of order come back from the trace it
 * writes (read by trace/ctf.c, libbabeltrace2 in latsnap-trace-reader) in time order, each at the
 * time it was given, with its fields: integers of each kind, text (an empty one stays empty after
 * a non-empty one: the 2.0.4 bug its length works around), address sequences (empty too); the
 * clock class is the one given (the reader reports it back); a class whose fields change is
 * refused; no clock, no trace.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/ctf-writer.h"
#include "tap.h"

#define MAX_READ 8

struct got {
	size_t n;
	char name[MAX_READ][64];
	uint64_t ts[MAX_READ];
	char text[MAX_READ][64];
	int64_t sint[MAX_READ];
	size_t nips[MAX_READ];
	uint64_t ip0[MAX_READ];
};

static int collect(const struct ctf_event *ev, void *ctx)
{
	struct got *g = ctx;
	struct json_object *v;
	size_t i = g->n;

	if (i >= MAX_READ) {
		return -E2BIG;
	}
	snprintf(g->name[i], sizeof(g->name[i]), "%s", ev->name);
	g->ts[i] = ev->ts_ns;
	if (json_object_object_get_ex(ev->fields, "what", &v)) {
		snprintf(g->text[i], sizeof(g->text[i]), "%s", json_object_get_string(v));
	}
	if (json_object_object_get_ex(ev->fields, "delta", &v)) {
		g->sint[i] = json_object_get_int64(v);
	}
	if (json_object_object_get_ex(ev->fields, "ips", &v)) {
		g->nips[i] = json_object_array_length(v);
		if (g->nips[i]) {
			g->ip0[i] =
				(uint64_t)json_object_get_int64(json_object_array_get_idx(v, 0));
		}
	}
	g->n++;
	return 0;
}

static void add(struct ctf_writer *w, uint64_t ts, const char *what, int64_t delta,
		const uint64_t *ips, size_t n)
{
	ctf_writer_event(w, "test:ev", ts);
	ctf_writer_uint(w, "ts_ns", 64, ts);
	ctf_writer_text(w, "what", what);
	ctf_writer_sint(w, "delta", 32, delta);
	ctf_writer_hex_seq(w, "ips", ips, n);
}

int main(void)
{
	static const uint64_t ips[] = { 0xffffffff81000010ULL, 0x401000 };
	struct ctf_clock clock = {
		.known = true,
		.name = "monotonic",
		.has_uuid = true,
		.uuid = { 0x17, 0x77, 0xed, 0x87, 0xde, 0x55, 0x4f, 0xc1, 0x8d, 0x62, 0xd1, 0x89,
			  0x6b, 0x2f, 0x0a, 0xc3 },
		.freq = 1000000000,
		.offset_s = 1795831008,
		.offset_cycles = 104584016,
		.origin_unix = true,
	};
	struct ctf_clock none = { 0 };
	struct ctf_trace_info info = { 0 };
	char dir[64], path[PATH_MAX], why[256];
	struct ctf_writer *w;
	struct got g = { 0 };
	int ret;

	snprintf(dir, sizeof(dir), "/tmp/test_ctfwrite.XXXXXX");
	if (!mkdtemp(dir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/latsnap", dir);

	w = ctf_writer_new();
	if (!w) {
		bail_out("no memory");
	}
	/* Out of order; two at one time keep the order they were added in. */
	add(w, 3000, "third", -3, NULL, 0);
	add(w, 1000, "first", 1, ips, 2);
	add(w, 2000, "", -2, ips, 1);
	ctf_writer_event(w, "test:other", 2000);
	ctf_writer_hex(w, "addr", 64, 0x1234);
	is_int(ctf_writer_count(w), 4, "four events held");
	ret = ctf_writer_write(w, path, &clock, "testhost", why, sizeof(why));
	if (!is_int(ret, 0, "written with sink.ctf.fs")) {
		diag("why: %s", why);
	}
	ok(access(path, R_OK) == 0, "in the directory asked for, made for it");

	ret = ctf_read_info(path, NULL, collect, &g, &info);
	is_int(ret, 0, "read back");
	is_int(g.n, 4, "every event read back");
	is_str(g.name[0], "test:ev", "first in time first");
	is_u64(g.ts[0], 1000, "at the time it was given (CTF timestamp = the value given)");
	is_str(g.text[0], "first", "its text");
	is_int(g.sint[0], 1, "its signed integer");
	is_int(g.nips[0], 2, "its sequence's length");
	is_u64(g.ip0[0], ips[0], "its sequence's first address, above INT64_MAX");
	is_u64(g.ts[1], 2000, "second at 2000");
	is_str(g.text[1], "", "an empty text after a non-empty one reads back empty");
	is_int(g.sint[1], -2, "a negative integer");
	is_str(g.name[2], "test:other", "an event of another class at the same time, after");
	is_u64(g.ts[3], 3000, "the last at 3000");
	is_int(g.nips[3], 0, "an empty sequence");

	ok(info.clock.known, "the reader reports the trace's clock class");
	is_str(info.clock.name, "monotonic", "its name, as given");
	ok(info.clock.has_uuid && !memcmp(info.clock.uuid, clock.uuid, sizeof(clock.uuid)),
	   "its uuid, as given");
	is_u64((uint64_t)info.clock.offset_s * 1000000000ULL + info.clock.offset_cycles,
	       (uint64_t)clock.offset_s * 1000000000ULL + clock.offset_cycles,
	       "its offset, as given");
	ok(info.clock.origin_unix, "its origin, as given");
	ctf_writer_free(w);

	/* A class is defined by its first event. */
	w = ctf_writer_new();
	add(w, 1, "a", 0, NULL, 0);
	ctf_writer_event(w, "test:ev", 2);
	ctf_writer_uint(w, "ts_ns", 64, 2);
	snprintf(path, sizeof(path), "%s/bad", dir);
	ret = ctf_writer_write(w, path, &clock, NULL, why, sizeof(why));
	is_int(ret, -EINVAL, "an event of a known name with other fields: refused");
	diag("why: %s", why);
	ret = ctf_writer_write(w, path, &none, NULL, why, sizeof(why));
	is_int(ret, -EINVAL, "no clock: refused");
	ctf_writer_free(w);

	if (!tap_failed_) {
		snprintf(path, sizeof(path), "rm -rf '%s'", dir);
		if (system(path)) {
			diag("could not remove %s", dir);
		}
	}
	return tap_done();
}
