// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - `latsnap report [--json] [--by cause|process|syscall|host|request] DIR`
 *
 * Every outlier of every complete snapshot of DIR, grouped like LatencyTOP groups its causes:
 * count, average, maximum and share of the outlier time, largest total first; system-wide, then
 * per process. Each group's durations also go into a log2 histogram, printed like DTrace's
 * quantize(). Snapshots that cannot be read are listed with the reason and left out.
 *
 * A wait reported more than once (record --hang: still-blocked while it waited, then ended or
 * unfinished) is counted once, by the report of it that counts (snapshots_waits()), and listed
 * under "Stalls" with who held what it waited for; a deadlock's threads are listed together.
 *
 * --by request groups the request outliers (record --request) alone: by probe pair, and a USDT
 * probe pair's by the text of the start probe's first argument (a PostgreSQL backend's query).
 *
 * The waits record's idle policy judged waiting for work (each summary's "idle" list) are not
 * latency: they are in none of the tables, only in a section of their own, by thread and place.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/outlier.h"
#include "review/html.h"
#include "review/report.h"
#include "review/show.h"
#include "review/snapshots.h"
#include "lib/util.h"

#define HIST_BUCKETS 65
/* --html has no short option. */
#define OPT_HTML 1000
#define HIST_WIDTH 40
#define KEY_WIDTH_MIN 24
#define KEY_WIDTH_MAX 48
/* --by request: the widest request text of a table row (the query, cut with "..."). */
#define REQUEST_WIDTH_MAX 60
/* The text's idle section lists this many threads and places at most, then how many more. */
#define IDLE_ROWS_MAX 20
/* The longest waits listed, each with what held it up. */
#define LONGEST_ROWS 10

enum group_by { BY_CAUSE, BY_PROCESS, BY_SYSCALL, BY_HOST, BY_REQUEST, NR_BY };

static const char *const by_names[] = { "cause", "process", "syscall", "host", "request" };

struct table;

/*
 * One row of a table: the outliers that share a key. A row of requests (--by request) also
 * has their probe pair, their argument when they are grouped by it (else NULL), the text that
 * names it (@label: the argument, or the probe pair) and the table of their causes.
 */
struct group {
	char *key;
	uint64_t count;
	uint64_t total_ns;
	uint64_t max_ns;
	/* [0]: 0 ns; [k + 1]: 2^k .. 2^(k+1) - 1 ns. */
	uint64_t hist[HIST_BUCKETS];
	char *probe;
	char *arg;
	char *label;
	struct table *causes;
};

struct table {
	struct group *groups;
	size_t nr, cap;
	uint64_t count;
	uint64_t total_ns;
};

struct process {
	char *host; /* pids are per host */
	int64_t pid;
	char *comm;
	bool named_by_main; /* @comm is the main thread's (tid == pid) */
	int64_t *tids;
	size_t nr_tids, cap_tids;
	struct table table;
};

/*
 * A stalled wait (struct snapshot_wait's @stalled). @cycle: the deadlock it is part of (its
 * threads joined by their holders), numbered from 0 in the order the report lists them; -1 for
 * a wait that is not in a deadlock. @pos: where it came among the waits.
 */
struct stall {
	const struct snapshot_wait *w;
	int cycle;
	size_t pos;
};

struct report {
	enum group_by by;
	struct table system;
	struct table hosts; /* the same outliers by host */
	struct process *procs;
	size_t nr_procs, cap_procs;
	uint64_t skipped;
	struct snapshot_wait *waits; /* every wait once; they point into the snapshot set */
	size_t nr_waits;
	struct stall *stalls; /* deadlocks first, a cycle's threads together; then longest first */
	size_t nr_stalls;
	int nr_cycles;
	uint64_t not_requests; /* --by request: the outliers left out, not being requests */
	struct snapshot_idle *idle; /* idle waits by thread and place, largest total first */
	size_t nr_idle;
	uint64_t idle_count;
	uint64_t idle_total_ns;
};

static const char report_usage[] =
	"Usage: latsnap report [--json | --html FILE] [--by cause|process|syscall|host|request]\n"
	"                      [--host NAME] DIR\n"
	"\n"
	"A LatencyTOP-style table of the outliers of every snapshot in DIR (an output directory\n"
	"of latsnap record, or an lttng-relayd output tree of many hosts): count, average, maximum and share of the outlier time of each cause,\n"
	"system-wide and per process, with each group's latency distribution (log2 histogram).\n"
	"Incomplete and corrupt snapshots are listed with the reason; the rest are reported.\n"
	"Idle waits (threads waiting for work, record's idle policy) are listed apart: they are\n"
	"not latency and are in none of the tables.\n"
	"\n"
	"  -j, --json         the same data as one JSON object (see latsnap(1))\n"
	"      --html FILE    the same as one self-contained HTML page in FILE (tables, the\n"
	"                     distributions as bars), linking to a page per complete snapshot\n"
	"                     (latsnap show --html) written into the directory FILE-snapshots/\n"
	"                     (FILE without its .html)\n"
	"  -b, --by KEY       group by cause (default), process, syscall or host; or the\n"
	"                     requests (record --request) alone by request: probe pair and\n"
	"                     query (the first argument of a USDT start probe)\n"
	"  -H, --host NAME    only the snapshots recorded on host NAME\n"
	"  -h, --help         this help\n";

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

static int hist_bucket(uint64_t ns)
{
	return ns ? 64 - __builtin_clzll(ns) : 0;
}

/* Adds @ns to the row @key of @t, made if need be; *@gp (when not NULL): the row, or NULL. */
static int table_add_row(struct table *t, const char *key, uint64_t ns, struct group **gp)
{
	struct group *g = NULL, *grown;
	size_t i;
	int ret = 0;

	for (i = 0; i < t->nr; i++) {
		if (!strcmp(t->groups[i].key, key)) {
			g = &t->groups[i];
			break;
		}
	}
	if (!g) {
		if (t->nr == t->cap) {
			grown = realloc(t->groups, (t->cap ? t->cap * 2 : 8) * sizeof(*grown));
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			t->groups = grown;
			t->cap = t->cap ? t->cap * 2 : 8;
		}
		g = &t->groups[t->nr];
		memset(g, 0, sizeof(*g));
		g->key = strdup(key);
		if (!g->key) {
			ret = -ENOMEM;
			goto out;
		}
		t->nr++;
	}
	g->count++;
	g->total_ns = sat_add(g->total_ns, ns);
	if (ns > g->max_ns) {
		g->max_ns = ns;
	}
	g->hist[hist_bucket(ns)]++;
	t->count++;
	t->total_ns = sat_add(t->total_ns, ns);
out:
	if (gp) {
		*gp = ret ? NULL : g;
	}
	return ret;
}

static int table_add(struct table *t, const char *key, uint64_t ns)
{
	return table_add_row(t, key, ns, NULL);
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->total_ns != y->total_ns) {
		return x->total_ns > y->total_ns ? -1 : 1;
	}
	return strcmp(x->key, y->key);
}

static void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		free(t->groups[i].key);
		free(t->groups[i].probe);
		free(t->groups[i].arg);
		free(t->groups[i].label);
		if (t->groups[i].causes) {
			table_free(t->groups[i].causes);
			free(t->groups[i].causes);
		}
	}
	free(t->groups);
	memset(t, 0, sizeof(*t));
}

static struct process *process_get(struct report *r, const char *host, int64_t pid)
{
	struct process *p = NULL, *grown;
	size_t i;

