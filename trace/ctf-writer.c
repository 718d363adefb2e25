// SPDX-License-Identifier: GPL-2.0
/*
 * ctf-writer.c - events held in memory written as a CTF trace of their own, each at the time it
 * happened, with libbabeltrace2's graph API:
 *
 *	our source (one stream, one packet, the events in time order) --> sink.ctf.fs
 *
 * sink.ctf.fs writes the CTF 1.8 metadata and data stream files; nothing of the format is written
 * here. It runs in the calling process: unlike reading (trace/ctf-reader.c), it parses nothing it
 * did not make.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <babeltrace2/babeltrace.h>

#include "trace/ctf-writer.h"

enum wtype {
	W_UINT,
	W_SINT,
	W_HEX,
	W_TEXT,
	W_STRING,
	W_HEX_SEQ,
};

struct wfield {
	const char *name;
	enum wtype type;
	unsigned int bits;
	uint64_t v;
	char *s;
	uint64_t *seq;
	size_t n;
};

struct wevent {
	const char *name;
	uint64_t ts;
	size_t order;
	size_t first; /* its fields: w->f[first .. first + nr) */
	size_t nr;
	size_t cls; /* index in w->classes, set when the classes are made */
};

struct wclass {
	const char *name;
	const struct wevent *model; /* the first event of the name, whose fields define it */
	bt_event_class *ec;
};

struct ctf_writer {
	struct wevent *ev;
	size_t nr_ev, cap_ev;
	struct wfield *f;
	size_t nr_f, cap_f;
	int err; /* sticky: the first failure of an add */
	/* Who wrote the events: every event's common context, as LTTng's vpid, vtid, procname. */
	bool has_emitter;
	int32_t vpid, vtid;
	char procname[32];
	/* What writing needs, set by ctf_writer_write() for the source component. */
	const struct ctf_clock *clock;
	const char *hostname;
	struct wclass *classes;
	size_t nr_classes;
	struct wevent **sorted;
	bt_trace *trace;
	bt_stream *stream;
	bt_packet *packet;
	char *why;
	size_t why_len;
	int ir_err; /* why the source component could not make the trace's classes */
};

/**
 * ctf_writer_new - an empty writer. Return: it, or NULL without memory.
 */
struct ctf_writer *ctf_writer_new(void)
{
	return calloc(1, sizeof(struct ctf_writer));
}

/**
 * ctf_writer_free - forget @w and what it holds (NULL is fine)
 */
void ctf_writer_free(struct ctf_writer *w)
{
	size_t i;

	if (!w) {
		return;
	}
	for (i = 0; i < w->nr_f; i++) {
		free(w->f[i].s);
		free(w->f[i].seq);
	}
	free(w->f);
	free(w->ev);
	free(w);
}

/**
 * ctf_writer_count - the events added to @w so far
 */
size_t ctf_writer_count(const struct ctf_writer *w)
{
	return w->nr_ev;
}

/**
 * ctf_writer_emitter - every event's common context: the process and thread that wrote them and
 * its name, as LTTng's vpid, vtid and procname contexts say it of the events it records
 */
void ctf_writer_emitter(struct ctf_writer *w, int32_t vpid, int32_t vtid, const char *procname)
{
	w->has_emitter = true;
	w->vpid = vpid;
	w->vtid = vtid;
	snprintf(w->procname, sizeof(w->procname), "%s", procname ? procname : "");
}

/**
 * ctf_writer_event - start an event @name that happened at @ts (clock cycles of the trace's
 * clock: ns for LTTng's); its fields follow.
 */
void ctf_writer_event(struct ctf_writer *w, const char *name, uint64_t ts)
{
	struct wevent *p;
	size_t cap;

	if (w->err) {
		return;
	}
	if (w->nr_ev == w->cap_ev) {
		cap = w->cap_ev ? w->cap_ev * 2 : 256;
		p = realloc(w->ev, cap * sizeof(*p));
		if (!p) {
			w->err = -ENOMEM;
			return;
		}
		w->ev = p;
		w->cap_ev = cap;
	}
	w->ev[w->nr_ev] =
		(struct wevent){ .name = name, .ts = ts, .order = w->nr_ev, .first = w->nr_f };
	w->nr_ev++;
}

