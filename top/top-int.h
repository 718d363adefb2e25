/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top-int.h - what the files of `latsnap top` share: its state, one refresh's data and the
 * functions each file offers the others. Private to top/: cli/ and the tests use top/top.h.
 *
 *	top.c		top_main(): options, rules, signals, then the batch loop or the screen
 *	options.c	the command line
 *	load.c		the BPF program opened, configured, loaded and attached; kernel symbols
 *	drain.c		each refresh: the aggregates read and emptied, the stats read
 *	stalls.c	each refresh: the threads waiting longer than --hang (the stall scan)
 *	causes.c	the cause of each aggregate or stall (cached) and its synchronization object
 *	idle.c		which aggregates and stalls wait for work (the idle policy), counted apart
 *	table.c		a refresh grouped into the rows of a table, and into processes or threads
 *	format.c	the lines of the tables, as LatencyTOP writes them
 *	view.c		--batch: plain text or JSON
 *	screen.c	the live ncurses screen and its keys
 */
#ifndef LATSNAP_TOP_TOP_INT_H
#define LATSNAP_TOP_TOP_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <linux/types.h>

#include "include/top.h"
#include "top/top.h"

#define SYSTEM_ROWS 10
#define PROCESS_ROWS 8
/* Stalled threads on the screen; --batch lists them all. */
#define STALL_ROWS 5
#define MAX_PIDS 64

struct top_bpf;
struct ksyms;
struct rules;
struct idle_policy;
struct top_place;

struct top_opts {
	uint64_t interval_ns;
	long batch;
	bool json;
	bool kthreads;
	bool include_idle; /* --include-idle: the idle list and the idle policy off */
	const char *rules_path;
	uint64_t sample_below_ns;
	uint32_t sample_ratio;
	uint64_t hang_ns; /* --hang: waits listed while they last beyond it; 0 for off */
	int pids[MAX_PIDS];
	size_t nr_pids;
};

/* The cause of the waits of one (stack, syscall, futex lock bit, thread name), as cached. */
struct top_cause {
	uint64_t stack;
	int32_t nr;
	bool futex_lock;
	char comm[16];
	char *cause;
	bool special;
	/*
	 * Whether the idle policy calls such a wait idle: [of a thread that is not its process's
	 * main thread][whose thread came back to where it waits]. Always false with --include-idle.
	 */
	bool idle[2][2];
};

/* A thread waiting longer than --hang at a refresh, as the stall scan found it. */
struct top_stalled {
	uint32_t tgid;
	uint32_t tid;
	uint64_t waited_ns; /* so far */
	int32_t nr; /* syscall number; -1 outside any syscall, and for a wait for CPU */
	bool before_top; /* blocked before top started: its start is the scheduler's (estimated) */
	const char *cause; /* owned by the cause cache */
	char *object; /* as struct top_wait's */
	char comm[16];
	char pcomm[16];
};

/* One refresh's data. */
struct top_period {
	struct top_wait *waits;
	size_t nr;
	struct top_stalled *stalled; /* longest first */
	size_t nr_stalled;
	uint64_t interval_ns;
	uint64_t total_ns;
	uint64_t stats[TOP_STAT_NR];
	time_t when;
	/* Waits for work, left out of the above (not with --include-idle). */
	uint64_t idle_waits; /* ended in the interval, as the aggregates count them */
	uint64_t idle_ns; /* their total */
	size_t idle_threads; /* the threads they are of */
	size_t idle_now; /* threads waiting for work longer than --hang now: not stalled */
};

struct top {
	struct top_opts opts;
	struct top_bpf *skel;
	struct ksyms *ksyms;
	const struct rules *rules;
	struct rules *own_rules;
	struct idle_policy *idle;
	/* The places threads waited at (top/idle.c), across refreshes: open addressing. */
	struct top_place *places;
	size_t nr_places;
	uint32_t places_gen; /* the interval being drained, for them */
	/* The causes of the aggregates being drained, by value: uncached ones share one struct. */
	struct top_cause *agg_causes;
	void *causes; /* tsearch tree of struct top_cause */
	void *uncached; /* tsearch tree of the texts of causes not cached */
	size_t nr_causes;
	int ncpus;
	uint64_t stats_seen[TOP_STAT_NR];
	struct top_period cur;
	uint64_t last_drain_ns;
	/* What top_drain_map() takes, as large as the aggregate map: kept between refreshes. */
	struct top_key *keys;
	struct top_value *values;
	bool batch_refused; /* the kernel has no batch operations: one syscall per key */
	/* The screen. */
	enum top_view view;
	enum top_sort sort;
	bool threads;
	uint32_t sel_id; /* the pid (or tid in thread view) on display */
};

/* A process (or a thread, in thread view) of a refresh, its waits added up. */
struct top_entity {
	uint32_t id; /* pid, or tid in thread view */
	uint32_t tgid;
	const char *name;
	uint64_t total_ns;
	size_t threads;
};

/* Set by SIGINT, SIGTERM and SIGHUP: the batch loop and the screen end at the next wakeup. */
extern volatile sig_atomic_t top_stop_requested;

int top_parse_args(struct top_opts *o, int argc, char **argv);

int top_load(struct top *t);
void top_unload(struct top *t);

int top_drain(struct top *t);
void top_drain_free(struct top *t);

int top_stalls_scan(struct top *t, struct top_period *p);
int top_stalls_note(struct top *t);
void top_stalls_free(struct top_period *p);

const struct top_cause *top_cause_of(struct top *t, const struct top_key *k, const char *comm);
const struct top_cause *top_cause_of_stall(struct top *t, const struct top_stall *s);
uint64_t top_stack_hash(const __u64 *ips, size_t n);
char *top_object_of(const struct top_key *k);
void top_causes_clear(struct top *t);
void top_causes_free(struct top *t);

int top_idle_open(struct top *t);
void top_idle_close(struct top *t);
void top_idle_begin(struct top *t);
void top_idle_note(struct top *t, const struct top_key *k, uint64_t count,
		   const struct top_cause *c);
bool top_idle_wait(struct top *t, const struct top_key *k, const struct top_cause *c);
bool top_idle_stall(struct top *t, const struct top_stall *s, const struct top_cause *c);
size_t top_idle_threads(uint32_t *tids, size_t n);

size_t top_entities(struct top *t, bool threads, struct top_entity **listp);
size_t top_entity_index(const struct top_entity *list, size_t n, uint32_t id);
bool top_pid_listed(const struct top *t, uint32_t tgid);

const char *top_view_name(enum top_view view);
void top_format_row(char *buf, size_t len, const struct top_row *r, uint64_t total, int width);
void top_format_header(char *buf, size_t len, const char *what, int width);
void top_format_title(const struct top *t, char *buf, size_t len);
void top_format_entity(const struct top_entity *e, bool threads, char *buf, size_t len);
void top_format_stalled_title(const struct top *t, char *buf, size_t len);
void top_format_stalled(const struct top_stalled *s, char *buf, size_t len);
void top_format_idle(const struct top *t, char *buf, size_t len);

void top_print_text(struct top *t, FILE *out);
void top_print_json(struct top *t, FILE *out);

int top_screen_run(struct top *t);

#endif /* LATSNAP_TOP_TOP_INT_H */