	for (i = 0; i < r->nr_procs; i++) {
		if (r->procs[i].pid == pid && !strcmp(r->procs[i].host, host)) {
			p = &r->procs[i];
			goto out;
		}
	}
	if (r->nr_procs == r->cap_procs) {
		grown = realloc(r->procs, (r->cap_procs ? r->cap_procs * 2 : 8) * sizeof(*grown));
		if (!grown) {
			goto out;
		}
		r->procs = grown;
		r->cap_procs = r->cap_procs ? r->cap_procs * 2 : 8;
	}
	p = &r->procs[r->nr_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->host = strdup(host);
	if (!p->host) {
		p = NULL;
		goto out;
	}
	r->nr_procs++;
out:
	return p;
}

static int process_add_tid(struct process *p, int64_t tid)
{
	int64_t *grown;
	int ret = 0;
	size_t i;

	for (i = 0; i < p->nr_tids; i++) {
		if (p->tids[i] == tid) {
			goto out;
		}
	}
	if (p->nr_tids == p->cap_tids) {
		grown = realloc(p->tids, (p->cap_tids ? p->cap_tids * 2 : 8) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			goto out;
		}
		p->tids = grown;
		p->cap_tids = p->cap_tids ? p->cap_tids * 2 : 8;
	}
	p->tids[p->nr_tids++] = tid;
out:
	return ret;
}

/* The name of a process: its main thread's comm when that thread had an outlier. */
static int process_name(struct process *p, const struct outlier *o)
{
	const char *comm = o->comm ? o->comm : "?";
	bool main_thread = o->tid == p->pid;
	int ret = 0;
	char *copy;

	if (p->comm && (p->named_by_main || !main_thread)) {
		goto out;
	}
	copy = strdup(comm);
	if (!copy) {
		ret = -ENOMEM;
		goto out;
	}
	free(p->comm);
	p->comm = copy;
	p->named_by_main = main_thread;
out:
	return ret;
}

/* @text on one line into @buf: each run of blanks and control characters one space, trimmed. */
static void one_line(const char *text, char *buf, size_t len)
{
	const unsigned char *p;
	bool blank = false;
	size_t n = 0;

	for (p = (const unsigned char *)text; *p && n + 1 < len; p++) {
		if (*p <= ' ' || *p == 0x7f) {
			blank = n > 0;
			continue;
		}
		if (blank && n + 2 < len) {
			buf[n++] = ' ';
		}
		blank = false;
		buf[n++] = (char)*p;
	}
	buf[n] = '\0';
}

/* Are the requests of @o grouped by their argument: a USDT probe pair's that has one? */
static bool by_argument(const struct outlier *o)
{
	return o->request && o->request->probe && o->request->arg &&
	       !strncmp(o->request->probe, "usdt:", 5);
}

/* The key of a request's row: its probe pair, and its argument on one line when grouped by it. */
static void request_key(const struct outlier *o, char *buf, size_t len)
{
	const char *probe = o->request && o->request->probe ? o->request->probe : "?";
	int n;

	if (!by_argument(o)) {
		snprintf(buf, len, "%s\n-", probe);
		return;
	}
	n = snprintf(buf, len, "%s\n=", probe);
	if (n >= 0 && (size_t)n < len) {
		one_line(o->request->arg, buf + n, len - (size_t)n);
	}
}

static void key_of(const struct outlier *o, const char *host, enum group_by by, char *buf,
		   size_t len)
{
	switch (by) {
	case BY_REQUEST:
		request_key(o, buf, len);
		break;
	case BY_HOST:
		snprintf(buf, len, "%s", host);
		break;
	case BY_PROCESS:
		/* Named later, once every thread is known; host and pid are the key. */
		snprintf(buf, len, "%s/%" PRId32, host, o->pid);
		break;
	case BY_SYSCALL:
		snprintf(buf, len, "%s",
			 o->syscall		    ? o->syscall :
			 o->kind == OUTLIER_REQUEST ? "(request)" :
						      "(off-CPU, no syscall)");
		break;
	case BY_CAUSE:
	default:
		snprintf(buf, len, "%s", o->cause ? o->cause : "?");
		break;
	}
}

/* A new row of requests (--by request), of the requests of @o's: its probe pair, argument, label. */
static int request_row(struct group *g, const struct outlier *o)
{
	const char *probe = o->request && o->request->probe ? o->request->probe : "?";
	size_t len;

	g->causes = calloc(1, sizeof(*g->causes));
	if (!g->causes || outlier_set_str(&g->probe, probe)) {
		return -ENOMEM;
	}
	if (by_argument(o)) {
		len = strlen(o->request->arg) + 1;
		g->arg = malloc(len);
		if (!g->arg) {
			return -ENOMEM;
		}
		one_line(o->request->arg, g->arg, len);
	}
	return outlier_set_str(&g->label, g->arg ? g->arg : probe);
}

/* @o's @ns into the row @key of @t; a request's (--by request) also into the row's causes. */
static int add_row(struct table *t, const struct outlier *o, const char *key, uint64_t ns,
		   enum group_by by)
{
	struct group *g;
	int ret;

