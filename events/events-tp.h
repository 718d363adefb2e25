/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-tp.h - the LTTng-UST tracepoint provider of liblatsnap-events.so: latsnap's own record
 * of each outlier, so that the CTF trace alone tells the story (as latency_tracker's
 * syscall_latency and syscall_latency_stack events did). Its events and their fields are
 * events/schema.h's LS_EVENTS, which recorder/timeline.c writes too; field meanings: the
 * structs of events.h, and OUTLIER in the contract.
 *
 * Re-read by lttng-ust's macros (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ), so the guard below is
 * the provider's, not a plain include guard; the table's macros are defined once and expand
 * anew at each reading.
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
#include "events/schema.h"

#define LS_TP_EVENT(name, type, arg)                                                      \
	LTTNG_UST_TRACEPOINT_EVENT(latsnap, name, LTTNG_UST_TP_ARGS(const struct type *, arg), \
		LTTNG_UST_TP_FIELDS(LS_FIELDS_##name(LS_TP_FIELD)))

LS_EVENTS(LS_TP_EVENT)

#endif /* LATSNAP_EVENTS_TP_H */

#include <lttng/tracepoint-event.h>
