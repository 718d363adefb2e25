// SPDX-License-Identifier: GPL-2.0
/*
 * view.c - `latsnap top --batch`: each refresh as plain text (the screen's tables, every
 * stalled thread and every process listed) or as one JSON object per line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <json-c/json.h>

#include "classify/syscalls.h"
#include "lib/text.h"
#include "lib/util.h"
#include "top/top-int.h"

static void print_table(FILE *out, const struct top *t, uint32_t tgid, uint32_t tid,
			size_t max_rows, uint64_t total)
{
	struct top_row *rows;
	size_t n, i;
	char line[256];

	n = top_table(t->cur.waits, t->cur.nr, tgid, tid, t->view, t->sort, &rows);
	top_format_header(line, sizeof(line), t->view == TOP_VIEW_OBJECT ? "Object" : "Cause", 48);
	fprintf(out, "%s\n", line);
	for (i = 0; i < n && i < max_rows; i++) {
		top_format_row(line, sizeof(line), &rows[i], total, 48);
		fprintf(out, "%s\n", line);
	}
	free(rows);
}

/* The stalled threads, all of them, under their heading; nothing when there are none. */
static void print_stalled(FILE *out, const struct top *t)
{
	char line[512];
	size_t i;

	if (!t->cur.nr_stalled) {
		return;
	}
	top_format_stalled_title(t, line, sizeof(line));
	fprintf(out, "\n%s\n", line);
	for (i = 0; i < t->cur.nr_stalled; i++) {
		top_format_stalled(&t->cur.stalled[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}

/**
 * top_print_text() - one refresh as text: the waits for work counted, the system's table, the
 * stalled threads, then each process's
 * @t: the period, the view and the sort order
 * @out: where to
 */
void top_print_text(struct top *t, FILE *out)
{
	struct top_entity *list;
	size_t n, i;
	char line[256];

	top_format_title(t, line, sizeof(line));
	fprintf(out, "%s\n", line);
	if (!t->opts.include_idle) {
		top_format_idle(t, line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	fprintf(out, "\nSystem wide latencies (%s)\n", top_view_name(t->view));
	print_table(out, t, 0, 0, SYSTEM_ROWS, t->cur.total_ns);
	print_stalled(out, t);
	n = top_entities(t, false, &list);
	for (i = 0; i < n; i++) {
		top_format_entity(&list[i], false, line, sizeof(line));
		fprintf(out, "\n%s\n", line);
		print_table(out, t, list[i].id, 0, PROCESS_ROWS, list[i].total_ns);
	}
	free(list);
	fprintf(out,
		"\nwaits %" PRIu64 ", sampled out %" PRIu64 " (1 in %u kept below %.3f ms), "
		"lost %" PRIu64 "\n\n",
		t->cur.stats[TOP_STAT_WAITS], t->cur.stats[TOP_STAT_SAMPLED_OUT],
		t->opts.sample_ratio, (double)t->opts.sample_below_ns / 1e6,
		t->cur.stats[TOP_STAT_AGG_FULL]);
	fflush(out);
}

static void json_add_int(struct json_object *o, const char *key, int64_t value)
{
	json_object_object_add(o, key, json_object_new_int64(value));
}

static struct json_object *json_rows(const struct top *t, uint32_t tgid, uint32_t tid,
				     enum top_view view, uint64_t total)
{
	struct json_object *arr = json_object_new_array(), *o;
	struct top_row *rows;
	size_t n, i;

	n = top_table(t->cur.waits, t->cur.nr, tgid, tid, view, t->sort, &rows);
	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, view == TOP_VIEW_OBJECT ? "object" : "cause",
				       json_object_new_string(rows[i].label));
		json_add_int(o, "count", (int64_t)rows[i].count);
		json_add_int(o, "total_ns", (int64_t)rows[i].sum_ns);
		json_add_int(o, "avg_ns", (int64_t)(rows[i].sum_ns / rows[i].count));
		json_add_int(o, "max_ns", (int64_t)rows[i].max_ns);
		json_object_object_add(
			o, "percent",
			json_object_new_double(
				total ? 100.0 * (double)rows[i].sum_ns / (double)total : 0.0));
		json_object_array_add(arr, o);
	}
	free(rows);
	return arr;
}

/* The threads of process @pid among @tlist, each with its causes. */
static struct json_object *json_threads(const struct top *t, uint32_t pid,
					const struct top_entity *tlist, size_t nt)
{
	struct json_object *thr = json_object_new_array(), *to;
	size_t j;

	for (j = 0; j < nt; j++) {
		if (tlist[j].tgid != pid) {
			continue;
		}
		to = json_object_new_object();
		json_add_int(to, "tid", tlist[j].id);
		json_object_object_add(to, "comm", json_object_new_string(tlist[j].name));
		json_add_int(to, "total_ns", (int64_t)tlist[j].total_ns);
		json_object_object_add(to, "causes",
				       json_rows(t, 0, tlist[j].id, TOP_VIEW_CAUSE,
						 tlist[j].total_ns));
		json_object_array_add(thr, to);
	}
	return thr;
}

/* The processes of the period, each with its causes, objects and threads. */
static struct json_object *json_processes(struct top *t)
{
	struct json_object *procs = json_object_new_array(), *o;
	struct top_entity *list, *tlist;
	size_t n, nt, i;

	n = top_entities(t, false, &list);
	nt = top_entities(t, true, &tlist);
	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_add_int(o, "pid", list[i].id);
		json_object_object_add(o, "comm", json_object_new_string(list[i].name));
		json_add_int(o, "total_ns", (int64_t)list[i].total_ns);
		json_add_int(o, "nr_threads", (int64_t)list[i].threads);
		json_object_object_add(
			o, "causes", json_rows(t, list[i].id, 0, TOP_VIEW_CAUSE, list[i].total_ns));
		json_object_object_add(o, "objects",
				       json_rows(t, list[i].id, 0, TOP_VIEW_OBJECT,
						 list[i].total_ns));
		json_object_object_add(o, "threads", json_threads(t, list[i].id, tlist, nt));
		json_object_array_add(procs, o);
	}
	free(list);
	free(tlist);
	return procs;
}

static struct json_object *json_string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* The stalled threads, longest first: [] when there are none. */
static struct json_object *json_stalled(const struct top *t)
{
	struct json_object *arr = json_object_new_array(), *o, *flags;
	const struct top_stalled *s;
	size_t i;

	for (i = 0; i < t->cur.nr_stalled; i++) {
		s = &t->cur.stalled[i];
		o = json_object_new_object();
		json_add_int(o, "pid", s->tgid);
		json_add_int(o, "tid", s->tid);
		json_object_object_add(o, "comm", json_object_new_string(s->comm));
		json_object_object_add(o, "pcomm", json_object_new_string(s->pcomm));
		json_object_object_add(
			o, "syscall", json_string_or_null(s->nr >= 0 ? syscall_name(s->nr) : NULL));
		json_add_int(o, "waited_ns", (int64_t)s->waited_ns);
		json_object_object_add(o, "cause", json_object_new_string(s->cause));
		json_object_object_add(o, "object", json_string_or_null(s->object));
		flags = json_object_new_array();
		json_object_array_add(flags, json_object_new_string("still-blocked"));
		if (s->before_top) {
			json_object_array_add(flags, json_object_new_string("before-top"));
		}
		json_object_object_add(o, "flags", flags);
		json_object_array_add(arr, o);
	}
	return arr;
}

/* The waits for work, left out of the rest: null with --include-idle. */
static struct json_object *json_idle(const struct top *t)
{
	struct json_object *o;

	if (t->opts.include_idle) {
		return NULL;
	}
	o = json_object_new_object();
	json_add_int(o, "waits", (int64_t)t->cur.idle_waits);
	json_add_int(o, "threads", (int64_t)t->cur.idle_threads);
	json_add_int(o, "total_ns", (int64_t)t->cur.idle_ns);
	json_add_int(o, "waiting_now", (int64_t)t->cur.idle_now);
	return o;
}

/**
 * top_print_json() - one refresh as one line of JSON: totals, counters, the waits for work, the
 * system's causes, the stalled threads and each process's causes
 * @t: the period and the sort order (the view is always by cause, objects listed apart)
 * @out: where to
 */
void top_print_json(struct top *t, FILE *out)
{
	struct json_object *root = json_object_new_object();
	char *text;

	json_object_object_add(root, "version", json_object_new_string(LATSNAP_VERSION));
	json_add_int(root, "time", (int64_t)t->cur.when);
	json_add_int(root, "interval_ns", (int64_t)t->cur.interval_ns);
	json_add_int(root, "total_ns", (int64_t)t->cur.total_ns);
	json_add_int(root, "waits", (int64_t)t->cur.stats[TOP_STAT_WAITS]);
	json_add_int(root, "sampled_out", (int64_t)t->cur.stats[TOP_STAT_SAMPLED_OUT]);
	json_add_int(root, "lost", (int64_t)t->cur.stats[TOP_STAT_AGG_FULL]);
	json_add_int(root, "stack_failed", (int64_t)t->cur.stats[TOP_STAT_STACK_FAILED]);
	json_add_int(root, "sample_below_ns", (int64_t)t->opts.sample_below_ns);
	json_add_int(root, "sample_ratio", t->opts.sample_ratio);
	json_add_int(root, "hang_ns", (int64_t)t->opts.hang_ns);
	json_object_object_add(root, "idle", json_idle(t));
	json_object_object_add(root, "system", json_rows(t, 0, 0, TOP_VIEW_CAUSE, t->cur.total_ns));
	json_object_object_add(root, "stalled", json_stalled(t));
	json_object_object_add(root, "processes", json_processes(t));
	text = ls_json_text(root, JSON_C_TO_STRING_PLAIN);
	if (text) {
		fprintf(out, "%s\n", text);
	}
	fflush(out);
	free(text);
	json_object_put(root);
}
