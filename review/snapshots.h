/* SPDX-License-Identifier: GPL-2.0 */
/*
 * snapshots.h - read a directory of snapshots (OUTDIR/<id>/summary.json, the contract's form,
 * read and checked by lib/summary.h's reader) before anything uses them: the one reader of
 * report, show and flame.
 */
#ifndef LATSNAP_SNAPSHOTS_H
#define LATSNAP_SNAPSHOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/summary.h"

struct json_object;
struct outlier;
struct outlier_frame;
struct outlier_frames;
struct outlier_holder;

enum snapshot_state {
	SNAPSHOT_COMPLETE,
	SNAPSHOT_INCOMPLETE, /* no summary.json: still being written, or its writer failed */
	SNAPSHOT_CORRUPT, /* a summary.json that cannot be read or does not follow the contract */
};

/**
 * struct snapshot - one OUTDIR/<id>/
 * @id: the directory's name
 * @path: OUTDIR/<id>
 * @state: see enum snapshot_state
 * @why: for an incomplete or corrupt one, the reason, naming the file ("" otherwise)
 * @summary: the summary when @state is SNAPSHOT_COMPLETE (owned), else NULL
 * @trace: the CTF trace: @path/trace (the summary's "trace" in @path when it names one there),
 *	or @path itself for a snapshot as lttng-relayd wrote it
 * @host: the host it was recorded on: the summary's, or for a relay snapshot without one the
 *	host directory lttng-relayd filed it under; NULL when unknown
 * @relay: whether it is a snapshot of an lttng-relayd tree (its summary from latsnap:summary)
 */
struct snapshot {
	char *id;
	char *path;
	char *trace;
	char *host;
	bool relay;
	enum snapshot_state state;
	char why[8192];
	struct summary *summary;
};

/**
 * struct snapshot_set - every snapshot of a directory, sorted by id (that is, by time)
 * @dir: the directory given
 * @snaps: @nr snapshots
 */
struct snapshot_set {
	char *dir;
	struct snapshot *snaps;
	size_t nr;
};

int snapshots_load(const char *dir, struct snapshot_set *set);
void snapshots_free(struct snapshot_set *set);
int snapshot_load(const char *path, struct snapshot *snap);
void snapshot_free(struct snapshot *snap);
/* The summary's struct, reader and writer are lib/summary.h's (included above). */
int snapshots_parse_summary(const char *text, size_t len, const char *name, struct summary **out,
			    char *why, size_t whylen);
const char *snapshots_state_name(enum snapshot_state state);
void snapshots_filter_host(struct snapshot_set *set, const char *host);

/*
 * A wait reported while it still waited (`record --hang`) is in the summaries more than once:
 * still-blocked when it had waited DUR, then again when it ended, or unfinished when the run
 * ended first, in the same snapshot or a later one (same host, pid, tid and start_ns): its
 * reports' "state" (enum outlier_state) tell them apart.
 */

/**
 * struct snapshot_wait - one wait, counted once
 * @snap: the snapshot of @o (NULL from summary_waits())
 * @o: the report of the wait that counts: an ended one before an unfinished one before a
 *	still-blocked one, then the longest, then the latest
 * @holder: who held what it waited for: @o's holder, else that of the latest other report of
 *	the wait that names one; NULL when none does
 * @reports: how many reports of the wait were read (1 but for a stall)
 * @stalled: a stall: some report of it is still-blocked or unfinished, or @o's cause is a
 *	deadlock (snapshots_is_deadlock())
 */
struct snapshot_wait {
	const struct snapshot *snap;
	const struct outlier *o;
	const struct outlier_holder *holder;
	unsigned int reports;
	bool stalled;
};

int snapshots_waits(const struct snapshot_set *set, struct snapshot_wait **waits, size_t *nr);
int summary_waits(const struct summary *s, struct snapshot_wait **waits, size_t *nr);
bool snapshots_is_deadlock(const struct outlier *o);

/**
 * struct snapshot_idle - a thread's idle waits at one place, summed over the snapshots of a set
 * @host: the host of its snapshots ("" when unknown); pids are per host
 * @pid: its process
 * @tid: the thread
 * @comm: the thread's name in the latest snapshot that has it
 * @site: where it waits
 * @count: how many idle waits
 * @total_ns: their total duration (saturating)
 *
 * The strings point into the set.
 */
struct snapshot_idle {
	const char *host;
	int32_t pid;
	int32_t tid;
	const char *comm;
	const char *site;
	uint64_t count;
	uint64_t total_ns;
};

int snapshots_idle(const struct snapshot_set *set, struct snapshot_idle **idle, size_t *nr);

bool snapshots_is_glue_frame(const struct outlier_frame *frame);
size_t snapshots_kernel_skip(const struct outlier_frames *frames);

/*
 * The commands' shared option handling (report, show, flame). Their option parsers return an
 * exit status to stop with (--help, a usage error), or this to go on.
 */
#define SNAPSHOTS_GO_ON (-1)
void snapshots_option_error(const char *cmd, int id, int opt, char **argv, int optind);

#endif /* LATSNAP_SNAPSHOTS_H */
