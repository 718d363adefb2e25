// SPDX-License-Identifier: GPL-2.0
/*
 * test_chain.c - the wait-chain analysis (recorder/chain.c) on made-up scheduler event
 * sequences whose answer is worked out by hand in the comments.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/outlier.h"
#include "recorder/chain.h"
#include "tap.h"

#define A 100 /* the thread of the outlier */
#define B 200
#define C 300

static void add(struct chain_events *ce, struct chain_event ev)
{
	if (chain_add(ce, &ev)) {
		bail_out("chain_add: out of memory");
	}
}

static struct chain_event sw(uint64_t ts, int32_t prev, int64_t prev_state, int32_t next,
			     const char *syscall)
{
	struct chain_event e = { .ts = ts, .kind = CHAIN_SWITCH, .tid = prev, .pid = prev,
				 .tid2 = next, .pid2 = next, .prev_state = prev_state };

	snprintf(e.comm, sizeof(e.comm), "t%d", prev);
	snprintf(e.comm2, sizeof(e.comm2), "t%d", next);
	snprintf(e.syscall, sizeof(e.syscall), "%s", syscall ? syscall : "");
	return e;
}

static struct chain_event wake(uint64_t ts, int32_t woken, int32_t waker, bool in_irq)
{
	struct chain_event e = { .ts = ts, .kind = CHAIN_WAKEUP, .tid = woken, .pid = woken,
				 .tid2 = waker, .pid2 = waker, .in_irq = in_irq };

	snprintf(e.comm, sizeof(e.comm), "t%d", woken);
	snprintf(e.comm2, sizeof(e.comm2), "t%d", waker);
	return e;
}

static struct outlier *outlier_of(uint64_t start, uint64_t end)
{
	struct outlier *o = outlier_new();

	if (!o) {
		bail_out("outlier_new: out of memory");
	}
	o->tid = o->pid = A;
	o->start_ns = start;
	o->end_ns = end;
	o->duration_ns = end - start;
	return o;
}

/*
 * chain_build() of the @n events @evs (in any order) for @o, an outlier of A, which must succeed
 * ("NAME: chain_build succeeds"). The links own copies of what they take from the events.
 */
static void build(const char *name, struct outlier *o, const struct chain_event *evs, size_t n)
{
	struct chain_events ce = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		add(&ce, evs[i]);
	}
	is_int(chain_build(&ce, &o, 1), 0, "%s: chain_build succeeds", name);
	chain_events_free(&ce);
}

/* B runs all along and wakes A: one link, B on CPU for the whole of A's wait until the wakeup. */
static void one_link(void)
{
	const struct chain_event evs[] = { sw(900, 1, 0, B, NULL), wake(1900, A, B, false) };
	struct outlier *o = outlier_of(1000, 2000);

	build("one link", o, evs, sizeof(evs) / sizeof(evs[0]));
	if (is_int((int)o->nr_links, 1, "one link: A's chain has 1 link")) {
		struct outlier_link *l = &o->wait_chain[0];

		is_int(l->tid, B, "one link: it is B");
		is_int((int)l->depth, 1, "one link: depth 1");
		ok(l->from_ns == 1000 && l->to_ns == 1900, "one link: from A's start to the wakeup");
		is_u64(l->on_cpu_ns, 900, "one link: B ran 900 ns");
		ok(!l->blocked_ns && !l->runqueue_ns && !l->unknown_ns,
		   "one link: nothing else in B's split");
		is_str(l->comm, "t200", "one link: B's comm from the wakeup");
	}
	outlier_free(o);
}

/*
 * A waits [1000, 5000], woken by B at 4900. B blocked in read() from 1100, woken by C at 4800,
 * back on a CPU at 4850: B ran 100 + 50, blocked 3700, waited 50 for a CPU. B's wait is most
 * of the window, so the chain follows it: C, over [1100, 4800], ran all along (it woke B).
 */
