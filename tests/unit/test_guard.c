// SPDX-License-Identifier: GPL-2.0
/* The flood guard's rules (recorder/guard.c), one at a time, on a clock of the test's own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/outlier.h"
#include "recorder/guard.h"
#include "tap.h"

#define MS 1000000ULL
#define S (1000 * MS)

/* An outlier of @pid and @uid, @cause, @dur, its user stack one frame at @ip. */
static struct outlier *make(int32_t pid, uint32_t uid, const char *cause, uint64_t dur,
			    uint64_t ip)
{
	struct outlier *o = outlier_new();

	if (!o) {
		exit(1);
	}
	o->pid = pid;
	o->tid = pid;
	o->uid = uid;
	o->has_uid = true;
	o->duration_ns = dur;
	o->syscall_nr = 35;
	outlier_set_cause(o, cause);
	outlier_frames_alloc(&o->user_stack.frames, 1);
	outlier_frame_set(&o->user_stack.frames.v[0], ip, "nap", 0, "/bin/x");
	return o;
}

/* Judge @o at @now; on a snapshot verdict, take it. */
static enum guard_verdict step(struct guard *g, struct outlier *o, uint64_t now)
{
	enum guard_verdict v = guard_judge(g, o, now);

	if (v == GUARD_SNAPSHOT) {
		guard_taken(g, &o, 1, now);
	} else {
		guard_hold(g, o, v);
	}
	outlier_free(o);
	return v;
}

static void repeats(void)
{
	struct guard_opts opts = { .per_minute = 6, .user_per_minute = 3, .repeat_ns = 600 * S };
	struct guard_totals t;
	struct guard *g;
	const struct guard_held *held;
	int i, snaps = 0;

	if (guard_open(&g, &opts)) {
		exit(1);
	}
	for (i = 0; i < 1000; i++) {
		snaps += step(g, make(100, 1000, "sleep", 8 * MS, 0x1000), 10 * S + i * 10 * MS) ==
			 GUARD_SNAPSHOT;
	}
	is_int(snaps, 1, "a thousand repeats of one site: one snapshot");
	guard_totals(g, &t);
	is_u64(t.held[GUARD_REPEAT], 999, "the others held back as repeats");
	is_int(guard_window(g, &held), 1, "one process in the window");
	is_u64(held[0].held[GUARD_REPEAT], 999, "its repeats counted");
	is_int(step(g, make(100, 1000, "sleep", 16 * MS, 0x1000), 30 * S), GUARD_SNAPSHOT,
	       "twice the worst snapshotted: a worse case gets one");
	is_int(step(g, make(100, 1000, "sleep", 20 * MS, 0x1000), 31 * S), GUARD_REPEAT,
	       "under twice the new worst: a repeat again");
	is_int(step(g, make(100, 1000, "sleep", 8 * MS, 0x2000), 32 * S), GUARD_SNAPSHOT,
	       "another site of the same cause, with its user under budget: one");
	is_int(step(g, make(100, 1000, "sleep", 8 * MS, 0x1000), 700 * S), GUARD_SNAPSHOT,
	       "the repeat interval over: the site gets one again");
	guard_window_reset(g);
	is_int(guard_window(g, &held), 0, "a snapshot's summary empties the window");
	guard_close(g);
}

static void budgets(void)
{
	struct guard_opts opts = { .per_minute = 6, .user_per_minute = 3, .repeat_ns = 0 };
	struct guard *g;
	int i, snaps = 0;

	if (guard_open(&g, &opts)) {
		exit(1);
	}
	/* A hostile user: a new site each time (no repeat), one cause. */
	for (i = 0; i < 50; i++) {
		snaps += step(g, make(200 + i, 1000, "sleep", 110 * MS, 0x1000), 100 * S + i * S) ==
			 GUARD_SNAPSHOT;
	}
	is_int(snaps, 3, "one user, one cause, new sites: its budget of 3 a minute");
	is_int(step(g, make(300, 1000, "pipe", 110 * MS, 0x1000), 150 * S), GUARD_SNAPSHOT,
	       "a cause new to that user in the minute: still taken");
	is_int(step(g, make(301, 1000, "futex", 110 * MS, 0x1000), 150 * S + 1), GUARD_SNAPSHOT,
	       "and another");
	is_int(step(g, make(302, 1000, "lock", 110 * MS, 0x1000), 150 * S + 2), GUARD_SNAPSHOT,
	       "and another, to twice its budget");
	is_int(step(g, make(303, 1000, "disk", 110 * MS, 0x1000), 150 * S + 3), GUARD_USER_BUDGET,
	       "past twice its budget even a new cause waits");
	is_int(step(g, make(400, 0, "sleep", 100 * MS, 0x1000), 150 * S + 4), GUARD_SNAPSHOT,
	       "another user's first outlier of the same cause: taken");
	is_int(step(g, make(401, 0, "sleep", 100 * MS, 0x3000), 150 * S + 5), GUARD_BUDGET,
	       "its second of that cause, with every user's 6 spent: held (the budget)");
	is_int(step(g, make(402, 0, "sleep", 100 * MS, 0x3000), 300 * S), GUARD_SNAPSHOT,
	       "a minute later, the budget is back");
	guard_close(g);
}

static void off(void)
{
	struct guard_opts opts = { 0 };
	struct guard *g;
	int i, snaps = 0;

	if (guard_open(&g, &opts)) {
		exit(1);
	}
	for (i = 0; i < 100; i++) {
		snaps += step(g, make(100, 1000, "sleep", 8 * MS, 0x1000), S + i * MS) ==
			 GUARD_SNAPSHOT;
	}
	is_int(snaps, 100, "every limit 0: every outlier may start a snapshot");
	guard_close(g);
}

int main(void)
{
	repeats();
	budgets();
	off();
	return tap_done();
}
