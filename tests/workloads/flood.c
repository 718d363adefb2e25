// SPDX-License-Identifier: GPL-2.0
/*
 * flood [N=1000] [MS=8] [ODD_MS=60] [THREADS=1]
 *
 * A storm of identical outliers, and a different one in the middle of it: THREADS threads
 * "napper" each call nanosleep(MS) N times from storm_nap(), all at one wait site; when the first
 * is half way, the main thread reads a pipe that a third thread writes ODD_MS later (odd_wait():
 * a pipe read, another cause, another site; none when ODD_MS is 0). Known causes: N x THREADS
 * timer sleeps of ~MS, one pipe read of ~ODD_MS woken by "writer". latsnap's flood guard should
 * snapshot the storm once and the pipe read too.
 * WL_LOG lines: "pid P", "napper TID" each, "odd TID START_NS END_NS", "naps N" each.
 */
#include <pthread.h>

#include "wl_common.h"

static long nap_ms, odd_ms, naps, nr_threads;
static int pipe_fds[2];
static volatile int half_way;

static __attribute__((noinline)) void storm_nap(long ms)
{
	wl_nanosleep_ms(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

static void *napper(void *arg)
{
	long i;

	(void)arg;
	pthread_setname_np(pthread_self(), "napper");
	wl_log("napper %d", (int)wl_gettid());
	for (i = 0; i < naps; i++) {
		storm_nap(nap_ms);
		if (i == naps / 2) {
			__atomic_store_n(&half_way, 1, __ATOMIC_RELEASE);
		}
	}
	wl_log("naps %ld", naps);
	return NULL;
}

static void *writer(void *arg)
{
	char c = 'x';

	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	wl_nanosleep_ms(odd_ms);
	if (write(pipe_fds[1], &c, 1) != 1) {
		wl_die("write", errno);
	}
	return NULL;
}

static __attribute__((noinline)) void odd_wait(void)
{
	uint64_t t0 = wl_now_ns();
	pthread_t w;
	char c;

	if (pthread_create(&w, NULL, writer, NULL)) {
		wl_die("pthread_create", EAGAIN);
	}
	if (read(pipe_fds[0], &c, 1) != 1) {
		wl_die("read", errno);
	}
	wl_log("odd %d %llu %llu", (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)wl_now_ns());
	pthread_join(w, NULL);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t *t;
	long i;

	wl_init_knobs("flood", argc, argv, WL_COUNT("N", naps, 1000), WL_MS("MS", nap_ms, 8),
		      WL_MS("ODD_MS", odd_ms, 60), WL_COUNT("THREADS", nr_threads, 1));
	if (nr_threads < 1) {
		nr_threads = 1;
	}
	t = calloc((size_t)nr_threads, sizeof(*t));
	if (!t || pipe(pipe_fds)) {
		wl_die("pipe", errno);
	}
	/* A storm of a thousand threads fits in little memory. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 << 10);
	for (i = 0; i < nr_threads; i++) {
		if (pthread_create(&t[i], &attr, napper, NULL)) {
			wl_die("pthread_create", EAGAIN);
		}
	}
	if (odd_ms) {
		while (!__atomic_load_n(&half_way, __ATOMIC_ACQUIRE)) {
			wl_nanosleep_ms(1);
		}
		odd_wait();
	}
	for (i = 0; i < nr_threads; i++) {
		pthread_join(t[i], NULL);
	}
	free(t);
	return 0;
}
