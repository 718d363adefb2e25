/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracker-int.h - the tracker's state, shared by the files that each do one of its jobs:
 * tracker.c (the BPF object's life: load, attach, configure, poll), ring.c (the ring buffer's
 * records, each to its handler), park.c (outliers held for their unwound stacks), requests.c
 * (request outliers and their CPU profiles), deliver.c (where a finished outlier goes),
 * loopwait.c (an event loop's wait told apart), totals.c (the kernel side's counters),
 * context.c (the context rings' reader), targets.c (what is tracked), stalls.c (the stall
 * iterator). Not for anyone outside tracker/.
 *
 * Their calls go one way (scripts/check-layers.sh checks it): tracker.c calls ring.c, requests.c
 * and park.c; ring.c calls requests.c and park.c; requests.c calls park.c; ring.c, requests.c
 * and park.c hand outliers to deliver.c, which asks loopwait.c, and ring.c reads totals.c: those
 * three call none of the others.
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
/* Waits sent as parts of requests not ended yet, at most (the oldest go first). */
#define REQ_PARTS_MAX 1024

/* Notices the maps reader drains from its ring before it reads (tracker.c). */
#define MAPS_BATCH 256

/* Processes the maps reader reads again until ld.so is done with them (tracker.c), at most. */
#define MAPS_WATCH 16

/* Such a process. */
struct maps_watch {
	__u32 pid, key; /* and the notice its captures answer */
	unsigned int reads;
	struct usyms_maps *maps; /* the latest read, not filed yet; or NULL */
};

struct tracker {
	struct latsnap_bpf *skel;
	bool has_attach_cookie; /* BPF cookies (5.15), which --request's probes need */
	bool iter_whole; /* task iterators walk every task: none over one process (before 6.1) */
	struct ring_buffer *ring;
	struct ksyms *ksyms;
	struct usyms *usyms;
	struct pyframes *pyframes; /* CPython 3.11 code objects named (pyframes.c) */
	tracker_outlier_fn fn;
	void *ctx;
	tracker_context_fn ctx_fn; /* the kernel context stream's consumer */
	void *ctx_ctx;
	int ncpus;
	/*
	 * The BPF side's context rings (ctx_ring), mapped. Every event of CPU c below ctx_done[c]
	 * written at or after ctx_low[c] was handed over already.
	 */
	const struct ls_ctx_record *ctx_ring;
	size_t ctx_ring_size;
	uint32_t ctx_slots;
	const struct ls_ctx_stack *ctx_stacks; /* and their stacks (ctx_stacks) */
	size_t ctx_stacks_size;
	uint32_t ctx_stack_slots;
	uint64_t *ctx_done;
	uint64_t *ctx_low;
	uint64_t received;
	uint64_t ours_dropped; /* outliers and stalls of latsnap's or LTTng's processes (ours.c) */
	/* Losses already reported in an outlier's flags. */
	struct tracker_totals reported;
	int cb_status;
	unsigned int budget; /* outliers this poll or drain may still hand over */
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
	/*
	 * Exited processes whose mappings are kept until tracker_release_exited(): the recorder
	 * records them in the trace (latsnap:bin_info) only as the snapshot is written.
	 */
	bool keep_exited;
	pid_t exited[256];
	unsigned int nr_exited;
	struct parked parked[PARKED_MAX]; /* in arrival order */
	unsigned int nr_parked;
	/* record --request: each pair as given, and the waits of requests still under way */
	char *req_text[LS_MAX_REQUESTS];
	unsigned int nr_requests;
	struct bpf_link *req_links[2 * LS_MAX_REQUESTS];
	struct bpf_link *kreq_links[2]; /* a keyed request's connect and its socket's data */
	/* The objects of keyed pairs' probes, real paths; per process, whether it maps one. */
	char *kreq_paths[2 * LS_MAX_REQUESTS];
	unsigned int nr_kreq_paths;
	struct {
		int32_t pid;
		bool maps;
	} kreq_procs[64];
	unsigned int kreq_procs_next;
	struct outlier *req_parts[REQ_PARTS_MAX];
	unsigned int nr_req_parts;
	struct ls_sample *req_samples; /* REQ_SAMPLES_MAX of them, a ring */
	unsigned int req_sample_head; /* the oldest */
	unsigned int nr_req_samples;
	struct bpf_link **sample_links; /* one per CPU: the cpu-clock events */
	struct goroutines *go; /* the goroutine waits of tracked Go processes */
	/* What ring.c asks the BPF side for another LS_NOTICE_MAPS with (no skeleton there). */
	int maps_noticed_fd;
	__u32 *maps_retell_gen; /* in the mapped .bss */
	/* The maps reader (tracker.c): its thread, the ring of maps_ring, and what ends it. */
	struct ring_buffer *maps_ring;
	struct ls_notice maps_batch[MAPS_BATCH]; /* drained, not filed yet */
	struct usyms_maps *maps_read[MAPS_BATCH]; /* the mappings of each, read when drained */
	struct maps_watch maps_watch[MAPS_WATCH]; /* processes read while ld.so was at work */
	unsigned int nr_maps_watch;
	unsigned int nr_maps_batch;
	pthread_t maps_thread;
	bool maps_thread_on;
	int maps_stop_fd; /* an eventfd */
};

/* ring.c */
int ring_record(void *ctx, void *data, size_t size);

/* deliver.c */
int deliver_outlier(struct tracker *tr, struct outlier *outlier);

/* park.c */
int park_outlier(struct tracker *tr, struct outlier *outlier, uint32_t signal_seq);
int park_on_unwound(struct tracker *tr, const struct ls_unwound *u);
int park_release_thread(struct tracker *tr, pid_t tid);
int park_release_overdue(struct tracker *tr, bool all);
int park_due_ms(struct tracker *tr, int timeout_ms);
void park_free(struct tracker *tr);

/* requests.c */
int requests_on_end(struct tracker *tr, const struct ls_request *r);
void requests_keep_sample(struct tracker *tr, const struct ls_sample *sample);
void requests_free(struct tracker *tr);

/* loopwait.c */
void requests_mark_loop(struct tracker *tr, struct outlier *o);

/* context.c */
int context_size(struct tracker *tr);
int context_map(struct tracker *tr);
void context_free(struct tracker *tr);

/* targets.c */
int targets_want(struct tracker *tr, const struct tracker_opts *opts);

/* ours.c */
int ours_open(struct tracker *tr);
bool ours_drop(struct tracker *tr, pid_t pid);
void ours_target(struct tracker *tr, pid_t pid, bool on);

#endif /* LATSNAP_TRACKER_INT_H */
