// SPDX-License-Identifier: GPL-2.0
/*
 * timeline.c - the events latsnap knows of a snapshot's window but LTTng did not record as they
 * happened (the BPF side's kernel context, latsnap's own record of each outlier), written next to
 * LTTng's trace as a trace of their own, trace/latsnap/, each at the time it happened (CTF
 * timestamp = CLOCK_MONOTONIC ns, on LTTng's clock class): babeltrace2 and Trace Compass then
 * show them in order with the applications' own events.
 *
 * The events and their fields are those of events/kernel-tp.h and events/events-tp.h, which
 * write the same into the LTTng session when there is no local trace to add to (a relay), so
 * that trace/lsevents.c decodes either alike: a text field that may be empty is preceded by its
 * length, as LS_FIELD_TEXT() writes it, a task's name and a fixed word are plain strings.
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
#include "trace/lsevents.h"
#include "classify/syscalls.h"
#include "lib/outlier.h"
#include "include/latsnap.h"

/* A task name from the kernel: at most LS_TASK_COMM_LEN bytes, not always terminated. */
static const char *comm(const char *c, char *buf)
{
	memcpy(buf, c, LS_TASK_COMM_LEN);
	buf[LS_TASK_COMM_LEN] = '\0';
	return buf;
}

static void ips(struct ctf_writer *w, const char *name, const struct ls_ctx_event *e)
{
	ctf_writer_hex_seq(w, name, (const uint64_t *)e->ips,
			   e->nr_ips > LS_MAX_DEPTH ? LS_MAX_DEPTH : e->nr_ips);
}

/* process_fork/exec/exit (kernel-tp.h's task_class). */
static void task_event(struct ctf_writer *w, const char *name, const struct ls_ctx_event *e)
{
	char c1[LS_TASK_COMM_LEN + 1], c2[LS_TASK_COMM_LEN + 1];

	ctf_writer_event(w, name, e->ts);
	ctf_writer_uint(w, "ts_ns", 64, e->ts);
	ctf_writer_sint(w, "tid", 32, (int32_t)e->tid);
	ctf_writer_sint(w, "pid", 32, (int32_t)e->pid);
	ctf_writer_string(w, "comm", comm(e->comm, c1));
	ctf_writer_sint(w, "other_tid", 32, (int32_t)e->tid2);
	ctf_writer_sint(w, "other_pid", 32, (int32_t)e->pid2);
	ctf_writer_string(w, "other_comm", comm(e->comm2, c2));
}

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

/**
 * timeline_kernel_event - @e, an event of the BPF side's kernel context, into @w as
 * latsnap_kernel:*, at its own time (ts_ns)
 */
