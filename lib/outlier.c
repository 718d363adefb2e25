// SPDX-License-Identifier: GPL-2.0
/*
 * outlier.c - the outlier struct: build it and free it. Its JSON form is outlier-json.c's, its
 * text for people outlier-text.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/outlier.h"

static const char *const kind_names[] = {
	[OUTLIER_SYSCALL] = "syscall",
	[OUTLIER_SLEEP] = "sleep",
	[OUTLIER_REQUEST] = "request",
};

static const char *const source_names[] = {
	[OUTLIER_USTACK_NONE] = "none",
	[OUTLIER_USTACK_FRAME_POINTER] = "frame-pointer",
	[OUTLIER_USTACK_UNWIND] = "unwind",
};

/**
 * outlier_kind_name() - the contract's "kind" string of @kind
 */
const char *outlier_kind_name(enum outlier_kind kind)
{
	return kind <= OUTLIER_REQUEST ? kind_names[kind] : "?";
}

/**
 * outlier_ustack_source_name() - the contract's "source" string of a user stack
 */
const char *outlier_ustack_source_name(enum outlier_ustack_source source)
{
	return source <= OUTLIER_USTACK_UNWIND ? source_names[source] : "?";
}

static const char *const state_names[] = { "ended", "still-blocked", "unfinished" };

/**
 * outlier_state_name() - the contract's "state" string: "ended", "still-blocked", "unfinished"
 */
const char *outlier_state_name(enum outlier_state state)
{
	return state <= OUTLIER_UNFINISHED ? state_names[state] : "?";
}

/**
 * outlier_deadlock_free() - free @d (NULL: nothing)
 */
void outlier_deadlock_free(struct outlier_deadlock *d)
{
	size_t i;

	if (!d) {
		return;
	}
	for (i = 0; i < d->nr; i++) {
		free(d->threads[i].comm);
	}
	free(d->threads);
	free(d);
}

/**
 * outlier_set_deadlock() - @o's thread is in the deadlock of @threads[0..@nr), in the order
 * they wait for each other (copied; any deadlock it had is replaced)
 *
 * Return: 0 or -ENOMEM.
 */
int outlier_set_deadlock(struct outlier *o, const struct outlier_deadlock_thread *threads,
			 size_t nr)
{
	struct outlier_deadlock *d = calloc(1, sizeof(*d));
	size_t i;
	int ret = -ENOMEM;

	if (!d) {
		goto out;
	}
	d->threads = calloc(nr ? nr : 1, sizeof(*d->threads));
	if (!d->threads) {
		goto out;
	}
	for (; d->nr < nr; d->nr++) {
		i = d->nr;
		d->threads[i].pid = threads[i].pid;
		d->threads[i].tid = threads[i].tid;
		if (outlier_set_str(&d->threads[i].comm, threads[i].comm)) {
			goto out;
		}
	}
	outlier_deadlock_free(o->deadlock);
	o->deadlock = d;
	d = NULL;
	ret = 0;
out:
	outlier_deadlock_free(d);
	return ret;
}

/**
 * outlier_new() - an empty outlier (kind syscall, no stacks, no flags); NULL without memory
 */
struct outlier *outlier_new(void)
{
	return calloc(1, sizeof(struct outlier));
}

/**
 * outlier_set_str() - replace the string *@field with a copy of @text (NULL clears it)
 *
 * Return: 0 or -ENOMEM (the field then unchanged).
 */
int outlier_set_str(char **field, const char *text)
{
	char *copy = NULL;

	if (text) {
		copy = strdup(text);
		if (!copy) {
			return -ENOMEM;
		}
	}
	free(*field);
	*field = copy;
	return 0;
}

/**
 * outlier_set_cause() - name the cause of @o
 */
int outlier_set_cause(struct outlier *o, const char *cause)
{
	return outlier_set_str(&o->cause, cause);
}

/**
 * outlier_frames_alloc() - room for @nr zeroed frames in @frames, which must be empty
 */
int outlier_frames_alloc(struct outlier_frames *frames, size_t nr)
{
	frames->nr = 0;
	frames->v = nr ? calloc(nr, sizeof(*frames->v)) : NULL;
	if (nr && !frames->v) {
		return -ENOMEM;
	}
	frames->nr = nr;
	return 0;
}

