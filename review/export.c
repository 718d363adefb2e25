// SPDX-License-Identifier: GPL-2.0
/*
 * export.c - `latsnap export --perfetto FILE DIR[/ID]`
 *
 * A snapshot's trace (or every complete snapshot of a directory, on one time axis) in the Chrome
 * JSON trace event format, the object form, which the Perfetto UI, trace_processor and
 * chrome://tracing open:
 *  - per thread, its syscalls as complete slices ("ph":"X", category "syscall"), its other
 *    events (forks, exits, block requests, an application's own) as instants;
 *  - per thread of the recording, what it did (on-cpu, blocked, runqueue, from review/threadstate)
 *    as slices on a track of its own, next to the thread's (see STATE_TID_BASE);
 *  - each wakeup by a thread as a flow arrow from the waker to the wakee where it next got the
 *    CPU;
 *  - each outlier of the summaries as a slice "OUTLIER: read 151.572 ms" with its split and
 *    cause, and a global instant at its end that marks it across every track;
 *  - the threads' and processes' names.
 * Everything is built with json-c: comms and event fields are the traced programs' text, kept
 * exact but for what is not UTF-8, which ls_json_text() writes as U+FFFD.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "lib/array.h"
#include "lib/duration.h"
#include "lib/options.h"
#include "lib/outlier.h"
#include "lib/text.h"
#include "lib/util.h"
#include "review/export.h"
#include "review/snapshots.h"
#include "review/threadstate.h"

/*
 * A thread's state slices go on a pseudo-thread of its process with this added to its tid, not
 * on the thread's own track: state changes happen inside syscalls, so a state slice and a
 * syscall slice overlap partially, and the slices of one Chrome JSON thread track must nest.
 * Above PID_MAX_LIMIT (2^22), so no real tid is taken; below 2^31, as trace_processor reads
 * pids and tids as 32-bit numbers.
 */
#define STATE_TID_BASE (1LL << 30)
/*
 * A flow's end must lie in a slice of its thread; where none is (the waker's write was too
 * short to be traced), a "wakeup" or "woken" slice this wide marks the point.
 */
#define MARK_NS 1000ULL

/* The options, in --help's order: getopt_long()'s tables and --help are made from them. */
static const struct ls_option export_options[] = {
	{ "perfetto", 'p', required_argument, 0, NULL, "FILE",
	  "write the trace to FILE ('-': stdout)" },
	{ "help", 'h', no_argument, 0, NULL, NULL, "this help" },
};

#define NR_EXPORT_OPTIONS (sizeof(export_options) / sizeof(export_options[0]))

static const char export_usage_head[] =
	"Usage: latsnap export --perfetto FILE DIR[/ID]\n"
	"\n"
	"A snapshot's events for other tools: the Chrome JSON trace event format, which the\n"
	"Perfetto UI (ui.perfetto.dev), trace_processor and chrome://tracing open. Per thread its\n"
	"syscalls and other events, and on a track of its own what it did (on-cpu, blocked,\n"
	"runqueue); wakeups as flow arrows from waker to wakee; each outlier as a marked slice.\n"
	"DIR/ID is one snapshot; DIR is every complete snapshot in it on one time axis, each event\n"
	"once. Times are CLOCK_MONOTONIC, in microseconds with nanosecond digits.\n"
	"\n";

static void export_help(void)
{
	fputs(export_usage_head, stdout);
	ls_options_usage(stdout, export_options, NR_EXPORT_OPTIONS, 23);
}

/* The statedump says nothing about a thread's time. */
#define STATEDUMP_PROVIDER "lttng_ust_statedump:"

/* One event of a trace, kept until the end: @fields is a reference. */
struct ev {
	char *name;
	uint64_t ts;
	int64_t tid; /* the thread it is about, for its order */
	struct json_object *fields;
};

/* A stretch of a thread's own track taken by a slice (a syscall, an outlier). */
struct stretch {
	uint64_t from, to;
};

/* A flow endpoint that needs a marker slice: @woken, the wakee's end. */
struct mark {
	uint64_t ts;
	bool woken;
};

struct thread {
	int64_t tid, pid;
	char *comm;
	bool subject; /* recorded for itself, not only met in another's switch: has states */
	uint64_t born, died; /* its fork and exit, when in the trace (else 0 and UINT64_MAX) */
	struct stretch *slices;
	size_t nr_slices, cap_slices;
	struct mark *marks;
	size_t nr_marks, cap_marks;
};

