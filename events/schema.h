/* SPDX-License-Identifier: GPL-2.0 */
/*
 * schema.h - latsnap's own trace events, each spelled once: its name and its fields in order.
 * The tracepoint providers (events/kernel-tp.h, events/events-tp.h) and the trace latsnap writes
 * itself (recorder/timeline.c) are both made from these tables, so that the two traces cannot
 * disagree; trace/lsevents.c reads them back by hand (tests/unit/test_lsevents.c checks it
 * reads every field named here). X-macros, not data: lttng-ust's provider is made by its own
 * macros, re-reading the provider header, and only macros can feed those.
 *
 * A field is F(kind, name, ...), its value an expression of the event's argument:
 *	u, BITS, v		an unsigned integer of BITS bits
 *	s, BITS, v		a signed one
 *	x, BITS, v		an unsigned one shown in hexadecimal (an address)
 *	string, v		text that is never empty (a fixed word): a plain string
 *	text, v			text that may be empty, NULL as "": LS_FIELD_TEXT()
 *	comm, v			a task's name from the kernel, LS_TASK_COMM_LEN chars, not always
 *				terminated
 *	hexseq, BITS, p, n	@n 64-bit addresses at @p, the length a BITS-bit integer
 *	bytes, BITS, p, n	@n bytes at @p
 *	textseq, BITS, p, n	@n chars of text at @p, not terminated
 * A consumer defines F to expand each kind as it writes it; one that does not know a kind fails
 * to compile, which is the point: a new kind must be taught to each of them.
 */
#ifndef LATSNAP_EVENTS_SCHEMA_H
#define LATSNAP_EVENTS_SCHEMA_H

#include "events/events.h"

/*
 * The latsnap_kernel provider: the kernel's view the BPF side streams. Each event's argument is
 * e (const struct ls_ctx_event *) and sc (the syscall's name, or NULL); every event carries the
 * kernel's own time of what happened (ts_ns, CLOCK_MONOTONIC).
 *
 * LS_KERNEL_EVENTS(EVENT, CLASS, INSTANCE): in the provider's order,
 *	EVENT(name, kind)		event name of struct ls_ctx_event's kind, its fields
 *					LS_KERNEL_FIELDS_name
 *	CLASS(cls)			fields LS_KERNEL_FIELDS_cls shared by the instances below
 *	INSTANCE(cls, name, kind)	event name with the fields of class cls
 */
#define LS_KERNEL_EVENTS(EVENT, CLASS, INSTANCE)  \
	EVENT(sched_switch, LS_CTX_SWITCH)        \
	EVENT(sched_wakeup, LS_CTX_WAKEUP)        \
	EVENT(syscall, LS_CTX_SYSCALL)            \
	CLASS(task)                               \
	INSTANCE(task, process_fork, LS_CTX_FORK) \
	INSTANCE(task, process_exec, LS_CTX_EXEC) \
	INSTANCE(task, process_exit, LS_CTX_EXIT) \
	EVENT(interest, LS_CTX_INTEREST)          \
	EVENT(block_rq_issue, LS_CTX_BLOCK_ISSUE) \
	EVENT(block_rq_complete, LS_CTX_BLOCK_COMPLETE)

/* The addresses of @e's stack that count: the BPF side never sends more than its array holds. */
#define LS_CTX_NR_IPS(e) ((e)->nr_ips > LS_MAX_DEPTH ? LS_MAX_DEPTH : (e)->nr_ips)

/* sched_switch: prev leaves the CPU (prev_state 0 or preempted: still runnable), next runs. */
#define LS_KERNEL_FIELDS_sched_switch(F) \
	F(u, ts_ns, 64, e->ts)           \
	F(u, cpu, 32, e->cpu)            \
	F(s, prev_tid, 32, e->tid)       \
	F(s, prev_pid, 32, e->pid)       \
	F(comm, prev_comm, e->comm)      \
	F(s, prev_state, 64, e->arg)     \
	F(u, preempted, 8, e->preempted) \
	F(text, prev_syscall, sc)        \
	F(s, next_tid, 32, e->tid2)      \
	F(s, next_pid, 32, e->pid2)      \
	F(comm, next_comm, e->comm2)     \
	F(hexseq, prev_stack, 16, e->ips, LS_CTX_NR_IPS(e))

