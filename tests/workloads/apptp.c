// SPDX-License-Identifier: GPL-2.0
/*
 * apptp [MS=30] [N=2] [LINGER=0]
 *
 * An application with its own lttng-ust tracepoint (latsnap_test:between, apptp-tp.h): N naps of
 * MS ms (nanosleep), the tracepoint fired between each two. latsnap's kernel context of the naps
 * and the application's own event, recorded live, must come out of babeltrace2 in the order they
 * happened: nap, between, nap. Then LINGER ms more in naps of 5 ms (shorter than a test's
 * threshold): a process's own buffers are in a per-PID session's snapshots only while it lives.
 * WL_LOG lines: "nap TID START_NS END_NS" per nap, "between TID NOW_NS" per tracepoint.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "apptp-tp.h"

#include "wl_common.h"

static __attribute__((noinline)) void slow_nap(long ms)
{
	wl_timed_nap(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	uint64_t now;
	long ms, n, linger, i;

	wl_init_knobs("apptp", argc, argv, WL_MS("MS", ms, 30), WL_COUNT("N", n, 2),
		      WL_MS("LINGER", linger, 0));
	for (i = 0; i < n; i++) {
		if (i) {
			now = wl_now_ns();
			lttng_ust_tracepoint(latsnap_test, between, (int32_t)wl_gettid(), now);
			wl_log("between %d %llu", (int)wl_gettid(), (unsigned long long)now);
		}
		slow_nap(ms);
	}
	for (i = 0; i < linger; i += 5) {
		struct timespec five = { 0, 5 * 1000000 };

		nanosleep(&five, NULL); /* not logged: the naps are the N above */
	}
	return 0;
}
