// SPDX-License-Identifier: GPL-2.0
/*
 * outlier-json.c - struct outlier to summary.json's OUTLIER and back: written as the contract
 * (tests/schemas/summary.schema.json) has it, read with every member checked and a refusal that
 * says where.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "lib/outlier.h"

/* --- to JSON ------------------------------------------------------------------------------- */

/* A member that is a count of nanoseconds: its key, and where the struct holds it. */
struct time_member {
	const char *key;
	size_t offset;
};

/*
 * OUTLIER's times, and a LINK's, in the order written and read: each key is spelled here only.
 * Every summary has OUTLIER's (lib/summary.c requires them, through outlier_time_key()): a time
 * added later, which older summaries lack, is written and read on its own.
 */
static const struct time_member outlier_times[] = {
	{ "start_ns", offsetof(struct outlier, start_ns) },
	{ "end_ns", offsetof(struct outlier, end_ns) },
	{ "duration_ns", offsetof(struct outlier, duration_ns) },
	{ "on_cpu_ns", offsetof(struct outlier, on_cpu_ns) },
	{ "blocked_ns", offsetof(struct outlier, blocked_ns) },
	{ "runqueue_ns", offsetof(struct outlier, runqueue_ns) },
	{ NULL, 0 },
};

static const struct time_member link_times[] = {
	{ "from_ns", offsetof(struct outlier_link, from_ns) },
	{ "to_ns", offsetof(struct outlier_link, to_ns) },
	{ "on_cpu_ns", offsetof(struct outlier_link, on_cpu_ns) },
	{ "blocked_ns", offsetof(struct outlier_link, blocked_ns) },
	{ "runqueue_ns", offsetof(struct outlier_link, runqueue_ns) },
	{ NULL, 0 },
};

/**
 * outlier_time_key() - the key of OUTLIER's time @i, in the order written ("start_ns", ...,
 *			"runqueue_ns"); NULL past the last
 */
const char *outlier_time_key(size_t i)
{
	return i < sizeof(outlier_times) / sizeof(outlier_times[0]) ? outlier_times[i].key : NULL;
}

/* Unsigned values travel as the int64 of their bits, as everywhere in latsnap's JSON. */
static struct json_object *json_u64(uint64_t value)
{
	return json_object_new_int64((int64_t)value);
}

static struct json_object *json_str(const char *text)
{
	return text ? json_object_new_string(text) : NULL;
}

/* The times @t of the struct at @from into @obj. */
static void times_to_json(struct json_object *obj, const void *from, const struct time_member *t)
{
	const uint64_t *value;

	for (; t->key; t++) {
		value = (const uint64_t *)((const char *)from + t->offset);
		json_object_object_add(obj, t->key, json_u64(*value));
	}
}

/**
 * outlier_frames_to_json() - [FRAME, ...] of @frames; NULL without memory
 */
struct json_object *outlier_frames_to_json(const struct outlier_frames *frames)
{
	struct json_object *arr = json_object_new_array_ext((int)frames->nr), *f;
	char hex[24];
	size_t i;

	for (i = 0; arr && i < frames->nr; i++) {
		const struct outlier_frame *fr = &frames->v[i];

		f = json_object_new_object();
		snprintf(hex, sizeof(hex), "0x%" PRIx64, fr->addr);
		if (!f || json_object_array_add(arr, f)) {
			json_object_put(f);
			goto fail;
		}
		json_object_object_add(f, "addr", json_object_new_string(hex));
		json_object_object_add(f, "symbol", json_str(fr->symbol));
		json_object_object_add(f, "offset", json_u64(fr->offset));
		json_object_object_add(f, "module", json_str(fr->module));
		if (fr->file && !fr->interp) {
			json_object_object_add(f, "file", json_str(fr->file));
		}
		if (fr->interp || fr->file) {
			json_object_object_add(f, "line", json_u64(fr->line));
		}
	}
	return arr;
fail:
	json_object_put(arr);
	return NULL;
}

static struct json_object *user_stack_to_json(const struct outlier_ustack *u)
{
	struct json_object *obj = json_object_new_object();

	if (!obj) {
		return NULL;
	}
	json_object_object_add(obj, "source",
			       json_object_new_string(outlier_ustack_source_name(u->source)));
	if (u->unwound) {
		json_object_object_add(obj, "unwind_ns", json_u64(u->unwind_ns));
		json_object_object_add(obj, "status", json_object_new_int(u->status));
	}
	json_object_object_add(obj, "frames", outlier_frames_to_json(&u->frames));
	if (u->truncated) {
		json_object_object_add(obj, "truncated", json_object_new_boolean(1));
	}
	if (u->in_trace) {
		json_object_object_add(obj, "in_trace", json_object_new_boolean(1));
	}
	return obj;
}