/* A new field of the current event, or NULL (the error kept). */
static struct wfield *add_field(struct ctf_writer *w, const char *name, enum wtype type,
				unsigned int bits)
{
	struct wfield *p;
	size_t cap;

	if (w->err) {
		return NULL;
	}
	if (!w->nr_ev) {
		w->err = -EINVAL;
		return NULL;
	}
	if (w->nr_f == w->cap_f) {
		cap = w->cap_f ? w->cap_f * 2 : 1024;
		p = realloc(w->f, cap * sizeof(*p));
		if (!p) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->f = p;
		w->cap_f = cap;
	}
	p = &w->f[w->nr_f++];
	*p = (struct wfield){ .name = name, .type = type, .bits = bits };
	w->ev[w->nr_ev - 1].nr++;
	return p;
}

/**
 * ctf_writer_uint - an unsigned integer field of @bits bits (8 to 64) of the current event
 */
void ctf_writer_uint(struct ctf_writer *w, const char *name, unsigned int bits, uint64_t v)
{
	struct wfield *f = add_field(w, name, W_UINT, bits);

	if (f) {
		f->v = v;
	}
}

/**
 * ctf_writer_sint - a signed integer field of @bits bits of the current event
 */
void ctf_writer_sint(struct ctf_writer *w, const char *name, unsigned int bits, int64_t v)
{
	struct wfield *f = add_field(w, name, W_SINT, bits);

	if (f) {
		f->v = (uint64_t)v;
	}
}

/**
 * ctf_writer_hex - an unsigned integer field shown in hexadecimal (an address)
 */
void ctf_writer_hex(struct ctf_writer *w, const char *name, unsigned int bits, uint64_t v)
{
	struct wfield *f = add_field(w, name, W_HEX, bits);

	if (f) {
		f->v = v;
	}
}

/**
 * ctf_writer_text - a text field @name (@s, NULL as ""), preceded by its length "_@name_length"
 * as LTTng writes a text sequence: libbabeltrace2 2.0.4 reads an empty string back as the value
 * the field had in the event before, and its readers (trace/ctf-reader.c) go by the length.
 */
void ctf_writer_text(struct ctf_writer *w, const char *name, const char *s)
{
	struct wfield *f;

	s = s ? s : "";
	f = add_field(w, name, W_TEXT, 16);
	if (!f) {
		return;
	}
	f->s = strdup(s);
	if (!f->s) {
		w->err = -ENOMEM;
	}
}

/**
 * ctf_writer_string - a plain string field @name (@s, NULL as ""), for text that is never empty
 * (a task's name, a fixed word), as LTTng writes a string or a fixed-size text array
 */
void ctf_writer_string(struct ctf_writer *w, const char *name, const char *s)
{
	struct wfield *f = add_field(w, name, W_STRING, 0);

	if (!f) {
		return;
	}
	f->s = strdup(s ? s : "");
	if (!f->s) {
		w->err = -ENOMEM;
	}
}

/**
 * ctf_writer_hex_seq - a sequence of @n 64-bit addresses, preceded by its length "_@name_length"
 */
void ctf_writer_hex_seq(struct ctf_writer *w, const char *name, const uint64_t *v, size_t n)
{
	struct wfield *f = add_field(w, name, W_HEX_SEQ, 64);

	if (!f || !n) {
		return;
	}
	f->seq = malloc(n * sizeof(*v));
	if (!f->seq) {
		w->err = -ENOMEM;
		return;
	}
	memcpy(f->seq, v, n * sizeof(*v));
	f->n = n;
}

