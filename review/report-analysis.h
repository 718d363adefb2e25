/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report-analysis.h - what `latsnap report` says, computed once into struct report: the tables
 * of groups, the stalls and their deadlocks, the longest waits and who held them up, the idle
 * waits. The renderers (report-render.h: text, JSON, HTML) only walk it; nothing here prints.
 */
#ifndef LATSNAP_REPORT_ANALYSIS_H
#define LATSNAP_REPORT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct outlier;
struct outlier_holder;
struct outlier_link;
struct snapshot_idle;
struct snapshot_set;
struct snapshot_wait;

enum report_by {
	REPORT_BY_CAUSE,
	REPORT_BY_PROCESS,
	REPORT_BY_SYSCALL,
	REPORT_BY_HOST,
	REPORT_BY_REQUEST,
	NR_REPORT_BY,
};

/* --by's names, as the options, the text and --json spell them. */
extern const char *const report_by_names[NR_REPORT_BY];

/* A group's log2 histogram: [0]: 0 ns; [k + 1]: 2^k .. 2^(k+1) - 1 ns. */
#define REPORT_HIST_BUCKETS 65
/* The longest waits listed, each with what held it up. */
#define REPORT_LONGEST_ROWS 10

struct report_table;

/**
 * struct report_group - one row of a table: the outliers that share a key
 * @key: what they share (with --by process, "comm (pid)", and " on host" when there are several)
 * @count: how many
 * @total_ns: their total duration (saturating)
 * @average_ns: @total_ns / @count
 * @max_ns: the longest
 * @percent: @total_ns's share of the table's
 * @hist: @count by duration, see REPORT_HIST_BUCKETS
 * @probe: a row of requests (--by request): their probe pair ("START,END"), else NULL
 * @arg: the requests' argument on one line when they are grouped by it (a USDT pair's), or NULL
 * @label: the text that names a row of requests: @arg, or @probe
 * @causes: a row of requests' table of their causes, largest first
 */
struct report_group {
	char *key;
	uint64_t count;
	uint64_t total_ns;
	uint64_t average_ns;
	uint64_t max_ns;
	double percent;
	uint64_t hist[REPORT_HIST_BUCKETS];
	char *probe;
	char *arg;
	char *label;
	struct report_table *causes;
};

/**
 * struct report_table - rows sharing a total, largest total first
 * @groups: @nr rows (@cap allocated)
 * @count: the outliers of every row
 * @total_ns: their total duration (saturating)
 * @nr_probes: how many probe pairs its rows of requests have (--by request)
 */
struct report_table {
	struct report_group *groups;
	size_t nr, cap;
	uint64_t count;
	uint64_t total_ns;
	size_t nr_probes;
};

/*
 * The numbers of a row, in the order each renderer shows them: adding a column to every table
 * of the text, --json and the HTML page's data is one entry of report_columns[] (and the page's
 * script, review/html/page.js, to draw it).
 */
enum report_unit {
	REPORT_UNIT_COUNT,
	REPORT_UNIT_NS,
	REPORT_UNIT_PERCENT,
};

union report_value {
	uint64_t n; /* REPORT_UNIT_COUNT, REPORT_UNIT_NS */
	double percent; /* REPORT_UNIT_PERCENT */
};

/**
 * struct report_column - one number of every row
 * @member: its name in a --json group
 * @title: its head in the text's tables; NULL: in --json only
 * @width: its width in the text
 * @unit: how it is written
 * @value: its value in a row
 */
struct report_column {
	const char *member;
	const char *title;
	int width;
	enum report_unit unit;
	union report_value (*value)(const struct report_group *g);
};

extern const struct report_column report_columns[];
extern const size_t report_nr_columns;

/**
 * struct report_process - the outliers of one process
 * @host: the host it ran on (pids are per host)
 * @pid: the process
 * @comm: its name: its main thread's when that thread had an outlier, else the first thread's
 * @named_by_main: @comm is the main thread's
 * @tids: the @nr_tids threads that had outliers (@cap_tids allocated)
 * @table: its outliers by cause (by syscall with --by syscall, by request with --by request)
 */
struct report_process {
	char *host;
	int64_t pid;
	char *comm;
	bool named_by_main;
	int64_t *tids;
	size_t nr_tids, cap_tids;
	struct report_table table;
};

