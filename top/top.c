// SPDX-License-Identifier: GPL-2.0
/*
 * top.c - `latsnap top`: a live LatencyTOP screen (ncurses), or plain text or JSON refreshes,
 * of every wait on the machine: system-wide causes, then one process's or thread's.
 *
 * bpf/top.bpf.c aggregates the waits in the kernel; each refresh reads and empties its map, so
 * each screen shows the last interval. Causes come from the recorder's rules, applied to the
 * symbolized kernel stack and the syscall of each aggregate and cached per (stack, syscall).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <ncurses.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "tracker/decode.h"
#include "tracker/kernel.h"
#include "lib/duration.h"
#include "tracker/ksyms.h"
#include "tracker/libbpf-log.h"
#include "classify/rules.h"
#include "classify/syscalls.h"
#include "top.skel.h"
#include "top/top.h"
#include "include/top.h"
#include "lib/util.h"

#define SYSTEM_ROWS 10
#define PROCESS_ROWS 8
/* Cached causes before the cache starts over (new stacks keep coming on a long run). */
#define CAUSE_CACHE_MAX 65536
#define MAX_PIDS 64

static const char top_usage[] =
	"Usage: latsnap top [OPTIONS]\n"
	"\n"
	"A live LatencyTOP screen: which causes make processes wait, system-wide and per process,\n"
	"from every off-CPU wait on the machine (not only outliers), refreshed every interval.\n"
	"\n"
	"  -i, --interval DUR     refresh period (default 5s)\n"
	"  -b, --batch N          print N refreshes as plain text, then exit\n"
	"  -j, --json             with --batch: each refresh as one JSON object per line\n"
	"  -p, --pid PID          list only this process in the process part (repeatable)\n"
	"  -k, --kernel-threads   count the waits of kernel threads too\n"
	"      --rules FILE       cause rules, replacing the built-in set\n"
	"      --sample-below DUR waits shorter than this are sampled (default 1ms)\n"
	"      --sample-ratio N   ... 1 in N, each kept one counted N times (default 100; 1: all)\n"
	"  -v, --verbose          say more on stderr (libbpf diagnostics included)\n"
	"  -h, --help             this help\n"
	"\n"
	"Keys: < > previous/next process (or thread), t process/thread view, 1 by cause,\n"
	"2 special causes (waiting for CPU, lock contention), 3 by synchronization object,\n"
	"c a m s sort by count, average, maximum, total; q quits.\n";

struct top_opts {
	uint64_t interval_ns;
	long batch;
	bool json;
	bool kthreads;
	const char *rules_path;
	uint64_t sample_below_ns;
	uint32_t sample_ratio;
	int pids[MAX_PIDS];
	size_t nr_pids;
};

struct cause_entry {
	uint64_t stack;
	int32_t nr;
	char *cause;
	bool special;
};

/* One refresh's data. */
struct period {
	struct top_wait *waits;
	size_t nr;
	uint64_t interval_ns;
	uint64_t total_ns;
	uint64_t stats[TOP_STAT_NR];
	time_t when;
};

struct top {
	struct top_opts opts;
	struct top_bpf *skel;
	struct ksyms *ksyms;
	const struct rules *rules;
	struct rules *own_rules;
	void *causes; /* tsearch tree of struct cause_entry */
	void *uncached; /* tsearch tree of the texts of causes not cached */
	size_t nr_causes;
	int ncpus;
	uint64_t stats_seen[TOP_STAT_NR];
	struct period cur;
	uint64_t last_drain_ns;
	/* The screen. */
	enum top_view view;
	enum top_sort sort;
	bool threads;
	uint32_t sel_id; /* the pid (or tid in thread view) on display */
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}



/**
 * top_format_ms() - a duration as LatencyTOP writes it: milliseconds with one decimal
 * @ns: the duration
 * @buf: receives "12.3 msec", or "45.6 usec" under a tenth of a millisecond, where one decimal
 *	 of a millisecond would say 0.0 for every short wait
 * @len: size of @buf
 */
void top_format_ms(uint64_t ns, char *buf, size_t len)
{
	if (ns < 100000) {
		snprintf(buf, len, "%.1f usec", (double)ns / 1e3);
	} else {
		snprintf(buf, len, "%.1f msec", (double)ns / 1e6);
	}
}

static int cmp_label(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return strcmp(x->label, y->label);
}

static enum top_sort sort_key;

static int cmp_row(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	uint64_t kx, ky;

	switch (sort_key) {
	case TOP_SORT_COUNT:
		kx = x->count;
		ky = y->count;
		break;
	case TOP_SORT_AVERAGE:
		kx = x->count ? x->sum_ns / x->count : 0;
		ky = y->count ? y->sum_ns / y->count : 0;
		break;
	case TOP_SORT_MAXIMUM:
		kx = x->max_ns;
		ky = y->max_ns;
		break;
	default:
		kx = x->sum_ns;
		ky = y->sum_ns;
		break;
	}
	if (kx != ky) {
		return kx > ky ? -1 : 1;
	}
	return strcmp(x->label, y->label);
}

