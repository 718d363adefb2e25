// SPDX-License-Identifier: GPL-2.0
/*
 * report-text.c - `latsnap report`'s text: the LatencyTOP-style tables, the stalls and
 * deadlocks, the longest waits, each group's distribution as DTrace's quantize() prints it, the
 * processes, the idle waits and the snapshots not reported. It walks struct report only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/outlier.h"
#include "lib/text.h"
#include "review/report-analysis.h"
#include "review/report-render.h"
#include "review/snapshots.h"

#define HIST_WIDTH 40
#define KEY_WIDTH_MIN 24
#define KEY_WIDTH_MAX 48
/* --by request: the widest request text of a table row (the query, cut with "..."). */
#define REQUEST_WIDTH_MAX 60
/* The idle section lists this many threads and places at most, then how many more. */
#define IDLE_ROWS_MAX 20

/* The heads of report_columns[] that the text has, after the key's head @title. */
static void print_heads(FILE *out, int width, const char *title)
{
	size_t c;

	fprintf(out, "%-*s", width, title);
	for (c = 0; c < report_nr_columns; c++) {
		if (report_columns[c].title) {
			fprintf(out, " %*s", report_columns[c].width, report_columns[c].title);
		}
	}
}

/* The row @g: its @label, cut to @width, and the numbers of report_columns[] the text has. */
static void print_row(FILE *out, int width, const char *label, const struct report_group *g)
{
	char dur[LS_DURATION_BUFSZ];
	const struct report_column *col;
	union report_value v;
	size_t c;

	fprintf(out, "%-*.*s", width, width, LS_TEXT(label));
	for (c = 0; c < report_nr_columns; c++) {
		col = &report_columns[c];
		if (!col->title) {
			continue;
		}
		v = col->value(g);
		switch (col->unit) {
		case REPORT_UNIT_COUNT:
			fprintf(out, " %*" PRIu64, col->width, v.n);
			break;
		case REPORT_UNIT_NS:
			ls_format_duration(v.n, dur, sizeof(dur));
			fprintf(out, " %*s", col->width, dur);
			break;
		case REPORT_UNIT_PERCENT:
			fprintf(out, " %*.1f%%", col->width - 1, v.percent);
			break;
		}
	}
}

static void print_table(FILE *out, const struct report_table *t, const char *title)
{
	int width = KEY_WIDTH_MIN;
	size_t i;

	for (i = 0; i < t->nr; i++) {
		if ((int)strlen(LS_TEXT(t->groups[i].key)) > width) {
			width = (int)strlen(LS_TEXT(t->groups[i].key));
		}
	}
	if (width > KEY_WIDTH_MAX) {
		width = KEY_WIDTH_MAX;
	}
	print_heads(out, width, title);
	fputc('\n', out);
	for (i = 0; i < t->nr; i++) {
		print_row(out, width, t->groups[i].key, &t->groups[i]);
		fputc('\n', out);
	}
}

/* The start probe of @probe ("START,END") as a short name: PROVIDER:NAME of usdt:, or SYMBOL. */
static void probe_short(const char *probe, char *buf, size_t len)
{
	size_t n = strcspn(probe, ","), colons = 0;
	const char *p = probe + n;

	/* Back from the end of START to the colon before its name (usdt: before its provider). */
	while (p > probe) {
		if (p[-1] == ':' && ++colons == (strncmp(probe, "usdt:", 5) ? 1U : 2U)) {
			break;
		}
		p--;
	}
	snprintf(buf, len, "%.*s", (int)(n - (size_t)(p - probe)), p);
}

/*
 * The text of a row of requests, at most REQUEST_WIDTH_MAX bytes (cut on a character, with
 * "..."): the argument, after its start probe's short name when the table has several pairs.
 */
static void request_label(const struct report_group *g, bool many_probes, char *buf, size_t len)
{
	char name[128], text[2048];
	size_t n;

	if (g->arg && many_probes) {
		probe_short(g->probe, name, sizeof(name));
		snprintf(text, sizeof(text), "%s: %s", name, g->arg);
	} else {
		snprintf(text, sizeof(text), "%s", g->label);
	}
	n = strlen(text);
	if (n > REQUEST_WIDTH_MAX) {
		n = REQUEST_WIDTH_MAX - 3;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80) {
			n--;
		}
		memcpy(text + n, "...", 4);
	}
	snprintf(buf, len, "%s", text);
}