/* sched_wakeup: tid is woken by waker_tid or, when in_irq, by an interrupt that landed on it. */
#define LS_KERNEL_FIELDS_sched_wakeup(F) \
	F(u, ts_ns, 64, e->ts)           \
	F(u, cpu, 32, e->cpu)            \
	F(s, tid, 32, e->tid)            \
	F(s, pid, 32, e->pid)            \
	F(comm, comm, e->comm)           \
	F(s, waker_tid, 32, e->tid2)     \
	F(s, waker_pid, 32, e->pid2)     \
	F(comm, waker_comm, e->comm2)    \
	F(u, in_irq, 8, e->arg)          \
	F(hexseq, waker_stack, 16, e->ips, LS_CTX_NR_IPS(e))

/* syscall: one that lasted at least the floor, from start_ns to ts_ns (written at its exit). */
#define LS_KERNEL_FIELDS_syscall(F)             \
	F(u, ts_ns, 64, e->ts)                  \
	F(s, tid, 32, e->tid)                   \
	F(s, pid, 32, e->pid)                   \
	F(comm, comm, e->comm)                  \
	F(s, nr, 64, e->nr)                     \
	F(text, name, sc)                       \
	F(u, start_ns, 64, e->start)            \
	F(u, duration_ns, 64, e->ts - e->start) \
	F(s, ret, 64, e->arg)

/* process_fork/exec/exit: a thread and the other one (process_fork: the child). */
#define LS_KERNEL_FIELDS_task(F)     \
	F(u, ts_ns, 64, e->ts)       \
	F(s, tid, 32, e->tid)        \
	F(s, pid, 32, e->pid)        \
	F(comm, comm, e->comm)       \
	F(s, other_tid, 32, e->tid2) \
	F(s, other_pid, 32, e->pid2) \
	F(comm, other_comm, e->comm2)

/*
 * interest: from ts_ns on, the context of tid (not tracked) is streamed too, because it woke
 * other_tid (reason "waker") or tracked other_tid woke it ("wakee"). Before, its record is empty.
 */
#define LS_KERNEL_FIELDS_interest(F) \
	LS_KERNEL_FIELDS_task(F) F(string, reason, e->arg == LS_INTEREST_WAKER ? "waker" : "wakee")

/* block_rq_issue: a request of a streamed thread; dev is MAJOR << 20 | MINOR. */
#define LS_KERNEL_FIELDS_block_rq_issue(F) \
	F(u, ts_ns, 64, e->ts)             \
	F(s, tid, 32, e->tid)              \
	F(s, pid, 32, e->pid)              \
	F(comm, comm, e->comm)             \
	F(u, dev, 64, e->arg)              \
	F(u, sector, 64, e->nr)            \
	F(u, bytes, 64, e->start)          \
	F(u, op, 32, e->tid2)

/* block_rq_complete: that request done; tid issued it at issue_ns. */
#define LS_KERNEL_FIELDS_block_rq_complete(F) \
	F(u, ts_ns, 64, e->ts)                \
	F(s, tid, 32, e->tid)                 \
	F(s, pid, 32, e->pid)                 \
	F(u, dev, 64, e->arg)                 \
	F(u, sector, 64, e->nr)               \
	F(u, issue_ns, 64, e->start)          \
	F(s, error, 32, e->tid2)

/*
 * The latsnap provider: latsnap's own record of each outlier, so that the trace alone tells the
 * story. LS_EVENTS(EVENT): EVENT(name, type, arg) in the provider's order, the event's argument
 * being arg (const struct type *, events/events.h says what each member means), its fields
 * LS_FIELDS_name.
 */
