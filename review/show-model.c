// SPDX-License-Identifier: GPL-2.0
/*
 * show-model.c - `latsnap show`'s model: a snapshot, its summary and its trace read into an
 * interest per outlier (its window, threads, timeline, unwound stack and frames symbolized again).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "classify/frames.h"
#include "classify/rules.h"
#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/outlier.h"
#include "lib/text.h"
#include "lib/util.h"
#include "review/dwfl-sym.h"
#include "review/flame.h"
#include "review/html.h"
#include "review/lanes.h"
#include "review/show-int.h"
#include "review/snapshots.h"

static void add_tid(struct interest *in, int64_t tid)
{
	size_t i;

	if (tid <= 0 || in->nr_tids == MAX_THREADS) {
		return;
	}
	for (i = 0; i < in->nr_tids; i++) {
		if (in->tids[i] == tid) {
			return;
		}
	}
	in->tids[in->nr_tids++] = tid;
}

/* The build-id of a statedump event (an array of bytes) to the mapping at @base of @pid. */
static void add_build_id(struct show_ctx *sc, int64_t pid, uint64_t base, struct json_object *arr)
{
	size_t i, n = json_object_array_length(arr);
	uint8_t id[64];

	n = n < sizeof(id) ? n : sizeof(id);
	for (i = 0; i < n; i++) {
		id[i] = (uint8_t)json_object_get_int64(json_object_array_get_idx(arr, i));
	}
	dwfl_sym_add_build_id(sc->ds, pid, base, id, n);
}

/* latsnap:bin_info: what a process had mapped, and the build-ids (struct ls_ev_bin_info). */
static int on_bin_info(const struct lsev *ev, void *ctx)
{
	const struct lsev_bin_info *b = &ev->u.bin;
	struct show_ctx *sc = ctx;
	int ret = 0;

	if (!b->has_pid || !b->has_baddr) {
		goto out;
	}
	if (b->path) {
		ret = dwfl_sym_add_mapping(sc->ds, b->pid, b->baddr, b->memsz, b->path);
	}
	if (!ret && b->build_id && json_object_array_length(b->build_id)) {
		add_build_id(sc, b->pid, b->baddr, b->build_id);
	}
out:
	sc->err = ret ? ret : sc->err;
	return ret;
}

/* lttng-ust's statedump of a process that runs lttng-ust: the process's own mappings. */
static int on_statedump(struct show_ctx *sc, const struct ctf_event *ev)
{
	struct json_object *f = ev->fields, *arr, *path;
	uint64_t pid, base, memsz;
	bool has_pid, has_base;
	int ret = 0;

	pid = ctf_field_u64(f, "pid", &has_pid);
	if (!has_pid) {
		pid = ctf_field_u64(f, "vpid", &has_pid);
	}
	base = ctf_field_u64(f, "baddr", &has_base);
	if (!has_pid || !has_base) {
		goto out;
	}
	if (!strcmp(ev->name, "lttng_ust_statedump:bin_info")) {
		memsz = ctf_field_u64(f, "memsz", NULL);
		if (json_object_object_get_ex(f, "path", &path) &&
		    json_object_is_type(path, json_type_string)) {
			ret = dwfl_sym_add_mapping(sc->ds, (int64_t)pid, base, memsz,
						   json_object_get_string(path));
		}
	} else if (!strcmp(ev->name, "lttng_ust_statedump:build_id") &&
		   json_object_object_get_ex(f, "build_id", &arr) &&
		   json_object_is_type(arr, json_type_array)) {
		add_build_id(sc, (int64_t)pid, base, arr);
	}
out:
	sc->err = ret ? ret : sc->err;
	return ret;
}

/* @ev, at its time, as an entry of the timeline of @in, about its thread @tid. */
static struct json_object *timeline_entry(const struct lsev *ev, const struct interest *in,
					  int64_t tid)
{
	struct json_object *e, *fields = json_object_new_object();
	struct json_object_iterator it = json_object_iter_begin(ev->ev->fields);
	struct json_object_iterator end = json_object_iter_end(ev->ev->fields);
	const struct lsev_thread *th = lsev_thread_of(ev, tid);
	const char *name, *comm = NULL;

	/* The context fields are said once per event: tid and comm; keep the payload. */
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		name = json_object_iter_peek_name(&it);
		if (strcmp(name, "vpid") && strcmp(name, "vtid") && strcmp(name, "procname")) {
			json_object_object_add(fields, name,
					       json_object_get(json_object_iter_peek_value(&it)));
		}
	}
	e = json_object_new_object();
	json_object_object_add(e, "ts_ns", json_object_new_int64((int64_t)ev->ts_ns));
	json_object_object_add(e, "rel_ns",
			       json_object_new_int64((int64_t)(ev->ts_ns - in->start_ns)));
	json_object_object_add(e, "name", json_object_new_string(ev->name));
	json_object_object_add(e, "tid", json_object_new_int64(tid));
	/* The thread's own comm when the payload says it; the procname is its process's. */
	if (th && !th->context) {
		comm = th->comm;
	}
	if (!comm && tid == in->tid) {
		comm = in->outlier->comm;
	}
	json_object_object_add(
		e, "comm",
		json_object_new_string(comm ? comm :
					      ctf_field_str(ev->ev->fields, "procname", "?")));
	json_object_object_add(e, "fields", fields);
	return e;
}