/* The cause of most of a row of requests' time (their causes are sorted, largest first). */
static const char *top_cause(const struct report_group *g)
{
	return g->causes && g->causes->nr ? g->causes->groups[0].key : "?";
}

/* A table of requests: each row's request text, its numbers, and the cause of most of its time. */
static void print_request_table(FILE *out, const struct report_table *t)
{
	char label[REQUEST_WIDTH_MAX + 8];
	bool many_probes = t->nr_probes > 1;
	int width = KEY_WIDTH_MIN;
	size_t i;

	for (i = 0; i < t->nr; i++) {
		request_label(&t->groups[i], many_probes, label, sizeof(label));
		if ((int)strlen(LS_TEXT(label)) > width) {
			width = (int)strlen(LS_TEXT(label));
		}
	}
	print_heads(out, width, "Request");
	fprintf(out, "  %s\n", "Cause (most of the time)");
	if (!t->nr) {
		fprintf(out, "  (no requests: record --request START,END records them)\n");
	}
	for (i = 0; i < t->nr; i++) {
		request_label(&t->groups[i], many_probes, label, sizeof(label));
		print_row(out, width, label, &t->groups[i]);
		fprintf(out, "  %s\n", LS_TEXT(top_cause(&t->groups[i])));
	}
}

/* DTrace's quantize() output: the buckets from one below the lowest to one above the highest. */
static void print_hist(FILE *out, const struct report_group *g)
{
	char value[LS_DURATION_BUFSZ];
	int lo = REPORT_HIST_BUCKETS, hi = -1, b, bars;

	for (b = 0; b < REPORT_HIST_BUCKETS; b++) {
		if (g->hist[b]) {
			lo = b < lo ? b : lo;
			hi = b;
		}
	}
	if (hi < 0) {
		return;
	}
	lo = lo > 0 ? lo - 1 : 0;
	hi = hi + 1 < REPORT_HIST_BUCKETS ? hi + 1 : hi;
	fprintf(out, "  %s\n  %14s  ------------- Distribution ------------- count\n",
		LS_TEXT(g->label ? g->label : g->key), "value");
	for (b = lo; b <= hi; b++) {
		ls_format_duration(b ? 1ULL << (b - 1) : 0, value, sizeof(value));
		bars = (int)((g->hist[b] * HIST_WIDTH + g->count / 2) / g->count);
		fprintf(out, "  %14s |%.*s%*s %" PRIu64 "\n", value, bars,
			"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", HIST_WIDTH - bars, "",
			g->hist[b]);
	}
	fputc('\n', out);
}

/* --- stalls -------------------------------------------------------------------------------- */

static void print_who(FILE *out, const char *comm, int32_t pid, int32_t tid)
{
	fprintf(out, "%s[%" PRId32 "/%" PRId32 "]", LS_TEXT(comm ? comm : "?"), pid, tid);
}

static void print_stall_who(FILE *out, const struct report_stall *st)
{
	print_who(out, st->w->o->comm, st->w->o->pid, st->w->o->tid);
}

/* " (what)" after a holder's name when it is known what it holds. */
static void print_holder(FILE *out, const struct outlier_holder *h)
{
	print_who(out, h->comm, h->pid, h->tid);
	if (h->what) {
		fprintf(out, " (%s)", LS_TEXT(h->what));
	}
}

/* "comm[pid/tid] syscall, 2.000 s so far, still-blocked: cause; held by comm[pid/tid] (what)" */
static void print_stall(FILE *out, const struct report_stall *st, const char *indent,
			bool many_hosts)
{
	const struct outlier *o = st->w->o;
	enum outlier_state state = o->state;
	char dur[LS_DURATION_BUFSZ];

	ls_format_duration(o->duration_ns, dur, sizeof(dur));
	fputs(indent, out);
	print_stall_who(out, st);
	if (many_hosts) {
		fprintf(out, " on %s", LS_TEXT(report_wait_host(st->w)));
	}
	fprintf(out, " %s, %s%s, %s: %s", LS_TEXT(o->syscall ? o->syscall : "off-cpu"), dur,
		state == OUTLIER_ENDED ? "" : " so far", outlier_state_name(state),
		LS_TEXT(o->cause ? o->cause : "unknown"));
	if (st->w->holder) {
		fputs("; held by ", out);
		print_holder(out, st->w->holder);
	}
	fputc('\n', out);
}

