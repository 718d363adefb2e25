/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-tp.h - the LTTng-UST tracepoint provider of liblatsnap-events.so: latsnap's own record
 * of each outlier, so that the CTF trace alone tells the story (as latency_tracker's
 * syscall_latency and syscall_latency_stack events did). Field meanings: struct ls_ev_outlier and
 * struct ls_ev_stack in events.h, and OUTLIER in the contract.
 *
 * Re-read by lttng-ust's macros (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ), so the guard below is
 * the provider's, not a plain include guard.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER latsnap

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./events-tp.h"

#if !defined(LATSNAP_EVENTS_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LATSNAP_EVENTS_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

#include "events/events.h"

/* latsnap:outlier - an outlier's times, split, cause, waker and flags. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap, outlier,
	LTTNG_UST_TP_ARGS(const struct ls_ev_outlier *, o),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(kind, o->kind)
		lttng_ust_field_integer(int32_t, pid, o->pid)
		lttng_ust_field_integer(int32_t, tid, o->tid)
		lttng_ust_field_string(comm, o->comm)
		LS_FIELD_TEXT(syscall, o->syscall)
		lttng_ust_field_integer(int64_t, syscall_nr, o->syscall_nr)
		lttng_ust_field_integer(uint64_t, start_ns, o->start_ns)
		lttng_ust_field_integer(uint64_t, end_ns, o->end_ns)
		lttng_ust_field_integer(uint64_t, duration_ns, o->end_ns - o->start_ns)
		lttng_ust_field_integer(uint64_t, on_cpu_ns, o->on_cpu_ns)
		lttng_ust_field_integer(uint64_t, blocked_ns, o->blocked_ns)
		lttng_ust_field_integer(uint64_t, runqueue_ns, o->runqueue_ns)
		lttng_ust_field_integer(uint32_t, switches, o->switches)
		LS_FIELD_TEXT(cause, o->cause)
		lttng_ust_field_integer(int32_t, waker_pid, o->waker_pid)
		lttng_ust_field_integer(int32_t, waker_tid, o->waker_tid)
		LS_FIELD_TEXT(waker_comm, o->waker_comm)
		lttng_ust_field_integer(uint8_t, signalled, o->signalled)
		LS_FIELD_TEXT(flags, o->flags)
	)
)

/* latsnap:kernel_stack - one kernel stack of the outlier (@tid, @end_ns), innermost first. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap, kernel_stack,
	LTTNG_UST_TP_ARGS(const struct ls_ev_stack *, s),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, tid, s->tid)
		lttng_ust_field_integer(uint64_t, end_ns, s->end_ns)
		lttng_ust_field_string(role, s->role)
		lttng_ust_field_integer(uint32_t, index, s->index)
		lttng_ust_field_integer(uint64_t, weight_ns, s->weight_ns)
		lttng_ust_field_sequence_hex(uint64_t, ips, s->ips, uint32_t, s->nr)
		LS_FIELD_TEXT(symbols, s->symbols)
	)
)

/*
 * latsnap:user_stack - the stack the preload library unwound in thread @tid of process @pid for
 * the outlier that ended at @end_ns, innermost frame first. Addresses only: they are symbolized
 * from the process's mappings (latsnap's summary, or the statedump). The target's library reports
 * it through the kernel; latsnap records it here as it arrives.
 */
LTTNG_UST_TRACEPOINT_EVENT(latsnap, user_stack,
	LTTNG_UST_TP_ARGS(const struct ls_ev_user_stack *, u),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, tid, u->tid)
		lttng_ust_field_integer(uint32_t, depth, u->nr)
		lttng_ust_field_integer(uint8_t, truncated, u->truncated)
		lttng_ust_field_integer(uint8_t, status, u->status)
		lttng_ust_field_integer(uint64_t, unwind_ns, u->unwind_ns)
		lttng_ust_field_integer(int32_t, pid, u->pid)
		lttng_ust_field_integer(uint64_t, end_ns, u->end_ns)
		lttng_ust_field_sequence_hex(uint64_t, ips, u->ips, uint32_t, u->nr)
	)
)

/*
 * latsnap:bin_info - an object mapped in process @pid when its outliers were recorded: path,
 * where it was, its build-id. latsnap's targets do not run lttng-ust, so this, not lttng-ust's
 * statedump, is what lets a reader symbolize their stacks from the trace alone.
 */
LTTNG_UST_TRACEPOINT_EVENT(latsnap, bin_info,
	LTTNG_UST_TP_ARGS(const struct ls_ev_bin_info *, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, pid, b->pid)
		lttng_ust_field_integer_hex(uint64_t, baddr, b->base)
		lttng_ust_field_integer(uint64_t, memsz, b->memsz)
		lttng_ust_field_string(path, b->path)
		lttng_ust_field_sequence(uint8_t, build_id, b->build_id, uint32_t, b->build_id_len)
	)
)

/*
 * latsnap:summary - part @part of @parts of snapshot @id's summary.json text, emitted just before
 * the snapshot is recorded, so that a trace sent to lttng-relayd carries its own summary. An
 * event must fit in a sub-buffer: a large summary comes as several parts, in order.
 */
LTTNG_UST_TRACEPOINT_EVENT(latsnap, summary,
	LTTNG_UST_TP_ARGS(const struct ls_ev_summary *, s),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(id, s->id)
		lttng_ust_field_integer(uint32_t, part, s->part)
		lttng_ust_field_integer(uint32_t, parts, s->parts)
		lttng_ust_field_sequence_text(char, json, s->text, uint32_t, s->len)
	)
)

#endif /* LATSNAP_EVENTS_TP_H */

#include <lttng/tracepoint-event.h>
