/* SPDX-License-Identifier: GPL-2.0 */
/*
 * snapshots.h - read a directory of snapshots (OUTDIR/<id>/summary.json, the contract's form)
 * and check each summary before anything uses it: the one reader of report, show and flame.
 */
#ifndef LATSNAP_SNAPSHOTS_H
#define LATSNAP_SNAPSHOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* A summary.json larger than this is refused as corrupt rather than read into memory. */
#define SNAPSHOT_SUMMARY_MAX (256U << 20)

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
 * @summary: the parsed summary.json when @state is SNAPSHOT_COMPLETE (owned), else NULL
 * @trace: the CTF trace: @path/trace, or @path itself for a snapshot as lttng-relayd wrote it
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
	struct json_object *summary;
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
int snapshots_parse_summary(const char *text, size_t len, const char *name,
			    struct json_object **out, char *why, size_t whylen);
const char *snapshots_state_name(enum snapshot_state state);
void snapshots_filter_host(struct snapshot_set *set, const char *host);

/* Accessors of a checked summary: the checks guarantee the types these read. */
int64_t snapshots_i64(struct json_object *obj, const char *key);
const char *snapshots_str(struct json_object *obj, const char *key, const char *fallback);
struct json_object *snapshots_arr(struct json_object *obj, const char *key);
bool snapshots_is_glue_frame(struct json_object *frame);
size_t snapshots_kernel_skip(struct json_object *frames);

/* The commands' shared option handling (report, show, flame). */
void snapshots_option_error(const char *cmd, int id, int opt, char **argv, int optind);

#endif /* LATSNAP_SNAPSHOTS_H */