/**
 * outlier_frame_set() - fill one frame; @symbol and @module may be NULL (unknown)
 */
int outlier_frame_set(struct outlier_frame *f, uint64_t addr, const char *symbol,
		      uint64_t offset, const char *module)
{
	f->addr = addr;
	f->offset = symbol ? offset : 0;
	if (outlier_set_str(&f->symbol, symbol) || outlier_set_str(&f->module, module)) {
		return -ENOMEM;
	}
	return 0;
}

/**
 * outlier_interp_name() - an interpreter frame for people, into @buf: "wait_for_lock
 * (prog.py:12)", the file by its base name, no line when it is not known; "? (Python code
 * 0xADDR)" when its code object could not be read
 */
void outlier_interp_name(const struct outlier_frame *f, char *buf, size_t len)
{
	const char *base = f->module ? strrchr(f->module, '/') : NULL;

	base = base ? base + 1 : f->module;
	if (!f->symbol || !base) {
		snprintf(buf, len, "? (Python code 0x%" PRIx64 ")", f->addr);
	} else if (f->line) {
		snprintf(buf, len, "%s (%s:%" PRIu32 ")", f->symbol, base, f->line);
	} else {
		snprintf(buf, len, "%s (%s)", f->symbol, base);
	}
}

/**
 * outlier_frames_free() - free the frames of @frames and leave it empty
 */
void outlier_frames_free(struct outlier_frames *frames)
{
	size_t i;

	for (i = 0; i < frames->nr; i++) {
		free(frames->v[i].symbol);
		free(frames->v[i].module);
		free(frames->v[i].file);
	}
	free(frames->v);
	frames->v = NULL;
	frames->nr = 0;
}

/**
 * outlier_frames_move() - give the frames of @from to @to (whose own are freed); @from is left
 *                         empty
 */
void outlier_frames_move(struct outlier_frames *to, struct outlier_frames *from)
{
	outlier_frames_free(to);
	*to = *from;
	from->v = NULL;
	from->nr = 0;
}

/**
 * outlier_add_kstack() - a new, empty kernel stack of @weight_ns at the end of @o's
 *
 * Return: the stack, or NULL without memory.
 */
struct outlier_kstack *outlier_add_kstack(struct outlier *o, uint64_t weight_ns)
{
	struct outlier_kstack *st;

	st = array_append((void **)&o->kernel_stacks, &o->nr_kernel_stacks, sizeof(*st));
	if (st) {
		st->weight_ns = weight_ns;
	}
	return st;
}

/**
 * outlier_add_profile() - a new, empty sampled stack of @weight_ns at the end of @o's CPU profile
 *
 * Return: the stack, or NULL without memory.
 */
struct outlier_kstack *outlier_add_profile(struct outlier *o, uint64_t weight_ns)
{
	struct outlier_kstack *st;

	st = array_append((void **)&o->cpu_profile, &o->nr_cpu_profile, sizeof(*st));
	if (st) {
		st->weight_ns = weight_ns;
	}
	return st;
}

/**
 * outlier_add_wait() - append @wait (it becomes @o's) to the waits of request @o
 *
 * Return: 0, or -ENOMEM (then @wait is freed).
 */
int outlier_add_wait(struct outlier *o, struct outlier *wait)
{
	struct outlier **slot;

	slot = array_append((void **)&o->waits, &o->nr_waits, sizeof(*slot));
	if (!slot) {
		outlier_free(wait);
		return -ENOMEM;
	}
	*slot = wait;
	return 0;
}

/**
 * outlier_add_link() - a new, zeroed link at the end of @o's wait chain; NULL without memory
 */
struct outlier_link *outlier_add_link(struct outlier *o)
{
	return array_append((void **)&o->wait_chain, &o->nr_links, sizeof(struct outlier_link));
}

/**
 * outlier_links_free() - empty the wait chain of @o
 */
void outlier_links_free(struct outlier *o)
{
	size_t i;

	for (i = 0; i < o->nr_links; i++) {
		free(o->wait_chain[i].comm);
		free(o->wait_chain[i].syscall);
		outlier_frames_free(&o->wait_chain[i].frames);
	}
	free(o->wait_chain);
	o->wait_chain = NULL;
	o->nr_links = 0;
}

