/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracker-int.h - the tracker's state, shared by the files that each do one of its jobs:
 * tracker.c (the BPF object's life: load, attach, configure, poll; and the maps reader), ring.c
 * (the ring buffer's records, each to its handler), park.c (outliers held for their unwound
 * stacks), deliver.c (where a finished outlier goes), loopwait.c (an event loop's wait told
 * apart), requests.c (request outliers and their CPU profiles), totals.c (the kernel side's
 * counters), context.c (the context rings' reader), targets.c (what is tracked), stalls.c (the
 * stall iterator), ours.c (what never is). Not for anyone outside tracker/.
 *
 * Each file's state is a struct of its own, declared below beside its functions and named for it in
 * struct tracker (tr->park is park.c's; ring.c's is tr->records, tr->ring being the ring buffer;
 * tracker.c's maps reader is tr->maps_reader): only that file writes it, so that what changes a
 * field is found in one file. Another file may read it (tracker.c the parked count and the
 * callback's status, loopwait.c requests.c's keyed objects, stalls.c the targets, totals.c what
 * ring.c received and ours.c dropped, ring.c the maps reader's handles); where one has to change
 * it, it calls the owner's function (tracker.c sets ring.c's budget with ring_budget(), takes
 * deliver.c's callback status with deliver_take_status(); requests.c takes a request's parts from
 * deliver.c with deliver_take_parts()). The top of struct tracker is what they all read: the
 * skeleton, the ring buffer, the symbols, the consumer's callback, which tracker.c sets as it opens
 * and attaches. What the parts write through tr->skel is the BPF side's memory, not this state.
 *
 * Their calls go one way (scripts/check-layers.sh checks it): tracker.c calls ring.c, requests.c,
 * park.c, deliver.c, context.c, targets.c and ours.c; ring.c calls requests.c and park.c;
 * requests.c calls park.c; ring.c, requests.c and park.c hand outliers to deliver.c, which asks
 * loopwait.c, and ring.c reads totals.c: those three call none of the others. ring.c, stalls.c
 * and targets.c ask ours.c, which calls none of them.
 */
#ifndef LATSNAP_TRACKER_INT_H
#define LATSNAP_TRACKER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "include/latsnap.h"
#include "tracker/tracker.h"

struct latsnap_bpf;
struct ring_buffer;
struct bpf_link;
struct ksyms;
struct usyms;
struct pyframes;
struct goroutines;
struct outlier;

/*
 * tracker.c: the maps reader, a thread of its own that reads the mappings of each process as
 * the BPF side notices it (LS_NOTICE_MAPS, in maps_ring), before the main loop gets to it.
 */

/* Notices the maps reader drains from its ring before it reads. */
#define MAPS_BATCH 256

/* Processes the maps reader reads again until ld.so is done with them, at most. */
#define MAPS_WATCH 16

/* Such a process. */
struct maps_watch {
	__u32 pid, key; /* and the notice its captures answer */
	unsigned int reads;
	struct usyms_maps *maps; /* the latest read, not filed yet; or NULL */
};

/* tracker.c's: the maps reader's thread, the ring of maps_ring, and what ends it. */
struct maps_reader {
	struct ring_buffer *ring;
	struct ls_notice batch[MAPS_BATCH]; /* drained, not filed yet */
	struct usyms_maps *read[MAPS_BATCH]; /* the mappings of each, read when drained */
	unsigned int nr_batch;
	struct maps_watch watch[MAPS_WATCH]; /* processes read while ld.so was at work */
	unsigned int nr_watch;
	pthread_t thread;
	bool thread_on;
	int stop_fd; /* an eventfd */
	/*
	 * What ring.c asks the BPF side for another LS_NOTICE_MAPS with: set as the tracker opens,
	 * as ring.c has no skeleton.
	 */
	int noticed_fd;
	__u32 *retell_gen; /* in the mapped .bss */
};

/* ring.c */

/* ring.c's: what it received and flagged, what it may still hand over, the exits it keeps. */
struct ring_state {
	uint64_t received;
	/* Losses already reported in an outlier's flags. */
	struct tracker_totals reported;
	unsigned int budget; /* outliers this poll or drain may still hand over (ring_budget()) */
	/*
	 * Exited processes whose mappings are kept until tracker_release_exited(): the recorder
	 * records them in the trace (latsnap:bin_info) only as the snapshot is written.
	 */
	bool keep_exited;
	pid_t exited[256];
	unsigned int nr_exited;
};

int ring_record(void *ctx, void *data, size_t size);
void ring_budget(struct tracker *tr, unsigned int budget);

/* park.c */

/*
 * An outlier whose thread latsnap signalled, held back until the preload library reports the
 * stack it unwound (LS_KIND_UNWOUND), so that every consumer sees the outlier whole.
 */
struct parked {
	struct outlier *outlier;
	pid_t pid;
	pid_t tid;
	uint32_t signal_seq; /* its signal's number (struct ls_event), which its report carries */
	uint64_t since_ns; /* parked then */
	uint64_t until_ns; /* looked at again then (see park_release_overdue()) */
	uint64_t cpu_ns; /* the thread's CPU time when parked (schedstat), or UINT64_MAX */
};

#define PARKED_MAX 256

/* park.c's: the outliers parked. */
struct park_state {
	struct parked parked[PARKED_MAX]; /* in arrival order */
	unsigned int nr_parked;
};

int park_outlier(struct tracker *tr, struct outlier *outlier, uint32_t signal_seq);
int park_on_unwound(struct tracker *tr, const struct ls_unwound *u);
int park_release_thread(struct tracker *tr, pid_t tid);
int park_release_overdue(struct tracker *tr, bool all);
int park_due_ms(struct tracker *tr, int timeout_ms);
void park_free(struct tracker *tr);

/* deliver.c */

/* Waits sent as parts of requests not ended yet, at most (the oldest go first). */
#define REQ_PARTS_MAX 1024

/* deliver.c's: the parts of requests under way, and the callback's return for the poll. */
struct deliver_state {
	/* Waits kept until their request's end takes them (deliver_take_parts()), in order. */
	struct outlier *parts[REQ_PARTS_MAX];
	unsigned int nr_parts;
	int cb_status; /* the callback's non-zero return, until the poll takes it */
};

int deliver_outlier(struct tracker *tr, struct outlier *outlier);
unsigned int deliver_take_parts(struct tracker *tr, int32_t tid, uint64_t end_ns,
				struct outlier **taken);
int deliver_take_status(struct tracker *tr);
void deliver_free(struct tracker *tr);

/* loopwait.c */

/* loopwait.c's: per process, whether it maps a keyed pair's probe object (the latest 64). */
struct loopwait_state {
	struct {
		int32_t pid;
		bool maps;
	} procs[64];
	unsigned int procs_next;
};

void requests_mark_loop(struct tracker *tr, struct outlier *o);

/* requests.c */

/* requests.c's: record --request's pairs, their probes, the samples of requests under way. */
struct requests_state {
	char *text[LS_MAX_REQUESTS]; /* each pair as given */
	unsigned int nr;
	struct bpf_link *links[2 * LS_MAX_REQUESTS];
	struct bpf_link *kreq_links[2]; /* a keyed request's connect and its socket's data */
	/* The objects of keyed pairs' probes, real paths (loopwait.c reads them). */
	char *kreq_paths[2 * LS_MAX_REQUESTS];
	unsigned int nr_kreq_paths;
	struct ls_sample *samples; /* REQ_SAMPLES_MAX of them, a ring */
	unsigned int sample_head; /* the oldest */
	unsigned int nr_samples;
	struct bpf_link **sample_links; /* one per CPU: the cpu-clock events */
};

int requests_on_end(struct tracker *tr, const struct ls_request *r);
void requests_keep_sample(struct tracker *tr, const struct ls_sample *sample);
void requests_free(struct tracker *tr);

/* context.c */

/* context.c's: the BPF side's context rings (ctx_ring), mapped, and their consumer. */
struct context_state {
	tracker_context_fn fn; /* the kernel context stream's consumer */
	void *fn_ctx;
	const struct ls_ctx_record *ring;
	size_t ring_size;
	uint32_t slots;
	const struct ls_ctx_stack *stacks; /* and their stacks (ctx_stacks) */
	size_t stacks_size;
	uint32_t stack_slots;
	/* Every event of CPU c below done[c] written at or after low[c] was handed over already. */
	uint64_t *done;
	uint64_t *low;
};

int context_size(struct tracker *tr);
int context_map(struct tracker *tr);
void context_free(struct tracker *tr);

/* targets.c */

/* targets.c's: what this run tracks (stalls.c reads it too). */
struct targets_state {
	bool track_registered;
	bool track_all;
	/* --cgroup or --comm: tracked processes that the tracked map does not list. */
	bool track_unlisted;
	/* Loaded for --cgroup, --comm: their checks are in the programs, the rest left out. */
	bool track_cgroups;
	bool track_comms;
	/* The -p targets of tracker_set_targets(), as it last made them (COMMAND's is not one). */
	pid_t *pids;
	unsigned int nr_pids;
};

int targets_want(struct tracker *tr, const struct tracker_opts *opts);
void targets_free(struct tracker *tr);

/* stalls.c */

/* stalls.c's: what its scans learned of this kernel. */
struct stalls_state {
	bool iter_whole; /* task iterators walk every task: none over one process (before 6.1) */
};

/* ours.c */

/* ours.c's: what it kept from being reported. */
struct ours_state {
	uint64_t dropped; /* outliers and stalls of latsnap's or LTTng's processes */
};

int ours_open(struct tracker *tr);
bool ours_drop(struct tracker *tr, pid_t pid);
void ours_target(struct tracker *tr, pid_t pid, bool on);

/*
 * The tracker: at the top, what every part reads, which tracker.c sets as it opens and attaches
 * and no other part writes; then each part's state, which only its file writes.
 */
struct tracker {
	struct latsnap_bpf *skel;
	bool has_attach_cookie; /* BPF cookies (5.15), which --request's probes need (requests.c) */
	struct ring_buffer *ring;
	struct ksyms *ksyms;
	struct usyms *usyms;
	struct pyframes *pyframes; /* CPython 3.11 code objects named (pyframes.c) */
	struct goroutines *go; /* the goroutine waits of tracked Go processes */
	tracker_outlier_fn fn;
	void *ctx;
	int ncpus;
	struct maps_reader maps_reader;
	struct ring_state records;
	struct park_state park;
	struct deliver_state deliver;
	struct loopwait_state loopwait;
	struct requests_state requests;
	struct context_state context;
	struct targets_state targets;
	struct stalls_state stalls;
	struct ours_state ours;
};

#endif /* LATSNAP_TRACKER_INT_H */
