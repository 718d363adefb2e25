// SPDX-License-Identifier: GPL-2.0
/*
 * forknap [S=2] [MS=10] [MB=256]
 *
 * Naps of known places while another thread forks. For S seconds the main
 * thread calls nanosleep(MS) alternately from nap_a() and nap_b(), while
 * thread "forker" forks children that exit at once, and reaps them. Under
 * `latsnap record -t` below MS every nap is an outlier whose thread the
 * preload library is signalled to unwind, and many of those signals land while
 * the forker is inside fork(), when the library does not unwind (libunwind's
 * locks may be held by the forking thread): MB of memory, touched, make each
 * fork copy that many page tables, a millisecond or more. Each nap's stack must name its own
 * function all the same: a signal the library did not unwind must not leave
 * the next stack to be taken for its outlier.
 * WL_LOG lines: "pid P", "a TID START_NS END_NS" and "b TID START_NS END_NS"
 * per nap, "forks N".
 */
#include "wl_common.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

static atomic_int stop;

/*
 * Two nap functions of one body: the stacks must differ by the function, nothing else. Each
 * logs "TAG TID START END" and keeps its own frame.
 */
#define FORKNAP_NAP(fn, tag)                                        \
	static __attribute__((noinline)) void fn(long ms)           \
	{                                                           \
		struct timespec ts = wl_ms_to_ts(ms);               \
		uint64_t t0 = wl_now_ns();                          \
                                                                    \
		nanosleep(&ts, NULL);                               \
		wl_log_span(tag, t0, wl_now_ns());                  \
		__asm__ volatile("" ::: "memory");                  \
	}

FORKNAP_NAP(nap_a, "a")
FORKNAP_NAP(nap_b, "b")

static void *forker_main(void *arg)
{
	long forks = 0;
	pid_t child;

	(void)arg;
	wl_set_comm("forker");
	while (!atomic_load(&stop)) {
		child = fork();
		if (child == 0)
			_exit(0);
		if (child < 0)
			wl_die("fork", errno);
		if (waitpid(child, NULL, 0) != child)
			wl_die("waitpid", errno);
		forks++;
	}
	wl_log("forks %ld", forks);
	return NULL;
}

int main(int argc, char **argv)
{
	long s, ms, mb, i;
	uint64_t end;
	pthread_t forker;
	char *mem;

	wl_init_knobs("forknap", argc, argv, WL_COUNT("S", s, 2), WL_MS("MS", ms, 10),
		      WL_COUNT("MB", mb, 256));
	mem = mb ? malloc((size_t)mb << 20) : NULL;
	if (mb && !mem)
		wl_die("malloc", errno);
	if (mem)
		memset(mem, 1, (size_t)mb << 20);
	wl_spawn(&forker, forker_main, NULL, "pthread_create(forker)");
	end = wl_now_ns() + (uint64_t)s * 1000000000ULL;
	for (i = 0; wl_now_ns() < end; i++) {
		if (i & 1)
			nap_b(ms);
		else
			nap_a(ms);
	}
	atomic_store(&stop, 1);
	pthread_join(forker, NULL);
	free(mem);
	return 0;
}
