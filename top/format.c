// SPDX-License-Identifier: GPL-2.0
/*
 * format.c - the lines of `latsnap top` as LatencyTOP writes them, the same on the screen and in
 * --batch text: the title, a table's header and rows, a process's or thread's heading, the
 * stalled threads.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "classify/syscalls.h"
#include "lib/text.h"
#include "lib/util.h"
#include "top/top-int.h"

/**
 * top_format_ms() - a duration as LatencyTOP writes it: milliseconds with one decimal
 * @ns: the duration
 * @buf: receives "12.3 msec", or "45.6 usec" under a tenth of a millisecond, where one decimal
 *	 of a millisecond would say 0.0 for every short wait
 * @len: size of @buf
 */
void top_format_ms(uint64_t ns, char *buf, size_t len)
{
	if (ns < 100000) {
		snprintf(buf, len, "%.1f usec", (double)ns / 1e3);
	} else {
		snprintf(buf, len, "%.1f msec", (double)ns / 1e6);
	}
}

/**
 * top_view_name() - what the rows of a view are, for the heading of the system table
 * @view: 1, 2 or 3
 *
 * Return: a static string.
 */
const char *top_view_name(enum top_view view)
{
	switch (view) {
	case TOP_VIEW_SPECIAL:
		return "special causes";
	case TOP_VIEW_OBJECT:
		return "by synchronization object";
	default:
		return "by cause";
	}
}

/**
 * top_format_row() - one row of a table: label, count, average, maximum, share of the total
 * @buf: receives the line
 * @len: size of @buf
 * @r: the row
 * @total: the wait time the percentage is of (the system's, or the process's)
 * @width: of the label column; longer labels are cut
 */
void top_format_row(char *buf, size_t len, const struct top_row *r, uint64_t total, int width)
{
	char avg[32], max[32];

	top_format_ms(r->count ? r->sum_ns / r->count : 0, avg, sizeof(avg));
	top_format_ms(r->max_ns, max, sizeof(max));
	snprintf(buf, len, "%-*.*s %9" PRIu64 " %13s %13s %6.1f %%", width, width,
		 LS_TEXT(r->label), r->count, avg, max,
		 total ? 100.0 * (double)r->sum_ns / (double)total : 0.0);
}

/**
 * top_format_header() - the header line of a table, aligned with top_format_row()
 * @buf: receives the line
 * @len: size of @buf
 * @what: the label column's title ("Cause", "Object")
 * @width: of the label column
 */
void top_format_header(char *buf, size_t len, const char *what, int width)
{
	snprintf(buf, len, "%-*s %9s %13s %13s %8s", width, what, "Count", "Average", "Maximum",
		 "Percent");
}

/**
 * top_format_title() - the first line: version, the time of the refresh, its interval
 * @t: the period shown
 * @buf: receives the line
 * @len: size of @buf
 */
void top_format_title(const struct top *t, char *buf, size_t len)
{
	char when[32];
	struct tm tm;

	localtime_r(&t->cur.when, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "latsnap top %s, LatencyTOP for Linux   %s   interval %.1f s",
		 LATSNAP_VERSION, t->cur.when ? when : "-", (double)t->cur.interval_ns / 1e9);
}

/**
 * top_format_entity() - the heading of a process's (or thread's) table
 * @e: the process or thread
 * @threads: @e is a thread
 * @buf: receives the line
 * @len: size of @buf
 */
void top_format_entity(const struct top_entity *e, bool threads, char *buf, size_t len)
{
	char total[32];

	top_format_ms(e->total_ns, total, sizeof(total));
	if (threads) {
		snprintf(buf, len, "Thread %s (%u) of pid %u  Total: %s  [thread view]",
			 LS_TEXT(e->name), e->id, e->tgid, total);
	} else {
		snprintf(buf, len, "Process %s (%u)  Total: %s in %zu threads  [process view]",
			 LS_TEXT(e->name), e->id, total, e->threads);
	}
}

/**
 * top_format_stalled_title() - the heading of the stalled threads
 * @t: the options (--hang)
 * @buf: receives "Stalled now (waiting longer than 1s)", --hang as short as it was given:
 *	 whole seconds, milliseconds, microseconds or nanoseconds
 * @len: size of @buf
 */
void top_format_stalled_title(const struct top *t, char *buf, size_t len)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = { { 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "us" }, { 1, "ns" } };
	uint64_t ns = t->opts.hang_ns;
	size_t i;

	for (i = 0; ns && ns % units[i].ns; i++) {
	}
	snprintf(buf, len, "Stalled now (waiting longer than %" PRIu64 "%s)", ns / units[i].ns,
		 units[i].unit);
}

/**
 * top_format_stalled() - one stalled thread: who, how long so far, its syscall, its cause, the
 * flag still-blocked and the object it waits on
 * @s: the thread
 * @buf: receives "process[pid] thread[tid]  12.3 s so far  read  Reading from a pipe
 *	 still-blocked on pipe:[123]"; "off-CPU" for a wait outside any syscall (and for CPU)
 * @len: size of @buf
 */
void top_format_stalled(const struct top_stalled *s, char *buf, size_t len)
{
	const char *name = s->nr >= 0 ? syscall_name(s->nr) : NULL;
	char who[160], sys[32];

	snprintf(who, sizeof(who), "%s[%u] %s[%u]", LS_TEXT(s->pcomm), s->tgid, LS_TEXT(s->comm),
		 s->tid);
	if (name) {
		snprintf(sys, sizeof(sys), "%s", name);
	} else if (s->nr >= 0) {
		snprintf(sys, sizeof(sys), "syscall %d", s->nr);
	} else {
		snprintf(sys, sizeof(sys), "off-CPU");
	}
	snprintf(buf, len, "%-44s %8.1f s so far  %-15s %s  still-blocked%s%s", who,
		 (double)s->waited_ns / 1e9, sys, LS_TEXT(s->cause), s->object ? " on " : "",
		 LS_TEXT(s->object));
}

/**
 * top_format_idle() - the line of the waits for work, left out of the tables and the stalled
 * threads
 * @t: the period shown
 * @buf: receives "idle: 27 waits of 5 threads, 31.2 s (waiting for work, not latency)", with
 *	 "; 2 threads waiting now" before the parenthesis when some waited longer than --hang
 * @len: size of @buf
 */
void top_format_idle(const struct top *t, char *buf, size_t len)
{
	const struct top_period *p = &t->cur;
	char now[64] = "";

	if (p->idle_now) {
		snprintf(now, sizeof(now), "; %zu threads waiting now", p->idle_now);
	}
	snprintf(buf, len,
		 "idle: %" PRIu64 " waits of %zu threads, %.1f s%s (waiting for work, not latency)",
		 p->idle_waits, p->idle_threads, (double)p->idle_ns / 1e9, now);
}
