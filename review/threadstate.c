// SPDX-License-Identifier: GPL-2.0
/*
 * threadstate.c - the state of each thread over time, from a trace's scheduler events
 *
 * Each sched_switch is two changes (its prev thread leaves the CPU, its next one takes it), each
 * sched_wakeup one (blocked to runnable). They are kept in time order, one flat array for all
 * threads; a query walks the changes of one thread. A thread's state between two changes is
 * what the first made it; before its first change it is what that change implies it was (a
 * thread first seen leaving the CPU was on it), after its last what the last made it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/lsevents.h"
#include "review/threadstate.h"

enum change_kind {
	CHANGE_OUT, /* switched out: to @to */
	CHANGE_IN, /* switched in */
	CHANGE_WAKE, /* woken */
};

struct change {
	uint64_t ts_ns;
	int64_t tid;
	enum change_kind kind;
	enum threadstate_kind to; /* CHANGE_OUT: blocked or runqueue */
	int64_t waker_tid; /* CHANGE_WAKE */
	bool in_irq; /* CHANGE_WAKE */
};

struct threadstate {
	struct change *v;
	size_t nr, cap;
};

/**
 * threadstate_new() - an empty record of thread states
 *
 * Return: it (threadstate_free() it), or NULL when out of memory.
 */
struct threadstate *threadstate_new(void)
{
	return calloc(1, sizeof(struct threadstate));
}

/**
 * threadstate_free() - free what threadstate_new() made
 * @ts: it, or NULL
 */
void threadstate_free(struct threadstate *ts)
{
	if (!ts) {
		return;
	}
	free(ts->v);
	free(ts);
}

/**
 * threadstate_name() - a state as people (and export's slice names) call it
 * @k: the state
 *
 * Return: "on-cpu", "blocked", "runqueue" or "unknown".
 */
const char *threadstate_name(enum threadstate_kind k)
{
	switch (k) {
	case THREADSTATE_ON_CPU:
		return "on-cpu";
	case THREADSTATE_BLOCKED:
		return "blocked";
	case THREADSTATE_RUNQUEUE:
		return "runqueue";
	default:
		return "unknown";
	}
}

/*
 * @c into its place by time, after the changes of the same time already there: the kernel
 * context is written in time order, so this appends but for the odd late one.
 */
static int add_change(struct threadstate *ts, const struct change *c)
{
	size_t lo = 0, hi = ts->nr, mid, cap;
	struct change *v;

	if (c->tid <= 0) {
		/* The idle task: one per CPU, all of them tid 0; not a thread of anybody's. */
		return 0;
	}
	if (ts->nr == ts->cap) {
		cap = ts->cap ? 2 * ts->cap : 256;
		v = realloc(ts->v, cap * sizeof(*v));
		if (!v) {
			return -ENOMEM;
		}
		ts->v = v;
		ts->cap = cap;
	}
	if (ts->nr && ts->v[ts->nr - 1].ts_ns > c->ts_ns) {
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (ts->v[mid].ts_ns <= c->ts_ns) {
				lo = mid + 1;
			} else {
				hi = mid;
			}
		}
		memmove(&ts->v[lo + 1], &ts->v[lo], (ts->nr - lo) * sizeof(*ts->v));
	} else {
		lo = ts->nr;
	}
	ts->v[lo] = *c;
	ts->nr++;
	return 0;
}

/* A switch: its prev thread leaves the CPU, its next one takes it. */
static int add_switch(struct threadstate *ts, const struct lsev *ev)
{
	struct change c = { .ts_ns = ev->ts_ns, .kind = CHANGE_OUT, .tid = ev->thread.tid };
	bool runnable;
	int ret;

	/* Preempted, or switched out still runnable (a yield): it waits for a CPU. */
	runnable = ev->u.sw.preempted || !ev->u.sw.prev_state;
	c.to = runnable ? THREADSTATE_RUNQUEUE : THREADSTATE_BLOCKED;
	ret = add_change(ts, &c);
	if (ret) {
		return ret;
	}
	c = (struct change){ .ts_ns = ev->ts_ns, .kind = CHANGE_IN, .tid = ev->other.tid };
	return add_change(ts, &c);
}

/**
 * threadstate_add() - take in one decoded event of a trace
 * @ts: the record
 * @ev: the event (trace/lsevents.h: its time, its threads); only sched_switch and sched_wakeup
 *	matter, the others are passed over
 *
 * Events may come in any order; in time order is cheapest.
 *
 * Return: 0; -EINVAL for a scheduler event without its thread fields (a switch's prev and next,
 * a wakeup's woken thread: nothing taken from it); -ENOMEM.
 */
int threadstate_add(struct threadstate *ts, const struct lsev *ev)
{
	struct change c = { .ts_ns = ev->ts_ns, .kind = CHANGE_WAKE };

	switch (ev->kind) {
	case LSEV_SCHED_SWITCH:
		if (!ev->thread.known || !ev->other.known) {
			return -EINVAL;
		}
		return add_switch(ts, ev);
	case LSEV_SCHED_WAKEUP:
		if (!ev->thread.known) {
			return -EINVAL;
		}
		c.tid = ev->thread.tid;
		c.waker_tid = ev->other.tid;
		c.in_irq = ev->u.wakeup.in_irq;
		return add_change(ts, &c);
	default:
		return 0;
	}
}

/* The state a thread was in before its first change @c, as @c implies it. */
static enum threadstate_kind state_before(const struct change *c)
{
	switch (c->kind) {
	case CHANGE_OUT:
		return THREADSTATE_ON_CPU;
	case CHANGE_WAKE:
		return THREADSTATE_BLOCKED;
	default:
		return THREADSTATE_RUNQUEUE;
	}
}

