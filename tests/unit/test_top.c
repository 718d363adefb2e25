// SPDX-License-Identifier: GPL-2.0
/*
 * test_top.c - the tables of `latsnap top`: aggregates of a refresh grouped by cause or by
 * object, filtered by process, thread and view, sorted by each key; durations as shown. As root,
 * the drain of a real BPF hash map: in batches and one key at a time, everything taken once,
 * what does not fit left for the next drain, and the fallback when batches are refused. The
 * records of the stall scan read back whole whatever the reads cut.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "tap.h"
#include "include/top.h"
#include "top/top.h"

static struct top_wait waits[] = {
	/* tgid, tid, count, sum, max, cause, special, object */
	{ 10, 10, 4, 400, 150, "sleep", false, NULL, "a", "a" },
	{ 10, 11, 2, 1000, 900, "lock", true, "futex 0x10 (pid 10)", "b", "a" },
	{ 10, 11, 1, 100, 100, "sleep", false, NULL, "b", "a" },
	{ 20, 20, 10, 50, 20, "waiting for CPU", true, NULL, "c", "c" },
	{ 20, 21, 3, 600, 300, "pipe", false, "pipe:[7]", "d", "c" },
	{ 30, 30, 1, 200, 200, "pipe", false, "pipe:[7]", "e", "e" },
};
#define NR (sizeof(waits) / sizeof(waits[0]))

/* As bpf/top.bpf.c's aggregate map. */
#define AGG_ENTRIES 16384
/* More than a hash map walk finds in one bucket, fewer than the map holds. */
#define FILLED 3000

static struct top_key keys[AGG_ENTRIES];
static struct top_value values[AGG_ENTRIES];

/* Aggregates 0 to @n - 1, each with its own tid and a count of tid + 1. */
static bool agg_fill(int fd, uint32_t n)
{
	struct top_key k;
	struct top_value v;
	uint32_t i;

	for (i = 0; i < n; i++) {
		memset(&k, 0, sizeof(k));
		memset(&v, 0, sizeof(v));
		k.tgid = 1000 + i / 10;
		k.tid = i;
		k.stack = 0x9e3779b97f4a7c15ull * (i + 1);
		k.nr = (__s32)(i % 300) - 1;
		k.kind = TOP_WAIT_BLOCKED;
		v.count = i + 1;
		v.sum_ns = (i + 1) * 1000ull;
		v.max_ns = 1000;
		snprintf(v.comm, sizeof(v.comm), "t%u", i);
		if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST)) {
			return false;
		}
	}
	return true;
}

static size_t agg_left(int fd)
{
	struct top_key k, *prev = NULL;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		n++;
	}
	return n;
}

/*
 * Drains until the map is empty, @cap at a time, checking each aggregate: Return: how many
 * were taken in all, or 0 when one came twice or with another's value.
 */
static size_t agg_drain_all(int fd, size_t cap, bool *refused, size_t *first)
{
	static bool seen[FILLED];
	size_t total = 0, n, i, calls = 0;

	memset(seen, 0, sizeof(seen));
	do {
		n = top_drain_map(fd, cap, keys, values, refused);
		if (!calls++) {
			*first = n;
		}
		for (i = 0; i < n; i++) {
			if (keys[i].tid >= FILLED || seen[keys[i].tid] ||
			    values[i].count != keys[i].tid + 1ull ||
			    values[i].sum_ns != (keys[i].tid + 1ull) * 1000) {
				return 0;
			}
			seen[keys[i].tid] = true;
		}
		total += n;
	} while (n && calls < FILLED);
	return total;
}

