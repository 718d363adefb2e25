// SPDX-License-Identifier: GPL-2.0
/*
 * report-json.c - `latsnap report --json` (and the data of the --html page): struct report as
 * one JSON object, in the text's order. It walks struct report only.
 */
#include <stdint.h>

#include <json-c/json.h>

#include "lib/outlier.h"
#include "review/report-analysis.h"
#include "review/report-render.h"
#include "review/snapshots.h"

static struct json_object *u64_json(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* A column of report_columns[] in a row. */
static struct json_object *column_json(const struct report_column *col,
				       const struct report_group *g)
{
	union report_value v = col->value(g);

	return col->unit == REPORT_UNIT_PERCENT ? json_object_new_double(v.percent) : u64_json(v.n);
}

/* A row's buckets that hold any: "from_ns", "to_ns" (exclusive) and "count". */
static struct json_object *histogram_json(const struct report_group *grp)
{
	struct json_object *h = json_object_new_array(), *b;
	int k;

	for (k = 0; h && k < REPORT_HIST_BUCKETS; k++) {
		if (!grp->hist[k]) {
			continue;
		}
		b = json_object_new_object();
		json_object_object_add(b, "from_ns", u64_json(k ? 1ULL << (k - 1) : 0));
		json_object_object_add(b, "to_ns",
				       u64_json(k == 0	? 1 :
						k == 64 ? UINT64_MAX :
							  1ULL << k));
		json_object_object_add(b, "count", u64_json(grp->hist[k]));
		json_object_array_add(h, b);
	}
	return h;
}

/* A row of requests' own members: "probe", "arg" and "causes", largest total first. */
static void request_json(struct json_object *g, const struct report_group *grp)
{
	struct json_object *arr = json_object_new_array(), *c;
	size_t i;

	json_object_object_add(g, "probe", json_object_new_string(grp->probe));
	json_object_object_add(g, "arg", str_or_null(grp->arg));
	for (i = 0; arr && i < grp->causes->nr; i++) {
		c = json_object_new_object();
		json_object_object_add(c, "cause",
				       json_object_new_string(grp->causes->groups[i].key));
		json_object_object_add(c, "count", u64_json(grp->causes->groups[i].count));
		json_object_object_add(c, "total_ns", u64_json(grp->causes->groups[i].total_ns));
		json_object_array_add(arr, c);
	}
	json_object_object_add(g, "causes", arr);
}

static struct json_object *group_json(const struct report_group *grp)
{
	struct json_object *g = json_object_new_object();
	size_t c;

	json_object_object_add(g, "key",
			       json_object_new_string(grp->label ? grp->label : grp->key));
	for (c = 0; c < report_nr_columns; c++) {
		json_object_object_add(g, report_columns[c].member,
				       column_json(&report_columns[c], grp));
	}
	json_object_object_add(g, "histogram", histogram_json(grp));
	if (grp->causes) {
		request_json(g, grp);
	}
	return g;
}

static struct json_object *table_json(const struct report_table *t)
{
	struct json_object *obj = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	json_object_object_add(obj, "count", u64_json(t->count));
	json_object_object_add(obj, "total_ns", u64_json(t->total_ns));
	json_object_object_add(obj, "groups", arr);
	for (i = 0; i < t->nr; i++) {
		json_object_array_add(arr, group_json(&t->groups[i]));
	}
	return obj;
}

/* A thread's "pid", "tid" and "comm" into @obj; @unnamed: the comm of one without a name. */
static void thread_json(struct json_object *obj, int32_t pid, int32_t tid, const char *comm,
			const char *unnamed)
{
	json_object_object_add(obj, "pid", json_object_new_int(pid));
	json_object_object_add(obj, "tid", json_object_new_int(tid));
	json_object_object_add(obj, "comm", json_object_new_string(comm ? comm : unnamed));
}

/* What "stalls" and "longest" say of a wait first: "snapshot", its thread, "syscall". */
static void wait_json_head(struct json_object *obj, const struct snapshot_wait *w,
			   const char *unnamed)
{
	json_object_object_add(obj, "snapshot",
			       w->snap ? json_object_new_string(w->snap->id) : NULL);
	thread_json(obj, w->o->pid, w->o->tid, w->o->comm, unnamed);
	json_object_object_add(obj, "syscall", str_or_null(w->o->syscall));
}

/* Who held @lw up, as "held_up_by": the holder or the wait chain's nearest; else NULL. */
static struct json_object *held_up_json(const struct report_longest *lw)
{
	const struct outlier_link *l = lw->link;
	struct json_object *h;

	if (lw->how != REPORT_HELD_BY_HOLDER && lw->how != REPORT_HELD_UP_BY_LINK) {
		return NULL;
	}
	h = json_object_new_object();
	if (lw->how == REPORT_HELD_BY_HOLDER) {
		thread_json(h, lw->w->holder->pid, lw->w->holder->tid, lw->w->holder->comm, "");
		json_object_object_add(h, "how", json_object_new_string("holder"));
		return h;
	}
	thread_json(h, l->pid, l->tid, l->comm, "");
	json_object_object_add(h, "how", json_object_new_string("wait-chain"));
	json_object_object_add(h, "syscall", str_or_null(l->syscall));
	json_object_object_add(h, "blocked_ns", u64_json(l->blocked_ns));
	json_object_object_add(h, "cause",
			       str_or_null(lw->link_wait ? lw->link_wait->cause : NULL));
	return h;
}

/* The longest waits as the text lists them: report --json's "longest". */
static struct json_object *longest_json(const struct report *r)
{
	struct json_object *arr = json_object_new_array(), *e;
	size_t i;

	for (i = 0; arr && i < r->nr_longest; i++) {
		const struct outlier *o = r->longest[i].w->o;

		e = json_object_new_object();
		wait_json_head(e, r->longest[i].w, "");
		json_object_object_add(e, "duration_ns", u64_json(o->duration_ns));
		json_object_object_add(e, "cause", str_or_null(o->cause));
		json_object_object_add(e, "held_up_by", held_up_json(&r->longest[i]));
		json_object_array_add(arr, e);
	}
	return arr;
}

/* Who held what a stall waited for: its thread, "what" and "state"; NULL when unknown. */
static struct json_object *holder_json(const struct outlier_holder *holder)
{
	struct json_object *h;

	if (!holder) {
		return NULL;
	}
	h = json_object_new_object();
	thread_json(h, holder->pid, holder->tid, holder->comm, "?");
	json_object_object_add(h, "what", str_or_null(holder->what));
	json_object_object_add(h, "state", str_or_null(holder->state));
	return h;
}

static struct json_object *stall_json(const struct report_stall *st)
{
	struct json_object *obj = json_object_new_object();
	const struct outlier *o = st->w->o;

	json_object_object_add(obj, "host", json_object_new_string(report_wait_host(st->w)));
	wait_json_head(obj, st->w, "?");
	json_object_object_add(obj, "start_ns", u64_json(o->start_ns));
	json_object_object_add(obj, "end_ns", u64_json(o->end_ns));
	json_object_object_add(obj, "duration_ns", u64_json(o->duration_ns));
	json_object_object_add(obj, "state", json_object_new_string(outlier_state_name(o->state)));
	json_object_object_add(obj, "cause", json_object_new_string(o->cause ? o->cause : ""));
	json_object_object_add(obj, "deadlock", json_object_new_boolean(st->cycle >= 0));
	json_object_object_add(obj, "cycle",
			       st->cycle >= 0 ? json_object_new_int(st->cycle) : NULL);
	json_object_object_add(obj, "reports", u64_json(st->w->reports));
	json_object_object_add(obj, "holder", holder_json(st->w->holder));
	return obj;
}

/* The stalls as --json has them: in the order of struct report's @stalls. */
static struct json_object *stalls_json(const struct report *r)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; arr && i < r->nr_stalls; i++) {
		json_object_array_add(arr, stall_json(&r->stalls[i]));
	}
	return arr;
}