/**
 * top_table() - the rows of one table of the screen
 * @waits: the aggregates of a refresh
 * @nr: how many
 * @tgid: only this process's; 0 for all
 * @tid: only this thread's; 0 for all
 * @view: by cause, special causes only, or by synchronization object
 * @sort: the order of the rows, largest first
 * @rowsp: receives the rows (free() them); their labels point into @waits
 *
 * Return: the number of rows; 0 with *@rowsp NULL when there are none or memory ran out.
 */
size_t top_table(const struct top_wait *waits, size_t nr, uint32_t tgid, uint32_t tid,
		 enum top_view view, enum top_sort sort, struct top_row **rowsp)
{
	struct top_row *rows = calloc(nr ? nr : 1, sizeof(*rows));
	size_t i, n = 0, out = 0;

	*rowsp = NULL;
	if (!rows) {
		return 0;
	}
	for (i = 0; i < nr; i++) {
		const struct top_wait *w = &waits[i];

		if ((tgid && w->tgid != tgid) || (tid && w->tid != tid)) {
			continue;
		}
		if (view == TOP_VIEW_SPECIAL && !w->special) {
			continue;
		}
		if (view == TOP_VIEW_OBJECT && !w->object) {
			continue;
		}
		rows[n].label = view == TOP_VIEW_OBJECT ? w->object : w->cause;
		rows[n].count = w->count;
		rows[n].sum_ns = w->sum_ns;
		rows[n].max_ns = w->max_ns;
		n++;
	}
	ls_sort(rows, n, sizeof(*rows), cmp_label);
	for (i = 0; i < n; i++) {
		if (out && !strcmp(rows[out - 1].label, rows[i].label)) {
			rows[out - 1].count += rows[i].count;
			rows[out - 1].sum_ns += rows[i].sum_ns;
			if (rows[i].max_ns > rows[out - 1].max_ns) {
				rows[out - 1].max_ns = rows[i].max_ns;
			}
			continue;
		}
		rows[out++] = rows[i];
	}
	sort_key = sort;
	ls_sort(rows, out, sizeof(*rows), cmp_row);
	if (!out) {
		free(rows);
		rows = NULL;
	}
	*rowsp = rows;
	return out;
}

/* ---- causes ---- */

static int cmp_cause(const void *a, const void *b)
{
	const struct cause_entry *x = a, *y = b;

	if (x->stack != y->stack) {
		return x->stack < y->stack ? -1 : 1;
	}
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static void free_cause(void *p)
{
	struct cause_entry *e = p;

	free(e->cause);
	free(e);
}

static int cmp_string(const void *a, const void *b)
{
	return strcmp(a, b);
}

static bool is_futex(int32_t nr)
{
	const char *name = nr >= 0 ? syscall_name(nr) : NULL;

	return name && !strncmp(name, "futex", 5);
}

/*
 * The cause of a blocked wait, from the recorder's rules: an OUTLIER-shaped object with the
 * stack as its only kernel stack. *@cacheable is false when the stack was gone from the map.
 */
static char *classify(struct top *t, uint64_t stack, int32_t nr, bool *cacheable)
{
	struct json_object *o = json_object_new_object(), *stacks, *st;
	struct top_stack frames;
	struct rules_match m;
	const char *name = nr >= 0 ? syscall_name(nr) : NULL;
	char *cause;

	*cacheable = true;
	json_object_object_add(o, "kind", json_object_new_string(nr >= 0 ? "syscall" : "sleep"));
	json_object_object_add(o, "syscall", name ? json_object_new_string(name) : NULL);
	json_object_object_add(o, "duration_ns", json_object_new_int64(1));
	json_object_object_add(o, "runqueue_ns", json_object_new_int64(0));
	stacks = json_object_new_array();
	if (stack && !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.stacks), &stack, &frames)) {
		st = json_object_new_object();
		json_object_object_add(st, "weight_ns", json_object_new_int64(1));
		json_object_object_add(st, "frames",
				       decode_kernel_frames(t->ksyms, frames.ips,
							    frames.nr < TOP_MAX_DEPTH ?
								    frames.nr :
								    TOP_MAX_DEPTH));
		json_object_array_add(stacks, st);
	} else if (stack) {
		*cacheable = false;
	}
	json_object_object_add(o, "kernel_stacks", stacks);
	rules_classify(t->rules, o, &m);
	cause = strdup(m.cause);
	json_object_put(o);
	return cause;
}

