// SPDX-License-Identifier: GPL-2.0
/*
 * sigblocker [MS=60] [N=3] [PRE=0] [SIG=60]
 *
 * A thread that blocks the preload library's signal. Run under
 * `latsnap record` with liblatsnap.so preloaded: calls nanosleep(MS) PRE
 * times with SIG unblocked (a control: latsnap may signal those), then blocks
 * SIG with pthread_sigmask and calls nanosleep(MS) N times. latsnap must not
 * send SIG to a thread that blocks it: the signal would stay pending, and be
 * delivered whenever the application unblocks it, far from the syscall it was
 * about. At the end the workload asks sigpending() whether SIG is pending.
 * WL_LOG lines: "pid P", "nap TID START_NS END_NS" per nap (PRE naps first),
 * "blocked NS" (when SIG was blocked), "pending 0|1".
 */
#include "wl_common.h"
#include <pthread.h>
#include <signal.h>

static __attribute__((noinline)) void slow_nap(long ms)
{
	wl_timed_nap(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	sigset_t set, pending;
	long ms, n, pre, sig, i;
	int err;

	wl_init_knobs("sigblocker", argc, argv, WL_MS("MS", ms, 60), WL_COUNT("N", n, 3),
		      WL_COUNT("PRE", pre, 0), WL_SIG("SIG", sig, 60));

	for (i = 0; i < pre; i++)
		slow_nap(ms);

	sigemptyset(&set);
	sigaddset(&set, (int)sig);
	err = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (err)
		wl_die("pthread_sigmask", err);
	wl_log("blocked %llu", (unsigned long long)wl_now_ns());

	for (i = 0; i < n; i++)
		slow_nap(ms);

	/* Still blocked: a signal latsnap sent anyway would be sitting here. */
	if (sigpending(&pending))
		wl_die("sigpending", errno);
	wl_log("pending %d", sigismember(&pending, (int)sig) == 1);
	wl_say("SIG %ld pending: %d", sig, sigismember(&pending, (int)sig) == 1);
	return 0;
}