static void two_links(void)
{
	uint64_t ips[2] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
	/* Given out of time order: chain_build sorts them. */
	struct chain_event evs[] = {
		wake(4900, A, B, false),
		sw(1100, B, 1, 7, "read"),
		wake(4800, B, C, false),
		sw(4850, 7, 0, B, NULL),
	};
	struct outlier *o = outlier_of(1000, 5000);

	/* B blocked in read(), with a kernel stack. */
	evs[1].ips = ips;
	evs[1].nr_ips = 2;
	build("two links", o, evs, sizeof(evs) / sizeof(evs[0]));
	if (is_int((int)o->nr_links, 2, "two links: A's chain has 2 links")) {
		struct outlier_link *b = &o->wait_chain[0], *c = &o->wait_chain[1];

		ok(b->tid == B && b->depth == 1, "two links: B first, depth 1");
		is_u64(b->on_cpu_ns, 150, "two links: B ran 150 ns");
		is_u64(b->blocked_ns, 3700, "two links: B was blocked 3700 ns");
		is_u64(b->runqueue_ns, 50, "two links: B waited 50 ns for a CPU");
		is_str(b->syscall, "read", "two links: B was blocked in read()");
		ok(c->tid == C && c->depth == 2, "two links: then C, depth 2");
		ok(c->from_ns == 1100 && c->to_ns == 4800, "two links: over B's wait");
		is_u64(c->on_cpu_ns, 3700, "two links: C ran all of it");
		ok(!c->syscall, "two links: C in no syscall");
	}
	is_int((int)o->nr_flags, 0, "two links: no flag");
	outlier_free(o);
}

/* A woken by B, B's wait ended by A: the chain stops at the cycle, one link. */
static void cycle(void)
{
	const struct chain_event evs[] = { sw(1100, B, 1, A, "futex"), wake(4800, B, A, false),
					   sw(4850, A, 1, B, "futex"), wake(4900, A, B, false) };
	struct outlier *o = outlier_of(1000, 5000);

	build("cycle", o, evs, sizeof(evs) / sizeof(evs[0]));
	ok(o->nr_links == 1 && o->wait_chain[0].tid == B, "cycle: B only: A is not followed again");
	outlier_free(o);
}

/* Woken from an interrupt: the task it landed on did not wake A, so no chain at all. */
static void interrupt(void)
{
	const struct chain_event evs[] = { wake(1900, A, B, true) };
	struct outlier *o = outlier_of(1000, 2000);

	build("interrupt", o, evs, 1);
	is_int((int)o->nr_links, 0, "interrupt: no link");
	outlier_free(o);
}

/* B became of interest at 1500 (it woke a tracked thread): before, its time is unknown. */
static void interest(void)
{
	const struct chain_event evs[] = {
		{ .ts = 1500, .kind = CHAIN_INTEREST, .tid = B, .pid = B },
		sw(1600, 1, 0, B, NULL),
		wake(1900, A, B, false),
	};
	struct outlier *o = outlier_of(1000, 2000);

	build("interest", o, evs, sizeof(evs) / sizeof(evs[0]));
	if (is_int((int)o->nr_links, 1, "interest: one link")) {
		is_u64(o->wait_chain[0].unknown_ns, 500, "interest: 500 ns before it was followed");
		is_u64(o->wait_chain[0].runqueue_ns, 100, "interest: then runnable until 1600");
		is_u64(o->wait_chain[0].on_cpu_ns, 300, "interest: then on CPU");
	}
	ok(outlier_has_flag(o, "wait-chain-partial: t200 (tid 200) was followed only from 0.0 ms"),
	   "interest: the outlier says its chain is partial");
	outlier_free(o);
}

/* Nobody the stream saw woke A: the chain is empty, and a stale one is replaced. */
static void nobody(void)
{
	const struct chain_event evs[] = { sw(900, 1, 0, B, NULL) };
	struct outlier *o = outlier_of(1000, 2000);

	if (!outlier_add_link(o)) {
		bail_out("outlier_add_link: out of memory");
	}
	build("nobody", o, evs, 1);
	is_int((int)o->nr_links, 0, "nobody: no link");
	outlier_free(o);
}

int main(void)
{
	one_link();
	two_links();
	cycle();
	interrupt();
	interest();
	nobody();
	return tap_done();
}