/*
 * A deadlock: "Deadlock of N threads: a[1/2] -> b[1/3] -> a[1/2]", then each thread, in the
 * order they wait for each other.
 */
static void print_cycle(FILE *out, const struct report_cycle *c, bool many_hosts)
{
	size_t i;

	fprintf(out, "  Deadlock of %zu thread%s: ", c->nr, c->nr == 1 ? "" : "s");
	for (i = 0; i < c->nr; i++) {
		if (i) {
			fputs(c->threads[i].chained ? " -> " : "; ", out);
		}
		print_stall_who(out, c->threads[i].stall);
	}
	if (c->closed_by) {
		fputs(" -> ", out);
		print_stall_who(out, c->closed_by);
	} else if (c->holder) {
		fputs(" -> ", out);
		print_who(out, c->holder->comm, c->holder->pid, c->holder->tid);
	}
	fputc('\n', out);
	for (i = 0; i < c->nr; i++) {
		print_stall(out, c->threads[i].stall, "    ", many_hosts);
	}
}

/* "Stalls": the deadlocks, a cycle at a time, then the other stalled waits; nothing if none. */
static void print_stalls(FILE *out, const struct report *r)
{
	size_t i;

	if (!r->nr_stalls) {
		return;
	}
	fprintf(out, "Stalls (waits reported while still blocked, and deadlocks):\n");
	for (i = 0; i < r->nr_cycles; i++) {
		print_cycle(out, &r->cycles[i], r->many_hosts);
	}
	for (i = 0; i < r->nr_stalls; i++) {
		if (r->stalls[i].cycle < 0) {
			print_stall(out, &r->stalls[i], "  ", r->many_hosts);
		}
	}
	fputc('\n', out);
}

/* --- the longest waits --------------------------------------------------------------------- */

/* "; held by ...", "; held up by ..." or "; woken by ...": who held @lw up, when known. */
static void print_held_up(FILE *out, const struct report_longest *lw)
{
	const struct outlier *o = lw->w->o;
	const struct outlier_link *l = lw->link;

	switch (lw->how) {
	case REPORT_HELD_BY_HOLDER:
		fputs("; held by ", out);
		print_holder(out, lw->w->holder);
		break;
	case REPORT_HELD_UP_BY_LINK:
		fputs("; held up by ", out);
		print_who(out, l->comm, l->pid, l->tid);
		fprintf(out, " (%s%s, blocked %.1f%%", l->syscall ? "in " : "",
			LS_TEXT(l->syscall ? l->syscall : "outside a syscall"),
			lw->blocked_percent);
		if (lw->link_wait && lw->link_wait->cause) {
			fprintf(out, ": %s", LS_TEXT(lw->link_wait->cause));
		}
		fputc(')', out);
		break;
	case REPORT_WOKEN_BY_INTERRUPT:
		fprintf(out, "; woken by %s",
			LS_TEXT(o->waker->comm ? o->waker->comm : "an interrupt"));
		break;
	case REPORT_WOKEN_BY_THREAD:
		fputs("; woken by ", out);
		print_who(out, o->waker->comm, o->waker->pid, o->waker->tid);
		break;
	case REPORT_HELD_UP_UNKNOWN:
		break;
	}
}

/*
 * "  894.807 ms  mariadbd[681/705] futex: CAUSE; held up by mariadbd[681/698] (in futex,
 * blocked 99.7%)  [SNAPSHOT]": the longest waits, each with what held it up, so that one look
 * at the report names the wait and its holder, not only its cause's share.
 */
