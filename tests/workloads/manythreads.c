// SPDX-License-Identifier: GPL-2.0
/*
 * manythreads [N=16] [MS=100]
 *
 * N threads (named "napperNN") meet at a barrier, then each calls
 * nanosleep(MS) at the same moment in nap_together(). Known cause: N
 * simultaneous timer sleeps; latsnap should report exactly N nanosleep
 * outliers with N distinct tids and lose none.
 * WL_LOG lines: "pid P", "nap TID START END" per thread.
 */
#include "wl_common.h"
#include <pthread.h>

static pthread_barrier_t start;
static long nap_ms;

static __attribute__((noinline)) void nap_together(long ms)
{
	wl_timed_nap(ms);
	__asm__ volatile("" ::: "memory");
}

static void *napper_main(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "napper%02ld", (long)(intptr_t)arg);
	wl_set_comm(name);
	pthread_barrier_wait(&start);
	nap_together(nap_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	long n;

	wl_init_knobs("manythreads", argc, argv, WL_KNOB("N", n, 16, 1, 4096),
		      WL_MS("MS", nap_ms, 100));
	pthread_barrier_init(&start, NULL, (unsigned)n);
	wl_join_all(wl_spawn_all(n, napper_main), n);
	return 0;
}
