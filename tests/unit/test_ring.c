// SPDX-License-Identifier: GPL-2.0
/*
 * The ring buffer's dispatch (tracker/ring.c): a record goes to the handler its kind names, and
 * only when its size is that kind's; a record of another kind that happens to have a notice's
 * size is not taken for a notice. The handlers of requests and the totals are stand-ins here
 * (requests.c and totals.c reach the BPF side). A stack report goes to the parked outlier whose
 * signal it answers, by number, and the outliers of that thread before it go on flagged.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracker/tracker-int.h"
#include "tracker/usyms.h"
#include "lib/outlier.h"
#include "tap.h"

static unsigned int requests_ended, samples_kept;

int requests_on_end(struct tracker *tr, const struct ls_request *r)
{
	(void)tr;
	(void)r;
	requests_ended++;
	return 0;
}

void requests_keep_sample(struct tracker *tr, const struct ls_sample *sample)
{
	(void)tr;
	(void)sample;
	samples_kept++;
}

void requests_mark_loop(struct tracker *tr, struct outlier *o)
{
	(void)tr;
	(void)o;
}

void tracker_totals(struct tracker *tr, struct tracker_totals *totals)
{
	(void)tr;
	memset(totals, 0, sizeof(*totals));
}

/* Hand @size bytes of @data to ring_record(); what it says on stderr goes to @err. */
static int dispatch(struct tracker *tr, const void *data, size_t size, char *err, size_t len)
{
	struct tap_capture cap;
	void *copy = calloc(1, size ? size : 1);
	int ret;

	if (!copy) {
		bail_out("out of memory");
	}
	memcpy(copy, data, size);
	tap_capture_begin(&cap, STDERR_FILENO);
	ret = ring_record(tr, copy, size);
	tap_capture_end(&cap, err, len);
	free(copy);
	return ret;
}

static void check_kinds(struct tracker *tr)
{
	struct ls_request *req = calloc(1, sizeof(*req));
	struct ls_sample *sample = calloc(1, sizeof(*sample));
	struct ls_unwound *unwound = calloc(1, sizeof(*unwound));
	unsigned char unknown[sizeof(struct ls_notice)] = { 42 };
	char err[512];

	if (!req || !sample || !unwound) {
		bail_out("out of memory");
	}
	req->kind = LS_KIND_REQUEST;
	is_int(dispatch(tr, req, sizeof(*req), err, sizeof(err)), 0, "a request: 0");
	is_int(requests_ended, 1, "a request: to its end's handler");
	/* Before, a record of a notice's size was a notice whatever its kind. */
	is_int(dispatch(tr, req, sizeof(struct ls_notice), err, sizeof(err)), 0,
	       "a request of a notice's size: 0");
	is_int(requests_ended, 1, "a request of a notice's size: not handled");
	ok(strstr(err, "tracker: short event (12 bytes)") != NULL, "... said: %s", err);
	sample->kind = LS_KIND_SAMPLE;
	dispatch(tr, sample, sizeof(*sample), err, sizeof(err));
	is_int(samples_kept, 1, "a sample: kept");
	dispatch(tr, sample, sizeof(*sample) - 1, err, sizeof(err));
	is_int(samples_kept, 1, "a sample a byte short: not kept");
	is_int(dispatch(tr, unknown, sizeof(unknown), err, sizeof(err)), 0, "kind 42: 0");
	ok(strstr(err, "unknown kind 42 (12 bytes)") != NULL, "kind 42: said: %s", err);
	dispatch(tr, unknown, 0, err, sizeof(err));
	ok(strstr(err, "unknown kind 0 (0 bytes)") != NULL, "an empty record: said: %s", err);
	unwound->kind = LS_KIND_UNWOUND;
	unwound->tid = 7;
	is_int(dispatch(tr, unwound, sizeof(*unwound), err, sizeof(err)), 0,
	       "a stack unwound for no parked outlier: 0");
	is_str(err, "", "... nothing said");
	free(req);
	free(sample);
	free(unwound);
}

/* The outliers handed over, in order. */
static struct outlier *delivered[16];
static unsigned int nr_delivered;

static int collect(struct outlier *outlier, void *ctx)
{
	(void)ctx;
	if (nr_delivered < sizeof(delivered) / sizeof(delivered[0])) {
		delivered[nr_delivered++] = outlier;
	} else {
		outlier_free(outlier);
	}
	return 0;
}

static struct outlier *parked_outlier(struct tracker *tr, pid_t tid, uint32_t signal_seq)
{
	struct outlier *o = outlier_new();

	if (!o) {
		bail_out("out of memory");
	}
	/* No such process: the wait for its stack is the fixed one. */
	o->pid = 999999;
	o->tid = tid;
	is_int(park_outlier(tr, o, signal_seq), 0, "parked: thread %d, signal %u", tid, signal_seq);
	return o;
}

static bool has_flag(const struct outlier *o, const char *text)
{
	for (size_t i = 0; i < o->nr_flags; i++) {
		if (strstr(o->flags[i], text)) {
			return true;
		}
	}
	return false;
}