static struct json_object *kstacks_to_json(const struct outlier_kstack *stacks, size_t nr)
{
	struct json_object *arr, *st;
	size_t i;

	arr = json_object_new_array_ext((int)nr);
	for (i = 0; arr && i < nr; i++) {
		st = json_object_new_object();
		json_object_object_add(st, "weight_ns", json_u64(stacks[i].weight_ns));
		json_object_object_add(st, "frames", outlier_frames_to_json(&stacks[i].frames));
		json_object_array_add(arr, st);
	}
	return arr;
}

/* A keyed request's "key", "others" and "upstream" (null when unknown). */
static void request_key_to_json(const struct outlier_request *q, struct json_object *r)
{
	struct json_object *up = NULL;

	json_object_object_add(r, "key", json_object_new_string(q->key));
	json_object_object_add(r, "others", json_object_new_int64(q->others));
	if (q->upstream_tid) {
		up = json_object_new_object();
		json_object_object_add(up, "pid", json_object_new_int(q->upstream_pid));
		json_object_object_add(up, "tid", json_object_new_int(q->upstream_tid));
		json_object_object_add(up, "comm",
				       json_object_new_string(q->upstream_comm ? q->upstream_comm :
										 ""));
		json_object_object_add(up, "at_ns", json_object_new_uint64(q->upstream_ns));
	}
	json_object_object_add(r, "upstream", up);
}

/* A request's own members: "request", its "waits" (OUTLIERs) and its "cpu_profile". */
static void request_to_json(const struct outlier *o, struct json_object *obj)
{
	struct json_object *r = NULL, *arr;
	size_t i;

	if (o->request) {
		r = json_object_new_object();
		json_object_object_add(
			r, "probe",
			json_object_new_string(o->request->probe ? o->request->probe : ""));
		json_object_object_add(
			r, "arg", o->request->arg ? json_object_new_string(o->request->arg) : NULL);
		if (o->request->key) {
			request_key_to_json(o->request, r);
		}
	}
	json_object_object_add(obj, "request", r);
	arr = json_object_new_array_ext((int)o->nr_waits);
	for (i = 0; arr && i < o->nr_waits; i++) {
		json_object_array_add(arr, outlier_to_json(o->waits[i]));
	}
	json_object_object_add(obj, "waits", arr);
	json_object_object_add(obj, "cpu_profile",
			       kstacks_to_json(o->cpu_profile, o->nr_cpu_profile));
}

static struct json_object *holder_to_json(const struct outlier_holder *h)
{
	struct json_object *obj;

	if (!h) {
		return NULL;
	}
	obj = json_object_new_object();
	json_object_object_add(obj, "pid", json_object_new_int(h->pid));
	json_object_object_add(obj, "tid", json_object_new_int(h->tid));
	json_object_object_add(obj, "comm", json_object_new_string(h->comm ? h->comm : ""));
	json_object_object_add(obj, "what", h->what ? json_object_new_string(h->what) : NULL);
	json_object_object_add(obj, "state", h->state ? json_object_new_string(h->state) : NULL);
	json_object_object_add(obj, "frames", outlier_frames_to_json(&h->frames));
	json_object_object_add(obj, "kernel_frames", outlier_frames_to_json(&h->kernel_frames));
	return obj;
}

static struct json_object *link_to_json(const struct outlier_link *l)
{
	struct json_object *obj = json_object_new_object();

	if (!obj) {
		return NULL;
	}
	json_object_object_add(obj, "depth", json_object_new_int((int)l->depth));
	json_object_object_add(obj, "pid", json_object_new_int(l->pid));
	json_object_object_add(obj, "tid", json_object_new_int(l->tid));
	json_object_object_add(obj, "comm", json_object_new_string(l->comm ? l->comm : ""));
	times_to_json(obj, l, link_times);
	if (l->unknown_ns) {
		json_object_object_add(obj, "unknown_ns", json_u64(l->unknown_ns));
	}
	json_object_object_add(obj, "syscall", json_str(l->syscall));
	json_object_object_add(obj, "frames", outlier_frames_to_json(&l->frames));
	return obj;
}

/**
 * outlier_to_json() - the contract's OUTLIER object of @o (with latsnap's additions: the user
 *                     stack's unwind_ns, status and in_trace, and "signalled")
 *
 * Return: a new object, or NULL without memory.
 */
