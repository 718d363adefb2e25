// SPDX-License-Identifier: GPL-2.0
/*
 * test_top.c - the tables of `latsnap top`: aggregates of a refresh grouped by cause or by
 * object, filtered by process, thread and view, sorted by each key; durations as shown.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
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

int main(void)
{
	struct top_row *rows;
	char buf[32];
	size_t n;

	n = top_table(waits, NR, 0, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL, &rows);
	is_int((int)n, 4, "system by cause: four causes");
	is_str(rows[0].label, "lock", "by total: lock (1000) first");
	is_str(rows[1].label, "pipe", "then pipe (600 + 200 from two processes)");
	is_u64(rows[1].sum_ns, 800, "pipe's total adds both processes");
	is_u64(rows[1].count, 4, "pipe's count adds both");
	is_u64(rows[1].max_ns, 300, "pipe's maximum is the larger");
	is_str(rows[2].label, "sleep", "then sleep (500, two threads)");
	is_u64(rows[2].count, 5, "sleep's count adds both threads");
	free(rows);

	n = top_table(waits, NR, 0, 0, TOP_VIEW_CAUSE, TOP_SORT_COUNT, &rows);
	is_str(rows[0].label, "waiting for CPU", "by count: waiting for CPU (10) first");
	free(rows);
	n = top_table(waits, NR, 0, 0, TOP_VIEW_CAUSE, TOP_SORT_AVERAGE, &rows);
	is_str(rows[0].label, "lock", "by average: lock (500) first");
	is_str(rows[3].label, "waiting for CPU", "... waiting for CPU (5) last");
	free(rows);
	n = top_table(waits, NR, 0, 0, TOP_VIEW_CAUSE, TOP_SORT_MAXIMUM, &rows);
	is_str(rows[0].label, "lock", "by maximum: lock (900) first");
	is_str(rows[1].label, "pipe", "... then pipe (300)");
	free(rows);

	n = top_table(waits, NR, 10, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL, &rows);
	is_int((int)n, 2, "process 10: two causes");
	is_str(rows[1].label, "sleep", "process 10: sleep second");
	is_u64(rows[1].sum_ns, 500, "process 10: sleep of both its threads");
	free(rows);
	n = top_table(waits, NR, 0, 11, TOP_VIEW_CAUSE, TOP_SORT_TOTAL, &rows);
	is_int((int)n, 2, "thread 11: two causes");
	is_u64(rows[1].sum_ns, 100, "thread 11: only its own sleep");
	free(rows);

	n = top_table(waits, NR, 0, 0, TOP_VIEW_SPECIAL, TOP_SORT_TOTAL, &rows);
	is_int((int)n, 2, "special view: lock and waiting for CPU only");
	is_str(rows[1].label, "waiting for CPU", "special view: waiting for CPU");
	free(rows);

	n = top_table(waits, NR, 0, 0, TOP_VIEW_OBJECT, TOP_SORT_TOTAL, &rows);
	is_int((int)n, 2, "object view: the futex and the pipe");
	is_str(rows[0].label, "futex 0x10 (pid 10)", "object view: the futex first (1000)");
	is_u64(rows[1].count, 4, "object view: one pipe shared by two processes adds up");
	free(rows);

	n = top_table(waits, NR, 99, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL, &rows);
	is_int((int)n, 0, "unknown process: no rows");
	ok(!rows, "unknown process: no array");
	n = top_table(NULL, 0, 0, 0, TOP_VIEW_CAUSE, TOP_SORT_TOTAL, &rows);
	is_int((int)n, 0, "no waits: no rows");

	top_format_ms(100123456, buf, sizeof(buf));
	is_str(buf, "100.1 msec", "100 ms in msec");
	top_format_ms(45600, buf, sizeof(buf));
	is_str(buf, "45.6 usec", "under 0.1 ms in usec");
	top_format_ms(100000, buf, sizeof(buf));
	is_str(buf, "0.1 msec", "0.1 ms in msec");
	return tap_done();
}
