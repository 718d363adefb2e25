/*
 * shortcalls [N=1000000]
 *
 * N getppid() system calls as fast as possible (raw syscall, no libc cache).
 * Known cause: none. latsnap must report no outlier.
 */
#include "wl_common.h"

static __attribute__((noinline)) long many_short_calls(long n)
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

	wl_init("shortcalls", "[N=1000000]", argc, argv);
	n = wl_arg(1, 1000000, 0, 1000000000000L);
	t0 = wl_now_ns();
	many_short_calls(n);
	t1 = wl_now_ns();
	wl_say("%ld getppid in %.3f ms, %.1f ns each", n, (double)(t1 - t0) / 1e6,
	       n ? (double)(t1 - t0) / (double)n : 0.0);
	wl_log("calls %ld %llu %llu", n, (unsigned long long)t0, (unsigned long long)t1);
	return 0;
}