struct export_ctx {
	struct ev *evs;
	size_t nr_evs, cap_evs;
	struct thread *threads;
	size_t nr_threads, cap_threads;
	size_t *hash; /* open addressing on tid: index + 1 into @threads, 0 free */
	size_t hash_size;
	/* The times the snapshots' kernel events cover, disjoint, in order. */
	struct stretch *wins;
	size_t nr_wins, cap_wins;
	uint64_t first, last; /* of the snapshot being read */
	bool seen;
	struct threadstate *ts;
	struct json_object *events; /* traceEvents */
	uint64_t flow_id;
};

/*
 * @ns as a JSON number of microseconds with the nanoseconds as its three decimals: written as
 * formatted, so no digit is lost to a double's rounding.
 */
static struct json_object *us(uint64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return json_object_new_double_s((double)ns / 1000.0, text);
}

/* The thread @tid, NULL when there is none yet. */
static struct thread *find_thread(const struct export_ctx *x, int64_t tid)
{
	size_t i, h;

	if (!x->hash_size) {
		return NULL;
	}
	for (h = (size_t)tid * 2654435761U;; h++) {
		i = x->hash[h & (x->hash_size - 1)];
		if (!i) {
			return NULL;
		}
		if (x->threads[i - 1].tid == tid) {
			return &x->threads[i - 1];
		}
	}
}

static void hash_put(struct export_ctx *x, size_t idx)
{
	size_t h;

	for (h = (size_t)x->threads[idx].tid * 2654435761U; x->hash[h & (x->hash_size - 1)]; h++) {
	}
	x->hash[h & (x->hash_size - 1)] = idx + 1;
}

/* The thread @tid, made when new: NULL when out of memory. */
static struct thread *get_thread(struct export_ctx *x, int64_t tid)
{
	struct thread *t = find_thread(x, tid);
	size_t i, size;

	if (t) {
		return t;
	}
	/* Half full at most, so that probing stays short. */
	if (2 * (x->nr_threads + 1) > x->hash_size) {
		size = x->hash_size ? 2 * x->hash_size : 256;
		free(x->hash);
		x->hash = calloc(size, sizeof(*x->hash));
		if (!x->hash) {
			x->hash_size = 0;
			return NULL;
		}
		x->hash_size = size;
		for (i = 0; i < x->nr_threads; i++) {
			hash_put(x, i);
		}
	}
	if (array_reserve((void **)&x->threads, &x->cap_threads, x->nr_threads + 1,
			  sizeof(*x->threads))) {
		return NULL;
	}
	t = &x->threads[x->nr_threads];
	*t = (struct thread){ .tid = tid, .died = UINT64_MAX };
	hash_put(x, x->nr_threads++);
	return t;
}

/*
 * What an event says of thread @tid: its process, its name (the latest wins: events come in
 * time order, and exec or prctl rename a thread). NULL for the idle task (tid 0), which is no
 * thread of anybody's, and when out of memory (then *@err is -ENOMEM).
 */
static struct thread *note(struct export_ctx *x, int64_t tid, int64_t pid, const char *comm,
			   int *err)
{
	struct thread *t;
	char *copy;

	if (tid <= 0) {
		return NULL;
	}
	t = get_thread(x, tid);
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	if (pid > 0) {
		t->pid = pid;
	}
	if (comm && *comm && (!t->comm || strcmp(t->comm, comm))) {
		copy = strdup(comm);
		if (!copy) {
			*err = -ENOMEM;
			return NULL;
		}
		free(t->comm);
		t->comm = copy;
	}
	return t;
}

/* The thread @th an event names, when it does (see note()). */
static struct thread *note_thread(struct export_ctx *x, const struct lsev_thread *th, int *err)
{
	if (!th->known) {
		return NULL;
	}
	return note(x, th->tid, th->pid, th->comm, err);
}

static int add_slice(struct thread *t, uint64_t from, uint64_t to)
{
	if (array_reserve((void **)&t->slices, &t->cap_slices, t->nr_slices + 1,
			  sizeof(*t->slices))) {
		return -ENOMEM;
	}
	t->slices[t->nr_slices++] = (struct stretch){ from, to };
	return 0;
}

/* Events that say nothing about a thread's time: the statedump, latsnap's own records. */
static bool skipped(const struct lsev *ev)
{
	switch (ev->kind) {
	case LSEV_BIN_INFO:
	case LSEV_OUTLIER:
	case LSEV_KERNEL_STACK:
	case LSEV_USER_STACK:
	case LSEV_SUMMARY:
		return true;
	default:
		return !strncmp(ev->name, STATEDUMP_PROVIDER, strlen(STATEDUMP_PROVIDER));
	}
}

