/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events.h - what latsnap hands to liblatsnap-events.so, the library that puts latsnap's own
 * records into the LTTng trace as LTTng-UST events. latsnap loads it with dlopen() only once its
 * session exists (lttng-ust registers with the session daemon when it is loaded), so that the
 * program itself never links lttng-ust. Plain types only: both sides compile this header.
 */
#ifndef LATSNAP_EVENTS_H
#define LATSNAP_EVENTS_H

#include <stdint.h>
#include <linux/types.h>

#include "include/latsnap.h"

/*
 * Bumped whenever a structure below or struct ls_events changes. Members are only ever added at
 * the end of struct ls_events: latsnap takes a library from LS_EVENTS_ABI_MIN on and calls only
 * what its @size covers.
 */
#define LS_EVENTS_ABI 6
#define LS_EVENTS_ABI_MIN 2

/*
 * LS_FIELD_TEXT - a text field of a latsnap event that may be empty: a sequence of chars with
 * its length, not an lttng_ust_field_string(). libbabeltrace2 2.0.4 (Debian 12's, under
 * babeltrace2 and every reader here) leaves an empty string, or an empty text sequence, holding
 * the value the same field had in the event of that class before it (an idle task's switch
 * showed the previous switch's "read"). A sequence's length ("_NAME_length") says it was empty:
 * the trace reader (trace/ctf-reader.c) goes by it.
 */
#define LS_FIELD_TEXT(_name, _str) \
	lttng_ust_field_sequence_text(char, _name, _str, uint16_t, ls_text_len(_str))

/* The length of @s for LS_FIELD_TEXT(): NULL is empty, and a sequence holds at most 65535. */
static inline uint16_t ls_text_len(const char *s)
{
	size_t n = s ? __builtin_strlen(s) : 0;

	return n > 65535 ? 65535 : (uint16_t)n;
}

/*
 * LS_TP_FIELD - a field of events/schema.h's tables (F(kind, name, ...)) as the providers declare
 * it, inside LTTNG_UST_TP_FIELDS(): lttng-ust re-reads a provider header once per thing it makes
 * of it, each time with its lttng_ust_field_*() macros defined anew, and these expand to them
 * only there, so each reading takes its own.
 */