/* "deadlock": null, or {"threads": [{"pid", "tid", "comm"}, ...]} in the cycle's order. */
static struct json_object *deadlock_to_json(const struct outlier_deadlock *d)
{
	struct json_object *obj, *arr, *t;
	size_t i;

	if (!d) {
		return NULL;
	}
	obj = json_object_new_object();
	arr = json_object_new_array_ext((int)d->nr);
	for (i = 0; arr && i < d->nr; i++) {
		t = json_object_new_object();
		json_object_object_add(t, "pid", json_object_new_int(d->threads[i].pid));
		json_object_object_add(t, "tid", json_object_new_int(d->threads[i].tid));
		json_object_object_add(t, "comm", json_str(d->threads[i].comm));
		json_object_array_add(arr, t);
	}
	json_object_object_add(obj, "threads", arr);
	return obj;
}

struct json_object *outlier_to_json(const struct outlier *o)
{
	struct json_object *obj = json_object_new_object(), *arr, *w = NULL;
	size_t i;

	if (!obj) {
		return NULL;
	}
	json_object_object_add(obj, "kind", json_object_new_string(outlier_kind_name(o->kind)));
	json_object_object_add(obj, "pid", json_object_new_int(o->pid));
	json_object_object_add(obj, "tid", json_object_new_int(o->tid));
	json_object_object_add(obj, "comm", json_object_new_string(o->comm ? o->comm : ""));
	json_object_object_add(obj, "syscall", json_str(o->syscall));
	json_object_object_add(obj, "syscall_nr",
			       o->syscall ? json_object_new_int(o->syscall_nr) : NULL);
	times_to_json(obj, o, outlier_times);
	json_object_object_add(obj, "switches", json_object_new_int((int)o->switches));
	if (o->has_args) {
		arr = json_object_new_array_ext(6);
		for (i = 0; arr && i < 6; i++) {
			json_object_array_add(arr, json_u64(o->args[i]));
		}
		json_object_object_add(obj, "args", arr);
	}
	json_object_object_add(obj, "cause", json_object_new_string(o->cause ? o->cause : ""));

	json_object_object_add(obj, "kernel_stacks",
			       kstacks_to_json(o->kernel_stacks, o->nr_kernel_stacks));
	json_object_object_add(obj, "user_stack", user_stack_to_json(&o->user_stack));
	if (o->waker) {
		w = json_object_new_object();
		json_object_object_add(w, "pid", json_object_new_int(o->waker->pid));
		json_object_object_add(w, "tid", json_object_new_int(o->waker->tid));
		json_object_object_add(
			w, "comm", json_object_new_string(o->waker->comm ? o->waker->comm : ""));
		json_object_object_add(w, "frames", outlier_frames_to_json(&o->waker->frames));
	}
	json_object_object_add(obj, "waker", w);
	json_object_object_add(obj, "holder", holder_to_json(o->holder));
	if (o->kind == OUTLIER_REQUEST) {
		request_to_json(o, obj);
	}
	arr = json_object_new_array_ext((int)o->nr_links);
	for (i = 0; arr && i < o->nr_links; i++) {
		json_object_array_add(arr, link_to_json(&o->wait_chain[i]));
	}
	json_object_object_add(obj, "wait_chain", arr);
	json_object_object_add(obj, "signalled", json_object_new_boolean(o->signalled));
	json_object_object_add(obj, "state", json_object_new_string(outlier_state_name(o->state)));
	json_object_object_add(obj, "deadlock", deadlock_to_json(o->deadlock));
	arr = json_object_new_array_ext((int)o->nr_flags);
	for (i = 0; arr && i < o->nr_flags; i++) {
		json_object_array_add(arr, json_object_new_string(o->flags[i]));
	}
	json_object_object_add(obj, "flags", arr);
	return obj;
}

/* --- from JSON ----------------------------------------------------------------------------- */

/*
 * The readers below take an OUTLIER the summary reader (lib/summary.c) has checked against the
 * contract: a member of the wrong type is refused, a missing one is left at its zero. A refusal
 * is the one check of a member's type: it says which member, where ("outlier 3: wait_chain link
 * 0"), in the words of the summary's error message.
 */
struct reader {
	char where[160];
	char *why; /* NULL: nobody asked, or the first refusal is said already */
	size_t len;
};