static void drain_tests(void)
{
	bool refused;
	size_t first, n;
	int fd, afd;

	if (geteuid() != 0) {
		skip("not root: no BPF maps to drain");
		return;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_agg", sizeof(struct top_key),
			    sizeof(struct top_value), AGG_ENTRIES, NULL);
	if (fd < 0) {
		skip("cannot create a BPF hash map");
		return;
	}

	ok(agg_fill(fd, FILLED), "map filled with %d aggregates", FILLED);
	refused = false;
	n = agg_drain_all(fd, AGG_ENTRIES, &refused, &first);
	ok(!refused, "batch: the kernel (5.6 or later) takes hash maps in batches");
	is_int((int)first, FILLED,
	       "batch: one drain takes them all (the count of the last call, "
	       "which ends with ENOENT, counts)");
	is_int((int)n, FILLED, "batch: each taken once, with its own value");
	is_int((int)agg_left(fd), 0, "batch: the map is empty");

	agg_fill(fd, FILLED);
	refused = true;
	n = agg_drain_all(fd, AGG_ENTRIES, &refused, &first);
	is_int((int)first, FILLED, "one key at a time: one drain takes them all");
	is_int((int)n, FILLED, "one key at a time: each taken once, with its own value");
	is_int((int)agg_left(fd), 0, "one key at a time: the map is empty");

	agg_fill(fd, FILLED);
	refused = false;
	n = agg_drain_all(fd, 1000, &refused, &first);
	ok(first > 0 && first <= 1000, "batch, room for 1000: %zu taken (whole buckets that fit)",
	   first);
	is_int((int)n, FILLED, "batch, room for 1000: the rest in the next drains, each once");
	agg_fill(fd, FILLED);
	refused = true;
	n = agg_drain_all(fd, 1000, &refused, &first);
	is_int((int)first, 1000, "one key at a time, room for 1000: 1000 taken");
	is_int((int)n, FILLED, "one key at a time, room for 1000: the rest in the next drains");
	close(fd);

	/* An array map has no lookup-and-delete batch (nor lookup-and-delete at all). */
	afd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_arr", sizeof(__u32),
			     sizeof(struct top_value), 16, NULL);
	if (afd < 0) {
		skip("cannot create a BPF array map");
		return;
	}
	refused = false;
	n = top_drain_map(afd, AGG_ENTRIES, keys, values, &refused);
	ok(refused, "refused batches: remembered for the next drains");
	is_int((int)n, 0, "refused batches: nothing counted from the refused call");
	close(afd);
}

/* A record of an odd size, as the stall scan's are of a size no read() is cut at. */
struct rec {
	uint32_t seq;
	char fill[333];
};

struct seen {
	uint32_t next;
	bool in_order;
};

static void rec_check(const void *p, void *arg)
{
	const struct rec *r = p;
	struct seen *s = arg;

	if (r->seq != s->next || r->fill[0] != (char)r->seq || r->fill[332] != (char)~r->seq) {
		s->in_order = false;
	}
	s->next++;
}

/*
 * @nbytes of records 0, 1, ... sent in @chunk-byte messages on a SOCK_SEQPACKET socket, where
 * each read() returns one message: what top_read_records() makes of them.
 */
static ssize_t read_chunked(size_t nbytes, size_t chunk, struct seen *s)
{
	static struct rec recs[8];
	size_t i, off;
	ssize_t n;
	int sv[2];

	for (i = 0; i < 8; i++) {
		recs[i].seq = (uint32_t)i;
		memset(recs[i].fill, 0, sizeof(recs[i].fill));
		recs[i].fill[0] = (char)i;
		recs[i].fill[332] = (char)~i;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		return -errno;
	}
	for (off = 0; off < nbytes; off += chunk) {
		if (send(sv[1], (char *)recs + off, nbytes - off < chunk ? nbytes - off : chunk,
			 0) < 0) {
			close(sv[0]);
			close(sv[1]);
			return -errno;
		}
	}
	close(sv[1]);
	s->next = 0;
	s->in_order = true;
	n = top_read_records(sv[0], sizeof(struct rec), rec_check, s);
	close(sv[0]);
	return n;
}

