// SPDX-License-Identifier: GPL-2.0
/*
 * lockstall [SECONDS=30]
 *
 * A lock held by a thread that computes. Thread "holder" takes a mutex and then computes in
 * crunch(), in user space, without a syscall, for the whole run; thread "waiter" blocks on the
 * mutex in wait_for_lock(). The main thread blocks in pthread_join(). The holder is running (state
 * R) while the waiter waits in futex. After SECONDS (0: never) the process _exit(0)s, still
 * stuck. It keeps a CPU busy all along: keep SECONDS short on a shared machine.
 * WL_LOG lines: "pid P", "tid holder T", "tid waiter T", "mutex 0xADDR",
 * "fn crunch 0xADDR", "fn wait_for_lock 0xADDR", "stuck waiter T".
 */
#include "wl_stuck.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held;
static volatile uint64_t sink;

/* Forever: the arithmetic keeps it in user space, the volatile store keeps the loop. */
static WL_STUCK_FN void crunch(void)
{
	uint64_t x = 88172645463325252ull;

	for (;;) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sink = x;
	}
}

static void *holder_main(void *arg)
{
	(void)arg;
	wl_role("holder");
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&held);
	crunch();
	return NULL;
}

static WL_STUCK_FN void wait_for_lock(void)
{
	wl_stuck("waiter");
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	__asm__ volatile("" ::: "memory");
}

static void *waiter_main(void *arg)
{
	(void)arg;
	wl_role("waiter");
	pthread_barrier_wait(&held);
	wait_for_lock();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w;
	long seconds;

	wl_init_knobs("lockstall", argc, argv, WL_SECONDS(seconds));
	wl_exit_after(seconds);
	wl_log("mutex %p", (void *)&lock);
	wl_log_fn(crunch);
	wl_log_fn(wait_for_lock);
	pthread_barrier_init(&held, NULL, 2);
	wl_spawn(&h, holder_main, NULL, "pthread_create(holder)");
	wl_spawn(&w, waiter_main, NULL, "pthread_create(waiter)");
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	return 0;
}
