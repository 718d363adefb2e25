/* SPDX-License-Identifier: GPL-2.0 */
/*
 * threadstate.h - what each thread was doing over time (on CPU, blocked, waiting for a CPU),
 * rebuilt from a snapshot's latsnap_kernel:sched_switch and latsnap_kernel:sched_wakeup events:
 * the state spans and wakeups that `latsnap export` and the HTML timeline draw.
 */
#ifndef LATSNAP_THREADSTATE_H
#define LATSNAP_THREADSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lsev;

enum threadstate_kind {
	THREADSTATE_UNKNOWN, /* no event of the thread says */
	THREADSTATE_ON_CPU,
	THREADSTATE_BLOCKED, /* switched out to wait, until its wakeup */
	THREADSTATE_RUNQUEUE, /* runnable (woken or preempted), waiting for a CPU */
};

/**
 * struct threadstate_span - one stretch of time a thread spent in one state
 * @tid: the thread
 * @from_ns: its start
 * @to_ns: its end: the next span's @from_ns
 * @state: what the thread did
 */
struct threadstate_span {
	int64_t tid;
	uint64_t from_ns, to_ns;
	enum threadstate_kind state;
};

/**
 * struct threadstate_wakeup - one wakeup of a thread (a sched_wakeup event)
 * @ts_ns: when
 * @waker_tid: the thread that woke it (0: the idle task, in an interrupt)
 * @tid: the thread woken
 * @in_irq: the wakeup came from interrupt context: @waker_tid is only who ran then
 */
struct threadstate_wakeup {
	uint64_t ts_ns;
	int64_t waker_tid, tid;
	bool in_irq;
};

struct threadstate;

struct threadstate *threadstate_new(void);
int threadstate_add(struct threadstate *ts, const struct lsev *ev);
int threadstate_spans(const struct threadstate *ts, int64_t tid, uint64_t from_ns, uint64_t to_ns,
		      struct threadstate_span **spans, size_t *nr);
int threadstate_wakeups(const struct threadstate *ts, int64_t tid, uint64_t from_ns, uint64_t to_ns,
			struct threadstate_wakeup **w, size_t *nr);
const char *threadstate_name(enum threadstate_kind k);
void threadstate_free(struct threadstate *ts);

#endif /* LATSNAP_THREADSTATE_H */
