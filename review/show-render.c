// SPDX-License-Identifier: GPL-2.0
/*
 * show-render.c - `latsnap show`'s renderers: a snapshot's interests as text for people, as JSON
 * (--json) and as an HTML page (--html).
 */
#include <errno.h>
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
#include "lib/outlier.h"
#include "lib/text.h"
#include "lib/util.h"
#include "review/dwfl-sym.h"
#include "review/flame.h"
#include "review/html.h"
#include "review/lanes.h"
#include "review/show-int.h"
#include "review/snapshots.h"

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
		/*
		 * Text for people, not JSON written (so not ls_json_text()): json-c leaves bytes
		 * >= 0x80 as they are, a C1 control or broken UTF-8, and LS_TEXT() shows each.
		 */
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

void show_print_text(const struct snapshot *snap, const struct show_ctx *sc)
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

/* The threads an outlier's HTML timeline draws, as show_init_interests() chose them. */
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

int show_print_json(const struct snapshot *snap, const struct show_ctx *sc)
{
	struct json_object *obj = snapshot_json(snap, sc, false);
	char *text = NULL;

	if (obj) {
		text = ls_json_text(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	}
	json_object_put(obj);
	if (!text) {
		return -ENOMEM;
	}
	puts(text);
	free(text);
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
int show_write_html(const struct snapshot *snap, const struct show_ctx *sc, const char *path)
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
