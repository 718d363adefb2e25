// SPDX-License-Identifier: GPL-2.0
/*
 * stall.c - stalls caught while they last (record --hang).
 *
 * An outlier otherwise exists only once its wait ends: a thread that never wakes reaches no hook
 * again. So every period (a quarter of --hang, within 10 ms..250 ms, or longer when a scan takes
 * more than 1% of it) the tracker's stall scan walks the threads of the tracked processes in the
 * kernel and hands over each one waiting longer than the threshold.
 * A wait is known by its thread and its start; one that reaches --hang is reported once, flagged
 * still-blocked, with its stacks now (the user stack unwound from outside: the thread cannot run
 * a signal handler) and who holds what it waits for. Its end, if it comes, is reported again by
 * the usual way. At the end of the run, every wait longer than the threshold is reported as
 * unfinished.
 *
 * Holders: for a futex of a glibc mutex, the owner the mutex records; waits whose owners wait,
 * in turn, for the first ones form a cycle: a deadlock, its members reported together.
 *
 * Cost: one scan visits the threads of each tracked process (every task of the machine with -a,
 * or with more than 64 tracked processes) in the kernel, a task storage lookup and a few loads
 * each; a record is written only for the threads waiting longer than the threshold. What
 * user space does per wait (a holder lookup reading 12 bytes of the process's memory) is done
 * once per wait, not per scan. Stacks are read and unwound only for waits reported.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/types.h>

#include "include/latsnap.h"
#include "lib/duration.h"
#include "lib/outlier.h"
#include "lib/util.h"
#include "recorder/stall.h"
#include "tracker/holder.h"
#include "tracker/tracker.h"

/* The longest cycle of waits followed: deadlocks are of two or three threads, mostly. */
#define STALL_MAX_CYCLE 16
/* Waits followed at once; beyond this, a scan's further threads are left out (and counted). */
#define STALL_MAX_WAITS 65536

struct stall_wait {
	struct ls_stall rec; /* as the last scan saw it */
	uint64_t first_seen_ns; /* the start of a wait begun before tracking (LS_STALL_NO_STATE) */
	int32_t owner; /* the mutex owner's tid: -1 not looked up yet, 0 none known */
	bool reported;
	bool handled; /* by the report_due() under way */
};

struct stall_check {
	struct tracker *tr;
	uint64_t hang_ns;
	uint64_t min_ns; /* what a scan hands over: the threshold */
	uint64_t period_ns;
	uint64_t next_ns;
	stall_outlier_fn fn;
	void *ctx;
	/* The last scan's waits, sorted by tid; the one under way's, as they come. */
	struct stall_wait *waits;
	size_t nr_waits;
	struct stall_wait *next;
	size_t nr_next;
	size_t cap;
	bool finishing;
	struct stall_totals totals;
};

/**
 * stall_set_limits() - the hang time and the threshold, at the start or changed while it runs
 * (record's reload): the scan after the next period uses them
 * @hang_ns: a wait this long is reported while it lasts
 * @threshold_ns: waits this long are followed (holders, cycles) and reported at the run's end
 */
void stall_set_limits(struct stall_check *sc, uint64_t hang_ns, uint64_t threshold_ns)
{
	sc->hang_ns = hang_ns;
	sc->min_ns = threshold_ns < hang_ns ? threshold_ns : hang_ns;
	/* Often enough that a hang is reported within a quarter of its time, never busy. */
	sc->period_ns = hang_ns / 4;
	if (sc->period_ns < 10000000) {
		sc->period_ns = 10000000;
	} else if (sc->period_ns > 250000000) {
		sc->period_ns = 250000000;
	}
	sc->next_ns = ls_now_ns() + sc->period_ns;
}

/**
 * stall_open() - check for stalls every so often from now on
 * @hang_ns: a wait this long is reported while it lasts
 * @threshold_ns: waits this long are followed (holders, cycles) and reported at the run's end
 *
 * Return: 0 or -ENOMEM.
 */
int stall_open(struct stall_check **scp, struct tracker *tr, uint64_t hang_ns,
	       uint64_t threshold_ns, stall_outlier_fn fn, void *ctx)
{
	struct stall_check *sc;

	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		return -ENOMEM;
	}
	sc->tr = tr;
	stall_set_limits(sc, hang_ns, threshold_ns);
	sc->fn = fn;
	sc->ctx = ctx;
	*scp = sc;
	return 0;
}

