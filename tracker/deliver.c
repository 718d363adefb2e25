// SPDX-License-Identifier: GPL-2.0
/*
 * deliver.c - where a finished outlier goes: to the consumer's callback (an event loop's wait
 * marked so first, loopwait.c), or, a wait sent as part of a request under way, to the parts
 * that request's end takes. It calls none of ring.c, park.c, requests.c or tracker.c, which all
 * deliver through it.
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
	if (tr->nr_req_parts == REQ_PARTS_MAX) {
		outlier_free(tr->req_parts[0]);
		memmove(tr->req_parts, tr->req_parts + 1,
			--tr->nr_req_parts * sizeof(tr->req_parts[0]));
	}
	tr->req_parts[tr->nr_req_parts++] = part;
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
		tr->cb_status = err;
	}
	return err;
}
