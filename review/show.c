// SPDX-License-Identifier: GPL-2.0
/*
 * show.c - `latsnap show [--json] [--before DUR] [--after DUR] [--debug-dir DIR] DIR/<id>`
 *
 * One snapshot for people: each outlier's split and cause, its user and kernel stacks as one
 * story (outermost user frame at the top, down to the kernel function it waited in), who held
 * what it waited for (a stall, record --hang: then its header says STILL BLOCKED or
 * UNFINISHED), who woke it, its wait chain, and a timeline of the trace's events of the threads
 * involved around it. A request (record --request) shows its waits, one by one in time order,
 * and its CPU profile, heaviest stack first. After the outliers, the idle waits (waiting for
 * work, not latency: the summary's "idle" list) that ended in the snapshot's window.
 *
 * The trace is read once with libbabeltrace2 (trace/ctf.c): the statedump events give the
 * mappings and build-ids that symbolize user frames now (review/dwfl-sym.c), every other event
 * of a thread of interest inside an outlier's window goes to that outlier's timeline. Which
 * events those are is not fixed here: whatever latsnap or the application adds to the trace
 * later shows up as long as it carries a vtid context or a tid field.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "classify/frames.h"
#include "classify/rules.h"
#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/options.h"
#include "lib/outlier.h"
#include "lib/text.h"
#include "lib/util.h"
#include "review/dwfl-sym.h"
#include "review/flame.h"
#include "review/html.h"
#include "review/lanes.h"
#include "review/show.h"
#include "review/snapshots.h"

#define BEFORE_NS_DEFAULT (10 * 1000000ULL)
#define AFTER_NS_DEFAULT (5 * 1000000ULL)
/* Beyond this many events an outlier's timeline is cut (and says so). */
#define TIMELINE_MAX 5000
#define FIELDS_TEXT_MAX 200
#define MAX_THREADS 64
/* How long after an outlier's end its unwound stack may come (as the recorder takes it). */
#define UNWIND_SLACK_NS 2000000000ULL
/* A request's wait shows this many user frames at most, its CPU profile this many stacks. */
#define WAIT_USER_FRAMES 8
#define PROFILE_STACKS 10
/* lttng-ust's statedump: the mappings of a process that runs lttng-ust. */
#define STATEDUMP_PROVIDER "lttng_ust_statedump:"

/* The options, in --help's order: getopt_long()'s tables and --help are made from them. */
static const struct ls_option show_options[] = {
	{ "json", 'j', no_argument, 0, NULL, NULL,
	  "the snapshot's summary with timelines and source lines added" },
	{ "html", 'H', required_argument, 0, NULL, "FILE",
	  "write the snapshot as one self-contained HTML page to FILE (- for\n"
	  "stdout): an index of its outliers, each with a timeline of its\n"
	  "threads (on CPU, blocked, runqueue; wakeups as arrows), its stacks,\n"
	  "cause and flags, and the snapshot's flame graph" },
	{ "before", 'B', required_argument, 0, NULL, "DUR",
	  "timeline start before the outlier (default 10ms)" },
	{ "after", 'A', required_argument, 0, NULL, "DUR",
	  "timeline end after the outlier (default 5ms, and the outlier's\n"
	  "own unwound-stack event however late it came)" },
	{ "debug-dir", 'd', required_argument, 0, NULL, "DIR",
	  "look for debug files by build-id in DIR/.build-id first\n"
	  "(then /usr/lib/debug/.build-id)" },
	{ "help", 'h', no_argument, 0, NULL, NULL, "this help" },
};

#define NR_SHOW_OPTIONS (sizeof(show_options) / sizeof(show_options[0]))

static const char show_usage_head[] =
	"Usage: latsnap show [--json | --html FILE] [--before DUR] [--after DUR] [--debug-dir DIR]\n"
	"                    DIR/ID\n"
	"\n"
	"One snapshot for people: for each outlier its split, cause, user and kernel stacks (user\n"
	"above kernel), holder (of what a stalled thread waits for), a request's waits and CPU\n"
	"profile, waker and wait chain, then a\n"
	"timeline of the trace's events of the slow thread, its holder, its waker and the wait\n"
	"chain's threads, from a little before the outlier to its end. User frames are symbolized\n"
	"again from the mappings and build-ids in the trace. Then the idle waits (threads waiting\n"
	"for work: not latency) that ended in the snapshot's window.\n"
	"\n";

static void show_help(void)
{
	fputs(show_usage_head, stdout);
	ls_options_usage(stdout, show_options, NR_SHOW_OPTIONS, 23);
}

/* What symbolizing a user frame again found, for the text and --json. */
struct frame_note {
	const char *symbolized; /* "build-id", "recorded", "python" (named when recorded), or NULL */
	const char *file; /* its source file, or NULL; lives as long as the symbolizer */
	int line;
};

/* One note per frame of a stack, in the frames' order. */
struct frame_notes {
	struct frame_note *v;
	size_t nr;
};

struct interest {
	struct outlier *outlier;
	uint64_t from_ns, to_ns, start_ns;
	int64_t tids[MAX_THREADS];
	size_t nr_tids;
	struct json_object *timeline;
	bool truncated;
	/*
	 * The preload library's latsnap:user_stack event of the outlier: the first of its thread
	 * after its end, within UNWIND_SLACK_NS and before the thread's next outlier (the
	 * recorder's rule). @unwind_seen: there is one; @ips: its addresses (a reference).
	 */
	uint64_t end_ns, next_start_ns;
	int64_t tid;
	bool unwind_seen;
	struct json_object *ips;
	/*
	 * What resymbolize() found of the user stack's frames, of each link's (@links), and of
	 * the holder's user frames (@holder).
	 */
	struct frame_notes user;
	struct frame_notes *links;
	struct frame_notes holder;
};

struct show_opts {
	bool json;
	const char *html;
	uint64_t before, after;
	/* --after was given: the window is the user's, even for the outlier's own stack. */
	bool after_given;
	const char *debug_dir;
	const char *path;
};

struct show_ctx {
	struct dwfl_sym *ds;
	struct interest *in;
	size_t nr;
	int err;
	bool have_trace;
	/*
	 * The outlier's own latsnap:user_stack event joins its timeline even past the default
	 * window: under load the handler can run more than AFTER_NS_DEFAULT after the wait ended.
	 */
	bool own_stack_beyond;
};

static void add_tid(struct interest *in, int64_t tid)
{
	size_t i;

	if (tid <= 0 || in->nr_tids == MAX_THREADS) {
		return;
	}
	for (i = 0; i < in->nr_tids; i++) {
		if (in->tids[i] == tid) {
			return;
		}
	}
	in->tids[in->nr_tids++] = tid;
}

/* The build-id of a statedump event (an array of bytes) to the mapping at @base of @pid. */
static void add_build_id(struct show_ctx *sc, int64_t pid, uint64_t base, struct json_object *arr)
{
	size_t i, n = json_object_array_length(arr);
	uint8_t id[64];

	n = n < sizeof(id) ? n : sizeof(id);
	for (i = 0; i < n; i++) {
		id[i] = (uint8_t)json_object_get_int64(json_object_array_get_idx(arr, i));
	}
	dwfl_sym_add_build_id(sc->ds, pid, base, id, n);
}