/* Each event of interest of a trace, kept in @ctx (struct export_ctx) with its true time. */
static int on_event(const struct ctf_event *ev, void *ctx)
{
	struct export_ctx *x = ctx;
	struct lsev d;
	struct ev *e;

	lsev_decode(ev, &d);
	/* One of latsnap's events from another process (lsevents.h): not the snapshot's. */
	if (d.forged || skipped(&d)) {
		return 0;
	}
	/* The snapshot's window: the times its kernel context covers. */
	if (!strncmp(ev->name, LSEV_KERNEL_PROVIDER, strlen(LSEV_KERNEL_PROVIDER))) {
		x->first = x->seen && x->first < d.ts_ns ? x->first : d.ts_ns;
		x->last = x->seen && x->last > d.ts_ns ? x->last : d.ts_ns;
		x->seen = true;
	}
	if (array_reserve((void **)&x->evs, &x->cap_evs, x->nr_evs + 1, sizeof(*x->evs))) {
		return -ENOMEM;
	}
	e = &x->evs[x->nr_evs];
	*e = (struct ev){ .ts = d.ts_ns, .name = strdup(ev->name), .tid = d.thread.tid };
	if (!e->name) {
		return -ENOMEM;
	}
	e->fields = json_object_get(ev->fields);
	x->nr_evs++;
	return 0;
}

/* The window of the snapshot just read into the disjoint, ordered windows of @x. */
static int add_window(struct export_ctx *x)
{
	struct stretch w = { x->first, x->last };
	size_t i, j;

	if (!x->seen) {
		return 0;
	}
	x->seen = false;
	if (array_reserve((void **)&x->wins, &x->cap_wins, x->nr_wins + 1, sizeof(*x->wins))) {
		return -ENOMEM;
	}
	for (i = 0; i < x->nr_wins && x->wins[i].from <= w.from; i++) {
	}
	memmove(&x->wins[i + 1], &x->wins[i], (x->nr_wins - i) * sizeof(*x->wins));
	x->wins[i] = w;
	x->nr_wins++;
	/* Snapshots of one run overlap: overlapping windows are one. */
	for (i = 0, j = 1; j < x->nr_wins; j++) {
		if (x->wins[j].from <= x->wins[i].to) {
			x->wins[i].to = x->wins[j].to > x->wins[i].to ? x->wins[j].to :
									x->wins[i].to;
		} else {
			x->wins[++i] = x->wins[j];
		}
	}
	x->nr_wins = i + 1;
	return 0;
}