static int refuse(struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* -EINVAL, after "WHERE: what" in the reader's message when it is the first refusal. */
static int refuse(struct reader *rd, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (rd->why) {
		n = snprintf(rd->why, rd->len, "%s: ", rd->where);
		va_start(ap, fmt);
		if (n >= 0 && (size_t)n < rd->len) {
			vsnprintf(rd->why + n, rd->len - (size_t)n, fmt, ap);
		}
		va_end(ap);
		rd->why = NULL;
	}
	return -EINVAL;
}

static const char *type_name(json_type type)
{
	switch (type) {
	case json_type_int:
		return "an integer";
	case json_type_boolean:
		return "a boolean";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	default:
		return "a string";
	}
}

/* Go into a part of the outlier ("user_stack"): returns where to come back to with leave(). */
static size_t enter(struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static size_t enter(struct reader *rd, const char *fmt, ...)
{
	size_t at = strlen(rd->where);
	va_list ap;

	if (at + 2 < sizeof(rd->where)) {
		memcpy(rd->where + at, ": ", 3);
		va_start(ap, fmt);
		vsnprintf(rd->where + at + 2, sizeof(rd->where) - at - 2, fmt, ap);
		va_end(ap);
	}
	return at;
}

static void leave(struct reader *rd, size_t at)
{
	rd->where[at] = '\0';
}

static struct json_object *get_typed(struct reader *rd, struct json_object *obj, const char *key,
				     json_type type, int *err)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !v) {
		return NULL;
	}
	if (!json_object_is_type(v, type)) {
		*err = refuse(rd, "%s is not %s", key, type_name(type));
		return NULL;
	}
	return v;
}

static int get_u64(struct reader *rd, struct json_object *obj, const char *key, uint64_t *out)
{
	struct json_object *v;
	int ret = 0;

	v = get_typed(rd, obj, key, json_type_int, &ret);
	if (v) {
		*out = (uint64_t)json_object_get_int64(v);
	}
	return ret;
}

static int get_i32(struct reader *rd, struct json_object *obj, const char *key, int32_t *out)
{
	uint64_t v = 0;
	int ret = get_u64(rd, obj, key, &v);

	*out = (int32_t)v;
	return ret;
}

static int get_str(struct reader *rd, struct json_object *obj, const char *key, char **out)
{
	struct json_object *v;
	int ret = 0;

	v = get_typed(rd, obj, key, json_type_string, &ret);
	return ret ?: v ? outlier_set_str(out, json_object_get_string(v)) : 0;
}

/* The times @t of @obj into the struct at @to. */
static int times_from_json(struct reader *rd, struct json_object *obj, void *to,
			   const struct time_member *t)
{
	int ret = 0;

	for (; !ret && t->key; t++) {
		ret = get_u64(rd, obj, t->key, (uint64_t *)((char *)to + t->offset));
	}
	return ret;
}

static bool get_bool(struct reader *rd, struct json_object *obj, const char *key, int *err)
{
	struct json_object *v = *err ? NULL : get_typed(rd, obj, key, json_type_boolean, err);

	return v && json_object_get_boolean(v);
}

/* Element @i of @arr, which must be an object ("LABEL I is not an object"). */
static struct json_object *get_elem(struct reader *rd, struct json_object *arr, size_t i,
				    const char *label, int *err)
{
	struct json_object *v = json_object_array_get_idx(arr, i);

	if (!json_object_is_type(v, json_type_object)) {
		*err = refuse(rd, "%s %zu is not an object", label, i);
		return NULL;
	}
	return v;
}

/*
 * An interpreter's frame has "line", a count (0: unknown); so has a native frame with a "file"
 * (its source line); other frames have none.
 */
static int frame_line_from_json(struct reader *rd, struct json_object *f, struct outlier_frame *fr)
{
	struct json_object *v;
	int64_t line;
	int ret = 0;

	v = get_typed(rd, f, "line", json_type_int, &ret);
	if (ret || (!v && !json_object_object_get_ex(f, "line", NULL))) {
		return ret;
	}
	/* A null line is refused too. */
	line = v ? json_object_get_int64(v) : -1;
	if (line < 0 || line > UINT32_MAX) {
		return refuse(rd, "line is not a count");
	}
	fr->interp = !fr->file;
	fr->line = (uint32_t)line;
	return 0;
}

/* [FRAME, ...] (NULL: none) into the empty @frames. */
static int frames_from_json(struct reader *rd, struct json_object *arr,
			    struct outlier_frames *frames)
{
	struct json_object *f, *addr;
	struct outlier_frame *fr;
	size_t i, n;
	int ret = 0;

