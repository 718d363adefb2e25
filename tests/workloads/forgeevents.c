// SPDX-License-Identifier: GPL-2.0
/*
 * forgeevents LIBRARY VICTIM_PID BASE SIZE [SECONDS=3]
 *
 * A process that forges latsnap's events about another process (issue 51): it loads latsnap's
 * events library LIBRARY, as latsnap does, and every 20 ms for SECONDS records, all claiming
 * VICTIM_PID (its main thread):
 *  - latsnap:bin_info: the victim's object at BASE, SIZE bytes long, is this program's own
 *    binary, without a build-id (so that a reader names the victim's frames after it);
 *  - latsnap:outlier: a 300 ms "read" with cause "FORGED";
 *  - latsnap:user_stack: two frames inside BASE..BASE+SIZE;
 *  - latsnap_kernel:sched_switch: the victim leaving the CPU, prev_comm "FORGED".
 * Prints "registered PID" once lttng-ust registered it (in dlopen()) and "emitted N" at the end,
 * N being the events it recorded (all, whether a session took them or not).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	char self[PATH_MAX];
	const struct ls_events *ops;
	struct ls_ev_user_stack us;
	struct ls_ev_bin_info bin;
	struct ls_ev_outlier o;
	struct ls_ctx_event e;
	uint64_t base, size, ips[2], t;
	long seconds, i, emitted = 0;
	int32_t victim;
	ssize_t n;
	void *h;

	if (argc < 5) {
		fprintf(stderr, "usage: forgeevents LIBRARY VICTIM_PID BASE SIZE [SECONDS]\n");
		return 2;
	}
	victim = (int32_t)atoi(argv[2]);
	base = strtoull(argv[3], NULL, 0);
	size = strtoull(argv[4], NULL, 0);
	seconds = argc > 5 ? atol(argv[5]) : 3;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("forgeevents: /proc/self/exe");
		return 1;
	}
	self[n] = '\0';
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	ops = h ? dlsym(h, LS_EVENTS_SYMBOL) : NULL;
	if (!ops || ops->size < sizeof(*ops)) {
		fprintf(stderr, "forgeevents: %s: %s\n", argv[1], h ? "too old" : dlerror());
		return 1;
	}
	printf("registered %d\n", (int)getpid());
	fflush(stdout);

	/* No build-id: a reader then takes the file at the path for the victim's. */
	bin = (struct ls_ev_bin_info){ .path = self, .base = base, .memsz = size, .pid = victim };
	ips[0] = base + size / 2;
	ips[1] = base + size / 3;
	for (i = 0; i < seconds * 50; i++) {
		t = now_ns();
		ops->bin_info(&bin);
		o = (struct ls_ev_outlier){ .kind = "syscall",
					    .comm = "FORGED",
					    .syscall = "read",
					    .cause = "FORGED",
					    .flags = "",
					    .waker_comm = "",
					    .pid = victim,
					    .tid = victim,
					    .syscall_nr = 0,
					    .start_ns = t - 300000000ull,
					    .end_ns = t,
					    .blocked_ns = 300000000ull };
		ops->outlier(&o);
		us = (struct ls_ev_user_stack){
			.ips = ips, .end_ns = t, .pid = victim, .tid = victim, .nr = 2
		};
		ops->user_stack(&us);
		memset(&e, 0, sizeof(e));
		e.kind = LS_CTX_SWITCH;
		e.ts = t;
		e.pid = e.tid = (uint32_t)victim;
		snprintf(e.comm, sizeof(e.comm), "FORGED");
		snprintf(e.comm2, sizeof(e.comm2), "FORGED");
		e.nr = -1;
		ops->kernel_event(&e, "");
		emitted += 4;
		sleep_ms(20);
	}
	printf("emitted %ld\n", emitted);
	return 0;
}
