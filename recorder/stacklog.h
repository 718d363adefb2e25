/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stacklog.h - the log of kernel stacks by how the cause rules named them (--log-stacks), as the
 * LatencyTOP design had: the stacks no rule matches are the rules still to write.
 */
#ifndef LATSNAP_STACKLOG_H
#define LATSNAP_STACKLOG_H

#include <stdio.h>

struct outlier;
struct rules_match;
struct stacklog;

enum stacklog_mode {
	STACKLOG_NONE,
	STACKLOG_UNCATEGORIZED,
	STACKLOG_CATEGORIZED,
	STACKLOG_ALL,
};

int stacklog_parse_mode(const char *text, enum stacklog_mode *mode);
int stacklog_open(struct stacklog **logp, enum stacklog_mode mode, const char *path);
void stacklog_outlier(struct stacklog *log, const struct outlier *outlier,
		      const struct rules_match *match);
void stacklog_close(struct stacklog *log);

#endif /* LATSNAP_STACKLOG_H */
