// SPDX-License-Identifier: GPL-2.0
/*
 * epollidle [T=200] [N=3]
 *
 * N epoll_wait() calls with a timeout of T ms on an empty epoll set, from
 * idle_wait(). Known cause: waiting for work, not latency: no outlier by
 * default; with --include-idle, N epoll_wait (or epoll_pwait) outliers of ~T.
 */
#include "wl_common.h"
#include <sys/epoll.h>

static __attribute__((noinline)) int idle_wait(int ep, long ms)
{
	struct epoll_event ev;
	uint64_t t0 = wl_now_ns(), t1;
	int r = epoll_wait(ep, &ev, 1, (int)ms);

	t1 = wl_now_ns();
	wl_log_span("epoll", t0, t1);
	return r;
}

int main(int argc, char **argv)
{
	long t, n, i;
	int ep;

	wl_init_knobs("epollidle", argc, argv, WL_MS("T", t, 200), WL_COUNT("N", n, 3));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		wl_die("epoll_create1", errno);
	for (i = 0; i < n; i++)
		if (idle_wait(ep, t) < 0)
			wl_die("epoll_wait", errno);
	close(ep);
	return 0;
}
