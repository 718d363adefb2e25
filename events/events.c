// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - liblatsnap-events.so: instantiates the providers of events-tp.h and kernel-tp.h (in
 * one unit: each header's probes may be created only once) and exports the functions latsnap
 * calls through struct ls_events.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "events-tp.h"
#include "kernel-tp.h"

static void record_outlier(const struct ls_ev_outlier *o)
{
	lttng_ust_tracepoint(latsnap, outlier, o);
}

static void record_kernel_stack(const struct ls_ev_stack *s)
{
	lttng_ust_tracepoint(latsnap, kernel_stack, s);
}

/* Each event of LS_KERNEL_EVENTS (events/schema.h) for the kind of struct ls_ctx_event it is. */
#define RECORD_KERNEL_EVENT(name, kind)                            \
	case kind:                                                 \
		lttng_ust_tracepoint(latsnap_kernel, name, e, sc); \
		break;
#define RECORD_KERNEL_INSTANCE(cls, name, kind) RECORD_KERNEL_EVENT(name, kind)
#define RECORD_KERNEL_CLASS(cls)

static void record_kernel_event(const struct ls_ctx_event *e, const char *name)
{
	const char *sc = name ? name : "";

	switch (e->kind) {
		LS_KERNEL_EVENTS(RECORD_KERNEL_EVENT, RECORD_KERNEL_CLASS, RECORD_KERNEL_INSTANCE)
	default:
		break;
	}
}

static void record_summary(const struct ls_ev_summary *s)
{
	lttng_ust_tracepoint(latsnap, summary, s);
}

static void record_user_stack(const struct ls_ev_user_stack *u)
{
	lttng_ust_tracepoint(latsnap, user_stack, u);
}

static void record_bin_info(const struct ls_ev_bin_info *b)
{
	lttng_ust_tracepoint(latsnap, bin_info, b);
}

/*
 * Whether this process's session daemon registration is through and the session's events are
 * enabled in it: only then are the channel's stream and these events in the trace's metadata,
 * and what latsnap records kept. Every event an outlier writes: lttng-ust enables a session's
 * events one after the other, in the order the session daemon sent them, not latsnap's.
 */
static int events_ready(void)
{
	return lttng_ust_tracepoint_enabled(latsnap, outlier) &&
	       lttng_ust_tracepoint_enabled(latsnap, user_stack) &&
	       lttng_ust_tracepoint_enabled(latsnap, kernel_stack) &&
	       lttng_ust_tracepoint_enabled(latsnap_kernel, sched_switch) &&
	       lttng_ust_tracepoint_enabled(latsnap_kernel, syscall);
}

static int events_mappings_ready(void)
{
	return lttng_ust_tracepoint_enabled(latsnap, bin_info);
}

__attribute__((visibility("default"))) const struct ls_events latsnap_events = {
	.abi = LS_EVENTS_ABI,
	.size = sizeof(struct ls_events),
	.outlier = record_outlier,
	.kernel_stack = record_kernel_stack,
	.kernel_event = record_kernel_event,
	.summary = record_summary,
	.user_stack = record_user_stack,
	.bin_info = record_bin_info,
	.ready = events_ready,
	.mappings_ready = events_mappings_ready,
};