static void fail(struct ctf_writer *w, const char *what)
{
	const bt_error *error = bt_current_thread_take_error();
	const char *msg = NULL;

	if (error && bt_error_get_cause_count(error)) {
		msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(error, 0));
	}
	if (w->why && !w->why[0]) {
		snprintf(w->why, w->why_len, "%s%s%s", what, msg ? ": " : "", msg ? msg : "");
	}
	if (error) {
		bt_error_release(error);
	}
}

/* An integer field class of @bits bits; NULL without memory. */
static bt_field_class *int_class(bt_trace_class *tc, bool is_signed, bool hex, unsigned int bits)
{
	bt_field_class *fc = is_signed ? bt_field_class_integer_signed_create(tc) :
					 bt_field_class_integer_unsigned_create(tc);

	if (fc) {
		bt_field_class_integer_set_field_value_range(fc, bits);
		if (hex) {
			bt_field_class_integer_set_preferred_display_base(
				fc, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
		}
	}
	return fc;
}

/* Append a member @name of class @fc (whose reference this takes) to @st. */
static int append(bt_field_class *st, const char *name, bt_field_class *fc)
{
	int ret = 0;

	if (!fc || bt_field_class_structure_append_member(st, name, fc) !=
			   BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK) {
		ret = -ENOMEM;
	}
	bt_field_class_put_ref(fc);
	return ret;
}

/* The payload class of @model's fields: each text and sequence after its length member. */
static bt_field_class *payload_class(bt_trace_class *tc, const struct ctf_writer *w,
				     const struct wevent *model)
{
	bt_field_class *st = bt_field_class_structure_create(tc), *len, *elem, *arr;
	char *lname;
	size_t i;
	int ret = 0;

	for (i = 0; st && !ret && i < model->nr; i++) {
		const struct wfield *f = &w->f[model->first + i];

		switch (f->type) {
		case W_UINT:
		case W_HEX:
			ret = append(st, f->name, int_class(tc, false, f->type == W_HEX, f->bits));
			break;
		case W_SINT:
			ret = append(st, f->name, int_class(tc, true, false, f->bits));
			break;
		case W_STRING:
			ret = append(st, f->name, bt_field_class_string_create(tc));
			break;
		case W_TEXT:
		case W_HEX_SEQ:
			if (asprintf(&lname, "_%s_length", f->name) < 0) {
				ret = -ENOMEM;
				break;
			}
			/* The structure keeps its own copy of a member's name. */
			ret = append(st, lname,
				     int_class(tc, false, false, f->type == W_TEXT ? 16 : 32));
			free(lname);
			if (ret) {
				break;
			}
			if (f->type == W_TEXT) {
				ret = append(st, f->name, bt_field_class_string_create(tc));
				break;
			}
			/* The length member just appended: the array's length field. */
			len = bt_field_class_structure_member_borrow_field_class(
				bt_field_class_structure_borrow_member_by_index(
					st, bt_field_class_structure_get_member_count(st) - 1));
			elem = int_class(tc, false, true, 64);
			arr = elem && len ? bt_field_class_array_dynamic_create(tc, elem, len) :
					    NULL;
			bt_field_class_put_ref(elem);
			ret = append(st, f->name, arr);
			break;
		}
	}
	if (ret) {
		bt_field_class_put_ref(st);
		st = NULL;
	}
	return st;
}

/* Whether @a and @b have the same fields: a class is defined by its first event. */
static bool same_fields(const struct ctf_writer *w, const struct wevent *a, const struct wevent *b)
{
	size_t i;

	if (a->nr != b->nr) {
		return false;
	}
	for (i = 0; i < a->nr; i++) {
		const struct wfield *x = &w->f[a->first + i], *y = &w->f[b->first + i];

		if (x->type != y->type || x->bits != y->bits || strcmp(x->name, y->name)) {
			return false;
		}
	}
	return true;
}

/* The clock class of the trace it goes next to: the muxer compares their uuid and origin. */
static bt_clock_class *clock_class(bt_self_component *self, const struct ctf_clock *c)
{
	bt_clock_class *cc = bt_clock_class_create(self);

	if (!cc) {
		return NULL;
	}
	if (bt_clock_class_set_name(cc, c->name) != BT_CLOCK_CLASS_SET_NAME_STATUS_OK) {
		bt_clock_class_put_ref(cc);
		return NULL;
	}
	bt_clock_class_set_frequency(cc, c->freq);
	bt_clock_class_set_offset(cc, c->offset_s, c->offset_cycles);
	bt_clock_class_set_precision(cc, c->precision);
	bt_clock_class_set_origin_is_unix_epoch(cc, c->origin_unix ? BT_TRUE : BT_FALSE);
	if (c->has_uuid) {
		bt_clock_class_set_uuid(cc, c->uuid);
	}
	return cc;
}

/* The trace's classes, the trace, its one stream and packet: what the messages refer to. */
static int make_ir(bt_self_component *self, struct ctf_writer *w)
{
	bt_trace_class *tc = bt_trace_class_create(self);
	bt_stream_class *sc = NULL;
	bt_clock_class *cc = NULL;
	bt_field_class *payload, *ctx;
	size_t i, k;
	int ret = -ENOMEM;

	if (!tc) {
		goto out;
	}
	sc = bt_stream_class_create(tc);
	cc = clock_class(self, w->clock);
	if (!sc || !cc ||
	    bt_stream_class_set_default_clock_class(sc, cc) !=
		    BT_STREAM_CLASS_SET_DEFAULT_CLOCK_CLASS_STATUS_OK) {
		goto out;
	}
	/* CTF 1.8 has packets, their bounds in the trace's time. */
	bt_stream_class_set_supports_packets(sc, BT_TRUE, BT_TRUE, BT_TRUE);
	if (w->has_emitter) {
		ctx = bt_field_class_structure_create(tc);
		if (!ctx || append(ctx, "vpid", int_class(tc, true, false, 32)) ||
		    append(ctx, "vtid", int_class(tc, true, false, 32)) ||
		    append(ctx, "procname", bt_field_class_string_create(tc)) ||
		    bt_stream_class_set_event_common_context_field_class(sc, ctx) !=
			    BT_STREAM_CLASS_SET_FIELD_CLASS_STATUS_OK) {
			bt_field_class_put_ref(ctx);
			goto out;
		}
		bt_field_class_put_ref(ctx);
	}
	for (i = 0; i < w->nr_ev; i++) {
		struct wevent *e = &w->ev[i];

		for (k = 0; k < w->nr_classes && strcmp(w->classes[k].name, e->name); k++) {
		}
		if (k < w->nr_classes) {
			if (!same_fields(w, w->classes[k].model, e)) {
				ret = -EINVAL;
				snprintf(w->why, w->why_len, "%s: not the fields of the first one",
					 e->name);
				goto out;
			}
			e->cls = k;
			continue;
		}
		w->classes[k] = (struct wclass){ .name = e->name, .model = e };
		w->nr_classes++;
		e->cls = k;
		w->classes[k].ec = bt_event_class_create(sc);
		payload = w->classes[k].ec ? payload_class(tc, w, e) : NULL;
		if (!payload ||
		    bt_event_class_set_name(w->classes[k].ec, e->name) !=
			    BT_EVENT_CLASS_SET_NAME_STATUS_OK ||
		    bt_event_class_set_payload_field_class(w->classes[k].ec, payload) !=
			    BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK) {
			bt_field_class_put_ref(payload);
			goto out;
		}
		bt_field_class_put_ref(payload);
	}
	w->trace = bt_trace_create(tc);
	if (!w->trace) {
		goto out;
	}
	if (w->hostname && w->hostname[0] &&
	    bt_trace_set_environment_entry_string(w->trace, "hostname", w->hostname) !=
		    BT_TRACE_SET_ENVIRONMENT_ENTRY_STATUS_OK) {
		goto out;
	}
	if (bt_trace_set_environment_entry_string(w->trace, "tracer_name", "latsnap") !=
	    BT_TRACE_SET_ENVIRONMENT_ENTRY_STATUS_OK) {
		goto out;
	}
	w->stream = bt_stream_create(sc, w->trace);
	w->packet = w->stream ? bt_packet_create(w->stream) : NULL;
	ret = w->packet ? 0 : -ENOMEM;
out:
	bt_clock_class_put_ref(cc);
	bt_stream_class_put_ref(sc);
	bt_trace_class_put_ref(tc);
	return ret;
}

static bt_component_class_initialize_method_status
src_init(bt_self_component_source *self, bt_self_component_source_configuration *config,
	 const bt_value *params, void *data)
{
	struct ctf_writer *w = data;

	(void)config;
	(void)params;
	bt_self_component_set_data(bt_self_component_source_as_self_component(self), w);
	w->ir_err = make_ir(bt_self_component_source_as_self_component(self), w);
	if (w->ir_err) {
		fail(w, "cannot make the trace's classes");
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	if (bt_self_component_source_add_output_port(self, "out", NULL, NULL) !=
	    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	}
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

/* Where the one message iterator is: 0 stream beginning, 1 packet beginning, 2.. events. */
struct src_iter {
	struct ctf_writer *w;
	size_t next;
};

static bt_message_iterator_class_initialize_method_status
iter_init(bt_self_message_iterator *self, bt_self_message_iterator_configuration *config,
	  bt_self_component_port_output *port)
{
	struct src_iter *it = calloc(1, sizeof(*it));

	(void)config;
	(void)port;
	if (!it) {
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	}
	it->w = bt_self_component_get_data(bt_self_message_iterator_borrow_component(self));
	bt_self_message_iterator_set_data(self, it);
	return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static void iter_fini(bt_self_message_iterator *self)
{
	free(bt_self_message_iterator_get_data(self));
}

/* Set the payload of @msg's event from @e's fields. */
static int fill_event(const struct ctf_writer *w, const struct wevent *e, bt_message *msg)
{
	bt_event *event = bt_message_event_borrow_event(msg);
	bt_field *payload = bt_event_borrow_payload_field(event);
	bt_field *fld, *el, *ctx;
	uint64_t m = 0;
	size_t i, j;

	if (w->has_emitter) {
		ctx = bt_event_borrow_common_context_field(event);
		bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 0),
						  w->vpid);
		bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 1),
						  w->vtid);
		if (bt_field_string_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 2),
					      w->procname) != BT_FIELD_STRING_SET_VALUE_STATUS_OK) {
			return -ENOMEM;
		}
	}

	for (i = 0; i < e->nr; i++) {
		const struct wfield *f = &w->f[e->first + i];

		fld = bt_field_structure_borrow_member_field_by_index(payload, m++);
		switch (f->type) {
		case W_UINT:
		case W_HEX:
			bt_field_integer_unsigned_set_value(fld, f->v);
			break;
		case W_SINT:
			bt_field_integer_signed_set_value(fld, (int64_t)f->v);
			break;
		case W_TEXT:
			bt_field_integer_unsigned_set_value(fld, strlen(f->s));
			fld = bt_field_structure_borrow_member_field_by_index(payload, m++);
			if (bt_field_string_set_value(fld, f->s) !=
			    BT_FIELD_STRING_SET_VALUE_STATUS_OK) {
				return -ENOMEM;
			}
			break;
		case W_STRING:
			if (bt_field_string_set_value(fld, f->s) !=
			    BT_FIELD_STRING_SET_VALUE_STATUS_OK) {
				return -ENOMEM;
			}
			break;
		case W_HEX_SEQ:
			bt_field_integer_unsigned_set_value(fld, f->n);
			fld = bt_field_structure_borrow_member_field_by_index(payload, m++);
			if (bt_field_array_dynamic_set_length(fld, f->n) !=
			    BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_OK) {
				return -ENOMEM;
			}
			for (j = 0; j < f->n; j++) {
				el = bt_field_array_borrow_element_field_by_index(fld, j);
				bt_field_integer_unsigned_set_value(el, f->seq[j]);
			}
			break;
		}
	}
	return 0;
}