static int by_time_name_tid(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	int c;

	if (x->ts != y->ts) {
		return x->ts < y->ts ? -1 : 1;
	}
	c = strcmp(x->name, y->name);
	if (c) {
		return c;
	}
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Events in time order, each once: snapshots of one run hold the same events. */
static void sort_events(struct export_ctx *x)
{
	size_t i, n = 0;

	ls_sort(x->evs, x->nr_evs, sizeof(*x->evs), by_time_name_tid);
	for (i = 0; i < x->nr_evs; i++) {
		if (n && !by_time_name_tid(&x->evs[n - 1], &x->evs[i])) {
			free(x->evs[i].name);
			json_object_put(x->evs[i].fields);
			continue;
		}
		x->evs[n++] = x->evs[i];
	}
	x->nr_evs = n;
}

/* A new trace event of phase @ph, @name, category @cat, at @ts on thread @tid of @pid. */
static struct json_object *chrome_event(const char *ph, const char *name, const char *cat,
					uint64_t ts, int64_t pid, int64_t tid)
{
	struct json_object *e = json_object_new_object();

	if (!e) {
		return NULL;
	}
	json_object_object_add(e, "ph", json_object_new_string(ph));
	json_object_object_add(e, "name", json_object_new_string(name));
	if (cat) {
		json_object_object_add(e, "cat", json_object_new_string(cat));
	}
	json_object_object_add(e, "ts", us(ts));
	json_object_object_add(e, "pid", json_object_new_int64(pid));
	json_object_object_add(e, "tid", json_object_new_int64(tid));
	return e;
}

/* @e into traceEvents, @args (a reference, may be NULL) its args, @dur its duration for "X". */
static int emit(struct export_ctx *x, struct json_object *e, struct json_object *args, uint64_t dur,
		bool has_dur)
{
	if (!e) {
		json_object_put(args);
		return -ENOMEM;
	}
	if (has_dur) {
		json_object_object_add(e, "dur", us(dur));
	}
	if (args) {
		json_object_object_add(e, "args", args);
	}
	if (json_object_array_add(x->events, e)) {
		json_object_put(e);
		return -ENOMEM;
	}
	return 0;
}

static int64_t pid_of(const struct thread *t)
{
	return t->pid > 0 ? t->pid : t->tid;
}

/* A syscall event as a complete slice on its thread. */
static int emit_syscall(struct export_ctx *x, const struct lsev *ev, struct thread *t)
{
	const struct lsev_syscall *sc = &ev->u.syscall;
	struct json_object *args = json_object_new_object();

	if (!args || add_slice(t, sc->start_ns, sc->start_ns + sc->duration_ns)) {
		json_object_put(args);
		return -ENOMEM;
	}
	json_object_object_add(args, "nr", json_object_new_int64(sc->nr));
	json_object_object_add(args, "ret", json_object_new_int64(sc->ret));
	json_object_object_add(args, "duration_ns",
			       json_object_new_int64((int64_t)sc->duration_ns));
	return emit(x,
		    chrome_event("X", *sc->name ? sc->name : "syscall", "syscall", sc->start_ns,
				 pid_of(t), t->tid),
		    args, sc->duration_ns, true);
}

/* Any other event as an instant on its thread, its payload as args. */
static int emit_instant(struct export_ctx *x, const struct lsev *ev, const struct thread *t)
{
	struct json_object *args = json_object_new_object(), *e2;

	if (!args) {
		return -ENOMEM;
	}
	json_object_object_foreach(ev->ev->fields, key, val)
	{
		if (strcmp(key, "vpid") && strcmp(key, "vtid") && strcmp(key, "procname")) {
			json_object_object_add(args, key, json_object_get(val));
		}
	}
	e2 = chrome_event("i", ev->name, "event", ev->ts_ns, pid_of(t), t->tid);
	if (e2) {
		json_object_object_add(e2, "s", json_object_new_string("t"));
	}
	return emit(x, e2, args, 0, false);
}

/* A switch names both its threads. */
static int walk_switch(const struct lsev *ev, void *ctx)
{
	int err = 0;

	note_thread(ctx, &ev->thread, &err);
	note_thread(ctx, &ev->other, &err);
	return err;
}

/* A wakeup names the woken thread (one of the recording: it has states) and its waker. */
static int walk_wakeup(const struct lsev *ev, void *ctx)
{
	struct thread *t;
	int err = 0;

	t = note_thread(ctx, &ev->thread, &err);
	if (t) {
		t->subject = true;
	}
	note_thread(ctx, &ev->other, &err);
	return err;
}

static int walk_syscall(const struct lsev *ev, void *ctx)
{
	struct thread *t;
	int err = 0;

	t = note_thread(ctx, &ev->thread, &err);
	if (!t) {
		return err;
	}
	t->subject = true;
	return err ?: emit_syscall(ctx, ev, t);
}

/* process_fork, process_exec, process_exit: an instant, and the thread's birth or death. */
static int walk_task(const struct lsev *ev, void *ctx)
{
	struct export_ctx *x = ctx;
	struct thread *t, *o;
	int err = 0;
	int64_t tid;

	t = note_thread(x, &ev->thread, &err);
	if (!t) {
		return err;
	}
	t->subject = true;
	if (ev->kind == LSEV_PROCESS_EXIT) {
		t->died = ev->ts_ns;
	}
	if (ev->kind == LSEV_PROCESS_FORK) {
		tid = t->tid;
		o = note_thread(x, &ev->other, &err);
		if (o) {
			o->subject = true;
			o->born = ev->ts_ns;
		}
		/* A new thread may have moved them all: @t again. */
		t = find_thread(x, tid);
	}
	return err ?: emit_instant(x, ev, t);
}

/* Any other event (an application's too) as an instant on the thread it is about. */
static int walk_other(const struct lsev *ev, void *ctx)
{
	struct thread *t;
	int err = 0;

	t = note_thread(ctx, &ev->thread, &err);
	if (!t) {
		return err;
	}
	return err ?: emit_instant(ctx, ev, t);
}

static const struct lsev_handler walk_handlers[] = {
	{ LSEV_NAME_SCHED_SWITCH, walk_switch },
	{ LSEV_NAME_SCHED_WAKEUP, walk_wakeup },
	{ LSEV_NAME_SYSCALL, walk_syscall },
	{ LSEV_NAME_PROCESS_FORK, walk_task },
	{ LSEV_NAME_PROCESS_EXEC, walk_task },
	{ LSEV_NAME_PROCESS_EXIT, walk_task },
	{ NULL, walk_other },
};

/*
 * Every event in time order: the threads and their names, the thread states, the syscall
 * slices and the other events' instants.
 */
static int walk_events(struct export_ctx *x)
{
	struct ctf_event ev;
	struct lsev d;
	int err = 0;
	size_t i;

	for (i = 0; i < x->nr_evs && !err; i++) {
		ev = (struct ctf_event){ .name = x->evs[i].name,
					 .ts_ns = x->evs[i].ts,
					 .fields = x->evs[i].fields };
		lsev_decode(&ev, &d);
		err = threadstate_add(x->ts, &d);
		if (err == -EINVAL) {
			/* A scheduler event without its thread: it cannot say anyone's state. */
			err = 0;
		}
		err = err   ?:
			      lsev_handle(&d, walk_handlers,
					  sizeof(walk_handlers) / sizeof(*walk_handlers), x);
	}
	return err;
}

/* Each outlier as a marked slice on its thread, and a global instant at its end. */
static int emit_outliers(struct export_ctx *x, const struct snapshot_wait *waits, size_t nr)
{
	struct json_object *args, *flags, *ev;
	char name[256], dur[LS_DURATION_BUFSZ];
	const struct outlier *o;
	struct thread *t;
	size_t i, j;
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		o = waits[i].o;
		t = note(x, o->tid, o->pid, NULL, &err);
		if (!t) {
			continue;
		}
		t->subject = true;
		if (!t->comm) {
			note(x, o->tid, o->pid, o->comm, &err);
		}
		err = err ?: add_slice(t, o->start_ns, o->end_ns);
		if (err) {
			break;
		}
		ls_format_duration(o->duration_ns, dur, sizeof(dur));
		snprintf(name, sizeof(name), "OUTLIER: %s %s",
			 o->syscall ? o->syscall : outlier_kind_name(o->kind), dur);
		args = json_object_new_object();
		flags = json_object_new_array();
		for (j = 0; flags && j < o->nr_flags; j++) {
			json_object_array_add(flags, json_object_new_string(o->flags[j]));
		}
		if (!args || !flags) {
			json_object_put(args);
			json_object_put(flags);
			return -ENOMEM;
		}
		json_object_object_add(args, "cause",
				       json_object_new_string(o->cause ? o->cause : ""));
		json_object_object_add(args, "flags", flags);
		json_object_object_add(args, "kind",
				       json_object_new_string(outlier_kind_name(o->kind)));
		json_object_object_add(args, "duration_ns",
				       json_object_new_int64((int64_t)o->duration_ns));
		json_object_object_add(args, "on_cpu_ns",
				       json_object_new_int64((int64_t)o->on_cpu_ns));
		json_object_object_add(args, "blocked_ns",
				       json_object_new_int64((int64_t)o->blocked_ns));
		json_object_object_add(args, "runqueue_ns",
				       json_object_new_int64((int64_t)o->runqueue_ns));
		json_object_object_add(args, "snapshot",
				       waits[i].snap ? json_object_new_string(waits[i].snap->id) :
						       NULL);
		err = emit(x, chrome_event("X", name, "outlier", o->start_ns, pid_of(t), t->tid),
			   args, o->end_ns - o->start_ns, true);
		if (err) {
			break;
		}
		ev = chrome_event("i", name, "outlier", o->end_ns, pid_of(t), t->tid);
		args = json_object_new_object();
		if (ev) {
			json_object_object_add(ev, "s", json_object_new_string("g"));
		}
		if (args) {
			json_object_object_add(args, "cause",
					       json_object_new_string(o->cause ? o->cause : ""));
		}
		err = emit(x, ev, args, 0, false);
	}
	return err;
}