/* The state after change @c of a thread that was in @cur. */
static enum threadstate_kind state_after(enum threadstate_kind cur, const struct change *c)
{
	switch (c->kind) {
	case CHANGE_OUT:
		return c->to;
	case CHANGE_IN:
		return THREADSTATE_ON_CPU;
	default:
		/*
		 * A wakeup makes a blocked thread runnable. One that finds the thread on CPU or
		 * already runnable (woken while it was still switching out) changes nothing: its
		 * switch-out, runnable, follows.
		 */
		return cur == THREADSTATE_ON_CPU || cur == THREADSTATE_RUNQUEUE ?
			       cur :
			       THREADSTATE_RUNQUEUE;
	}
}

/* @span appended to @v (of *@nr, room for *@cap), or merged into the last of the same state. */
static int push_span(struct threadstate_span **v, size_t *nr, size_t *cap,
		     const struct threadstate_span *span)
{
	struct threadstate_span *nv;
	size_t ncap;

	if (span->to_ns <= span->from_ns) {
		return 0;
	}
	if (*nr && (*v)[*nr - 1].state == span->state && (*v)[*nr - 1].to_ns == span->from_ns) {
		(*v)[*nr - 1].to_ns = span->to_ns;
		return 0;
	}
	if (*nr == *cap) {
		ncap = *cap ? 2 * *cap : 16;
		nv = realloc(*v, ncap * sizeof(*nv));
		if (!nv) {
			return -ENOMEM;
		}
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*nr)++] = *span;
	return 0;
}

/**
 * threadstate_spans() - what a thread did between two times
 * @ts: the record
 * @tid: the thread
 * @from_ns: the start
 * @to_ns: the end
 * @spans: set to the spans (free() it; NULL when there are none)
 * @nr: set to their number
 *
 * The spans cover [@from_ns, @to_ns] without gap or overlap, in time order, clipped to it; two
 * neighbours never have the same state. Before the thread's first change its state is the one
 * that change implies (first seen switched out: it was on CPU; woken: blocked; switched in:
 * waiting for a CPU), back to @from_ns; after its last change that change's state holds to
 * @to_ns. A thread without any change is THREADSTATE_UNKNOWN throughout. None when @to_ns is
 * not after @from_ns.
 *
 * Return: 0, or -ENOMEM (then *@spans is NULL and *@nr 0).
 */
int threadstate_spans(const struct threadstate *ts, int64_t tid, uint64_t from_ns, uint64_t to_ns,
		      struct threadstate_span **spans, size_t *nr)
{
	enum threadstate_kind cur = THREADSTATE_UNKNOWN;
	struct threadstate_span span, *v = NULL;
	size_t i, n = 0, cap = 0;
	uint64_t at = from_ns;
	bool seen = false;
	int ret = 0;

	*spans = NULL;
	*nr = 0;
	if (to_ns <= from_ns) {
		goto out;
	}
	for (i = 0; i < ts->nr && ts->v[i].ts_ns < to_ns; i++) {
		if (ts->v[i].tid != tid) {
			continue;
		}
		if (!seen) {
			cur = state_before(&ts->v[i]);
			seen = true;
		}
		if (ts->v[i].ts_ns > at) {
			span = (struct threadstate_span){
				.tid = tid, .from_ns = at, .to_ns = ts->v[i].ts_ns, .state = cur
			};
			ret = push_span(&v, &n, &cap, &span);
			if (ret) {
				goto out;
			}
			at = ts->v[i].ts_ns;
		}
		cur = state_after(cur, &ts->v[i]);
	}
	/* Its first change may lie after @to_ns: then that one says what it was till then. */
	for (; !seen && i < ts->nr; i++) {
		if (ts->v[i].tid == tid) {
			cur = state_before(&ts->v[i]);
			seen = true;
		}
	}
	span = (struct threadstate_span){ .tid = tid, .from_ns = at, .to_ns = to_ns, .state = cur };
	ret = push_span(&v, &n, &cap, &span);
out:
	if (ret) {
		free(v);
		v = NULL;
		n = 0;
	}
	*spans = v;
	*nr = n;
	return ret;
}

/**
 * threadstate_wakeups() - the wakeups of a thread between two times
 * @ts: the record
 * @tid: the thread woken
 * @from_ns: the start
 * @to_ns: the end (a wakeup at @from_ns or @to_ns is in)
 * @w: set to the wakeups in time order (free() it; NULL when there are none)
 * @nr: set to their number
 *
 * Return: 0, or -ENOMEM (then *@w is NULL and *@nr 0).
 */
int threadstate_wakeups(const struct threadstate *ts, int64_t tid, uint64_t from_ns, uint64_t to_ns,
			struct threadstate_wakeup **w, size_t *nr)
{
	struct threadstate_wakeup *v = NULL, *nv;
	size_t i, n = 0, cap = 0;
	const struct change *c;
	int ret = 0;

	for (i = 0; i < ts->nr && ts->v[i].ts_ns <= to_ns; i++) {
		c = &ts->v[i];
		if (c->tid != tid || c->kind != CHANGE_WAKE || c->ts_ns < from_ns) {
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				free(v);
				v = NULL;
				n = 0;
				ret = -ENOMEM;
				goto out;
			}
			v = nv;
		}
		v[n++] = (struct threadstate_wakeup){ .ts_ns = c->ts_ns,
						      .waker_tid = c->waker_tid,
						      .tid = tid,
						      .in_irq = c->in_irq };
	}
out:
	*w = v;
	*nr = n;
	return ret;
}