static bt_message_iterator_class_next_method_status iter_next(bt_self_message_iterator *self,
							      bt_message_array_const msgs,
							      uint64_t capacity, uint64_t *count)
{
	struct src_iter *it = bt_self_message_iterator_get_data(self);
	struct ctf_writer *w = it->w;
	uint64_t first = w->nr_ev ? w->sorted[0]->ts : 0;
	uint64_t last = w->nr_ev ? w->sorted[w->nr_ev - 1]->ts : 0;
	const struct wevent *e;
	bt_message *msg;
	uint64_t n = 0;

	while (n < capacity) {
		if (it->next == 0) {
			msg = bt_message_stream_beginning_create(self, w->stream);
		} else if (it->next == 1) {
			msg = bt_message_packet_beginning_create_with_default_clock_snapshot(
				self, w->packet, first);
		} else if (it->next < 2 + w->nr_ev) {
			e = w->sorted[it->next - 2];
			msg = bt_message_event_create_with_packet_and_default_clock_snapshot(
				self, w->classes[e->cls].ec, w->packet, e->ts);
			if (msg && fill_event(w, e, msg)) {
				bt_message_put_ref(msg);
				msg = NULL;
			}
		} else if (it->next == 2 + w->nr_ev) {
			msg = bt_message_packet_end_create_with_default_clock_snapshot(
				self, w->packet, last);
		} else if (it->next == 3 + w->nr_ev) {
			msg = bt_message_stream_end_create(self, w->stream);
		} else {
			break;
		}
		if (!msg) {
			/* The messages of this call not handed over are ours to drop. */
			while (n) {
				bt_message_put_ref(msgs[--n]);
			}
			return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
		}
		msgs[n++] = msg;
		it->next++;
	}
	*count = n;
	if (n) {
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
	}
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
}