/* Does a slice of @t's own track hold @ts (its start included, its end not)? */
static bool in_slice(const struct thread *t, uint64_t ts)
{
	size_t i;

	for (i = 0; i < t->nr_slices; i++) {
		if (t->slices[i].from <= ts && ts < t->slices[i].to) {
			return true;
		}
	}
	return false;
}

/* A flow event @ph of flow @id on @t at @ts; a marker for it later when no slice holds it. */
static int emit_flow(struct export_ctx *x, struct thread *t, const char *ph, uint64_t id,
		     uint64_t ts)
{
	struct json_object *e = chrome_event(ph, "wakeup", "wakeup", ts, pid_of(t), t->tid);

	if (!e) {
		return -ENOMEM;
	}
	json_object_object_add(e, "id", json_object_new_int64((int64_t)id));
	if (*ph == 'f') {
		/* Bound to the slice it lies in, not to the next one to begin. */
		json_object_object_add(e, "bp", json_object_new_string("e"));
	}
	if (!in_slice(t, ts)) {
		if (array_reserve((void **)&t->marks, &t->cap_marks, t->nr_marks + 1,
				  sizeof(*t->marks))) {
			json_object_put(e);
			return -ENOMEM;
		}
		t->marks[t->nr_marks++] = (struct mark){ ts, *ph == 'f' };
	}
	return emit(x, e, NULL, 0, false);
}

/*
 * The wakeups of @t in [@from, @to] as flows from their waker to where @t next got the CPU (the
 * first on-cpu span of @spans from the wakeup on). A wakeup in an interrupt is not the
 * interrupted thread's doing, and the idle task is nobody's: no arrow for those.
 */
