/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lanes.h - an outlier's timeline as the HTML page draws it: one lane per thread involved (its
 * states and syscalls as spans), and the wakeups between them.
 */
#ifndef LATSNAP_LANES_H
#define LATSNAP_LANES_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

/**
 * struct lanes_thread - a thread the outlier's timeline has a lane for
 * @tid: its thread id
 * @role: why it is there ("slow thread", "waker", "wait chain 1", "holder")
 * @comm: its name as the summary has it, or NULL: then the last one its events say
 */
struct lanes_thread {
	int64_t tid;
	const char *role;
	const char *comm;
};

int lanes_add(struct json_object *outlier, const struct lanes_thread *threads, size_t nr,
	      uint64_t from_ns, uint64_t to_ns);

#endif /* LATSNAP_LANES_H */
