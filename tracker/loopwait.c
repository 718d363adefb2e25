// SPDX-License-Identifier: GPL-2.0
/*
 * loopwait.c - an event loop's wait for events told apart (outlier.loop_wait): a wait in epoll,
 * poll or select of a process that maps the object of a keyed request's probe (requests.c keeps
 * their paths; the answer for each process is kept here). A leaf of tracker/: deliver.c asks it
 * of each outlier it hands over.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker/tracker-int.h"
#include "lib/outlier.h"

/* Whether process @pid maps the object of a keyed pair's probe (its /proc/PID/maps says). */
static bool maps_keyed_object(struct tracker *tr, int32_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0, len;
	bool found = false;
	unsigned int i;
	FILE *f;

	for (i = 0; i < sizeof(tr->loopwait.procs) / sizeof(tr->loopwait.procs[0]); i++) {
		if (tr->loopwait.procs[i].pid == pid) {
			return tr->loopwait.procs[i].maps;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		return false;
	}
	while (!found && getline(&line, &cap, f) > 0) {
		len = strcspn(line, "\n");
		line[len] = '\0';
		for (i = 0; !found && i < tr->requests.nr_kreq_paths; i++) {
			size_t n = strlen(tr->requests.kreq_paths[i]);

			found = len >= n && !strcmp(line + len - n, tr->requests.kreq_paths[i]);
		}
	}
	free(line);
	fclose(f);
	i = tr->loopwait.procs_next++ %
	    (sizeof(tr->loopwait.procs) / sizeof(tr->loopwait.procs[0]));
	tr->loopwait.procs[i].pid = pid;
	tr->loopwait.procs[i].maps = found;
	return found;
}

/**
 * requests_mark_loop() - mark @o a loop's wait (outlier.loop_wait) when it is a wait for events
 *                        (epoll, poll, select) of a process that runs a keyed pair's probes:
 *                        such a thread serves many requests and blocks for none of them
 */
void requests_mark_loop(struct tracker *tr, struct outlier *o)
{
	static const char *const waits[] = {
		"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6",
	};
	unsigned int i;

	if (!tr->requests.nr_kreq_paths || o->kind != OUTLIER_SYSCALL || !o->syscall) {
		return;
	}
	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		if (!strcmp(o->syscall, waits[i])) {
			o->loop_wait = maps_keyed_object(tr, o->pid);
			return;
		}
	}
}
