// SPDX-License-Identifier: GPL-2.0
/*
 * deliver.c - where a finished outlier goes: to the consumer's callback (an event loop's wait
 * marked so first, loopwait.c; a non-zero return kept for the poll), or, a wait sent as part of
 * a request under way, to the parts that request's end takes (deliver_take_parts()). It calls
 * none of ring.c, park.c, requests.c or tracker.c, which all call it.
 */
#include <string.h>

#include "tracker/tracker-int.h"
#include "lib/outlier.h"

/*
 * Keep @part, a wait sent as part of a request under way, for that request's end to take (or
 * drop, when the request was not slow); the oldest goes when all are taken.
 */
static void keep_part(struct tracker *tr, struct outlier *part)
{
	if (tr->deliver.nr_parts == REQ_PARTS_MAX) {
		outlier_free(tr->deliver.parts[0]);
		memmove(tr->deliver.parts, tr->deliver.parts + 1,
			--tr->deliver.nr_parts * sizeof(tr->deliver.parts[0]));
	}
	tr->deliver.parts[tr->deliver.nr_parts++] = part;
}

/**
 * deliver_outlier() - hand @outlier to the callback, which owns it from now on; a wait sent as
 *		       part of a request goes to that request's end instead
 *
 * Return: 0, or the callback's non-zero return (kept for the poll to return).
 */
int deliver_outlier(struct tracker *tr, struct outlier *outlier)
{
	int err;

	if (outlier->part_of_request) {
		keep_part(tr, outlier);
		return 0;
	}
	requests_mark_loop(tr, outlier);
	err = tr->fn(outlier, tr->ctx);

	if (err) {
		tr->deliver.cb_status = err;
	}
	return err;
}

/**
 * deliver_take_parts() - the parts kept of thread @tid's request that ended at @end_ns (those of
 *                        @tid that began by then), in the order they came, into @taken (room
 *                        for REQ_PARTS_MAX), which owns them from now on; the others stay kept
 *
 * Return: how many were taken.
 */
unsigned int deliver_take_parts(struct tracker *tr, int32_t tid, uint64_t end_ns,
				struct outlier **taken)
{
	unsigned int i, n = 0, nr_taken = 0;
	struct outlier *part;

	for (i = 0; i < tr->deliver.nr_parts; i++) {
		part = tr->deliver.parts[i];
		if (part->tid != tid || part->start_ns > end_ns) {
			tr->deliver.parts[n++] = part;
		} else {
			taken[nr_taken++] = part;
		}
	}
	tr->deliver.nr_parts = n;
	return nr_taken;
}

/**
 * deliver_take_status() - the callback's non-zero return since the last call, cleared; or 0
 */
int deliver_take_status(struct tracker *tr)
{
	int err = tr->deliver.cb_status;

	tr->deliver.cb_status = 0;
	return err;
}

/**
 * deliver_free() - free the parts still kept, of requests that never ended
 */
void deliver_free(struct tracker *tr)
{
	while (tr->deliver.nr_parts > 0) {
		outlier_free(tr->deliver.parts[--tr->deliver.nr_parts]);
	}
}