/**
 * struct report_stall - a stalled wait (struct snapshot_wait's @stalled)
 * @w: the wait
 * @cycle: the deadlock it is part of, an index of struct report's @cycles; -1 for a wait that is
 *	in none
 * @pos: where it came among the waits
 */
struct report_stall {
	const struct snapshot_wait *w;
	int cycle;
	size_t pos;
};

/**
 * struct report_cycle_thread - one thread of a deadlock, in the order they wait for each other
 * @stall: its stalled wait
 * @chained: it holds what the thread before it waits for (false for the first of a chain)
 */
struct report_cycle_thread {
	const struct report_stall *stall;
	bool chained;
};

/**
 * struct report_cycle - a deadlock: its threads along their holders, a chain at a time
 * @threads: @nr threads
 * @closed_by: the first thread of the last chain, when the last thread waits for it (the cycle
 *	closes); else NULL
 * @holder: else the last thread's holder, outside the report's stalls; or NULL
 */
struct report_cycle {
	struct report_cycle_thread *threads;
	size_t nr;
	const struct report_stall *closed_by;
	const struct outlier_holder *holder;
};

/* Who held a long wait up, as the report names it: the first that the wait's reports know. */
enum report_held_up {
	REPORT_HELD_UP_UNKNOWN,
	REPORT_HELD_BY_HOLDER, /* who held what it waited for */
	REPORT_HELD_UP_BY_LINK, /* the nearest thread of its wait chain */
	REPORT_WOKEN_BY_INTERRUPT, /* a waker on no thread of its own: [hardirq], [softirq] */
	REPORT_WOKEN_BY_THREAD, /* its waker */
};

/**
 * struct report_longest - one of the longest waits
 * @w: the wait
 * @how: who held it up
 * @link: REPORT_HELD_UP_BY_LINK: the nearest thread of its wait chain, with what it did meanwhile
 * @blocked_percent: REPORT_HELD_UP_BY_LINK: the share of @link's span it was blocked
 * @link_wait: REPORT_HELD_UP_BY_LINK: the wait of @link's thread that covers most of the link
 *	(the holder waiting itself, as a row lock's holder in its own sleep), or NULL
 */
struct report_longest {
	const struct snapshot_wait *w;
	enum report_held_up how;
	const struct outlier_link *link;
	double blocked_percent;
	const struct outlier *link_wait;
};

/**
 * struct report - everything `latsnap report` says about a set of snapshots
 * @by: the grouping of @system and of each process's table
 * @set: the snapshots, as loaded
 * @complete: how many of them are complete (the others are listed, not reported)
 * @skipped: outliers the recorder skipped, over the complete snapshots
 * @system: every outlier, by @by
 * @hosts: the same outliers by host
 * @many_hosts: @hosts has more than one row (rows and threads then name their host)
 * @procs: @nr_procs processes (@cap_procs allocated), largest total first
 * @waits: every wait once (@nr_waits); they point into @set
 * @stalls: @nr_stalls stalled waits: the deadlocks first, a cycle's threads together, then
 *	the longest first
 * @cycles: @nr_cycles deadlocks, in the order of @stalls
 * @longest: the @nr_longest longest waits (at most REPORT_LONGEST_ROWS), longest first
 * @not_requests: --by request: the outliers left out, not being requests
 * @idle: @nr_idle idle waits by thread and place, largest total first
 * @idle_count: the idle waits
 * @idle_total_ns: their total duration (saturating)
 */
struct report {
	enum report_by by;
	const struct snapshot_set *set;
	uint64_t complete;
	uint64_t skipped;
	struct report_table system;
	struct report_table hosts;
	bool many_hosts;
	struct report_process *procs;
	size_t nr_procs, cap_procs;
	struct snapshot_wait *waits;
	size_t nr_waits;
	struct report_stall *stalls;
	size_t nr_stalls;
	struct report_cycle *cycles;
	size_t nr_cycles;
	struct report_longest longest[REPORT_LONGEST_ROWS];
	size_t nr_longest;
	uint64_t not_requests;
	struct snapshot_idle *idle;
	size_t nr_idle;
	uint64_t idle_count;
	uint64_t idle_total_ns;
};

int report_analyse(struct report *r, const struct snapshot_set *set);
void report_free(struct report *r);
const char *report_wait_host(const struct snapshot_wait *w);
void report_one_line(const char *text, char *buf, size_t len);

#endif /* LATSNAP_REPORT_ANALYSIS_H */
