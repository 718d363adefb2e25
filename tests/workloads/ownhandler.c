// SPDX-License-Identifier: GPL-2.0
/*
 * ownhandler [MS=60] [N=3] [K=5] [SIG=60]
 *
 * An application that takes over the preload library's signal. Run under
 * `latsnap record` with liblatsnap.so preloaded: it first calls nanosleep(MS)
 * once with the library's handler in place (an outlier latsnap signals, so the
 * library unwinds it), then installs its own SA_SIGINFO handler for SIG, which
 * counts its calls, calls nanosleep(MS) N more times and finally raises SIG to
 * itself K times with tgkill. latsnap must notice the takeover at the first
 * outlier after it and never signal the process again: a signal of latsnap's
 * would land in the application's handler, which did not ask for it. So the
 * handler must run exactly K times, all of them from tgkill (SI_TKILL), none
 * from the kernel (SI_KERNEL, how bpf_send_signal_thread() sends).
 * WL_LOG lines: "pid P", "nap TID START_NS END_NS" per nap,
 * "switch NS" (when its own handler went in), "raised K", "handled H",
 * "from_kernel F" (handler calls with si_code SI_KERNEL).
 */
#include "wl_common.h"
#include <signal.h>

static __attribute__((noinline)) void slow_nap(long ms)
{
	wl_timed_nap(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	long ms, n, k, sig, i;

	wl_init_knobs("ownhandler", argc, argv, WL_MS("MS", ms, 60), WL_COUNT("N", n, 3),
		      WL_COUNT("K", k, 5), WL_SIG("SIG", sig, 60));

	/* With the library's handler still in place: latsnap may signal this one. */
	slow_nap(ms);

	wl_count_signal((int)sig);
	wl_log("switch %llu", (unsigned long long)wl_now_ns());

	for (i = 0; i < n; i++)
		slow_nap(ms);

	/*
	 * The application's own use of the signal still works: each tgkill is
	 * delivered (and handled) before the call returns to us.
	 */
	for (i = 0; i < k; i++) {
		if (syscall(SYS_tgkill, getpid(), wl_gettid(), (int)sig))
			wl_die("tgkill", errno);
	}
	wl_log("raised %ld", k);
	wl_log("handled %d", (int)wl_handled);
	wl_log("from_kernel %d", (int)wl_from_kernel);
	wl_say("raised %ld, handled %d, %d of them from the kernel", k, (int)wl_handled,
	       (int)wl_from_kernel);
	return 0;
}
