// SPDX-License-Identifier: GPL-2.0
/*
 * record-status.c - what a running `latsnap record` tells of itself: its numbers gathered into a
 * struct status_info, written as status.json (status.c gives its form) every ten seconds and at
 * each snapshot, logged as the health line every ten minutes, and READY and STATUS told to the
 * service manager.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "classify/idle.h"
#include "lib/util.h"
#include "recorder/record-status.h"
#include "recorder/recorder.h"
#include "recorder/status.h"
#include "tracker/tracker.h"

/* status.json is rewritten this often (and at each snapshot); the health line, this often. */
#define STATUS_PERIOD_NS (10 * 1000000000ull)
#define HEALTH_PERIOD_NS (600 * 1000000000ull)

/**
 * record_status_realtime_ns() - now, CLOCK_REALTIME.
 */
uint64_t record_status_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The numbers of the run so far, as status.json and the health line give them. */
static void gather_status(struct record_state *st, struct tracker *tr, bool running,
			  struct status_info *si, char *targets, size_t size)
{
	struct recorder_totals r = { 0 };
	struct tracker_totals t;

	memset(si, 0, sizeof(*si));
	si->proc_start = st->proc_start;
	status_self(si);
	st->proc_start = si->proc_start;
	si->running = running;
	si->start_realtime_ns = st->start_realtime_ns;
	si->now_realtime_ns = record_status_realtime_ns();
	si->output = st->opts->relay ? st->opts->relay : st->opts->output;
	record_opts_describe_targets(st->opts, targets, size);
	si->targets = targets;
	si->threshold_ns = st->opts->threshold_ns;
	si->sleep_threshold_ns = st->opts->sleep_threshold_ns;
	si->max_age_ns = st->opts->rec.max_age_ns;
	tracker_totals(tr, &t);
	if (st->recorder) {
		recorder_totals(st->recorder, &r);
	}
	si->outliers = st->outliers;
	si->idle = idle_count(st->idle);
	si->snapshots = r.snapshots;
	si->skipped = r.skipped;
	si->held_repeats = r.guard.held[GUARD_REPEAT];
	si->held_user_budget = r.guard.held[GUARD_USER_BUDGET];
	si->held_budget = r.guard.held[GUARD_BUDGET];
	si->dropped_at_source = t.throttled;
	/* As the totals line counts them: outliers the kernel side could not hand over. */
	si->lost = t.throttled + t.ringbuf_lost + t.accum_full + t.storage_failed + t.runs_skipped;
	si->failed = r.failed;
	si->evicted = r.evicted;
	si->expired = r.expired;
	si->kept = r.kept;
	si->disk_bytes = r.kept_bytes;
	snprintf(si->last_id, sizeof(si->last_id), "%s", r.last_id);
	si->last_realtime_ns = r.last_realtime_ns;
}

/**
 * record_status_write() - status.json in the output directory, for `latsnap status`; none
 * without a local output directory (--no-snapshot, or a relay without --keep-local).
 */
void record_status_write(struct record_state *st, struct tracker *tr, bool running)
{
	struct status_info si;
	char targets[256];
	char *text;
	int err;

	if (!st->recorder) {
		return;
	}
	gather_status(st, tr, running, &si, targets, sizeof(targets));
	st->status_snapshots = si.snapshots;
	st->next_status_ns = ls_now_ns() + STATUS_PERIOD_NS;
	text = status_to_json(&si);
	if (!text) {
		return;
	}
	err = recorder_write_file(st->recorder, STATUS_FILE, text, strlen(text));
	if (err && err != -ENOENT) {
		ls_verbose("record: %s: %s", STATUS_FILE, strerror(-err));
	}
	free(text);
}

/* The journal's health line: the numbers of status.json, every HEALTH_PERIOD_NS. */
static void log_health(struct record_state *st, struct tracker *tr, bool running)
{
	struct status_info si;
	char targets[256], line[512];

	st->next_health_ns = ls_now_ns() + HEALTH_PERIOD_NS;
	gather_status(st, tr, running, &si, targets, sizeof(targets));
	status_health_line(&si, line, sizeof(line));
	fprintf(stderr, "latsnap: record: %s\n", line);
}

/**
 * record_status_notify_ready() - the service manager's view (sd_notify): a no-op without
 * NOTIFY_SOCKET.
 */
void record_status_notify_ready(const struct record_opts *opts)
{
	char targets[256], threshold[32];

	record_opts_describe_targets(opts, targets, sizeof(targets));
	record_opts_format_duration(opts->threshold_ns, threshold, sizeof(threshold));
	sd_notifyf(0, "READY=1\nSTATUS=tracking %s, threshold %s", targets, threshold);
}

/**
 * record_status_begin() - status.json as the loop begins; the first health line in ten minutes.
 */
void record_status_begin(struct record_state *st, struct tracker *tr)
{
	st->next_health_ns = ls_now_ns() + HEALTH_PERIOD_NS;
	record_status_write(st, tr, true);
}

/**
 * record_status_tend() - status.json and the health line, when due, or a snapshot written since
 * status.json last said.
 */
void record_status_tend(struct record_state *st, struct tracker *tr, bool running)
{
	struct recorder_totals r = { 0 };
	uint64_t now = ls_now_ns();

	if (st->recorder) {
		recorder_totals(st->recorder, &r);
	}
	if (now >= st->next_status_ns || r.snapshots != st->status_snapshots) {
		record_status_write(st, tr, true);
	}
	if (now >= st->next_health_ns) {
		log_health(st, tr, running);
	}
}
