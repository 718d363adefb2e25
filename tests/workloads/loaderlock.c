// SPDX-License-Identifier: GPL-2.0
/*
 * loaderlock [ROUNDS=3] [HOLD_MS=80]
 *
 * The dynamic loader's lock against an application lock: the deadlock that a
 * signal handler calling dl_iterate_phdr() walks into. Each round, thread
 * "holder" takes mutex M and naps HOLD_MS in holder_nap(), an outlier that
 * latsnap signals as the nap ends, with M still held. Meanwhile thread
 * "iterator" calls dl_iterate_phdr() with a callback that takes M: it holds
 * the loader's lock while it waits for M. A handler in holder that waits for
 * the loader's lock never returns, M is never released, and both threads hang
 * (glibc's dlclose freeing memory in an arena another thread locked is the
 * same cycle; the callback stands for it deterministically). A watchdog, with
 * every signal blocked, ends a hung run with status 3.
 * WL_LOG lines: "pid P", "tid holder|iterator TID", "fn NAME 0xADDR" (runtime
 * address) for holder_nap, holder_main, take_app_lock and iterator_main,
 * "round I", then "done ROUNDS", or "hung NAMES" from the watchdog.
 */
#include "wl_common.h"
#include <link.h>
#include <pthread.h>
#include <signal.h>

#define GRACE_MS 5000

static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds, hold_ms;
/* Round the holder holds app_lock in (0: none yet), and rounds the iterator finished. */
static long held_round, iterated;
static int holder_done, iterator_done;

static long load(long *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

static void store(long *v, long value)
{
	__atomic_store_n(v, value, __ATOMIC_RELEASE);
}

static void nap_ms(long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);

	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}

static __attribute__((noinline)) void holder_nap(long ms)
{
	nap_ms(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

static void *holder_main(void *arg)
{
	long i;

	(void)arg;
	wl_log("tid holder %d", (int)wl_gettid());
	for (i = 1; i <= rounds; i++) {
		pthread_mutex_lock(&app_lock);
		store(&held_round, i);
		wl_log("round %ld", i);
		holder_nap(hold_ms);
		pthread_mutex_unlock(&app_lock);
		while (load(&iterated) < i) {
			nap_ms(1);
		}
	}
	__atomic_store_n(&holder_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Runs with the loader's lock held: waits for the holder's lock, then stops the walk. */
static int take_app_lock(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(void)data;
	pthread_mutex_lock(&app_lock);
	pthread_mutex_unlock(&app_lock);
	return 1;
}

static void *iterator_main(void *arg)
{
	long i;

	(void)arg;
	wl_log("tid iterator %d", (int)wl_gettid());
	for (i = 1; i <= rounds; i++) {
		while (load(&held_round) < i) {
			nap_ms(1);
		}
		/* Well inside the holder's nap, so that the walk waits there for app_lock. */
		nap_ms(hold_ms / 4);
		dl_iterate_phdr(take_app_lock, NULL);
		store(&iterated, i);
	}
	__atomic_store_n(&iterator_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *watchdog_main(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	nap_ms(rounds * (hold_ms * 2 + 100) + GRACE_MS);
	wl_log("hung%s%s", __atomic_load_n(&holder_done, __ATOMIC_ACQUIRE) ? "" : " holder",
	       __atomic_load_n(&iterator_done, __ATOMIC_ACQUIRE) ? "" : " iterator");
	fprintf(stderr, "loaderlock: still running %d ms after the rounds should have ended\n",
		GRACE_MS);
	_exit(3);
}

int main(int argc, char **argv)
{
	pthread_t holder, iterator, watchdog;

	wl_init_knobs("loaderlock", argc, argv, WL_KNOB("ROUNDS", rounds, 3, 1, 1000),
		      WL_KNOB("HOLD_MS", hold_ms, 80, 4, 10000));
	wl_log_fn(holder_nap);
	wl_log_fn(holder_main);
	wl_log_fn(take_app_lock);
	wl_log_fn(iterator_main);

	wl_spawn(&watchdog, watchdog_main, NULL, "pthread_create");
	wl_spawn(&holder, holder_main, NULL, "pthread_create");
	wl_spawn(&iterator, iterator_main, NULL, "pthread_create");
	pthread_join(holder, NULL);
	pthread_join(iterator, NULL);
	wl_log("done %ld", rounds);
	wl_say("%ld rounds", rounds);
	return 0;
}
