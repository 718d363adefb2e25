/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top.h - `latsnap top`: the live LatencyTOP view of every wait on the machine, from the
 * aggregates of bpf/top.bpf.c, named by the cause rules (classify/rules.c).
 */
#ifndef LATSNAP_TOP_TOP_H
#define LATSNAP_TOP_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One aggregate of a refresh, its cause named and its object resolved. */
struct top_wait {
	uint32_t tgid;
	uint32_t tid;
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
	const char *cause; /* owned by the cause cache */
	bool special; /* waiting for CPU or lock contention (view 2) */
	char *object; /* "futex 0x...", "pipe:[123]", a path...; NULL when none (view 3) */
	char comm[16];
	char pcomm[16];
};

/* What the rows of a table are: view 1, 2 or 3 of the screen. */
enum top_view {
	TOP_VIEW_CAUSE = 1,
	TOP_VIEW_SPECIAL = 2,
	TOP_VIEW_OBJECT = 3,
};

enum top_sort {
	TOP_SORT_TOTAL,
	TOP_SORT_COUNT,
	TOP_SORT_AVERAGE,
	TOP_SORT_MAXIMUM,
};

/* One line of a table: the waits of one cause (or object) added up. */
struct top_row {
	const char *label; /* points into the waits */
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
};

/* The key and value of bpf/top.bpf.c's aggregates (include/top.h). */
struct top_key;
struct top_value;

size_t top_table(const struct top_wait *waits, size_t nr, uint32_t tgid, uint32_t tid,
		 enum top_view view, enum top_sort sort, struct top_row **rowsp);
size_t top_drain_map(int fd, size_t cap, struct top_key *keys, struct top_value *values,
		     bool *batch_refused);
ssize_t top_read_records(int fd, size_t size, void (*fn)(const void *rec, void *arg), void *arg);
void top_format_ms(uint64_t ns, char *buf, size_t len);
int top_main(int argc, char **argv);

#endif /* LATSNAP_TOP_TOP_H */
