// SPDX-License-Identifier: GPL-2.0
/*
 * mutexwait [MS=150] [BUSY=0]
 *
 * Thread "holder" takes a pthread mutex and holds it MS ms (sleeping in
 * nanosleep, or spinning in user space when BUSY=1); thread "waiter" blocks
 * on the mutex meanwhile in block_on_mutex(). Known cause: a futex outlier of
 * ~MS in "waiter", woken by "holder" when it unlocks.
 * (The main thread's pthread_join is a futex wait of ~MS as well.)
 * WL_LOG lines: "pid P", "tid holder T", "tid waiter T",
 * "lock TID START END" for the waiter's lock.
 */
#include "wl_common.h"
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held;
static long hold_ms, busy;

static __attribute__((noinline)) void hold_lock_for(long ms)
{
	if (busy) {
		uint64_t end = wl_now_ns() + (uint64_t)ms * 1000000ull;

		while (wl_now_ns() < end)
			__asm__ volatile("" ::: "memory");
	} else {
		wl_nanosleep_ms(ms);
	}
}

static void *holder_main(void *arg)
{
	(void)arg;
	wl_role("holder");
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&held);
	hold_lock_for(hold_ms);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static __attribute__((noinline)) void block_on_mutex(void)
{
	uint64_t ns = wl_timed_lock(&lock);

	wl_say("waited %.3f ms for the mutex", (double)ns / 1e6);
}

static void *waiter_main(void *arg)
{
	(void)arg;
	wl_role("waiter");
	pthread_barrier_wait(&held);
	block_on_mutex();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w;

	wl_init_knobs("mutexwait", argc, argv, WL_MS("MS", hold_ms, 150),
		      WL_KNOB("BUSY", busy, 0, 0, 1));
	pthread_barrier_init(&held, NULL, 2);
	wl_spawn(&h, holder_main, NULL, "pthread_create(holder)");
	wl_spawn(&w, waiter_main, NULL, "pthread_create(waiter)");
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	return 0;
}