/* The idle waits as --json has them: every row, in the text's order. */
static struct json_object *idle_json(const struct report *r)
{
	struct json_object *arr = json_object_new_array(), *e;
	const struct snapshot_idle *d;
	size_t i;

	for (i = 0; arr && i < r->nr_idle; i++) {
		d = &r->idle[i];
		e = json_object_new_object();
		json_object_object_add(e, "host", json_object_new_string(d->host));
		thread_json(e, d->pid, d->tid, d->comm, "");
		json_object_object_add(e, "site", json_object_new_string(d->site));
		json_object_object_add(e, "count", u64_json(d->count));
		json_object_object_add(e, "total_ns", u64_json(d->total_ns));
		json_object_array_add(arr, e);
	}
	return arr;
}

static struct json_object *snapshot_json(const struct snapshot *sn)
{
	struct json_object *s = json_object_new_object();

	json_object_object_add(s, "id", json_object_new_string(sn->id));
	json_object_object_add(s, "host", str_or_null(sn->host));
	json_object_object_add(s, "path", json_object_new_string(sn->path));
	json_object_object_add(s, "status",
			       json_object_new_string(snapshots_state_name(sn->state)));
	json_object_object_add(s, "reason",
			       sn->state == SNAPSHOT_COMPLETE ? NULL :
								json_object_new_string(sn->why));
	json_object_object_add(
		s, "outliers",
		json_object_new_int64(sn->summary ? (int64_t)sn->summary->nr_outliers : 0));
	return s;
}

static struct json_object *process_json(const struct report_process *proc)
{
	struct json_object *p = table_json(&proc->table);

	json_object_object_add(p, "host", json_object_new_string(proc->host));
	json_object_object_add(p, "pid", json_object_new_int64(proc->pid));
	json_object_object_add(p, "comm", json_object_new_string(proc->comm));
	json_object_object_add(p, "threads", u64_json(proc->nr_tids));
	return p;
}

/**
 * report_to_json() - the report as --json has it
 * @r: the report
 *
 * Return: a new JSON object (NULL without memory).
 */
struct json_object *report_to_json(const struct report *r)
{
	struct json_object *obj = json_object_new_object(), *snaps = json_object_new_array(),
			   *procs = json_object_new_array();
	size_t i;

	json_object_object_add(obj, "dir", json_object_new_string(r->set->dir));
	json_object_object_add(obj, "by", json_object_new_string(report_by_names[r->by]));
	json_object_object_add(obj, "skipped", u64_json(r->skipped));
	if (r->by == REPORT_BY_REQUEST) {
		json_object_object_add(obj, "not_requests", u64_json(r->not_requests));
	}
	for (i = 0; i < r->set->nr; i++) {
		json_object_array_add(snaps, snapshot_json(&r->set->snaps[i]));
	}
	json_object_object_add(obj, "snapshots", snaps);
	json_object_object_add(obj, "system", table_json(&r->system));
	json_object_object_add(obj, "hosts", table_json(&r->hosts));
	for (i = 0; i < r->nr_procs; i++) {
		json_object_array_add(procs, process_json(&r->procs[i]));
	}
	json_object_object_add(obj, "processes", procs);
	json_object_object_add(obj, "stalls", stalls_json(r));
	json_object_object_add(obj, "longest", longest_json(r));
	json_object_object_add(obj, "idle", idle_json(r));
	json_object_object_add(obj, "idle_count", u64_json(r->idle_count));
	json_object_object_add(obj, "idle_total_ns", u64_json(r->idle_total_ns));
	return obj;
}
