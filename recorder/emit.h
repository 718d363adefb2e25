/* SPDX-License-Identifier: GPL-2.0 */
/*
 * emit.h - latsnap's own events in the trace, through liblatsnap-events.so (events/events.h).
 */
#ifndef LATSNAP_EMIT_H
#define LATSNAP_EMIT_H

#include <stdbool.h>

#include <sys/types.h>

struct emit;
struct ls_events;
struct outlier;
struct outlier_frames;
struct ls_ctx_event;
struct tracker;

int emit_open(struct emit **emp, char *why, unsigned long why_size);
int emit_open_ops(struct emit **emp, const struct ls_events *ops);
void emit_outlier(struct emit *em, const struct outlier *outlier);
void emit_mappings(struct emit *em, struct tracker *tr, pid_t pid);
void emit_kernel_event(struct emit *em, const struct ls_ctx_event *e);
int emit_summary(struct emit *em, const char *id, const char *json, unsigned long len,
		 unsigned long part_max);
bool emit_wait_ready(struct emit *em, unsigned int timeout_ms);
void emit_close(struct emit *em);
void emit_join_symbols(const struct outlier_frames *frames, char *buf, size_t size);

#endif /* LATSNAP_EMIT_H */
