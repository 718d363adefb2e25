/* SPDX-License-Identifier: GPL-2.0 */
/*
 * emit.h - latsnap's own events in the trace, through liblatsnap-events.so (events/events.h).
 */
#ifndef LATSNAP_EMIT_H
#define LATSNAP_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

struct emit;
struct ls_events;
struct outlier;
struct outlier_frames;
struct ls_ctx_event;
struct tracker;
struct ls_ev_outlier;
struct ls_ev_stack;
struct ls_ev_user_stack;

/* Room for the text of an outlier's flags and for a stack's symbols, in their events. */
#define EMIT_FLAGS_SIZE 2048
#define EMIT_SYMBOLS_SIZE 4096

int emit_open(struct emit **emp, char *why, unsigned long why_size);
int emit_open_ops(struct emit **emp, const struct ls_events *ops);
void emit_outlier(struct emit *em, const struct outlier *outlier);
void emit_mappings(struct emit *em, struct tracker *tr, pid_t pid);
void emit_kernel_event(struct emit *em, const struct ls_ctx_event *e);
int emit_summary(struct emit *em, const char *id, const char *json, unsigned long len,
		 unsigned long part_max);
bool emit_wait_ready(struct emit *em, unsigned int timeout_ms);
void emit_close(struct emit *em);
void emit_outlier_event(const struct outlier *outlier, struct ls_ev_outlier *ev, char *flags,
			size_t size);
void emit_stack_event(const struct outlier *outlier, const char *role, uint32_t index,
		      uint64_t weight_ns, const struct outlier_frames *frames,
		      struct ls_ev_stack *ev, uint64_t *ips, char *symbols, size_t size);
bool emit_user_stack_event(const struct outlier *outlier, struct ls_ev_user_stack *ev,
			   uint64_t *ips);

#endif /* LATSNAP_EMIT_H */
