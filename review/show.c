// SPDX-License-Identifier: GPL-2.0
/*
 * show.c - `latsnap show [--json] [--before DUR] [--after DUR] [--debug-dir DIR] DIR/<id>`
 *
 * One snapshot for people: each outlier's split and cause, its user and kernel stacks as one
 * story (outermost user frame at the top, down to the kernel function it waited in), who woke
 * it, its wait chain, and a timeline of the trace's events of the threads involved around it.
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
#include "lib/duration.h"
#include "review/dwfl-sym.h"
#include "review/show.h"
#include "review/snapshots.h"
#include "lib/util.h"

#define BEFORE_NS_DEFAULT (10 * 1000000ULL)
#define AFTER_NS_DEFAULT (5 * 1000000ULL)
/* Beyond this many events an outlier's timeline is cut (and says so). */
#define TIMELINE_MAX 5000
#define FIELDS_TEXT_MAX 200
#define MAX_THREADS 64
/* How long after an outlier's end its unwound stack may come (as the recorder takes it). */
#define UNWIND_SLACK_NS 2000000000ULL

static const char show_usage[] =
	"Usage: latsnap show [--json] [--before DUR] [--after DUR] [--debug-dir DIR] DIR/ID\n"
	"\n"
	"One snapshot for people: for each outlier its split, cause, user and kernel stacks (user\n"
	"above kernel), waker and wait chain, then a timeline of the trace's events of the slow\n"
	"thread, its waker and the wait chain's threads, from a little before the outlier to its\n"
	"end. User frames are symbolized again from the mappings and build-ids in the trace.\n"
	"\n"
	"  -j, --json           the snapshot's summary with timelines and source lines added\n"
	"  -B, --before DUR     timeline start before the outlier (default 10ms)\n"
	"  -A, --after DUR      timeline end after the outlier (default 5ms)\n"
	"  -d, --debug-dir DIR  look for debug files by build-id in DIR/.build-id first\n"
	"                       (then /usr/lib/debug/.build-id)\n"
	"  -h, --help           this help\n";

struct interest {
	struct json_object *outlier;
	uint64_t from_ns, to_ns, start_ns;
	int64_t tids[MAX_THREADS];
	size_t nr_tids;
	struct json_object *timeline; /* owned until attached */
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
};