/* latsnap:bin_info: what a process had mapped, and the build-ids (struct ls_ev_bin_info). */
static int on_bin_info(const struct lsev *ev, void *ctx)
{
	const struct lsev_bin_info *b = &ev->u.bin;
	struct show_ctx *sc = ctx;
	int ret = 0;

	if (!b->has_pid || !b->has_baddr) {
		goto out;
	}
	if (b->path) {
		ret = dwfl_sym_add_mapping(sc->ds, b->pid, b->baddr, b->memsz, b->path);
	}
	if (!ret && b->build_id && json_object_array_length(b->build_id)) {
		add_build_id(sc, b->pid, b->baddr, b->build_id);
	}
out:
	sc->err = ret ? ret : sc->err;
	return ret;
}

/* lttng-ust's statedump of a process that runs lttng-ust: the process's own mappings. */
static int on_statedump(struct show_ctx *sc, const struct ctf_event *ev)
{
	struct json_object *f = ev->fields, *arr, *path;
	uint64_t pid, base, memsz;
	bool has_pid, has_base;
	int ret = 0;

	pid = ctf_field_u64(f, "pid", &has_pid);
	if (!has_pid) {
		pid = ctf_field_u64(f, "vpid", &has_pid);
	}
	base = ctf_field_u64(f, "baddr", &has_base);
	if (!has_pid || !has_base) {
		goto out;
	}
	if (!strcmp(ev->name, "lttng_ust_statedump:bin_info")) {
		memsz = ctf_field_u64(f, "memsz", NULL);
		if (json_object_object_get_ex(f, "path", &path) &&
		    json_object_is_type(path, json_type_string)) {
			ret = dwfl_sym_add_mapping(sc->ds, (int64_t)pid, base, memsz,
						   json_object_get_string(path));
		}
	} else if (!strcmp(ev->name, "lttng_ust_statedump:build_id") &&
		   json_object_object_get_ex(f, "build_id", &arr) &&
		   json_object_is_type(arr, json_type_array)) {
		add_build_id(sc, (int64_t)pid, base, arr);
	}
out:
	sc->err = ret ? ret : sc->err;
	return ret;
}

/* @ev, at its time, as an entry of the timeline of @in, about its thread @tid. */
static struct json_object *timeline_entry(const struct lsev *ev, const struct interest *in,
					  int64_t tid)
{
	struct json_object *e, *fields = json_object_new_object();
	struct json_object_iterator it = json_object_iter_begin(ev->ev->fields);
	struct json_object_iterator end = json_object_iter_end(ev->ev->fields);
	const struct lsev_thread *th = lsev_thread_of(ev, tid);
	const char *name, *comm = NULL;

	/* The context fields are said once per event: tid and comm; keep the payload. */
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		name = json_object_iter_peek_name(&it);
		if (strcmp(name, "vpid") && strcmp(name, "vtid") && strcmp(name, "procname")) {
			json_object_object_add(fields, name,
					       json_object_get(json_object_iter_peek_value(&it)));
		}
	}
	e = json_object_new_object();
	json_object_object_add(e, "ts_ns", json_object_new_int64((int64_t)ev->ts_ns));
	json_object_object_add(e, "rel_ns",
			       json_object_new_int64((int64_t)(ev->ts_ns - in->start_ns)));
	json_object_object_add(e, "name", json_object_new_string(ev->name));
	json_object_object_add(e, "tid", json_object_new_int64(tid));
	/* The thread's own comm when the payload says it; the procname is its process's. */
	if (th && !th->context) {
		comm = th->comm;
	}
	if (!comm && tid == in->tid) {
		comm = in->outlier->comm;
	}
	json_object_object_add(
		e, "comm",
		json_object_new_string(comm ? comm :
					      ctf_field_str(ev->ev->fields, "procname", "?")));
	json_object_object_add(e, "fields", fields);
	return e;
}

/* @ev into the timeline of each outlier whose window holds it and whose threads it is about. */
static int on_timeline_event(const struct lsev *ev, void *ctx)
{
	struct show_ctx *sc = ctx;
	int64_t tids[LSEV_MAX_THREADS];
	size_t i, k, t, nr_tids;
	struct interest *in;

	nr_tids = lsev_threads(ev, tids, LSEV_MAX_THREADS);
	for (i = 0; i < sc->nr && nr_tids; i++) {
		in = &sc->in[i];
		if (ev->ts_ns < in->from_ns || ev->ts_ns > in->to_ns) {
			continue;
		}
		/* k: which thread of interest it is about, the slow one first. */
		for (k = 0; k < in->nr_tids; k++) {
			for (t = 0; t < nr_tids && tids[t] != in->tids[k]; t++) {
			}
			if (t < nr_tids) {
				break;
			}
		}
		if (k == in->nr_tids) {
			continue;
		}
		if (json_object_array_length(in->timeline) >= TIMELINE_MAX) {
			in->truncated = true;
			continue;
		}
		json_object_array_add(in->timeline, timeline_entry(ev, in, in->tids[k]));
	}
	return 0;
}

/*
 * latsnap:user_stack: the preload library's unwound stack, the outlier's when the summary has
 * none; and an event of the timeline.
 */
static int on_user_stack(const struct lsev *ev, void *ctx)
{
	const struct lsev_user_stack *u = &ev->u.ustack;
	struct show_ctx *sc = ctx;
	struct interest *in;
	size_t i;

	for (i = 0; ev->thread.known && u->ips && i < sc->nr; i++) {
		in = &sc->in[i];
		if (in->unwind_seen || in->tid != ev->thread.tid) {
			continue;
		}
		/* latsnap's own record names its outlier; an older trace's has only its time. */
		if (u->has_end_ns ?
			    u->end_ns != in->end_ns :
			    (ev->ts_ns < in->end_ns || ev->ts_ns - in->end_ns > UNWIND_SLACK_NS ||
			     ev->ts_ns >= in->next_start_ns)) {
			continue;
		}
		in->unwind_seen = true;
		in->ips = json_object_get(u->ips);
		if (sc->own_stack_beyond && ev->ts_ns > in->to_ns &&
		    json_object_array_length(in->timeline) < TIMELINE_MAX) {
			json_object_array_add(in->timeline, timeline_entry(ev, in, in->tid));
		}
	}
	return on_timeline_event(ev, ctx);
}

static const struct lsev_handler show_handlers[] = {
	{ LSEV_NAME_BIN_INFO, on_bin_info },
	{ LSEV_NAME_USER_STACK, on_user_stack },
	{ NULL, on_timeline_event },
};

static int on_event(const struct ctf_event *ev, void *ctx)
{
	if (!strncmp(ev->name, STATEDUMP_PROVIDER, strlen(STATEDUMP_PROVIDER))) {
		return on_statedump(ctx, ev);
	}
	return lsev_dispatch(ev, show_handlers, sizeof(show_handlers) / sizeof(*show_handlers),
			     ctx);
}

