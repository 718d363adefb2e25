// SPDX-License-Identifier: GPL-2.0
/*
 * burst [N=32] [ROUNDS=10] [MS=100] [PERIOD_MS=300] [-v]
 *
 * N threads (named "burstNN") are slow at the same moment, ROUNDS times: at the start of every
 * period each calls nanosleep(MS) in slow_together(). Between naps they wait in poll(), which is
 * on latsnap's idle list: so under `latsnap record -t T` with T < MS exactly N * ROUNDS syscalls
 * are outliers, in bursts of N. Stderr (-v) says how many naps were taken and how long the run
 * was. Exit 0; 1 when a set-up call fails; 2 for a bad argument.
 */
#include "../../tests/workloads/wl_common.h"
#include <poll.h>
#include <pthread.h>

static long nr_threads, rounds, nap_ms, period_ms;
static uint64_t start_ns;

/* poll() until @deadline (CLOCK_MONOTONIC ns): an idle wait, never an outlier. */
static void idle_until(uint64_t deadline)
{
	uint64_t now;

	while ((now = wl_now_ns()) < deadline) {
		poll(NULL, 0, (int)((deadline - now + 999999) / 1000000));
	}
}

static __attribute__((noinline)) void slow_together(long ms)
{
	wl_nanosleep_ms(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

static void *burst_main(void *arg)
{
	char name[16];
	long r;

	snprintf(name, sizeof(name), "burst%02ld", (long)(intptr_t)arg);
	wl_set_comm(name);
	for (r = 0; r < rounds; r++) {
		idle_until(start_ns + (uint64_t)(r * period_ms) * 1000000ull);
		slow_together(nap_ms);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *th;

	wl_init_knobs("burst", argc, argv, WL_KNOB("N", nr_threads, 32, 1, 4096),
		      WL_KNOB("ROUNDS", rounds, 10, 1, 1000000), WL_MS("MS", nap_ms, 100),
		      WL_KNOB("PERIOD_MS", period_ms, 300, 1, 3600000));
	/* The first burst once every thread surely runs. */
	start_ns = wl_now_ns() + 200000000ull;
	th = wl_spawn_all(nr_threads, burst_main);
	/* Joined only once all naps are over, so that the join itself is no long wait. */
	idle_until(start_ns + (uint64_t)((rounds - 1) * period_ms + nap_ms + 50) * 1000000ull);
	wl_join_all(th, nr_threads);
	wl_say("%ld threads, %ld rounds of %ld ms naps: %ld naps in %.1f s", nr_threads, rounds,
	       nap_ms, nr_threads * rounds, (double)(wl_now_ns() - start_ns) / 1e9);
	return 0;
}
