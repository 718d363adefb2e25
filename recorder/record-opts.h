/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record-opts.h - `latsnap record`'s settings: the command line and the config file read into one
 * struct record_opts, and the few words that say them again (targets, durations).
 */
#ifndef LATSNAP_RECORD_OPTS_H
#define LATSNAP_RECORD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "include/latsnap.h"
#include "recorder/recorder.h"
#include "recorder/stacklog.h"
#include "tracker/request.h"

#define RECORD_DEFAULT_CONFIG "/etc/latsnap.conf"
#define RECORD_MAX_PIDS 64

struct record_opts {
	uint64_t threshold_ns;
	uint64_t sleep_threshold_ns;
	bool sleep_threshold_set;
	const char *output;
	const char *relay; /* -o net://...: the lttng-relayd that gets the snapshots */
	const char *keep_local; /* --keep-local DIR: and a local copy there */
	bool no_snapshot;
	bool json;
	bool include_idle;
	bool exact_start; /* --exact-start: the clock at every syscall entry (tracker_opts) */
	bool go_waits; /* --go-waits: goroutine waits, through uprobes in Go programs */
	unsigned int max_rate; /* --max-rate: outliers a second per process (BPF), 0: no limit */
	uint64_t duration_ns;
	uint64_t hang_ns; /* 0: the default, from the threshold */
	struct request_spec requests[LS_MAX_REQUESTS];
	int nr_requests;
	bool requests_from_cli;
	bool no_hang;
	const char *config;
	const char *rules;
	bool verbose;
	bool all;
	int pids[RECORD_MAX_PIDS];
	int nr_pids;
	bool pids_from_cli;
	uint64_t cgroup_ids[LS_MAX_CGROUPS]; /* --cgroup, resolved */
	int nr_cgroups;
	bool cgroups_from_cli;
	struct ls_comm comms[LS_MAX_COMMS]; /* --comm */
	int nr_comms;
	bool comms_from_cli;
	unsigned char idle[LS_MAX_SYSCALLS];
	char **command;
	int signal; /* asked of the preload library in COMMAND */
	const char *signal_name;
	bool no_preload;
	enum stacklog_mode log_stacks;
	uint64_t context_floor_ns;
	const char *stack_log; /* NULL: stderr */
	struct recorder_opts rec;
	/* Read again for a reload: a --pid that has exited since is no error then. */
	bool reloading;
	/* Config values are only valid during the callback: keep copies. */
	char *owned[16];
	int nr_owned;
};

/**
 * record_opts_load() - the defaults, then the config file (-c, or RECORD_DEFAULT_CONFIG when it
 * exists), then the command line, which wins.
 * @opts: filled in; free it with record_opts_free() whatever this returns
 * @argc: record's arguments, "record" first
 * @argv: them
 * @reloading: read again for a reload (SIGHUP): a --pid that has exited since is no error
 *
 * Return: 0 to run, 1 when --help was printed, negative on a usage error (already said).
 */
int record_opts_load(struct record_opts *opts, int argc, char **argv, bool reloading);

/**
 * record_opts_free() - free what @opts holds (copies of config values, request probes).
 * @opts: loaded by record_opts_load(); may be freed again
 */
void record_opts_free(struct record_opts *opts);

/**
 * record_opts_describe_targets() - what is tracked, in a few words ("./server, pid 12,34"), for
 * status.json and the service manager.
 * @opts: the settings
 * @buf: the words, cut short if they do not fit
 * @size: its size
 */
void record_opts_describe_targets(const struct record_opts *opts, char *buf, size_t size);

/**
 * record_opts_format_duration() - a duration as the options write it: the largest unit that
 * keeps it whole (50ms, 1500us).
 * @ns: the duration
 * @buf: the text
 * @size: its size
 */
void record_opts_format_duration(uint64_t ns, char *buf, size_t size);

/**
 * record_appendf() - append to the string at @buf, cut short if it does not fit: how record's
 * lines that say settings are built.
 * @buf: a string
 * @size: the bytes at @buf
 * @fmt: printf format
 */
void record_appendf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* LATSNAP_RECORD_OPTS_H */
