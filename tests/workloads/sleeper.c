// SPDX-License-Identifier: GPL-2.0
/*
 * sleeper [MS=100] [N=1] [GAP_MS=0]
 *
 * Calls nanosleep(MS) N times from slow_nap(), with an optional on-CPU-free
 * pause of GAP_MS (also nanosleep, short) between naps. Known cause: a timer
 * sleep; latsnap should report N nanosleep/clock_nanosleep outliers of ~MS,
 * blocked time dominant, woken by the timer interrupt.
 * WL_LOG lines: "pid P", "nap TID START_NS END_NS" per nap.
 */
#include "wl_common.h"

static __attribute__((noinline)) void slow_nap(long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);
	uint64_t t0 = wl_now_ns(), t1;

	nanosleep(&ts, NULL);
	t1 = wl_now_ns();
	wl_log("nap %d %llu %llu", (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)t1);
	wl_say("slept %.3f ms", (double)(t1 - t0) / 1e6);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	long ms, n, gap, i;

	wl_init("sleeper", "[MS=100] [N=1] [GAP_MS=0]", argc, argv);
	ms = wl_arg(1, 100, 0, 3600000);
	n = wl_arg(2, 1, 0, 1000000);
	gap = wl_arg(3, 0, 0, 3600000);
	for (i = 0; i < n; i++) {
		slow_nap(ms);
		if (gap && i + 1 < n)
			wl_nanosleep_ms(gap);
	}
	return 0;
}
