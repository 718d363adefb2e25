// SPDX-License-Identifier: GPL-2.0
/*
 * emit.c - latsnap's own record of each outlier in the trace (latsnap:outlier and
 * latsnap:kernel_stack), through liblatsnap-events.so. The library is loaded with dlopen() once
 * the session exists: lttng-ust registers with the session daemon as it loads, and latsnap's other
 * commands never carry lttng-ust and its threads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recorder/emit.h"
#include "events/events.h"
#include "lib/outlier.h"
#include "classify/syscalls.h"
#include "tracker/tracker.h"
#include "lib/util.h"

#define EMIT_LIBRARY "liblatsnap-events.so"

struct emit {
	void *handle;
	const struct ls_events *ops;
};

/**
 * emit_open - load liblatsnap-events.so. On failure, says why in @why and returns a negative
 * errno: the snapshots go on without latsnap's own events.
 */
int emit_open(struct emit **emp, char *why, unsigned long why_size)
{
	char path[PATH_MAX + 64];
	struct emit *em = NULL;
	const struct ls_events *ops;
	void *handle = NULL;
	struct timespec t0, t1;
	int err = 0;

	*emp = NULL;
	if (!ls_find_library(EMIT_LIBRARY, path, sizeof(path))) {
		snprintf(why, why_size, "%s: not found next to latsnap nor in %s", EMIT_LIBRARY,
			 LS_LIBDIR);
		err = -ENOENT;
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!handle) {
		snprintf(why, why_size, "%s", dlerror());
		err = -ENOEXEC;
		goto out;
	}
	ops = dlsym(handle, LS_EVENTS_SYMBOL);
	/* An older library lacks the members added since: the calls check its size. */
	if (!ops || ops->abi < LS_EVENTS_ABI_MIN || ops->abi > LS_EVENTS_ABI ||
	    ops->size < offsetof(struct ls_events, summary)) {
		snprintf(why, why_size,
			 "%s: not the library of this latsnap (ABI %u, expected %u to %u)", path,
			 ops ? ops->abi : 0, LS_EVENTS_ABI_MIN, LS_EVENTS_ABI);
		err = -ENOEXEC;
		goto out;
	}
	em = calloc(1, sizeof(*em));
	if (!em) {
		err = -ENOMEM;
		snprintf(why, why_size, "%s", strerror(ENOMEM));
		goto out;
	}
	em->handle = handle;
	em->ops = ops;
	*emp = em;
	/* lttng-ust registers with the session daemon inside dlopen(): say what that costs. */
	ls_verbose("record: latsnap's own events go into the trace through %s (loaded in %.1f ms)",
		   path, (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
out:
	/* Never dlclose() a library that started lttng-ust: its threads stay until exit. */
	return err;
}

/**
 * emit_open_ops - an emit whose calls go to @ops instead of the library's (recorder/replay.c
 * collects a snapshot's events so for latsnap-replay).
 */
int emit_open_ops(struct emit **emp, const struct ls_events *ops)
{
	struct emit *em = calloc(1, sizeof(*em));

	*emp = em;
	if (!em) {
		return -ENOMEM;
	}
	em->ops = ops;
	return 0;
}

/* "symbol+0xoff;..." of @frames, innermost first, into @buf. */
static void join_symbols(const struct outlier_frames *frames, char *buf, size_t size)
{
	size_t i, used = 0;
	int len;

	buf[0] = '\0';
	for (i = 0; i < frames->nr && used < size; i++) {
		const struct outlier_frame *f = &frames->v[i];

		if (f->symbol && f->symbol[0]) {
			len = snprintf(buf + used, size - used, "%s%s+0x%" PRIx64, i ? ";" : "",
				       f->symbol, f->offset);
		} else {
			len = snprintf(buf + used, size - used, "%s0x%" PRIx64, i ? ";" : "",
				       f->addr);
		}
		if (len < 0) {
			break;
		}
		used += (size_t)len;
	}
}

/* The addresses of @frames, at most LS_MAX_FRAMES; returns how many. */
static size_t frames_to_ips(const struct outlier_frames *frames, uint64_t *ips)
{
	size_t i, n = frames->nr > LS_MAX_FRAMES ? LS_MAX_FRAMES : frames->nr;

	for (i = 0; i < n; i++) {
		ips[i] = frames->v[i].addr;
	}
	return n;
}

/**
 * emit_outlier_event - @outlier (its cause set) as latsnap:outlier records it, whichever trace
 * it goes into; @flags (@size bytes) holds its flags joined with "; "
 */
void emit_outlier_event(const struct outlier *outlier, struct ls_ev_outlier *ev, char *flags,
			size_t size)
{
	const struct outlier_waker *waker = outlier->waker;
	size_t i, used = 0;
	int len;

	flags[0] = '\0';
	for (i = 0; i < outlier->nr_flags && used < size; i++) {
		len = snprintf(flags + used, size - used, "%s%s", i ? "; " : "", outlier->flags[i]);
		if (len < 0) {
			break;
		}
		used += (size_t)len;
	}
	*ev = (struct ls_ev_outlier){ 0 };
	ev->kind = outlier_kind_name(outlier->kind);
	ev->comm = outlier->comm ? outlier->comm : "";
	ev->syscall = outlier->syscall ? outlier->syscall : "";
	ev->cause = outlier->cause ? outlier->cause : "";
	ev->flags = flags;
	ev->waker_comm = waker && waker->comm ? waker->comm : "";
	ev->pid = outlier->pid;
	ev->tid = outlier->tid;
	ev->waker_pid = waker ? waker->pid : 0;
	ev->waker_tid = waker ? waker->tid : 0;
	ev->syscall_nr = outlier->syscall ? outlier->syscall_nr : -1;
	ev->start_ns = outlier->start_ns;
	ev->end_ns = outlier->end_ns;
	ev->on_cpu_ns = outlier->on_cpu_ns;
	ev->blocked_ns = outlier->blocked_ns;
	ev->runqueue_ns = outlier->runqueue_ns;
	ev->switches = outlier->switches;
	ev->signalled = outlier->signalled;
}

/**
 * emit_stack_event - stack @frames of @outlier as latsnap:kernel_stack records it, whichever
 * trace it goes into: @ips has room for LS_MAX_FRAMES, @symbols for @size bytes
 */
void emit_stack_event(const struct outlier *outlier, const char *role, uint32_t index,
		      uint64_t weight_ns, const struct outlier_frames *frames,
		      struct ls_ev_stack *ev, uint64_t *ips, char *symbols, size_t size)
{
	join_symbols(frames, symbols, size);
	*ev = (struct ls_ev_stack){ 0 };
	ev->role = role;
	ev->symbols = symbols;
	ev->ips = ips;
	ev->nr = (uint32_t)frames_to_ips(frames, ips);
	ev->end_ns = outlier->end_ns;
	ev->tid = outlier->tid;
	ev->index = index;
	ev->weight_ns = weight_ns;
}

/**
 * emit_user_stack_event - @outlier's unwound stack as latsnap:user_stack records it, whichever
 * trace it goes into: @ips has room for LS_MAX_FRAMES
 *
 * Return: whether it has one (the preload library's report).
 */
bool emit_user_stack_event(const struct outlier *outlier, struct ls_ev_user_stack *ev,
			   uint64_t *ips)
{
	const struct outlier_ustack *user = &outlier->user_stack;

	if (user->source != OUTLIER_USTACK_UNWIND) {
		return false;
	}
	*ev = (struct ls_ev_user_stack){ 0 };
	ev->ips = ips;
	ev->nr = (uint32_t)frames_to_ips(&user->frames, ips);
	ev->pid = outlier->pid;
	ev->tid = outlier->tid;
	ev->end_ns = outlier->end_ns;
	ev->unwind_ns = user->unwind_ns;
	ev->status = (uint8_t)user->status;
	ev->truncated = user->truncated;
	return true;
}

static void emit_stack(struct emit *em, const struct outlier *outlier, const char *role,
		       uint32_t index, uint64_t weight_ns, const struct outlier_frames *frames)
{
	uint64_t ips[LS_MAX_FRAMES];
	struct ls_ev_stack ev;
	char symbols[EMIT_SYMBOLS_SIZE];

	emit_stack_event(outlier, role, index, weight_ns, frames, &ev, ips, symbols,
			 sizeof(symbols));
	em->ops->kernel_stack(&ev);
}

/*
 * The unwound stack of @outlier, if it has one: the target's library reports it through the
 * kernel, and this is its place in the trace.
 */
static void emit_user_stack(struct emit *em, const struct outlier *outlier)
{
	struct ls_ev_user_stack ev;
	uint64_t ips[LS_MAX_FRAMES];

	if (em->ops->size < offsetof(struct ls_events, user_stack) + sizeof(em->ops->user_stack) ||
	    !em->ops->user_stack || !emit_user_stack_event(outlier, &ev, ips)) {
		return;
	}
	em->ops->user_stack(&ev);
}

struct mappings_ctx {
	const struct ls_events *ops;
	int32_t pid;
};

static void emit_module(const struct usyms_module *m, void *arg)
{
	const struct mappings_ctx *mc = arg;
	struct ls_ev_bin_info ev = {
		.path = m->path,
		.build_id = m->build_id,
		.base = m->base,
		.memsz = m->size,
		.pid = mc->pid,
		.build_id_len = (uint32_t)m->build_id_len,
	};

	/* Files only: [vdso] and the like have no file to symbolize from. */
	if (m->path && m->path[0] == '/') {
		mc->ops->bin_info(&ev);
	}
}

/**
 * emit_mappings - record what @pid had mapped (latsnap:bin_info, one per object), so that a
 * reader of the trace can symbolize its stacks without the process or this machine.
 */
void emit_mappings(struct emit *em, struct tracker *tr, pid_t pid)
{
	struct mappings_ctx mc = { .pid = (int32_t)pid };

	if (!em ||
	    em->ops->size < offsetof(struct ls_events, bin_info) + sizeof(em->ops->bin_info) ||
	    !em->ops->bin_info) {
		return;
	}
	mc.ops = em->ops;
	tracker_user_modules(tr, pid, emit_module, &mc);
}

/**
 * emit_outlier - record @outlier (its cause set) in the trace: one
 * latsnap:outlier event, then one latsnap:kernel_stack per wait stack and one for the waker, and
 * latsnap:user_stack for its unwound stack.
 */
void emit_outlier(struct emit *em, const struct outlier *outlier)
{
	const struct outlier_waker *waker = outlier->waker;
	struct ls_ev_outlier ev;
	char flag_text[EMIT_FLAGS_SIZE];
	size_t i;

	if (!em) {
		return;
	}
	emit_outlier_event(outlier, &ev, flag_text, sizeof(flag_text));
	em->ops->outlier(&ev);

	for (i = 0; i < outlier->nr_kernel_stacks; i++) {
		emit_stack(em, outlier, "wait", (uint32_t)i, outlier->kernel_stacks[i].weight_ns,
			   &outlier->kernel_stacks[i].frames);
	}
	if (waker) {
		emit_stack(em, outlier, "waker", 0, 0, &waker->frames);
	}
	emit_user_stack(em, outlier);
}

/**
 * emit_kernel_event - record @e, an event of the kernel context stream, as latsnap_kernel:*.
 */
void emit_kernel_event(struct emit *em, const struct ls_ctx_event *e)
{
	const char *name = NULL;

	if (!em) {
		return;
	}
	if ((e->kind == LS_CTX_SWITCH || e->kind == LS_CTX_SYSCALL) && e->nr >= 0) {
		name = syscall_name((int)e->nr);
	}
	em->ops->kernel_event(e, name);
}

/**
 * emit_summary - record snapshot @id's summary (@json, @len bytes) as latsnap:summary events of
 * at most @part_max bytes each: an event larger than a sub-buffer would be dropped whole.
 *
 * Return: the number of parts, or -ENOTSUP when the library predates latsnap:summary.
 */
int emit_summary(struct emit *em, const char *id, const char *json, unsigned long len,
		 unsigned long part_max)
{
	struct ls_ev_summary ev = { .id = id };
	size_t off;

	if (!em || em->ops->size < offsetof(struct ls_events, summary) + sizeof(em->ops->summary) ||
	    !em->ops->summary || !part_max) {
		return -ENOTSUP;
	}
	ev.parts = (uint32_t)((len + part_max - 1) / part_max);
	if (!ev.parts) {
		ev.parts = 1;
	}
	for (off = 0, ev.part = 0; ev.part < ev.parts; ev.part++, off += part_max) {
		ev.text = json + off;
		ev.len = (uint32_t)(len - off < part_max ? len - off : part_max);
		em->ops->summary(&ev);
	}
	return (int)ev.parts;
}

/**
 * emit_wait_ready - wait up to @timeout_ms for the session's events to be enabled in this process
 * (lttng-ust registers in the background, seconds late on a loaded machine). A snapshot before
 * that has the channel's buffers but not their stream in the metadata: no CTF reader takes it.
 * The session enables latsnap:bin_info (and latsnap:summary) for latsnap itself, its other events
 * going into a trace of its own or through latsnap-replay: that one is waited for.
 *
 * Return: true once ready (or when the library cannot tell), false at the timeout.
 */
bool emit_wait_ready(struct emit *em, unsigned int timeout_ms)
{
	struct timespec ts = { 0, 5 * 1000000 };
	int (*ready)(void) = NULL;
	unsigned int waited;

	if (!em) {
		return true;
	}
	if (em->ops->size >=
	    offsetof(struct ls_events, mappings_ready) + sizeof(em->ops->mappings_ready)) {
		ready = em->ops->mappings_ready;
	}
	if (!ready) {
		return true;
	}
	for (waited = 0; waited < timeout_ms; waited += 5) {
		if (ready()) {
			ls_verbose("record: latsnap's own events enabled after %u ms", waited);
			return true;
		}
		nanosleep(&ts, NULL);
	}
	return ready() != 0;
}

/**
 * emit_close - forget the library. It stays loaded: lttng-ust is not made to be unloaded.
 */
void emit_close(struct emit *em)
{
	free(em);
}
