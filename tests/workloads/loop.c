// SPDX-License-Identifier: GPL-2.0
/*
 * loop [N=10000000]
 *
 * N getppid() system calls as fast as possible (raw syscall, no libc cache),
 * then prints (stderr, -v) the cost per call. Known cause: none, so latsnap
 * must report no outlier. Compare a run under `latsnap record` with a plain run
 * to get the tracing overhead per syscall (bench/syscall-cost.sh).
 */
#include "wl_common.h"

static __attribute__((noinline)) long getppid_loop(long n)
{
	long i, sum = 0;

	for (i = 0; i < n; i++)
		sum += syscall(SYS_getppid);
	return sum;
}

int main(int argc, char **argv)
{
	long n;
	uint64_t t0, t1;

	wl_init_knobs("loop", argc, argv, WL_KNOB("N", n, 10000000, 0, 1000000000000L));
	t0 = wl_now_ns();
	getppid_loop(n);
	t1 = wl_now_ns();
	wl_say("%ld getppid in %.3f ms: %.1f ns/call", n, (double)(t1 - t0) / 1e6,
	       n ? (double)(t1 - t0) / (double)n : 0.0);
	wl_log("ns_per_call %.1f", n ? (double)(t1 - t0) / (double)n : 0.0);
	return 0;
}
