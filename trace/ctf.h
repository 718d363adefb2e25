/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctf.h - read the CTF trace of a snapshot (what LTTng wrote under OUTDIR/<id>/trace) with
 * libbabeltrace2: events in time order, their fields as json-c objects.
 */
#ifndef LATSNAP_CTF_H
#define LATSNAP_CTF_H

#include <stdbool.h>
#include <stdint.h>

struct json_object;

/**
 * struct ctf_event - one event of a trace, as ctf_read() hands it to its callback
 * @name: the event class name, e.g. "latsnap:user_stack" ("" when the trace names none)
 * @ts_ns: the event's time as the tracer took it, in ns: the clock snapshot's raw value
 *	converted with the clock class frequency, without the clock class offset (LTTng's offset
 *	turns it into wall time). For LTTng-UST that is CLOCK_MONOTONIC, the clock of
 *	bpf_ktime_get_ns() and of the rest of latsnap.
 * @fields: a json-c object of the event's payload fields with its common and specific context
 *	fields (vpid, vtid, procname when the session added them) flattened in; a payload field
 *	wins over a context field of the same name. Integers are json int64; an unsigned value
 *	above INT64_MAX keeps its bits (read it back with (uint64_t)json_object_get_int64()).
 *	Enumerations are their integer value, bit arrays their integer value, reals doubles,
 *	bools booleans, strings strings, sequences and static arrays arrays (a sequence's length
 *	field, "_NAME_length" in LTTng traces, stays a field of its own), structures objects, an
 *	option its field or null, a variant its selected option's value.
 *
 * @origin: who wrote the event, as far as its trace says (enum ctf_origin); 0 when unknown
 *
 * Everything is borrowed: valid during the callback only. json_object_get() @fields to keep it.
 * The time order is that of libbabeltrace2's muxer, which compares the clock values with the
 * offset added: the same order for the streams of one trace.
 */
struct ctf_event {
	const char *name;
	uint64_t ts_ns;
	struct json_object *fields;
	int origin;
};

/**
 * enum ctf_origin - who wrote an event, by its trace's environment and its vpid context
 * @CTF_ORIGIN_UNKNOWN: a trace that does not say (not latsnap's, or written before it said)
 * @CTF_ORIGIN_LATSNAP: the trace latsnap writes itself (trace/latsnap/: tracer_name "latsnap")
 * @CTF_ORIGIN_RECORDER: an LTTng trace of latsnap's session (trace_name "latsnap-PID-TIME"),
 *	emitted by that PID, latsnap; or of one of its replay sessions ("latsnap-PID-TIME-rK"),
 *	which record from latsnap-replay alone
 * @CTF_ORIGIN_OTHER: an LTTng trace of latsnap's session, emitted by another process (or one
 *	whose vpid it does not say)
 */
enum ctf_origin {
	CTF_ORIGIN_UNKNOWN = 0,
	CTF_ORIGIN_LATSNAP,
	CTF_ORIGIN_RECORDER,
	CTF_ORIGIN_OTHER,
};

/**
 * struct ctf_clock - a CTF clock class as a trace declares it
 * @known: the rest is set
 * @name: e.g. "monotonic"
 * @has_uuid: @uuid is set
 * @uuid: the clock's UUID (LTTng's is the boot id)
 * @freq: cycles per second
 * @offset_s: seconds from the origin to the clock's zero, then @offset_cycles
 * @offset_cycles: cycles from @offset_s on
 * @precision: in cycles
 * @origin_unix: the origin is the Unix epoch (CTF "absolute")
 */
struct ctf_clock {
	bool known;
	char name[64];
	bool has_uuid;
	uint8_t uuid[16];
	uint64_t freq;
	int64_t offset_s;
	uint64_t offset_cycles;
	uint64_t precision;
	bool origin_unix;
};

/**
 * struct ctf_trace_info - what ctf_trace_info() counts in a trace
 * @first_ns: the earliest event time (ts_ns of struct ctf_event); 0 when @events is 0
 * @last_ns: the latest event time; 0 when @events is 0
 * @events: the number of events
 * @discarded_events: the events the tracer says it dropped (ring buffer full), summed over the
 *	discarded-events messages of libbabeltrace2; a message without a count adds 1
 * @discarded_packets: the packets missing from the trace (LTTng's packet sequence numbers have
 *	gaps, e.g. when a snapshot's ring buffer wrapped), summed the same way
 */
struct ctf_trace_info {
	uint64_t first_ns;
	uint64_t last_ns;
	uint64_t events;
	uint64_t discarded_events;
	uint64_t discarded_packets;
	struct ctf_clock clock;
};

/**
 * typedef ctf_event_fn - called once per event by ctf_read()
 * @ev: the event; borrowed, valid during the call only
 * @ctx: the caller's pointer given to ctf_read()
 *
 * Return: 0 to go on; a positive value stops reading (ctf_read() returns 0); a negative value
 * stops reading and ctf_read() returns it unchanged, printing nothing.
 */
typedef int (*ctf_event_fn)(const struct ctf_event *ev, void *ctx);

uint64_t ctf_field_u64(struct json_object *fields, const char *name, bool *found);
const char *ctf_field_str(struct json_object *fields, const char *name, const char *fallback);

int ctf_read(const char *trace_dir, const char *name_prefix, ctf_event_fn fn, void *ctx);
int ctf_trace_info(const char *trace_dir, struct ctf_trace_info *info);
int ctf_read_info(const char *trace_dir, const char *name_prefix, ctf_event_fn fn, void *ctx,
		  struct ctf_trace_info *info);

#endif /* LATSNAP_CTF_H */