static void read_records_tests(void)
{
	struct seen s;

	is_int((int)read_chunked(5 * sizeof(struct rec), 100, &s), 5,
	       "records cut every 100 bytes: 5 read");
	ok(s.in_order && s.next == 5, "records cut every 100 bytes: each whole, in order");
	is_int((int)read_chunked(8 * sizeof(struct rec), sizeof(struct rec) * 3 + 7, &s), 8,
	       "three records and a bit a read: 8 read");
	ok(s.in_order && s.next == 8, "three records and a bit a read: each whole, in order");
	is_int((int)read_chunked(0, 1, &s), 0, "nothing to read: no record");
	is_int((int)read_chunked(2 * sizeof(struct rec) + 50, 64, &s), -EPROTO,
	       "the end cuts a record: -EPROTO");
	is_int((int)s.next, 2, "the end cuts a record: the two before it were read");
}

/* The rows of the last query(). */
static struct top_row *rows;

/* top_table() of waits[] for @tgid (0: all), @tid (0: all), @view and @sort: how many rows. */
static size_t query(uint32_t tgid, uint32_t tid, enum top_view view, enum top_sort sort)
{
	free(rows);
	return top_table(waits, NR, tgid, tid, view, sort, &rows);
}

int main(void)
{
	char buf[32];

	is_int((int)query(0, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL), 4, "system by cause: four causes");
	is_str(rows[0].label, "lock", "by total: lock (1000) first");
	is_str(rows[1].label, "pipe", "then pipe (600 + 200 from two processes)");
	is_u64(rows[1].sum_ns, 800, "pipe's total adds both processes");
	is_u64(rows[1].count, 4, "pipe's count adds both");
	is_u64(rows[1].max_ns, 300, "pipe's maximum is the larger");
	is_str(rows[2].label, "sleep", "then sleep (500, two threads)");
	is_u64(rows[2].count, 5, "sleep's count adds both threads");

	query(0, 0, TOP_VIEW_CAUSE, TOP_SORT_COUNT);
	is_str(rows[0].label, "waiting for CPU", "by count: waiting for CPU (10) first");
	query(0, 0, TOP_VIEW_CAUSE, TOP_SORT_AVERAGE);
	is_str(rows[0].label, "lock", "by average: lock (500) first");
	is_str(rows[3].label, "waiting for CPU", "... waiting for CPU (5) last");
	query(0, 0, TOP_VIEW_CAUSE, TOP_SORT_MAXIMUM);
	is_str(rows[0].label, "lock", "by maximum: lock (900) first");
	is_str(rows[1].label, "pipe", "... then pipe (300)");

	is_int((int)query(10, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL), 2, "process 10: two causes");
	is_str(rows[1].label, "sleep", "process 10: sleep second");
	is_u64(rows[1].sum_ns, 500, "process 10: sleep of both its threads");
	is_int((int)query(0, 11, TOP_VIEW_CAUSE, TOP_SORT_TOTAL), 2, "thread 11: two causes");
	is_u64(rows[1].sum_ns, 100, "thread 11: only its own sleep");

	is_int((int)query(0, 0, TOP_VIEW_SPECIAL, TOP_SORT_TOTAL), 2,
	       "special view: lock and waiting for CPU only");
	is_str(rows[1].label, "waiting for CPU", "special view: waiting for CPU");

	is_int((int)query(0, 0, TOP_VIEW_OBJECT, TOP_SORT_TOTAL), 2,
	       "object view: the futex and the pipe");
	is_str(rows[0].label, "futex 0x10 (pid 10)", "object view: the futex first (1000)");
	is_u64(rows[1].count, 4, "object view: one pipe shared by two processes adds up");

	is_int((int)query(99, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL), 0, "unknown process: no rows");
	ok(!rows, "unknown process: no array");
	is_int((int)top_table(NULL, 0, 0, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL, &rows), 0,
	       "no waits: no rows");

	top_format_ms(100123456, buf, sizeof(buf));
	is_str(buf, "100.1 msec", "100 ms in msec");
	top_format_ms(45600, buf, sizeof(buf));
	is_str(buf, "45.6 usec", "under 0.1 ms in usec");
	top_format_ms(100000, buf, sizeof(buf));
	is_str(buf, "0.1 msec", "0.1 ms in msec");

	read_records_tests();
	drain_tests();
	return tap_done();
}