/* A wait is its thread and its start; one that began before tracking, its switch count. */
static bool same_wait(const struct stall_wait *w, const struct ls_stall *rec)
{
	if (w->rec.tid != rec->tid) {
		return false;
	}
	if (rec->flags & LS_STALL_NO_STATE) {
		return (w->rec.flags & LS_STALL_NO_STATE) && w->rec.nvcsw == rec->nvcsw;
	}
	return w->rec.start_ns == rec->start_ns;
}

static int on_record(const struct ls_stall *rec, void *ctx)
{
	struct stall_check *sc = ctx;
	struct stall_wait *grown, *w;
	size_t cap;

	sc->totals.records++;
	if (sc->nr_next == sc->cap) {
		if (sc->cap == STALL_MAX_WAITS) {
			sc->totals.dropped++;
			return 0;
		}
		cap = sc->cap ? 2 * sc->cap : 64;
		grown = realloc(sc->next, cap * sizeof(*grown));
		if (!grown) {
			sc->totals.dropped++;
			return 0;
		}
		sc->next = grown;
		/* Both arrays have room for as many: they are swapped after each scan. */
		grown = realloc(sc->waits, cap * sizeof(*grown));
		if (!grown) {
			sc->totals.dropped++;
			return 0;
		}
		sc->waits = grown;
		sc->cap = cap;
	}
	w = &sc->next[sc->nr_next++];
	memset(w, 0, sizeof(*w));
	w->rec = *rec;
	w->owner = -1;
	w->first_seen_ns = rec->now_ns;
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	const struct stall_wait *x = a, *y = b;

	return x->rec.tid < y->rec.tid ? -1 : x->rec.tid > y->rec.tid;
}

static struct stall_wait *wait_of_tid(struct stall_check *sc, int32_t tid)
{
	struct stall_wait key;

	if (!sc->nr_waits) {
		return NULL;
	}
	key.rec.tid = (uint32_t)tid;
	return bsearch(&key, sc->waits, sc->nr_waits, sizeof(key), by_tid);
}

/*
 * carry_over - the scan's waits replace the last one's: what was known of a wait seen again
 * (its owner, whether it was reported, when a wait begun before tracking was first seen) goes
 * with it; waits not seen again have ended, or their thread has.
 */
static void carry_over(struct stall_check *sc)
{
	struct stall_wait *w, *old, *swap;
	size_t i;

	if (sc->nr_next) {
		qsort(sc->next, sc->nr_next, sizeof(*sc->next), by_tid);
	}
	for (i = 0; i < sc->nr_next; i++) {
		w = &sc->next[i];
		old = wait_of_tid(sc, (int32_t)w->rec.tid);
		if (old && same_wait(old, &w->rec)) {
			w->owner = old->owner;
			w->reported = old->reported;
			w->first_seen_ns = old->first_seen_ns;
		}
		if (w->rec.flags & LS_STALL_NO_STATE) {
			w->rec.start_ns = w->first_seen_ns;
		}
	}
	swap = sc->waits;
	sc->waits = sc->next;
	sc->nr_waits = sc->nr_next;
	sc->next = swap;
	sc->nr_next = 0;
}

static void query_of(const struct ls_stall *rec, const struct outlier_frames *user,
		     struct holder_query *q)
{
	memset(q, 0, sizeof(*q));
	q->pid = (pid_t)rec->pid;
	q->tid = (pid_t)rec->tid;
	q->syscall_nr = rec->in_syscall ? rec->syscall_nr : -1;
	memcpy(q->args, rec->args, sizeof(q->args));
	q->user = user;
}

/*
 * The owner of the mutex each futex wait waits for (or the thread a join waits to end), looked
 * up once per wait, without its stack: the futex word must vouch for it.
 */
static void find_owners(struct stall_check *sc)
{
	struct holder_query q;
	struct holder_found h;
	size_t i;

	for (i = 0; i < sc->nr_waits; i++) {
		struct stall_wait *w = &sc->waits[i];

		if (w->owner >= 0) {
			continue;
		}
		w->owner = 0;
		if (!w->rec.in_syscall || w->rec.syscall_nr != SYS_futex) {
			continue;
		}
		query_of(&w->rec, NULL, &q);
		if (holder_find(&q, &h) == 0 &&
		    (h.kind == HOLDER_MUTEX || h.kind == HOLDER_THREAD)) {
			w->owner = h.tid;
		}
	}
}

/*
 * cycle_of - the waits of the cycle @w is in, @w first, following each one's owner; 0 when it
 * is in none (a chain that ends, or leads into a cycle without @w).
 */
static int cycle_of(struct stall_check *sc, struct stall_wait *w,
		    struct stall_wait *members[STALL_MAX_CYCLE])
{
	struct stall_wait *cur = w;
	int n = 0;

