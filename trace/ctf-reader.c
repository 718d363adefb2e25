// SPDX-License-Identifier: GPL-2.0
/*
 * ctf-reader.c - the trace reading process (latsnap-trace-reader, exec'd by trace/ctf.c): read a
 * CTF trace written by LTTng with libbabeltrace2's graph API,
 *
 *	source.ctf.fs --(one port per stream)--> filter.utils.muxer --> our simple sink
 *
 * and send each event up a pipe, one JSON line each. The muxer merges the per-CPU streams into
 * one time-ordered flow; the sink turns each event into a struct ctf_event and counts what the
 * tracer says it discarded.
 *
 * A corrupt trace makes libbabeltrace2 2.0.4 abort on a failed assertion (a bad packet offset in
 * an index file), crash (a bad sequence length in a packet), spin forever (a truncated metadata
 * packet) or allocate without bound (a length field retyped by a bit flip in the metadata): this
 * process takes the blow, and the caller, the long-running recorder included, gets an error. It
 * is exec'd, not only forked: a fork of a threaded process (lttng-ust's, libbpf's) may call only
 * async-signal-safe functions, and libbabeltrace2 is not that.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>
#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/ctf-reader.h"
#include "lib/util.h"

/* LTTng writes ust/uid/<uid>/64-bit/metadata: 4 levels below the trace dir; leave room. */
#define CTF_SCAN_DEPTH 8
/* Fields nest this deep at most: bounds our recursion whatever the metadata says. */
#define CTF_FIELD_DEPTH 32
/* bt_graph_run() retries on AGAIN; ctf.fs and the muxer never say it, but do not spin forever. */
#define CTF_AGAIN_MAX 1000
/* A line at least this often, so that the parent can tell a slow reading from a hung one. */
#define CTF_HEARTBEAT_NS 1000000000ULL
/* The reader's address space: far above what reading a snapshot takes, far below the machine. */
#define CTF_READER_AS_MAX (4ULL << 30)
/*
 * AddressSanitizer maps terabytes of shadow memory: under it (make check-asan, the fuzzers) an
 * address-space cap only makes the reader fail its first allocation.
 */
#if defined(__SANITIZE_ADDRESS__)
#define CTF_READER_LIMIT_AS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTF_READER_LIMIT_AS 0
#endif
#endif
#ifndef CTF_READER_LIMIT_AS
#define CTF_READER_LIMIT_AS 1
#endif

struct ctf_reader {
	const char *dir;
	const char *prefix;
	size_t prefix_len;
	ctf_event_fn fn;
	void *ctx;
	struct ctf_trace_info info;
	/* Set by the sink: a negative errno of ours, with its reason, or the callback's value. */
	int err;
	char why[256];
	int cb_ret;
	bool stopped;
	/* The pipe to the parent and when it was last written to. */
	int out_fd;
	uint64_t last_write_ns;
	/* What the trace of the last event says of who wrote it (trace_origin()). */
	const bt_trace *origin_trace;
	int origin; /* CTF_ORIGIN_LATSNAP, _UNKNOWN, or _RECORDER when @recorder is known */
	int64_t recorder; /* latsnap's pid, from the session's name; -1 for a replay session */
};


static void reader_fail(struct ctf_reader *r, int err, const char *why)
{
	if (!r->err) {
		r->err = err;
		snprintf(r->why, sizeof(r->why), "%s", why);
	}
}

/*
 * Take the thread's libbabeltrace2 error (it must not linger into the next call) and describe
 * it as "@what: root cause". Cause 0 is the root one, appended first ("Failed to index CTF
 * stream file 'X'"); the later ones only say which caller gave up in turn, down to the graph's
 * "Component initialization method failed: ..." with a dozen internal fields.
 *
 * Return: whether the thread had an error.
 */
static bool take_bt_error(char *buf, size_t len, const char *what)
{
	const bt_error *error = bt_current_thread_take_error();
	const bt_error_cause *cause;
	const char *msg = NULL;
	uint64_t n;
	char *p;

	snprintf(buf, len, "%s", what);
	if (!error) {
		goto out;
	}
	n = bt_error_get_cause_count(error);
	if (n == 0) {
		goto out;
	}
	cause = bt_error_borrow_cause_by_index(error, 0);
	msg = bt_error_cause_get_message(cause);
	if (msg && *msg) {
		snprintf(buf, len, "%s: %s", what, msg);
	}
	/* Error messages may span lines and quote the trace's bytes; ours is one clean line. */
	for (p = buf; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*p = ' ';
		}
	}
out:
	if (error) {
		bt_error_release(error);
	}
	return error != NULL;
}

/* The header of each packet of packetized CTF 1.8 metadata, as LTTng writes it. */
struct ctf_metadata_header {
	uint32_t magic;
	uint8_t uuid[16];
	uint32_t checksum;
	uint32_t content_size;
	uint32_t packet_size;
	uint8_t compression_scheme;
	uint8_t encryption_scheme;
	uint8_t checksum_scheme;
	uint8_t major;
	uint8_t minor;
} __attribute__((packed));