static const struct cause_entry *cause_of(struct top *t, const struct top_key *k)
{
	struct cause_entry probe = { .stack = k->stack, .nr = k->nr }, *e, **found;
	static struct cause_entry cpu = { .cause = RULES_CAUSE_CPU, .special = true };
	static struct cause_entry oom = { .cause = "(out of memory)" };
	static struct cause_entry uncached;
	char **intern;
	bool cacheable;

	if (k->kind == TOP_WAIT_CPU) {
		return &cpu;
	}
	found = tfind(&probe, &t->causes, cmp_cause);
	if (found) {
		return *found;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		return &oom;
	}
	*e = probe;
	e->cause = classify(t, k->stack, k->nr, &cacheable);
	if (!e->cause) {
		free(e);
		return &oom;
	}
	e->special = is_futex(k->nr) || strstr(e->cause, "contention") ||
		     strstr(e->cause, "lock contention");
	if (!cacheable) {
		/*
		 * Not cached: the next refresh may find the stack. Its text is kept among a few
		 * interned ones (rule causes and syscall names), for the waits that point to it.
		 */
		intern = tfind(e->cause, &t->uncached, cmp_string);
		if (intern) {
			free(e->cause);
			e->cause = *intern;
		} else if (!tsearch(e->cause, &t->uncached, cmp_string)) {
			free_cause(e);
			return &oom;
		}
		uncached.cause = e->cause;
		uncached.special = e->special;
		free(e);
		return &uncached;
	}
	if (!tsearch(e, &t->causes, cmp_cause)) {
		free_cause(e);
		return &oom;
	}
	t->nr_causes++;
	return e;
}

/* ---- objects ---- */

static char *object_of(const struct top_key *k)
{
	char path[64], target[256];
	char *text = NULL;
	ssize_t n;

	if (k->obj_kind == TOP_OBJ_FUTEX) {
		if (asprintf(&text, "futex 0x%" PRIx64 " (pid %u)", (uint64_t)k->obj, k->tgid) <
		    0) {
			text = NULL;
		}
		return text;
	}
	if (k->obj_kind != TOP_OBJ_FD || k->obj > INT_MAX) {
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", k->tid, (int)k->obj);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		/* Closed since, or the process is gone. */
		snprintf(target, sizeof(target), "fd %d of pid %u", (int)k->obj, k->tgid);
	} else {
		target[n] = '\0';
	}
	/* Pipes and sockets are named by inode, shared by every process that holds them. */
	if (n >= 0 && target[0] != '/') {
		text = strdup(target);
	} else if (n >= 0) {
		if (asprintf(&text, "%s (pid %u)", target, k->tgid) < 0) {
			text = NULL;
		}
	} else {
		text = strdup(target);
	}
	/* A path can hold anything: nothing below a space reaches the terminal. */
	for (char *p = text; p && *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*p = '?';
		}
	}
	return text;
}

/* ---- reading the kernel side ---- */

static void period_free(struct period *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		free(p->waits[i].object);
	}
	free(p->waits);
	memset(p, 0, sizeof(*p));
}

static void read_stats(struct top *t, uint64_t *delta)
{
	uint64_t values[t->ncpus];
	uint64_t sum;
	__u32 key;
	int cpu;

	for (key = 0; key < TOP_STAT_NR; key++) {
		sum = 0;
		if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.stats), &key, values)) {
			for (cpu = 0; cpu < t->ncpus; cpu++) {
				sum += values[cpu];
			}
		}
		delta[key] = sum - t->stats_seen[key];
		t->stats_seen[key] = sum;
	}
}

/*
 * Reads and empties the aggregate map into a new period. Keys are listed first and then taken
 * one by one, so that waits ending meanwhile land in the next period rather than being lost.
 */
static int drain(struct top *t)
{
	int fd = bpf_map__fd(t->skel->maps.agg);
	size_t cap = bpf_map__max_entries(t->skel->maps.agg), nkeys = 0, i;
	struct top_key *keys = calloc(cap, sizeof(*keys)), *prev = NULL;
	struct period p = { 0 };
	struct top_value v;
	const struct cause_entry *c;
	uint64_t now = ls_now_ns();
	int ret = 0;

	/* Only between periods: the waits of a period point to the cached texts. */
	if (t->nr_causes >= CAUSE_CACHE_MAX) {
		period_free(&t->cur);
		tdestroy(t->causes, free_cause);
		t->causes = NULL;
		t->nr_causes = 0;
	}
	p.waits = calloc(cap ? cap : 1, sizeof(*p.waits));
	if (!keys || !p.waits) {
		ret = -ENOMEM;
		goto out;
	}
	while (nkeys < cap && !bpf_map_get_next_key(fd, prev, &keys[nkeys])) {
		prev = &keys[nkeys++];
	}
	for (i = 0; i < nkeys; i++) {
		struct top_wait *w = &p.waits[p.nr];

		if (bpf_map_lookup_and_delete_elem(fd, &keys[i], &v)) {
			continue;
		}
		if (!v.count) {
			continue;
		}
		c = cause_of(t, &keys[i]);
		w->tgid = keys[i].tgid;
		w->tid = keys[i].tid;
		w->count = v.count;
		w->sum_ns = v.sum_ns;
		w->max_ns = v.max_ns;
		w->cause = c->cause;
		w->special = c->special;
		w->object = object_of(&keys[i]);
		memcpy(w->comm, v.comm, sizeof(w->comm));
		memcpy(w->pcomm, v.pcomm, sizeof(w->pcomm));
		w->comm[sizeof(w->comm) - 1] = '\0';
		w->pcomm[sizeof(w->pcomm) - 1] = '\0';
		p.total_ns += w->sum_ns;
		p.nr++;
	}
	read_stats(t, p.stats);
	p.interval_ns = now - t->last_drain_ns;
	p.when = time(NULL);
	t->last_drain_ns = now;
	period_free(&t->cur);
	t->cur = p;
	memset(&p, 0, sizeof(p));
out:
	if (ret) {
		ls_err("top: reading the wait aggregates: %s", strerror(-ret));
	}
	period_free(&p);
	free(keys);
	return ret;
}