#define LS_TP_FIELD(kind, name, ...) LS_TP_##kind(name, __VA_ARGS__)
#define LS_TP_u(name, bits, v) lttng_ust_field_integer(uint##bits##_t, name, v)
#define LS_TP_s(name, bits, v) lttng_ust_field_integer(int##bits##_t, name, v)
#define LS_TP_x(name, bits, v) lttng_ust_field_integer_hex(uint##bits##_t, name, v)
#define LS_TP_string(name, v) lttng_ust_field_string(name, v)
#define LS_TP_text(name, v) LS_FIELD_TEXT(name, v)
#define LS_TP_comm(name, v) lttng_ust_field_array_text(char, name, v, LS_TASK_COMM_LEN)
#define LS_TP_hexseq(name, bits, p, n) \
	lttng_ust_field_sequence_hex(uint64_t, name, p, uint##bits##_t, n)
#define LS_TP_bytes(name, bits, p, n) lttng_ust_field_sequence(uint8_t, name, p, uint##bits##_t, n)
#define LS_TP_textseq(name, bits, p, n) \
	lttng_ust_field_sequence_text(char, name, p, uint##bits##_t, n)

/* The symbol latsnap looks up in the library. */
#define LS_EVENTS_SYMBOL "latsnap_events"

/**
 * struct ls_ev_outlier - one outlier, as latsnap:outlier records it (see OUTLIER in the contract)
 * @kind: "syscall" or "sleep"
 * @syscall: its name, "" for a sleep
 * @flags: the outlier's flags joined with "; "
 * @waker_comm: "" without a waker (then @waker_pid and @waker_tid are 0)
 */
struct ls_ev_outlier {
	const char *kind;
	const char *comm;
	const char *syscall;
	const char *cause;
	const char *flags;
	const char *waker_comm;
	int32_t pid;
	int32_t tid;
	int32_t waker_pid;
	int32_t waker_tid;
	int64_t syscall_nr;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t on_cpu_ns;
	uint64_t blocked_ns;
	uint64_t runqueue_ns;
	uint32_t switches;
	uint8_t signalled;
};

/**
 * struct ls_ev_stack - one kernel stack of an outlier, as latsnap:kernel_stack records it
 * @tid, @end_ns: the outlier it belongs to
 * @role: "wait" (where the thread waited, weighted) or "waker" (where its waker woke it)
 * @index: its rank among the outlier's stacks of that role
 * @ips: @nr addresses, innermost first
 * @symbols: the same frames symbolized, "symbol+0xoff" joined with ";" innermost first
 */
struct ls_ev_stack {
	const char *role;
	const char *symbols;
	const uint64_t *ips;
	uint64_t end_ns;
	uint64_t weight_ns;
	int32_t tid;
	uint32_t index;
	uint32_t nr;
};

/**
 * struct ls_ev_summary - one part of a snapshot's summary.json, as latsnap:summary records it
 * @id: the snapshot's id
 * @part: this part's index, from 0
 * @parts: how many parts the summary has
 * @text: @len bytes of the JSON text (not NUL-terminated)
 */
struct ls_ev_summary {
	const char *id;
	const char *text;
	uint32_t part;
	uint32_t parts;
	uint32_t len;
};

/**
 * struct ls_ev_user_stack - an unwound user stack, as latsnap:user_stack records it
 * @pid, @tid, @end_ns: the outlier it belongs to
 * @ips: @nr addresses, innermost first
 * @status: enum ls_unwind_status; @truncated: the walk stopped at LATSNAP_DEPTH
 * @unwind_ns: how long the handler's walk took
 */
struct ls_ev_user_stack {
	const uint64_t *ips;
	uint64_t end_ns;
	uint64_t unwind_ns;
	int32_t pid;
	int32_t tid;
	uint32_t nr;
	uint8_t status;
	uint8_t truncated;
};

/**
 * struct ls_ev_bin_info - one object mapped in a process, as latsnap:bin_info records it (what
 * lttng_ust_statedump:bin_info and build_id say of a process that runs lttng-ust)
 * @base: where its first mapping starts; @memsz: up to the end of its last
 * @build_id: @build_id_len bytes, 0 when it has none
 */
struct ls_ev_bin_info {
	const char *path;
	const uint8_t *build_id;
	uint64_t base;
	uint64_t memsz;
	int32_t pid;
	uint32_t build_id_len;
};

/**
 * struct ls_events - what the library exports as LS_EVENTS_SYMBOL
 * @abi: LS_EVENTS_ABI of the library; latsnap refuses another
 * @size: sizeof(struct ls_events) of the library
 * @outlier: records latsnap:outlier
 * @kernel_stack: records latsnap:kernel_stack
 * @kernel_event: records an event of the kernel context stream as latsnap_kernel:*, @name being
 *	the syscall's name (a switch's prev_syscall, a syscall's name) or NULL
 * @summary: records latsnap:summary (ABI 3 on)
 * @user_stack: records latsnap:user_stack (ABI 4 on)
 * @bin_info: records latsnap:bin_info (ABI 4 on)
 * @ready: whether the session's events are enabled in this process, its registration with the
 *	session daemon through (ABI 5 on)
 * @mappings_ready: the same, for a session that enables only latsnap:bin_info, latsnap writing
 *	its other events into a trace of its own (ABI 6 on)
 */
struct ls_events {
	uint32_t abi;
	uint32_t size;
	void (*outlier)(const struct ls_ev_outlier *o);
	void (*kernel_stack)(const struct ls_ev_stack *s);
	void (*kernel_event)(const struct ls_ctx_event *e, const char *name);
	void (*summary)(const struct ls_ev_summary *s);
	void (*user_stack)(const struct ls_ev_user_stack *u);
	void (*bin_info)(const struct ls_ev_bin_info *b);
	int (*ready)(void);
	int (*mappings_ready)(void);
};

#endif /* LATSNAP_EVENTS_H */
