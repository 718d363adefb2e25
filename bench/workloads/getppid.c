// SPDX-License-Identifier: GPL-2.0
/*
 * getppid [N=1000000]
 *
 * N getppid() system calls as fast as possible (raw syscall, no libc cache), like
 * tests/workloads/loop, and prints on stderr both costs per call:
 *   "getppid: N calls: W ns/call wall, C ns/call cpu"
 * The CPU time is the thread's own (CLOCK_THREAD_CPUTIME_ID): BPF programs on the syscall hooks
 * run in its context and count, while time other programs take on its CPU does not, so the
 * figure holds on a machine that is not quiet. Exit 0; 2 for a bad argument.
 */
#include "../../tests/workloads/wl_common.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) long getppid_loop(long n)
{
	long i, sum = 0;

	for (i = 0; i < n; i++) {
		sum += syscall(SYS_getppid);
	}
	return sum;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1, c0, c1;
	long n;

	wl_init_knobs("getppid", argc, argv, WL_KNOB("N", n, 1000000, 1, 1000000000000L));
	t0 = wl_now_ns();
	c0 = cpu_ns();
	getppid_loop(n);
	c1 = cpu_ns();
	t1 = wl_now_ns();
	fprintf(stderr, "getppid: %ld calls: %.1f ns/call wall, %.1f ns/call cpu\n", n,
		(double)(t1 - t0) / (double)n, (double)(c1 - c0) / (double)n);
	return 0;
}
