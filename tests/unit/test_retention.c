// SPDX-License-Identifier: GPL-2.0
/*
 * test_retention.c - the snapshot retention policy (recorder/retention.c) on made-up runs:
 * which batches become snapshots, and which snapshot makes room, once the limits are reached.
 */
#include <stdint.h>
#include <string.h>

#include "recorder/retention.h"
#include "tap.h"

#define MS 1000000ULL

/* The id of the snapshot retention_admit() removed, for the checks below. */
static void note_evicted(const struct retention_kept *k, void *ctx)
{
	strcpy(ctx, k->id);
}

/*
 * What `record` does with one batch (recorder_snapshot): admit it under the limits, then, once
 * written, keep it as @id of @bytes. Returns whether it was kept, and in @evicted the id of the
 * snapshot removed for it ("" for none).
 */
static bool offer(struct retention *r, const struct retention_item *items, size_t n,
		  const char *id, uint64_t bytes, char *evicted)
{
	struct retention_kept pending = { 0 };
	bool notable;

	evicted[0] = '\0';
	if (!retention_admit(r, items, n, &pending, note_evicted, evicted, &notable)) {
		return false;
	}
	if (!pending.nr_causes) {
		retention_remember(r, items, n, &pending);
	}
	retention_keep(r, &pending, id, bytes, r->nr_kept * 1000 * MS);
	return true;
}

static const char *ids(const struct retention *r, char *buf, size_t size)
{
	size_t used = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < r->nr_kept && used < size; i++) {
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " " : "",
					 r->kept[i].id);
	}
	return buf;
}

/* --max-snapshots 2: the first and the worst of a cause stay, whatever comes between. */
static void by_count(void)
{
	struct retention r = { .max_snapshots = 2 };
	struct retention_item x300 = { "X", 300 * MS }, x400 = { "X", 400 * MS },
			      x800 = { "X", 800 * MS }, x500 = { "X", 500 * MS },
			      y10 = { "Y", 10 * MS };
	char evicted[64], buf[256];

	ok(offer(&r, &x300, 1, "s1", 10, evicted), "count: the first X (300 ms) is kept");
	ok(offer(&r, &x400, 1, "s2", 10, evicted), "count: X 400 ms is kept: there is room");
	ok(offer(&r, &x800, 1, "s3", 10, evicted), "count: X 800 ms, the new worst, is kept");
	is_str(evicted, "s2", "count: it takes the place of s2, neither first nor worst any more");
	ok(!offer(&r, &x500, 1, "s4", 10, evicted), "count: X 500 ms, neither, is skipped");
	ok(!offer(&r, &y10, 1, "s5", 10, evicted),
	   "count: a first Y is skipped too when every snapshot kept holds a first or worst case");
	is_str(ids(&r, buf, sizeof(buf)), "s1 s3", "count: s1 (first X) and s3 (worst X) remain");
	is_int((int)r.kept[0].nr_causes, 1, "count: s1 holds one cause");
	ok(r.kept[0].causes[0].first && !r.kept[1].causes[0].first,
	   "count: s1 holds the first X, s3 does not");
	is_u64(r.kept[1].causes[0].worst_ns, 800 * MS, "count: s3 holds X at 800 ms");
	retention_free(&r);
}

/* A batch of several outliers: its causes are filed together, the worst of each kept. */
static void batch(void)
{
	struct retention r = { .max_snapshots = 1 };
	struct retention_item b1[] = { { "X", 5 * MS }, { "X", 9 * MS }, { "Y", 1 * MS } },
			      b2[] = { { "X", 7 * MS }, { "Y", 1 * MS } },
			      b3[] = { { "X", 1 * MS }, { "Y", 2 * MS } };
	char evicted[64], buf[256];

	ok(offer(&r, b1, 3, "s1", 10, evicted), "batch: the first batch is kept");
	ok(r.kept[0].nr_causes == 2 && r.kept[0].causes[0].worst_ns == 9 * MS,
	   "batch: s1 holds X (worst 9 ms of 5 and 9) and Y");
	ok(!retention_notable(&r, b2, 2), "batch: X 7 ms and Y 1 ms bring nothing new");
	ok(retention_notable(&r, b3, 2), "batch: Y 2 ms is a new worst Y");
	ok(!offer(&r, b3, 2, "s2", 10, evicted),
	   "batch: but s1 holds the first X and Y: nothing makes room");
	is_str(ids(&r, buf, sizeof(buf)), "s1", "batch: s1 remains");
	retention_free(&r);
}