/* Timeline events by time: the kernel context was recorded after the events around it. */
static int by_ts(const void *a, const void *b)
{
	int64_t x = json_object_get_int64(
		json_object_object_get(*(struct json_object *const *)a, "ts_ns"));
	int64_t y = json_object_get_int64(
		json_object_object_get(*(struct json_object *const *)b, "ts_ns"));

	return x < y ? -1 : x > y;
}

/* Symbolize again the user frames of @frames (innermost first) of process @pid, into @notes. */
static int resymbolize(struct dwfl_sym *ds, struct outlier_frames *frames,
		       struct frame_notes *notes, int64_t pid)
{
	struct dwfl_sym_result res;
	struct outlier_frame *f;
	size_t i;

	notes->v = calloc(frames->nr ? frames->nr : 1, sizeof(*notes->v));
	if (!notes->v) {
		return -ENOMEM;
	}
	notes->nr = frames->nr;
	for (i = 0; i < frames->nr; i++) {
		f = &frames->v[i];
		if (f->interp) {
			/* A Python frame: its code object, named when it was recorded. */
			notes->v[i].file = f->module;
			notes->v[i].line = (int)f->line;
			notes->v[i].symbolized = "python";
			continue;
		}
		if (!f->module || !strcmp(f->module, "kernel")) {
			continue;
		}
		if (dwfl_sym_lookup(ds, pid, f->addr, i > 0, &res)) {
			notes->v[i].symbolized = "recorded";
			continue;
		}
		f->offset = res.offset;
		if (outlier_set_str(&f->symbol, res.symbol) ||
		    (res.module && outlier_set_str(&f->module, res.module))) {
			return -ENOMEM;
		}
		notes->v[i].file = res.file;
		notes->v[i].line = res.line;
		notes->v[i].symbolized = "build-id";
	}
	return 0;
}

/* Symbolize again the user frames of a request's waits and of its sampled stacks. */
static int resymbolize_request(struct dwfl_sym *ds, struct outlier *o)
{
	struct outlier_frames kernel, user;
	struct frame_notes notes = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < o->nr_waits; i++) {
		err = resymbolize(ds, &o->waits[i]->user_stack.frames, &notes, o->pid);
		free(notes.v);
		notes.v = NULL;
	}
	for (i = 0; !err && i < o->nr_cpu_profile; i++) {
		frames_split_sample(&o->cpu_profile[i].frames, &kernel, &user);
		err = resymbolize(ds, &user, &notes, o->pid);
		free(notes.v);
		notes.v = NULL;
	}
	return err;
}

/*
 * The summary has no unwound stack, the trace has its event (the recorder missed it): use it.
 * Its frames get their symbols from resymbolize().
 */
static int take_unwound(struct outlier *o, struct json_object *ips)
{
	struct outlier_ustack *u = &o->user_stack;
	size_t i, n = json_object_array_length(ips);
	int ret;

	if (u->source == OUTLIER_USTACK_UNWIND) {
		return 0;
	}
	outlier_frames_free(&u->frames);
	*u = (struct outlier_ustack){ .source = OUTLIER_USTACK_UNWIND };
	ret = outlier_frames_alloc(&u->frames, n);
	for (i = 0; !ret && i < n; i++) {
		ret = outlier_frame_set(
			&u->frames.v[i],
			(uint64_t)json_object_get_int64(json_object_array_get_idx(ips, i)), NULL, 0,
			"?");
	}
	if (!ret) {
		ret = outlier_add_flag(o,
				       "unwound-from-trace: the summary had no unwound stack; "
				       "this one is the latsnap:user_stack event the trace holds "
				       "for the outlier");
	}
	return ret;
}

static void print_frame(FILE *out, const struct outlier_frame *f, const struct frame_note *note,
			bool user)
{
	const char *module = f->module ? f->module : "?";
	const char *base = strrchr(module, '/');
	char *demangled = f->symbol ? ls_demangle(f->symbol) : NULL;
	char name[LS_INTERP_NAME_LEN];

	if (f->interp) {
		outlier_interp_name(f, name, sizeof(name));
		fputs("    ", out);
		ls_put_text(out, name);
		fputs("  (python)", out);
	} else if (f->symbol) {
		fputs("    ", out);
		ls_put_text(out, demangled ? demangled : f->symbol);
		fprintf(out, "+0x%" PRIx64, f->offset);
	} else {
		fprintf(out, "    0x%" PRIx64, f->addr);
	}
	if (note && note->file && !f->interp) {
		fprintf(out, "  %s:%d", LS_TEXT(note->file), note->line);
	} else if (f->file && !f->interp) {
		/* The recorder's: a goroutine's frames, from the Go binary's line table. */
		fprintf(out, "  %s:%" PRIu32, LS_TEXT(f->file), f->line);
	}
	if (user && !f->interp) {
		fprintf(out, "  (%s)", LS_TEXT(base ? base + 1 : module));
	}
	fputc('\n', out);
	free(demangled);
}

/*
 * Frames are stored innermost first; a story reads from the outermost down. @notes (NULL: none)
 * says what symbolizing them again found; the @skip innermost ones are left out.
 */
static void print_frames_outer_first(FILE *out, const struct outlier_frames *frames,
				     const struct frame_notes *notes, size_t skip, bool user)
{
	size_t i;

	for (i = frames->nr; i > skip; i--) {
		print_frame(out, &frames->v[i - 1],
			    notes && i - 1 < notes->nr ? &notes->v[i - 1] : NULL, user);
	}
}

static void print_split(FILE *out, const char *label, int64_t part, int64_t whole)
{
	char text[LS_DURATION_BUFSZ];

	ls_format_duration((uint64_t)part, text, sizeof(text));
	fprintf(out, "  %s %s (%.1f%%)", label, text, whole > 0 ? 100.0 * part / whole : 0.0);
}

static void print_rel(FILE *out, int64_t rel)
{
	fprintf(out, "%c%" PRId64 ".%06" PRId64 " ms", rel < 0 ? '-' : '+',
		(rel < 0 ? -rel : rel) / 1000000, (rel < 0 ? -rel : rel) % 1000000);
}

static bool is_address_field(const char *name)
{
	size_t len = strlen(name);

	return !strcmp(name, "ips") || !strcmp(name, "ip") || !strcmp(name, "addr") ||
	       !strcmp(name, "baddr") || (len > 5 && !strcmp(name + len - 5, "_addr")) ||
	       (len > 3 && !strcmp(name + len - 3, "_ip"));
}

static struct json_object *hex_of(struct json_object *v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, (uint64_t)json_object_get_int64(v));
	return json_object_new_string(buf);
}

/* For people: a copy of an event's fields with the addresses (ips, baddr...) in hex. */
static struct json_object *fields_for_people(struct json_object *fields)
{
	struct json_object *copy = json_object_new_object(), *v, *arr;
	struct json_object_iterator it = json_object_iter_begin(fields);
	struct json_object_iterator end = json_object_iter_end(fields);
	const char *name;
	size_t i, n;

