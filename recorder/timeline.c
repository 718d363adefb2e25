// SPDX-License-Identifier: GPL-2.0
/*
 * timeline.c - the events latsnap knows of a snapshot's window but LTTng did not record as they
 * happened (the BPF side's kernel context, latsnap's own record of each outlier), written next to
 * LTTng's trace as a trace of their own, trace/latsnap/, each at the time it happened (CTF
 * timestamp = CLOCK_MONOTONIC ns, on LTTng's clock class): babeltrace2 and Trace Compass then
 * show them in order with the applications' own events.
 *
 * The events and their fields are events/schema.h's, from which events/kernel-tp.h and
 * events/events-tp.h are made too (they write the same into the LTTng session when there is no
 * local trace to add to: a relay), so that trace/lsevents.c decodes either alike: a text field
 * that may be empty is preceded by its length, as LS_FIELD_TEXT() writes it, a task's name and a
 * fixed word are plain strings.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <linux/types.h>

#include "recorder/emit.h"
#include "recorder/timeline.h"
#include "trace/ctf-writer.h"
#include "classify/syscalls.h"
#include "events/events.h"
#include "events/schema.h"
#include "lib/outlier.h"
#include "include/latsnap.h"

/* A task name from the kernel: at most LS_TASK_COMM_LEN bytes, not always terminated. */
static const char *comm(const char *c, char *buf)
{
	memcpy(buf, c, LS_TASK_COMM_LEN);
	buf[LS_TASK_COMM_LEN] = '\0';
	return buf;
}

/*
 * TL_FIELD - a field of events/schema.h's tables (F(kind, name, ...)) into writer w, as the
 * providers write it into the LTTng session: the same name, type and order. The writer copies
 * every value at once, so a task's name needs its terminated copy only for the call.
 */
#define TL_FIELD(kind, name, ...) TL_##kind(#name, __VA_ARGS__);
#define TL_u(name, bits, v) ctf_writer_uint(w, name, bits, (uint##bits##_t)(v))
#define TL_s(name, bits, v) ctf_writer_sint(w, name, bits, (int##bits##_t)(v))
#define TL_string(name, v) ctf_writer_string(w, name, v)
#define TL_text(name, v) ctf_writer_text(w, name, v)
#define TL_comm(name, v) ctf_writer_string(w, name, comm(v, (char[LS_TASK_COMM_LEN + 1]){ 0 }))
#define TL_hexseq(name, bits, p, n) ctf_writer_hex_seq(w, name, (const uint64_t *)(p), n)

/**
 * timeline_emitter - say in @w that latsnap, this thread, wrote its events (the vpid, vtid and
 * procname every event of the earlier layout carried as LTTng's context)
 */
void timeline_emitter(struct ctf_writer *w)
{
	char name[17] = "";

	if (prctl(PR_GET_NAME, name, 0, 0, 0)) {
		name[0] = '\0';
	}
	ctf_writer_emitter(w, (int32_t)getpid(), (int32_t)gettid(), name);
}

/* Each event of LS_KERNEL_EVENTS for the kind of struct ls_ctx_event it is, at its ts_ns. */
#define TL_KERNEL_EVENT(name, kind) TL_KERNEL_INSTANCE(name, name, kind)
#define TL_KERNEL_INSTANCE(cls, name, kind)                                      \
	case kind:                                                               \
		ctf_writer_event(w, LS_EVENT_NAME(latsnap_kernel, name), e->ts); \
		LS_KERNEL_FIELDS_##cls(TL_FIELD) break;
#define TL_KERNEL_CLASS(cls)

/**
 * timeline_kernel_event - @e, an event of the BPF side's kernel context, into @w as
 * latsnap_kernel:*, at its own time (ts_ns)
 */
void timeline_kernel_event(struct ctf_writer *w, const struct ls_ctx_event *e)
{
	const char *sc = NULL;

	if ((e->kind == LS_CTX_SWITCH || e->kind == LS_CTX_SYSCALL) && e->nr >= 0) {
		sc = syscall_name((int)e->nr);
	}
	switch (e->kind) {
		LS_KERNEL_EVENTS(TL_KERNEL_EVENT, TL_KERNEL_CLASS, TL_KERNEL_INSTANCE)
	default:
		break;
	}
}

/* latsnap:kernel_stack at its outlier's end, the time its weights were complete. */
static void kernel_stack(struct ctf_writer *w, const struct outlier *outlier, const char *role,
			 uint32_t index, uint64_t weight_ns, const struct outlier_frames *frames)
{
	uint64_t ips[LS_MAX_FRAMES];
	struct ls_ev_stack ev, *s = &ev;
	char symbols[EMIT_SYMBOLS_SIZE];

	emit_stack_event(outlier, role, index, weight_ns, frames, &ev, ips, symbols,
			 sizeof(symbols));
	ctf_writer_event(w, LS_EVENT_NAME(latsnap, kernel_stack), outlier->end_ns);
	LS_FIELDS_kernel_stack(TL_FIELD)
}

/**
 * timeline_outlier - @o (its cause and flags set) into @w: latsnap:outlier at its end (when it
 * was known to be one), latsnap:kernel_stack per wait stack and the waker's, latsnap:user_stack
 * when the handler was done unwinding it (end_ns + unwind_ns, trace/lsevents.h's rule).
 *
 * Return: whether a latsnap:user_stack was written (its in_trace).
 */
bool timeline_outlier(struct ctf_writer *w, const struct outlier *outlier)
{
	const struct outlier_waker *waker = outlier->waker;
	struct ls_ev_outlier ev_o, *o = &ev_o;
	struct ls_ev_user_stack ev_u, *u = &ev_u;
	uint64_t ips[LS_MAX_FRAMES];
	char flags[EMIT_FLAGS_SIZE];
	size_t i;

	emit_outlier_event(outlier, o, flags, sizeof(flags));
	ctf_writer_event(w, LS_EVENT_NAME(latsnap, outlier), o->end_ns);
	LS_FIELDS_outlier(TL_FIELD)

		for (i = 0; i < outlier->nr_kernel_stacks; i++)
	{
		kernel_stack(w, outlier, "wait", (uint32_t)i, outlier->kernel_stacks[i].weight_ns,
			     &outlier->kernel_stacks[i].frames);
	}
	if (waker) {
		kernel_stack(w, outlier, "waker", 0, 0, &waker->frames);
	}
	if (!emit_user_stack_event(outlier, u, ips)) {
		return false;
	}
	ctf_writer_event(w, LS_EVENT_NAME(latsnap, user_stack), u->end_ns + u->unwind_ns);
	LS_FIELDS_user_stack(TL_FIELD) return true;
}
