/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel-tp.h - the latsnap_kernel provider of liblatsnap-events.so: the kernel's view that the
 * BPF side streams (struct ls_ctx_event in latsnap.h), where no LTTng kernel tracer can give it.
 * Every event carries the kernel's own time of what happened (ts_ns, CLOCK_MONOTONIC): the
 * event's LTTng timestamp is when latsnap wrote it, a little later.
 *
 * Re-read by lttng-ust's macros (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ), so the guard below is
 * the provider's, not a plain include guard.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER latsnap_kernel

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./kernel-tp.h"

#if !defined(LATSNAP_KERNEL_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LATSNAP_KERNEL_TP_H

#include <stdint.h>
#include <linux/types.h>
#include <lttng/tracepoint.h>

#include "include/latsnap.h"
#include "events/events.h"

/* sched_switch: prev leaves the CPU (prev_state 0 or preempted: still runnable), next runs. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap_kernel, sched_switch,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e, const char *, syscall),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ts_ns, e->ts)
		lttng_ust_field_integer(uint32_t, cpu, e->cpu)
		lttng_ust_field_integer(int32_t, prev_tid, e->tid)
		lttng_ust_field_integer(int32_t, prev_pid, e->pid)
		lttng_ust_field_array_text(char, prev_comm, e->comm, LS_TASK_COMM_LEN)
		lttng_ust_field_integer(int64_t, prev_state, e->arg)
		lttng_ust_field_integer(uint8_t, preempted, e->preempted)
		LS_FIELD_TEXT(prev_syscall, syscall)
		lttng_ust_field_integer(int32_t, next_tid, e->tid2)
		lttng_ust_field_integer(int32_t, next_pid, e->pid2)
		lttng_ust_field_array_text(char, next_comm, e->comm2, LS_TASK_COMM_LEN)
		lttng_ust_field_sequence_hex(uint64_t, prev_stack, e->ips, uint16_t, e->nr_ips)
	)
)

/* sched_wakeup: tid is woken by waker_tid or, when in_irq, by an interrupt that landed on it. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap_kernel, sched_wakeup,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ts_ns, e->ts)
		lttng_ust_field_integer(uint32_t, cpu, e->cpu)
		lttng_ust_field_integer(int32_t, tid, e->tid)
		lttng_ust_field_integer(int32_t, pid, e->pid)
		lttng_ust_field_array_text(char, comm, e->comm, LS_TASK_COMM_LEN)
		lttng_ust_field_integer(int32_t, waker_tid, e->tid2)
		lttng_ust_field_integer(int32_t, waker_pid, e->pid2)
		lttng_ust_field_array_text(char, waker_comm, e->comm2, LS_TASK_COMM_LEN)
		lttng_ust_field_integer(uint8_t, in_irq, e->arg)
		lttng_ust_field_sequence_hex(uint64_t, waker_stack, e->ips, uint16_t, e->nr_ips)
	)
)

/* syscall: one that lasted at least the floor, from start_ns to ts_ns. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap_kernel, syscall,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e, const char *, name),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ts_ns, e->ts)
		lttng_ust_field_integer(int32_t, tid, e->tid)
		lttng_ust_field_integer(int32_t, pid, e->pid)
		lttng_ust_field_array_text(char, comm, e->comm, LS_TASK_COMM_LEN)
		lttng_ust_field_integer(int64_t, nr, e->nr)
		LS_FIELD_TEXT(name, name)
		lttng_ust_field_integer(uint64_t, start_ns, e->start)
		lttng_ust_field_integer(uint64_t, duration_ns, e->ts - e->start)
		lttng_ust_field_integer(int64_t, ret, e->arg)
	)
)

LTTNG_UST_TRACEPOINT_EVENT_CLASS(latsnap_kernel, task_class,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ts_ns, e->ts)
		lttng_ust_field_integer(int32_t, tid, e->tid)
		lttng_ust_field_integer(int32_t, pid, e->pid)
		lttng_ust_field_array_text(char, comm, e->comm, LS_TASK_COMM_LEN)
		lttng_ust_field_integer(int32_t, other_tid, e->tid2)
		lttng_ust_field_integer(int32_t, other_pid, e->pid2)
		lttng_ust_field_array_text(char, other_comm, e->comm2, LS_TASK_COMM_LEN)
	)
)

/* process_fork: other_* is the child. */
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(latsnap_kernel, task_class, latsnap_kernel, process_fork,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(latsnap_kernel, task_class, latsnap_kernel, process_exec,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(latsnap_kernel, task_class, latsnap_kernel, process_exit,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e))

/*
 * interest: from ts_ns on, the context of tid (not tracked) is streamed too, because it woke
 * other_tid (reason "waker") or tracked other_tid woke it ("wakee"). Before, its record is empty.
 */
LTTNG_UST_TRACEPOINT_EVENT(latsnap_kernel, interest,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ts_ns, e->ts)
		lttng_ust_field_integer(int32_t, tid, e->tid)
		lttng_ust_field_integer(int32_t, pid, e->pid)
		lttng_ust_field_array_text(char, comm, e->comm, LS_TASK_COMM_LEN)
		lttng_ust_field_integer(int32_t, other_tid, e->tid2)
		lttng_ust_field_integer(int32_t, other_pid, e->pid2)
		lttng_ust_field_array_text(char, other_comm, e->comm2, LS_TASK_COMM_LEN)
		lttng_ust_field_string(reason, e->arg == LS_INTEREST_WAKER ? "waker" : "wakee")
	)
)

/* block_rq_issue: a request of a streamed thread; dev is MAJOR << 20 | MINOR. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap_kernel, block_rq_issue,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ts_ns, e->ts)
		lttng_ust_field_integer(int32_t, tid, e->tid)
		lttng_ust_field_integer(int32_t, pid, e->pid)
		lttng_ust_field_array_text(char, comm, e->comm, LS_TASK_COMM_LEN)
		lttng_ust_field_integer(uint64_t, dev, e->arg)
		lttng_ust_field_integer(uint64_t, sector, e->nr)
		lttng_ust_field_integer(uint64_t, bytes, e->start)
		lttng_ust_field_integer(uint32_t, op, e->tid2)
	)
)

/* block_rq_complete: that request done; tid issued it at issue_ns. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap_kernel, block_rq_complete,
	LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, ts_ns, e->ts)
		lttng_ust_field_integer(int32_t, tid, e->tid)
		lttng_ust_field_integer(int32_t, pid, e->pid)
		lttng_ust_field_integer(uint64_t, dev, e->arg)
		lttng_ust_field_integer(uint64_t, sector, e->nr)
		lttng_ust_field_integer(uint64_t, issue_ns, e->start)
		lttng_ust_field_integer(int32_t, error, e->tid2)
	)
)

#endif /* LATSNAP_KERNEL_TP_H */

#include <lttng/tracepoint-event.h>