	for (; copy && !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		name = json_object_iter_peek_name(&it);
		v = json_object_iter_peek_value(&it);
		if (is_address_field(name) && json_object_is_type(v, json_type_int)) {
			json_object_object_add(copy, name, hex_of(v));
		} else if (is_address_field(name) && json_object_is_type(v, json_type_array)) {
			n = json_object_array_length(v);
			arr = json_object_new_array_ext((int)n);
			for (i = 0; arr && i < n; i++) {
				json_object_array_add(arr, hex_of(json_object_array_get_idx(v, i)));
			}
			json_object_object_add(copy, name, arr);
		} else {
			json_object_object_add(copy, name, json_object_get(v));
		}
	}
	return copy;
}

static void print_timeline(FILE *out, const struct interest *in)
{
	size_t i, n = json_object_array_length(in->timeline), k;
	struct json_object *e, *fields;
	char cut[FIELDS_TEXT_MAX + 1];
	const char *text;

	fprintf(out, "  timeline, threads");
	for (k = 0; k < in->nr_tids; k++) {
		fprintf(out, " %" PRId64, in->tids[k]);
	}
	fprintf(out, ", from ");
	print_rel(out, (int64_t)(in->from_ns - in->start_ns));
	fprintf(out, " to ");
	print_rel(out, (int64_t)(in->to_ns - in->start_ns));
	fprintf(out, " (0 = the outlier's start, ");
	print_rel(out, (int64_t)in->outlier->duration_ns);
	fprintf(out, " its end):\n");
	if (!n) {
		fprintf(out, "    (no event of these threads in the trace then)\n");
	}
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(in->timeline, i);
		fputs("    ", out);
		print_rel(out, (int64_t)ctf_field_u64(e, "rel_ns", NULL));
		fields = fields_for_people(json_object_object_get(e, "fields"));
		text = json_object_to_json_string_ext(
			fields, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		/* JSON leaves bytes >= 0x80 as they are: a C1 control, broken UTF-8. */
		snprintf(cut, sizeof(cut), "%s", text ? text : "");
		fprintf(out, "  %s[%" PRId64 "]  %s  %s%s\n",
			LS_TEXT(ctf_field_str(e, "comm", "?")),
			(int64_t)ctf_field_u64(e, "tid", NULL),
			LS_TEXT(ctf_field_str(e, "name", "?")), LS_TEXT(cut),
			text && strlen(text) > FIELDS_TEXT_MAX ? "..." : "");
		json_object_put(fields);
	}
	if (in->truncated) {
		fprintf(out, "    ... cut at %d events\n", TIMELINE_MAX);
	}
}

/* The user stack and then the kernel's: one story, from the outermost user frame down. */
static void print_stacks(FILE *out, const struct interest *in)
{
	const struct outlier *o = in->outlier;
	const struct outlier_kstack *st;
	char text[LS_DURATION_BUFSZ];
	size_t i, n = o->nr_kernel_stacks;

	fprintf(out, "  stack, outermost first: user (%s)\n",
		outlier_ustack_source_name(o->user_stack.source));
	if (!o->user_stack.frames.nr) {
		fprintf(out, "    (no user frames)\n");
	}
	print_frames_outer_first(out, &o->user_stack.frames, &in->user, 0, true);
	if (!n) {
		fprintf(out, "  -- kernel: no stack (it did not wait in the kernel long enough)\n");
	}
	for (i = 0; i < n; i++) {
		st = &o->kernel_stacks[i];
		ls_format_duration(st->weight_ns, text, sizeof(text));
		fprintf(out, "  -- kernel%s, waited %s (%.1f%%) in:\n",
			n > 1 ? (i == 0 ? " (1st way)" : " (another way)") : "", text,
			o->duration_ns ? 100.0 * (double)st->weight_ns / (double)o->duration_ns :
					 0.0);
		print_frames_outer_first(out, &st->frames, NULL, snapshots_kernel_skip(&st->frames),
					 false);
	}
}

/* Who woke it, and who held it up: each link's span relative to the outlier, and its split. */
static void print_waker_and_chain(FILE *out, const struct interest *in)
{
	const struct outlier *o = in->outlier;
	const struct outlier_waker *w = o->waker;
	const struct outlier_link *l;
	int64_t span;
	size_t i;

	if (w) {
		if (w->tid) {
			fprintf(out, "  woken by %s[pid %d tid %d], outermost first:\n",
				LS_TEXT(w->comm ? w->comm : "?"), w->pid, w->tid);
		} else {
			fprintf(out, "  woken by %s, outermost first:\n",
				LS_TEXT(w->comm ? w->comm : "?"));
		}
		print_frames_outer_first(out, &w->frames, NULL, snapshots_kernel_skip(&w->frames),
					 false);
	}
	if (o->nr_links) {
		fprintf(out, "  wait chain, nearest first:\n");
	}
	for (i = 0; i < o->nr_links; i++) {
		l = &o->wait_chain[i];
		fprintf(out, "  %u. %s[pid %d tid %d] from ", l->depth,
			LS_TEXT(l->comm ? l->comm : "?"), l->pid, l->tid);
		print_rel(out, (int64_t)(l->from_ns - o->start_ns));
		fprintf(out, " to ");
		print_rel(out, (int64_t)(l->to_ns - o->start_ns));
		fprintf(out, "%s%s\n", l->syscall ? ", in " : "", LS_TEXT(l->syscall));
		span = (int64_t)(l->to_ns - l->from_ns);
		print_split(out, "  on-cpu", (int64_t)l->on_cpu_ns, span);
		print_split(out, "blocked", (int64_t)l->blocked_ns, span);
		print_split(out, "runqueue", (int64_t)l->runqueue_ns, span);
		fputc('\n', out);
		print_frames_outer_first(out, &l->frames, in->links ? &in->links[i] : NULL, 0,
					 true);
	}
}

/*
 * A wait reported while it still waited (record --hang): what the header says of it first, since
 * its duration and end are then "so far".
 */
static void print_stall_state(FILE *out, const struct outlier *o)
{
	char text[LS_DURATION_BUFSZ];

	ls_format_duration(o->duration_ns, text, sizeof(text));
	switch (o->state) {
	case OUTLIER_STILL_BLOCKED:
		fprintf(out, "STILL BLOCKED (reported after %s while waiting)\n", text);
		break;
	case OUTLIER_UNFINISHED:
		fprintf(out, "UNFINISHED (the run ended while it waited, %s so far)\n", text);
		break;
	case OUTLIER_ENDED:
		break;
	}
}