/* ---- processes and threads ---- */

struct entity {
	uint32_t id; /* pid, or tid in thread view */
	uint32_t tgid;
	const char *name;
	uint64_t total_ns;
	size_t threads;
};

static bool pid_listed(const struct top *t, uint32_t tgid)
{
	size_t i;

	if (!t->opts.nr_pids) {
		return true;
	}
	for (i = 0; i < t->opts.nr_pids; i++) {
		if ((uint32_t)t->opts.pids[i] == tgid) {
			return true;
		}
	}
	return false;
}

static int cmp_entity(const void *a, const void *b)
{
	const struct entity *x = a, *y = b;

	if (x->total_ns != y->total_ns) {
		return x->total_ns > y->total_ns ? -1 : 1;
	}
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_wait_thread(const void *a, const void *b)
{
	const struct top_wait *x = a, *y = b;

	if (x->tgid != y->tgid) {
		return x->tgid < y->tgid ? -1 : 1;
	}
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * The processes (or threads) of the period, largest total first. The waits are sorted by
 * process and thread in place, which the tables do not mind.
 */
static size_t entities(struct top *t, bool threads, struct entity **listp)
{
	struct period *p = &t->cur;
	struct entity *list = calloc(p->nr ? p->nr : 1, sizeof(*list)), *e = NULL;
	uint32_t last_tid = 0;
	size_t i, n = 0;

	*listp = list;
	if (!list) {
		return 0;
	}
	ls_sort(p->waits, p->nr, sizeof(*p->waits), cmp_wait_thread);
	for (i = 0; i < p->nr; i++) {
		struct top_wait *w = &p->waits[i];
		uint32_t id = threads ? w->tid : w->tgid;

		if (!pid_listed(t, w->tgid)) {
			continue;
		}
		if (!e || e->id != id) {
			e = &list[n++];
			e->id = id;
			e->tgid = w->tgid;
			e->name = threads ? w->comm : w->pcomm;
			last_tid = 0;
		}
		e->total_ns += w->sum_ns;
		if (w->tid != last_tid) {
			e->threads++;
			last_tid = w->tid;
		}
	}
	ls_sort(list, n, sizeof(*list), cmp_entity);
	return n;
}

static size_t entity_index(const struct entity *list, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (list[i].id == id) {
			return i;
		}
	}
	return 0;
}

/* ---- plain text and JSON ---- */

static const char *view_name(enum top_view view)
{
	switch (view) {
	case TOP_VIEW_SPECIAL:
		return "special causes";
	case TOP_VIEW_OBJECT:
		return "by synchronization object";
	default:
		return "by cause";
	}
}

static void format_row(char *buf, size_t len, const struct top_row *r, uint64_t total, int width)
{
	char avg[32], max[32];

	top_format_ms(r->count ? r->sum_ns / r->count : 0, avg, sizeof(avg));
	top_format_ms(r->max_ns, max, sizeof(max));
	snprintf(buf, len, "%-*.*s %9" PRIu64 " %13s %13s %6.1f %%", width, width, r->label,
		 r->count, avg, max, total ? 100.0 * (double)r->sum_ns / (double)total : 0.0);
}

static void format_header(char *buf, size_t len, const char *what, int width)
{
	snprintf(buf, len, "%-*s %9s %13s %13s %8s", width, what, "Count", "Average", "Maximum",
		 "Percent");
}

static void format_title(const struct top *t, char *buf, size_t len)
{
	char when[32];
	struct tm tm;

	localtime_r(&t->cur.when, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "latsnap top %s, LatencyTOP for Linux   %s   interval %.1f s",
		 LATSNAP_VERSION, t->cur.when ? when : "-", (double)t->cur.interval_ns / 1e9);
}

static void format_entity(const struct top *t, const struct entity *e, bool threads, char *buf,
			  size_t len)
{
	char total[32];

	top_format_ms(e->total_ns, total, sizeof(total));
	(void)t;
	if (threads) {
		snprintf(buf, len, "Thread %s (%u) of pid %u  Total: %s  [thread view]", e->name,
			 e->id, e->tgid, total);
	} else {
		snprintf(buf, len, "Process %s (%u)  Total: %s in %zu threads  [process view]",
			 e->name, e->id, total, e->threads);
	}
}

static void print_table(FILE *out, const struct top *t, uint32_t tgid, uint32_t tid,
			size_t max_rows, uint64_t total, const char *indent)
{
	struct top_row *rows;
	size_t n, i;
	char line[256];

	n = top_table(t->cur.waits, t->cur.nr, tgid, tid, t->view, t->sort, &rows);
	format_header(line, sizeof(line), t->view == TOP_VIEW_OBJECT ? "Object" : "Cause", 48);
	fprintf(out, "%s%s\n", indent, line);
	for (i = 0; i < n && i < max_rows; i++) {
		format_row(line, sizeof(line), &rows[i], total, 48);
		fprintf(out, "%s%s\n", indent, line);
	}
	free(rows);
}

static void print_text(struct top *t, FILE *out)
{
	struct entity *list;
	size_t n, i;
	char line[256];

	format_title(t, line, sizeof(line));
	fprintf(out, "%s\n\nSystem wide latencies (%s)\n", line, view_name(t->view));
	print_table(out, t, 0, 0, SYSTEM_ROWS, t->cur.total_ns, "");
	n = entities(t, false, &list);
	for (i = 0; i < n; i++) {
		format_entity(t, &list[i], false, line, sizeof(line));
		fprintf(out, "\n%s\n", line);
		print_table(out, t, list[i].id, 0, PROCESS_ROWS, list[i].total_ns, "");
	}
	free(list);
	fprintf(out,
		"\nwaits %" PRIu64 ", sampled out %" PRIu64 " (1 in %u kept below %.3f ms), "
		"lost %" PRIu64 "\n\n",
		t->cur.stats[TOP_STAT_WAITS], t->cur.stats[TOP_STAT_SAMPLED_OUT],
		t->opts.sample_ratio, (double)t->opts.sample_below_ns / 1e6,
		t->cur.stats[TOP_STAT_AGG_FULL]);
	fflush(out);
}

static struct json_object *json_rows(const struct top *t, uint32_t tgid, uint32_t tid,
				     enum top_view view, uint64_t total)
{
	struct json_object *arr = json_object_new_array(), *o;
	struct top_row *rows;
	size_t n, i;

	n = top_table(t->cur.waits, t->cur.nr, tgid, tid, view, t->sort, &rows);
	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, view == TOP_VIEW_OBJECT ? "object" : "cause",
				       json_object_new_string(rows[i].label));
		json_object_object_add(o, "count", json_object_new_int64((int64_t)rows[i].count));
		json_object_object_add(o, "total_ns",
				       json_object_new_int64((int64_t)rows[i].sum_ns));
		json_object_object_add(
			o, "avg_ns",
			json_object_new_int64((int64_t)(rows[i].sum_ns / rows[i].count)));
		json_object_object_add(o, "max_ns", json_object_new_int64((int64_t)rows[i].max_ns));
		json_object_object_add(
			o, "percent",
			json_object_new_double(
				total ? 100.0 * (double)rows[i].sum_ns / (double)total : 0.0));
		json_object_array_add(arr, o);
	}
	free(rows);
	return arr;
}