/* Time order; events of one time in the order they were added. */
static int by_time(const void *a, const void *b)
{
	const struct wevent *x = *(const struct wevent *const *)a;
	const struct wevent *y = *(const struct wevent *const *)b;

	if (x->ts != y->ts) {
		return x->ts < y->ts ? -1 : 1;
	}
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Our source component class, made once: a component class outlives every graph of it. */
static bt_component_class_source *source_class(void)
{
	static bt_component_class_source *cls;
	bt_message_iterator_class *ic;

	if (cls) {
		return cls;
	}
	ic = bt_message_iterator_class_create(iter_next);
	if (!ic) {
		return NULL;
	}
	bt_message_iterator_class_set_initialize_method(ic, iter_init);
	bt_message_iterator_class_set_finalize_method(ic, iter_fini);
	cls = bt_component_class_source_create("latsnap-events", ic);
	bt_message_iterator_class_put_ref(ic);
	if (cls) {
		bt_component_class_source_set_initialize_method(cls, src_init);
	}
	return cls;
}

/* Build and run: our source -> sink.ctf.fs writing into @dir. */
static int run(struct ctf_writer *w, const char *dir)
{
	const bt_component_class_source *src_cls = source_class();
	const bt_component_class_sink *sink_cls = NULL;
	const bt_component_source *src = NULL;
	const bt_component_sink *sink = NULL;
	const bt_plugin *plugin = NULL;
	bt_value *params = NULL;
	bt_graph *graph = NULL;
	bt_graph_run_status st;
	int ret = -EIO;

	if (!src_cls) {
		ret = -ENOMEM;
		fail(w, "cannot make the source component class");
		goto out;
	}
	/* The system's plugins only, as the reader: we often run as root. */
	if (bt_plugin_find("ctf", BT_FALSE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &plugin) !=
	    BT_PLUGIN_FIND_STATUS_OK) {
		fail(w, "libbabeltrace2 has no 'ctf' plugin (is babeltrace2 installed?)");
		goto out;
	}
	sink_cls = bt_plugin_borrow_sink_component_class_by_name_const(plugin, "fs");
	params = bt_value_map_create();
	graph = bt_graph_create(0);
	if (!sink_cls || !params || !graph) {
		fail(w, "cannot make the graph");
		goto out;
	}
	/* One trace, written in @dir itself, not in a subdirectory named after it. */
	if (bt_value_map_insert_string_entry(params, "path", dir) ||
	    bt_value_map_insert_bool_entry(params, "assume-single-trace", BT_TRUE) ||
	    bt_value_map_insert_bool_entry(params, "quiet", BT_TRUE)) {
		ret = -ENOMEM;
		goto out;
	}
	if (bt_graph_add_source_component_with_initialize_method_data(
		    graph, src_cls, "events", NULL, w, BT_LOGGING_LEVEL_WARNING, &src) !=
	    BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		fail(w, "cannot make the source");
		ret = w->ir_err ? w->ir_err : -EIO;
		goto out;
	}
	if (bt_graph_add_sink_component(graph, sink_cls, "ctf", params, BT_LOGGING_LEVEL_WARNING,
					&sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		fail(w, "cannot make sink.ctf.fs");
		goto out;
	}
	if (bt_graph_connect_ports(graph,
				   bt_component_source_borrow_output_port_by_index_const(src, 0),
				   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
				   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		fail(w, "cannot connect the source to sink.ctf.fs");
		goto out;
	}
	do {
		st = bt_graph_run(graph);
	} while (st == BT_GRAPH_RUN_STATUS_AGAIN);
	if (st != BT_GRAPH_RUN_STATUS_OK) {
		fail(w, "sink.ctf.fs");
		goto out;
	}
	ret = 0;
out:
	bt_graph_put_ref(graph);
	bt_value_put_ref(params);
	bt_plugin_put_ref(plugin);
	return ret;
}

/**
 * ctf_writer_write - write @w's events as a CTF trace in directory @dir (made if missing), their
 * clock class @clock (copied from the trace it goes with), the environment's hostname @hostname
 * (NULL: none). On failure @why (@len bytes) says why.
 *
 * Return: 0, or a negative errno.
 */
int ctf_writer_write(struct ctf_writer *w, const char *dir, const struct ctf_clock *clock,
		     const char *hostname, char *why, size_t len)
{
	size_t i;
	int ret;

	why[0] = '\0';
	if (w->err) {
		snprintf(why, len, "%s", strerror(-w->err));
		return w->err;
	}
	if (!clock->known || !clock->freq) {
		snprintf(why, len, "no clock to write the events on");
		return -EINVAL;
	}
	w->clock = clock;
	w->hostname = hostname;
	w->why = why;
	w->why_len = len;
	w->ir_err = 0;
	w->classes = calloc(w->nr_ev + 1, sizeof(*w->classes));
	w->sorted = calloc(w->nr_ev + 1, sizeof(*w->sorted));
	if (!w->classes || !w->sorted) {
		ret = -ENOMEM;
		snprintf(why, len, "%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < w->nr_ev; i++) {
		w->sorted[i] = &w->ev[i];
	}
	qsort(w->sorted, w->nr_ev, sizeof(*w->sorted), by_time);
	ret = run(w, dir);
out:
	for (i = 0; w->classes && i < w->nr_classes; i++) {
		bt_event_class_put_ref(w->classes[i].ec);
	}
	bt_packet_put_ref(w->packet);
	bt_stream_put_ref(w->stream);
	bt_trace_put_ref(w->trace);
	w->packet = NULL;
	w->stream = NULL;
	w->trace = NULL;
	free(w->classes);
	free(w->sorted);
	w->classes = NULL;
	w->sorted = NULL;
	w->nr_classes = 0;
	w->why = NULL;
	return ret;
}