/* @ev into the timeline of each outlier whose window holds it and whose threads it is about. */
static int on_timeline_event(const struct lsev *ev, void *ctx)
{
	struct show_ctx *sc = ctx;
	int64_t tids[LSEV_MAX_THREADS];
	size_t i, k, t, nr_tids;
	struct interest *in;

	nr_tids = lsev_threads(ev, tids, LSEV_MAX_THREADS);
	for (i = 0; i < sc->nr && nr_tids; i++) {
		in = &sc->in[i];
		if (ev->ts_ns < in->from_ns || ev->ts_ns > in->to_ns) {
			continue;
		}
		/* k: which thread of interest it is about, the slow one first. */
		for (k = 0; k < in->nr_tids; k++) {
			for (t = 0; t < nr_tids && tids[t] != in->tids[k]; t++) {
			}
			if (t < nr_tids) {
				break;
			}
		}
		if (k == in->nr_tids) {
			continue;
		}
		if (json_object_array_length(in->timeline) >= TIMELINE_MAX) {
			in->truncated = true;
			continue;
		}
		json_object_array_add(in->timeline, timeline_entry(ev, in, in->tids[k]));
	}
	return 0;
}

/*
 * latsnap:user_stack: the preload library's unwound stack, the outlier's when the summary has
 * none; and an event of the timeline.
 */
static int on_user_stack(const struct lsev *ev, void *ctx)
{
	const struct lsev_user_stack *u = &ev->u.ustack;
	struct show_ctx *sc = ctx;
	struct interest *in;
	size_t i;

	for (i = 0; ev->thread.known && u->ips && i < sc->nr; i++) {
		in = &sc->in[i];
		if (in->unwind_seen || in->tid != ev->thread.tid) {
			continue;
		}
		/* latsnap's own record names its outlier; an older trace's has only its time. */
		if (u->has_end_ns ?
			    u->end_ns != in->end_ns :
			    (ev->ts_ns < in->end_ns || ev->ts_ns - in->end_ns > UNWIND_SLACK_NS ||
			     ev->ts_ns >= in->next_start_ns)) {
			continue;
		}
		in->unwind_seen = true;
		in->ips = json_object_get(u->ips);
		if (sc->own_stack_beyond && ev->ts_ns > in->to_ns &&
		    json_object_array_length(in->timeline) < TIMELINE_MAX) {
			json_object_array_add(in->timeline, timeline_entry(ev, in, in->tid));
		}
	}
	return on_timeline_event(ev, ctx);
}

static const struct lsev_handler show_handlers[] = {
	{ LSEV_NAME_BIN_INFO, on_bin_info },
	{ LSEV_NAME_USER_STACK, on_user_stack },
	{ NULL, on_timeline_event },
};

static int on_event(const struct ctf_event *ev, void *ctx)
{
	if (!strncmp(ev->name, STATEDUMP_PROVIDER, strlen(STATEDUMP_PROVIDER))) {
		return on_statedump(ctx, ev);
	}
	return lsev_dispatch(ev, show_handlers, sizeof(show_handlers) / sizeof(*show_handlers),
			     ctx);
}

/* Timeline events by time: the kernel context was recorded after the events around it. */
static int by_ts(const void *a, const void *b)
{
	int64_t x = json_object_get_int64(
		json_object_object_get(*(struct json_object *const *)a, "ts_ns"));
	int64_t y = json_object_get_int64(
		json_object_object_get(*(struct json_object *const *)b, "ts_ns"));

	return x < y ? -1 : x > y;
}

/* Symbolize again the user frames of @frames (innermost first) of process @pid, into @notes. */
static int resymbolize(struct dwfl_sym *ds, struct outlier_frames *frames,
		       struct frame_notes *notes, int64_t pid)
{
	struct dwfl_sym_result res;
	struct outlier_frame *f;
	size_t i;

