/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel-tp.h - the latsnap_kernel provider of liblatsnap-events.so: the kernel's view that the
 * BPF side streams (struct ls_ctx_event in latsnap.h), where no LTTng kernel tracer can give it.
 * Its events and their fields are events/schema.h's LS_KERNEL_EVENTS, which recorder/timeline.c
 * writes too. Every event carries the kernel's own time of what happened (ts_ns,
 * CLOCK_MONOTONIC): the event's LTTng timestamp is when latsnap wrote it, a little later.
 *
 * Re-read by lttng-ust's macros (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ), so the guard below is
 * the provider's, not a plain include guard; the table's macros are defined once and expand
 * anew at each reading.
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
#include "events/schema.h"

/*
 * Every event takes the syscall's name (sc), so that events.c calls each alike; one whose fields
 * do not name it marks it unused, which writes nothing.
 */
#define LS_TP_KERNEL_ARGS LTTNG_UST_TP_ARGS(const struct ls_ctx_event *, e, const char *, sc)

#define LS_TP_KERNEL_EVENT(name, kind)                                                    \
	LTTNG_UST_TRACEPOINT_EVENT(latsnap_kernel, name, LS_TP_KERNEL_ARGS,               \
		LTTNG_UST_TP_FIELDS(LS_KERNEL_FIELDS_##name(LS_TP_FIELD)                  \
				    lttng_ust_field_unused(sc)))
#define LS_TP_KERNEL_CLASS(cls)                                                           \
	LTTNG_UST_TRACEPOINT_EVENT_CLASS(latsnap_kernel, cls##_class, LS_TP_KERNEL_ARGS,  \
		LTTNG_UST_TP_FIELDS(LS_KERNEL_FIELDS_##cls(LS_TP_FIELD)                   \
				    lttng_ust_field_unused(sc)))
#define LS_TP_KERNEL_INSTANCE(cls, name, kind)                                            \
	LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(latsnap_kernel, cls##_class, latsnap_kernel,  \
					    name, LS_TP_KERNEL_ARGS)

LS_KERNEL_EVENTS(LS_TP_KERNEL_EVENT, LS_TP_KERNEL_CLASS, LS_TP_KERNEL_INSTANCE)

#endif /* LATSNAP_KERNEL_TP_H */

#include <lttng/tracepoint-event.h>