static int emit_wakeups(struct export_ctx *x, int64_t tid, uint64_t from, uint64_t to,
			const struct threadstate_span *spans, size_t nr)
{
	struct threadstate_wakeup *w = NULL;
	struct thread *waker, *t;
	size_t i, k = 0, nr_w = 0;
	uint64_t in;
	int err;

	err = threadstate_wakeups(x->ts, tid, from, to, &w, &nr_w);
	for (i = 0; !err && i < nr_w; i++) {
		waker = find_thread(x, w[i].waker_tid);
		if (w[i].in_irq || w[i].waker_tid <= 0 || w[i].waker_tid == tid || !waker) {
			continue;
		}
		for (; k < nr &&
		       (spans[k].state != THREADSTATE_ON_CPU || spans[k].from_ns < w[i].ts_ns);
		     k++) {
		}
		in = k < nr ? spans[k].from_ns : w[i].ts_ns;
		x->flow_id++;
		err = emit_flow(x, waker, "s", x->flow_id, w[i].ts_ns);
		t = find_thread(x, tid);
		err = err ?: emit_flow(x, t, "f", x->flow_id, in);
	}
	free(w);
	return err;
}

/*
 * The state slices of subject thread @idx on its state track (*@any: there is one), and the flows
 * of its wakeups.
 */
static int emit_states(struct export_ctx *x, size_t idx, bool *any)
{
	struct threadstate_span *spans = NULL;
	uint64_t from, to;
	size_t i, j, nr = 0;
	struct thread *t;
	int64_t tid;
	int err = 0;

	for (i = 0; i < x->nr_wins && !err; i++) {
		t = &x->threads[idx];
		tid = t->tid;
		from = x->wins[i].from > t->born ? x->wins[i].from : t->born;
		to = x->wins[i].to < t->died ? x->wins[i].to : t->died;
		if (to <= from) {
			continue;
		}
		err = threadstate_spans(x->ts, tid, from, to, &spans, &nr);
		for (j = 0; !err && j < nr; j++) {
			if (spans[j].state == THREADSTATE_UNKNOWN) {
				continue;
			}
			err = emit(x,
				   chrome_event("X", threadstate_name(spans[j].state), "sched",
						spans[j].from_ns, pid_of(t), STATE_TID_BASE + tid),
				   NULL, spans[j].to_ns - spans[j].from_ns, true);
			*any = true;
		}
		err = err ?: emit_wakeups(x, tid, from, to, spans, nr);
		free(spans);
		spans = NULL;
	}
	return err;
}

static int by_mark_ts(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * A slice around the flow points of @t that no slice holds, so that each flow end lies in one:
 * points closer than MARK_NS share one. It never crosses a slice of the thread: it stops where
 * the one before ends and where the one after begins (none holds a point, so none straddles).
 */
static int emit_marks(struct export_ctx *x, struct thread *t)
{
	uint64_t lo, hi, first, last;
	size_t i, j, k;
	int err = 0;

	ls_sort(t->marks, t->nr_marks, sizeof(*t->marks), by_mark_ts);
	for (i = 0; i < t->nr_marks && !err; i = j) {
		for (j = i + 1; j < t->nr_marks && t->marks[j].ts - t->marks[j - 1].ts < MARK_NS;
		     j++) {
		}
		first = t->marks[i].ts;
		last = t->marks[j - 1].ts;
		lo = first > MARK_NS / 2 ? first - MARK_NS / 2 : 0;
		hi = last + MARK_NS / 2;
		for (k = 0; k < t->nr_slices; k++) {
			if (t->slices[k].to <= first && t->slices[k].to > lo) {
				lo = t->slices[k].to;
			}
			if (t->slices[k].from > last && t->slices[k].from < hi) {
				hi = t->slices[k].from;
			}
		}
		err = emit(x,
			   chrome_event("X", t->marks[i].woken ? "woken" : "wakeup", "wakeup", lo,
					pid_of(t), t->tid),
			   NULL, hi - lo, true);
	}
	return err;
}

/* A metadata event @what ("thread_name", ...) of @pid, @tid: args {@key: @value}. */
static int emit_meta(struct export_ctx *x, const char *what, int64_t pid, int64_t tid,
		     const char *key, struct json_object *value)
{
	struct json_object *e = json_object_new_object(), *args = json_object_new_object();

	if (!e || !args) {
		json_object_put(e);
		json_object_put(args);
		json_object_put(value);
		return -ENOMEM;
	}
	json_object_object_add(e, "ph", json_object_new_string("M"));
	json_object_object_add(e, "name", json_object_new_string(what));
	json_object_object_add(e, "pid", json_object_new_int64(pid));
	json_object_object_add(e, "tid", json_object_new_int64(tid));
	json_object_object_add(args, key, value);
	return emit(x, e, args, 0, false);
}

/* Is a thread before the @i-th one of process @pid? */
static bool pid_seen_before(const struct export_ctx *x, int64_t pid, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++) {
		if (pid_of(&x->threads[j]) == pid) {
			return true;
		}
	}
	return false;
}

