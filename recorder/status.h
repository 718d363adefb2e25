/* SPDX-License-Identifier: GPL-2.0 */
/*
 * status.h - what a running `latsnap record` is doing: the status.json it keeps in its output
 * directory, the health line it logs, and `latsnap status`, which reads the file back.
 */
#ifndef LATSNAP_STATUS_H
#define LATSNAP_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATUS_FILE "status.json"

/* One status of a record run; times named _realtime_ns are CLOCK_REALTIME. */
struct status_info {
	int pid;
	unsigned long long proc_start; /* /proc/PID/stat's start time: tells a reused pid */
	bool running;
	uint64_t start_realtime_ns;
	uint64_t now_realtime_ns;
	const char *output;
	const char *targets;
	uint64_t threshold_ns;
	uint64_t sleep_threshold_ns;
	uint64_t max_age_ns; /* 0: no limit */
	uint64_t outliers;
	uint64_t idle; /* waits for work, not outliers */
	uint64_t snapshots;
	uint64_t skipped;
	/* of those, what the flood guard held back: repeats, over a user's budget, over the budget */
	uint64_t held_repeats;
	uint64_t held_user_budget;
	uint64_t held_budget;
	uint64_t dropped_at_source; /* outliers the BPF side dropped over a share (--max-rate) */
	uint64_t lost;
	uint64_t failed;
	uint64_t evicted;
	uint64_t expired;
	uint64_t kept; /* snapshots on disk */
	uint64_t disk_bytes;
	double cpu_user_s;
	double cpu_system_s;
	uint64_t rss_bytes;
	char last_id[64]; /* "" for none */
	uint64_t last_realtime_ns;
};

int status_self(struct status_info *si);
char *status_to_json(const struct status_info *si);
void status_health_line(const struct status_info *si, char *buf, size_t size);
int status_main(int argc, char **argv);

#endif /* LATSNAP_STATUS_H */