/* Who holds what it waits for: the thread, what it holds, its state, its user then kernel stack. */
static void print_holder(FILE *out, const struct interest *in)
{
	const struct outlier_holder *h = in->outlier->holder;

	if (!h) {
		return;
	}
	fprintf(out, "  held by %s[pid %" PRId32 " tid %" PRId32 "]",
		LS_TEXT(h->comm ? h->comm : "?"), h->pid, h->tid);
	if (h->what) {
		fprintf(out, ", what: %s", LS_TEXT(h->what));
	}
	if (h->state) {
		fprintf(out, ", state: %s", LS_TEXT(h->state));
	}
	fputc('\n', out);
	fprintf(out, "  -- holder's user stack, outermost first:\n");
	if (!h->frames.nr) {
		fprintf(out, "    (no user frames)\n");
	}
	print_frames_outer_first(out, &h->frames, &in->holder, 0, true);
	if (h->kernel_frames.nr) {
		fprintf(out, "  -- holder's kernel stack, outermost first:\n");
		print_frames_outer_first(out, &h->kernel_frames, NULL,
					 snapshots_kernel_skip(&h->kernel_frames), false);
	}
}

/* A frame's name for a one-line stack: its symbol, demangled, or its address. */
static void print_frame_name(FILE *out, const struct outlier_frame *f)
{
	char *demangled = f->symbol && !f->interp ? ls_demangle(f->symbol) : NULL;
	char name[LS_INTERP_NAME_LEN];

	if (f->interp) {
		outlier_interp_name(f, name, sizeof(name));
		ls_put_text(out, name);
	} else if (f->symbol) {
		ls_put_text(out, demangled ? demangled : f->symbol);
	} else {
		fprintf(out, "0x%" PRIx64, f->addr);
	}
	free(demangled);
}

/* The innermost frame a wait waited in: of its heaviest kernel stack, the glue left out. */
static const struct outlier_frame *innermost_kernel(const struct outlier *w)
{
	const struct outlier_kstack *st = NULL;
	size_t i;

	for (i = 0; i < w->nr_kernel_stacks; i++) {
		if (w->kernel_stacks[i].frames.nr &&
		    (!st || w->kernel_stacks[i].weight_ns > st->weight_ns)) {
			st = &w->kernel_stacks[i];
		}
	}
	return st ? &st->frames.v[snapshots_kernel_skip(&st->frames)] : NULL;
}

