// SPDX-License-Identifier: GPL-2.0
/*
 * lanes.c - an outlier's timeline events (`show --json`'s "timeline") turned into what the HTML
 * page draws: per thread its on-CPU, blocked and runqueue spans (review/threadstate.c reads the
 * scheduler events) and its syscalls, and the wakeups of those threads, all in ns relative to
 * the outlier's start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "review/lanes.h"
#include "review/threadstate.h"

static int64_t get_i64(struct json_object *obj, const char *key)
{
	return json_object_get_int64(json_object_object_get(obj, key));
}

/* A [from, to, what] triple, relative to @base. */
static struct json_object *span_json(uint64_t from, uint64_t to, uint64_t base, const char *what)
{
	struct json_object *s = json_object_new_array_ext(3);

	if (s) {
		json_object_array_add(s, json_object_new_int64((int64_t)(from - base)));
		json_object_array_add(s, json_object_new_int64((int64_t)(to - base)));
		json_object_array_add(s, json_object_new_string(what));
	}
	return s;
}

/* The last comm the timeline gives @tid (an exec renames it), or NULL. */
static const char *comm_of(struct json_object *timeline, int64_t tid)
{
	struct json_object *e;
	size_t i;

	for (i = json_object_array_length(timeline); i > 0; i--) {
		e = json_object_array_get_idx(timeline, i - 1);
		if (get_i64(e, "tid") == tid) {
			return json_object_get_string(json_object_object_get(e, "comm"));
		}
	}
	return NULL;
}

/*
 * Timeline entry @e (name, ts_ns, fields) decoded into @d; @ev holds what @d borrows, for as
 * long as @d is used.
 */
static void entry_decode(struct json_object *e, struct ctf_event *ev, struct lsev *d)
{
	*ev = (struct ctf_event){
		.name = json_object_get_string(json_object_object_get(e, "name")),
		.ts_ns = (uint64_t)get_i64(e, "ts_ns"),
		.fields = json_object_object_get(e, "fields"),
	};
	if (!ev->name) {
		ev->name = "";
	}
	lsev_decode(ev, d);
}