static void waker_free(struct outlier_waker *w)
{
	if (w) {
		free(w->comm);
		outlier_frames_free(&w->frames);
		free(w);
	}
}

static void holder_free(struct outlier_holder *h)
{
	if (h) {
		free(h->comm);
		free(h->what);
		free(h->state);
		outlier_frames_free(&h->frames);
		outlier_frames_free(&h->kernel_frames);
		free(h);
	}
}

/**
 * outlier_set_holder() - give @o an empty holder, replacing any it had
 *
 * Return: the holder, or NULL on ENOMEM.
 */
struct outlier_holder *outlier_set_holder(struct outlier *o)
{
	holder_free(o->holder);
	o->holder = calloc(1, sizeof(*o->holder));
	return o->holder;
}

static void request_free(struct outlier_request *r)
{
	if (r) {
		free(r->probe);
		free(r->arg);
		free(r->key);
		free(r->upstream_comm);
		free(r);
	}
}

/**
 * outlier_set_request() - make @o a request of the probe pair @probe, with argument @arg (or
 *                         NULL)
 *
 * Return: the request, or NULL on ENOMEM.
 */
struct outlier_request *outlier_set_request(struct outlier *o, const char *probe, const char *arg)
{
	struct outlier_request *r;

	request_free(o->request);
	o->request = r = calloc(1, sizeof(*r));
	if (r && (outlier_set_str(&r->probe, probe) || outlier_set_str(&r->arg, arg))) {
		request_free(r);
		o->request = r = NULL;
	}
	if (r) {
		o->kind = OUTLIER_REQUEST;
	}
	return r;
}

/**
 * outlier_free() - free @o and all it owns; NULL is a no-op
 */
void outlier_free(struct outlier *o)
{
	size_t i;

	if (!o) {
		return;
	}
	free(o->comm);
	free(o->syscall);
	free(o->cause);
	for (i = 0; i < o->nr_kernel_stacks; i++) {
		outlier_frames_free(&o->kernel_stacks[i].frames);
	}
	free(o->kernel_stacks);
	outlier_frames_free(&o->user_stack.frames);
	waker_free(o->waker);
	holder_free(o->holder);
	outlier_deadlock_free(o->deadlock);
	request_free(o->request);
	for (i = 0; i < o->nr_waits; i++) {
		outlier_free(o->waits[i]);
	}
	free(o->waits);
	for (i = 0; i < o->nr_cpu_profile; i++) {
		outlier_frames_free(&o->cpu_profile[i].frames);
	}
	free(o->cpu_profile);
	outlier_links_free(o);
	for (i = 0; i < o->nr_flags; i++) {
		free(o->flags[i]);
	}
	free(o->flags);
	free(o);
}

/**
 * outlier_add_flag() - append a flag, formatted, to @o's
 *
 * Return: 0 or -ENOMEM.
 */
int outlier_add_flag(struct outlier *o, const char *fmt, ...)
{
	char **slot;
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		return -ENOMEM;
	}
	slot = array_append((void **)&o->flags, &o->nr_flags, sizeof(*slot));
	if (!slot) {
		free(text);
		return -ENOMEM;
	}
	*slot = text;
	return 0;
}

/**
 * outlier_drop_flags() - remove every flag of @o that starts with @prefix: what was said of a
 *                        part that has been replaced since
 */
void outlier_drop_flags(struct outlier *o, const char *prefix)
{
	size_t i, kept = 0, len = strlen(prefix);

	for (i = 0; i < o->nr_flags; i++) {
		if (!strncmp(o->flags[i], prefix, len)) {
			free(o->flags[i]);
		} else {
			o->flags[kept++] = o->flags[i];
		}
	}
	o->nr_flags = kept;
}

/**
 * outlier_has_flag() - does @o carry a flag that starts with @prefix?
 */
bool outlier_has_flag(const struct outlier *o, const char *prefix)
{
	size_t i, len = strlen(prefix);

	for (i = 0; i < o->nr_flags; i++) {
		if (!strncmp(o->flags[i], prefix, len)) {
			return true;
		}
	}
	return false;
}