/* The order of a request's waits: by start, then as recorded. */
static int by_start(const void *a, const void *b)
{
	const struct outlier *x = *(const struct outlier *const *)a;
	const struct outlier *y = *(const struct outlier *const *)b;

	if (x->start_ns != y->start_ns) {
		return x->start_ns < y->start_ns ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

/*
 * A request's waits in time order, each on a line (its offset from the request's start, its
 * syscall, duration and cause), then where it waited (the innermost kernel frame) and what asked
 * for it (the user frames, innermost first).
 */
static void print_request_waits(FILE *out, const struct outlier *o)
{
	const struct outlier **waits;
	const struct outlier_frame *kf;
	const struct outlier *w;
	struct rules_match m;
	char text[LS_DURATION_BUFSZ];
	size_t i, j;

	if (!o->nr_waits) {
		fprintf(out, "  waits inside it: none recorded\n");
		return;
	}
	waits = malloc(o->nr_waits * sizeof(*waits));
	if (!waits) {
		return;
	}
	memcpy(waits, o->waits, o->nr_waits * sizeof(*waits));
	ls_sort(waits, o->nr_waits, sizeof(*waits), by_start);
	fprintf(out, "  waits inside it, in time order (%zu):\n", o->nr_waits);
	for (i = 0; i < o->nr_waits; i++) {
		w = waits[i];
		ls_format_duration(w->duration_ns, text, sizeof(text));
		if (!w->cause || !*w->cause) {
			/* A summary without the waits' causes: the built-in rules name them. */
			rules_classify(rules_builtin(), w, &m);
		}
		fputs("    ", out);
		print_rel(out, (int64_t)(w->start_ns - o->start_ns));
		fprintf(out, "  %s, %s: %s\n", LS_TEXT(w->syscall ? w->syscall : "off-cpu"), text,
			LS_TEXT(w->cause && *w->cause ? w->cause : m.cause));
		kf = innermost_kernel(w);
		if (kf) {
			fputs("        in ", out);
			print_frame_name(out, kf);
			fputc('\n', out);
		}
		if (w->user_stack.frames.nr) {
			fputs("        user: ", out);
			for (j = 0; j < w->user_stack.frames.nr && j < WAIT_USER_FRAMES; j++) {
				fputs(j ? " < " : "", out);
				print_frame_name(out, &w->user_stack.frames.v[j]);
			}
			fputs(j < w->user_stack.frames.nr ? " < ...\n" : "\n", out);
		}
	}
	free(waits);
}

/* The order of a request's sampled stacks: heaviest first, then as recorded. */
static int by_weight(const void *a, const void *b)
{
	const struct outlier_kstack *x = *(const struct outlier_kstack *const *)a;
	const struct outlier_kstack *y = *(const struct outlier_kstack *const *)b;

	if (x->weight_ns != y->weight_ns) {
		return x->weight_ns > y->weight_ns ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

/*
 * A request's CPU profile: its sampled stacks, heaviest first, each with its share of the
 * sampled time, as a story from the outermost user frame down to the innermost kernel frame.
 */
static void print_request_profile(FILE *out, const struct outlier *o)
{
	const struct outlier_kstack **st;
	struct outlier_frames kernel, user;
	char text[LS_DURATION_BUFSZ];
	uint64_t total = 0, rest = 0;
	size_t i;

	if (!o->nr_cpu_profile) {
		fprintf(out, "  CPU profile: no samples\n");
		return;
	}
	st = malloc(o->nr_cpu_profile * sizeof(*st));
	if (!st) {
		return;
	}
	for (i = 0; i < o->nr_cpu_profile; i++) {
		st[i] = &o->cpu_profile[i];
		total = total + st[i]->weight_ns < total ? UINT64_MAX : total + st[i]->weight_ns;
	}
	ls_sort(st, o->nr_cpu_profile, sizeof(*st), by_weight);
	ls_format_duration(total, text, sizeof(text));
	fprintf(out, "  CPU profile, %s sampled in %zu stack%s, heaviest first:\n", text,
		o->nr_cpu_profile, o->nr_cpu_profile == 1 ? "" : "s");
	for (i = 0; i < o->nr_cpu_profile; i++) {
		if (i >= PROFILE_STACKS) {
			rest += st[i]->weight_ns;
			continue;
		}
		ls_format_duration(st[i]->weight_ns, text, sizeof(text));
		fprintf(out, "  -- %.1f%% (%s), outermost first:\n",
			total ? 100.0 * (double)st[i]->weight_ns / (double)total : 0.0, text);
		frames_split_sample(&st[i]->frames, &kernel, &user);
		print_frames_outer_first(out, &user, NULL, 0, true);
		if (kernel.nr) {
			fprintf(out, "    -- kernel:\n");
			print_frames_outer_first(out, &kernel, NULL, snapshots_kernel_skip(&kernel),
						 false);
		}
	}
	if (i > PROFILE_STACKS) {
		ls_format_duration(rest, text, sizeof(text));
		fprintf(out, "  -- and %zu more stacks, %.1f%% (%s)\n", i - PROFILE_STACKS,
			total ? 100.0 * (double)rest / (double)total : 0.0, text);
	}
	free(st);
}

static void print_outlier(FILE *out, const struct interest *in, bool have_trace)
{
	const struct outlier *o = in->outlier;
	size_t i;

	print_stall_state(out, o);
	outlier_print_head(out, o);
	if (o->kind != OUTLIER_REQUEST || o->nr_kernel_stacks || o->user_stack.frames.nr) {
		print_stacks(out, in);
	}
	if (o->kind == OUTLIER_REQUEST) {
		print_request_waits(out, o);
		print_request_profile(out, o);
	}
	print_holder(out, in);
	print_waker_and_chain(out, in);
	for (i = 0; i < o->nr_flags; i++) {
		fputs("  ! ", out);
		ls_put_text(out, o->flags[i]);
		fputc('\n', out);
	}
	if (have_trace) {
		print_timeline(out, in);
	}
	fputc('\n', out);
}

static int parse_dur(const char *opt, const char *text, uint64_t *ns)
{
	if (ls_parse_duration(text, ns)) {
		ls_err("show: %s: '%s' is not a duration (e.g. 250us, 20ms, 1.5s)", opt, text);
		return -EINVAL;
	}
	return 0;
}

/* The options into @opts: SNAPSHOTS_GO_ON, or the exit status to stop with. */
static int parse_options(int argc, char **argv, struct show_opts *opts)
{
	struct option longopts[NR_SHOW_OPTIONS + 1];
	char shortopts[sizeof("+:") + 2 * NR_SHOW_OPTIONS];
	int id;

	optind = 0;
	opterr = 0;
	ls_options_getopt(show_options, NR_SHOW_OPTIONS, "+:", longopts, shortopts);
	while ((id = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (id) {
		case 'j':
			opts->json = true;
			break;
		case 'H':
			opts->html = optarg;
			break;
		case 'B':
		case 'A':
			if (parse_dur(id == 'B' ? "--before" : "--after", optarg,
				      id == 'B' ? &opts->before : &opts->after)) {
				return 2;
			}
			opts->after_given |= id == 'A';
			break;
		case 'd':
			opts->debug_dir = optarg;
			break;
		case 'h':
			show_help();
			return 0;
		default:
			snapshots_option_error("show", id, optopt, argv, optind);
			return 2;
		}
	}
	if (opts->json && opts->html) {
		ls_err("show: --json and --html: one or the other (see latsnap show --help)");
		return 2;
	}
	if (optind != argc - 1) {
		ls_err("show: %s (see latsnap show --help)",
		       optind == argc ? "DIR/ID missing" : "one DIR/ID only");
		return 2;
	}
	opts->path = argv[optind];
	return SNAPSHOTS_GO_ON;
}

/* The snapshot at @path into @snap: 0, or 1 after saying why it cannot be shown. */
static int load_snapshot(const char *path, struct snapshot *snap)
{
	char hostname[256] = "";

	if (access(path, F_OK)) {
		ls_err("show: %s: %s", path, strerror(errno));
		return 1;
	}
	if (snapshot_load(path, snap)) {
		ls_err("show: %s: %s", path, strerror(ENOMEM));
		return 1;
	}
	if (snap->state == SNAPSHOT_INCOMPLETE && !snap->relay &&
	    (!snap->trace || access(snap->trace, F_OK))) {
		/* Neither summary.json nor trace/: an output directory, or nothing of ours. */
		ls_err("show: %s: not a snapshot (no summary.json, no trace/ in it): show takes "
		       "one snapshot, DIR/ID",
		       snap->path);
		return 1;
	}
	if (snap->state != SNAPSHOT_COMPLETE) {
		ls_err("show: %s", snap->why);
		return 1;
	}
	/* The outliers are shown all the same: a warning, not a corrupt summary. */
	if (snap->summary->outliers_why) {
		ls_err("show: warning: %s", snap->summary->outliers_why);
	}
	if (snap->summary->idle_why) {
		ls_err("show: warning: %s", snap->summary->idle_why);
	}
	if (!gethostname(hostname, sizeof(hostname) - 1) && strcmp(snap->summary->host, hostname)) {
		ls_err("show: warning: %s%s: recorded on host %s, this is %s: user "
		       "frames are symbolized only from files whose build-id is the recorded one",
		       snap->path, snap->relay ? "" : "/summary.json", snap->summary->host,
		       hostname);
	}
	return 0;
}

/* One interest per outlier of @s: its window, its threads (its own first), no events yet. */
static int init_interests(struct show_ctx *sc, const struct summary *s,
			  const struct show_opts *opts)
{
	const struct outlier *o;
	struct interest *in;
	uint64_t start, end;
	size_t i, j;

	sc->ds = dwfl_sym_new(opts->debug_dir);
	sc->in = calloc(s->nr_outliers ? s->nr_outliers : 1, sizeof(*sc->in));
	if (!sc->ds || !sc->in) {
		return -ENOMEM;
	}
	sc->nr = s->nr_outliers;
	sc->own_stack_beyond = !opts->after_given;
	for (i = 0; i < sc->nr; i++) {
		o = s->outliers[i];
		in = &sc->in[i];
		start = o->start_ns;
		end = o->end_ns;
		in->outlier = s->outliers[i];
		in->start_ns = start;
		in->from_ns = start > opts->before ? start - opts->before : 0;
		in->to_ns = end + opts->after < end ? UINT64_MAX : end + opts->after;
		in->end_ns = end;
		in->tid = o->tid;
		in->next_start_ns = UINT64_MAX;
		for (j = 0; j < sc->nr; j++) {
			if (s->outliers[j]->tid == o->tid && s->outliers[j]->start_ns > start &&
			    s->outliers[j]->start_ns < in->next_start_ns) {
				in->next_start_ns = s->outliers[j]->start_ns;
			}
		}
		in->timeline = json_object_new_array();
		if (!in->timeline) {
			return -ENOMEM;
		}
		add_tid(in, o->tid);
		if (o->waker) {
			add_tid(in, o->waker->tid);
		}
		for (j = 0; j < o->nr_links; j++) {
			add_tid(in, o->wait_chain[j].tid);
		}
		if (o->holder) {
			add_tid(in, o->holder->tid);
		}
	}
	return 0;
}

/* The trace of @snap, read once: 0, or 1 when it cannot be (the summary is still shown). */
static int read_trace(struct show_ctx *sc, const struct snapshot *snap)
{
	size_t i;
	int err;

	/* ctf_read() prints "latsnap: ctf: DIR: why" itself. */
	err = ctf_read(snap->trace, NULL, on_event, sc);
	if (err) {
		if (err == sc->err) {
			ls_err("show: %s: %s", snap->trace, strerror(-err));
		}
		return 1;
	}
	sc->have_trace = true;
	for (i = 0; i < sc->nr; i++) {
		json_object_array_sort(sc->in[i].timeline, by_ts);
	}
	return 0;
}

/*
 * What the trace says of each outlier: its unwound stack when the summary has none, its user
 * frames symbolized again, and what the trace lacks (then *@status is 1: the trace is not the
 * one the recorder read). Return: 0 or -ENOMEM.
 */
static int settle_outliers(struct show_ctx *sc, const struct snapshot *snap, int *status)
{
	struct interest *in;
	struct outlier *o;
	size_t i, j;
	int err = 0;

	for (i = 0; i < sc->nr && !err; i++) {
		in = &sc->in[i];
		o = in->outlier;
		if (in->ips) {
			err = take_unwound(o, in->ips);
		}
		err = err ?: resymbolize(sc->ds, &o->user_stack.frames, &in->user, o->pid);
		in->links = err ? NULL : calloc(o->nr_links ? o->nr_links : 1, sizeof(*in->links));
		err = err ?: in->links ? 0 : -ENOMEM;
		for (j = 0; !err && j < o->nr_links; j++) {
			err = resymbolize(sc->ds, &o->wait_chain[j].frames, &in->links[j],
					  o->wait_chain[j].pid);
		}
		if (!err && o->holder) {
			err = resymbolize(sc->ds, &o->holder->frames, &in->holder, o->holder->pid);
		}
		if (!err && o->kind == OUTLIER_REQUEST) {
			err = resymbolize_request(sc->ds, o);
		}
		/*
		 * The recorder found the unwound stack's event in this very trace: without it the
		 * trace is not the one it read (a stream file lost or replaced since). A stack that
		 * reached latsnap only through the kernel (a process not yet registered with the
		 * session daemon) has no event to look for.
		 */
		if (!err && sc->have_trace && !in->unwind_seen &&
		    o->user_stack.source == OUTLIER_USTACK_UNWIND && o->user_stack.in_trace) {
			ls_err("show: %s: the latsnap:user_stack event of tid %" PRId32
			       " that the summary's stack came from is not in the trace "
			       "(a stream missing?)",
			       snap->trace, o->tid);
			*status = 1;
		}
		if (!err && sc->have_trace && !dwfl_sym_nr_mappings(sc->ds, o->pid)) {
			err = outlier_add_flag(o, "no-statedump: the trace holds no mappings of "
						  "this process: user frames as recorded");
		}
	}
	return err;
}

/* Idle entries by total, largest first; equal ones in the summary's order. */
static int by_idle_total(const void *a, const void *b)
{
	const struct summary_idle *x = *(const struct summary_idle *const *)a;
	const struct summary_idle *y = *(const struct summary_idle *const *)b;

	if (x->total_ns != y->total_ns) {
		return x->total_ns > y->total_ns ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

/* The summary's idle waits, one line per thread and place; nothing if there are none. */
static void print_idle(FILE *out, const struct summary *s)
{
	const struct summary_idle **v;
	char text[LS_DURATION_BUFSZ], *site;
	uint64_t count = 0, total = 0;
	size_t i;

	if (!s->nr_idle) {
		return;
	}
	v = malloc(s->nr_idle * sizeof(*v));
	if (!v) {
		return;
	}
	for (i = 0; i < s->nr_idle; i++) {
		v[i] = &s->idle[i];
		count = count + v[i]->count < count ? UINT64_MAX : count + v[i]->count;
		total = total + v[i]->total_ns < total ? UINT64_MAX : total + v[i]->total_ns;
	}
	ls_sort(v, s->nr_idle, sizeof(*v), by_idle_total);
	ls_format_duration(total, text, sizeof(text));
	fprintf(out,
		"Idle waits in this snapshot's window (waiting for work; not latency): %" PRIu64
		" wait%s, %s\n",
		count, count == 1 ? "" : "s", text);
	for (i = 0; i < s->nr_idle; i++) {
		ls_format_duration(v[i]->total_ns, text, sizeof(text));
		fputs("  ", out);
		ls_put_text(out, v[i]->comm);
		fprintf(out,
			"[pid %" PRId32 " tid %" PRId32 "] %" PRIu64 " wait%s, %s: ", v[i]->pid,
			v[i]->tid, v[i]->count, v[i]->count == 1 ? "" : "s", text);
		site = ls_demangle_text(v[i]->site);
		ls_put_text(out, site ? site : v[i]->site);
		free(site);
		fputc('\n', out);
	}
	fputc('\n', out);
	free(v);
}

static void print_text(const struct snapshot *snap, const struct show_ctx *sc)
{
	const struct summary *s = snap->summary;
	size_t i;

	/* A relay's snapshots come from other hosts: their names are theirs too. */
	printf("snapshot %s on %s, created %s: %zu outlier%s, %" PRIu64 " skipped\n",
	       LS_TEXT(snap->id), LS_TEXT(s->host), LS_TEXT(s->created ? s->created : "?"),
	       s->nr_outliers, s->nr_outliers == 1 ? "" : "s", s->skipped);
	for (i = 0; i < s->nr_flags; i++) {
		printf("! %s\n", LS_TEXT(s->flags[i]));
	}
	putchar('\n');
	for (i = 0; i < sc->nr; i++) {
		print_outlier(stdout, &sc->in[i], sc->have_trace);
	}
	print_idle(stdout, s);
}

/* What symbolizing the frames of @frames (a --json array) again found, added to each. */
static void add_notes(struct json_object *frames, const struct frame_notes *notes)
{
	struct json_object *f;
	size_t i;

	for (i = 0; i < notes->nr && i < json_object_array_length(frames); i++) {
		f = json_object_array_get_idx(frames, i);
		if (notes->v[i].file) {
			json_object_object_add(f, "file", json_object_new_string(notes->v[i].file));
			json_object_object_add(f, "line", json_object_new_int(notes->v[i].line));
		}
		if (notes->v[i].symbolized) {
			json_object_object_add(f, "symbolized",
					       json_object_new_string(notes->v[i].symbolized));
		}
	}
}

/* Outlier @i as --json has it: its OUTLIER form, source lines and timeline added. */
static struct json_object *outlier_json(const struct snapshot *snap, const struct show_ctx *sc,
					size_t i)
{
	struct json_object *obj = summary_outlier_to_json(snap->summary, i), *chain;
	const struct interest *in = &sc->in[i];
	size_t j;

	if (!obj) {
		return NULL;
	}
	add_notes(json_object_object_get(json_object_object_get(obj, "user_stack"), "frames"),
		  &in->user);
	chain = json_object_object_get(obj, "wait_chain");
	for (j = 0; in->links && j < in->outlier->nr_links; j++) {
		add_notes(json_object_object_get(json_object_array_get_idx(chain, j), "frames"),
			  &in->links[j]);
	}
	add_notes(json_object_object_get(json_object_object_get(obj, "holder"), "frames"),
		  &in->holder);
	json_object_object_add(obj, "timeline",
			       sc->have_trace ? json_object_get(in->timeline) : NULL);
	if (in->truncated) {
		json_object_object_add(obj, "timeline_truncated", json_object_new_boolean(1));
	}
	return obj;
}

/* The threads an outlier's HTML timeline draws, as init_interests() chose them. */
static int add_lanes(struct json_object *obj, const struct interest *in)
{
	struct lanes_thread threads[MAX_THREADS];
	const struct outlier *o = in->outlier;
	char roles[MAX_THREADS][24];
	size_t k, j;

	for (k = 0; k < in->nr_tids; k++) {
		threads[k] = (struct lanes_thread){ .tid = in->tids[k], .role = "" };
		if (in->tids[k] == o->tid) {
			threads[k].role = "slow thread";
			threads[k].comm = o->comm;
		} else if (o->holder && in->tids[k] == o->holder->tid) {
			threads[k].role = "holder";
			threads[k].comm = o->holder->comm;
		} else if (o->waker && in->tids[k] == o->waker->tid) {
			threads[k].role = "waker";
			threads[k].comm = o->waker->comm;
		}
		for (j = 0; !*threads[k].role && j < o->nr_links; j++) {
			if (o->wait_chain[j].tid == in->tids[k]) {
				snprintf(roles[k], sizeof(roles[k]), "wait chain %d",
					 o->wait_chain[j].depth);
				threads[k].role = roles[k];
				threads[k].comm = o->wait_chain[j].comm;
			}
		}
	}
	return lanes_add(obj, threads, in->nr_tids, in->from_ns, in->to_ns);
}

/*
 * The summary with each outlier as outlier_json() has it; for a page (@page), its timeline
 * drawn as lanes instead of listed (a page of a thousand outliers stays small).
 */
static struct json_object *snapshot_json(const struct snapshot *snap, const struct show_ctx *sc,
					 bool page)
{
	struct json_object *outliers = json_object_new_array_ext((int)sc->nr), *o, *obj = NULL;
	size_t i;

	for (i = 0; outliers && i < sc->nr; i++) {
		o = outlier_json(snap, sc, i);
		if (o && page && add_lanes(o, &sc->in[i])) {
			json_object_put(o);
			o = NULL;
		} else if (o && page) {
			json_object_object_del(o, "timeline");
		}
		if (!o || json_object_array_add(outliers, o)) {
			json_object_put(o);
			goto out;
		}
	}
	obj = outliers ? summary_to_json(snap->summary, outliers) : NULL;
out:
	json_object_put(outliers);
	return obj;
}

static int print_json(const struct snapshot *snap, const struct show_ctx *sc)
{
	struct json_object *obj = snapshot_json(snap, sc, false);

	if (!obj) {
		return -ENOMEM;
	}
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
	return 0;
}

/* The snapshot's flame graph as SVG markup for a page (no XML declaration), or NULL. */
static char *flame_svg(const struct snapshot *snap)
{
	struct flame f = { 0 };
	char *buf = NULL, *svg;
	size_t len = 0;
	FILE *mem;
	int err;

	err = flame_add_summary(&f, snap->summary);
	if (err || !f.nr) {
		goto out;
	}
	flame_finish(&f);
	mem = open_memstream(&buf, &len);
	if (!mem) {
		goto out;
	}
	err = flame_write_svg(mem, &f, "where this snapshot's outliers waited");
	if (fclose(mem) || err) {
		free(buf);
		buf = NULL;
	}
out:
	flame_free(&f);
	svg = buf ? strstr(buf, "<svg") : NULL;
	if (svg) {
		memmove(buf, svg, strlen(svg) + 1);
	} else {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* The snapshot as one HTML page in @path: 0, or 1 after saying why not. */
static int write_html(const struct snapshot *snap, const struct show_ctx *sc, const char *path)
{
	struct json_object *obj = snapshot_json(snap, sc, true);
	char title[512], *svg = flame_svg(snap);
	int err = -ENOMEM;

	if (obj) {
		json_object_object_add(obj, "page", json_object_new_string("snapshot"));
		snprintf(title, sizeof(title), "latsnap: snapshot %s (%zu outlier%s)", snap->id,
			 sc->nr, sc->nr == 1 ? "" : "s");
		err = html_write_file(path, title, obj, svg);
	}
	json_object_put(obj);
	free(svg);
	if (err) {
		ls_err("show: %s: %s", path, strerror(-err));
		return 1;
	}
	return 0;
}

static void interests_free(struct show_ctx *sc)
{
	size_t i, j;

	for (i = 0; i < sc->nr; i++) {
		json_object_put(sc->in[i].timeline);
		json_object_put(sc->in[i].ips);
		free(sc->in[i].user.v);
		free(sc->in[i].holder.v);
		for (j = 0; sc->in[i].links && j < sc->in[i].outlier->nr_links; j++) {
			free(sc->in[i].links[j].v);
		}
		free(sc->in[i].links);
	}
	free(sc->in);
	dwfl_sym_free(sc->ds);
}

/* What show does once its options are known: the exit status. */
static int show_run(const struct show_opts *opts)
{
	struct snapshot snap = { 0 };
	struct show_ctx sc = { 0 };
	int ret, err;

	ret = load_snapshot(opts->path, &snap);
	if (ret) {
		goto out;
	}
	err = init_interests(&sc, snap.summary, opts);
	if (err) {
		goto fail;
	}
	ret = read_trace(&sc, &snap);
	err = settle_outliers(&sc, &snap, &ret);
	if (err) {
		goto fail;
	}
	if (opts->html) {
		ret = write_html(&snap, &sc, opts->html) ?: ret;
		goto out;
	}
	if (opts->json) {
		err = print_json(&snap, &sc);
		if (err) {
			goto fail;
		}
	} else {
		print_text(&snap, &sc);
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ls_err("show: writing to stdout: %s", strerror(errno));
		ret = 1;
	}
	goto out;
fail:
	ls_err("show: %s", strerror(-err));
	ret = 1;
out:
	interests_free(&sc);
	snapshot_free(&snap);
	return ret;
}

/**
 * show_main() - `latsnap show`
 * @argc: argument count, the command name included
 * @argv: "show", options, DIR/ID
 *
 * Return: the exit status: 0; 1 when the snapshot is incomplete or corrupt, its trace cannot be
 * read (the summary is still shown), or stdout cannot be written; 2 on a usage error.
 */
int show_main(int argc, char **argv)
{
	struct show_opts opts = { .before = BEFORE_NS_DEFAULT, .after = AFTER_NS_DEFAULT };
	int ret;

	ret = parse_options(argc, argv, &opts);
	if (ret != SNAPSHOTS_GO_ON) {
		return ret;
	}
	return show_run(&opts);
}

/**
 * show_write_page() - `latsnap show --html HTML_PATH SNAPSHOT_PATH`, for report --html
 * @snapshot_path: DIR/ID
 * @html_path: the page to write
 * @debug_dir: where to look for debug files first, or NULL
 *
 * Return: the exit status show would have (what failed is said on stderr).
 */
int show_write_page(const char *snapshot_path, const char *html_path, const char *debug_dir)
{
	struct show_opts opts = { .before = BEFORE_NS_DEFAULT,
				  .after = AFTER_NS_DEFAULT,
				  .html = html_path,
				  .debug_dir = debug_dir,
				  .path = snapshot_path };

	return show_run(&opts);
}