static void report(struct tracker *tr, pid_t tid, uint32_t seq, uint32_t lost_before)
{
	struct ls_unwound *u = calloc(1, sizeof(*u));
	char err[512];

	if (!u) {
		bail_out("out of memory");
	}
	u->kind = LS_KIND_UNWOUND;
	u->status = LS_UNWIND_FORKING; /* no frames: no symbols needed */
	u->pid = 999999;
	u->tid = tid;
	u->seq = seq;
	u->lost_before = lost_before;
	is_int(dispatch(tr, u, sizeof(*u), err, sizeof(err)), 0,
	       "a report of thread %d for signal %u: 0", tid, seq);
	free(u);
}

/*
 * Reports and outliers by number: a report skipped (its signal's own handler still to run when
 * the next was sent, or its record lost) must not shift every later stack onto the outlier
 * before its own, as taking the oldest parked outlier did.
 */
static void check_unwound_order(struct tracker *tr)
{
	struct outlier *a, *b, *c, *d, *e;

	tr->fn = collect;
	a = parked_outlier(tr, 7, 1);
	b = parked_outlier(tr, 7, 2);
	c = parked_outlier(tr, 8, 1);
	report(tr, 7, 2, 0);
	is_int(nr_delivered, 2, "the report for signal 2: two outliers of thread 7 go on");
	ok(nr_delivered == 2 && delivered[0] == a && delivered[1] == b,
	   "... the one before it first, then its own");
	ok(has_flag(a, "a later signal's report came first (this one was never delivered)"),
	   "... the one before it flagged: never delivered");
	ok(has_flag(b, "signalled while a thread of the process was forking") &&
		   !has_flag(b, "a later signal"),
	   "... its own has the report's status");
	is_int(tr->park.nr_parked, 1, "... thread 8's stays parked");

	nr_delivered = 0;
	d = parked_outlier(tr, 7, 3);
	e = parked_outlier(tr, 7, 3);
	report(tr, 7, 3, 0);
	ok(nr_delivered == 2 && delivered[0] == d && delivered[1] == e,
	   "two outliers with one number (the first one's signal never went): both go on");
	ok(has_flag(d, "never delivered") && !has_flag(e, "a later signal"),
	   "... the newer one has the report, the older is flagged");

	nr_delivered = 0;
	report(tr, 8, 2, 1);
	ok(nr_delivered == 1 && delivered[0] == c,
	   "a report for a signal after the parked one's: that one goes on");
	ok(has_flag(c, "this one's was lost: the ring buffer was full"),
	   "... flagged: its report was lost in the ring");
	nr_delivered = 0;
	report(tr, 8, 1, 0);
	is_int(nr_delivered, 0, "a late report for an outlier that went on: nothing");
	is_int(tr->park.nr_parked, 0, "none parked");
	outlier_free(a);
	outlier_free(b);
	outlier_free(c);
	outlier_free(d);
	outlier_free(e);
	nr_delivered = 0;
}

static void check_outlier_size(struct tracker *tr)
{
	struct ls_event *e = calloc(1, sizeof(*e));
	char err[512];

	if (!e) {
		bail_out("out of memory");
	}
	e->kind = LS_KIND_SYSCALL;
	dispatch(tr, e, sizeof(*e) - 8, err, sizeof(err));
	is_u64(tr->records.received, 0, "a short syscall outlier: not received");
	ok(strstr(err, "tracker: short event") != NULL, "... said: %s", err);
	e->kind = LS_KIND_SLEEP;
	dispatch(tr, e, sizeof(struct ls_notice), err, sizeof(err));
	is_u64(tr->records.received, 0, "a sleep outlier of a notice's size: not received");
	free(e);
}

static void check_exits(struct tracker *tr)
{
	struct ls_notice n = { .kind = LS_NOTICE_EXIT, .pid = 4242 };
	char err[512];

	tracker_keep_exited(tr, true);
	is_int(dispatch(tr, &n, sizeof(n), err, sizeof(err)), 0, "an exit notice: 0");
	is_int(tr->records.nr_exited, 1, "an exit notice, exits kept: one kept");
	is_int(tr->records.exited[0], 4242, "... its pid");
	tracker_release_exited(tr);
	is_int(tr->records.nr_exited, 0, "released");
	tracker_keep_exited(tr, false);
	dispatch(tr, &n, sizeof(n), err, sizeof(err));
	is_int(tr->records.nr_exited, 0, "an exit notice, exits not kept: none kept");
	n.kind = LS_NOTICE_DISPLACED;
	n.arg = 12;
	dispatch(tr, &n, sizeof(n), err, sizeof(err));
	ok(strstr(err, "tracker: pid 4242 (") &&
		   strstr(err, ") installed its own handler for signal 12"),
	   "a displaced handler: said: %s", err);
}

int main(void)
{
	struct tracker *tr = calloc(1, sizeof(*tr));

	if (!tr) {
		bail_out("out of memory");
	}
	tr->usyms = usyms_new();
	if (!tr->usyms) {
		bail_out("usyms_new");
	}
	check_kinds(tr);
	check_outlier_size(tr);
	check_exits(tr);
	check_unwound_order(tr);
	is_int(tr->deliver.nr_parts, 0, "no part of a request kept");
	usyms_free(tr->usyms);
	free(tr);
	return tap_done();
}
