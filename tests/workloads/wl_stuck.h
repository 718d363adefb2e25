// SPDX-License-Identifier: GPL-2.0
/*
 * What the workloads that hang for good (deadlock, pipestall, lockstall) share, on top of
 * wl_common.h: they stay stuck until killed, or until a time limit after which they end
 * themselves, still stuck, so that a test that forgets one leaves nothing behind.
 *
 *  - wl_exit_after(SECONDS): _exit(0) after SECONDS (0: never), from a SIGALRM handler: no
 *    extra thread to show up among the stuck ones. A child named in wl_stuck_child is killed
 *    and reaped first.
 *  - wl_stuck(ROLE): logs "stuck ROLE TID" just before the calling thread's final blocking call.
 *  - WL_STUCK_FN: a function that stays a frame of its own (not inlined, not cloned into a
 *    .constprop copy), so that the stacks the tests check name it.
 */
#ifndef LATSNAP_WL_STUCK_H
#define LATSNAP_WL_STUCK_H

#include "wl_common.h"
#include <sys/wait.h>

#ifdef __clang__
#define WL_STUCK_FN __attribute__((noinline))
#else
#define WL_STUCK_FN __attribute__((noinline, noclone))
#endif

/* The run's limit, the last knob of every stuck workload. */
#define WL_SECONDS(var) WL_KNOB("SECONDS", var, 30, 0, 86400)

/* A child process to end with the workload (pipestall's writer), reaped so that none lingers. */
static WL_UNUSED pid_t wl_stuck_child;

static WL_UNUSED void wl_alarm_exit(int sig)
{
	(void)sig;
	if (wl_stuck_child > 0) {
		kill(wl_stuck_child, SIGKILL);
		waitpid(wl_stuck_child, NULL, 0);
	}
	_exit(0);
}

static WL_UNUSED void wl_exit_after(long seconds)
{
	struct sigaction sa;

	if (!seconds) {
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wl_alarm_exit;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL)) {
		wl_die("sigaction", errno);
	}
	alarm((unsigned int)seconds);
}

static WL_UNUSED void wl_stuck(const char *role)
{
	wl_log("stuck %s %d", role, (int)wl_gettid());
}

#endif
