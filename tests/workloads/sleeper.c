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
	uint64_t ns = wl_timed_nap(ms);

	wl_say("slept %.3f ms", (double)ns / 1e6);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	long ms, n, gap, i;

	wl_init_knobs("sleeper", argc, argv, WL_MS("MS", ms, 100), WL_COUNT("N", n, 1),
		      WL_MS("GAP_MS", gap, 0));
	for (i = 0; i < n; i++) {
		slow_nap(ms);
		if (gap && i + 1 < n)
			wl_nanosleep_ms(gap);
	}
	return 0;
}