	if (!arr) {
		return 0;
	}
	if (!json_object_is_type(arr, json_type_array)) {
		return refuse(rd, "frames is not an array");
	}
	n = json_object_array_length(arr);
	ret = outlier_frames_alloc(frames, n);
	for (i = 0; !ret && i < n; i++) {
		fr = &frames->v[i];
		f = get_elem(rd, arr, i, "frame", &ret);
		addr = f ? get_typed(rd, f, "addr", json_type_string, &ret) : NULL;
		if (addr) {
			fr->addr = strtoull(json_object_get_string(addr), NULL, 16);
		}
		ret = ret ?: get_str(rd, f, "symbol", &fr->symbol);
		ret = ret ?: get_u64(rd, f, "offset", &fr->offset);
		ret = ret ?: get_str(rd, f, "module", &fr->module);
		ret = ret ?: get_str(rd, f, "file", &fr->file);
		ret = ret ?: frame_line_from_json(rd, f, fr);
	}
	return ret;
}

static int user_stack_from_json(struct reader *rd, struct json_object *obj,
				struct outlier_ustack *u)
{
	struct json_object *v;
	uint64_t status = 0;
	size_t s, back;
	int ret = 0;

	if (!obj) {
		return 0;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		return refuse(rd, "user_stack is not an object");
	}
	back = enter(rd, "user_stack");
	v = get_typed(rd, obj, "source", json_type_string, &ret);
	for (s = 0; v && s <= OUTLIER_USTACK_UNWIND; s++) {
		if (!strcmp(json_object_get_string(v),
			    outlier_ustack_source_name((enum outlier_ustack_source)s))) {
			u->source = (enum outlier_ustack_source)s;
		}
	}
	u->unwound = json_object_object_get_ex(obj, "unwind_ns", NULL);
	ret = ret ?: get_u64(rd, obj, "unwind_ns", &u->unwind_ns);
	ret = ret ?: get_u64(rd, obj, "status", &status);
	u->status = (int)status;
	u->truncated = get_bool(rd, obj, "truncated", &ret);
	u->in_trace = get_bool(rd, obj, "in_trace", &ret);
	ret = ret ?: frames_from_json(rd, json_object_object_get(obj, "frames"), &u->frames);
	leave(rd, back);
	return ret;
}

static int waker_from_json(struct reader *rd, struct json_object *obj, struct outlier_waker **wp)
{
	struct outlier_waker *w;
	size_t back;
	int ret;

	if (!obj) {
		return 0;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		return refuse(rd, "waker is neither null nor a thread with frames");
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		return -ENOMEM;
	}
	*wp = w;
	back = enter(rd, "waker");
	ret = get_i32(rd, obj, "pid", &w->pid);
	ret = ret ?: get_i32(rd, obj, "tid", &w->tid);
	ret = ret ?: get_str(rd, obj, "comm", &w->comm);
	ret = ret ?: frames_from_json(rd, json_object_object_get(obj, "frames"), &w->frames);
	leave(rd, back);
	return ret;
}

/* A holder's stack @key: "outlier 3: holder's frames: ..." when it is refused. */
static int holder_frames(struct reader *rd, struct json_object *obj, const char *key,
			 struct outlier_frames *frames)
{
	size_t back = enter(rd, "holder's %s", key);
	int ret = frames_from_json(rd, json_object_object_get(obj, key), frames);

	leave(rd, back);
	return ret;
}

static int holder_from_json(struct reader *rd, struct json_object *obj, struct outlier_holder **hp)
{
	struct outlier_holder *h;
	size_t back;
	int ret;

	if (!obj) {
		return 0;
	}
	if (!json_object_is_type(obj, json_type_object)) {
		return refuse(rd, "holder is neither null nor an object");
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		return -ENOMEM;
	}
	*hp = h;
	back = enter(rd, "holder");
	ret = get_i32(rd, obj, "pid", &h->pid);
	ret = ret ?: get_i32(rd, obj, "tid", &h->tid);
	ret = ret ?: get_str(rd, obj, "comm", &h->comm);
	ret = ret ?: get_str(rd, obj, "what", &h->what);
	ret = ret ?: get_str(rd, obj, "state", &h->state);
	leave(rd, back);
	ret = ret ?: holder_frames(rd, obj, "frames", &h->frames);
	return ret ?: holder_frames(rd, obj, "kernel_frames", &h->kernel_frames);
}

/* Weighted stacks ("kernel_stacks", "cpu_profile": @label), each made by @add; @arr may be NULL. */
static int kstacks_from_json(struct reader *rd, struct json_object *arr, const char *label,
			     struct outlier *o,
			     struct outlier_kstack *(*add)(struct outlier *o, uint64_t weight_ns))
{
	size_t i, n = arr ? json_object_array_length(arr) : 0, back;
	struct outlier_kstack *st;
	struct json_object *v;
	int ret = 0;

