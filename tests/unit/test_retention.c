// SPDX-License-Identifier: GPL-2.0
/*
 * test_retention.c - the snapshot retention policy (recorder/retention.c) on made-up runs:
 * which batches become snapshots, and which snapshot makes room, once the limits are reached;
 * and the snapshots of earlier runs it adopts (their ids, their summaries, their place).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
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

/* Only names shaped as `record` makes ids are taken for snapshots of earlier runs. */
static void id_shape(void)
{
	ok(retention_id_shaped("20240131T235959.123Z-0001"), "id: an id of record's");
	ok(retention_id_shaped("20240131T235959.123Z-12345"), "id: a sequence past 9999");
	ok(!retention_id_shaped("status.json"), "id: status.json is not one");
	ok(!retention_id_shaped(".status.json.tmp"), "id: nor a temporary file");
	ok(!retention_id_shaped("20240131T235959.123Z-001"), "id: nor a 3-digit sequence");
	ok(!retention_id_shaped("20240131T235959.123Z-0001x"), "id: nor trailing text");
	ok(!retention_id_shaped("20240131T235959.123Z-0001/.."), "id: nor a path");
	ok(!retention_id_shaped("2024013xT235959.123Z-0001"), "id: nor a letter in the date");
	ok(!retention_id_shaped("20240131-235959.123Z-0001"), "id: nor another separator");
	ok(!retention_id_shaped(""), "id: nor the empty name");
}

/* What a summary.json gives the policy: causes, durations, creation time; or nothing. */
static void summary_parse(void)
{
	const char *good =
		"{ \"version\": 1, \"id\": \"20240131T235959.123Z-0001\", "
		"\"created\": \"2024-01-31T23:59:59Z\", \"outliers\": ["
		"{ \"kind\": \"syscall\", \"cause\": \"X\", \"duration_ns\": 120000000 },"
		"{ \"kind\": \"sleep\", \"cause\": null, \"duration_ns\": 7 } ] }\n";
	const char *bad[] = {
		"",
		"{ \"outliers\": [ { \"cause\": \"X\", \"duration_ns\": 1 }",
		"{ \"version\": 1 }",
		"{ \"outliers\": {} }",
		"{ \"outliers\": [ 3 ] }",
		"{ \"outliers\": [ { \"cause\": \"X\", \"duration_ns\": \"long\" } ] }",
		"{ \"outliers\": [] } trailing",
		"[ { \"outliers\": [] } ]",
		"\x01\x02\xff",
	};
	const char *odd = "{ \"outliers\": [], \"created\": \"yesterday\" }";
	struct retention_summary sum;
	unsigned int i, rejected = 0;

	is_int(retention_summary_parse(&sum, good, strlen(good)), 0, "summary: a good one is read");
	is_int((int)sum.nr_items, 2, "summary: two outliers");
	ok(sum.nr_items == 2 && !strcmp(sum.items[0].cause, "X") &&
		   sum.items[0].duration_ns == 120 * MS,
	   "summary: the first is X, 120 ms");
	ok(sum.nr_items == 2 && !strcmp(sum.items[1].cause, "") && sum.items[1].duration_ns == 7,
	   "summary: a null cause is the empty one, as record files it");
	is_u64(sum.created_ns, 1706745599ull * 1000000000ull, "summary: created, in ns since 1970");
	retention_summary_free(&sum);

	is_int(retention_summary_parse(&sum, odd, strlen(odd)), 0,
	       "summary: an odd created is no reason to refuse it");
	ok(sum.created_ns == 0 && sum.nr_items == 0, "summary: no created time, no outliers");
	retention_summary_free(&sum);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (retention_summary_parse(&sum, bad[i], strlen(bad[i])) == -EINVAL &&
		    !sum.items && !sum.summary) {
			rejected++;
		} else {
			diag("accepted: %s", bad[i]);
		}
		retention_summary_free(&sum);
	}
	is_int((int)rejected, (int)(sizeof(bad) / sizeof(bad[0])),
	       "summary: each corrupt one is refused with -EINVAL, and nothing kept of it");
}

/*
 * An earlier run left a (X 120), b (X 130, the worst), c (X 125) and d (its summary could not be
 * read: no cause); this run has --max-snapshots 3.
 */
static void adopt_by_count(void)
{
	struct retention r = { .max_snapshots = 3 };
	struct retention_item a = { "X", 120 * MS }, b = { "X", 130 * MS }, c = { "X", 125 * MS },
			      x110 = { "X", 110 * MS }, x400 = { "X", 400 * MS },
			      y1 = { "Y", 1 * MS };
	char evicted[64], buf[256];

	is_int(retention_adopt(&r, "a", 10, 1, &a, 1), 0, "adopt: a is adopted");
	retention_adopt(&r, "b", 10, 2, &b, 1);
	retention_adopt(&r, "c", 10, 3, &c, 1);
	retention_adopt(&r, "d", 10, 4, NULL, 0);
	is_int((int)r.nr_kept, 4, "adopt: four snapshots of the earlier run counted");
	is_u64(r.kept_bytes, 40, "adopt: and their bytes");
	ok(r.kept[0].causes[0].first && !r.kept[1].causes[0].first && !r.kept[2].causes[0].first,
	   "adopt: a, the oldest X, holds the first X");
	ok(retention_over_limits(&r), "adopt: 4 snapshots are over --max-snapshots 3");
	ok(!offer(&r, &x110, 1, "n1", 10, evicted),
	   "adopt: X 110 ms of this run, neither first nor worst, is skipped");
	ok(offer(&r, &x400, 1, "n2", 10, evicted), "adopt: X 400 ms, the new worst, is kept");
	is_str(ids(&r, buf, sizeof(buf)), "a d n2",
	       "adopt: b (no longer the worst) and c went; d, without cause, was next");
	ok(!r.kept[2].causes[0].first, "adopt: this run's X is not the first X");
	ok(!offer(&r, &y1, 1, "n3", 10, evicted) || strcmp(evicted, "a"),
	   "adopt: a, the first X, never makes room");
	ok(!strcmp(r.kept[0].id, "a"), "adopt: a remains");
	retention_free(&r);
}

