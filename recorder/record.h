/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record.h - `latsnap record`: its entry point, and the state of one run that record's files
 * share (record.c runs it; reload.c, policy.c and record-status.c read and change it).
 */
#ifndef LATSNAP_RECORD_H
#define LATSNAP_RECORD_H

#include <stdint.h>

#include "recorder/record-opts.h"

struct idle_policy;
struct recorder;
struct rules;
struct stacklog;
struct stall_check;

/* One run of `latsnap record`. */
struct record_state {
	struct record_opts *opts;
	int argc; /* record's arguments, read again at each reload */
	char **argv;
	char *rules_path; /* the rules file in use since a reload, or NULL */
	uint64_t start_realtime_ns;
	unsigned long long proc_start; /* /proc/self/stat's start time: the pid is not reused */
	uint64_t next_status_ns;
	uint64_t next_health_ns;
	uint64_t status_snapshots; /* the snapshot count status.json last said */
	struct rules *rules;
	struct recorder *recorder; /* NULL with --no-snapshot */
	struct stacklog *stacklog;
	struct stall_check *stalls; /* NULL with --hang off */
	struct idle_policy *idle;
	uint64_t outliers;
};

/**
 * record_main() - `latsnap record`.
 * @argc: its arguments, "record" first
 * @argv: them
 *
 * Return: the exit status (COMMAND's, when it ended on its own).
 */
int record_main(int argc, char **argv);

#endif /* LATSNAP_RECORD_H */