	ret = table_add_row(t, key, ns, &g);
	if (ret || by != BY_REQUEST) {
		return ret;
	}
	if (!g->causes) {
		ret = request_row(g, o);
		if (ret) {
			return ret;
		}
	}
	return table_add(g->causes, o->cause ? o->cause : "?", ns);
}

static int report_add(struct report *r, const struct outlier *o, const char *host)
{
	uint64_t ns = o->duration_ns;
	enum group_by inner = r->by == BY_PROCESS || r->by == BY_HOST ? BY_CAUSE : r->by;
	struct process *p;
	char key[2048];
	int ret;

	if (r->by == BY_REQUEST && o->kind != OUTLIER_REQUEST) {
		r->not_requests++;
		return 0;
	}
	key_of(o, host, r->by, key, sizeof(key));
	ret = add_row(&r->system, o, key, ns, r->by);
	if (!ret) {
		ret = table_add(&r->hosts, host, ns);
	}
	if (ret) {
		goto out;
	}
	p = process_get(r, host, o->pid);
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	ret = process_name(p, o);
	if (!ret) {
		ret = process_add_tid(p, o->tid);
	}
	if (ret) {
		goto out;
	}
	key_of(o, host, inner, key, sizeof(key));
	ret = add_row(&p->table, o, key, ns, inner);
out:
	return ret;
}

static int cmp_process(const void *a, const void *b)
{
	const struct process *x = a, *y = b;

	if (x->table.total_ns != y->table.total_ns) {
		return x->table.total_ns > y->table.total_ns ? -1 : 1;
	}
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* With --by process the system-wide keys are pids; name them "comm (pid)" now. */
static int name_process_keys(struct report *r)
{
	bool many_hosts = r->hosts.nr > 1;
	char name[512];
	size_t i, j;
	char *copy;

	for (i = 0; i < r->system.nr; i++) {
		for (j = 0; j < r->nr_procs; j++) {
			snprintf(name, sizeof(name), "%s/%" PRId64, r->procs[j].host,
				 r->procs[j].pid);
			if (strcmp(name, r->system.groups[i].key)) {
				continue;
			}
			snprintf(name, sizeof(name), "%s (%" PRId64 ")%s%s", r->procs[j].comm,
				 r->procs[j].pid, many_hosts ? " on " : "",
				 many_hosts ? r->procs[j].host : "");
			copy = strdup(name);
			if (!copy) {
				return -ENOMEM;
			}
			free(r->system.groups[i].key);
			r->system.groups[i].key = copy;
			break;
		}
	}
	return 0;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_table(FILE *out, const struct table *t, const char *title)
{
	char avg[LS_DURATION_BUFSZ], max[LS_DURATION_BUFSZ];
	int width = KEY_WIDTH_MIN;
	size_t i;

	for (i = 0; i < t->nr; i++) {
		if ((int)strlen(t->groups[i].key) > width) {
			width = (int)strlen(t->groups[i].key);
		}
	}
	if (width > KEY_WIDTH_MAX) {
		width = KEY_WIDTH_MAX;
	}
	fprintf(out, "%-*s %7s %12s %12s %11s\n", width, title, "Count", "Average", "Maximum",
		"Percentage");
	for (i = 0; i < t->nr; i++) {
		const struct group *g = &t->groups[i];

		ls_format_duration(g->total_ns / g->count, avg, sizeof(avg));
		ls_format_duration(g->max_ns, max, sizeof(max));
		fprintf(out, "%-*.*s %7" PRIu64 " %12s %12s %10.1f%%\n", width, width, g->key,
			g->count, avg, max, percent(g->total_ns, t->total_ns));
	}
}

/* The start probe of @probe ("START,END") as a short name: PROVIDER:NAME of usdt:, or SYMBOL. */
static void probe_short(const char *probe, char *buf, size_t len)
{
	size_t n = strcspn(probe, ","), colons = 0;
	const char *p = probe + n;

	/* Back from the end of START to the colon before its name (usdt: before its provider). */
	while (p > probe) {
		if (p[-1] == ':' && ++colons == (strncmp(probe, "usdt:", 5) ? 1U : 2U)) {
			break;
		}
		p--;
	}
	snprintf(buf, len, "%.*s", (int)(n - (size_t)(p - probe)), p);
}

/* How many probe pairs the rows of requests of @t have. */
static size_t table_probes(const struct table *t)
{
	size_t i, j, n = 0;

	for (i = 0; i < t->nr; i++) {
		for (j = 0; j < i && strcmp(t->groups[j].probe, t->groups[i].probe); j++) {
		}
		n += j == i;
	}
	return n;
}

/*
 * The text of a row of requests, at most REQUEST_WIDTH_MAX bytes (cut on a character, with
 * "..."): the argument, after its start probe's short name when the table has several pairs.
 */
static void request_label(const struct group *g, bool many_probes, char *buf, size_t len)
{
	char name[128], text[2048];
	size_t n;

	if (g->arg && many_probes) {
		probe_short(g->probe, name, sizeof(name));
		snprintf(text, sizeof(text), "%s: %s", name, g->arg);
	} else {
		snprintf(text, sizeof(text), "%s", g->label);
	}
	n = strlen(text);
	if (n > REQUEST_WIDTH_MAX) {
		n = REQUEST_WIDTH_MAX - 3;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80) {
			n--;
		}
		memcpy(text + n, "...", 4);
	}
	snprintf(buf, len, "%s", text);
}

/* The cause of most of a row of requests' time (their causes are sorted, largest first). */
static const char *top_cause(const struct group *g)
{
	return g->causes && g->causes->nr ? g->causes->groups[0].key : "?";
}

/* A table of requests: each row's request text, its numbers, and the cause of most of its time. */
static void print_request_table(FILE *out, const struct table *t)
{
	char avg[LS_DURATION_BUFSZ], max[LS_DURATION_BUFSZ], label[REQUEST_WIDTH_MAX + 8];
	bool many_probes = table_probes(t) > 1;
	int width = KEY_WIDTH_MIN;
	size_t i;

	for (i = 0; i < t->nr; i++) {
		request_label(&t->groups[i], many_probes, label, sizeof(label));
		if ((int)strlen(label) > width) {
			width = (int)strlen(label);
		}
	}
	fprintf(out, "%-*s %7s %12s %12s %11s  %s\n", width, "Request", "Count", "Average",
		"Maximum", "Percentage", "Cause (most of the time)");
	if (!t->nr) {
		fprintf(out, "  (no requests: record --request START,END records them)\n");
	}
	for (i = 0; i < t->nr; i++) {
		const struct group *g = &t->groups[i];

		request_label(g, many_probes, label, sizeof(label));
		ls_format_duration(g->total_ns / g->count, avg, sizeof(avg));
		ls_format_duration(g->max_ns, max, sizeof(max));
		fprintf(out, "%-*s %7" PRIu64 " %12s %12s %10.1f%%  %s\n", width, label, g->count,
			avg, max, percent(g->total_ns, t->total_ns), top_cause(g));
	}
}

/* DTrace's quantize() output: the buckets from one below the lowest to one above the highest. */
static void print_hist(FILE *out, const struct group *g)
{
	char value[LS_DURATION_BUFSZ];
	int lo = HIST_BUCKETS, hi = -1, b, bars;

	for (b = 0; b < HIST_BUCKETS; b++) {
		if (g->hist[b]) {
			lo = b < lo ? b : lo;
			hi = b;
		}
	}
	if (hi < 0) {
		return;
	}
	lo = lo > 0 ? lo - 1 : 0;
	hi = hi + 1 < HIST_BUCKETS ? hi + 1 : hi;
	fprintf(out, "  %s\n  %14s  ------------- Distribution ------------- count\n",
		g->label ? g->label : g->key, "value");
	for (b = lo; b <= hi; b++) {
		ls_format_duration(b ? 1ULL << (b - 1) : 0, value, sizeof(value));
		bars = (int)((g->hist[b] * HIST_WIDTH + g->count / 2) / g->count);
		fprintf(out, "  %14s |%.*s%*s %" PRIu64 "\n", value, bars,
			"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", HIST_WIDTH - bars, "",
			g->hist[b]);
	}
	fputc('\n', out);
}

/* --- stalls -------------------------------------------------------------------------------- */

static const char *wait_host(const struct snapshot_wait *w)
{
	return w->snap && w->snap->host ? w->snap->host : "";
}

/* Is @h (a holder) the thread of the stall @st, on @host? */
static bool is_holder(const struct outlier_holder *h, const char *host, const struct stall *st)
{
	return h && h->tid == st->w->o->tid && h->pid == st->w->o->pid &&
	       !strcmp(host, wait_host(st->w));
}

/* Is @st's thread one of the deadlock @d's (its cycle as the recorder wrote it)? */
static bool in_cycle(const struct outlier_deadlock *d, const char *host, const struct stall *st)
{
	size_t i;

	for (i = 0; d && i < d->nr; i++) {
		if (d->threads[i].tid == st->w->o->tid && d->threads[i].pid == st->w->o->pid &&
		    !strcmp(host, wait_host(st->w))) {
			return true;
		}
	}
	return false;
}

static size_t find_root(size_t *root, size_t i)
{
	while (root[i] != i) {
		root[i] = root[root[i]];
		i = root[i];
	}
	return i;
}

static int cmp_stall(const void *a, const void *b)
{
	const struct stall *x = a, *y = b;

	if ((x->cycle < 0) != (y->cycle < 0)) {
		return x->cycle < 0 ? 1 : -1;
	}
	if (x->cycle != y->cycle) {
		return x->cycle < y->cycle ? -1 : 1;
	}
	if (x->cycle < 0 && x->w->o->duration_ns != y->w->o->duration_ns) {
		return x->w->o->duration_ns > y->w->o->duration_ns ? -1 : 1;
	}
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * The stalled waits of @r into @r->stalls; the deadlocked ones into cycles: a thread and the
 * threads of its "deadlock", or (a summary written before it) the thread holding what it waits
 * for, both deadlocked, are in the same one.
 */
static int find_stalls(struct report *r)
{
	size_t i, j, n = 0, *root = NULL;
	int *cycle_of = NULL, ret = -ENOMEM;

	r->stalls = calloc(r->nr_waits ? r->nr_waits : 1, sizeof(*r->stalls));
	if (!r->stalls) {
		goto out;
	}
	for (i = 0; i < r->nr_waits; i++) {
		if (r->waits[i].stalled) {
			r->stalls[n++] = (struct stall){ .w = &r->waits[i], .cycle = -1, .pos = i };
		}
	}
	r->nr_stalls = n;
	root = malloc((n ? n : 1) * sizeof(*root));
	cycle_of = malloc((n ? n : 1) * sizeof(*cycle_of));
	if (!root || !cycle_of) {
		goto out;
	}
	for (i = 0; i < n; i++) {
		root[i] = i;
		cycle_of[i] = -1;
	}
	for (i = 0; i < n; i++) {
		if (!snapshots_is_deadlock(r->stalls[i].w->o)) {
			continue;
		}
		for (j = 0; j < n; j++) {
			if (j != i && snapshots_is_deadlock(r->stalls[j].w->o) &&
			    (in_cycle(r->stalls[i].w->o->deadlock, wait_host(r->stalls[i].w),
				      &r->stalls[j]) ||
			     is_holder(r->stalls[i].w->holder, wait_host(r->stalls[i].w),
				       &r->stalls[j]))) {
				root[find_root(root, i)] = find_root(root, j);
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (snapshots_is_deadlock(r->stalls[i].w->o)) {
			j = find_root(root, i);
			if (cycle_of[j] < 0) {
				cycle_of[j] = r->nr_cycles++;
			}
			r->stalls[i].cycle = cycle_of[j];
		}
	}
	ls_sort(r->stalls, n, sizeof(*r->stalls), cmp_stall);
	ret = 0;
out:
	free(root);
	free(cycle_of);
	return ret;
}

static void print_who(FILE *out, const char *comm, int32_t pid, int32_t tid)
{
	fprintf(out, "%s[%" PRId32 "/%" PRId32 "]", comm ? comm : "?", pid, tid);
}

/* "comm[pid/tid] syscall, 2.000 s so far, still-blocked: cause; held by comm[pid/tid] (what)" */
static void print_stall(FILE *out, const struct stall *st, const char *indent, bool many_hosts)
{
	const struct outlier *o = st->w->o;
	const struct outlier_holder *h = st->w->holder;
	enum snapshot_wait_state state = snapshots_wait_state(o);
	char dur[LS_DURATION_BUFSZ];

	ls_format_duration(o->duration_ns, dur, sizeof(dur));
	fputs(indent, out);
	print_who(out, o->comm, o->pid, o->tid);
	if (many_hosts) {
		fprintf(out, " on %s", wait_host(st->w));
	}
	fprintf(out, " %s, %s%s, %s: %s", o->syscall ? o->syscall : "off-cpu", dur,
		state == SNAPSHOT_WAIT_ENDED ? "" : " so far", snapshots_wait_state_name(state),
		o->cause ? o->cause : "unknown");
	if (h) {
		fputs("; held by ", out);
		print_who(out, h->comm, h->pid, h->tid);
		if (h->what) {
			fprintf(out, " (%s)", h->what);
		}
	}
	fputc('\n', out);
}

static void print_stall_who(FILE *out, const struct stall *st)
{
	print_who(out, st->w->o->comm, st->w->o->pid, st->w->o->tid);
}

/* Does the thread of @from wait for what the thread of @to holds? */
static bool waits_for(const struct stall *from, const struct stall *to)
{
	return is_holder(from->w->holder, wait_host(from->w), to);
}

/*
 * The deadlock of the stalls @st[0..@n): "Deadlock of N threads: a[1/2] -> b[1/3] -> a[1/2]",
 * then each thread, in the order they wait for each other.
 */
static void print_cycle(FILE *out, const struct stall *st, size_t n, bool many_hosts)
{
	size_t *order = calloc(n, sizeof(*order)), placed = 0, i, k, cur, start = 0;
	const struct outlier_holder *h;
	bool *done = calloc(n, sizeof(*done)), linked;

	if (!order || !done) {
		/* Without memory for the order, the threads as they come. */
		for (i = 0; i < n; i++) {
			print_stall(out, &st[i], "  ", many_hosts);
		}
		goto out;
	}
	/* Each chain from its first thread on, along the holders. */
	while (placed < n) {
		for (cur = 0; done[cur]; cur++) {
		}
		for (;;) {
			done[cur] = true;
			order[placed++] = cur;
			for (k = 0; k < n && (done[k] || !waits_for(&st[cur], &st[k])); k++) {
			}
			if (k == n) {
				break;
			}
			cur = k;
		}
	}
	fprintf(out, "  Deadlock of %zu thread%s: ", n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		if (i) {
			linked = waits_for(&st[order[i - 1]], &st[order[i]]);
			fputs(linked ? " -> " : "; ", out);
			start = linked ? start : i;
		}
		print_stall_who(out, &st[order[i]]);
	}
	h = st[order[n - 1]].w->holder;
	if (waits_for(&st[order[n - 1]], &st[order[start]])) {
		fputs(" -> ", out);
		print_stall_who(out, &st[order[start]]);
	} else if (h) {
		fputs(" -> ", out);
		print_who(out, h->comm, h->pid, h->tid);
	}
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		print_stall(out, &st[order[i]], "    ", many_hosts);
	}
out:
	free(order);
	free(done);
}

/* "Stalls": the deadlocks, a cycle at a time, then the other stalled waits; nothing if none. */
static void print_stalls(FILE *out, const struct report *r)
{
	bool many_hosts = r->hosts.nr > 1;
	size_t i, j;

	if (!r->nr_stalls) {
		return;
	}
	fprintf(out, "Stalls (waits reported while still blocked, and deadlocks):\n");
	for (i = 0; i < r->nr_stalls; i = j) {
		for (j = i + 1; r->stalls[i].cycle >= 0 && j < r->nr_stalls &&
				r->stalls[j].cycle == r->stalls[i].cycle;
		     j++) {
		}
		if (r->stalls[i].cycle >= 0) {
			print_cycle(out, &r->stalls[i], j - i, many_hosts);
		} else {
			print_stall(out, &r->stalls[i], "  ", many_hosts);
		}
	}
	fputc('\n', out);
}

/* --- the longest waits --------------------------------------------------------------------- */

/*
 * The nearest thread of the wait chain of @w (the one that woke it, with what it did
 * meanwhile), or NULL.
 */
static const struct outlier_link *held_up_by(const struct snapshot_wait *w)
{
	const struct outlier *o = w->o;
	size_t i;

	for (i = 0; i < o->nr_links; i++) {
		if (o->wait_chain[i].depth == 1) {
			return &o->wait_chain[i];
		}
	}
	return NULL;
}

/*
 * The wait of the link @l's thread that covers most of @l, among the report's waits (the holder
 * itself waiting, as a row lock's holder in its own sleep), or NULL.
 */
static const struct outlier *link_wait(const struct report *r, const struct snapshot_wait *w,
				       const struct outlier_link *l)
{
	const struct outlier *best = NULL;
	uint64_t best_ns = 0, from, to;
	size_t i;

	for (i = 0; i < r->nr_waits; i++) {
		const struct outlier *o = r->waits[i].o;

		if (o->pid != l->pid || o->tid != l->tid ||
		    strcmp(wait_host(&r->waits[i]), wait_host(w))) {
			continue;
		}
		from = o->start_ns > l->from_ns ? o->start_ns : l->from_ns;
		to = o->end_ns < l->to_ns ? o->end_ns : l->to_ns;
		if (to > from && to - from > best_ns) {
			best = o;
			best_ns = to - from;
		}
	}
	/* Half of the link at least: a wait that only brushes it did not hold it up. */
	return best && best_ns * 2 >= l->to_ns - l->from_ns ? best : NULL;
}

/* The waits to list as the longest: @idx[0..return) into r->waits, longest first. */
static size_t longest_waits(const struct report *r, size_t *idx, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < r->nr_waits; i++) {
		if (r->by == BY_REQUEST && r->waits[i].o->kind != OUTLIER_REQUEST) {
			continue;
		}
		/* Insertion into the kept top @max, longest first. */
		for (j = n;
		     j > 0 && r->waits[idx[j - 1]].o->duration_ns < r->waits[i].o->duration_ns;
		     j--) {
			if (j < max) {
				idx[j] = idx[j - 1];
			}
		}
		if (j < max) {
			idx[j] = i;
			if (n < max) {
				n++;
			}
		}
	}
	return n;
}

/*
 * "  894.807 ms  mariadbd[681/705] futex: CAUSE; held up by mariadbd[681/698] (in futex,
 * blocked 99.7%)  [SNAPSHOT]": the longest waits, each with what held it up, so that one look
 * at the report names the wait and its holder, not only its cause's share.
 */
static void print_longest(FILE *out, const struct report *r)
{
	size_t idx[LONGEST_ROWS], n = longest_waits(r, idx, LONGEST_ROWS), i;
	char dur[LS_DURATION_BUFSZ];

	if (!n) {
		return;
	}
	fprintf(out, "Longest waits (held up by: the holder, else the thread that woke it):\n");
	for (i = 0; i < n; i++) {
		const struct snapshot_wait *w = &r->waits[idx[i]];
		const struct outlier *o = w->o;
		const struct outlier_link *l = held_up_by(w);

		ls_format_duration(o->duration_ns, dur, sizeof(dur));
		fprintf(out, "  %12s  ", dur);
		print_who(out, o->comm, o->pid, o->tid);
		fprintf(out, " %s: %s",
			o->kind == OUTLIER_REQUEST ? "request" :
			o->syscall		   ? o->syscall :
						     "off-cpu",
			o->cause ? o->cause : "unknown");
		if (w->holder) {
			fputs("; held by ", out);
			print_who(out, w->holder->comm, w->holder->pid, w->holder->tid);
			if (w->holder->what) {
				fprintf(out, " (%s)", w->holder->what);
			}
		} else if (l) {
			uint64_t span = l->to_ns > l->from_ns ? l->to_ns - l->from_ns : 0;
			const struct outlier *lw = link_wait(r, w, l);

			fputs("; held up by ", out);
			print_who(out, l->comm, l->pid, l->tid);
			fprintf(out, " (%s%s, blocked %.1f%%", l->syscall ? "in " : "",
				l->syscall ? l->syscall : "outside a syscall",
				percent(l->blocked_ns, span));
			if (lw && lw->cause) {
				fprintf(out, ": %s", lw->cause);
			}
			fputc(')', out);
		} else if (o->waker && !o->waker->tid) {
			/* An interrupt's: [hardirq] or [softirq], on no thread of its own. */
			fprintf(out, "; woken by %s",
				o->waker->comm ? o->waker->comm : "an interrupt");
		} else if (o->waker) {
			fputs("; woken by ", out);
			print_who(out, o->waker->comm, o->waker->pid, o->waker->tid);
		}
		if (w->snap) {
			fprintf(out, "  [%s]", w->snap->id);
		}
		fputc('\n', out);
	}
	fputc('\n', out);
}

static struct json_object *u64_json(uint64_t v);

/* The longest waits as print_longest() lists them: report --json's "longest". */
static struct json_object *longest_json(const struct report *r)
{
	struct json_object *arr = json_object_new_array(), *e, *h;
	size_t idx[LONGEST_ROWS], n = longest_waits(r, idx, LONGEST_ROWS), i;

	for (i = 0; arr && i < n; i++) {
		const struct snapshot_wait *w = &r->waits[idx[i]];
		const struct outlier *o = w->o;
		const struct outlier_link *l = held_up_by(w);
		const struct outlier *lw;

		e = json_object_new_object();
		json_object_object_add(e, "snapshot",
				       w->snap ? json_object_new_string(w->snap->id) : NULL);
		json_object_object_add(e, "pid", json_object_new_int(o->pid));
		json_object_object_add(e, "tid", json_object_new_int(o->tid));
		json_object_object_add(e, "comm", json_object_new_string(o->comm ? o->comm : ""));
		json_object_object_add(e, "syscall",
				       o->syscall ? json_object_new_string(o->syscall) : NULL);
		json_object_object_add(e, "duration_ns", u64_json(o->duration_ns));
		json_object_object_add(e, "cause",
				       o->cause ? json_object_new_string(o->cause) : NULL);
		h = NULL;
		if (w->holder) {
			h = json_object_new_object();
			json_object_object_add(h, "pid", json_object_new_int(w->holder->pid));
			json_object_object_add(h, "tid", json_object_new_int(w->holder->tid));
			json_object_object_add(
				h, "comm",
				json_object_new_string(w->holder->comm ? w->holder->comm : ""));
			json_object_object_add(h, "how", json_object_new_string("holder"));
		} else if (l) {
			h = json_object_new_object();
			json_object_object_add(h, "pid", json_object_new_int(l->pid));
			json_object_object_add(h, "tid", json_object_new_int(l->tid));
			json_object_object_add(h, "comm",
					       json_object_new_string(l->comm ? l->comm : ""));
			json_object_object_add(h, "how", json_object_new_string("wait-chain"));
			json_object_object_add(h, "syscall",
					       l->syscall ? json_object_new_string(l->syscall) :
							    NULL);
			json_object_object_add(h, "blocked_ns", u64_json(l->blocked_ns));
			lw = link_wait(r, w, l);
			json_object_object_add(h, "cause",
					       lw && lw->cause ? json_object_new_string(lw->cause) :
								 NULL);
		}
		json_object_object_add(e, "held_up_by", h);
		json_object_array_add(arr, e);
	}
	return arr;
}

/* --- idle waits ---------------------------------------------------------------------------- */

/* "comm[pid/tid]", and " on host" when the report has several: the idle section's thread. */
static void idle_label(const struct snapshot_idle *e, bool many_hosts, char *buf, size_t len)
{
	char comm[64];

	one_line(e->comm, comm, sizeof(comm));
	snprintf(buf, len, "%s[%" PRId32 "/%" PRId32 "]%s%s", comm, e->pid, e->tid,
		 many_hosts ? " on " : "", many_hosts ? e->host : "");
}

/*
 * "Idle waits": the threads' waits for work, largest total first, IDLE_ROWS_MAX of them, apart
 * from the latency above; nothing if there are none.
 */
static void print_idle(FILE *out, const struct report *r)
{
	char total[LS_DURATION_BUFSZ], label[256], site[512], *demangled;
	bool many_hosts = r->hosts.nr > 1;
	uint64_t rest_count = 0, rest_ns = 0;
	int width = KEY_WIDTH_MIN;
	size_t i, shown;

	if (!r->nr_idle) {
		return;
	}
	shown = r->nr_idle < IDLE_ROWS_MAX ? r->nr_idle : IDLE_ROWS_MAX;
	for (i = 0; i < shown; i++) {
		idle_label(&r->idle[i], many_hosts, label, sizeof(label));
		if ((int)strlen(label) > width) {
			width = (int)strlen(label);
		}
	}
	if (width > KEY_WIDTH_MAX) {
		width = KEY_WIDTH_MAX;
	}
	ls_format_duration(r->idle_total_ns, total, sizeof(total));
	fprintf(out, "Idle waits (waiting for work; not latency): %" PRIu64 " wait%s, %s\n",
		r->idle_count, r->idle_count == 1 ? "" : "s", total);
	fprintf(out, "%-*s %7s %12s  %s\n", width, "Thread", "Count", "Total", "Where");
	for (i = 0; i < shown; i++) {
		idle_label(&r->idle[i], many_hosts, label, sizeof(label));
		demangled = ls_demangle_text(r->idle[i].site);
		one_line(demangled ? demangled : r->idle[i].site, site, sizeof(site));
		free(demangled);
		ls_format_duration(r->idle[i].total_ns, total, sizeof(total));
		fprintf(out, "%-*.*s %7" PRIu64 " %12s  %s\n", width, width, label,
			r->idle[i].count, total, site);
	}
	for (; i < r->nr_idle; i++) {
		rest_count = sat_add(rest_count, r->idle[i].count);
		rest_ns = sat_add(rest_ns, r->idle[i].total_ns);
	}
	if (r->nr_idle > shown) {
		ls_format_duration(rest_ns, total, sizeof(total));
		fprintf(out, "... %zu more (%" PRIu64 " wait%s, %s)\n", r->nr_idle - shown,
			rest_count, rest_count == 1 ? "" : "s", total);
	}
	fputc('\n', out);
}

static void print_text(FILE *out, const struct report *r, const struct snapshot_set *set,
		       uint64_t complete)
{
	char total[LS_DURATION_BUFSZ];
	const char *title = r->by == BY_CAUSE	? "Cause" :
			    r->by == BY_PROCESS ? "Process" :
			    r->by == BY_HOST	? "Host" :
			    r->by == BY_REQUEST ? "Request" :
						  "Syscall";
	size_t i, broken = set->nr - complete;

	ls_format_duration(r->system.total_ns, total, sizeof(total));
	fprintf(out,
		"%s: %zu snapshots (%" PRIu64 " complete, %zu incomplete or corrupt): %" PRIu64
		" outliers, %s in all, %" PRIu64 " skipped by the recorder",
		set->dir, set->nr, complete, broken, r->system.count, total, r->skipped);
	/* Only when there are any: the line stays as it always was for older summaries. */
	if (r->idle_count) {
		fprintf(out, "; %" PRIu64 " idle wait%s", r->idle_count,
			r->idle_count == 1 ? "" : "s");
	}
	fputs("\n\n", out);
	if (r->not_requests) {
		fprintf(out,
			"Requests only (record --request): %" PRIu64 " other outlier%s left out "
			"(see --by cause)\n\n",
			r->not_requests, r->not_requests == 1 ? "" : "s");
	}
	fprintf(out, "System-wide, by %s:\n", by_names[r->by]);
	if (r->by == BY_REQUEST) {
		print_request_table(out, &r->system);
	} else {
		print_table(out, &r->system, title);
	}
	fputc('\n', out);
	if (r->hosts.nr > 1 && r->by != BY_HOST) {
		fprintf(out, "By host:\n");
		print_table(out, &r->hosts, "Host");
		fputc('\n', out);
	}
	print_stalls(out, r);
	print_longest(out, r);
	fprintf(out, "Distribution of each %s:\n", by_names[r->by]);
	for (i = 0; i < r->system.nr; i++) {
		print_hist(out, &r->system.groups[i]);
	}
	for (i = 0; i < r->nr_procs; i++) {
		const struct process *p = &r->procs[i];

		ls_format_duration(p->table.total_ns, total, sizeof(total));
		fprintf(out,
			"Process %s (%" PRId64 ")%s%s: %s in %" PRIu64 " outlier%s, %zu thread%s\n",
			p->comm, p->pid, r->hosts.nr > 1 ? " on " : "",
			r->hosts.nr > 1 ? p->host : "", total, p->table.count,
			p->table.count == 1 ? "" : "s", p->nr_tids, p->nr_tids == 1 ? "" : "s");
		if (r->by == BY_REQUEST) {
			print_request_table(out, &p->table);
		} else {
			print_table(out, &p->table, r->by == BY_SYSCALL ? "Syscall" : "Cause");
		}
		fputc('\n', out);
	}
	print_idle(out, r);
	if (broken) {
		fprintf(out, "Not reported:\n");
		for (i = 0; i < set->nr; i++) {
			if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
				fprintf(out, "  %s: %s: %s\n", set->snaps[i].id,
					snapshots_state_name(set->snaps[i].state),
					set->snaps[i].why);
			}
		}
	}
}

static struct json_object *u64_json(uint64_t v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

/* A row of requests' own members: "probe", "arg" and "causes", largest total first. */
static void request_json(struct json_object *g, const struct group *grp)
{
	struct json_object *arr = json_object_new_array(), *c;
	size_t i;

	json_object_object_add(g, "probe", json_object_new_string(grp->probe));
	json_object_object_add(g, "arg", grp->arg ? json_object_new_string(grp->arg) : NULL);
	for (i = 0; arr && i < grp->causes->nr; i++) {
		c = json_object_new_object();
		json_object_object_add(c, "cause",
				       json_object_new_string(grp->causes->groups[i].key));
		json_object_object_add(c, "count", u64_json(grp->causes->groups[i].count));
		json_object_object_add(c, "total_ns", u64_json(grp->causes->groups[i].total_ns));
		json_object_array_add(arr, c);
	}
	json_object_object_add(g, "causes", arr);
}

static struct json_object *table_json(const struct table *t)
{
	struct json_object *obj = json_object_new_object(), *arr = json_object_new_array(), *g, *h,
			   *b;
	size_t i;
	int k;

	json_object_object_add(obj, "count", u64_json(t->count));
	json_object_object_add(obj, "total_ns", u64_json(t->total_ns));
	json_object_object_add(obj, "groups", arr);
	for (i = 0; i < t->nr; i++) {
		const struct group *grp = &t->groups[i];

		g = json_object_new_object();
		json_object_object_add(g, "key",
				       json_object_new_string(grp->label ? grp->label : grp->key));
		json_object_object_add(g, "count", u64_json(grp->count));
		json_object_object_add(g, "total_ns", u64_json(grp->total_ns));
		json_object_object_add(g, "average_ns", u64_json(grp->total_ns / grp->count));
		json_object_object_add(g, "max_ns", u64_json(grp->max_ns));
		json_object_object_add(g, "percent",
				       json_object_new_double(percent(grp->total_ns, t->total_ns)));
		h = json_object_new_array();
		for (k = 0; k < HIST_BUCKETS; k++) {
			if (!grp->hist[k]) {
				continue;
			}
			b = json_object_new_object();
			json_object_object_add(b, "from_ns", u64_json(k ? 1ULL << (k - 1) : 0));
			json_object_object_add(b, "to_ns",
					       u64_json(k == 0	? 1 :
							k == 64 ? UINT64_MAX :
								  1ULL << k));
			json_object_object_add(b, "count", u64_json(grp->hist[k]));
			json_object_array_add(h, b);
		}
		json_object_object_add(g, "histogram", h);
		if (grp->causes) {
			request_json(g, grp);
		}
		json_object_array_add(arr, g);
	}
	return obj;
}

/* The stalls as --json has them, in the text's order. */
static struct json_object *stalls_json(const struct report *r)
{
	struct json_object *arr = json_object_new_array(), *st, *h;
	const struct outlier_holder *holder;
	const struct outlier *o;
	size_t i;

	for (i = 0; arr && i < r->nr_stalls; i++) {
		o = r->stalls[i].w->o;
		holder = r->stalls[i].w->holder;
		st = json_object_new_object();
		json_object_object_add(st, "host",
				       json_object_new_string(wait_host(r->stalls[i].w)));
		json_object_object_add(st, "snapshot",
				       r->stalls[i].w->snap ?
					       json_object_new_string(r->stalls[i].w->snap->id) :
					       NULL);
		json_object_object_add(st, "pid", json_object_new_int(o->pid));
		json_object_object_add(st, "tid", json_object_new_int(o->tid));
		json_object_object_add(st, "comm", json_object_new_string(o->comm ? o->comm : "?"));
		json_object_object_add(st, "syscall",
				       o->syscall ? json_object_new_string(o->syscall) : NULL);
		json_object_object_add(st, "start_ns", u64_json(o->start_ns));
		json_object_object_add(st, "end_ns", u64_json(o->end_ns));
		json_object_object_add(st, "duration_ns", u64_json(o->duration_ns));
		json_object_object_add(
			st, "state",
			json_object_new_string(snapshots_wait_state_name(snapshots_wait_state(o))));
		json_object_object_add(st, "cause",
				       json_object_new_string(o->cause ? o->cause : ""));
		json_object_object_add(st, "deadlock",
				       json_object_new_boolean(r->stalls[i].cycle >= 0));
		json_object_object_add(
			st, "cycle",
			r->stalls[i].cycle >= 0 ? json_object_new_int(r->stalls[i].cycle) : NULL);
		json_object_object_add(st, "reports", u64_json(r->stalls[i].w->reports));
		h = NULL;
		if (holder) {
			h = json_object_new_object();
			json_object_object_add(h, "pid", json_object_new_int(holder->pid));
			json_object_object_add(h, "tid", json_object_new_int(holder->tid));
			json_object_object_add(h, "comm",
					       json_object_new_string(holder->comm ? holder->comm :
										     "?"));
			json_object_object_add(h, "what",
					       holder->what ? json_object_new_string(holder->what) :
							      NULL);
			json_object_object_add(
				h, "state",
				holder->state ? json_object_new_string(holder->state) : NULL);
		}
		json_object_object_add(st, "holder", h);
		json_object_array_add(arr, st);
	}
	return arr;
}

/* The idle waits as --json has them: every row, in the text's order. */
static struct json_object *idle_json(const struct report *r)
{
	struct json_object *arr = json_object_new_array(), *e;
	const struct snapshot_idle *d;
	size_t i;

	for (i = 0; arr && i < r->nr_idle; i++) {
		d = &r->idle[i];
		e = json_object_new_object();
		json_object_object_add(e, "host", json_object_new_string(d->host));
		json_object_object_add(e, "pid", json_object_new_int(d->pid));
		json_object_object_add(e, "tid", json_object_new_int(d->tid));
		json_object_object_add(e, "comm", json_object_new_string(d->comm));
		json_object_object_add(e, "site", json_object_new_string(d->site));
		json_object_object_add(e, "count", u64_json(d->count));
		json_object_object_add(e, "total_ns", u64_json(d->total_ns));
		json_object_array_add(arr, e);
	}
	return arr;
}

static struct json_object *report_json(const struct report *r, const struct snapshot_set *set)
{
	struct json_object *obj = json_object_new_object(), *snaps = json_object_new_array(), *s,
			   *procs = json_object_new_array(), *p;
	size_t i;

	json_object_object_add(obj, "dir", json_object_new_string(set->dir));
	json_object_object_add(obj, "by", json_object_new_string(by_names[r->by]));
	json_object_object_add(obj, "skipped", u64_json(r->skipped));
	if (r->by == BY_REQUEST) {
		json_object_object_add(obj, "not_requests", u64_json(r->not_requests));
	}
	for (i = 0; i < set->nr; i++) {
		const struct snapshot *sn = &set->snaps[i];

		s = json_object_new_object();
		json_object_object_add(s, "id", json_object_new_string(sn->id));
		json_object_object_add(s, "host",
				       sn->host ? json_object_new_string(sn->host) : NULL);
		json_object_object_add(s, "path", json_object_new_string(sn->path));
		json_object_object_add(s, "status",
				       json_object_new_string(snapshots_state_name(sn->state)));
		json_object_object_add(
			s, "reason",
			sn->state == SNAPSHOT_COMPLETE ? NULL : json_object_new_string(sn->why));
		json_object_object_add(
			s, "outliers",
			json_object_new_int64(sn->summary ? (int64_t)sn->summary->nr_outliers : 0));
		json_object_array_add(snaps, s);
	}
	json_object_object_add(obj, "snapshots", snaps);
	json_object_object_add(obj, "system", table_json(&r->system));
	json_object_object_add(obj, "hosts", table_json(&r->hosts));
	for (i = 0; i < r->nr_procs; i++) {
		p = table_json(&r->procs[i].table);
		json_object_object_add(p, "host", json_object_new_string(r->procs[i].host));
		json_object_object_add(p, "pid", json_object_new_int64(r->procs[i].pid));
		json_object_object_add(p, "comm", json_object_new_string(r->procs[i].comm));
		json_object_object_add(p, "threads", u64_json(r->procs[i].nr_tids));
		json_object_array_add(procs, p);
	}
	json_object_object_add(obj, "processes", procs);
	json_object_object_add(obj, "stalls", stalls_json(r));
	json_object_object_add(obj, "longest", longest_json(r));
	json_object_object_add(obj, "idle", idle_json(r));
	json_object_object_add(obj, "idle_count", u64_json(r->idle_count));
	json_object_object_add(obj, "idle_total_ns", u64_json(r->idle_total_ns));
	return obj;
}

static void report_free(struct report *r)
{
	size_t i;

	table_free(&r->system);
	table_free(&r->hosts);
	for (i = 0; i < r->nr_procs; i++) {
		table_free(&r->procs[i].table);
		free(r->procs[i].host);
		free(r->procs[i].comm);
		free(r->procs[i].tids);
	}
	free(r->procs);
	free(r->waits);
	free(r->stalls);
	free(r->idle);
}

/* The options into @r, @json and @host: SNAPSHOTS_GO_ON, or the exit status to stop with. */
static int parse_options(int argc, char **argv, struct report *r, bool *json, const char **host,
			 const char **html)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "by", required_argument, NULL, 'b' },
		{ "host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	size_t j;
	int id;

	optind = 0;
	opterr = 0;
	while ((id = getopt_long(argc, argv, "+:jb:H:h", opts, NULL)) != -1) {
		switch (id) {
		case 'j':
			*json = true;
			break;
		case 'b':
			for (j = 0; j < NR_BY && strcmp(optarg, by_names[j]); j++) {
			}
			if (j == NR_BY) {
				ls_err("report: --by: '%s' is not cause, process, syscall, host or "
				       "request",
				       optarg);
				return 2;
			}
			r->by = (enum group_by)j;
			break;
		case 'H':
			*host = optarg;
			break;
		case OPT_HTML:
			*html = optarg;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		default:
			snapshots_option_error("report", id, optopt, argv, optind);
			return 2;
		}
	}
	if (*json && *html) {
		ls_err("report: --json and --html: one or the other (see latsnap report --help)");
		return 2;
	}
	if (optind != argc - 1) {
		ls_err("report: %s (see latsnap report --help)",
		       optind == argc ? "DIR missing" : "one DIR only");
		return 2;
	}
	return SNAPSHOTS_GO_ON;
}

/*
 * Every wait of the complete snapshots of @set into @r, once however many times it was reported
 * (snapshots_waits()), and the stalled ones into @r->stalls; their idle waits, by thread and
 * place, into @r->idle; @complete counts those snapshots.
 */
static int add_snapshots(struct report *r, const struct snapshot_set *set, uint64_t *complete)
{
	size_t i;
	int ret;

	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state == SNAPSHOT_CORRUPT) {
			ls_err("report: %s", set->snaps[i].why);
		}
		if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
			continue;
		}
		(*complete)++;
		r->skipped = sat_add(r->skipped, set->snaps[i].summary->skipped);
		/* Its outliers are reported all the same: a warning, not a corrupt summary. */
		if (set->snaps[i].summary->outliers_why) {
			ls_err("report: warning: %s", set->snaps[i].summary->outliers_why);
		}
		if (set->snaps[i].summary->idle_why) {
			ls_err("report: warning: %s", set->snaps[i].summary->idle_why);
		}
	}
	ret = snapshots_waits(set, &r->waits, &r->nr_waits);
	for (i = 0; i < r->nr_waits && !ret; i++) {
		ret = report_add(r, r->waits[i].o, wait_host(&r->waits[i]));
	}
	ret = ret ?: snapshots_idle(set, &r->idle, &r->nr_idle);
	for (i = 0; i < r->nr_idle && !ret; i++) {
		r->idle_count = sat_add(r->idle_count, r->idle[i].count);
		r->idle_total_ns = sat_add(r->idle_total_ns, r->idle[i].total_ns);
	}
	return ret ?: find_stalls(r);
}

