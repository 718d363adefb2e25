// SPDX-License-Identifier: GPL-2.0
/*
 * chain.c - who held each outlier up. The outlier's thread was blocked until a waker woke it;
 * during that wait the waker ran on a CPU, waited for one, or was blocked itself, on something
 * and until its own waker woke it; and so on. This follows that chain through the scheduler
 * events the BPF side streamed into the snapshot (latsnap_kernel:sched_switch, sched_wakeup,
 * syscall, interest), across processes, CHAIN_MAX_DEPTH links at most, each inside the window
 * of the wait it explains.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "include/latsnap.h"
#include "recorder/chain.h"
#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "lib/outlier.h"
#include "tracker/tracker.h"
#include "lib/util.h"

/**
 * chain_add() - append a copy of @ev (its stack too) to @ce
 *
 * Return: 0 or -ENOMEM.
 */
int chain_add(struct chain_events *ce, const struct chain_event *ev)
{
	struct chain_event *grown, *k;

	if (ce->n == ce->cap) {
		grown = realloc(ce->v, (ce->cap ? ce->cap * 2 : 4096) * sizeof(*ce->v));
		if (!grown) {
			return -ENOMEM;
		}
		ce->v = grown;
		ce->cap = ce->cap ? ce->cap * 2 : 4096;
	}
	k = &ce->v[ce->n];
	*k = *ev;
	k->ips = NULL;
	k->nr_ips = 0;
	if (ev->nr_ips && ev->nr_ips <= LS_MAX_FRAMES) {
		k->ips = malloc(ev->nr_ips * sizeof(*k->ips));
		if (!k->ips) {
			return -ENOMEM;
		}
		memcpy(k->ips, ev->ips, ev->nr_ips * sizeof(*k->ips));
		k->nr_ips = ev->nr_ips;
	}
	ce->n++;
	return 0;
}

/* The fields every link event has: its time, its thread. */
static void chain_common(const struct lsev *ev, uint8_t kind, struct chain_event *k)
{
	*k = (struct chain_event){ .kind = kind, .ts = ev->ts_ns };
	k->tid = (int32_t)ev->thread.tid;
	k->pid = (int32_t)ev->thread.pid;
	snprintf(k->comm, sizeof(k->comm), "%s", ev->thread.comm ? ev->thread.comm : "");
}

static int chain_on_switch(const struct lsev *ev, void *ctx)
{
	uint64_t ips[LS_MAX_FRAMES];
	struct chain_event k;

	chain_common(ev, CHAIN_SWITCH, &k);
	k.tid2 = (int32_t)ev->other.tid;
	k.pid2 = (int32_t)ev->other.pid;
	k.prev_state = ev->u.sw.prev_state;
	k.preempted = ev->u.sw.preempted;
	snprintf(k.comm2, sizeof(k.comm2), "%s", ev->other.comm ? ev->other.comm : "");
	snprintf(k.syscall, sizeof(k.syscall), "%s", ev->u.sw.prev_syscall);
	k.nr_ips = (unsigned int)lsev_ips(ev->u.sw.prev_stack, ips, LS_MAX_FRAMES);
	k.ips = ips;
	return chain_add(ctx, &k);
}

static int chain_on_wakeup(const struct lsev *ev, void *ctx)
{
	struct chain_events *ce = ctx;
	uint64_t ips[LS_MAX_FRAMES];
	struct chain_event k;
	unsigned int own, nr;

	chain_common(ev, CHAIN_WAKEUP, &k);
	k.tid2 = (int32_t)ev->other.tid;
	k.pid2 = (int32_t)ev->other.pid;
	snprintf(k.comm2, sizeof(k.comm2), "%s", ev->other.comm ? ev->other.comm : "");
	k.in_irq = ev->u.wakeup.in_irq;
	nr = (unsigned int)lsev_ips(ev->u.wakeup.waker_stack, ips, LS_MAX_FRAMES);
	if (!k.in_irq && nr && ce->tr) {
		k.in_irq = tracker_wake_context(ce->tr, ips, nr, &own) != 0;
	}
	return chain_add(ce, &k);
}

static int chain_on_syscall(const struct lsev *ev, void *ctx)
{
	struct chain_event k;

	chain_common(ev, CHAIN_SYSCALL, &k);
	k.start = ev->u.syscall.start_ns;
	snprintf(k.syscall, sizeof(k.syscall), "%s", ev->u.syscall.name);
	return chain_add(ctx, &k);
}