struct show_ctx {
	struct dwfl_sym *ds;
	struct interest *in;
	size_t nr;
	int err;
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

/* Integer field @name of @fields, 0 when missing; @found (may be NULL) says which. */
static uint64_t field_u64(struct json_object *fields, const char *name, bool *found)
{
	struct json_object *v;
	bool has = json_object_object_get_ex(fields, name, &v) &&
		   json_object_is_type(v, json_type_int);

	if (found) {
		*found = has;
	}
	return has ? (uint64_t)json_object_get_int64(v) : 0;
}

/* Statedump events: what each process had mapped, and the build-ids. */
static int on_statedump(struct show_ctx *sc, const struct ctf_event *ev)
{
	struct json_object *f = ev->fields, *arr, *path;
	uint8_t id[64];
	uint64_t pid, base, memsz;
	bool has_pid, has_base, has_memsz;
	size_t i, n;
	int ret = 0;

	/* latsnap:bin_info names its process; lttng-ust's statedump is the process's own. */
	pid = field_u64(f, "pid", &has_pid);
	if (!has_pid) {
		pid = field_u64(f, "vpid", &has_pid);
	}
	base = field_u64(f, "baddr", &has_base);
	if (!has_pid || !has_base) {
		goto out;
	}
	if (!strcmp(ev->name, "latsnap:bin_info")) {
		memsz = field_u64(f, "memsz", &has_memsz);
		if (json_object_object_get_ex(f, "path", &path) &&
		    json_object_is_type(path, json_type_string)) {
			ret = dwfl_sym_add_mapping(sc->ds, (int64_t)pid, base, memsz,
						   json_object_get_string(path));
		}
		if (!ret && json_object_object_get_ex(f, "build_id", &arr) &&
		    json_object_is_type(arr, json_type_array) && json_object_array_length(arr)) {
			n = json_object_array_length(arr);
			n = n < sizeof(id) ? n : sizeof(id);
			for (i = 0; i < n; i++) {
				id[i] = (uint8_t)json_object_get_int64(
					json_object_array_get_idx(arr, i));
			}
			dwfl_sym_add_build_id(sc->ds, (int64_t)pid, base, id, n);
		}
	} else if (!strcmp(ev->name, "lttng_ust_statedump:bin_info")) {
		memsz = field_u64(f, "memsz", &has_memsz);
		if (json_object_object_get_ex(f, "path", &path) &&
		    json_object_is_type(path, json_type_string)) {
			ret = dwfl_sym_add_mapping(sc->ds, (int64_t)pid, base, memsz,
						   json_object_get_string(path));
		}
	} else if (!strcmp(ev->name, "lttng_ust_statedump:build_id") &&
		   json_object_object_get_ex(f, "build_id", &arr) &&
		   json_object_is_type(arr, json_type_array)) {
		n = json_object_array_length(arr);
		n = n < sizeof(id) ? n : sizeof(id);
		for (i = 0; i < n; i++) {
			id[i] = (uint8_t)json_object_get_int64(json_object_array_get_idx(arr, i));
		}
		dwfl_sym_add_build_id(sc->ds, (int64_t)pid, base, id, n);
	}
out:
	return ret;
}

#define EVENT_TIDS 8

/*
 * The threads an event is about: its payload's "tid" and "*_tid" fields (prev_tid, next_tid of a
 * switch), or, without such fields, the thread that emitted it (the vtid context). The payload
 * wins: latsnap itself may trace events about other threads.
 */
static size_t event_tids(struct json_object *fields, int64_t *tids)
{
	struct json_object_iterator it = json_object_iter_begin(fields);
	struct json_object_iterator end = json_object_iter_end(fields);
	struct json_object *v;
	const char *name;
	size_t n = 0, len;
	bool found;

	for (; !json_object_iter_equal(&it, &end) && n < EVENT_TIDS; json_object_iter_next(&it)) {
		name = json_object_iter_peek_name(&it);
		v = json_object_iter_peek_value(&it);
		len = strlen(name);
		if (json_object_is_type(v, json_type_int) &&
		    (!strcmp(name, "tid") || (len > 4 && !strcmp(name + len - 4, "_tid")))) {
			tids[n++] = json_object_get_int64(v);
		}
	}
	if (!n) {
		tids[0] = (int64_t)field_u64(fields, "vtid", &found);
		n = found;
	}
	return n;
}

static void on_user_stack(struct show_ctx *sc, const struct ctf_event *ev)
{
	struct json_object *ips;
	struct interest *in;
	uint64_t tid, end_field;
	bool found, has_end;
	size_t i;

	tid = field_u64(ev->fields, "tid", &found);
	if (!found || !json_object_object_get_ex(ev->fields, "ips", &ips) ||
	    !json_object_is_type(ips, json_type_array)) {
		return;
	}
	/* latsnap's own record names its outlier; an older trace's has only its time to go by. */
	end_field = field_u64(ev->fields, "end_ns", &has_end);
	for (i = 0; i < sc->nr; i++) {
		in = &sc->in[i];
		if (in->unwind_seen || in->tid != (int64_t)tid) {
			continue;
		}
		if (has_end ? end_field != in->end_ns :
			      (ev->ts_ns < in->end_ns || ev->ts_ns - in->end_ns > UNWIND_SLACK_NS ||
			       ev->ts_ns >= in->next_start_ns)) {
			continue;
		}
		in->unwind_seen = true;
		in->ips = json_object_get(ips);
	}
}

static int on_event(const struct ctf_event *ev, void *ctx)
{
	struct show_ctx *sc = ctx;
	struct json_object *e, *fields;
	struct interest *in;
	struct json_object_iterator it, end;
	int64_t tids[EVENT_TIDS];
	size_t i, k, t, nr_tids;
	uint64_t tid, unwound_end, ts;
	const char *comm;
	bool has_end, has_tid;
	int ret = 0;

	if (!strncmp(ev->name, "lttng_ust_statedump:", 20) || !strcmp(ev->name, "latsnap:bin_info")) {
		ret = on_statedump(sc, ev);
		goto out;
	}
	if (!strcmp(ev->name, "latsnap:user_stack")) {
		on_user_stack(sc, ev);
	}
	nr_tids = event_tids(ev->fields, tids);
	/*
	 * An unwound stack is recorded by latsnap once it arrives, a little later: it is placed
	 * when the handler was done with it, right after the outlier's end.
	 */
	ts = ev->ts_ns;
	unwound_end = field_u64(ev->fields, "end_ns", &has_end);
	if (has_end && !strcmp(ev->name, "latsnap:user_stack")) {
		ts = unwound_end + field_u64(ev->fields, "unwind_ns", NULL);
	}
	/*
	 * The kernel context is kept in the kernel and recorded only before the snapshot, long
	 * after it happened: its payload says when.
	 */
	if (!strncmp(ev->name, "latsnap_kernel:", 15)) {
		uint64_t when = field_u64(ev->fields, "ts_ns", &has_end);

		ts = has_end ? when : ts;
	}
	for (i = 0; i < sc->nr && nr_tids; i++) {
		in = &sc->in[i];
		if (ts < in->from_ns || ts > in->to_ns) {
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
		tid = (uint64_t)in->tids[k];
		if (json_object_array_length(in->timeline) >= TIMELINE_MAX) {
			in->truncated = true;
			continue;
		}
		/* The context fields are said once per event: tid and comm; keep the payload. */
		fields = json_object_new_object();
		it = json_object_iter_begin(ev->fields);
		end = json_object_iter_end(ev->fields);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *name = json_object_iter_peek_name(&it);

			if (strcmp(name, "vpid") && strcmp(name, "vtid") &&
			    strcmp(name, "procname")) {
				json_object_object_add(
					fields, name,
					json_object_get(json_object_iter_peek_value(&it)));
			}
		}
		e = json_object_new_object();
		json_object_object_add(e, "ts_ns", json_object_new_int64((int64_t)ts));
		json_object_object_add(e, "rel_ns",
				       json_object_new_int64((int64_t)(ts - in->start_ns)));
		json_object_object_add(e, "name", json_object_new_string(ev->name));
		json_object_object_add(e, "tid", json_object_new_int64((int64_t)tid));
		/* latsnap's own events are about another thread: its comm when they say it. */
		comm = field_u64(ev->fields, "tid", &has_tid) == tid && has_tid ?
			       snapshots_str(ev->fields, "comm", NULL) :
			       NULL;
		if (!comm && tid == (uint64_t)in->tid) {
			comm = snapshots_str(in->outlier, "comm", NULL);
		}
		json_object_object_add(
			e, "comm",
			json_object_new_string(comm ? comm :
						      snapshots_str(ev->fields, "procname", "?")));
		json_object_object_add(e, "fields", fields);
		json_object_array_add(in->timeline, e);
	}
out:
	if (ret) {
		sc->err = ret;
	}
	return ret;
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

static uint64_t parse_addr(struct json_object *frame)
{
	const char *a = snapshots_str(frame, "addr", "0");

	return strtoull(a, NULL, 16);
}

/* Symbolize again the user frames of @frames (innermost first) of process @pid. */
static void resymbolize(struct dwfl_sym *ds, struct json_object *frames, int64_t pid)
{
	struct dwfl_sym_result res;
	struct json_object *f;
	size_t i, n = frames ? json_object_array_length(frames) : 0;

	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(frames, i);
		if (!strcmp(snapshots_str(f, "module", "kernel"), "kernel")) {
			continue;
		}
		if (dwfl_sym_lookup(ds, pid, parse_addr(f), i > 0, &res)) {
			json_object_object_add(f, "symbolized", json_object_new_string("recorded"));
			continue;
		}
		json_object_object_add(f, "symbol", json_object_new_string(res.symbol));
		json_object_object_add(f, "offset", json_object_new_int64((int64_t)res.offset));
		if (res.module) {
			json_object_object_add(f, "module", json_object_new_string(res.module));
		}
		if (res.file) {
			json_object_object_add(f, "file", json_object_new_string(res.file));
			json_object_object_add(f, "line", json_object_new_int(res.line));
		}
		json_object_object_add(f, "symbolized", json_object_new_string("build-id"));
	}
}

static void add_flag(struct json_object *o, const char *text)
{
	struct json_object *flags = snapshots_arr(o, "flags");

	if (!flags) {
		flags = json_object_new_array();
		json_object_object_add(o, "flags", flags);
	}
	json_object_array_add(flags, json_object_new_string(text));
}

/*
 * The summary has no unwound stack, the trace has its event (the recorder missed it): use it.
 * Its frames get their symbols from resymbolize().
 */
static void take_unwound(struct json_object *o, struct json_object *ips)
{
	struct json_object *user = NULL, *stack, *frames, *f;
	size_t i, n = json_object_array_length(ips);
	char addr[24];

	json_object_object_get_ex(o, "user_stack", &user);
	if (user && !strcmp(snapshots_str(user, "source", ""), "unwind")) {
		return;
	}
	stack = json_object_new_object();
	frames = json_object_new_array();
	json_object_object_add(stack, "source", json_object_new_string("unwind"));
	json_object_object_add(stack, "frames", frames);
	for (i = 0; i < n; i++) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64,
			 (uint64_t)json_object_get_int64(json_object_array_get_idx(ips, i)));
		f = json_object_new_object();
		json_object_object_add(f, "addr", json_object_new_string(addr));
		json_object_object_add(f, "symbol", NULL);
		json_object_object_add(f, "offset", json_object_new_int(0));
		json_object_object_add(f, "module", json_object_new_string("?"));
		json_object_array_add(frames, f);
	}
	json_object_object_add(o, "user_stack", stack);
	add_flag(o, "unwound-from-trace: the summary had no unwound stack; this one is the "
		    "latsnap:user_stack event the trace holds for the outlier");
}

