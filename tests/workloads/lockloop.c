// SPDX-License-Identifier: GPL-2.0
/*
 * lockloop [MS=50] [N=100]
 *
 * Thread "holder" takes a pthread mutex and holds it MS ms (nanosleep), N times; thread
 * "waiter" blocks on the mutex each time in block_on_mutex(). Two barriers make each round
 * one wait of ~MS on the mutex. Known cause: the waiter waits N times ~MS in futex on the
 * mutex's address ("lock contention"); the holder sleeps N times ~MS in nanosleep.
 * The workload of `latsnap top`'s tests.
 * WL_LOG lines: "pid P", "tid holder T", "tid waiter T", "mutex 0xADDR".
 */
#include <errno.h>
#include <pthread.h>

#include "wl_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held, done;
static long hold_ms, rounds;

static void *holder_main(void *arg)
{
	long i;

	(void)arg;
	wl_role("holder");
	for (i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		pthread_barrier_wait(&held);
		wl_nanosleep_ms(hold_ms);
		pthread_mutex_unlock(&lock);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

static __attribute__((noinline)) void block_on_mutex(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static void *waiter_main(void *arg)
{
	long i;

	(void)arg;
	wl_role("waiter");
	for (i = 0; i < rounds; i++) {
		pthread_barrier_wait(&held);
		block_on_mutex();
		pthread_barrier_wait(&done);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w;

	wl_init_knobs("lockloop", argc, argv, WL_MS("MS", hold_ms, 50),
		      WL_KNOB("N", rounds, 100, 1, 100000000));
	wl_log("mutex %p", (void *)&lock);
	pthread_barrier_init(&held, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	wl_spawn(&h, holder_main, NULL, "pthread_create(holder)");
	wl_spawn(&w, waiter_main, NULL, "pthread_create(waiter)");
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	return 0;
}