static void print_longest(FILE *out, const struct report *r)
{
	char dur[LS_DURATION_BUFSZ];
	size_t i;

	if (!r->nr_longest) {
		return;
	}
	fprintf(out, "Longest waits (held up by: the holder, else the thread that woke it):\n");
	for (i = 0; i < r->nr_longest; i++) {
		const struct snapshot_wait *w = r->longest[i].w;
		const struct outlier *o = w->o;

		ls_format_duration(o->duration_ns, dur, sizeof(dur));
		fprintf(out, "  %12s  ", dur);
		print_who(out, o->comm, o->pid, o->tid);
		fprintf(out, " %s: %s",
			LS_TEXT(o->kind == OUTLIER_REQUEST ? "request" :
				o->syscall		   ? o->syscall :
							     "off-cpu"),
			LS_TEXT(o->cause ? o->cause : "unknown"));
		print_held_up(out, &r->longest[i]);
		if (w->snap) {
			fprintf(out, "  [%s]", LS_TEXT(w->snap->id));
		}
		fputc('\n', out);
	}
	fputc('\n', out);
}

/* --- idle waits ---------------------------------------------------------------------------- */

/* "comm[pid/tid]", and " on host" when the report has several: the idle section's thread. */
static void idle_label(const struct snapshot_idle *e, bool many_hosts, char *buf, size_t len)
{
	snprintf(buf, len, "%s[%" PRId32 "/%" PRId32 "]%s%s", LS_TEXT(e->comm), e->pid, e->tid,
		 many_hosts ? " on " : "", many_hosts ? LS_TEXT(e->host) : "");
}