/* The names of every thread (and of the state track of each subject), and of every process. */
static int emit_names(struct export_ctx *x, const bool *has_states)
{
	const struct thread *t, *p;
	char name[96];
	size_t i;
	int err = 0;

	for (i = 0; i < x->nr_threads && !err; i++) {
		t = &x->threads[i];
		snprintf(name, sizeof(name), "%s %" PRId64 " state", t->comm ? t->comm : "?",
			 t->tid);
		err = emit_meta(x, "thread_name", pid_of(t), t->tid, "name",
				json_object_new_string(t->comm ? t->comm : "?"));
		/* Each thread's state track right below the thread. */
		err = err   ?:
			      emit_meta(x, "thread_sort_index", pid_of(t), t->tid, "sort_index",
					json_object_new_int64(2 * (int64_t)i));
		if (!err && has_states[i]) {
			err = emit_meta(x, "thread_name", pid_of(t), STATE_TID_BASE + t->tid,
					"name", json_object_new_string(name));
			err = err   ?:
				      emit_meta(x, "thread_sort_index", pid_of(t),
						STATE_TID_BASE + t->tid, "sort_index",
						json_object_new_int64(2 * (int64_t)i + 1));
		}
		/* A process once, named after its main thread (else its first thread seen). */
		p = find_thread(x, pid_of(t));
		if (!err &&
		    (p == t || (!p && pid_of(t) != t->tid && !pid_seen_before(x, pid_of(t), i)))) {
			err = emit_meta(x, "process_name", pid_of(t), pid_of(t), "name",
					json_object_new_string(t->comm ? t->comm : "?"));
		}
	}
	return err;
}

/* The options: SNAPSHOTS_GO_ON with *@file and *@path set, or the exit status to stop with. */
static int parse_options(int argc, char **argv, const char **file, const char **path)
{
	struct option longopts[NR_EXPORT_OPTIONS + 1];
	char shortopts[sizeof("+:") + 2 * NR_EXPORT_OPTIONS];
	int id;

	optind = 0;
	opterr = 0;
	ls_options_getopt(export_options, NR_EXPORT_OPTIONS, "+:", longopts, shortopts);
	while ((id = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (id) {
		case 'p':
			*file = optarg;
			break;
		case 'h':
			export_help();
			return 0;
		default:
			snapshots_option_error("export", id, optopt, argv, optind);
			return 2;
		}
	}
	if (optind != argc - 1) {
		ls_err("export: %s (see latsnap export --help)",
		       optind == argc ? "DIR or DIR/ID missing" : "one DIR or DIR/ID only");
		return 2;
	}
	if (!*file || !**file) {
		ls_err("export: --perfetto FILE missing: the only format there is (see latsnap "
		       "export --help)");
		return 2;
	}
	*path = argv[optind];
	return SNAPSHOTS_GO_ON;
}

/*
 * The events of the complete snapshots of @set into @x; the others are named on stderr. Return:
 * 0, 1 when a trace could not be read (ctf_read() said why; the others are still exported), or
 * a negative errno.
 */
static int read_snapshots(struct export_ctx *x, const struct snapshot_set *set, size_t *complete)
{
	int ret = 0, err;
	size_t i;

	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
			ls_err("export: %s: %s", snapshots_state_name(set->snaps[i].state),
			       set->snaps[i].why);
			continue;
		}
		(*complete)++;
		/* ctf_read() prints "latsnap: ctf: DIR: why" itself. */
		err = ctf_read(set->snaps[i].trace, NULL, on_event, x);
		if (err == -ENOMEM) {
			return err;
		}
		if (err) {
			ret = 1;
		}
		/* What was read of a broken trace is still on the time axis. */
		err = add_window(x);
		if (err) {
			return err;
		}
	}
	return ret;
}

/* traceEvents of @x's events and of the waits of @set. */
static int build(struct export_ctx *x, const struct snapshot_set *set)
{
	struct snapshot_wait *waits = NULL;
	bool *has_states = NULL;
	size_t i, nr = 0;
	int err;

	sort_events(x);
	err = walk_events(x);
	err = err ?: snapshots_waits(set, &waits, &nr);
	err = err ?: emit_outliers(x, waits, nr);
	if (err) {
		goto out;
	}
	has_states = calloc(x->nr_threads + 1, sizeof(*has_states));
	if (!has_states) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < x->nr_threads && !err; i++) {
		if (x->threads[i].subject) {
			err = emit_states(x, i, &has_states[i]);
		}
	}
	for (i = 0; i < x->nr_threads && !err; i++) {
		err = emit_marks(x, &x->threads[i]);
	}
	err = err ?: emit_names(x, has_states);