	while (n < STALL_MAX_CYCLE) {
		members[n++] = cur;
		cur = cur->owner > 0 ? wait_of_tid(sc, cur->owner) : NULL;
		if (!cur) {
			return 0;
		}
		if (cur == w) {
			return n;
		}
	}
	return 0;
}

static uint64_t waited(const struct stall_wait *w)
{
	return w->rec.now_ns - w->rec.start_ns;
}

/* The holder of @w's wait: who, what, its state, and its own stacks as they are now. */
static void add_holder(struct stall_check *sc, const struct stall_wait *w, struct outlier *o)
{
	struct outlier_holder *holder;
	struct holder_query q;
	struct holder_found h;
	struct ls_stall hs;

	query_of(&w->rec, &o->user_stack.frames, &q);
	if (holder_find(&q, &h)) {
		return;
	}
	holder = outlier_set_holder(o);
	if (!holder) {
		return;
	}
	holder->pid = h.pid;
	holder->tid = h.tid;
	outlier_set_str(&holder->comm, h.comm);
	outlier_set_str(&holder->what, h.what[0] ? h.what : NULL);
	outlier_set_str(&holder->state, h.state[0] ? h.state : NULL);
	if (h.nr_others) {
		outlier_add_flag(o, "holders-more: %u other process%s hold%s it too", h.nr_others,
				 h.nr_others == 1 ? "" : "es", h.nr_others == 1 ? "s" : "");
	}
	if (tracker_stall_thread(sc->tr, h.tid, &hs)) {
		outlier_add_flag(o, "holder-stacks-unread: thread %d is gone", h.tid);
		return;
	}
	if (hs.nr_kips) {
		tracker_kernel_frames(sc->tr, (const uint64_t *)hs.kips,
				      hs.nr_kips > LS_MAX_DEPTH ? LS_MAX_DEPTH : hs.nr_kips,
				      &holder->kernel_frames);
	}
	tracker_stall_user_frames(sc->tr, &hs, &holder->frames);
	if ((hs.flags & LS_STALL_ON_CPU) && holder->frames.nr) {
		outlier_add_flag(o, "holder-stack-approximate: the holder was running; its user "
				    "stack is unwound from its registers at its last kernel entry");
	}
}

/* The cause of a cycle's members: "Deadlock: 2 threads wait for each other: a[1] -> b[2] -> a[1]". */
static void cycle_cause(struct stall_wait *const *members, int n, char *buf, size_t size)
{
	size_t len;
	int i;

	len = (size_t)snprintf(buf, size, "Deadlock: %d threads wait for each other:", n);
	for (i = 0; i <= n && len < size; i++) {
		const struct ls_stall *r = &members[i % n]->rec;

		len += (size_t)snprintf(buf + len, size - len, "%s %.*s[%u]", i ? " ->" : "",
					LS_TASK_COMM_LEN, r->comm, r->tid);
	}
}

/* @o's "deadlock": the cycle @members[0..@n), in the order they wait for each other. */
static void set_cycle(struct outlier *o, struct stall_wait *const *members, int n)
{
	struct outlier_deadlock_thread t[STALL_MAX_CYCLE];
	char comm[STALL_MAX_CYCLE][LS_TASK_COMM_LEN + 1];
	int k;

	for (k = 0; k < n && k < STALL_MAX_CYCLE; k++) {
		const struct ls_stall *r = &members[k]->rec;

		snprintf(comm[k], sizeof(comm[k]), "%.*s", LS_TASK_COMM_LEN, r->comm);
		t[k].pid = (int32_t)r->pid;
		t[k].tid = (int32_t)r->tid;
		t[k].comm = comm[k];
	}
	/* Without memory it is still a deadlock by its cause's words, for people. */
	outlier_set_deadlock(o, t, (size_t)k);
}

/* Report @w's wait as it is now; @members[0..@n) the deadlock it is in (@n 0: none). */
static void report(struct stall_check *sc, struct stall_wait *w, const char *cause,
		   struct stall_wait *const *members, int n)
{
	char so_far[LS_DURATION_BUFSZ], hang[LS_DURATION_BUFSZ];
	struct ls_stall now;
	struct outlier *o;

