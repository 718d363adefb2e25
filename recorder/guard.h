/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guard.h - the flood guard: which outliers may start a snapshot (issue 46, 51).
 */
#ifndef LATSNAP_GUARD_H
#define LATSNAP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct outlier;
struct guard;

struct guard_opts {
	unsigned int per_minute; /* snapshots in any 60 s, all users; 0: no limit */
	unsigned int user_per_minute; /* snapshots in any 60 s started by one user's outliers */
	uint64_t repeat_ns; /* a wait site snapshotted once gets no other snapshot this long; 0: off */
};

enum guard_verdict {
	GUARD_SNAPSHOT, /* it may start a snapshot */
	GUARD_REPEAT, /* the same process, cause and stacks were snapshotted lately */
	GUARD_USER_BUDGET, /* its user has had its snapshots of the last minute */
	GUARD_BUDGET, /* all users together have, and its cause had one for its user */
	GUARD_NR_VERDICTS,
};

/* What the guard held back of one process: outliers that started no snapshot, by reason. */
struct guard_held {
	int32_t pid;
	uint32_t uid; /* UINT32_MAX: not known */
	char comm[16];
	uint64_t held[GUARD_NR_VERDICTS]; /* [GUARD_SNAPSHOT] unused */
};

struct guard_totals {
	uint64_t held[GUARD_NR_VERDICTS]; /* outliers held back in all, by reason */
};

int guard_open(struct guard **gp, const struct guard_opts *opts);
void guard_set_opts(struct guard *g, const struct guard_opts *opts);
enum guard_verdict guard_judge(struct guard *g, const struct outlier *o, uint64_t now);
void guard_hold(struct guard *g, const struct outlier *o, enum guard_verdict v);
void guard_taken(struct guard *g, struct outlier *const *batch, size_t n, uint64_t now);
void guard_totals(const struct guard *g, struct guard_totals *t);
size_t guard_window(const struct guard *g, const struct guard_held **held);
void guard_window_reset(struct guard *g);
const char *guard_verdict_text(enum guard_verdict v);
void guard_close(struct guard *g);

#endif /* LATSNAP_GUARD_H */