	for (i = 0; !ret && i < n; i++) {
		v = get_elem(rd, arr, i, label, &ret);
		if (!v) {
			break;
		}
		back = enter(rd, "%s %zu", label, i);
		st = add(o, 0);
		ret = st ? get_u64(rd, v, "weight_ns", &st->weight_ns) : -ENOMEM;
		ret = ret ?: frames_from_json(rd, json_object_object_get(v, "frames"), &st->frames);
		leave(rd, back);
	}
	return ret;
}

static int read_outlier(struct reader *rd, struct json_object *obj, struct outlier **outp);

/* A keyed request's "key", "others" and "upstream", where there are. */
static int request_key_from_json(struct reader *rd, struct json_object *r,
				 struct outlier_request *q)
{
	struct json_object *up;
	uint64_t others = 0;
	int ret;

	ret = get_str(rd, r, "key", &q->key);
	ret = ret ?: get_u64(rd, r, "others", &others);
	q->others = (unsigned int)others;
	up = ret ? NULL : get_typed(rd, r, "upstream", json_type_object, &ret);
	if (up) {
		ret = get_i32(rd, up, "pid", &q->upstream_pid);
		ret = ret ?: get_i32(rd, up, "tid", &q->upstream_tid);
		ret = ret ?: get_u64(rd, up, "at_ns", &q->upstream_ns);
		ret = ret ?: get_str(rd, up, "comm", &q->upstream_comm);
	}
	return ret;
}

/* A request's "request", "waits" and "cpu_profile", where there are. */
static int request_from_json(struct reader *rd, struct json_object *obj, struct outlier *o)
{
	struct json_object *r, *arr;
	char *probe = NULL, *arg = NULL;
	struct outlier *wait;
	size_t i, n, back;
	int ret = 0;

	r = get_typed(rd, obj, "request", json_type_object, &ret);
	if (r) {
		back = enter(rd, "request");
		ret = get_str(rd, r, "probe", &probe);
		ret = ret ?: get_str(rd, r, "arg", &arg);
		if (!ret && !outlier_set_request(o, probe ? probe : "", arg)) {
			ret = -ENOMEM;
		}
		ret = ret ?: request_key_from_json(rd, r, o->request);
		free(probe);
		free(arg);
		leave(rd, back);
	}
	arr = ret ? NULL : get_typed(rd, obj, "waits", json_type_array, &ret);
	n = arr ? json_object_array_length(arr) : 0;
	for (i = 0; !ret && i < n; i++) {
		back = enter(rd, "wait %zu", i);
		ret = read_outlier(rd, json_object_array_get_idx(arr, i), &wait);
		ret = ret ?: outlier_add_wait(o, wait);
		leave(rd, back);
	}
	arr = ret ? NULL : get_typed(rd, obj, "cpu_profile", json_type_array, &ret);
	return ret ?: kstacks_from_json(rd, arr, "cpu_profile stack", o, outlier_add_profile);
}

static int link_from_json(struct reader *rd, struct json_object *obj, struct outlier_link *l)
{
	uint64_t depth = 0;
	int ret;

	ret = get_u64(rd, obj, "depth", &depth);
	l->depth = (unsigned int)depth;
	ret = ret ?: get_i32(rd, obj, "pid", &l->pid);
	ret = ret ?: get_i32(rd, obj, "tid", &l->tid);
	ret = ret ?: get_str(rd, obj, "comm", &l->comm);
	ret = ret ?: times_from_json(rd, obj, l, link_times);
	ret = ret ?: get_u64(rd, obj, "unknown_ns", &l->unknown_ns);
	ret = ret ?: get_str(rd, obj, "syscall", &l->syscall);
	return ret ?: frames_from_json(rd, json_object_object_get(obj, "frames"), &l->frames);
}

static int chain_from_json(struct reader *rd, struct json_object *obj, struct outlier *o)
{
	struct json_object *arr, *v;
	struct outlier_link *l;
	size_t i, n, back;
	int ret = 0;

	arr = get_typed(rd, obj, "wait_chain", json_type_array, &ret);
	n = arr ? json_object_array_length(arr) : 0;
	for (i = 0; !ret && i < n; i++) {
		v = get_elem(rd, arr, i, "wait_chain link", &ret);
		l = v ? outlier_add_link(o) : NULL;
		if (v && !l) {
			ret = -ENOMEM;
		}
		if (l) {
			back = enter(rd, "wait_chain link %zu", i);
			ret = link_from_json(rd, v, l);
			leave(rd, back);
		}
	}
	return ret;
}