void timeline_kernel_event(struct ctf_writer *w, const struct ls_ctx_event *e)
{
	char c1[LS_TASK_COMM_LEN + 1], c2[LS_TASK_COMM_LEN + 1];
	const char *sc = NULL;

	if ((e->kind == LS_CTX_SWITCH || e->kind == LS_CTX_SYSCALL) && e->nr >= 0) {
		sc = syscall_name((int)e->nr);
	}
	switch (e->kind) {
	case LS_CTX_SWITCH:
		ctf_writer_event(w, LSEV_NAME_SCHED_SWITCH, e->ts);
		ctf_writer_uint(w, "ts_ns", 64, e->ts);
		ctf_writer_uint(w, "cpu", 32, e->cpu);
		ctf_writer_sint(w, "prev_tid", 32, (int32_t)e->tid);
		ctf_writer_sint(w, "prev_pid", 32, (int32_t)e->pid);
		ctf_writer_string(w, "prev_comm", comm(e->comm, c1));
		ctf_writer_sint(w, "prev_state", 64, e->arg);
		ctf_writer_uint(w, "preempted", 8, e->preempted);
		ctf_writer_text(w, "prev_syscall", sc);
		ctf_writer_sint(w, "next_tid", 32, (int32_t)e->tid2);
		ctf_writer_sint(w, "next_pid", 32, (int32_t)e->pid2);
		ctf_writer_string(w, "next_comm", comm(e->comm2, c2));
		ips(w, "prev_stack", e);
		break;
	case LS_CTX_WAKEUP:
		ctf_writer_event(w, LSEV_NAME_SCHED_WAKEUP, e->ts);
		ctf_writer_uint(w, "ts_ns", 64, e->ts);
		ctf_writer_uint(w, "cpu", 32, e->cpu);
		ctf_writer_sint(w, "tid", 32, (int32_t)e->tid);
		ctf_writer_sint(w, "pid", 32, (int32_t)e->pid);
		ctf_writer_string(w, "comm", comm(e->comm, c1));
		ctf_writer_sint(w, "waker_tid", 32, (int32_t)e->tid2);
		ctf_writer_sint(w, "waker_pid", 32, (int32_t)e->pid2);
		ctf_writer_string(w, "waker_comm", comm(e->comm2, c2));
		ctf_writer_uint(w, "in_irq", 8, (uint64_t)e->arg);
		ips(w, "waker_stack", e);
		break;
	case LS_CTX_SYSCALL:
		/* At its exit, as LTTng would: start_ns says when it began. */
		ctf_writer_event(w, LSEV_NAME_SYSCALL, e->ts);
		ctf_writer_uint(w, "ts_ns", 64, e->ts);
		ctf_writer_sint(w, "tid", 32, (int32_t)e->tid);
		ctf_writer_sint(w, "pid", 32, (int32_t)e->pid);
		ctf_writer_string(w, "comm", comm(e->comm, c1));
		ctf_writer_sint(w, "nr", 64, e->nr);
		ctf_writer_text(w, "name", sc);
		ctf_writer_uint(w, "start_ns", 64, e->start);
		ctf_writer_uint(w, "duration_ns", 64, e->ts - e->start);
		ctf_writer_sint(w, "ret", 64, e->arg);
		break;
	case LS_CTX_FORK:
		task_event(w, LSEV_NAME_PROCESS_FORK, e);
		break;
	case LS_CTX_EXEC:
		task_event(w, LSEV_NAME_PROCESS_EXEC, e);
		break;
	case LS_CTX_EXIT:
		task_event(w, LSEV_NAME_PROCESS_EXIT, e);
		break;
	case LS_CTX_INTEREST:
		ctf_writer_event(w, LSEV_NAME_INTEREST, e->ts);
		ctf_writer_uint(w, "ts_ns", 64, e->ts);
		ctf_writer_sint(w, "tid", 32, (int32_t)e->tid);
		ctf_writer_sint(w, "pid", 32, (int32_t)e->pid);
		ctf_writer_string(w, "comm", comm(e->comm, c1));
		ctf_writer_sint(w, "other_tid", 32, (int32_t)e->tid2);
		ctf_writer_sint(w, "other_pid", 32, (int32_t)e->pid2);
		ctf_writer_string(w, "other_comm", comm(e->comm2, c2));
		ctf_writer_string(w, "reason", e->arg == LS_INTEREST_WAKER ? "waker" : "wakee");
		break;
	case LS_CTX_BLOCK_ISSUE:
		ctf_writer_event(w, LSEV_NAME_BLOCK_RQ_ISSUE, e->ts);
		ctf_writer_uint(w, "ts_ns", 64, e->ts);
		ctf_writer_sint(w, "tid", 32, (int32_t)e->tid);
		ctf_writer_sint(w, "pid", 32, (int32_t)e->pid);
		ctf_writer_string(w, "comm", comm(e->comm, c1));
		ctf_writer_uint(w, "dev", 64, (uint64_t)e->arg);
		ctf_writer_uint(w, "sector", 64, (uint64_t)e->nr);
		ctf_writer_uint(w, "bytes", 64, e->start);
		ctf_writer_uint(w, "op", 32, e->tid2);
		break;
	case LS_CTX_BLOCK_COMPLETE:
		ctf_writer_event(w, LSEV_NAME_BLOCK_RQ_COMPLETE, e->ts);
		ctf_writer_uint(w, "ts_ns", 64, e->ts);
		ctf_writer_sint(w, "tid", 32, (int32_t)e->tid);
		ctf_writer_sint(w, "pid", 32, (int32_t)e->pid);
		ctf_writer_uint(w, "dev", 64, (uint64_t)e->arg);
		ctf_writer_uint(w, "sector", 64, (uint64_t)e->nr);
		ctf_writer_uint(w, "issue_ns", 64, e->start);
		ctf_writer_sint(w, "error", 32, (int32_t)e->tid2);
		break;
	default:
		break;
	}
}

static void frames_seq(struct ctf_writer *w, const struct outlier_frames *frames)
{
	uint64_t v[LS_MAX_FRAMES];
	size_t i, n = frames->nr > LS_MAX_FRAMES ? LS_MAX_FRAMES : frames->nr;

	for (i = 0; i < n; i++) {
		v[i] = frames->v[i].addr;
	}
	ctf_writer_hex_seq(w, "ips", v, n);
}