/* @tid's syscalls that ended in the timeline (latsnap_kernel:syscall), clipped to the window. */
static int add_syscalls(struct json_object *lane, struct json_object *timeline, int64_t tid,
			uint64_t base, uint64_t from_ns, uint64_t to_ns)
{
	struct json_object *list = json_object_new_array(), *s;
	struct ctf_event ev;
	uint64_t start, end;
	struct lsev d;
	size_t i;

	if (!list) {
		return -ENOMEM;
	}
	json_object_object_add(lane, "syscalls", list);
	for (i = 0; i < json_object_array_length(timeline); i++) {
		entry_decode(json_object_array_get_idx(timeline, i), &ev, &d);
		if (d.kind != LSEV_SYSCALL || d.thread.tid != tid) {
			continue;
		}
		start = d.u.syscall.start_ns;
		end = start + d.u.syscall.duration_ns;
		start = start < from_ns ? from_ns : start;
		end = end > to_ns ? to_ns : end;
		if (end < start) {
			continue;
		}
		s = span_json(start, end, base, d.u.syscall.name);
		if (!s || json_object_array_add(list, s)) {
			json_object_put(s);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Narrow [*@from_ns, *@to_ns] to @tid's life: from its creation (latsnap_kernel:process_fork
 * naming it the child) to its exit, when the timeline has them. A thread drawn before it
 * existed would seem to have waited.
 */
static void clip_to_life(struct json_object *timeline, int64_t tid, uint64_t *from_ns,
			 uint64_t *to_ns)
{
	struct ctf_event ev;
	struct lsev d;
	size_t i;

	for (i = 0; i < json_object_array_length(timeline); i++) {
		entry_decode(json_object_array_get_idx(timeline, i), &ev, &d);
		if (d.ts_ns <= *from_ns || d.ts_ns >= *to_ns) {
			continue;
		}
		if (d.kind == LSEV_PROCESS_FORK && d.other.tid == tid) {
			*from_ns = d.ts_ns;
		} else if (d.kind == LSEV_PROCESS_EXIT && d.thread.tid == tid) {
			*to_ns = d.ts_ns;
		}
	}
}

static int add_lane(struct json_object *lanes, const struct threadstate *ts,
		    struct json_object *timeline, const struct lanes_thread *t, uint64_t base,
		    uint64_t from_ns, uint64_t to_ns)
{
	struct json_object *lane = json_object_new_object(), *list = json_object_new_array(), *s;
	struct threadstate_span *spans = NULL;
	const char *comm = t->comm ? t->comm : comm_of(timeline, t->tid);
	size_t i, nr = 0;
	int err = -ENOMEM;

	if (!lane || !list) {
		json_object_put(list);
		goto out;
	}
	json_object_object_add(lane, "tid", json_object_new_int64(t->tid));
	json_object_object_add(lane, "comm", comm ? json_object_new_string(comm) : NULL);
	json_object_object_add(lane, "role", json_object_new_string(t->role));
	json_object_object_add(lane, "spans", list);
	clip_to_life(timeline, t->tid, &from_ns, &to_ns);
	err = threadstate_spans(ts, t->tid, from_ns, to_ns, &spans, &nr);
	for (i = 0; !err && i < nr; i++) {
		s = span_json(spans[i].from_ns, spans[i].to_ns, base,
			      threadstate_name(spans[i].state));
		if (!s || json_object_array_add(list, s)) {
			json_object_put(s);
			err = -ENOMEM;
		}
	}
	err = err ?: add_syscalls(lane, timeline, t->tid, base, from_ns, to_ns);
	if (!err && json_object_array_add(lanes, lane)) {
		err = -ENOMEM;
	}
	if (!err) {
		lane = NULL;
	}
out:
	json_object_put(lane);
	free(spans);
	return err;
}

static int add_wakeups(struct json_object *list, const struct threadstate *ts,
		       struct json_object *timeline, int64_t tid, uint64_t base, uint64_t from_ns,
		       uint64_t to_ns)
{
	struct threadstate_wakeup *w = NULL;
	struct json_object *e;
	const char *comm;
	size_t i, nr = 0;
	int err;

	err = threadstate_wakeups(ts, tid, from_ns, to_ns, &w, &nr);
	for (i = 0; !err && i < nr; i++) {
		e = json_object_new_object();
		if (!e || json_object_array_add(list, e)) {
			json_object_put(e);
			err = -ENOMEM;
			break;
		}
		comm = comm_of(timeline, w[i].waker_tid);
		json_object_object_add(e, "rel_ns",
				       json_object_new_int64((int64_t)(w[i].ts_ns - base)));
		json_object_object_add(e, "tid", json_object_new_int64(w[i].tid));
		json_object_object_add(e, "waker_tid", json_object_new_int64(w[i].waker_tid));
		json_object_object_add(e, "waker_comm", comm ? json_object_new_string(comm) : NULL);
		json_object_object_add(e, "in_irq", json_object_new_boolean(w[i].in_irq));
	}
	free(w);
	return err;
}

/**
 * lanes_add() - add "lanes", "wakeups" and "window" to @outlier from its "timeline"
 * @outlier: an outlier as `show --json` has it (start_ns, timeline)
 * @threads: the threads to draw, the slow one first
 * @nr: how many
 * @from_ns: the timeline's window
 * @to_ns: its end
 *
 * Nothing is added when the outlier has no timeline (its trace could not be read).
 *
 * Return: 0 or -ENOMEM.
 */
int lanes_add(struct json_object *outlier, const struct lanes_thread *threads, size_t nr,
	      uint64_t from_ns, uint64_t to_ns)
{
	struct json_object *timeline = json_object_object_get(outlier, "timeline"), *lanes,
			   *wakeups, *window;
	uint64_t base = (uint64_t)get_i64(outlier, "start_ns");
	struct threadstate *ts;
	struct ctf_event ev;
	struct lsev d;
	size_t i;
	int err = 0;

	if (!json_object_is_type(timeline, json_type_array)) {
		return 0;
	}
	ts = threadstate_new();
	lanes = json_object_new_array();
	wakeups = json_object_new_array();
	window = json_object_new_array_ext(2);
	if (!ts || !lanes || !wakeups || !window) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; !err && i < json_object_array_length(timeline); i++) {
		entry_decode(json_object_array_get_idx(timeline, i), &ev, &d);
		err = threadstate_add(ts, &d);
		/* A scheduler event without its tids says nothing about any thread: skip it. */
		if (err == -EINVAL) {
			err = 0;
		}
	}
	for (i = 0; !err && i < nr; i++) {
		err = add_lane(lanes, ts, timeline, &threads[i], base, from_ns, to_ns);
		if (!err) {
			err = add_wakeups(wakeups, ts, timeline, threads[i].tid, base, from_ns,
					  to_ns);
		}
	}
	if (err) {
		goto out;
	}
	json_object_array_add(window, json_object_new_int64((int64_t)(from_ns - base)));
	json_object_array_add(window, json_object_new_int64((int64_t)(to_ns - base)));
	json_object_object_add(outlier, "lanes", lanes);
	json_object_object_add(outlier, "wakeups", wakeups);
	json_object_object_add(outlier, "window", window);
	lanes = wakeups = window = NULL;
out:
	json_object_put(lanes);
	json_object_put(wakeups);
	json_object_put(window);
	threadstate_free(ts);
	return err;
}