/* @t's rows, largest total first, and the causes of each row of requests. */
static void sort_table(struct table *t)
{
	size_t i;

	ls_sort(t->groups, t->nr, sizeof(*t->groups), cmp_group);
	for (i = 0; i < t->nr; i++) {
		if (t->groups[i].causes) {
			sort_table(t->groups[i].causes);
		}
	}
}

/* The tables, largest total first; with --by process the system-wide keys named first. */
static int sort_tables(struct report *r)
{
	size_t i;

	if (r->by == BY_PROCESS && name_process_keys(r)) {
		return -ENOMEM;
	}
	sort_table(&r->system);
	sort_table(&r->hosts);
	for (i = 0; i < r->nr_procs; i++) {
		sort_table(&r->procs[i].table);
	}
	if (r->nr_procs > 1) {
		ls_sort(r->procs, r->nr_procs, sizeof(*r->procs), cmp_process);
	}
	return 0;
}

/*
 * The directory of @html's snapshot pages: FILE-snapshots beside FILE (FILE without .html), made
 * if missing. A symlink there is not followed: the pages would go where it points.
 * Return: its path (to free), or NULL after saying why.
 */
static char *pages_dir(const char *html)
{
	size_t len = strlen(html);
	struct stat st;
	char *dir;

	if (len > 5 && !strcmp(html + len - 5, ".html")) {
		len -= 5;
	}
	if (asprintf(&dir, "%.*s-snapshots", (int)len, html) < 0) {
		ls_err("report: %s", strerror(ENOMEM));
		return NULL;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		ls_err("report: %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		ls_err("report: %s: not a directory (a symlink is not followed)", dir);
		goto fail;
	}
	return dir;
fail:
	free(dir);
	return NULL;
}

/*
 * The report as one HTML page in @html, and a page per complete snapshot beside it: 0, or 1
 * after saying what failed (a snapshot whose page fails is listed without a link).
 */
static int write_html(const struct report *r, const struct snapshot_set *set, const char *html)
{
	struct json_object *obj = report_json(r, set), *links = json_object_new_object();
	char *dir = NULL, *page = NULL, title[512];
	const char *base;
	int ret = 1, err;
	size_t i;

	if (!obj || !links) {
		ls_err("report: %s", strerror(ENOMEM));
		goto out;
	}
	dir = strcmp(html, "-") ? pages_dir(html) : NULL;
	if (strcmp(html, "-") && !dir) {
		goto out;
	}
	base = dir ? strrchr(dir, '/') : NULL;
	base = base ? base + 1 : dir;
	for (i = 0; dir && i < set->nr; i++) {
		const struct snapshot *sn = &set->snaps[i];

		free(page);
		page = NULL;
		if (sn->state != SNAPSHOT_COMPLETE || strchr(sn->id, '/') ||
		    asprintf(&page, "%s/%s.html", dir, sn->id) < 0) {
			page = NULL;
			continue;
		}
		if (!show_write_page(sn->path, page, NULL)) {
			free(page);
			if (asprintf(&page, "%s/%s.html", base, sn->id) < 0) {
				page = NULL;
				continue;
			}
			json_object_object_add(links, sn->id, json_object_new_string(page));
		}
	}
	json_object_object_add(obj, "page", json_object_new_string("report"));
	json_object_object_add(obj, "links", json_object_get(links));
	snprintf(title, sizeof(title), "latsnap report of %s", set->dir);
	err = html_write_file(html, title, obj, NULL);
	if (err) {
		ls_err("report: %s: %s", html, strerror(-err));
		goto out;
	}
	ret = 0;
out:
	free(page);
	free(dir);
	json_object_put(links);
	json_object_put(obj);
	return ret;
}

/**
 * report_main() - `latsnap report`
 * @argc: argument count, the command name included
 * @argv: "report", options, DIR
 *
 * Return: the exit status: 0; 1 when DIR cannot be read or holds no complete snapshot, or
 * stdout cannot be written; 2 on a usage error.
 */
int report_main(int argc, char **argv)
{
	struct snapshot_set set = { 0 };
	struct report r = { .by = BY_CAUSE };
	struct json_object *obj = NULL;
	uint64_t complete = 0;
	const char *host = NULL, *html = NULL;
	bool json = false;
	int ret;

	ret = parse_options(argc, argv, &r, &json, &host, &html);
	if (ret != SNAPSHOTS_GO_ON) {
		goto out;
	}
	ret = 0;
	if (snapshots_load(argv[optind], &set)) {
		ret = 1;
		goto out;
	}
	snapshots_filter_host(&set, host);
	if (add_snapshots(&r, &set, &complete)) {
		ls_err("report: %s", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	if (!set.nr) {
		ls_err("report: %s: no snapshot%s%s in it", set.dir, host ? " of host " : "",
		       host ? host : "");
		ret = 1;
		goto out;
	}
	if (sort_tables(&r)) {
		ls_err("report: %s", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	if (html) {
		ret = write_html(&r, &set, html);
	} else if (json) {
		obj = report_json(&r, &set);
		puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		print_text(stdout, &r, &set, complete);
	}
	if (!complete) {
		ls_err("report: %s: no complete snapshot in it", set.dir);
		ret = 1;
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ls_err("report: writing to stdout: %s", strerror(errno));
		ret = 1;
	}
out:
	json_object_put(obj);
	report_free(&r);
	snapshots_free(&set);
	return ret;
}