out:
	free(has_states);
	free(waits);
	return err;
}

/* The whole document: traceEvents and what it is of. */
static struct json_object *document(struct export_ctx *x, const struct snapshot_set *set)
{
	struct json_object *doc = json_object_new_object(), *meta = json_object_new_object();
	struct json_object *ids = json_object_new_array();
	size_t i;

	if (!doc || !meta || !ids) {
		json_object_put(doc);
		json_object_put(meta);
		json_object_put(ids);
		return NULL;
	}
	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state == SNAPSHOT_COMPLETE) {
			json_object_array_add(ids, json_object_new_string(set->snaps[i].id));
		}
	}
	json_object_object_add(meta, "producer",
			       json_object_new_string("latsnap " LATSNAP_VERSION));
	json_object_object_add(meta, "source", json_object_new_string(set->dir));
	json_object_object_add(meta, "snapshots", ids);
	json_object_object_add(meta, "clock", json_object_new_string("CLOCK_MONOTONIC"));
	json_object_object_add(doc, "traceEvents", json_object_get(x->events));
	json_object_object_add(doc, "displayTimeUnit", json_object_new_string("ns"));
	json_object_object_add(doc, "metadata", meta);
	return doc;
}

/* @doc into @file ('-': stdout): 0, or 1 after saying what failed. */
static int write_doc(struct json_object *doc, const char *file)
{
	char *text = ls_json_text(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	bool std = !strcmp(file, "-");
	FILE *out = stdout;
	int fd, ret = 1;

	if (!text) {
		ls_err("export: %s", strerror(ENOMEM));
		goto out;
	}
	if (!std) {
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		out = fd < 0 ? NULL : fdopen(fd, "we");
		if (!out) {
			ls_err("export: %s: %s", file, strerror(errno));
			if (fd >= 0) {
				close(fd);
			}
			goto out;
		}
	}
	ret = 0;
	if (fputs(text, out) == EOF || fputc('\n', out) == EOF || fflush(out) == EOF ||
	    ferror(out)) {
		ls_err("export: %s: %s", std ? "writing to stdout" : file, strerror(errno));
		ret = 1;
	}
	if (!std && fclose(out) && !ret) {
		ls_err("export: %s: %s", file, strerror(errno));
		ret = 1;
	}
out:
	free(text);
	return ret;
}

static void ctx_free(struct export_ctx *x)
{
	size_t i;

	for (i = 0; i < x->nr_evs; i++) {
		free(x->evs[i].name);
		json_object_put(x->evs[i].fields);
	}
	for (i = 0; i < x->nr_threads; i++) {
		free(x->threads[i].comm);
		free(x->threads[i].slices);
		free(x->threads[i].marks);
	}
	free(x->evs);
	free(x->threads);
	free(x->hash);
	free(x->wins);
	threadstate_free(x->ts);
	json_object_put(x->events);
}

/**
 * export_main() - `latsnap export`
 * @argc: argument count, the command name included
 * @argv: "export", options, DIR or DIR/ID
 *
 * Return: the exit status: 0; 1 when DIR cannot be read, holds no complete snapshot, a trace
 * cannot be read (what could be is still written), or FILE cannot be written; 2 on a usage
 * error.
 */
int export_main(int argc, char **argv)
{
	const char *file = NULL, *path = NULL;
	struct snapshot_set set = { 0 };
	struct export_ctx x = { 0 };
	struct json_object *doc = NULL;
	size_t complete = 0;
	int ret, err;

	ret = parse_options(argc, argv, &file, &path);
	if (ret != SNAPSHOTS_GO_ON) {
		goto out;
	}
	ret = 1;
	if (access(path, F_OK)) {
		ls_err("export: %s: %s", path, strerror(errno));
		goto out;
	}
	if (snapshots_load(path, &set)) {
		goto out;
	}
	x.ts = threadstate_new();
	x.events = json_object_new_array();
	if (!x.ts || !x.events) {
		err = -ENOMEM;
		goto fail;
	}
	err = read_snapshots(&x, &set, &complete);
	if (err < 0) {
		goto fail;
	}
	if (!complete) {
		ls_err("export: %s: %s", set.dir,
		       set.nr ? "no complete snapshot in it" : "no snapshot in it");
		goto out;
	}
	ret = err;
	err = build(&x, &set);
	doc = err ? NULL : document(&x, &set);
	if (!doc) {
		err = err ?: -ENOMEM;
		goto fail;
	}
	ret = write_doc(doc, file) ?: ret;
	goto out;
fail:
	ls_err("export: %s", strerror(-err));
	ret = 1;
out:
	json_object_put(doc);
	ctx_free(&x);
	snapshots_free(&set);
	return ret;
}