#define LS_EVENTS(EVENT)                       \
	EVENT(outlier, ls_ev_outlier, o)       \
	EVENT(kernel_stack, ls_ev_stack, s)    \
	EVENT(user_stack, ls_ev_user_stack, u) \
	EVENT(bin_info, ls_ev_bin_info, b)     \
	EVENT(summary, ls_ev_summary, s)

/* outlier: an outlier's times, split, cause, waker and flags. */
#define LS_FIELDS_outlier(F)                           \
	F(string, kind, o->kind)                       \
	F(s, pid, 32, o->pid)                          \
	F(s, tid, 32, o->tid)                          \
	F(string, comm, o->comm)                       \
	F(text, syscall, o->syscall)                   \
	F(s, syscall_nr, 64, o->syscall_nr)            \
	F(u, start_ns, 64, o->start_ns)                \
	F(u, end_ns, 64, o->end_ns)                    \
	F(u, duration_ns, 64, o->end_ns - o->start_ns) \
	F(u, on_cpu_ns, 64, o->on_cpu_ns)              \
	F(u, blocked_ns, 64, o->blocked_ns)            \
	F(u, runqueue_ns, 64, o->runqueue_ns)          \
	F(u, switches, 32, o->switches)                \
	F(text, cause, o->cause)                       \
	F(s, waker_pid, 32, o->waker_pid)              \
	F(s, waker_tid, 32, o->waker_tid)              \
	F(text, waker_comm, o->waker_comm)             \
	F(u, signalled, 8, o->signalled)               \
	F(text, flags, o->flags)

/* kernel_stack: one kernel stack of the outlier (tid, end_ns), innermost first. */
#define LS_FIELDS_kernel_stack(F)         \
	F(s, tid, 32, s->tid)             \
	F(u, end_ns, 64, s->end_ns)       \
	F(string, role, s->role)          \
	F(u, index, 32, s->index)         \
	F(u, weight_ns, 64, s->weight_ns) \
	F(hexseq, ips, 32, s->ips, s->nr) \
	F(text, symbols, s->symbols)

/*
 * user_stack: the stack the preload library unwound in thread tid of process pid for the
 * outlier that ended at end_ns, innermost frame first. Addresses only: they are symbolized from
 * the process's mappings (latsnap's summary, or bin_info).
 */
#define LS_FIELDS_user_stack(F)           \
	F(s, tid, 32, u->tid)             \
	F(u, depth, 32, u->nr)            \
	F(u, truncated, 8, u->truncated)  \
	F(u, status, 8, u->status)        \
	F(u, unwind_ns, 64, u->unwind_ns) \
	F(s, pid, 32, u->pid)             \
	F(u, end_ns, 64, u->end_ns)       \
	F(hexseq, ips, 32, u->ips, u->nr)

/*
 * bin_info: an object mapped in process pid when its outliers were recorded: path, where it
 * was, its build-id. latsnap's targets do not run lttng-ust, so this, not lttng-ust's statedump,
 * is what lets a reader symbolize their stacks from the trace alone.
 */
#define LS_FIELDS_bin_info(F)     \
	F(s, pid, 32, b->pid)     \
	F(x, baddr, 64, b->base)  \
	F(u, memsz, 64, b->memsz) \
	F(string, path, b->path)  \
	F(bytes, build_id, 32, b->build_id, b->build_id_len)

/*
 * summary: part @part of @parts of snapshot @id's summary.json text, emitted just before the
 * snapshot is recorded, so that a trace sent to lttng-relayd carries its own summary. An event
 * must fit in a sub-buffer: a large summary comes as several parts, in order.
 */
#define LS_FIELDS_summary(F)      \
	F(string, id, s->id)      \
	F(u, part, 32, s->part)   \
	F(u, parts, 32, s->parts) \
	F(textseq, json, 32, s->text, s->len)

/* An event's full name as a trace spells it: LS_EVENT_NAME(latsnap, outlier). */
#define LS_EVENT_NAME(provider, name) #provider ":" #name

#endif /* LATSNAP_EVENTS_SCHEMA_H */