static void print_json(struct top *t, FILE *out)
{
	struct json_object *root = json_object_new_object(), *procs, *o, *thr, *to;
	struct entity *list, *tlist;
	size_t n, nt, i, j;

	json_object_object_add(root, "version", json_object_new_string(LATSNAP_VERSION));
	json_object_object_add(root, "time", json_object_new_int64((int64_t)t->cur.when));
	json_object_object_add(root, "interval_ns",
			       json_object_new_int64((int64_t)t->cur.interval_ns));
	json_object_object_add(root, "total_ns", json_object_new_int64((int64_t)t->cur.total_ns));
	json_object_object_add(root, "waits",
			       json_object_new_int64((int64_t)t->cur.stats[TOP_STAT_WAITS]));
	json_object_object_add(root, "sampled_out",
			       json_object_new_int64((int64_t)t->cur.stats[TOP_STAT_SAMPLED_OUT]));
	json_object_object_add(root, "lost",
			       json_object_new_int64((int64_t)t->cur.stats[TOP_STAT_AGG_FULL]));
	json_object_object_add(root, "stack_failed",
			       json_object_new_int64((int64_t)t->cur.stats[TOP_STAT_STACK_FAILED]));
	json_object_object_add(root, "sample_below_ns",
			       json_object_new_int64((int64_t)t->opts.sample_below_ns));
	json_object_object_add(root, "sample_ratio", json_object_new_int64(t->opts.sample_ratio));
	json_object_object_add(root, "system", json_rows(t, 0, 0, TOP_VIEW_CAUSE, t->cur.total_ns));
	procs = json_object_new_array();
	n = entities(t, false, &list);
	nt = entities(t, true, &tlist);
	for (i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int64(list[i].id));
		json_object_object_add(o, "comm", json_object_new_string(list[i].name));
		json_object_object_add(o, "total_ns",
				       json_object_new_int64((int64_t)list[i].total_ns));
		json_object_object_add(o, "nr_threads",
				       json_object_new_int64((int64_t)list[i].threads));
		json_object_object_add(
			o, "causes", json_rows(t, list[i].id, 0, TOP_VIEW_CAUSE, list[i].total_ns));
		json_object_object_add(o, "objects",
				       json_rows(t, list[i].id, 0, TOP_VIEW_OBJECT,
						 list[i].total_ns));
		thr = json_object_new_array();
		for (j = 0; j < nt; j++) {
			if (tlist[j].tgid != list[i].id) {
				continue;
			}
			to = json_object_new_object();
			json_object_object_add(to, "tid", json_object_new_int64(tlist[j].id));
			json_object_object_add(to, "comm", json_object_new_string(tlist[j].name));
			json_object_object_add(to, "total_ns",
					       json_object_new_int64((int64_t)tlist[j].total_ns));
			json_object_object_add(to, "causes",
					       json_rows(t, 0, tlist[j].id, TOP_VIEW_CAUSE,
							 tlist[j].total_ns));
			json_object_array_add(thr, to);
		}
		json_object_object_add(o, "threads", thr);
		json_object_array_add(procs, o);
	}
	free(list);
	free(tlist);
	json_object_object_add(root, "processes", procs);
	fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	fflush(out);
	json_object_put(root);
}

