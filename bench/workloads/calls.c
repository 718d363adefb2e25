// SPDX-License-Identifier: GPL-2.0
/*
 * calls [N=200000]
 *
 * N calls of a noinline function that does nearly nothing, timed: for make bench, what a request
 * probe pair (record --request uprobe:PATH:request_op, its entry and its return) costs each call.
 * Prints "ns_per_call X" on stderr.
 */
#include "../../tests/workloads/wl_common.h"

__attribute__((noinline)) int request_op(int i)
{
	__asm__ volatile("" ::: "memory");
	return i + 1;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1;
	long n, i;
	int acc = 0;

	wl_init("calls", "[N=200000]", argc, argv);
	n = wl_arg(1, 200000, 1, 1000000000);
	t0 = wl_now_ns();
	for (i = 0; i < n; i++) {
		acc = request_op(acc);
	}
	t1 = wl_now_ns();
	fprintf(stderr, "ns_per_call %.1f (%d)\n", (double)(t1 - t0) / (double)n, acc);
	return 0;
}
