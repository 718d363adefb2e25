// SPDX-License-Identifier: GPL-2.0
/*
 * totals.c - what the kernel side saw and lost so far: the BPF side's per-CPU counters summed.
 * A leaf of tracker/: ring.c flags the losses before each outlier with it, tracker.c reports it.
 */
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/tracker-int.h"
#include "latsnap.skel.h"

static uint64_t stat_sum(struct tracker *tr, enum ls_stat key)
{
	uint64_t values[tr->ncpus];
	uint64_t sum = 0;
	__u32 index = key;
	int i;

	/* Written by the kernel; cleared for tools (valgrind) that cannot see a per-CPU lookup. */
	memset(values, 0, sizeof(values));
	if (bpf_map_lookup_elem(bpf_map__fd(tr->skel->maps.stats), &index, values)) {
		return 0;
	}
	for (i = 0; i < tr->ncpus; i++) {
		sum += values[i];
	}
	return sum;
}

static uint64_t runs_skipped(struct tracker *tr)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, tr->skel->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			sum += info.recursion_misses;
		}
	}
	return sum;
}

/**
 * tracker_totals - what the kernel side saw and lost so far.
 */
void tracker_totals(struct tracker *tr, struct tracker_totals *totals)
{
	memset(totals, 0, sizeof(*totals));
	totals->outliers = stat_sum(tr, LS_STAT_OUTLIERS);
	totals->received = tr->records.received;
	totals->ringbuf_lost = stat_sum(tr, LS_STAT_RINGBUF_LOST);
	totals->stack_failed = stat_sum(tr, LS_STAT_STACK_FAILED);
	totals->stacks_dropped = stat_sum(tr, LS_STAT_STACKS_DROPPED);
	totals->accum_full = stat_sum(tr, LS_STAT_ACCUM_FULL);
	totals->storage_failed = stat_sum(tr, LS_STAT_STORAGE_FAILED);
	totals->runs_skipped = runs_skipped(tr);
	totals->signals = stat_sum(tr, LS_STAT_SIGNALS);
	totals->signal_busy = stat_sum(tr, LS_STAT_SIGNAL_BUSY);
	totals->signal_skipped = stat_sum(tr, LS_STAT_SIGNAL_SKIPPED);
	totals->ctx_events = stat_sum(tr, LS_STAT_CTX_EVENTS);
	totals->ctx_lost = stat_sum(tr, LS_STAT_CTX_LOST);
	totals->unwound = stat_sum(tr, LS_STAT_UNWOUND);
	totals->unwound_refused = stat_sum(tr, LS_STAT_UNWOUND_REFUSED);
	totals->user_walks = stat_sum(tr, LS_STAT_USER_WALKS);
	totals->user_walks_deferred = stat_sum(tr, LS_STAT_USER_WALKS_DEFERRED);
	totals->signal_refused = stat_sum(tr, LS_STAT_SIGNAL_REFUSED);
	totals->ctx_stacks = stat_sum(tr, LS_STAT_CTX_STACKS);
	totals->wait_stacks = stat_sum(tr, LS_STAT_WAIT_STACKS);
	totals->throttled = stat_sum(tr, LS_STAT_THROTTLED);
	totals->ours_dropped = tr->ours.dropped;
}