static void print_frame(FILE *out, struct json_object *f, bool user)
{
	const char *sym = snapshots_str(f, "symbol", NULL);
	const char *module = snapshots_str(f, "module", "?");
	const char *file = snapshots_str(f, "file", NULL);
	const char *base = strrchr(module, '/');
	char *demangled = sym ? dwfl_sym_demangle(sym) : NULL;

	if (sym) {
		fprintf(out, "    %s+0x%" PRIx64, demangled ? demangled : sym,
			(uint64_t)snapshots_i64(f, "offset"));
	} else {
		fprintf(out, "    %s", snapshots_str(f, "addr", "?"));
	}
	if (file) {
		fprintf(out, "  %s:%" PRId64, file, snapshots_i64(f, "line"));
	}
	if (user) {
		fprintf(out, "  (%s)", base ? base + 1 : module);
	}
	fputc('\n', out);
	free(demangled);
}

/* Frames are stored innermost first; a story reads from the outermost down. */
static void print_frames_outer_first(FILE *out, struct json_object *frames, size_t skip, bool user)
{
	size_t n = frames ? json_object_array_length(frames) : 0, i;

	for (i = n; i > skip; i--) {
		print_frame(out, json_object_array_get_idx(frames, i - 1), user);
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
	struct json_object *tl = json_object_object_get(in->outlier, "timeline"), *e, *fields;
	size_t i, n = tl ? json_object_array_length(tl) : 0, k;
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
	print_rel(out, snapshots_i64(in->outlier, "duration_ns"));
	fprintf(out, " its end):\n");
	if (!n) {
		fprintf(out, "    (no event of these threads in the trace then)\n");
	}
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(tl, i);
		fputs("    ", out);
		print_rel(out, snapshots_i64(e, "rel_ns"));
		fields = fields_for_people(json_object_object_get(e, "fields"));
		text = json_object_to_json_string_ext(
			fields, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		fprintf(out, "  %s[%" PRId64 "]  %s  %.*s%s\n", snapshots_str(e, "comm", "?"),
			snapshots_i64(e, "tid"), snapshots_str(e, "name", "?"), FIELDS_TEXT_MAX,
			text ? text : "", text && strlen(text) > FIELDS_TEXT_MAX ? "..." : "");
		json_object_put(fields);
	}
	if (in->truncated) {
		fprintf(out, "    ... cut at %d events\n", TIMELINE_MAX);
	}
}

static void print_outlier(FILE *out, const struct interest *in, bool have_trace)
{
	struct json_object *o = in->outlier, *user = NULL, *uframes, *stacks, *s, *waker = NULL,
			   *chain, *link, *flags;
	int64_t duration = snapshots_i64(o, "duration_ns"), weight;
	char text[LS_DURATION_BUFSZ];
	size_t i, n;

	ls_format_duration((uint64_t)duration, text, sizeof(text));
	fprintf(out,
		"%s %s  %s[pid %" PRId64 " tid %" PRId64 "]  %s  at %" PRId64 ".%09" PRId64 "\n",
		snapshots_str(o, "kind", "?"), snapshots_str(o, "syscall", "off-cpu"),
		snapshots_str(o, "comm", "?"), snapshots_i64(o, "pid"), snapshots_i64(o, "tid"),
		text, snapshots_i64(o, "start_ns") / 1000000000,
		snapshots_i64(o, "start_ns") % 1000000000);
	print_split(out, "on-cpu", snapshots_i64(o, "on_cpu_ns"), duration);
	print_split(out, "blocked", snapshots_i64(o, "blocked_ns"), duration);
	print_split(out, "runqueue", snapshots_i64(o, "runqueue_ns"), duration);
	fprintf(out, "  switches %" PRId64 "\n", snapshots_i64(o, "switches"));
	fprintf(out, "  cause: %s\n", snapshots_str(o, "cause", "?"));

	json_object_object_get_ex(o, "user_stack", &user);
	uframes = snapshots_arr(user, "frames");
	fprintf(out, "  stack, outermost first: user (%s)\n", snapshots_str(user, "source", "?"));
	if (!uframes || !json_object_array_length(uframes)) {
		fprintf(out, "    (no user frames)\n");
	}
	print_frames_outer_first(out, uframes, 0, true);
	stacks = snapshots_arr(o, "kernel_stacks");
	n = stacks ? json_object_array_length(stacks) : 0;
	if (!n) {
		fprintf(out, "  -- kernel: no stack (it did not wait in the kernel long enough)\n");
	}
	for (i = 0; i < n; i++) {
		s = json_object_array_get_idx(stacks, i);
		weight = snapshots_i64(s, "weight_ns");
		ls_format_duration((uint64_t)weight, text, sizeof(text));
		fprintf(out, "  -- kernel%s, waited %s (%.1f%%) in:\n",
			n > 1 ? (i == 0 ? " (1st way)" : " (another way)") : "", text,
			duration > 0 ? 100.0 * weight / duration : 0.0);
		print_frames_outer_first(out, snapshots_arr(s, "frames"),
					 snapshots_kernel_skip(snapshots_arr(s, "frames")), false);
	}
	if (json_object_object_get_ex(o, "waker", &waker) && waker) {
		if (snapshots_i64(waker, "tid")) {
			fprintf(out,
				"  woken by %s[pid %" PRId64 " tid %" PRId64
				"], outermost first:\n",
				snapshots_str(waker, "comm", "?"), snapshots_i64(waker, "pid"),
				snapshots_i64(waker, "tid"));
		} else {
			fprintf(out, "  woken by %s, outermost first:\n",
				snapshots_str(waker, "comm", "?"));
		}
		print_frames_outer_first(out, snapshots_arr(waker, "frames"),
					 snapshots_kernel_skip(snapshots_arr(waker, "frames")),
					 false);
	}
	chain = snapshots_arr(o, "wait_chain");
	n = chain ? json_object_array_length(chain) : 0;
	if (n) {
		fprintf(out, "  wait chain, nearest first:\n");
	}
	for (i = 0; i < n; i++) {
		link = json_object_array_get_idx(chain, i);
		fprintf(out, "  %" PRId64 ". %s[pid %" PRId64 " tid %" PRId64 "] from ",
			snapshots_i64(link, "depth"), snapshots_str(link, "comm", "?"),
			snapshots_i64(link, "pid"), snapshots_i64(link, "tid"));
		print_rel(out, snapshots_i64(link, "from_ns") - snapshots_i64(o, "start_ns"));
		fprintf(out, " to ");
		print_rel(out, snapshots_i64(link, "to_ns") - snapshots_i64(o, "start_ns"));
		fprintf(out, "%s%s\n", snapshots_str(link, "syscall", NULL) ? ", in " : "",
			snapshots_str(link, "syscall", ""));
		print_split(out, "  on-cpu", snapshots_i64(link, "on_cpu_ns"),
			    snapshots_i64(link, "to_ns") - snapshots_i64(link, "from_ns"));
		print_split(out, "blocked", snapshots_i64(link, "blocked_ns"),
			    snapshots_i64(link, "to_ns") - snapshots_i64(link, "from_ns"));
		print_split(out, "runqueue", snapshots_i64(link, "runqueue_ns"),
			    snapshots_i64(link, "to_ns") - snapshots_i64(link, "from_ns"));
		fputc('\n', out);
		print_frames_outer_first(out, snapshots_arr(link, "frames"), 0, true);
	}
	flags = snapshots_arr(o, "flags");
	n = flags ? json_object_array_length(flags) : 0;
	for (i = 0; i < n; i++) {
		fprintf(out, "  ! %s\n",
			json_object_get_string(json_object_array_get_idx(flags, i)));
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
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "before", required_argument, NULL, 'B' },
		{ "after", required_argument, NULL, 'A' },
		{ "debug-dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t before = BEFORE_NS_DEFAULT, after = AFTER_NS_DEFAULT, start, end;
	struct json_object *outliers, *o, *user, *waker, *chain, *link, *flags;
	struct snapshot snap = { 0 };
	struct show_ctx sc = { 0 };
	const char *debug_dir = NULL, *host;
	char hostname[256] = "", trace[4096];
	bool json = false, have_trace = false;
	size_t i, j, n;
	int id, ret = 0, err;

	optind = 0;
	opterr = 0;
	while ((id = getopt_long(argc, argv, "+:jB:A:d:h", opts, NULL)) != -1) {
		switch (id) {
		case 'j':
			json = true;
			break;
		case 'B':
		case 'A':
			if (parse_dur(id == 'B' ? "--before" : "--after", optarg,
				      id == 'B' ? &before : &after)) {
				ret = 2;
				goto out;
			}
			break;
		case 'd':
			debug_dir = optarg;
			break;
		case 'h':
			fputs(show_usage, stdout);
			goto out;
		default:
			snapshots_option_error("show", id, optopt, argv, optind);
			ret = 2;
			goto out;
		}
	}
	if (optind != argc - 1) {
		ls_err("show: %s (see latsnap show --help)",
		       optind == argc ? "DIR/ID missing" : "one DIR/ID only");
		ret = 2;
		goto out;
	}
	if (access(argv[optind], F_OK)) {
		ls_err("show: %s: %s", argv[optind], strerror(errno));
		ret = 1;
		goto out;
	}
	if (snapshot_load(argv[optind], &snap)) {
		ls_err("show: %s: %s", argv[optind], strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	snprintf(trace, sizeof(trace), "%s", snap.trace ? snap.trace : "");
	if (snap.state == SNAPSHOT_INCOMPLETE && !snap.relay && access(trace, F_OK)) {
		/* Neither summary.json nor trace/: an output directory, or nothing of ours. */
		ls_err("show: %s: not a snapshot (no summary.json, no trace/ in it): show takes "
		       "one snapshot, DIR/ID",
		       snap.path);
		ret = 1;
		goto out;
	}
	if (snap.state != SNAPSHOT_COMPLETE) {
		ls_err("show: %s", snap.why);
		ret = 1;
		goto out;
	}
	host = snapshots_str(snap.summary, "host", "?");
	if (!gethostname(hostname, sizeof(hostname) - 1) && strcmp(host, hostname)) {
		ls_err("show: warning: %s%s: recorded on host %s, this is %s: user "
		       "frames are symbolized only from files whose build-id is the recorded one",
		       snap.path, snap.relay ? "" : "/summary.json", host, hostname);
	}

	outliers = snapshots_arr(snap.summary, "outliers");
	n = json_object_array_length(outliers);
	sc.ds = dwfl_sym_new(debug_dir);
	sc.in = calloc(n ? n : 1, sizeof(*sc.in));
	if (!sc.ds || !sc.in) {
		ls_err("show: %s", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	sc.nr = n;
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(outliers, i);
		start = (uint64_t)snapshots_i64(o, "start_ns");
		end = (uint64_t)snapshots_i64(o, "end_ns");
		sc.in[i].outlier = o;
		sc.in[i].start_ns = start;
		sc.in[i].from_ns = start > before ? start - before : 0;
		sc.in[i].to_ns = end + after < end ? UINT64_MAX : end + after;
		sc.in[i].end_ns = end;
		sc.in[i].tid = snapshots_i64(o, "tid");
		sc.in[i].next_start_ns = UINT64_MAX;
		for (j = 0; j < n; j++) {
			link = json_object_array_get_idx(outliers, j);
			if (snapshots_i64(link, "tid") == sc.in[i].tid &&
			    (uint64_t)snapshots_i64(link, "start_ns") > start &&
			    (uint64_t)snapshots_i64(link, "start_ns") < sc.in[i].next_start_ns) {
				sc.in[i].next_start_ns = (uint64_t)snapshots_i64(link, "start_ns");
			}
		}
		sc.in[i].timeline = json_object_new_array();
		add_tid(&sc.in[i], snapshots_i64(o, "tid"));
		if (json_object_object_get_ex(o, "waker", &waker) && waker) {
			add_tid(&sc.in[i], snapshots_i64(waker, "tid"));
		}
		chain = snapshots_arr(o, "wait_chain");
		for (j = 0; chain && j < json_object_array_length(chain); j++) {
			link = json_object_array_get_idx(chain, j);
			add_tid(&sc.in[i], snapshots_i64(link, "tid"));
		}
	}

	snprintf(trace, sizeof(trace), "%s/%s", snap.path,
		 snapshots_str(snap.summary, "trace", "trace"));
	if (snap.relay) {
		/* lttng-relayd's snapshot directory is the trace itself. */
		snprintf(trace, sizeof(trace), "%s", snap.trace);
	} else if (strchr(snapshots_str(snap.summary, "trace", "trace"), '/')) {
		/* The trace is the snapshot's own: summary.json does not send us elsewhere. */
		snprintf(trace, sizeof(trace), "%s/trace", snap.path);
	}
	/* ctf_read() prints "latsnap: ctf: DIR: why" itself. */
	err = ctf_read(trace, NULL, on_event, &sc);
	if (err) {
		ret = 1;
		if (err == sc.err) {
			ls_err("show: %s: %s", trace, strerror(-err));
		}
	} else {
		have_trace = true;
	}
	for (i = 0; i < n; i++) {
		o = sc.in[i].outlier;
		json_object_array_sort(sc.in[i].timeline, by_ts);
		json_object_object_add(o, "timeline", have_trace ? sc.in[i].timeline : NULL);
		if (!have_trace) {
			json_object_put(sc.in[i].timeline);
		}
		sc.in[i].timeline = NULL;
		if (sc.in[i].truncated) {
			json_object_object_add(o, "timeline_truncated", json_object_new_boolean(1));
		}
		if (sc.in[i].ips) {
			take_unwound(o, sc.in[i].ips);
		}
		if (json_object_object_get_ex(o, "user_stack", &user) && user) {
			resymbolize(sc.ds, snapshots_arr(user, "frames"), snapshots_i64(o, "pid"));
		}
		chain = snapshots_arr(o, "wait_chain");
		for (j = 0; chain && j < json_object_array_length(chain); j++) {
			link = json_object_array_get_idx(chain, j);
			resymbolize(sc.ds, snapshots_arr(link, "frames"),
				    snapshots_i64(link, "pid"));
		}
		/*
		 * The recorder found the unwound stack's event in this very trace: without it the
		 * trace is not the one it read (a stream file lost or replaced since). A stack that
		 * reached latsnap only through the kernel (a process not yet registered with the
		 * session daemon) has no event to look for.
		 */
		if (have_trace && !sc.in[i].unwind_seen &&
		    json_object_object_get_ex(o, "user_stack", &user) &&
		    !strcmp(snapshots_str(user, "source", ""), "unwind") &&
		    json_object_get_boolean(json_object_object_get(user, "in_trace"))) {
			ls_err("show: %s: the latsnap:user_stack event of tid %" PRId64
			       " that the summary's stack came from is not in the trace "
			       "(a stream missing?)",
			       trace, snapshots_i64(o, "tid"));
			ret = 1;
		}
		if (have_trace && !dwfl_sym_nr_mappings(sc.ds, snapshots_i64(o, "pid"))) {
			add_flag(o,
				 "no-statedump: the trace holds no mappings of this process: user "
				 "frames as recorded");
		}
	}

	if (json) {
		puts(json_object_to_json_string_ext(
			snap.summary, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		flags = snapshots_arr(snap.summary, "flags");
		printf("snapshot %s on %s, created %s: %zu outlier%s, %" PRId64 " skipped\n",
		       snap.id, host, snapshots_str(snap.summary, "created", "?"), n,
		       n == 1 ? "" : "s", snapshots_i64(snap.summary, "skipped"));
		for (i = 0; flags && i < json_object_array_length(flags); i++) {
			printf("! %s\n",
			       json_object_get_string(json_object_array_get_idx(flags, i)));
		}
		putchar('\n');
		for (i = 0; i < n; i++) {
			print_outlier(stdout, &sc.in[i], have_trace);
		}
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ls_err("show: writing to stdout: %s", strerror(errno));
		ret = 1;
	}
out:
	for (i = 0; i < sc.nr; i++) {
		json_object_put(sc.in[i].timeline);
		json_object_put(sc.in[i].ips);
	}
	free(sc.in);
	dwfl_sym_free(sc.ds);
	snapshot_free(&snap);
	return ret;
}
