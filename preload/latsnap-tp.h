/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latsnap-tp.h - the LTTng-UST tracepoint provider of the preload library.
 * The status values are enum ls_unwind_status (latsnap.h).
 *
 * Re-read by lttng-ust's macros (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ), so the guard below is
 * the provider's, not a plain include guard.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER latsnap

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./latsnap-tp.h"

#if !defined(LATSNAP_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LATSNAP_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/*
 * latsnap:user_stack - the user stack of thread @tid where its slow syscall returned, innermost
 * frame first. Addresses only: they are symbolized outside the target, from the statedump.
 */
LTTNG_UST_TRACEPOINT_EVENT(latsnap, user_stack,
	LTTNG_UST_TP_ARGS(int32_t, tid, const uint64_t *, ips, uint32_t, depth, uint8_t, truncated,
			  uint8_t, status, uint64_t, unwind_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, tid, tid)
		lttng_ust_field_integer(uint32_t, depth, depth)
		lttng_ust_field_integer(uint8_t, truncated, truncated)
		lttng_ust_field_integer(uint8_t, status, status)
		lttng_ust_field_integer(uint64_t, unwind_ns, unwind_ns)
		lttng_ust_field_sequence_hex(uint64_t, ips, ips, uint32_t, depth)
	)
)

#endif /* LATSNAP_TP_H */

#include <lttng/tracepoint-event.h>