static int chain_on_interest(const struct lsev *ev, void *ctx)
{
	struct chain_event k;

	chain_common(ev, CHAIN_INTEREST, &k);
	return chain_add(ctx, &k);
}

static const struct lsev_handler chain_handlers[] = {
	{ LSEV_NAME_SCHED_SWITCH, chain_on_switch },
	{ LSEV_NAME_SCHED_WAKEUP, chain_on_wakeup },
	{ LSEV_NAME_SYSCALL, chain_on_syscall },
	{ LSEV_NAME_INTEREST, chain_on_interest },
};

/**
 * chain_add_lsev() - append @ev, an event of a trace decoded by lsev_decode(), to @ce when it is
 *                    a latsnap_kernel:* event of the chain (others are left out)
 *
 * Return: 0 or -ENOMEM.
 */
int chain_add_lsev(struct chain_events *ce, const struct lsev *ev)
{
	return lsev_handle(ev, chain_handlers, sizeof(chain_handlers) / sizeof(*chain_handlers), ce);
}

/**
 * chain_events_free() - free the events of @ce and leave it empty
 */
void chain_events_free(struct chain_events *ce)
{
	size_t i;

	for (i = 0; i < ce->n; i++) {
		free(ce->v[i].ips);
	}
	free(ce->v);
	ce->v = NULL;
	ce->n = ce->cap = 0;
}