static int lists_from_json(struct reader *rd, struct json_object *obj, struct outlier *o)
{
	struct json_object *arr, *v;
	size_t i, n;
	int ret = 0;

	arr = get_typed(rd, obj, "kernel_stacks", json_type_array, &ret);
	ret = ret ?: kstacks_from_json(rd, arr, "kernel stack", o, outlier_add_kstack);
	ret = ret ?: chain_from_json(rd, obj, o);
	arr = ret ? NULL : get_typed(rd, obj, "flags", json_type_array, &ret);
	n = arr ? json_object_array_length(arr) : 0;
	for (i = 0; !ret && i < n; i++) {
		v = json_object_array_get_idx(arr, i);
		ret = json_object_is_type(v, json_type_string) ?
			      outlier_add_flag(o, "%s", json_object_get_string(v)) :
			      refuse(rd, "flag %zu is not a string", i);
	}
	return ret;
}

/* "args": absent or null in summaries older than it, else six numbers. */
static int args_from_json(struct reader *rd, struct json_object *arr, struct outlier *o)
{
	struct json_object *v;
	size_t i;

	if (!arr) {
		return 0;
	}
	if (!json_object_is_type(arr, json_type_array) || json_object_array_length(arr) != 6) {
		return refuse(rd, "args is not six integers");
	}
	for (i = 0; i < 6; i++) {
		v = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(v, json_type_int)) {
			return refuse(rd, "args is not six integers");
		}
		o->args[i] = (uint64_t)json_object_get_int64(v);
	}
	o->has_args = true;
	return 0;
}

/* A flag named @name ("name" or "name: why"), as the recorder writes them. */
static bool has_named_flag(const struct outlier *o, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < o->nr_flags; i++) {
		if (!strncmp(o->flags[i], name, len) &&
		    (!o->flags[i][len] || o->flags[i][len] == ':')) {
			return true;
		}
	}
	return false;
}

/* "deadlock"'s threads into @o: absent or null, or {"threads": [{"pid", "tid", "comm"}, ...]}. */
static int deadlock_from_json(struct reader *rd, struct json_object *obj, struct outlier *o)
{
	struct outlier_deadlock_thread *t = NULL;
	struct json_object *arr = NULL, *e;
	size_t i, n, back;
	int ret = 0;

	if (!json_object_is_type(obj, json_type_object) ||
	    (json_object_object_get_ex(obj, "threads", &arr) && arr &&
	     !json_object_is_type(arr, json_type_array))) {
		return refuse(rd, "deadlock is neither null nor {\"threads\": [...]}");
	}
	n = arr ? json_object_array_length(arr) : 0;
	t = calloc(n ? n : 1, sizeof(*t));
	if (!t) {
		return -ENOMEM;
	}
	for (i = 0; !ret && i < n; i++) {
		e = get_elem(rd, arr, i, "deadlock thread", &ret);
		if (!e) {
			break;
		}
		back = enter(rd, "deadlock thread %zu", i);
		ret = get_i32(rd, e, "pid", &t[i].pid);
		ret = ret ?: get_i32(rd, e, "tid", &t[i].tid);
		ret = ret ?: get_str(rd, e, "comm", &t[i].comm);
		leave(rd, back);
	}
	ret = ret ?: outlier_set_deadlock(o, t, n);
	for (i = 0; i < n; i++) {
		free(t[i].comm);
	}
	free(t);
	return ret;
}

/* "state": one of outlier_state_name()'s. */
static int state_name_from_json(struct reader *rd, struct json_object *v, struct outlier *o)
{
	const char *name = json_object_get_string(v);

	for (o->state = OUTLIER_ENDED; o->state <= OUTLIER_UNFINISHED; o->state++) {
		if (!strcmp(name, outlier_state_name(o->state))) {
			return 0;
		}
	}
	return refuse(rd, "state is not ended, still-blocked or unfinished");
}

/*
 * "state" and "deadlock". A summary written before them (no "state") said the same in prose:
 * the flags "still-blocked: ..." and "unfinished: ...", and a cause beginning "Deadlock". Such
 * summaries are version 1 too (SUMMARY_VERSION did not change: fields are only added), and some
 * are kept (fuzz/corpus/summary/), so the prose is still read when "state" is absent.
 */
