/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recorder-int.h - the recorder's state, shared by recorder.c (batches, snapshots, summaries)
 * and outtree.c (the output tree: opened, owned, walked, evicted, adopted). Not for anyone
 * outside recorder/recorder.c and recorder/outtree.c.
 */
#ifndef LATSNAP_RECORDER_INT_H
#define LATSNAP_RECORDER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder/recorder.h"
#include "recorder/retention.h"
#include "recorder/session.h"

/*
 * Outliers one snapshot holds. Each costs tens of kB as JSON (its frames), so a storm of
 * thousands a second would otherwise grow latsnap by hundreds of MB before its snapshot.
 */
#define MAX_BATCH 1024
/*
 * The kernel context of a snapshot written into a trace of its own, at most: what latsnap holds
 * in memory while it writes it. 256 MB (all the kernel's rings hold) took latsnap to 135 MB
 * anonymous in 94-faults' outlier storm, over its 128 MB bound; 8 MB is four times the window
 * the session's ring allowed, and the oldest events are left out for room (said with -v).
 */
#define CTX_OWN_MAX_BYTES (8ULL << 20)
/* How long record waits at start for its own events to be enabled (emit_wait_ready()). */
#define EMIT_READY_TIMEOUT_MS 10000
/* A latsnap:summary event carries at most this much of the summary (and half a sub-buffer). */
#define SUMMARY_PART_MAX 65536
/* How often snapshots are checked against --max-age when none is written. */
#define AGE_CHECK_NS (60 * 1000000000ull)
/*
 * The kernel context a snapshot takes: from this long before its oldest outlier's start (what
 * show's timeline puts before it, and the state each thread of a wait chain was in as the wait
 * began) to now.
 */
#define CTX_MARGIN_NS (50 * 1000000ull)
/* An earlier run's snapshot without summary.json, untouched this long, is no snapshot under way. */
#define INCOMPLETE_AGE_NS (3600 * 1000000000ull)

struct recorder {
	struct recorder_opts opts;
	struct session *session;
	struct emit *emit; /* NULL when liblatsnap-events.so could not be loaded: */
	char emit_why[256]; /* why */
	struct tracker *tracker;
	int out_fd;
	char out_path[PATH_MAX];
	bool staging; /* out_path is latsnap's own, removed at the end (relay without a local copy) */
	struct outlier **batch; /* outliers waiting for the post window, MAX_BATCH at most */
	size_t nr_batch;
	uint64_t batch_first_ns; /* monotonic time the first of them arrived */
	uint64_t last_snapshot_ns;
	uint64_t skipped_since; /* outliers no snapshot covers, since the previous snapshot */
	uint64_t batch_over; /* of those, outliers that came when the batch held MAX_BATCH */
	uint64_t lost_packets;
	bool streaming; /* the BPF side streams the kernel context into the session */
	/*
	 * latsnap's own events of a snapshot (kernel context, outliers) go into a trace of their
	 * own next to LTTng's, each at its time (recorder/timeline.c). A relay gets LTTng's
	 * snapshots only: for it they are collected too, through @replay_emit, into the
	 * @replay of this snapshot's turn, whose latsnap-replay records them into replay
	 * session @replay_turn each at its time.
	 */
	struct replay *replay[SESSION_MAX_REPLAY];
	struct emit *replay_emit;
	unsigned int replay_turn;
	struct ctf_writer *timeline; /* that trace of the snapshot being taken */
	bool session_gone; /* the session daemon died: outliers are printed, not persisted */
	uid_t owner_uid; /* who gets what latsnap writes (sudo's caller), or -1 */
	gid_t owner_gid;
	unsigned int seq;
	uint64_t next_age_check_ns;
	char last_id[64];
	uint64_t last_realtime_ns;
	struct retention retention;
	struct recorder_totals totals;
	struct guard *guard;
};

/* outtree.c */
void outtree_adopt_earlier(struct recorder *rec);
void outtree_evict_snapshot(const struct retention_kept *k, void *ctx);
void outtree_expire_old(struct recorder *rec);
void outtree_give_tree(struct recorder *rec, int snap_fd);
int outtree_open_output(const char *path, char *abs, size_t abs_size, uid_t uid, gid_t gid);
uint64_t outtree_realtime_ns(void);
int outtree_remove_tree(int fd, const char *name);
int outtree_settle_trace_dir(int snap_fd);
void outtree_sudo_owner(uid_t *uid, gid_t *gid);
uint64_t outtree_tree_bytes(int fd);
int outtree_write_atomic(int fd, const char *name, const char *text, size_t len, bool durable);

#endif /* LATSNAP_RECORDER_INT_H */
