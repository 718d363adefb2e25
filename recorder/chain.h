/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chain.h - the wait chain of each outlier (the blocking analysis of flightbox and Trace
 * Compass), from the latsnap_kernel:* events of a snapshot's trace.
 */
#ifndef LATSNAP_CHAIN_H
#define LATSNAP_CHAIN_H

struct json_object;
struct tracker;

/* Links followed at most, nearest first. */
#define CHAIN_MAX_DEPTH 8

int chain_build(const char *trace_dir, struct json_object *outliers, struct tracker *tr);

#endif /* LATSNAP_CHAIN_H */
