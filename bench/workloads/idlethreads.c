// SPDX-License-Identifier: GPL-2.0
/*
 * idlethreads [N=10000] [SECONDS=60]
 *
 * N threads that wait on one condition variable nobody signals, as the idle workers of a large
 * thread pool do, then exit after SECONDS. For make bench: what the stall scan (record --hang)
 * costs with many threads on the machine, tracked or not. Small stacks, so that 10,000 fit.
 * Says "ready N" on stderr once every thread waits.
 */
#include "../../tests/workloads/wl_common.h"
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static long waiting;

static void *idle_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	waiting++;
	for (;;) {
		pthread_cond_wait(&never, &lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n, seconds, i, now;
	pthread_attr_t attr;
	pthread_t t;

	wl_init("idlethreads", "[N=10000] [SECONDS=60]", argc, argv);
	n = wl_arg(1, 10000, 1, 100000);
	seconds = wl_arg(2, 60, 1, 3600);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++) {
		if (pthread_create(&t, &attr, idle_main, NULL)) {
			fprintf(stderr, "idlethreads: pthread_create: thread %ld of %ld failed\n", i, n);
			return 1;
		}
	}
	for (;;) {
		pthread_mutex_lock(&lock);
		now = waiting;
		pthread_mutex_unlock(&lock);
		if (now == n) {
			break;
		}
		wl_nanosleep_ms(10);
	}
	fprintf(stderr, "ready %ld\n", n);
	sleep((unsigned int)seconds);
	return 0;
}