#define CTF_TSDL_MAGIC 0x75d11d57U

/*
 * check_metadata() - refuse packetized metadata whose last packet is cut short
 *
 * libbabeltrace2 2.0.4 spins forever on it: its metadata packet decoder reads the packet's
 * content until it has content_size bytes, and fread() at end of file gives it 0 bytes, no
 * error, again and again. So walk the packets as it does (the next one starts after the
 * padding, packet_size - content_size computed in 32 bits like it does) and check that each
 * packet's content lies within the file. Anything else wrong is left to libbabeltrace2, which
 * reports it.
 *
 * Return: 0, or -EBADMSG with @why set.
 */
static int check_metadata(const char *path, char *why, size_t len)
{
	struct ctf_metadata_header h;
	uint64_t off = 0, end;
	struct stat st;
	bool swap;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* Unopenable or too short to be packetized: libbabeltrace2 says what is wrong. */
	if (fd < 0 || fstat(fd, &st) || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		goto out;
	}
	if (h.magic != CTF_TSDL_MAGIC && h.magic != __builtin_bswap32(CTF_TSDL_MAGIC)) {
		/* Plain-text metadata: the parser stops at end of file. */
		goto out;
	}
	swap = h.magic != CTF_TSDL_MAGIC;
	while (off + sizeof(h) <= (uint64_t)st.st_size) {
		if (pread(fd, &h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h)) {
			goto out;
		}
		if (swap) {
			h.content_size = __builtin_bswap32(h.content_size);
			h.packet_size = __builtin_bswap32(h.packet_size);
		}
		if (h.content_size / 8 < sizeof(h)) {
			/* libbabeltrace2 rejects this one itself. */
			goto out;
		}
		end = off + h.content_size / 8;
		if (end > (uint64_t)st.st_size) {
			ret = -EBADMSG;
			snprintf(why, len,
				 "%s: metadata packet at offset %" PRIu64 " ends at %" PRIu64
				 ", beyond the end of the file (%lld bytes): truncated",
				 path, off, end, (long long)st.st_size);
			goto out;
		}
		off = end + (uint32_t)(h.packet_size - h.content_size) / 8;
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	return ret;
}

/*
 * add_traces() - append to the string array @inputs each directory at or below @path (down to
 * CTF_SCAN_DEPTH levels, which also ends symbolic link loops) that holds a regular file named
 * "metadata": what source.ctf.fs takes for a CTF trace. The component itself only opens the
 * directories it is given (the babeltrace2 CLI does the searching), and LTTng puts the trace
 * of a session in ust/uid/<uid>/64-bit/ below its output directory.
 *
 * Unreadable subdirectories are passed over: the trace may be complete without them.
 *
 * Return: 0, -ENOMEM, or -EBADMSG with @why set when a metadata file would hang the library.
 */
static int add_traces(const char *path, int depth, bt_value *inputs, char *why, size_t len)
{
	struct dirent *de;
	struct stat st;
	char *sub = NULL;
	int ret = 0;
	DIR *d;

	d = opendir(path);
	if (!d) {
		goto out;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, 0) ||
		    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			continue;
		}
		if ((S_ISREG(st.st_mode) && strcmp(de->d_name, "metadata")) ||
		    (S_ISDIR(st.st_mode) && depth >= CTF_SCAN_DEPTH)) {
			continue;
		}
		if (asprintf(&sub, "%s/%s", path, de->d_name) < 0) {
			sub = NULL;
			ret = -ENOMEM;
			snprintf(why, len, "%s", strerror(ENOMEM));
			goto out;
		}
		if (S_ISDIR(st.st_mode)) {
			ret = add_traces(sub, depth + 1, inputs, why, len);
		} else {
			ret = check_metadata(sub, why, len);
			if (!ret && bt_value_array_append_string_element(inputs, path) !=
					    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
				ret = -ENOMEM;
				snprintf(why, len, "%s", strerror(ENOMEM));
			}
		}
		free(sub);
		sub = NULL;
		if (ret) {
			goto out;
		}
	}
out:
	if (d) {
		closedir(d);
	}
	return ret;
}

static int field_to_json(const bt_field *field, int depth, struct json_object **out);

/*
 * text_is_empty() - whether @field, member @name of a structure whose earlier members are in
 * @obj, is a text sequence of length 0 (its length, "_@name_length", came before it). Its string
 * is then empty, whatever libbabeltrace2 says: 2.0.4 (Debian 12) leaves such a string holding
 * the value it had in the event of the same class before (babeltrace2's own output shows it too).
 */
static bool text_is_empty(struct json_object *obj, const char *name, const bt_field *field)
{
	struct json_object *len;
	char key[128];

	if (!bt_field_class_type_is(bt_field_get_class_type(field), BT_FIELD_CLASS_TYPE_STRING) ||
	    snprintf(key, sizeof(key), "_%s_length", name) >= (int)sizeof(key)) {
		return false;
	}
	return json_object_object_get_ex(obj, key, &len) && json_object_is_type(len, json_type_int) &&
	       json_object_get_int64(len) == 0;
}

