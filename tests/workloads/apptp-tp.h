/* SPDX-License-Identifier: GPL-2.0 */
/*
 * apptp-tp.h - the lttng-ust provider of tests/workloads/apptp.c: an application's own
 * tracepoint, recorded live by LTTng, that the tests line up with latsnap's kernel context.
 *
 * Re-read by lttng-ust's macros (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ), so the guard below is
 * the provider's, not a plain include guard.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER latsnap_test

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./apptp-tp.h"

#if !defined(APPTP_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define APPTP_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* between: fired between two naps; now_ns is the app's own CLOCK_MONOTONIC reading. */
LTTNG_UST_TRACEPOINT_EVENT(latsnap_test, between,
	LTTNG_UST_TP_ARGS(int32_t, tid, uint64_t, now_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, tid, tid)
		lttng_ust_field_integer(uint64_t, now_ns, now_ns)
	)
)

#endif /* APPTP_TP_H */

#include <lttng/tracepoint-event.h>
