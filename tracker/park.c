// SPDX-License-Identifier: GPL-2.0
/*
 * park.c - outliers parked for their stacks: the thread of an outlier flagged LS_EF_SIGNALLED was
 * signalled to unwind its own user stack in the preload library; the outlier waits here until
 * that stack comes back (LS_KIND_UNWOUND) or is overdue, so that every consumer sees it whole.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tracker/decode.h"
#include "tracker/pyframes.h"
#include "tracker/tracker-int.h"
#include "lib/outlier.h"
#include "lib/util.h"

/*
 * How long an outlier waits for its unwound stack. The handler runs when the thread returns to
 * user space, at once unless it waits for a CPU; an unwind takes tens to hundreds of µs. So the
 * wait is not fixed: every UNWIND_WAIT_NS it is looked at again, and goes on while the thread
 * has not had UNWIND_RUN_NS of CPU since it was parked (a loaded machine, or a CPU limit that
 * throttles its cgroup for most of a period, keeps it off), up to UNWIND_MAX_NS.
 */
#define UNWIND_WAIT_NS (200 * 1000000ULL)
#define UNWIND_RUN_NS (5 * 1000000ULL)
#define UNWIND_MAX_NS (5000 * 1000000ULL)

/* @tid's CPU time so far (the first field of its schedstat), or UINT64_MAX if unknown. */
static uint64_t thread_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[96];
	unsigned long long v;
	uint64_t ns = UINT64_MAX;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		if (sscanf(buf, "%llu", &v) == 1) {
			ns = v;
		}
	}
out:
	return ns;
}

/* Hand over parked outlier @i as it is, and close the gap. */
static int unpark(struct tracker *tr, unsigned int i)
{
	struct outlier *outlier = tr->park.parked[i].outlier;

	tr->park.nr_parked--;
	memmove(tr->park.parked + i, tr->park.parked + i + 1,
		(tr->park.nr_parked - i) * sizeof(tr->park.parked[0]));
	return deliver_outlier(tr, outlier);
}

/**
 * park_outlier() - hold @outlier until its thread's unwound stack comes (park_on_unwound()) or
 *                  is overdue (park_release_overdue()); the oldest goes on when all are taken
 *
 * Return: 0, or the callback's non-zero return for the outlier that had to go on.
 */
int park_outlier(struct tracker *tr, struct outlier *outlier, uint32_t signal_seq)
{
	struct parked *p;
	int err = 0;

	if (tr->park.nr_parked == PARKED_MAX) {
		outlier_add_flag(tr->park.parked[0].outlier,
				 "no-unwound-stack: too many outliers waited for their unwound "
				 "stacks at once");
		err = unpark(tr, 0);
	}
	p = &tr->park.parked[tr->park.nr_parked++];
	p->outlier = outlier;
	p->pid = outlier->pid;
	p->tid = outlier->tid;
	p->signal_seq = signal_seq;
	p->since_ns = ls_now_ns();
	p->until_ns = p->since_ns + UNWIND_WAIT_NS;
	p->cpu_ns = thread_cpu_ns(p->pid, p->tid);
	return err;
}

/*
 * Whether parked @p, at its deadline, may wait on: its thread is there and has not had the CPU
 * its handler needs since it was parked, and the longest wait is not over. Otherwise it goes,
 * flagged with why.
 */
static bool wait_on(struct parked *p, uint64_t now)
{
	uint64_t cpu = p->cpu_ns == UINT64_MAX ? UINT64_MAX : thread_cpu_ns(p->pid, p->tid);
	double waited_ms = (double)(now - p->since_ns) / 1e6;

	if (cpu == UINT64_MAX) {
		/* Unknown from the start: no schedstat here (CONFIG_SCHED_INFO), the fixed wait. */
		outlier_add_flag(
			p->outlier,
			"no-unwound-stack: the preload library was signalled, but reported "
			"no stack in %.0f ms%s",
			waited_ms, p->cpu_ns == UINT64_MAX ? "" : ", and its thread has ended");
		return false;
	}
	if (cpu - p->cpu_ns >= UNWIND_RUN_NS) {
		outlier_add_flag(
			p->outlier,
			"no-unwound-stack: the preload library was signalled, but reported "
			"no stack in %.0f ms, while its thread ran %.1f ms (it did not "
			"return to user space)",
			waited_ms, (double)(cpu - p->cpu_ns) / 1e6);
		return false;
	}
	if (now - p->since_ns >= UNWIND_MAX_NS) {
		outlier_add_flag(
			p->outlier,
			"no-unwound-stack: the preload library was signalled, but its "
			"thread had %.1f ms of CPU in the %.0f ms latsnap waited (starved of "
			"CPU, or throttled by a CPU limit)",
			(double)(cpu - p->cpu_ns) / 1e6, waited_ms);
		return false;
	}
	p->until_ns = now + UNWIND_WAIT_NS;
	return true;
}

