/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stall.h - stalls caught while they last (record --hang): waits reported while still under way,
 * with who holds what they wait for, deadlock cycles named, and the waits the run's end cut
 * short reported as unfinished.
 */
#ifndef LATSNAP_STALL_H
#define LATSNAP_STALL_H

#include <stdint.h>

struct outlier;
struct stall_check;
struct tracker;

/*
 * Called for each stall reported. The callback owns @outlier from then on. @cause is the cause
 * to give it when the stall check knows better than the rules (a deadlock), or NULL.
 */
typedef int (*stall_outlier_fn)(struct outlier *outlier, const char *cause, void *ctx);

/* What one run of stall checks did, for record's totals and the cost note in bench. */
struct stall_totals {
	uint64_t scans;
	uint64_t scan_ns; /* spent in the kernel scans, all of them */
	uint64_t max_scan_ns;
	uint64_t records; /* threads the scans handed over */
	uint64_t dropped; /* of those, not followed: more waits at once than it keeps */
	uint64_t still_blocked; /* reported while waiting */
	uint64_t unfinished; /* reported at the end of the run */
	uint64_t deadlocks; /* cycles found */
};

int stall_open(struct stall_check **scp, struct tracker *tr, uint64_t hang_ns,
	       uint64_t threshold_ns, stall_outlier_fn fn, void *ctx);
void stall_set_limits(struct stall_check *sc, uint64_t hang_ns, uint64_t threshold_ns);
int stall_poll(struct stall_check *sc);
int stall_finish(struct stall_check *sc);
void stall_totals(const struct stall_check *sc, struct stall_totals *totals);
void stall_close(struct stall_check *sc);

#endif /* LATSNAP_STALL_H */
