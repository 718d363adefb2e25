/* SPDX-License-Identifier: GPL-2.0 */
/*
 * summary.h - summary.json, a snapshot's summary: its struct, its one writer (record) and its
 * one reader and validator (report, show, flame, export, and record's retention).
 *
 * The contract is summary.json version 1 (SUMMARY_VERSION), whose JSON Schema is
 * tests/schemas/summary.schema.json (draft-07, "summary-v1.json"): every summary the
 * integration tests write is checked against it. An outlier in it is OUTLIER, read and written
 * by lib/outlier.c; the members around the outliers are read and written only here.
 */
#ifndef LATSNAP_SUMMARY_H
#define LATSNAP_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;
struct outlier;

/* The version this latsnap writes and reads (tests/schemas/summary.schema.json). */
#define SUMMARY_VERSION 1

/* A summary.json larger than this is refused as corrupt rather than read into memory. */
#define SUMMARY_MAX (256U << 20)

/**
 * struct summary_idle - one entry of a summary's "idle" list (issue 18): the waits of one thread
 *			 at one place that the recorder's idle policy judged waiting for work,
 *			 ended since the previous snapshot of the same run
 * @pid: its process
 * @tid: the thread
 * @comm: the thread's name
 * @site: where it waits ("pthread_cond_wait in bioProcessBackgroundJobs")
 * @count: how many such waits ended in the snapshot's window
 * @total_ns: their total duration
 */
struct summary_idle {
	int32_t pid;
	int32_t tid;
	char *comm;
	char *site;
	uint64_t count;
	uint64_t total_ns;
};

/**
 * struct summary_held - one process's outliers that started no snapshot (record's flood guard,
 * "held_back"): since the previous snapshot, by reason
 * @uid: its real user id, or -1 when it could not be told
 * @repeats: a wait site snapshotted lately, again
 * @over_user_budget: its user had had its snapshots of the last minute
 * @over_budget: all users together had, and its cause had one in that minute
 */
struct summary_held {
	int32_t pid;
	int64_t uid;
	char *comm;
	uint64_t repeats;
	uint64_t over_user_budget;
	uint64_t over_budget;
};

/**
 * struct summary_dropped - outliers the BPF side dropped over a process's or a user's share
 * (record --max-rate, "dropped_at_source"), since the run began
 * @user: @id is a uid; else a pid
 */
struct summary_dropped {
	bool user;
	uint32_t id;
	uint64_t dropped;
};

/**
 * struct summary - a summary.json, checked, its outliers typed
 * @id: the summary's id
 * @host: the host it was recorded on
 * @created: when, as written (RFC 3339 UTC), or NULL when the summary does not say
 * @trace: the trace's directory in the snapshot as the summary names it, or NULL
 * @skipped: outliers seen since the previous snapshot that no snapshot covers
 * @outliers: its @nr_outliers outliers, in the summary's order
 * @flags: its @nr_flags warnings about the snapshot as a whole
 * @idle: its @nr_idle idle entries that could be read, in the summary's order (none in a summary
 *	written before issue 18)
 * @idle_why: NULL, or "FILE: what" when "idle" was damaged: the bad entries are left out of
 *	@idle rather than the summary refused (idle waits are not latency: a bad one must not cost
 *	the outliers); the reader warns with it once
 * @json_idx: for each of @outliers, its index in the file's "outliers"
 * @outliers_why: NULL, or "FILE: what (K of N outliers skipped)" when some outliers were bad:
 *	each is left out (one bad outlier, a stack or a split written wrong, must not cost the
 *	others, nor the trace); the reader warns with it once
 * @json: the summary as read; only summary.c reads it (summary_to_json() passes the members
 *	this latsnap does not know through)
 *
 * @held, @dropped: written only (read back through @json): what the flood guard held back since
 *	the previous snapshot, and what the BPF side dropped over a share since the run began
 *
 * The writer, summary_format(), reads @id to @idle, @held and @dropped only: the recorder fills them with what it
 * gathered (its own memory; it frees nothing through summary_free()).
 */
struct summary {
	char *id;
	char *host;
	char *created;
	char *trace;
	uint64_t skipped;
	struct outlier **outliers;
	size_t nr_outliers;
	char **flags;
	size_t nr_flags;
	struct summary_idle *idle;
	size_t nr_idle;
	char *idle_why;
	size_t *json_idx;
	char *outliers_why;
	struct json_object *json;
	struct summary_held *held;
	size_t nr_held;
	struct summary_dropped *dropped;
	size_t nr_dropped;
};

/*
 * How summary_parse() reads: SUMMARY_STRICT checks the whole contract (review); SUMMARY_LENIENT
 * reads only what record's retention needs of an earlier run's summary, so that one written by
 * another version still counts: the outliers (each an object with an integer "duration_ns"),
 * each read as its cause (when it is a string) and duration only, and "created".
 */
enum summary_mode {
	SUMMARY_STRICT,
	SUMMARY_LENIENT,
};

int summary_parse(const char *text, size_t len, const char *name, enum summary_mode mode,
		  struct summary **out, char *why, size_t whylen);
void summary_free(struct summary *s);
char *summary_format(const struct summary *s);
struct json_object *summary_to_json(const struct summary *s, struct json_object *outliers);
struct json_object *summary_outlier_to_json(const struct summary *s, size_t i);

#endif /* LATSNAP_SUMMARY_H */