static int by_time(const void *a, const void *b)
{
	const struct chain_event *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

enum run { RUN_UNKNOWN, RUN_CPU, RUN_QUEUED, RUN_BLOCKED };

/* What thread @tid did in [from, to], and the longest time it was blocked then. */
struct link {
	int32_t tid, pid;
	char comm[16];
	uint64_t from, to;
	uint64_t ns[4]; /* by enum run */
	/* The longest blocked stretch: [block_from, block_to], entered at *block_out. */
	uint64_t block_from, block_to;
	const struct chain_event *block_out;
	const struct chain_event *block_wake; /* what ended it, if a wakeup did */
	uint64_t unknown_until; /* the thread's record starts then (it became of interest) */
};

/* The state @tid is in right after @k, an event about it. */
static enum run after(const struct chain_event *k, int32_t tid)
{
	switch (k->kind) {
	case CHAIN_SWITCH:
		if (k->tid == tid) {
			return k->preempted || k->prev_state == 0 ? RUN_QUEUED : RUN_BLOCKED;
		}
		return RUN_CPU;
	case CHAIN_WAKEUP:
		return k->tid == tid ? RUN_QUEUED : RUN_CPU;
	default:
		return RUN_UNKNOWN;
	}
}

/* The state @tid was in right before @k, an event about it, as far as @k alone tells. */
static enum run before(const struct chain_event *k, int32_t tid)
{
	switch (k->kind) {
	case CHAIN_SWITCH:
		return k->tid == tid ? RUN_CPU : RUN_QUEUED;
	case CHAIN_WAKEUP:
		return k->tid == tid ? RUN_BLOCKED : RUN_CPU;
	default:
		return RUN_UNKNOWN;
	}
}

/* Is @k an event that says something of @tid's scheduling? */
static bool about(const struct chain_event *k, int32_t tid)
{
	switch (k->kind) {
	case CHAIN_SWITCH:
		return k->tid == tid || k->tid2 == tid;
	case CHAIN_WAKEUP:
		/* A wakeup from an interrupt says nothing of the task it landed on. */
		return k->tid == tid || (k->tid2 == tid && !k->in_irq);
	default:
		return false;
	}
}

static void analyze(const struct chain_events *ks, struct link *l)
{
	enum run state = RUN_UNKNOWN;
	uint64_t t = l->from, stretch_from = 0;
	const struct chain_event *stretch_out = NULL, *k;
	size_t i;

	/* Its record starts when it became of interest, if that was inside the window. */
	for (i = 0; i < ks->n && ks->v[i].ts <= l->to; i++) {
		k = &ks->v[i];
		if (k->kind == CHAIN_INTEREST && k->tid == l->tid && k->ts > l->from) {
			l->unknown_until = k->ts;
		}
	}
	for (i = 0; i < ks->n && ks->v[i].ts <= l->to; i++) {
		k = &ks->v[i];
		if (!about(k, l->tid)) {
			continue;
		}
		if (k->ts <= l->from) {
			state = after(k, l->tid);
			if (state == RUN_BLOCKED) {
				stretch_from = l->from;
				stretch_out = k;
			}
			continue;
		}
		if (state == RUN_UNKNOWN && k->ts > l->unknown_until) {
			/* No event before the window: the first one inside tells what came before. */
			state = before(k, l->tid);
			if (state == RUN_BLOCKED) {
				stretch_from = t;
				stretch_out = NULL;
			}
		}
		if (t < l->unknown_until) {
			l->ns[RUN_UNKNOWN] +=
				(k->ts < l->unknown_until ? k->ts : l->unknown_until) - t;
			t = k->ts < l->unknown_until ? k->ts : l->unknown_until;
		}
		l->ns[state] += k->ts - t;
		if (state == RUN_BLOCKED && after(k, l->tid) != RUN_BLOCKED &&
		    k->ts - stretch_from > l->block_to - l->block_from) {
			l->block_from = stretch_from;
			l->block_to = k->ts;
			l->block_out = stretch_out;
			l->block_wake = k->kind == CHAIN_WAKEUP && k->tid == l->tid ? k : NULL;
		}
		if (after(k, l->tid) == RUN_BLOCKED && state != RUN_BLOCKED) {
			stretch_from = k->ts;
			stretch_out = k;
		}
		state = after(k, l->tid);
		t = k->ts;
		if (!l->comm[0]) {
			snprintf(l->comm, sizeof(l->comm), "%s",
				 (k->kind == CHAIN_SWITCH && k->tid2 == l->tid) ||
						 (k->kind == CHAIN_WAKEUP && k->tid2 == l->tid) ?
					 k->comm2 :
					 k->comm);
			l->pid = (k->kind == CHAIN_SWITCH && k->tid2 == l->tid) ||
						 (k->kind == CHAIN_WAKEUP && k->tid2 == l->tid) ?
					 k->pid2 :
					 k->pid;
		}
	}
	if (state == RUN_UNKNOWN && !l->unknown_until) {
		/* Nothing at all about it in the window, though it woke the previous link at its end. */
		state = RUN_CPU;
	}
	if (t < l->to) {
		l->ns[state] += l->to - t;
		if (state == RUN_BLOCKED && l->to - stretch_from > l->block_to - l->block_from) {
			l->block_from = stretch_from;
			l->block_to = l->to;
			l->block_out = stretch_out;
			l->block_wake = NULL;
		}
	}
}

/* The wakeup that ended @tid's wait at about @at: the last one in [from, at]. */
static const struct chain_event *wakeup_of(const struct chain_events *ks, int32_t tid, uint64_t from, uint64_t at)
{
	const struct chain_event *found = NULL;
	size_t i;

	for (i = 0; i < ks->n && ks->v[i].ts <= at; i++) {
		if (ks->v[i].kind == CHAIN_WAKEUP && ks->v[i].tid == tid && ks->v[i].ts >= from) {
			found = &ks->v[i];
		}
	}
	return found;
}

/* The streamed syscall of @tid that overlaps [from, to] the most, or NULL. */
static const struct chain_event *syscall_during(const struct chain_events *ks, int32_t tid, uint64_t from,
					uint64_t to)
{
	const struct chain_event *best = NULL;
	uint64_t best_ns = 0, lo, hi;
	size_t i;

	for (i = 0; i < ks->n; i++) {
		const struct chain_event *k = &ks->v[i];

		if (k->kind != CHAIN_SYSCALL || k->tid != tid || k->ts < from || k->start > to) {
			continue;
		}
		lo = k->start > from ? k->start : from;
		hi = k->ts < to ? k->ts : to;
		if (hi > lo && hi - lo > best_ns) {
			best = k;
			best_ns = hi - lo;
		}
	}
	return best;
}

/* Fill @o's link @depth from @l. */
static int link_fill(const struct chain_events *ks, const struct link *l, unsigned int depth,
		     struct outlier_link *o)
{
	const struct chain_event *sc;
	const char *syscall = NULL;

	o->depth = depth;
	o->pid = l->pid;
	o->tid = l->tid;
	o->from_ns = l->from;
	o->to_ns = l->to;
	o->on_cpu_ns = l->ns[RUN_CPU];
	o->blocked_ns = l->ns[RUN_BLOCKED];
	o->runqueue_ns = l->ns[RUN_QUEUED];
	o->unknown_ns = l->ns[RUN_UNKNOWN];
	if (l->block_out && l->block_out->syscall[0] && l->ns[RUN_BLOCKED] >= l->ns[RUN_CPU] / 2) {
		syscall = l->block_out->syscall;
	} else {
		sc = syscall_during(ks, l->tid, l->from, l->to);
		syscall = sc ? sc->syscall : NULL;
	}
	if (outlier_set_str(&o->comm, l->comm) || outlier_set_str(&o->syscall, syscall)) {
		return -ENOMEM;
	}
	if (l->block_out && l->block_out->nr_ips && ks->tr) {
		return tracker_kernel_frames(ks->tr, l->block_out->ips, l->block_out->nr_ips,
					     &o->frames);
	}
	return 0;
}

/*
 * upstream_of - a keyed request's upstream (the writer of the socket it connected) as the wakeup
 * its chain starts from: its loop's own wakeups were for any of its requests.
 */
static const struct chain_event *upstream_of(const struct outlier *o, struct chain_event *k)
{
	const struct outlier_request *q = o->request;

	if (!q || !q->upstream_tid) {
		return NULL;
	}
	memset(k, 0, sizeof(*k));
	k->kind = CHAIN_WAKEUP;
	k->ts = q->upstream_ns;
	k->tid = o->tid;
	k->pid = o->pid;
	k->tid2 = q->upstream_tid;
	k->pid2 = q->upstream_pid;
	snprintf(k->comm2, sizeof(k->comm2), "%s", q->upstream_comm ? q->upstream_comm : "");
	return k;
}

/* The wait chain of @outlier: its waker, that waker's waker through its longest wait, ... */
static int chain_of(const struct chain_events *ks, struct outlier *outlier)
{
	int32_t tid = outlier->tid, seen[CHAIN_MAX_DEPTH + 1];
	uint64_t from = outlier->start_ns, to = outlier->end_ns;
	/* Each link spans from the start of the wait it explains to the wakeup that ended it. */
	const struct chain_event *wake;
	struct chain_event up;
	struct outlier_link *link;
	struct link l;
	int depth, nr_seen = 0, i, ret = 0;

	outlier_links_free(outlier);
	seen[nr_seen++] = tid;
	wake = upstream_of(outlier, &up);
	if (!wake && outlier->request && outlier->request->key) {
		/* Whoever woke its loop did so for any of its requests. */
		return 0;
	}
	wake = wake ?: wakeup_of(ks, tid, from, to);
	for (depth = 1; depth <= CHAIN_MAX_DEPTH && wake && !wake->in_irq && wake->tid2 > 0;
	     depth++) {
		for (i = 0; i < nr_seen; i++) {
			if (seen[i] == wake->tid2) {
				break;
			}
		}
		if (i < nr_seen) {
			break;
		}
		seen[nr_seen++] = wake->tid2;
		memset(&l, 0, sizeof(l));
		l.tid = wake->tid2;
		l.pid = wake->pid2;
		snprintf(l.comm, sizeof(l.comm), "%s", wake->comm2);
		l.from = from;
		l.to = wake->ts;
		analyze(ks, &l);
		link = outlier_add_link(outlier);
		ret = link ? link_fill(ks, &l, (unsigned int)depth, link) : -ENOMEM;
		if (ret) {
			break;
		}
		if (l.unknown_until) {
			outlier_add_flag(outlier,
					 "wait-chain-partial: %s (tid %d) was followed only from "
					 "%.1f ms into the wait, when it became of interest",
					 l.comm, l.tid, (double)(l.unknown_until - l.from) / 1e6);
		}
		/* Followed further only through a wait that matters to this window. */
		if (!l.block_wake || (l.block_to - l.block_from) * 10 < l.to - l.from) {
			break;
		}
		wake = l.block_wake;
		from = l.block_from;
	}
	return ret;
}

/**
 * chain_build() - the wait chain of each of @nr @outliers (and of each wait of a request), from
 *                 the events of @ce
 *
 * Sorts @ce's events by time first. Outliers woken from an interrupt, or by nobody the stream
 * saw, get an empty chain.
 *
 * Return: 0 or -ENOMEM.
 */
int chain_build(struct chain_events *ce, struct outlier **outliers, size_t nr)
{
	size_t i, j;
	int ret = 0;

	ls_sort(ce->v, ce->n, sizeof(*ce->v), by_time);
	for (i = 0; i < nr && !ret; i++) {
		ret = chain_of(ce, outliers[i]);
		/* A request's waits each have their own, over their own span. */
		for (j = 0; j < outliers[i]->nr_waits && !ret; j++) {
			ret = chain_of(ce, outliers[i]->waits[j]);
		}
	}
	return ret;
}