/* --max-size: bytes, not snapshots; a snapshot over the size makes room too. */
static void by_size(void)
{
	struct retention r = { .max_size = 100 };
	struct retention_item x1 = { "X", 1 * MS }, x2 = { "X", 2 * MS }, x3 = { "X", 3 * MS };
	char evicted[64], buf[256];

	ok(offer(&r, &x1, 1, "s1", 60, evicted), "size: s1 (60 bytes) is kept");
	ok(offer(&r, &x2, 1, "s2", 60, evicted), "size: s2 is kept: 60 bytes were under 100");
	ok(retention_over_limits(&r), "size: 120 bytes are over the limit");
	ok(offer(&r, &x3, 1, "s3", 60, evicted), "size: s3, a new worst, is kept");
	is_str(evicted, "s2", "size: in the place of s2");
	is_u64(r.kept_bytes, 120, "size: the bytes of s1 and s3");
	is_str(ids(&r, buf, sizeof(buf)), "s1 s3", "size: s1 and s3 remain");
	retention_free(&r);
}

/* No limit: every batch is kept, notable or not. */
static void unlimited(void)
{
	struct retention r = { 0 };
	struct retention_item x = { "X", 1 * MS };
	char evicted[64];
	int i, kept = 0;

	for (i = 0; i < 5; i++) {
		kept += offer(&r, &x, 1, "s", 1, evicted);
	}
	is_int(kept, 5, "unlimited: 5 equal batches, 5 snapshots");
	retention_free(&r);
}

/* --max-age: what is older goes, oldest first, but a first or a worst case stays. */
static void by_age(void)
{
	struct retention r = { .max_age_ns = 2500 * MS };
	struct retention_item x100 = { "X", 100 * MS }, x900 = { "X", 900 * MS },
			      y100 = { "Y", 100 * MS };
	char evicted[64], buf[256];
	int i;

	/* Written at 0 s, 1 s, 2 s, ...: x100 first, then x900 (the worst), then repeats. */
	offer(&r, &x100, 1, "a", 1, evicted);
	offer(&r, &x900, 1, "b", 1, evicted);
	offer(&r, &x100, 1, "c", 1, evicted);
	offer(&r, &y100, 1, "d", 1, evicted);
	offer(&r, &x100, 1, "e", 1, evicted);
	is_int(retention_expired(&r, 2000 * MS), -1, "age: nothing older than 2.5 s at 2 s");
	is_int(retention_expired(&r, 5000 * MS), 2, "age: at 5 s, c (a repeat, 5 s old) goes");
	retention_drop(&r, 2);
	is_int(retention_expired(&r, 5000 * MS), -1,
	       "age: a (first), b (worst), d (first of Y) stay; e is young");
	is_str(ids(&r, buf, sizeof(buf)), "a b d e", "age: a b d e kept");
	is_int(retention_expired(&r, 9000 * MS), 3, "age: at 9 s, e (a repeat) goes");
	r.max_age_ns = 0;
	for (i = 0; i < 3; i++) {
		is_int(retention_expired(&r, (uint64_t)(100 + i) * 1000 * MS), -1,
		       "age: no limit, nothing expires");
	}
	retention_free(&r);
}

int main(void)
{
	by_age();
	by_count();
	batch();
	by_size();
	unlimited();
	return tap_done();
}
