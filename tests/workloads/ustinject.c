// SPDX-License-Identifier: GPL-2.0
/*
 * ustinject LIBRARY NAME [SECONDS=3]
 *
 * A process that tries to put kernel context of its own making into latsnap's snapshots: it
 * names itself NAME (latsnap-replay's name, which a test reads from /proc), loads latsnap's
 * events library LIBRARY (so it registers with the session daemon as latsnap-replay does), and
 * records a latsnap_kernel:sched_switch whose prev_comm is "INJECTED" every 50 ms for SECONDS.
 * Run by an unprivileged user, none of it may reach a snapshot; run by root (the test's control)
 * it does, which shows it would.
 * Prints "registered PID" once lttng-ust registered it (in dlopen()), then waits up to 2 s for a
 * session to enable the event in it, and records it either way.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "events/events.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const struct ls_events *ops;
	struct ls_ctx_event e;
	long seconds, i, waited;
	void *h;

	if (argc < 3) {
		fprintf(stderr, "usage: ustinject LIBRARY NAME [SECONDS]\n");
		return 2;
	}
	seconds = argc > 3 ? atol(argv[3]) : 3;
	prctl(PR_SET_NAME, argv[2], 0, 0, 0);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	ops = h ? dlsym(h, LS_EVENTS_SYMBOL) : NULL;
	if (!ops) {
		fprintf(stderr, "ustinject: %s: %s\n", argv[1], dlerror());
		return 1;
	}
	printf("registered %d\n", (int)getpid());
	fflush(stdout);
	for (waited = 0; !ops->ready() && waited < 2000; waited += 10) {
		sleep_ms(10);
	}
	memset(&e, 0, sizeof(e));
	e.kind = LS_CTX_SWITCH;
	e.pid = e.tid = (uint32_t)getpid();
	e.pid2 = e.tid2 = (uint32_t)getpid();
	snprintf(e.comm, sizeof(e.comm), "INJECTED");
	snprintf(e.comm2, sizeof(e.comm2), "INJECTED");
	e.nr = -1;
	for (i = 0; i < seconds * 20; i++) {
		e.ts = now_ns();
		ops->kernel_event(&e, "");
		sleep_ms(50);
	}
	return 0;
}