/* ---- the screen ---- */

static void draw_line(int y, const char *text, bool bold)
{
	if (y >= LINES) {
		return;
	}
	if (bold) {
		attron(A_BOLD);
	}
	mvaddnstr(y, 0, text, COLS);
	if (bold) {
		attroff(A_BOLD);
	}
}

static int draw_table(struct top *t, int y, uint32_t tgid, uint32_t tid, size_t max_rows,
		      uint64_t total)
{
	struct top_row *rows;
	size_t n, i;
	int width = COLS - 53;
	char line[512];

	if (width < 20) {
		width = 20;
	}
	/* Beyond the longest cause text (RULES_MAX_CAUSE is rare), a wider column only spreads. */
	if (width > 64) {
		width = 64;
	}
	n = top_table(t->cur.waits, t->cur.nr, tgid, tid, t->view, t->sort, &rows);
	format_header(line, sizeof(line), t->view == TOP_VIEW_OBJECT ? "Object" : "Cause", width);
	draw_line(y++, line, true);
	for (i = 0; i < n && i < max_rows; i++) {
		format_row(line, sizeof(line), &rows[i], total, width);
		draw_line(y++, line, false);
	}
	free(rows);
	return y + (int)(max_rows - (i < max_rows ? i : max_rows));
}

/* The process bar: the entities around the selected one, arrows where more are hidden. */
static void draw_bar(int y, const struct entity *list, size_t n, size_t sel)
{
	size_t first = sel, last, i;
	int width = COLS - 4, used;
	char item[64];

	if (y >= LINES) {
		return;
	}
	/* Start far enough left to show what comes before, while the selected one fits. */
	used = 0;
	while (first > 0) {
		snprintf(item, sizeof(item), " %s(%u) ", list[first - 1].name, list[first - 1].id);
		if (used + (int)strlen(item) > width / 2) {
			break;
		}
		used += (int)strlen(item);
		first--;
	}
	move(y, 0);
	addstr(first > 0 ? "<- " : "   ");
	used = 3;
	for (i = first; i < n; i++) {
		snprintf(item, sizeof(item), i == sel ? "[%s(%u)]" : " %s(%u) ", list[i].name,
			 list[i].id);
		if (used + (int)strlen(item) > width) {
			break;
		}
		if (i == sel) {
			attron(A_REVERSE);
		}
		addstr(item);
		if (i == sel) {
			attroff(A_REVERSE);
		}
		used += (int)strlen(item);
	}
	last = i;
	if (last < n) {
		mvaddstr(y, COLS - 3, " ->");
	}
}

static void draw(struct top *t)
{
	struct entity *list;
	size_t n, sel;
	char line[512];
	int y = 0, rows;

	erase();
	format_title(t, line, sizeof(line));
	draw_line(y++, line, true);
	y++;
	snprintf(line, sizeof(line), "System wide latencies (%s)", view_name(t->view));
	draw_line(y++, line, true);
	if (!t->cur.when) {
		snprintf(line, sizeof(line), "(collecting the first %.1f s)",
			 (double)t->opts.interval_ns / 1e9);
		draw_line(y, line, false);
	}
	/* A short terminal first gives up system rows beyond 5, then process rows. */
	rows = LINES - 10 - PROCESS_ROWS;
	rows = rows > SYSTEM_ROWS ? SYSTEM_ROWS : rows < 5 ? 5 : rows;
	y = draw_table(t, y, 0, 0, (size_t)rows, t->cur.total_ns);
	y++;
	/* The process bar and the hint line stay at the bottom. */
	rows = LINES - 3 - (y + 2);
	rows = rows > PROCESS_ROWS ? PROCESS_ROWS : rows < 0 ? 0 : rows;
	n = entities(t, t->threads, &list);
	if (n) {
		sel = entity_index(list, n, t->sel_id);
		t->sel_id = list[sel].id;
		format_entity(t, &list[sel], t->threads, line, sizeof(line));
		draw_line(y++, line, true);
		draw_table(t, y, t->threads ? 0 : list[sel].id, t->threads ? list[sel].id : 0,
			   (size_t)rows, list[sel].total_ns);
		draw_bar(LINES - 3, list, n, sel);
	} else {
		draw_line(y, t->threads ? "(no thread waited)" : "(no process waited)", false);
	}
	draw_line(LINES - 1,
		  "< >: previous/next  t: processes/threads  1: causes  2: special  3: objects  "
		  "c/a/m/s: sort by count/average/maximum/total  q: quit",
		  false);
	free(list);
	refresh();
}