/* Add the members of structure @field to @obj; with @keep, keys already in @obj stay. */
static int struct_to_json(struct json_object *obj, const bt_field *field, bool keep, int depth)
{
	const bt_field_class *fc = bt_field_borrow_class_const(field);
	const bt_field_class_structure_member *member;
	const bt_field *sub;
	struct json_object *val;
	const char *name;
	uint64_t i, n;
	int ret = 0;

	n = bt_field_class_structure_get_member_count(fc);
	for (i = 0; i < n; i++) {
		member = bt_field_class_structure_borrow_member_by_index_const(fc, i);
		name = bt_field_class_structure_member_get_name(member);
		if (keep && json_object_object_get_ex(obj, name, NULL)) {
			continue;
		}
		sub = bt_field_structure_borrow_member_field_by_index_const(field, i);
		if (text_is_empty(obj, name, sub)) {
			val = json_object_new_string("");
			ret = val ? 0 : -ENOMEM;
		} else {
			ret = field_to_json(sub, depth + 1, &val);
		}
		if (ret) {
			goto out;
		}
		if (json_object_object_add(obj, name, val)) {
			/* A failed add leaves val to us. */
			json_object_put(val);
			ret = -ENOMEM;
			goto out;
		}
	}
out:
	return ret;
}

static int array_to_json(struct json_object *arr, const bt_field *field, int depth)
{
	struct json_object *val;
	uint64_t i, n;
	int ret = 0;

	n = bt_field_array_get_length(field);
	for (i = 0; i < n; i++) {
		ret = field_to_json(bt_field_array_borrow_element_field_by_index_const(field, i),
				    depth + 1, &val);
		if (ret) {
			goto out;
		}
		if (json_object_array_add(arr, val)) {
			json_object_put(val);
			ret = -ENOMEM;
			goto out;
		}
	}
out:
	return ret;
}

/*
 * field_to_json() - set *@out to a new json-c value for @field (the mapping is documented at
 * struct ctf_event). json-c's null is NULL, so a NULL *@out is a value, not a failure.
 *
 * The field class type decides which bt_field_*() accessor may be called: any other breaks a
 * libbabeltrace2 precondition, which is undefined behaviour outside its developer mode.
 *
 * Return: 0, -ENOMEM, or -E2BIG when fields nest deeper than CTF_FIELD_DEPTH.
 */
static int field_to_json(const bt_field *field, int depth, struct json_object **out)
{
	bt_field_class_type type = bt_field_get_class_type(field);
	const bt_field *sub;
	struct json_object *val = NULL;
	bool is_null = false;
	int ret = 0;

	if (depth > CTF_FIELD_DEPTH) {
		ret = -E2BIG;
		goto out;
	}
	if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_BOOL)) {
		val = json_object_new_boolean(bt_field_bool_get_value(field));
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_BIT_ARRAY)) {
		val = json_object_new_int64(
			(int64_t)bt_field_bit_array_get_value_as_integer(field));
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
		/* Unsigned enumerations too. Above INT64_MAX the bits are kept, not the value. */
		val = json_object_new_int64((int64_t)bt_field_integer_unsigned_get_value(field));
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
		val = json_object_new_int64(bt_field_integer_signed_get_value(field));
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL)) {
		val = json_object_new_double(bt_field_real_single_precision_get_value(field));
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL)) {
		val = json_object_new_double(bt_field_real_double_precision_get_value(field));
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_STRING)) {
		val = json_object_new_string(bt_field_string_get_value(field));
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_STRUCTURE)) {
		val = json_object_new_object();
		if (val) {
			ret = struct_to_json(val, field, false, depth);
		}
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_ARRAY)) {
		val = json_object_new_array();
		if (val) {
			ret = array_to_json(val, field, depth);
		}
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_OPTION)) {
		sub = bt_field_option_borrow_field_const(field);
		is_null = !sub;
		if (sub) {
			ret = field_to_json(sub, depth + 1, &val);
			/* The option's field may itself be null: that is no allocation failure. */
			is_null = true;
		}
	} else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_VARIANT)) {
		ret = field_to_json(bt_field_variant_borrow_selected_option_field_const(field),
				    depth + 1, &val);
		is_null = true;
	} else {
		/* A field class type newer than this code: say null rather than fail the trace. */
		is_null = true;
	}
	if (!ret && !val && !is_null) {
		ret = -ENOMEM;
	}
out:
	if (ret) {
		json_object_put(val);
		val = NULL;
	}
	*out = val;
	return ret;
}

