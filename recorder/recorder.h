/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recorder.h - snapshots around outliers: the LTTng ring buffers on disk, a summary beside them.
 */
#ifndef LATSNAP_RECORDER_H
#define LATSNAP_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder/guard.h"

#define RECORDER_MAX_EVENTS 8

struct outlier;
struct recorder;
struct tracker;

struct recorder_opts {
	const char *output; /* NULL with @relay: a private staging directory, emptied as it goes */
	const char *relay; /* net://HOST...: every snapshot goes to this lttng-relayd; or NULL */
	uint64_t post_ns; /* post-trigger window */
	uint64_t min_interval_ns; /* between two snapshots */
	unsigned int max_snapshots; /* in the output directory, earlier runs' included; 0: none */
	uint64_t max_size; /* bytes on disk for all of them; 0: no limit */
	uint64_t max_age_ns; /* snapshots older than this go, but a first or worst case; 0: none */
	uint64_t buffer_size; /* per CPU LTTng ring buffer */
	const char *ust_events[RECORDER_MAX_EVENTS]; /* the applications' event patterns */
	int nr_ust_events;
	int context_level; /* enum ls_ctx_level: the BPF side's kernel context stream */
	struct idle_policy *idle; /* its idle waits go into each summary; or NULL */
	struct guard_opts guard; /* the flood guard: which outliers may start a snapshot */
};

struct recorder_totals {
	uint64_t outliers;
	uint64_t snapshots;
	uint64_t skipped; /* outliers no snapshot covers */
	struct guard_totals guard; /* of those, the flood guard's, by reason */
	uint64_t failed; /* snapshots that could not be written */
	uint64_t evicted; /* snapshots removed to make room for a new cause or worst case */
	uint64_t relay_failed; /* snapshots the relay daemon did not get */
	uint64_t expired; /* snapshots removed as older than max_age_ns */
	uint64_t kept; /* snapshots on disk now */
	uint64_t kept_bytes; /* and their size */
	char last_id[64]; /* the newest snapshot written, or "" */
	uint64_t last_realtime_ns; /* when, CLOCK_REALTIME */
};

int recorder_open(struct recorder **recp, const struct recorder_opts *opts, struct tracker *tr);
void recorder_add(struct recorder *rec, struct outlier *outlier);
int recorder_poll(struct recorder *rec);
int recorder_snapshot(struct recorder *rec);
void recorder_flush(struct recorder *rec);
void recorder_totals(struct recorder *rec, struct recorder_totals *totals);
void recorder_set_limits(struct recorder *rec, const struct recorder_opts *opts);
int recorder_write_file(struct recorder *rec, const char *name, const char *text, size_t len);
void recorder_close(struct recorder *rec);

#endif /* LATSNAP_RECORDER_H */
