/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record-status.h - what a running `latsnap record` tells of itself: status.json in its output
 * directory, the health line in its log, READY and STATUS to the service manager. (status.c
 * holds status.json's form and `latsnap status`, which reads it.)
 */
#ifndef LATSNAP_RECORD_STATUS_H
#define LATSNAP_RECORD_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "recorder/record.h"

struct tracker;

/**
 * record_status_realtime_ns() - now, CLOCK_REALTIME: the times status.json gives.
 *
 * Return: nanoseconds since the epoch.
 */
uint64_t record_status_realtime_ns(void);

/**
 * record_status_begin() - the loop begins: status.json written, the first health line due in
 * ten minutes.
 * @st: the run
 * @tr: its tracker
 */
void record_status_begin(struct record_state *st, struct tracker *tr);

/**
 * record_status_tend() - between two polls: status.json rewritten when due (every ten seconds)
 * or when a snapshot was written since, the health line logged when due (every ten minutes).
 * @st: the run
 * @tr: its tracker
 * @running: no stop signal has come
 */
void record_status_tend(struct record_state *st, struct tracker *tr, bool running);

/**
 * record_status_write() - status.json in the output directory; none without a local output
 * directory (--no-snapshot, or a relay without --keep-local).
 * @st: the run
 * @tr: its tracker
 * @running: false for the last one, as record ends
 */
void record_status_write(struct record_state *st, struct tracker *tr, bool running);

/**
 * record_status_notify_ready() - READY=1 and what is tracked, to the service manager
 * (sd_notify): a no-op without NOTIFY_SOCKET.
 * @opts: the settings in use
 */
void record_status_notify_ready(const struct record_opts *opts);

#endif /* LATSNAP_RECORD_STATUS_H */
