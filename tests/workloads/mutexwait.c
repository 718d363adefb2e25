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
static long hold_ms;
static int busy;

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
	pthread_setname_np(pthread_self(), "holder");
	wl_log("tid holder %d", (int)wl_gettid());
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&held);
	hold_lock_for(hold_ms);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static __attribute__((noinline)) void block_on_mutex(void)
{
	uint64_t t0 = wl_now_ns(), t1;

	pthread_mutex_lock(&lock);
	t1 = wl_now_ns();
	pthread_mutex_unlock(&lock);
	wl_log("lock %d %llu %llu", (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)t1);
	wl_say("waited %.3f ms for the mutex", (double)(t1 - t0) / 1e6);
}

static void *waiter_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	wl_log("tid waiter %d", (int)wl_gettid());
	pthread_barrier_wait(&held);
	block_on_mutex();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w;
	int err;

	wl_init("mutexwait", "[MS=150] [BUSY=0]", argc, argv);
	hold_ms = wl_arg(1, 150, 0, 3600000);
	busy = (int)wl_arg(2, 0, 0, 1);
	pthread_barrier_init(&held, NULL, 2);
	if ((err = pthread_create(&h, NULL, holder_main, NULL)))
		wl_die("pthread_create(holder)", err);
	if ((err = pthread_create(&w, NULL, waiter_main, NULL)))
		wl_die("pthread_create(waiter)", err);
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	return 0;
}
