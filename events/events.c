// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - liblatsnap-events.so: instantiates the provider of events-tp.h and exports the
 * functions latsnap calls through struct ls_events.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "events-tp.h"

static void record_outlier(const struct ls_ev_outlier *o)
{
	lttng_ust_tracepoint(latsnap, outlier, o);
}

static void record_kernel_stack(const struct ls_ev_stack *s)
{
	lttng_ust_tracepoint(latsnap, kernel_stack, s);
}

__attribute__((visibility("default"))) const struct ls_events latsnap_events = {
	.abi = LS_EVENTS_ABI,
	.size = sizeof(struct ls_events),
	.outlier = record_outlier,
	.kernel_stack = record_kernel_stack,
};