	notes->v = calloc(frames->nr ? frames->nr : 1, sizeof(*notes->v));
	if (!notes->v) {
		return -ENOMEM;
	}
	notes->nr = frames->nr;
	for (i = 0; i < frames->nr; i++) {
		f = &frames->v[i];
		if (f->interp) {
			/* A Python frame: its code object, named when it was recorded. */
			notes->v[i].file = f->module;
			notes->v[i].line = (int)f->line;
			notes->v[i].symbolized = "python";
			continue;
		}
		if (!f->module || !strcmp(f->module, "kernel")) {
			continue;
		}
		if (dwfl_sym_lookup(ds, pid, f->addr, i > 0, &res)) {
			notes->v[i].symbolized = "recorded";
			continue;
		}
		f->offset = res.offset;
		if (outlier_set_str(&f->symbol, res.symbol) ||
		    (res.module && outlier_set_str(&f->module, res.module))) {
			return -ENOMEM;
		}
		notes->v[i].file = res.file;
		notes->v[i].line = res.line;
		notes->v[i].symbolized = "build-id";
	}
	return 0;
}

/* Symbolize again the user frames of a request's waits and of its sampled stacks. */
static int resymbolize_request(struct dwfl_sym *ds, struct outlier *o)
{
	struct outlier_frames kernel, user;
	struct frame_notes notes = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < o->nr_waits; i++) {
		err = resymbolize(ds, &o->waits[i]->user_stack.frames, &notes, o->pid);
		free(notes.v);
		notes.v = NULL;
	}
	for (i = 0; !err && i < o->nr_cpu_profile; i++) {
		frames_split_sample(&o->cpu_profile[i].frames, &kernel, &user);
		err = resymbolize(ds, &user, &notes, o->pid);
		free(notes.v);
		notes.v = NULL;
	}
	return err;
}

/*
 * The summary has no unwound stack, the trace has its event (the recorder missed it): use it.
 * Its frames get their symbols from resymbolize().
 */
static int take_unwound(struct outlier *o, struct json_object *ips)
{
	struct outlier_ustack *u = &o->user_stack;
	size_t i, n = json_object_array_length(ips);
	int ret;

	if (u->source == OUTLIER_USTACK_UNWIND) {
		return 0;
	}
	outlier_frames_free(&u->frames);
	*u = (struct outlier_ustack){ .source = OUTLIER_USTACK_UNWIND };
	ret = outlier_frames_alloc(&u->frames, n);
	for (i = 0; !ret && i < n; i++) {
		ret = outlier_frame_set(
			&u->frames.v[i],
			(uint64_t)json_object_get_int64(json_object_array_get_idx(ips, i)), NULL, 0,
			"?");
	}
	if (!ret) {
		ret = outlier_add_flag(o,
				       "unwound-from-trace: the summary had no unwound stack; "
				       "this one is the latsnap:user_stack event the trace holds "
				       "for the outlier");
	}
	return ret;
}

/* The snapshot at @path into @snap: 0, or 1 after saying why it cannot be shown. */
int show_load_snapshot(const char *path, struct snapshot *snap)
{
	char hostname[256] = "";

	if (access(path, F_OK)) {
		ls_err("show: %s: %s", path, strerror(errno));
		return 1;
	}
	if (snapshot_load(path, snap)) {
		ls_err("show: %s: %s", path, strerror(ENOMEM));
		return 1;
	}
	if (snap->state == SNAPSHOT_INCOMPLETE && !snap->relay &&
	    (!snap->trace || access(snap->trace, F_OK))) {
		/* Neither summary.json nor trace/: an output directory, or nothing of ours. */
		ls_err("show: %s: not a snapshot (no summary.json, no trace/ in it): show takes "
		       "one snapshot, DIR/ID",
		       snap->path);
		return 1;
	}
	if (snap->state != SNAPSHOT_COMPLETE) {
		ls_err("show: %s", snap->why);
		return 1;
	}
	/* The outliers are shown all the same: a warning, not a corrupt summary. */
	if (snap->summary->outliers_why) {
		ls_err("show: warning: %s", snap->summary->outliers_why);
	}
	if (snap->summary->idle_why) {
		ls_err("show: warning: %s", snap->summary->idle_why);
	}
	if (!gethostname(hostname, sizeof(hostname) - 1) && strcmp(snap->summary->host, hostname)) {
		ls_err("show: warning: %s%s: recorded on host %s, this is %s: user "
		       "frames are symbolized only from files whose build-id is the recorded one",
		       snap->path, snap->relay ? "" : "/summary.json", snap->summary->host,
		       hostname);
	}
	return 0;
}