/* The payload first, then the contexts where the payload has no field of the same name. */
static int event_fields(const bt_event *event, struct json_object **out)
{
	const bt_field *parts[3];
	struct json_object *obj;
	int i, ret = 0;

	parts[0] = bt_event_borrow_payload_field_const(event);
	parts[1] = bt_event_borrow_specific_context_field_const(event);
	parts[2] = bt_event_borrow_common_context_field_const(event);
	obj = json_object_new_object();
	if (!obj) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < 3; i++) {
		if (!parts[i] ||
		    bt_field_get_class_type(parts[i]) != BT_FIELD_CLASS_TYPE_STRUCTURE) {
			continue;
		}
		ret = struct_to_json(obj, parts[i], i > 0, 0);
		if (ret) {
			goto out;
		}
	}
out:
	if (ret) {
		json_object_put(obj);
		obj = NULL;
	}
	*out = obj;
	return ret;
}

/* Cycles of a clock running at @freq Hz to ns, without overflow on the way. */
static uint64_t cycles_to_ns(uint64_t cycles, uint64_t freq)
{
	unsigned __int128 ns = cycles;

	/* LTTng's clock counts ns already; skip the division for it. */
	if (freq != 1000000000ULL && freq != 0) {
		ns = ns * 1000000000ULL / freq;
	}
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* The clock class of the trace's first stream: what a trace written to go with it copies. */
static void take_clock(struct ctf_reader *r, const bt_clock_class *cc)
{
	struct ctf_clock *c = &r->info.clock;
	const char *name = bt_clock_class_get_name(cc);
	const uint8_t *uuid = bt_clock_class_get_uuid(cc);

	snprintf(c->name, sizeof(c->name), "%s", name ? name : "");
	c->has_uuid = uuid != NULL;
	if (uuid) {
		memcpy(c->uuid, uuid, sizeof(c->uuid));
	}
	c->freq = bt_clock_class_get_frequency(cc);
	bt_clock_class_get_offset(cc, &c->offset_s, &c->offset_cycles);
	c->precision = bt_clock_class_get_precision(cc);
	c->origin_unix = bt_clock_class_origin_is_unix_epoch(cc);
	c->known = true;
}

/* A stream's clock class, when no event came before it: a trace without events has one too. */
static void stream_clock(struct ctf_reader *r, const bt_message *msg)
{
	const bt_stream *stream = bt_message_stream_beginning_borrow_stream_const(msg);
	const bt_clock_class *cc;

	cc = bt_stream_class_borrow_default_clock_class_const(bt_stream_borrow_class_const(stream));
	if (cc && !r->info.clock.known) {
		take_clock(r, cc);
	}
}

/* The string environment entry @name of @trace, or NULL. */
static const char *trace_env(const bt_trace *trace, const char *name)
{
	const bt_value *v = bt_trace_borrow_environment_entry_value_by_name_const(trace, name);

	return v && bt_value_is_string(v) ? bt_value_string_get(v) : NULL;
}

/*
 * trace_origin - who may have written the events of @trace (struct ctf_reader @origin,
 * @recorder): the trace latsnap writes itself says tracer_name "latsnap"; LTTng's trace of a
 * session is named after it (trace_name), and latsnap names its own "latsnap-PID-TIME" after
 * its pid, its replay sessions "latsnap-PID-TIME-rK". Any process can write into such a session
 * what its rules let through, but not rename it.
 */
static void trace_origin(struct ctf_reader *r, const bt_trace *trace)
{
	const char *tracer = trace_env(trace, "tracer_name");
	const char *name = trace_env(trace, "trace_name");
	int pid = 0, end = 0, replay = 0;
	long when;

	r->origin_trace = trace;
	r->origin = CTF_ORIGIN_UNKNOWN;
	if (tracer && !strcmp(tracer, "latsnap")) {
		r->origin = CTF_ORIGIN_LATSNAP;
		return;
	}
	if (!tracer || strcmp(tracer, "lttng-ust") || !name ||
	    sscanf(name, "latsnap-%d-%ld%n", &pid, &when, &end) != 2 || pid <= 0) {
		return;
	}
	if (name[end] == '\0') {
		r->origin = CTF_ORIGIN_RECORDER;
		r->recorder = pid;
	} else if (sscanf(name + end, "-r%d%n", &replay, &end) == 1 && name[end] == '\0') {
		r->origin = CTF_ORIGIN_RECORDER;
		r->recorder = -1;
	}
}

/* Who wrote @event (enum ctf_origin), its context fields being @fields. */
static int event_origin(struct ctf_reader *r, const bt_event *event, struct json_object *fields)
{
	const bt_trace *trace = bt_stream_borrow_trace_const(bt_event_borrow_stream_const(event));
	bool found;
	int64_t vpid;

	if (trace != r->origin_trace) {
		trace_origin(r, trace);
	}
	if (r->origin != CTF_ORIGIN_RECORDER || r->recorder < 0) {
		return r->origin;
	}
	vpid = (int64_t)ctf_field_u64(fields, "vpid", &found);
	return found && vpid == r->recorder ? CTF_ORIGIN_RECORDER : CTF_ORIGIN_OTHER;
}

static void handle_event(struct ctf_reader *r, const bt_message *msg)
{
	const bt_event *event = bt_message_event_borrow_event_const(msg);
	const bt_clock_class *cc;
	const bt_clock_snapshot *cs;
	struct ctf_event ev = { 0 };
	int ret;

	/* Borrowing the snapshot of an event whose stream has no clock breaks a precondition. */
	cc = bt_message_event_borrow_stream_class_default_clock_class_const(msg);
	if (!cc) {
		reader_fail(r, -EBADMSG, "an event has no timestamp (its stream has no clock)");
		goto out;
	}
	cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
	/* The raw value: bt_clock_snapshot_get_ns_from_origin() would add LTTng's offset. */
	ev.ts_ns = cycles_to_ns(bt_clock_snapshot_get_value(cs), bt_clock_class_get_frequency(cc));
	ev.name = bt_event_class_get_name(bt_event_borrow_class_const(event));
	if (!r->info.clock.known) {
		take_clock(r, cc);
	}
	if (!ev.name) {
		ev.name = "";
	}

	if (!r->info.events || ev.ts_ns < r->info.first_ns) {
		r->info.first_ns = ev.ts_ns;
	}
	if (!r->info.events || ev.ts_ns > r->info.last_ns) {
		r->info.last_ns = ev.ts_ns;
	}
	r->info.events++;

	if (!r->fn || (r->prefix && strncmp(ev.name, r->prefix, r->prefix_len))) {
		goto out;
	}
	ret = event_fields(event, &ev.fields);
	if (ret) {
		reader_fail(r, ret,
			    ret == -E2BIG ? "event fields nested too deeply" : strerror(-ret));
		goto out;
	}
	ev.origin = event_origin(r, event, ev.fields);
	ret = r->fn(&ev, r->ctx);
	json_object_put(ev.fields);
	if (ret) {
		r->cb_ret = ret;
		r->stopped = true;
	}
out:
	return;
}

/* A count the library does not know still means data was lost: count at least one. */
static uint64_t discarded_count(const bt_message *msg, bool events)
{
	bt_property_availability avail;
	uint64_t n = 0;

	if (events) {
		avail = bt_message_discarded_events_get_count(msg, &n);
	} else {
		avail = bt_message_discarded_packets_get_count(msg, &n);
	}
	if (avail != BT_PROPERTY_AVAILABILITY_AVAILABLE || n == 0) {
		n = 1;
	}
	return n;
}

static int send_line(struct ctf_reader *r, const char *line);

static bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator *it,
								       void *data)
{
	bt_graph_simple_sink_component_consume_func_status ret =
		BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
	struct ctf_reader *r = data;
	bt_message_array_const msgs;
	uint64_t i, count = 0;

	switch (bt_message_iterator_next(it, &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		ret = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
		goto out;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		ret = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
		goto out;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		ret = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
		goto out;
	default:
		ret = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
		goto out;
	}
	for (i = 0; i < count; i++) {
		if (!r->err && !r->stopped) {
			switch (bt_message_get_type(msgs[i])) {
			case BT_MESSAGE_TYPE_EVENT:
				handle_event(r, msgs[i]);
				break;
			case BT_MESSAGE_TYPE_STREAM_BEGINNING:
				stream_clock(r, msgs[i]);
				break;
			case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
				r->info.discarded_events += discarded_count(msgs[i], true);
				break;
			case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
				r->info.discarded_packets += discarded_count(msgs[i], false);
				break;
			default:
				break;
			}
		}
		/* Every message of the batch is ours to release, used or not. */
		bt_message_put_ref(msgs[i]);
	}
	/*
	 * Tell the parent we are alive while its filter or a long stretch of other messages keeps
	 * us quiet. A failed write means the parent is gone; the next event's write says so.
	 */
	if (ls_now_ns() - r->last_write_ns > CTF_HEARTBEAT_NS) {
		send_line(r, "");
	}
	if (r->err) {
		ret = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	} else if (r->stopped) {
		/* The parent is gone or stopped: ending the only sink ends bt_graph_run(). */
		ret = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	}
out:
	return ret;
}

static int find_class(const char *plugin_name, const char *class_name, bool source,
		      const bt_plugin **plugin, const void **cls, char *why, size_t len)
{
	bt_plugin_find_status st;
	int ret = 0;

	/*
	 * Only the system's plugin directory (and plugins built in): we often run as root, and
	 * BABELTRACE_PLUGIN_PATH or ~/.local would let anyone's shared object into the process.
	 * A broken unrelated plugin there is no reason to fail.
	 */
	st = bt_plugin_find(plugin_name, BT_FALSE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, plugin);
	if (st != BT_PLUGIN_FIND_STATUS_OK) {
		ret = st == BT_PLUGIN_FIND_STATUS_MEMORY_ERROR ? -ENOMEM : -ENOENT;
		snprintf(why, len, "libbabeltrace2 has no '%s' plugin (is babeltrace2 installed?)",
			 plugin_name);
		goto out;
	}
	if (source) {
		*cls = bt_plugin_borrow_source_component_class_by_name_const(*plugin, class_name);
	} else {
		*cls = bt_plugin_borrow_filter_component_class_by_name_const(*plugin, class_name);
	}
	if (!*cls) {
		ret = -ENOENT;
		snprintf(why, len, "libbabeltrace2's '%s' plugin has no '%s' component class",
			 plugin_name, class_name);
	}
out:
	return ret;
}

/* The muxer adds an input port each time one gets connected: use the one still free. */
static const bt_port_input *free_input_port(const bt_component_filter *mux)
{
	const bt_port_input *port = NULL;
	uint64_t i, n;

	n = bt_component_filter_get_input_port_count(mux);
	for (i = 0; i < n; i++) {
		port = bt_component_filter_borrow_input_port_by_index_const(mux, i);
		if (!bt_port_is_connected(bt_port_input_as_port_const(port))) {
			goto out;
		}
	}
	port = NULL;
out:
	return port;
}

static int add_error(bt_graph_add_component_status st, char *why, size_t len, const char *what)
{
	take_bt_error(why, len, what);
	return st == BT_GRAPH_ADD_COMPONENT_STATUS_MEMORY_ERROR ? -ENOMEM : -EBADMSG;
}

/*
 * run_graph() - build source.ctf.fs (one per trace) -> filter.utils.muxer -> our sink, run it
 * @r: the reader state the sink fills
 * @inputs: the trace directories
 * @why: on failure, why, in one line
 *
 * One source component per trace directory: given several, source.ctf.fs takes them for parts
 * of one trace and refuses traces with different UUIDs - and a snapshot holds one trace per
 * user id (ust/uid/0, ust/uid/101, ...) as soon as a process of another user traced.
 * @len: size of @why
 *
 * Return: 0, or a negative errno.
 */
/*
 * add_source - a ctf.fs source on trace @path, named src@k, each of its streams (one per CPU
 * and channel for LTTng) into a free input port of @mux
 */
static int add_source(bt_graph *graph, const bt_component_class_source *src_cls,
		      const char *path, uint64_t k, bt_logging_level level,
		      const bt_component_filter *mux, char *why, size_t len)
{
	const bt_component_source *src;
	const bt_port_output *out_port;
	const bt_port_input *in_port;
	bt_graph_add_component_status add_st;
	bt_value *params, *one;
	char name[32];
	uint64_t i, n;
	int ret = 0;

	params = bt_value_map_create();
	if (!params ||
	    bt_value_map_insert_empty_array_entry(params, "inputs", &one) !=
		    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
	    bt_value_array_append_string_element(one, path) !=
		    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
		ret = -ENOMEM;
		snprintf(why, len, "%s", strerror(ENOMEM));
		goto out;
	}
	snprintf(name, sizeof(name), "src%" PRIu64, k);
	/* ctf.fs reads the metadata here: a corrupt one fails now. */
	add_st = bt_graph_add_source_component(graph, src_cls, name, params, level, &src);
	if (add_st != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		ret = add_error(add_st, why, len, "cannot open the trace");
		goto out;
	}
	n = bt_component_source_get_output_port_count(src);
	for (i = 0; i < n; i++) {
		out_port = bt_component_source_borrow_output_port_by_index_const(src, i);
		in_port = free_input_port(mux);
		if (!in_port || bt_graph_connect_ports(graph, out_port, in_port, NULL) !=
					BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
			ret = -EBADMSG;
			take_bt_error(why, len, "cannot connect a stream to the muxer");
			goto out;
		}
	}
out:
	bt_value_put_ref(params);
	return ret;
}

/* Run the connected @graph to its end, and tell what became of the reading. */
static int run_to_end(struct ctf_reader *r, bt_graph *graph, char *why, size_t len)
{
	bt_graph_run_status run_st;
	int again = 0, ret;

	do {
		run_st = bt_graph_run(graph);
		if (run_st == BT_GRAPH_RUN_STATUS_AGAIN) {
			usleep(1000);
		}
	} while (run_st == BT_GRAPH_RUN_STATUS_AGAIN && ++again < CTF_AGAIN_MAX);

	if (r->err) {
		/* Our sink's own failure; the library's error only says the sink failed. */
		bt_current_thread_clear_error();
		ret = r->err;
		snprintf(why, len, "%s", r->why);
	} else if (run_st == BT_GRAPH_RUN_STATUS_OK) {
		ret = 0;
		/*
		 * 2.0.4's ctf.fs gives up on a packet it cannot decode, leaves the cause on the
		 * thread and ends the stream as if all were well: the rest of the stream is lost.
		 * Leaving the error would also make the next libbabeltrace2 call abort.
		 */
		if (take_bt_error(why, len, "cannot read the trace") && !r->stopped) {
			ret = -EBADMSG;
		}
	} else if (run_st == BT_GRAPH_RUN_STATUS_AGAIN) {
		ret = -ETIMEDOUT;
		snprintf(why, len, "libbabeltrace2 kept asking to try again");
	} else {
		ret = run_st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR ? -ENOMEM : -EBADMSG;
		take_bt_error(why, len, "cannot read the trace");
	}
	return ret;
}

static int run_graph(struct ctf_reader *r, const bt_value *inputs, char *why, size_t len)
{
	uint64_t k, nr_inputs = bt_value_array_get_length(inputs);
	const bt_plugin *ctf_plugin = NULL, *utils_plugin = NULL;
	const bt_component_class_source *src_cls = NULL;
	const bt_component_class_filter *mux_cls = NULL;
	const bt_component_filter *mux;
	const bt_component_sink *sink;
	const bt_port_output *out_port;
	const bt_port_input *in_port;
	bt_logging_level level;
	bt_graph_add_component_status add_st;
	bt_graph *graph = NULL;
	int ret;

	/* Their log lines would break our one-line errors; the error object carries the cause. */
	level = ls_verbose_enabled ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE;

	ret = find_class("ctf", "fs", true, &ctf_plugin, (const void **)&src_cls, why, len);
	if (ret) {
		goto out;
	}
	ret = find_class("utils", "muxer", false, &utils_plugin, (const void **)&mux_cls, why, len);
	if (ret) {
		goto out;
	}

	graph = bt_graph_create(0);
	if (!graph) {
		ret = -ENOMEM;
		snprintf(why, len, "%s", strerror(ENOMEM));
		goto out;
	}

	add_st = bt_graph_add_filter_component(graph, mux_cls, "mux", NULL, level, &mux);
	if (add_st != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		ret = add_error(add_st, why, len, "cannot create the muxer");
		goto out;
	}
	add_st = bt_graph_add_simple_sink_component(graph, "sink", NULL, sink_consume, NULL, r,
						    &sink);
	if (add_st != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		ret = add_error(add_st, why, len, "cannot create the sink");
		goto out;
	}
	for (k = 0; k < nr_inputs; k++) {
		ret = add_source(graph, src_cls,
				 bt_value_string_get(
					 bt_value_array_borrow_element_by_index_const(inputs, k)),
				 k, level, mux, why, len);
		if (ret) {
			goto out;
		}
	}
	out_port = bt_component_filter_borrow_output_port_by_name_const(mux, "out");
	in_port = bt_component_sink_borrow_input_port_by_index_const(sink, 0);
	if (!out_port || !in_port ||
	    bt_graph_connect_ports(graph, out_port, in_port, NULL) !=
		    BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		ret = -EBADMSG;
		take_bt_error(why, len, "cannot connect the muxer to the sink");
		goto out;
	}
	ret = run_to_end(r, graph, why, len);
out:
	/* The graph holds references to the components and to their plugins' classes. */
	bt_graph_put_ref(graph);
	bt_plugin_put_ref(utils_plugin);
	bt_plugin_put_ref(ctf_plugin);
	return ret;
}

/*
 * reader_run() - read the trace of @r->dir
 * @why: on failure, why, in one line
 *
 * Return: 0 or a negative errno.
 */
static int reader_run(struct ctf_reader *r, char *why, size_t len)
{
	bt_value *params = NULL, *inputs;
	int fd, ret;

	/* Tell a missing or unreadable directory from one that holds no trace. */
	fd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, len, "%s", strerror(-ret));
		goto out;
	}
	close(fd);

	params = bt_value_map_create();
	if (!params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) !=
			       BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
		ret = -ENOMEM;
		snprintf(why, len, "%s", strerror(ENOMEM));
		goto out;
	}
	ret = add_traces(r->dir, 0, inputs, why, len);
	if (ret) {
		goto out;
	}
	if (bt_value_array_is_empty(inputs)) {
		ret = -ENODATA;
		snprintf(why, len, "not a CTF trace (no metadata file in it)");
		goto out;
	}
	ret = run_graph(r, inputs, why, len);