/* One idle row: the thread, its count and total, and where it waits, demangled. */
static void print_idle_row(FILE *out, const struct snapshot_idle *e, bool many_hosts, int width)
{
	char total[LS_DURATION_BUFSZ], label[256], site[512], *demangled;

	idle_label(e, many_hosts, label, sizeof(label));
	demangled = ls_demangle_text(e->site);
	ls_text(site, sizeof(site), demangled ? demangled : e->site);
	free(demangled);
	ls_format_duration(e->total_ns, total, sizeof(total));
	fprintf(out, "%-*.*s %7" PRIu64 " %12s  %s\n", width, width, label, e->count, total, site);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/* "... N more (K waits, T)": the idle rows past IDLE_ROWS_MAX, summed. */
static void print_idle_rest(FILE *out, const struct report *r, size_t shown)
{
	uint64_t rest_count = 0, rest_ns = 0;
	char total[LS_DURATION_BUFSZ];
	size_t i;

	for (i = shown; i < r->nr_idle; i++) {
		rest_count = sat_add(rest_count, r->idle[i].count);
		rest_ns = sat_add(rest_ns, r->idle[i].total_ns);
	}
	ls_format_duration(rest_ns, total, sizeof(total));
	fprintf(out, "... %zu more (%" PRIu64 " wait%s, %s)\n", r->nr_idle - shown, rest_count,
		rest_count == 1 ? "" : "s", total);
}

/*
 * "Idle waits": the threads' waits for work, largest total first, IDLE_ROWS_MAX of them, apart
 * from the latency above; nothing if there are none.
 */
static void print_idle(FILE *out, const struct report *r)
{
	char total[LS_DURATION_BUFSZ], label[256];
	int width = KEY_WIDTH_MIN;
	size_t i, shown;

	if (!r->nr_idle) {
		return;
	}
	shown = r->nr_idle < IDLE_ROWS_MAX ? r->nr_idle : IDLE_ROWS_MAX;
	for (i = 0; i < shown; i++) {
		idle_label(&r->idle[i], r->many_hosts, label, sizeof(label));
		if ((int)strlen(label) > width) {
			width = (int)strlen(label);
		}
	}
	if (width > KEY_WIDTH_MAX) {
		width = KEY_WIDTH_MAX;
	}
	ls_format_duration(r->idle_total_ns, total, sizeof(total));
	fprintf(out, "Idle waits (waiting for work; not latency): %" PRIu64 " wait%s, %s\n",
		r->idle_count, r->idle_count == 1 ? "" : "s", total);
	fprintf(out, "%-*s %7s %12s  %s\n", width, "Thread", "Count", "Total", "Where");
	for (i = 0; i < shown; i++) {
		print_idle_row(out, &r->idle[i], r->many_hosts, width);
	}
	if (r->nr_idle > shown) {
		print_idle_rest(out, r, shown);
	}
	fputc('\n', out);
}

/* --- the report ---------------------------------------------------------------------------- */

/* "DIR: N snapshots (...): K outliers, T in all, S skipped by the recorder[; I idle waits]" */
static void print_head(FILE *out, const struct report *r)
{
	char total[LS_DURATION_BUFSZ];

	ls_format_duration(r->system.total_ns, total, sizeof(total));
	fprintf(out,
		"%s: %zu snapshots (%" PRIu64 " complete, %zu incomplete or corrupt): %" PRIu64
		" outliers, %s in all, %" PRIu64 " skipped by the recorder",
		LS_TEXT(r->set->dir), r->set->nr, r->complete, r->set->nr - (size_t)r->complete,
		r->system.count, total, r->skipped);
	/* Only when there are any: the line stays as it always was for older summaries. */
	if (r->idle_count) {
		fprintf(out, "; %" PRIu64 " idle wait%s", r->idle_count,
			r->idle_count == 1 ? "" : "s");
	}
	fputs("\n\n", out);
	if (r->not_requests) {
		fprintf(out,
			"Requests only (record --request): %" PRIu64 " other outlier%s left out "
			"(see --by cause)\n\n",
			r->not_requests, r->not_requests == 1 ? "" : "s");
	}
}

/* A table of @r's grouping: of requests with --by request, else with the key's head @title. */
static void print_grouping(FILE *out, const struct report *r, const struct report_table *t,
			   const char *title)
{
	if (r->by == REPORT_BY_REQUEST) {
		print_request_table(out, t);
	} else {
		print_table(out, t, title);
	}
	fputc('\n', out);
}

static void print_process(FILE *out, const struct report *r, const struct report_process *p)
{
	char total[LS_DURATION_BUFSZ];

	ls_format_duration(p->table.total_ns, total, sizeof(total));
	fprintf(out, "Process %s (%" PRId64 ")%s%s: %s in %" PRIu64 " outlier%s, %zu thread%s\n",
		LS_TEXT(p->comm), p->pid, r->many_hosts ? " on " : "",
		r->many_hosts ? LS_TEXT(p->host) : "", total, p->table.count,
		p->table.count == 1 ? "" : "s", p->nr_tids, p->nr_tids == 1 ? "" : "s");
	print_grouping(out, r, &p->table, r->by == REPORT_BY_SYSCALL ? "Syscall" : "Cause");
}

/* "Not reported": the incomplete and corrupt snapshots, with why; nothing if there are none. */
static void print_not_reported(FILE *out, const struct snapshot_set *set, uint64_t complete)
{
	size_t i;

	if (set->nr == complete) {
		return;
	}
	fprintf(out, "Not reported:\n");
	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
			fprintf(out, "  %s: %s: %s\n", LS_TEXT(set->snaps[i].id),
				snapshots_state_name(set->snaps[i].state),
				LS_TEXT(set->snaps[i].why));
		}
	}
}

/**
 * report_print_text() - the report as text
 * @out: where to
 * @r: the report
 */
void report_print_text(FILE *out, const struct report *r)
{
	static const char *const titles[NR_REPORT_BY] = { "Cause", "Process", "Syscall", "Host",
							  "Request" };
	size_t i;

	print_head(out, r);
	fprintf(out, "System-wide, by %s:\n", report_by_names[r->by]);
	print_grouping(out, r, &r->system, titles[r->by]);
	if (r->many_hosts && r->by != REPORT_BY_HOST) {
		fprintf(out, "By host:\n");
		print_table(out, &r->hosts, "Host");
		fputc('\n', out);
	}
	print_stalls(out, r);
	print_longest(out, r);
	fprintf(out, "Distribution of each %s:\n", report_by_names[r->by]);
	for (i = 0; i < r->system.nr; i++) {
		print_hist(out, &r->system.groups[i]);
	}
	for (i = 0; i < r->nr_procs; i++) {
		print_process(out, r, &r->procs[i]);
	}
	print_idle(out, r);
	print_not_reported(out, r->set, r->complete);
}
