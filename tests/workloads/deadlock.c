// SPDX-License-Identifier: GPL-2.0
/*
 * deadlock [SECONDS=30]
 *
 * An ABBA deadlock. Thread "a" takes mutex A, then blocks on B in lock_a_then_b(); thread "b"
 * takes B, then blocks on A in lock_b_then_a(). A barrier between the first lock and the second
 * makes the deadlock certain. The main thread blocks in pthread_join(). Each of "a" and "b" waits
 * in futex for a mutex the other holds (its __owner). After SECONDS (0: never) the process
 * _exit(0)s, still stuck.
 * WL_LOG lines: "pid P", "tid a T", "tid b T", "mutex A 0xADDR", "mutex B 0xADDR",
 * "fn lock_a_then_b 0xADDR", "fn lock_b_then_a 0xADDR", "stuck a T", "stuck b T".
 */
#include "wl_stuck.h"

/* deadlock-nofp.c builds this file again without frame pointers, under its own name. */
#ifndef DEADLOCK_NAME
#define DEADLOCK_NAME "deadlock"
#endif

static pthread_mutex_t mutex_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mutex_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;

static WL_STUCK_FN void lock_a_then_b(void)
{
	pthread_mutex_lock(&mutex_a);
	pthread_barrier_wait(&both_hold);
	wl_stuck("a");
	pthread_mutex_lock(&mutex_b);
	/* Never reached: "b" holds B until it gets A. */
	pthread_mutex_unlock(&mutex_b);
	pthread_mutex_unlock(&mutex_a);
	__asm__ volatile("" ::: "memory");
}

static WL_STUCK_FN void lock_b_then_a(void)
{
	pthread_mutex_lock(&mutex_b);
	pthread_barrier_wait(&both_hold);
	wl_stuck("b");
	pthread_mutex_lock(&mutex_a);
	pthread_mutex_unlock(&mutex_a);
	pthread_mutex_unlock(&mutex_b);
	__asm__ volatile("" ::: "memory");
}

static void *a_main(void *arg)
{
	(void)arg;
	wl_role("a");
	lock_a_then_b();
	return NULL;
}

static void *b_main(void *arg)
{
	(void)arg;
	wl_role("b");
	lock_b_then_a();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	long seconds;

	wl_init_knobs(DEADLOCK_NAME, argc, argv, WL_SECONDS(seconds));
	wl_exit_after(seconds);
	wl_log("mutex A %p", (void *)&mutex_a);
	wl_log("mutex B %p", (void *)&mutex_b);
	wl_log_fn(lock_a_then_b);
	wl_log_fn(lock_b_then_a);
	pthread_barrier_init(&both_hold, NULL, 2);
	wl_spawn(&a, a_main, NULL, "pthread_create(a)");
	wl_spawn(&b, b_main, NULL, "pthread_create(b)");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
