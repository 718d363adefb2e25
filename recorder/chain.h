/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chain.h - the wait chain of each outlier (the blocking analysis of flightbox and Trace
 * Compass), from the kernel context events of a snapshot (latsnap_kernel:*), collected as the
 * trace is read, or made up by a test.
 */
#ifndef LATSNAP_CHAIN_H
#define LATSNAP_CHAIN_H

#include <stddef.h>
#include <stdint.h>

struct lsev;
struct outlier;
struct tracker;

/* Links followed at most, nearest first. */
#define CHAIN_MAX_DEPTH 8

enum chain_event_kind {
	CHAIN_SWITCH, /* latsnap_kernel:sched_switch */
	CHAIN_WAKEUP, /* latsnap_kernel:sched_wakeup */
	CHAIN_SYSCALL, /* latsnap_kernel:syscall */
	CHAIN_INTEREST, /* latsnap_kernel:interest */
};

/**
 * struct chain_event - one event of the context stream, as much of it as the analysis needs
 * @ts: the kernel's time of it
 * @start: CHAIN_SYSCALL: its entry
 * @tid: SWITCH: prev; WAKEUP: the woken; SYSCALL, INTEREST: the thread
 * @tid2: SWITCH: next; WAKEUP: current at the wakeup (the waker)
 * @in_irq: WAKEUP: from an interrupt, so @tid2 is a bystander
 * @syscall: SWITCH: prev's syscall; SYSCALL: its name
 * @ips: SWITCH: prev's kernel stack when it blocked, @nr_ips of them (owned)
 */
struct chain_event {
	uint64_t ts;
	uint64_t start;
	int32_t tid;
	int32_t pid;
	int32_t tid2;
	int32_t pid2;
	int64_t prev_state;
	uint8_t kind;
	uint8_t preempted;
	uint8_t in_irq;
	char comm[16];
	char comm2[16];
	char syscall[32];
	uint64_t *ips;
	unsigned int nr_ips;
};

/**
 * struct chain_events - the context events of one snapshot
 * @tr: symbolizes the stacks of links, and tells a wakeup in an interrupt by its stack; NULL
 *	leaves link stacks empty and trusts the in_irq field alone
 */
struct chain_events {
	struct chain_event *v;
	size_t n, cap;
	struct tracker *tr;
};

int chain_add(struct chain_events *ce, const struct chain_event *ev);
int chain_add_lsev(struct chain_events *ce, const struct lsev *ev);
int chain_build(struct chain_events *ce, struct outlier **outliers, size_t nr);
void chain_events_free(struct chain_events *ce);

#endif /* LATSNAP_CHAIN_H */