/* Moves the selection by @step among the listed processes or threads. */
static void move_selection(struct top *t, int step)
{
	struct entity *list;
	size_t n, sel;

	n = entities(t, t->threads, &list);
	if (n) {
		sel = entity_index(list, n, t->sel_id);
		if (step < 0 && sel > 0) {
			sel--;
		} else if (step > 0 && sel + 1 < n) {
			sel++;
		}
		t->sel_id = list[sel].id;
	}
	free(list);
}

/* Handles one key; false when it asks to quit. */
static bool handle_key(struct top *t, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case '<':
	case ',':
	case KEY_LEFT:
		move_selection(t, -1);
		break;
	case '>':
	case '.':
	case KEY_RIGHT:
		move_selection(t, 1);
		break;
	case 't':
		t->threads = !t->threads;
		t->sel_id = 0;
		break;
	case '1':
		t->view = TOP_VIEW_CAUSE;
		break;
	case '2':
		t->view = TOP_VIEW_SPECIAL;
		break;
	case '3':
		t->view = TOP_VIEW_OBJECT;
		break;
	case 'c':
		t->sort = TOP_SORT_COUNT;
		break;
	case 'a':
		t->sort = TOP_SORT_AVERAGE;
		break;
	case 'm':
		t->sort = TOP_SORT_MAXIMUM;
		break;
	case 's':
		t->sort = TOP_SORT_TOTAL;
		break;
	default:
		break;
	}
	return true;
}

static int run_screen(struct top *t)
{
	uint64_t next = ls_now_ns() + t->opts.interval_ns, now;
	int ch, ret = 0;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		ls_err("top: the live screen needs a terminal (use --batch N for text)");
		return -ENOTTY;
	}
	if (!initscr()) {
		ls_err("top: cannot start the terminal screen");
		return -ENOTTY;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	draw(t);
	while (!stop_requested) {
		now = ls_now_ns();
		if (now >= next) {
			ret = drain(t);
			if (ret) {
				break;
			}
			next = now + t->opts.interval_ns;
			draw(t);
			continue;
		}
		timeout((int)((next - now) / 1000000) + 1);
		ch = getch();
		if (ch == ERR) {
			continue;
		}
		if (ch == KEY_RESIZE) {
			draw(t);
			continue;
		}
		if (!handle_key(t, ch)) {
			break;
		}
		draw(t);
	}
	endwin();
	return ret;
}

static int run_batch(struct top *t)
{
	struct timespec ts;
	uint64_t end, now;
	long i;
	int ret = 0;

	for (i = 0; i < t->opts.batch && !stop_requested; i++) {
		end = ls_now_ns() + t->opts.interval_ns;
		while (!stop_requested && (now = ls_now_ns()) < end) {
			ts.tv_sec = (time_t)((end - now) / 1000000000ull);
			ts.tv_nsec = (long)((end - now) % 1000000000ull);
			nanosleep(&ts, NULL);
		}
		if (stop_requested) {
			break;
		}
		ret = drain(t);
		if (ret) {
			break;
		}
		if (t->opts.json) {
			print_json(t, stdout);
		} else {
			print_text(t, stdout);
		}
		if (ferror(stdout)) {
			ls_err("top: writing to stdout: %s", strerror(errno));
			ret = -EIO;
			break;
		}
	}
	return ret;
}

/* ---- set-up ---- */

static void mark_syscalls(struct top_bpf *skel)
{
	static const char *const fds[] = {
		"read",	       "write",		  "readv",    "writev",	  "pread64",
		"pwrite64",    "preadv",	  "pwritev",  "preadv2",  "pwritev2",
		"recvfrom",    "recvmsg",	  "recvmmsg", "sendto",	  "sendmsg",
		"sendmmsg",    "accept",	  "accept4",  "connect",  "fsync",
		"fdatasync",   "sync_file_range", "flock",    "ioctl",	  "epoll_wait",
		"epoll_pwait", "epoll_pwait2",	  "splice",   "sendfile", "fcntl",
	};
	volatile __u8 *obj = (volatile __u8 *)skel->rodata->obj_syscalls;
	size_t i;
	int nr;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		nr = syscall_number(fds[i]);
		if (nr >= 0 && nr < TOP_MAX_SYSCALLS) {
			obj[nr] = TOP_OBJ_FD;
		}
	}
	nr = syscall_number("futex");
	if (nr >= 0 && nr < TOP_MAX_SYSCALLS) {
		obj[nr] = TOP_OBJ_FUTEX;
	}
}