	w->reported = true;
	/* Its kernel stack, and its registers as they are now, are read for it alone. */
	if (!tracker_stall_thread(sc->tr, (pid_t)w->rec.tid, &now) && now.pid == w->rec.pid) {
		memcpy(w->rec.kips, now.kips, sizeof(now.kips));
		w->rec.nr_kips = now.nr_kips;
		memcpy(w->rec.regs, now.regs, sizeof(now.regs));
		w->rec.flags |= now.flags & LS_STALL_ON_CPU;
	}
	if (tracker_stall_outlier(sc->tr, &w->rec, &o)) {
		return;
	}
	ls_format_duration(waited(w), so_far, sizeof(so_far));
	if (n) {
		set_cycle(o, members, n);
	}
	if (sc->finishing) {
		o->state = OUTLIER_UNFINISHED;
		outlier_add_flag(o, "unfinished: the run ended while it still waited, after %s",
				 so_far);
		sc->totals.unfinished++;
	} else {
		o->state = OUTLIER_STILL_BLOCKED;
		ls_format_duration(sc->hang_ns, hang, sizeof(hang));
		outlier_add_flag(o,
				 "still-blocked: still waiting when checked, after %s (--hang %s);"
				 " reported again if it ends",
				 so_far, hang);
		sc->totals.still_blocked++;
	}
	add_holder(sc, w, o);
	sc->fn(o, cause, sc->ctx);
}

/* Report what is due: cycles with a member due as a whole, then single waits past --hang. */
static void report_due(struct stall_check *sc)
{
	struct stall_wait *members[STALL_MAX_CYCLE];
	char cause[512];
	bool due;
	size_t i;
	int n, k;

	for (i = 0; i < sc->nr_waits; i++) {
		sc->waits[i].handled = false;
	}
	for (i = 0; i < sc->nr_waits; i++) {
		struct stall_wait *w = &sc->waits[i];

		if (w->handled || (w->reported && !sc->finishing)) {
			continue;
		}
		n = w->owner > 0 ? cycle_of(sc, w, members) : 0;
		/*
		 * A wait begun before tracking is reported only with a mutex owner: a process
		 * followed with -p has idle threads that waited since before, and they are not stalls.
		 */
		if (!n && (w->rec.flags & LS_STALL_NO_STATE) && w->owner <= 0) {
			continue;
		}
		due = sc->finishing || waited(w) >= sc->hang_ns;
		for (k = 0; k < n && !due; k++) {
			due = waited(members[k]) >= sc->hang_ns;
		}
		if (!due) {
			continue;
		}
		if (!n) {
			w->handled = true;
			report(sc, w, NULL, NULL, 0);
			continue;
		}
		sc->totals.deadlocks++;
		cycle_cause(members, n, cause, sizeof(cause));
		for (k = 0; k < n; k++) {
			if (!members[k]->handled && (sc->finishing || !members[k]->reported)) {
				members[k]->handled = true;
				report(sc, members[k], cause, members, n);
			}
			members[k]->handled = true;
		}
	}
}

static int scan(struct stall_check *sc, uint64_t min_ns)
{
	uint64_t t0 = ls_now_ns(), took;
	int err;

	sc->nr_next = 0;
	err = tracker_scan_stalls(sc->tr, min_ns, on_record, sc);
	took = ls_now_ns() - t0;
	sc->totals.scans++;
	sc->totals.scan_ns += took;
	if (took > sc->totals.max_scan_ns) {
		sc->totals.max_scan_ns = took;
	}
	if (err < 0) {
		ls_verbose("record: the stall scan failed: %s", strerror(-err));
		return err;
	}
	carry_over(sc);
	find_owners(sc);
	return 0;
}

/**
 * stall_poll() - scan for stalls when the period is over, and report those due
 *
 * Return: milliseconds until the next scan is due.
 */
int stall_poll(struct stall_check *sc)
{
	uint64_t now = ls_now_ns(), took;

	if (now >= sc->next_ns) {
		if (!scan(sc, sc->min_ns)) {
			report_due(sc);
		}
		took = ls_now_ns() - now;
		now += took;
		/* At most 1% of a CPU, however many threads there are: then less often. */
		sc->next_ns = now + (100 * took > sc->period_ns ? 100 * took : sc->period_ns);
	}
	return (int)((sc->next_ns - now) / 1000000) + 1;
}

/**
 * stall_finish() - the run is over: every wait longer than the threshold is reported, flagged
 *                  unfinished (those reported still-blocked already too: they never ended)
 *
 * Return: 0 or a negative errno.
 */
int stall_finish(struct stall_check *sc)
{
	int err;

	err = scan(sc, sc->min_ns);
	if (err) {
		return err;
	}
	sc->finishing = true;
	report_due(sc);
	return 0;
}

/**
 * stall_totals() - what the checks did so far
 */
void stall_totals(const struct stall_check *sc, struct stall_totals *totals)
{
	*totals = sc->totals;
}

/**
 * stall_close() - free @sc; NULL is a no-op
 */
void stall_close(struct stall_check *sc)
{
	if (sc) {
		free(sc->waits);
		free(sc->next);
		free(sc);
	}
}
