/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracker.h - the user-space side of the BPF tracker: load, configure, consume, decode.
 */
#ifndef LATSNAP_TRACKER_H
#define LATSNAP_TRACKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "include/latsnap.h"
#include "tracker/usyms.h"

struct tracker;

struct tracker_opts {
	uint64_t threshold_ns;
	uint64_t sleep_threshold_ns;
	bool track_all;
	/* No target: every process that registers through the preload library is tracked. */
	bool track_registered;
	bool include_idle;
	/* --exact-start: every syscall entry reads the clock (else only where a tick is too coarse). */
	bool exact_start;
	/* Time the goroutine waits of Go programs (tracker/goroutines.c): two uprobes each. */
	bool go_waits;
	/* tracker_add_request() will be called: load the request programs (else left out). */
	bool requests;
	/* One byte per syscall number, non-zero for the idle list. */
	unsigned char idle_syscalls[LS_MAX_SYSCALLS];
	/* Syscalls of the context stream shorter than this are not sent. */
	uint64_t ctx_floor_ns;
	/* No process can carry the preload library (--no-preload and a COMMAND): no signals. */
	bool no_preload;
	/* record --cgroup: the ids of the cgroup v2 directories whose processes are tracked. */
	uint64_t cgroup_ids[LS_MAX_CGROUPS];
	unsigned int nr_cgroups;
	/* record --comm: the process names (NUL-padded) that are tracked. */
	struct ls_comm comms[LS_MAX_COMMS];
	unsigned int nr_comms;
	/*
	 * record --max-rate: outliers a second per process on average, twice that at once (each
	 * user twice both); 0: no limit.
	 */
	unsigned int max_rate;
};

/* A process's or a user's outliers dropped at the source, over its share (record --max-rate). */
struct tracker_share {
	bool user; /* @id is a uid; else a tgid */
	uint32_t id;
	uint64_t dropped;
};

/* Totals of what was seen and what was lost, summed over CPUs. */
struct tracker_totals {
	uint64_t outliers; /* submitted by the kernel side */
	uint64_t received; /* decoded by user space */
	uint64_t ringbuf_lost;
	uint64_t stack_failed;
	uint64_t stacks_dropped;
	uint64_t accum_full;
	uint64_t storage_failed;
	uint64_t runs_skipped; /* BPF program runs the kernel skipped (recursion) */
	uint64_t signals; /* sent to the preload library */
	uint64_t signal_busy; /* not sent: the kernel's deferral slot was taken */
	uint64_t signal_skipped; /* not sent: the thread blocked it or had it pending */
	uint64_t ctx_events; /* sent on the kernel context stream */
	uint64_t ctx_lost; /* the context stream had no room for */
	uint64_t unwound; /* stacks the preload library reported */
	uint64_t unwound_refused; /* reports from threads latsnap had not signalled */
	uint64_t user_walks; /* user stacks walked at a switch-out from user code */
	uint64_t user_walks_deferred; /* ... at the switch back in, for a long interval only */
	uint64_t signal_refused; /* owed signals the kernel would not send */
	uint64_t ctx_stacks; /* kernel stacks walked for the context stream */
	uint64_t wait_stacks; /* kernel stacks walked for tracked threads' long waits */
	uint64_t throttled; /* outliers dropped at the source: over their process's or user's share */
	uint64_t ours_dropped; /* outliers and stalls of LTTng's or latsnap's own processes */
};

/*
 * Called for every event of the kernel context stream (tracker_set_context()) that
 * tracker_read_context() hands over, in time order; the header and e->nr_ips addresses are valid.
 */
typedef void (*tracker_context_fn)(const struct ls_ctx_event *e, void *ctx);

struct outlier;
struct outlier_frames;

/*
 * Called for every outlier, decoded. The callback owns @outlier from then on (outlier_free() it
 * or hand it on). A non-zero return stops tracker_poll().
 */
