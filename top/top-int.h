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

struct top_opts {
	uint64_t interval_ns;
	long batch;
	bool json;
	bool kthreads;
	const char *rules_path;
	uint64_t sample_below_ns;
	uint32_t sample_ratio;
	uint64_t hang_ns; /* --hang: waits listed while they last beyond it; 0 for off */
	int pids[MAX_PIDS];
	size_t nr_pids;
};

/* The cause of the waits of one (stack, syscall), as the cache keeps it. */
struct top_cause {
	uint64_t stack;
	int32_t nr;
	char *cause;
	bool special;
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
};

struct top {
	struct top_opts opts;
	struct top_bpf *skel;
	struct ksyms *ksyms;
	const struct rules *rules;
	struct rules *own_rules;
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

const struct top_cause *top_cause_of(struct top *t, const struct top_key *k);
const struct top_cause *top_cause_of_stall(struct top *t, const struct top_stall *s);
char *top_object_of(const struct top_key *k);
void top_causes_clear(struct top *t);
void top_causes_free(struct top *t);

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

void top_print_text(struct top *t, FILE *out);
void top_print_json(struct top *t, FILE *out);

int top_screen_run(struct top *t);

#endif /* LATSNAP_TOP_TOP_INT_H */