/* latsnap:kernel_stack at its outlier's end, the time its weights were complete. */
static void kernel_stack(struct ctf_writer *w, const struct outlier *o, const char *role,
			 uint32_t index, uint64_t weight_ns, const struct outlier_frames *frames)
{
	char symbols[4096];

	emit_join_symbols(frames, symbols, sizeof(symbols));
	ctf_writer_event(w, LSEV_NAME_KERNEL_STACK, o->end_ns);
	ctf_writer_sint(w, "tid", 32, o->tid);
	ctf_writer_uint(w, "end_ns", 64, o->end_ns);
	ctf_writer_string(w, "role", role);
	ctf_writer_uint(w, "index", 32, index);
	ctf_writer_uint(w, "weight_ns", 64, weight_ns);
	frames_seq(w, frames);
	ctf_writer_text(w, "symbols", symbols);
}

/**
 * timeline_outlier - @o (its cause and flags set) into @w: latsnap:outlier at its end (when it
 * was known to be one), latsnap:kernel_stack per wait stack and the waker's, latsnap:user_stack
 * when the handler was done unwinding it (end_ns + unwind_ns, trace/lsevents.h's rule).
 *
 * Return: whether a latsnap:user_stack was written (its in_trace).
 */
bool timeline_outlier(struct ctf_writer *w, const struct outlier *o)
{
	const struct outlier_waker *waker = o->waker;
	const struct outlier_ustack *user = &o->user_stack;
	char flags[2048];
	size_t i, used = 0;
	int len;

	flags[0] = '\0';
	for (i = 0; i < o->nr_flags && used < sizeof(flags); i++) {
		len = snprintf(flags + used, sizeof(flags) - used, "%s%s", i ? "; " : "",
			       o->flags[i]);
		if (len < 0) {
			break;
		}
		used += (size_t)len;
	}
	ctf_writer_event(w, LSEV_NAME_OUTLIER, o->end_ns);
	ctf_writer_string(w, "kind", outlier_kind_name(o->kind));
	ctf_writer_sint(w, "pid", 32, o->pid);
	ctf_writer_sint(w, "tid", 32, o->tid);
	ctf_writer_string(w, "comm", o->comm);
	ctf_writer_text(w, "syscall", o->syscall);
	ctf_writer_sint(w, "syscall_nr", 64, o->syscall ? o->syscall_nr : -1);
	ctf_writer_uint(w, "start_ns", 64, o->start_ns);
	ctf_writer_uint(w, "end_ns", 64, o->end_ns);
	ctf_writer_uint(w, "duration_ns", 64, o->end_ns - o->start_ns);
	ctf_writer_uint(w, "on_cpu_ns", 64, o->on_cpu_ns);
	ctf_writer_uint(w, "blocked_ns", 64, o->blocked_ns);
	ctf_writer_uint(w, "runqueue_ns", 64, o->runqueue_ns);
	ctf_writer_uint(w, "switches", 32, o->switches);
	ctf_writer_text(w, "cause", o->cause);
	ctf_writer_sint(w, "waker_pid", 32, waker ? waker->pid : 0);
	ctf_writer_sint(w, "waker_tid", 32, waker ? waker->tid : 0);
	ctf_writer_text(w, "waker_comm", waker ? waker->comm : NULL);
	ctf_writer_uint(w, "signalled", 8, o->signalled);
	ctf_writer_text(w, "flags", flags);

	for (i = 0; i < o->nr_kernel_stacks; i++) {
		kernel_stack(w, o, "wait", (uint32_t)i, o->kernel_stacks[i].weight_ns,
			     &o->kernel_stacks[i].frames);
	}
	if (waker) {
		kernel_stack(w, o, "waker", 0, 0, &waker->frames);
	}
	if (user->source != OUTLIER_USTACK_UNWIND) {
		return false;
	}
	ctf_writer_event(w, LSEV_NAME_USER_STACK, o->end_ns + user->unwind_ns);
	ctf_writer_sint(w, "tid", 32, o->tid);
	ctf_writer_uint(w, "depth", 32,
			user->frames.nr > LS_MAX_FRAMES ? LS_MAX_FRAMES : user->frames.nr);
	ctf_writer_uint(w, "truncated", 8, user->truncated);
	ctf_writer_uint(w, "status", 8, (uint64_t)user->status);
	ctf_writer_uint(w, "unwind_ns", 64, user->unwind_ns);
	ctf_writer_sint(w, "pid", 32, o->pid);
	ctf_writer_uint(w, "end_ns", 64, o->end_ns);
	frames_seq(w, &user->frames);
	return true;
}