/* One interest per outlier of @s: its window, its threads (its own first), no events yet. */
int show_init_interests(struct show_ctx *sc, const struct summary *s, const struct show_opts *opts)
{
	const struct outlier *o;
	struct interest *in;
	uint64_t start, end;
	size_t i, j;

	sc->ds = dwfl_sym_new(opts->debug_dir);
	sc->in = calloc(s->nr_outliers ? s->nr_outliers : 1, sizeof(*sc->in));
	if (!sc->ds || !sc->in) {
		return -ENOMEM;
	}
	sc->nr = s->nr_outliers;
	sc->own_stack_beyond = !opts->after_given;
	for (i = 0; i < sc->nr; i++) {
		o = s->outliers[i];
		in = &sc->in[i];
		start = o->start_ns;
		end = o->end_ns;
		in->outlier = s->outliers[i];
		in->start_ns = start;
		in->from_ns = start > opts->before ? start - opts->before : 0;
		in->to_ns = end + opts->after < end ? UINT64_MAX : end + opts->after;
		in->end_ns = end;
		in->tid = o->tid;
		in->next_start_ns = UINT64_MAX;
		for (j = 0; j < sc->nr; j++) {
			if (s->outliers[j]->tid == o->tid && s->outliers[j]->start_ns > start &&
			    s->outliers[j]->start_ns < in->next_start_ns) {
				in->next_start_ns = s->outliers[j]->start_ns;
			}
		}
		in->timeline = json_object_new_array();
		if (!in->timeline) {
			return -ENOMEM;
		}
		add_tid(in, o->tid);
		if (o->waker) {
			add_tid(in, o->waker->tid);
		}
		for (j = 0; j < o->nr_links; j++) {
			add_tid(in, o->wait_chain[j].tid);
		}
		if (o->holder) {
			add_tid(in, o->holder->tid);
		}
	}
	return 0;
}

/* The trace of @snap, read once: 0, or 1 when it cannot be (the summary is still shown). */
int show_read_trace(struct show_ctx *sc, const struct snapshot *snap)
{
	size_t i;
	int err;

	/* ctf_read() prints "latsnap: ctf: DIR: why" itself. */
	err = ctf_read(snap->trace, NULL, on_event, sc);
	if (err) {
		if (err == sc->err) {
			ls_err("show: %s: %s", snap->trace, strerror(-err));
		}
		return 1;
	}
	sc->have_trace = true;
	for (i = 0; i < sc->nr; i++) {
		json_object_array_sort(sc->in[i].timeline, by_ts);
	}
	return 0;
}

/*
 * What the trace says of each outlier: its unwound stack when the summary has none, its user
 * frames symbolized again, and what the trace lacks (then *@status is 1: the trace is not the
 * one the recorder read). Return: 0 or -ENOMEM.
 */
int show_settle_outliers(struct show_ctx *sc, const struct snapshot *snap, int *status)
{
	struct interest *in;
	struct outlier *o;
	size_t i, j;
	int err = 0;

	for (i = 0; i < sc->nr && !err; i++) {
		in = &sc->in[i];
		o = in->outlier;
		if (in->ips) {
			err = take_unwound(o, in->ips);
		}
		err = err ?: resymbolize(sc->ds, &o->user_stack.frames, &in->user, o->pid);
		in->links = err ? NULL : calloc(o->nr_links ? o->nr_links : 1, sizeof(*in->links));
		err = err ?: in->links ? 0 : -ENOMEM;
		for (j = 0; !err && j < o->nr_links; j++) {
			err = resymbolize(sc->ds, &o->wait_chain[j].frames, &in->links[j],
					  o->wait_chain[j].pid);
		}
		if (!err && o->holder) {
			err = resymbolize(sc->ds, &o->holder->frames, &in->holder, o->holder->pid);
		}
		if (!err && o->kind == OUTLIER_REQUEST) {
			err = resymbolize_request(sc->ds, o);
		}
		/*
		 * The recorder found the unwound stack's event in this very trace: without it the
		 * trace is not the one it read (a stream file lost or replaced since). A stack that
		 * reached latsnap only through the kernel (a process not yet registered with the
		 * session daemon) has no event to look for.
		 */
		if (!err && sc->have_trace && !in->unwind_seen &&
		    o->user_stack.source == OUTLIER_USTACK_UNWIND && o->user_stack.in_trace) {
			ls_err("show: %s: the latsnap:user_stack event of tid %" PRId32
			       " that the summary's stack came from is not in the trace "
			       "(a stream missing?)",
			       snap->trace, o->tid);
			*status = 1;
		}
		if (!err && sc->have_trace && !dwfl_sym_nr_mappings(sc->ds, o->pid)) {
			err = outlier_add_flag(o, "no-statedump: the trace holds no mappings of "
						  "this process: user frames as recorded");
		}
	}
	return err;
}

void show_interests_free(struct show_ctx *sc)
{
	size_t i, j;

	for (i = 0; i < sc->nr; i++) {
		json_object_put(sc->in[i].timeline);
		json_object_put(sc->in[i].ips);
		free(sc->in[i].user.v);
		free(sc->in[i].holder.v);
		for (j = 0; sc->in[i].links && j < sc->in[i].outlier->nr_links; j++) {
			free(sc->in[i].links[j].v);
		}
		free(sc->in[i].links);
	}
	free(sc->in);
	dwfl_sym_free(sc->ds);
}
