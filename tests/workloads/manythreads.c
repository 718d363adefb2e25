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
	struct timespec ts = wl_ms_to_ts(ms);
	uint64_t t0 = wl_now_ns(), t1;

	nanosleep(&ts, NULL);
	t1 = wl_now_ns();
	wl_log("nap %d %llu %llu", (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)t1);
	__asm__ volatile("" ::: "memory");
}

static void *napper_main(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "napper%02ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start);
	nap_together(nap_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *th;
	pthread_attr_t attr;
	long n, i;
	int err;

	wl_init("manythreads", "[N=16] [MS=100]", argc, argv);
	n = wl_arg(1, 16, 1, 4096);
	nap_ms = wl_arg(2, 100, 0, 3600000);
	th = calloc((size_t)n, sizeof(*th));
	if (!th)
		wl_die("calloc", errno);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (i = 0; i < n; i++)
		if ((err = pthread_create(&th[i], &attr, napper_main, (void *)(intptr_t)i)))
			wl_die("pthread_create", err);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