static int state_from_json(struct reader *rd, struct json_object *obj, struct outlier *o)
{
	struct json_object *state, *deadlock;
	int ret = 0;

	state = get_typed(rd, obj, "state", json_type_string, &ret);
	if (state) {
		ret = state_name_from_json(rd, state, o);
	} else if (!ret) {
		o->state = has_named_flag(o, "unfinished")    ? OUTLIER_UNFINISHED :
			   has_named_flag(o, "still-blocked") ? OUTLIER_STILL_BLOCKED :
								OUTLIER_ENDED;
	}
	deadlock = ret ? NULL : json_object_object_get(obj, "deadlock");
	if (deadlock) {
		ret = deadlock_from_json(rd, deadlock, o);
	}
	if (ret || state) {
		return ret;
	}
	/* Without "state", a "deadlock" is checked as ever, but only the cause says there is one. */
	outlier_deadlock_free(o->deadlock);
	o->deadlock = NULL;
	if (o->cause && !strncasecmp(o->cause, "deadlock", 8)) {
		ret = outlier_set_deadlock(o, NULL, 0);
	}
	return ret;
}

static enum outlier_kind kind_from_json(struct reader *rd, struct json_object *obj, int *err)
{
	struct json_object *v = get_typed(rd, obj, "kind", json_type_string, err);

	if (v && !strcmp(json_object_get_string(v), "syscall")) {
		return OUTLIER_SYSCALL;
	}
	if (v && !strcmp(json_object_get_string(v), "request")) {
		return OUTLIER_REQUEST;
	}
	return OUTLIER_SLEEP;
}

/* The members of OUTLIER @obj into @o, in the order outlier_to_json() writes them. */
static int members_from_json(struct reader *rd, struct json_object *obj, struct outlier *o)
{
	uint64_t switches = 0;
	int ret = 0;

	o->kind = kind_from_json(rd, obj, &ret);
	ret = ret ?: get_i32(rd, obj, "pid", &o->pid);
	ret = ret ?: get_i32(rd, obj, "tid", &o->tid);
	ret = ret ?: get_str(rd, obj, "comm", &o->comm);
	ret = ret ?: get_str(rd, obj, "syscall", &o->syscall);
	ret = ret ?: get_i32(rd, obj, "syscall_nr", &o->syscall_nr);
	ret = ret ?: times_from_json(rd, obj, o, outlier_times);
	ret = ret ?: get_u64(rd, obj, "switches", &switches);
	o->switches = (uint32_t)switches;
	ret = ret ?: args_from_json(rd, json_object_object_get(obj, "args"), o);
	ret = ret ?: get_str(rd, obj, "cause", &o->cause);
	o->signalled = get_bool(rd, obj, "signalled", &ret);
	ret = ret   ?:
		      user_stack_from_json(rd, json_object_object_get(obj, "user_stack"),
					   &o->user_stack);
	ret = ret ?: waker_from_json(rd, json_object_object_get(obj, "waker"), &o->waker);
	ret = ret ?: holder_from_json(rd, json_object_object_get(obj, "holder"), &o->holder);
	ret = ret ?: request_from_json(rd, obj, o);
	ret = ret ?: lists_from_json(rd, obj, o);
	return ret ?: state_from_json(rd, obj, o);
}

static int read_outlier(struct reader *rd, struct json_object *obj, struct outlier **outp)
{
	struct outlier *o = NULL;
	int ret;

	if (!json_object_is_type(obj, json_type_object)) {
		ret = refuse(rd, "not an object");
		goto out;
	}
	o = outlier_new();
	if (!o) {
		ret = -ENOMEM;
		goto out;
	}
	ret = members_from_json(rd, obj, o);
out:
	if (ret) {
		outlier_free(o);
		o = NULL;
	}
	*outp = o;
	return ret;
}

/**
 * outlier_from_json_at() - read an OUTLIER object, saying what is wrong with one it refuses
 * @obj: the object, checked as lib/summary.c checks a summary's outliers
 * @where: how @why names it ("outlier 3")
 * @outp: the new outlier, on success (free it with outlier_free())
 * @why: receives "WHERE: what is wrong first" when it returns -EINVAL; may be NULL
 * @len: size of @why
 *
 * Return: 0, -EINVAL for a member of the wrong type, or -ENOMEM.
 */
int outlier_from_json_at(struct json_object *obj, const char *where, struct outlier **outp,
			 char *why, size_t len)
{
	struct reader rd = { .why = len ? why : NULL, .len = len };

	snprintf(rd.where, sizeof(rd.where), "%s", where);
	return read_outlier(&rd, obj, outp);
}

/**
 * outlier_from_json() - read an OUTLIER object (outlier_from_json_at() that says nothing)
 *
 * Return: 0, -EINVAL for a member of the wrong type, or -ENOMEM.
 */
int outlier_from_json(struct json_object *obj, struct outlier **outp)
{
	return outlier_from_json_at(obj, "outlier", outp, NULL, 0);
}