typedef int (*tracker_outlier_fn)(struct outlier *outlier, void *ctx);

int tracker_open(struct tracker **trackerp, const struct tracker_opts *opts, tracker_outlier_fn fn,
		 void *ctx);
int tracker_follow_goroutines(struct tracker *tr, pid_t pid, const char *path);
int tracker_track_pid(struct tracker *tr, pid_t pid);

/* The kinds of target a run can change live (tracker_live_targets()). */
enum tracker_target_kind {
	TRACKER_TARGET_PIDS = 1, /* -p */
	TRACKER_TARGET_CGROUPS = 2, /* --cgroup */
	TRACKER_TARGET_COMMS = 4, /* --comm */
};

unsigned int tracker_live_targets(struct tracker *tr);
int tracker_set_targets(struct tracker *tr, const pid_t *pids, int nr_pids,
			const uint64_t *cgroup_ids, int nr_cgroups, const struct ls_comm *comms,
			int nr_comms);
int tracker_adopt_preloaded(struct tracker *tr, pid_t pid);
int tracker_attach(struct tracker *tr);
void tracker_set_thresholds(struct tracker *tr, uint64_t threshold_ns, uint64_t sleep_threshold_ns);
void tracker_keep_exited(struct tracker *tr, bool keep);
void tracker_release_exited(struct tracker *tr);
int tracker_user_modules(struct tracker *tr, pid_t pid, usyms_module_fn fn, void *ctx);
int tracker_set_context(struct tracker *tr, enum ls_ctx_level level, tracker_context_fn fn,
			void *ctx);
int tracker_kernel_frames(struct tracker *tr, const uint64_t *ips, unsigned int nr,
			  struct outlier_frames *frames);
int tracker_wake_context(struct tracker *tr, const uint64_t *ips, unsigned int nr,
			 unsigned int *own);
/* Called for each record of a stall scan; a non-zero return stops handing them over. */
typedef int (*tracker_stall_fn)(const struct ls_stall *st, void *ctx);

int tracker_scan_stalls(struct tracker *tr, uint64_t min_ns, tracker_stall_fn fn, void *ctx);
int tracker_scan_waiting(struct tracker *tr, tracker_stall_fn fn, void *ctx);
int tracker_stall_thread(struct tracker *tr, pid_t tid, struct ls_stall *out);
int tracker_stall_outlier(struct tracker *tr, const struct ls_stall *st, struct outlier **outp);
int tracker_stall_user_frames(struct tracker *tr, const struct ls_stall *st,
			      struct outlier_frames *frames);
struct request_spec;
int tracker_add_request(struct tracker *tr, const struct request_spec *spec);
int tracker_poll(struct tracker *tr, int timeout_ms);
int tracker_drain(struct tracker *tr);

/* What one tracker_read_context() did. */
struct tracker_ctx_read {
	uint64_t emitted; /* handed to the consumer */
	uint64_t trimmed; /* in the window, left out, oldest first, to stay under the byte budget */
	uint64_t torn; /* written over while read, or still being written */
	uint64_t stacks_lost; /* stacks the stack ring no longer held: their events go without */
	uint64_t wrapped_ns; /* the longest stretch of the window that some CPU's ring no longer held */
	uint64_t bytes; /* the size of what was handed over, as tracker_ctx_event_size() counts */
};

uint64_t tracker_ctx_event_size(unsigned int nr_ips);
int tracker_read_context(struct tracker *tr, uint64_t from_ns, bool again, uint64_t max_bytes,
			 struct tracker_ctx_read *r);
int tracker_settle(struct tracker *tr, int timeout_ms);
void tracker_totals(struct tracker *tr, struct tracker_totals *totals);
size_t tracker_shares_dropped(struct tracker *tr, struct tracker_share *out, size_t max);
void tracker_state_left(struct tracker *tr, unsigned int *processes, unsigned int *in_flight);
void tracker_close(struct tracker *tr);

#endif /* LATSNAP_TRACKER_H */