/**
 * park_release_overdue() - hand over the parked outliers whose stack is overdue (every one with
 *                          @all), flagged as without it and why; one whose thread has not had
 *                          the CPU to unwind waits on (wait_on())
 *
 * Return: 0, or the callback's non-zero return.
 */
int park_release_overdue(struct tracker *tr, bool all)
{
	uint64_t now = ls_now_ns();
	unsigned int i = 0;
	int err = 0;

	while (i < tr->park.nr_parked && !err) {
		if (all) {
			outlier_add_flag(tr->park.parked[i].outlier,
					 "no-unwound-stack: the preload library was signalled, but "
					 "reported no stack before latsnap stopped (%.0f ms)",
					 (double)(now - tr->park.parked[i].since_ns) / 1e6);
		} else if (tr->park.parked[i].until_ns > now || wait_on(&tr->park.parked[i], now)) {
			i++;
			continue;
		}
		err = unpark(tr, i);
	}
	return err;
}

static const char *const unwind_status_text[] = {
	[LS_UNWIND_FAILED] = "libunwind could not start from the signal frame",
	[LS_UNWIND_BAD_FRAME] = "a frame without unwind information ended the walk",
	[LS_UNWIND_FORKING] = "signalled while a thread of the process was forking (no unwind "
			      "then: the forking thread may hold libunwind's locks)",
};

/*
 * Hand over, flagged, the outliers of @u's thread parked for a signal before the one @u answers
 * (the kernel delivers a thread's signals in order, so theirs will not come: lost with a full
 * ring buffer, or never delivered), or for the same number but older than @keep (its signal
 * never went, and the number went to the next).
 */
static int release_unanswered(struct tracker *tr, const struct ls_unwound *u,
			      const struct outlier *keep)
{
	unsigned int i = 0;
	int err = 0;

	while (i < tr->park.nr_parked && !err) {
		struct parked *p = &tr->park.parked[i];

		if (p->outlier != keep && p->tid == (pid_t)u->tid && p->pid == (pid_t)u->pid &&
		    (int32_t)(p->signal_seq - u->seq) <= 0) {
			outlier_add_flag(p->outlier,
					 "no-unwound-stack: the preload library was signalled, but "
					 "a later signal's report came first (%s)",
					 u->lost_before ?
						 "this one's was lost: the ring buffer was full" :
						 "this one was never delivered");
			err = unpark(tr, i);
		} else {
			i++;
		}
	}
	return err;
}

/*
 * What the thread's runtime said of it (LS_RT_*), as flags: a stripped interpreter's stack shows
 * a condition wait for each (Ruby's GVL, Mutex#lock and sleep alike), its state tells them apart.
 */
static void park_runtime_flags(struct outlier *outlier, uint8_t rt_state)
{
	if ((rt_state & LS_RT_GVL_WAIT) && (rt_state & LS_RT_GVL_YIELD)) {
		outlier_add_flag(outlier,
				 "ruby-gvl-yield: gave Ruby's global VM lock up to another of its "
				 "threads (its timeslice's end, or Thread.pass) and waits to run "
				 "again (the GVL's own state)");
	} else if (rt_state & LS_RT_GVL_WAIT) {
		outlier_add_flag(outlier, "ruby-gvl: waiting for Ruby's global VM lock, which "
					  "another of its threads holds (the GVL's own state)");
	} else if (rt_state & LS_RT_MUTEX_WAIT) {
		outlier_add_flag(outlier, "ruby-mutex: waiting to lock a Ruby Mutex (the "
					  "thread's locking_mutex)");
	} else if (rt_state & LS_RT_TIMED_STOP) {
		outlier_add_flag(outlier, "ruby-timed: stopped with a deadline (Kernel#sleep, or "
					  "a wait with a timeout; the thread's status)");
	} else if (rt_state & LS_RT_STOPPED_FOREVER) {
		outlier_add_flag(outlier, "ruby-stopped: waiting for another of its threads, with "
					  "no deadline (Thread#join, Queue#pop, "
					  "ConditionVariable#wait; the thread's status)");
	}
}