static int top_open(struct top *t)
{
	int err;

	libbpf_log_init();
	if (kernel_check("top", KERNEL_FOR_TOP)) {
		return -ENOTSUP;
	}
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		ls_err("top: cannot count possible CPUs");
		return -EINVAL;
	}
	t->skel = top_bpf__open();
	if (!t->skel) {
		err = -errno;
		ls_err("top: cannot open the BPF program: %s", strerror(errno));
		return err;
	}
	t->skel->rodata->self_tgid = (__u32)getpid();
	t->skel->rodata->sample_below_ns = t->opts.sample_below_ns;
	t->skel->rodata->sample_ratio = t->opts.sample_ratio;
	t->skel->rodata->include_kthreads = t->opts.kthreads;
	mark_syscalls(t->skel);
	err = top_bpf__load(t->skel);
	if (err) {
		ls_err("top: cannot load the BPF program: %s (root and a kernel with BTF are "
		       "needed; -v says more)",
		       strerror(-err));
		return err;
	}
	t->ksyms = ksyms_load(NULL);
	if (!t->ksyms) {
		err = -errno;
		ls_err("top: /proc/kallsyms: %s (kernel stacks need root and readable kernel "
		       "addresses)",
		       strerror(errno));
		return err;
	}
	err = top_bpf__attach(t->skel);
	if (err) {
		ls_err("top: cannot attach the BPF program: %s", strerror(-err));
		return err;
	}
	t->last_drain_ns = ls_now_ns();
	return 0;
}

static void top_close(struct top *t)
{
	period_free(&t->cur);
	top_bpf__destroy(t->skel);
	ksyms_free(t->ksyms);
	rules_free(t->own_rules);
	if (t->causes) {
		tdestroy(t->causes, free_cause);
	}
	if (t->uncached) {
		tdestroy(t->uncached, free);
	}
}

enum {
	OPT_RULES = 0x100,
	OPT_SAMPLE_BELOW,
	OPT_SAMPLE_RATIO,
};

static int parse_args(struct top_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "batch", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "kernel-threads", no_argument, NULL, 'k' },
		{ "rules", required_argument, NULL, OPT_RULES },
		{ "sample-below", required_argument, NULL, OPT_SAMPLE_BELOW },
		{ "sample-ratio", required_argument, NULL, OPT_SAMPLE_RATIO },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long n;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:b:jp:kvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (ls_parse_duration(optarg, &o->interval_ns) ||
			    o->interval_ns < 100000000ull || o->interval_ns > 3600000000000ull) {
				ls_err("top: bad interval '%s' (a duration from 100ms to 1h, such "
				       "as 5s)",
				       optarg);
				return 2;
			}
			break;
		case 'b':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > 1000000) {
				ls_err("top: bad --batch '%s' (a number of refreshes, 1 or more)",
				       optarg);
				return 2;
			}
			o->batch = n;
			break;
		case 'j':
			o->json = true;
			break;
		case 'k':
			o->kthreads = true;
			break;
		case 'p':
			if (o->nr_pids == MAX_PIDS) {
				ls_err("top: too many --pid (at most %d)", MAX_PIDS);
				return 2;
			}
			if (ls_parse_pid(optarg, &o->pids[o->nr_pids])) {
				ls_err("top: bad pid '%s'", optarg);
				return 2;
			}
			o->nr_pids++;
			break;
		case OPT_RULES:
			o->rules_path = optarg;
			break;
		case OPT_SAMPLE_BELOW:
			if (ls_parse_duration(optarg, &o->sample_below_ns)) {
				ls_err("top: bad --sample-below '%s' (a duration such as 1ms)",
				       optarg);
				return 2;
			}
			break;
		case OPT_SAMPLE_RATIO:
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > 1000000) {
				ls_err("top: bad --sample-ratio '%s' (1 to 1000000)", optarg);
				return 2;
			}
			o->sample_ratio = (uint32_t)n;
			break;
		case 'v':
			ls_verbose_enabled = true;
			break;
		case 'h':
			fputs(top_usage, stdout);
			return -1;
		case ':':
			ls_err("top: option '%s' needs a value (see latsnap top --help)",
			       argv[optind - 1]);
			return 2;
		default:
			ls_err("top: unknown option '%s' (see latsnap top --help)",
			       argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		ls_err("top: unexpected argument '%s' (see latsnap top --help)", argv[optind]);
		return 2;
	}
	if (o->json && !o->batch) {
		ls_err("top: --json needs --batch N (the live screen is not JSON)");
		return 2;
	}
	return 0;
}

/**
 * top_main() - `latsnap top`: the live LatencyTOP screen, or --batch refreshes
 * @argc: argument count, the command name included
 * @argv: "top", then the options
 *
 * Return: the exit status: 0, 1 on a runtime failure, 2 on a usage error.
 */
int top_main(int argc, char **argv)
{
	struct top t = { .view = TOP_VIEW_CAUSE, .sort = TOP_SORT_TOTAL };
	struct sigaction sa = { .sa_handler = on_stop };
	int ret;

	t.opts.interval_ns = 5000000000ull;
	t.opts.sample_below_ns = 1000000;
	t.opts.sample_ratio = 100;
	ret = parse_args(&t.opts, argc, argv);
	if (ret) {
		return ret < 0 ? 0 : ret;
	}
	if (t.opts.rules_path) {
		if (rules_load(t.opts.rules_path, &t.own_rules)) {
			return 2;
		}
		t.rules = t.own_rules;
	} else {
		t.rules = rules_builtin();
		if (!t.rules) {
			return 1;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = top_open(&t);
	if (!ret) {
		ret = t.opts.batch ? run_batch(&t) : run_screen(&t);
	}
	top_close(&t);
	return ret ? 1 : 0;
}