/* Incomplete ones count in bytes, go first when bytes are short, and never for the count. */
static void adopt_incomplete(void)
{
	struct retention r = { .max_size = 100 };
	struct retention_item a = { "X", 1 * MS }, x2 = { "X", 2 * MS }, x3 = { "X", 3 * MS };
	char evicted[64], buf[256];

	retention_adopt(&r, "a", 30, 1, &a, 1);
	is_int(retention_adopt_incomplete(&r, "i", 50, 2), 0, "incomplete: i is adopted");
	is_str(ids(&r, buf, sizeof(buf)), "i a", "incomplete: before the complete ones");
	is_u64(r.kept_bytes, 80, "incomplete: its bytes count");
	ok(offer(&r, &x2, 1, "n1", 30, evicted) && !evicted[0],
	   "incomplete: n1 fits under 100 bytes");
	ok(offer(&r, &x3, 1, "n2", 30, evicted), "incomplete: n2, a new worst, is kept");
	is_str(evicted, "i", "incomplete: i made room, though a later snapshot (n1) held nothing");
	is_int((int)r.nr_incomplete, 0, "incomplete: none left");
	is_str(ids(&r, buf, sizeof(buf)), "a n1 n2", "incomplete: a n1 n2 kept");
	retention_free(&r);

	r = (struct retention){ .max_snapshots = 2 };
	retention_adopt_incomplete(&r, "i", 50, 2);
	retention_adopt(&r, "a", 30, 1, &a, 1);
	ok(!retention_over_limits(&r), "incomplete: not a snapshot under --max-snapshots 2");
	ok(offer(&r, &x2, 1, "n1", 30, evicted) && !evicted[0], "incomplete: n1 is kept");
	ok(offer(&r, &x3, 1, "n2", 30, evicted), "incomplete: n2, a new worst, is kept");
	is_str(evicted, "n1", "incomplete: in n1's place: removing i makes no room for the count");
	ok(!strcmp(r.kept[0].id, "i") && r.nr_incomplete == 1, "incomplete: i is still there");
	retention_free(&r);
}

/* Ages of adopted snapshots, incomplete ones included; a time ahead of now is young. */
static void adopt_age(void)
{
	struct retention r = { .max_age_ns = 10 * 1000 * MS };
	struct retention_item x = { "X", 10 * MS }, x5 = { "X", 5 * MS }, x7 = { "X", 7 * MS };

	/* a holds the first and the worst X; b and c repeat it. */
	retention_adopt(&r, "a", 1, 100 * 1000 * MS, &x, 1);
	retention_adopt(&r, "b", 1, 100 * 1000 * MS, &x5, 1);
	retention_adopt(&r, "c", 1, 500 * 1000 * MS, &x7, 1);
	retention_adopt_incomplete(&r, "i", 1, 400 * 1000 * MS);
	is_int(retention_expired(&r, 50 * 1000 * MS), -1,
	       "age: times after now (a clock set back) are young, not ancient");
	is_int(retention_expired(&r, 200 * 1000 * MS), 2, "age: at 200 s b (a repeat) goes");
	retention_drop(&r, 2);
	is_int(retention_expired(&r, 200 * 1000 * MS), -1, "age: i (400 s) is young at 200 s");
	is_int(retention_expired(&r, 450 * 1000 * MS), 0, "age: at 450 s, i goes");
	retention_drop(&r, 0);
	is_int(retention_expired(&r, 10000 * 1000 * MS), 1, "age: at 10000 s c goes, a stays");
	retention_free(&r);
}

/* No more than RETENTION_MAX_KEPT are counted; the rest is said to be left out. */
static void adopt_full(void)
{
	static struct retention r;
	struct retention_item x = { "X", 1 * MS };
	unsigned int i, fails = 0;

	for (i = 0; i < RETENTION_MAX_KEPT; i++) {
		fails += retention_adopt(&r, "s", 1, i, &x, 1) != 0;
	}
	is_int((int)fails, 0, "full: %d adopted", RETENTION_MAX_KEPT);
	is_int(retention_adopt(&r, "t", 1, 0, &x, 1), -ENOSPC, "full: one more is -ENOSPC");
	is_int(retention_adopt_incomplete(&r, "i", 1, 0), -ENOSPC, "full: incomplete too");
	is_int((int)r.nr_kept, RETENTION_MAX_KEPT, "full: the table is unchanged");
	retention_free(&r);
}

int main(void)
{
	by_age();
	by_count();
	batch();
	by_size();
	unlimited();
	id_shape();
	summary_parse();
	adopt_by_count();
	adopt_incomplete();
	adopt_age();
	adopt_full();
	return tap_done();
}