/**
 * park_on_unwound() - the preload library's stack for a signalled thread: it replaces the
 *                     frame-pointer walk of the parked outlier whose signal it answers, which
 *                     is then handed over
 *
 * Return: 0, or the callback's non-zero return.
 */
int park_on_unwound(struct tracker *tr, const struct ls_unwound *u)
{
	unsigned int i, nr = u->nr < LS_UNWOUND_MAX_DEPTH ? u->nr : LS_UNWOUND_MAX_DEPTH;
	struct outlier_frames frames = { 0 };
	struct outlier *outlier = NULL;
	int err;

	/* The newest with its number: an older one's signal never went (signal_preload()). */
	for (i = 0; i < tr->park.nr_parked; i++) {
		if (tr->park.parked[i].tid == (pid_t)u->tid &&
		    tr->park.parked[i].pid == (pid_t)u->pid &&
		    tr->park.parked[i].signal_seq == u->seq) {
			outlier = tr->park.parked[i].outlier;
		}
	}
	err = release_unanswered(tr, u, outlier);
	if (err || !outlier) {
		/* Without an outlier, it went on without its stack (overdue): nothing to add. */
		return err;
	}
	/* Where the release left it. */
	for (i = 0; i < tr->park.nr_parked && tr->park.parked[i].outlier != outlier; i++) {
	}
	if (u->status && u->status < sizeof(unwind_status_text) / sizeof(unwind_status_text[0]) &&
	    unwind_status_text[u->status]) {
		outlier_add_flag(outlier, "%s: %s", nr ? "user-stack-partial" : "no-unwound-stack",
				 unwind_status_text[u->status]);
	}
	park_runtime_flags(outlier, u->rt_state);
	if (nr &&
	    !decode_user_frames(tr->usyms, (pid_t)u->pid, (const uint64_t *)u->report.ips, nr,
				&frames) &&
	    !pyframes_insert(tr->pyframes, (pid_t)u->pid, &u->report, &frames)) {
		outlier_frames_move(&outlier->user_stack.frames, &frames);
		outlier->user_stack.source = OUTLIER_USTACK_UNWIND;
		outlier->user_stack.unwound = true;
		outlier->user_stack.unwind_ns = u->report.unwind_ns;
		outlier->user_stack.status = u->status;
		outlier->user_stack.truncated = u->truncated;
		/* What was said of the frame-pointer stack no longer holds. */
		outlier_drop_flags(outlier, "no-user-stack:");
		outlier_drop_flags(outlier, "user-stack-truncated:");
		if (u->truncated) {
			outlier_add_flag(outlier,
					 "user-stack-truncated: the unwind stopped at %u frames "
					 "(LATSNAP_DEPTH)",
					 nr);
		}
	}
	outlier_frames_free(&frames);
	return unpark(tr, i);
}

/**
 * park_release_thread() - hand over, as they are, the outliers of thread @tid still parked,
 *                         before a record of that thread that follows them (its request's end):
 *                         their stacks would have come before it, the ring is in order
 *
 * Return: 0, or the callback's non-zero return.
 */
int park_release_thread(struct tracker *tr, pid_t tid)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < tr->park.nr_parked && !err;) {
		if (tr->park.parked[i].tid == tid) {
			err = unpark(tr, i);
		} else {
			i++;
		}
	}
	return err;
}

/**
 * park_due_ms() - @timeout_ms, cut to the nearest deadline of a parked outlier
 */
int park_due_ms(struct tracker *tr, int timeout_ms)
{
	uint64_t now, due;
	unsigned int i;
	int due_ms;

	if (!tr->park.nr_parked) {
		return timeout_ms;
	}
	now = ls_now_ns();
	due = tr->park.parked[0].until_ns;
	for (i = 1; i < tr->park.nr_parked; i++) {
		if (tr->park.parked[i].until_ns < due) {
			due = tr->park.parked[i].until_ns;
		}
	}
	due_ms = due > now ? (int)((due - now) / 1000000) + 1 : 0;
	return due_ms < timeout_ms ? due_ms : timeout_ms;
}

/**
 * park_free() - free the outliers still parked, unseen
 */
void park_free(struct tracker *tr)
{
	while (tr->park.nr_parked > 0) {
		outlier_free(tr->park.parked[--tr->park.nr_parked].outlier);
	}
}
