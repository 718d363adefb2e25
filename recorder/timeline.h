/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timeline.h - latsnap's own events of a snapshot, each at the time it happened, into the trace
 * that goes next to LTTng's (trace/ctf-writer.h)
 */
#ifndef LATSNAP_TIMELINE_H
#define LATSNAP_TIMELINE_H

#include <stdbool.h>

struct ctf_writer;
struct ls_ctx_event;
struct outlier;

/* The directory of that trace under a snapshot's trace/. */
#define TIMELINE_DIR "latsnap"

void timeline_emitter(struct ctf_writer *w);
void timeline_kernel_event(struct ctf_writer *w, const struct ls_ctx_event *e);
bool timeline_outlier(struct ctf_writer *w, const struct outlier *o);

#endif /* LATSNAP_TIMELINE_H */
