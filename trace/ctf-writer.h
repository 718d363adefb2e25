/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctf-writer.h - write events that latsnap holds in memory as a CTF 1.8 trace of their own, each
 * at the time it happened, through libbabeltrace2's sink.ctf.fs: a source component of ours
 * feeds it in a graph. The clock class is copied from the trace it goes next to (LTTng's
 * "monotonic"), so that babeltrace2's muxer takes both traces as one timeline.
 *
 * Events are added in any order (they are sorted by time, stably, before writing); an event's
 * fields are added after it, in the order of its class. The first event of a name defines its
 * class: every later one of that name must have the same fields, or the writing fails. Names
 * (of events and fields) must outlive the writer: string literals.
 */
#ifndef LATSNAP_CTF_WRITER_H
#define LATSNAP_CTF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/ctf.h"

struct ctf_writer;

struct ctf_writer *ctf_writer_new(void);
void ctf_writer_free(struct ctf_writer *w);
void ctf_writer_event(struct ctf_writer *w, const char *name, uint64_t ts);
void ctf_writer_uint(struct ctf_writer *w, const char *name, unsigned int bits, uint64_t v);
void ctf_writer_sint(struct ctf_writer *w, const char *name, unsigned int bits, int64_t v);
void ctf_writer_hex(struct ctf_writer *w, const char *name, unsigned int bits, uint64_t v);
void ctf_writer_text(struct ctf_writer *w, const char *name, const char *s);
void ctf_writer_string(struct ctf_writer *w, const char *name, const char *s);
void ctf_writer_hex_seq(struct ctf_writer *w, const char *name, const uint64_t *v, size_t n);
size_t ctf_writer_count(const struct ctf_writer *w);
void ctf_writer_emitter(struct ctf_writer *w, int32_t vpid, int32_t vtid, const char *procname);
int ctf_writer_write(struct ctf_writer *w, const char *dir, const struct ctf_clock *clock,
		     const char *hostname, char *why, size_t len);

#endif /* LATSNAP_CTF_WRITER_H */