out:
	bt_value_put_ref(params);
	return ret;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;
	int ret = 0;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto out;
		}
		buf += n;
		len -= (size_t)n;
	}
out:
	return ret;
}

/* One JSON line up the pipe; the newline is the record separator (JSON text escapes its own). */
static int send_line(struct ctf_reader *r, const char *line)
{
	int ret;

	ret = write_all(r->out_fd, line, strlen(line));
	if (!ret) {
		ret = write_all(r->out_fd, "\n", 1);
	}
	r->last_write_ns = ls_now_ns();
	return ret;
}

/*
 * The reader's ctf_event_fn: {"n": name, "t": ts_ns as int64 bits, "f": fields, "o": origin}, "o"
 * only when known. json-c's text as it is, not ls_json_text()'s: the line goes only to
 * trace/ctf.c in latsnap, which takes strings back byte for byte, so a comm stays exact for text
 * output to escape; what writes it as JSON makes it UTF-8 then.
 */
static int emit_event(const struct ctf_event *ev, void *ctx)
{
	struct ctf_reader *r = ctx;
	struct json_object *line;
	int ret = -ENOMEM;

	line = json_object_new_object();
	if (!line || json_object_object_add(line, "n", json_object_new_string(ev->name)) ||
	    json_object_object_add(line, "t", json_object_new_int64((int64_t)ev->ts_ns)) ||
	    json_object_object_add(line, "f", json_object_get(ev->fields)) ||
	    (ev->origin && json_object_object_add(line, "o", json_object_new_int(ev->origin)))) {
		goto out;
	}
	ret = send_line(r, json_object_to_json_string_ext(
				   line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
out:
	json_object_put(line);
	return ret;
}

/* The "clock" member of the last line. */
static int add_clock(struct json_object *end, const struct ctf_clock *c)
{
	struct json_object *obj = json_object_new_object();
	char uuid[33];
	size_t i;

	if (!obj || json_object_object_add(end, "clock", obj)) {
		json_object_put(obj);
		return -ENOMEM;
	}
	for (i = 0; i < sizeof(c->uuid); i++) {
		snprintf(uuid + 2 * i, 3, "%02x", c->uuid[i]);
	}
	if (json_object_object_add(obj, "name", json_object_new_string(c->name)) ||
	    (c->has_uuid && json_object_object_add(obj, "uuid", json_object_new_string(uuid))) ||
	    json_object_object_add(obj, "freq", json_object_new_int64((int64_t)c->freq)) ||
	    json_object_object_add(obj, "offset_s", json_object_new_int64(c->offset_s)) ||
	    json_object_object_add(obj, "offset",
				   json_object_new_int64((int64_t)c->offset_cycles)) ||
	    json_object_object_add(obj, "precision",
				   json_object_new_int64((int64_t)c->precision)) ||
	    json_object_object_add(obj, "unix", json_object_new_boolean(c->origin_unix))) {
		return -ENOMEM;
	}
	return 0;
}

/**
 * ctf_reader_main() - the trace reading process: read @dir, send each event (of a name that
 *                     starts with @prefix, when @fields), then one last line
 * @parent: the pid of the process that started this one, which reads @fd
 * @verbose: let libbabeltrace2's own messages through to stderr
 *
 * Lines: {"n": name, "t": ts_ns, "f": fields} per event, an empty line as a heartbeat at least
 * each second, and last {"end": 0 or -errno, "why": "...", "info": [first_ns, last_ns, events,
 * discarded events, discarded packets], "clock": CLOCK}, CLOCK being the first stream's clock
 * class, {"name", "uuid" (32 hex digits, or absent), "freq", "offset_s", "offset", "precision",
 * "unix"}, or absent when no stream had a clock.
 */
void __attribute__((noreturn)) ctf_reader_main(const char *dir, const char *prefix, bool fields,
					       bool verbose, pid_t parent, int fd)
{
	struct ctf_reader reader = {
		.dir = dir,
		.prefix = prefix,
		.prefix_len = prefix ? strlen(prefix) : 0,
		.fn = fields ? emit_event : NULL,
		.out_fd = -1,
	};
	struct ctf_reader *r = &reader;
	struct json_object *end = NULL, *info;
	char why[512] = "";
	struct rlimit lim;
	int ret, null;

	ls_verbose_enabled = verbose;

	/* Die with the parent instead of lingering in a hang nobody waits for. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent) {
		_exit(1);
	}
	/* Ctrl-C is for the parent, which decides whether to wait for the trace. */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_DFL);
	/* libbabeltrace2's own assertion and log lines are not ours to show, unless asked. */
	null = verbose ? -1 : open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDERR_FILENO);
		close(null);
	}
	if (CTF_READER_LIMIT_AS && !getrlimit(RLIMIT_AS, &lim) && lim.rlim_cur > CTF_READER_AS_MAX) {
		lim.rlim_cur = CTF_READER_AS_MAX;
		setrlimit(RLIMIT_AS, &lim);
	}

	r->out_fd = fd;
	r->last_write_ns = ls_now_ns();
	r->ctx = r;
	ret = reader_run(r, why, sizeof(why));

	end = json_object_new_object();
	info = json_object_new_array_ext(5);
	if (!end || !info || json_object_object_add(end, "info", info) ||
	    json_object_array_add(info, json_object_new_int64((int64_t)r->info.first_ns)) ||
	    json_object_array_add(info, json_object_new_int64((int64_t)r->info.last_ns)) ||
	    json_object_array_add(info, json_object_new_int64((int64_t)r->info.events)) ||
	    json_object_array_add(info, json_object_new_int64((int64_t)r->info.discarded_events)) ||
	    json_object_array_add(info,
				  json_object_new_int64((int64_t)r->info.discarded_packets)) ||
	    json_object_object_add(end, "why", json_object_new_string(why)) ||
	    json_object_object_add(end, "end", json_object_new_int(ret))) {
		_exit(1);
	}
	if (r->info.clock.known && add_clock(end, &r->info.clock)) {
		_exit(1);
	}
	if (send_line(r, json_object_to_json_string_ext(end, JSON_C_TO_STRING_PLAIN))) {
		_exit(1);
	}
	json_object_put(end);
	_exit(0);
}

