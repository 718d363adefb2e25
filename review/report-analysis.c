// SPDX-License-Identifier: GPL-2.0
/*
 * report-analysis.c - what `latsnap report` says about a set of snapshots, into struct report
 *
 * Every outlier of every complete snapshot, grouped like LatencyTOP groups its causes: count,
 * average, maximum and share of the outlier time, largest total first; system-wide, by host and
 * per process, each group with a log2 histogram of its durations.
 *
 * A wait reported more than once (record --hang: still-blocked while it waited, then ended or
 * unfinished) is counted once, by the report of it that counts (snapshots_waits()); the stalled
 * ones are kept with who held what they waited for, and a deadlock's threads are joined into
 * one cycle, ordered along their holders.
 *
 * --by request groups the request outliers (record --request) alone: by probe pair, and a USDT
 * probe pair's by the text of the start probe's first argument (a PostgreSQL backend's query).
 *
 * Nothing here prints: the renderers (report-text.c, report-json.c, report-html.c) walk the
 * result, so that each number is computed once for all of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/outlier.h"
#include "lib/util.h"
#include "review/report-analysis.h"
#include "review/snapshots.h"

const char *const report_by_names[NR_REPORT_BY] = { "cause", "process", "syscall", "host",
						    "request" };

static union report_value group_count(const struct report_group *g)
{
	return (union report_value){ .n = g->count };
}

static union report_value group_total(const struct report_group *g)
{
	return (union report_value){ .n = g->total_ns };
}

static union report_value group_average(const struct report_group *g)
{
	return (union report_value){ .n = g->average_ns };
}

static union report_value group_max(const struct report_group *g)
{
	return (union report_value){ .n = g->max_ns };
}

static union report_value group_percent(const struct report_group *g)
{
	return (union report_value){ .percent = g->percent };
}

const struct report_column report_columns[] = {
	{ "count", "Count", 7, REPORT_UNIT_COUNT, group_count },
	{ "total_ns", NULL, 0, REPORT_UNIT_NS, group_total },
	{ "average_ns", "Average", 12, REPORT_UNIT_NS, group_average },
	{ "max_ns", "Maximum", 12, REPORT_UNIT_NS, group_max },
	{ "percent", "Percentage", 11, REPORT_UNIT_PERCENT, group_percent },
};

const size_t report_nr_columns = sizeof(report_columns) / sizeof(report_columns[0]);

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

static int hist_bucket(uint64_t ns)
{
	return ns ? 64 - __builtin_clzll(ns) : 0;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The row @key of @t, made if need be; NULL without memory. */
static struct report_group *table_row(struct report_table *t, const char *key)
{
	struct report_group *g = NULL, *grown;
	size_t i;

	for (i = 0; i < t->nr; i++) {
		if (!strcmp(t->groups[i].key, key)) {
			g = &t->groups[i];
			goto out;
		}
	}
	if (t->nr == t->cap) {
		grown = realloc(t->groups, (t->cap ? t->cap * 2 : 8) * sizeof(*grown));
		if (!grown) {
			goto out;
		}
		t->groups = grown;
		t->cap = t->cap ? t->cap * 2 : 8;
	}
	g = &t->groups[t->nr];
	memset(g, 0, sizeof(*g));
	g->key = strdup(key);
	if (!g->key) {
		g = NULL;
		goto out;
	}
	t->nr++;
out:
	return g;
}

/* Adds @ns to the row @key of @t, made if need be; *@gp (when not NULL): the row, or NULL. */
static int table_add_row(struct report_table *t, const char *key, uint64_t ns,
			 struct report_group **gp)
{
	struct report_group *g = table_row(t, key);

	if (gp) {
		*gp = g;
	}
	if (!g) {
		return -ENOMEM;
	}
	g->count++;
	g->total_ns = sat_add(g->total_ns, ns);
	if (ns > g->max_ns) {
		g->max_ns = ns;
	}
	g->hist[hist_bucket(ns)]++;
	t->count++;
	t->total_ns = sat_add(t->total_ns, ns);
	return 0;
}

static int table_add(struct report_table *t, const char *key, uint64_t ns)
{
	return table_add_row(t, key, ns, NULL);
}

static int cmp_group(const void *a, const void *b)
{
	const struct report_group *x = a, *y = b;

	if (x->total_ns != y->total_ns) {
		return x->total_ns > y->total_ns ? -1 : 1;
	}
	return strcmp(x->key, y->key);
}

static void table_free(struct report_table *t)
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

static struct report_process *process_get(struct report *r, const char *host, int64_t pid)
{
	struct report_process *p = NULL, *grown;
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

static int process_add_tid(struct report_process *p, int64_t tid)
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
static int process_name(struct report_process *p, const struct outlier *o)
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

/**
 * report_one_line() - @text on one line
 * @text: any text (a query, a comm, a symbol)
 * @buf: where to put it: each run of blanks and control characters one space, trimmed
 * @len: @buf's size
 */
void report_one_line(const char *text, char *buf, size_t len)
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
		report_one_line(o->request->arg, buf + n, len - (size_t)n);
	}
}

static void key_of(const struct outlier *o, const char *host, enum report_by by, char *buf,
		   size_t len)
{
	switch (by) {
	case REPORT_BY_REQUEST:
		request_key(o, buf, len);
		break;
	case REPORT_BY_HOST:
		snprintf(buf, len, "%s", host);
		break;
	case REPORT_BY_PROCESS:
		/* Named later, once every thread is known; host and pid are the key. */
		snprintf(buf, len, "%s/%" PRId32, host, o->pid);
		break;
	case REPORT_BY_SYSCALL:
		snprintf(buf, len, "%s",
			 o->syscall		    ? o->syscall :
			 o->kind == OUTLIER_REQUEST ? "(request)" :
						      "(off-CPU, no syscall)");
		break;
	case REPORT_BY_CAUSE:
	default:
		snprintf(buf, len, "%s", o->cause ? o->cause : "?");
		break;
	}
}

/* A new row of requests (--by request), of the requests of @o's: its probe pair, argument, label. */
static int request_row(struct report_group *g, const struct outlier *o)
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
		report_one_line(o->request->arg, g->arg, len);
	}
	return outlier_set_str(&g->label, g->arg ? g->arg : probe);
}

/* @o's @ns into the row @key of @t; a request's (--by request) also into the row's causes. */
static int add_row(struct report_table *t, const struct outlier *o, const char *key, uint64_t ns,
		   enum report_by by)
{
	struct report_group *g;
	int ret;

	ret = table_add_row(t, key, ns, &g);
	if (ret || by != REPORT_BY_REQUEST) {
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
	enum report_by inner =
		r->by == REPORT_BY_PROCESS || r->by == REPORT_BY_HOST ? REPORT_BY_CAUSE : r->by;
	struct report_process *p;
	char key[2048];
	int ret;

	if (r->by == REPORT_BY_REQUEST && o->kind != OUTLIER_REQUEST) {
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
	const struct report_process *x = a, *y = b;

	if (x->table.total_ns != y->table.total_ns) {
		return x->table.total_ns > y->table.total_ns ? -1 : 1;
	}
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* With --by process the system-wide keys are pids; name them "comm (pid)" now. */
static int name_process_keys(struct report *r)
{
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
				 r->procs[j].pid, r->many_hosts ? " on " : "",
				 r->many_hosts ? r->procs[j].host : "");
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

/* How many probe pairs the rows of requests of @t have. */
static size_t table_probes(const struct report_table *t)
{
	size_t i, j, n = 0;

	for (i = 0; i < t->nr; i++) {
		if (!t->groups[i].probe) {
			continue;
		}
		for (j = 0; j < i && strcmp(t->groups[j].probe, t->groups[i].probe); j++) {
		}
		n += j == i;
	}
	return n;
}

/* @t's rows, largest total first, with their averages and shares; and so the causes of each. */
static void table_finish(struct report_table *t)
{
	struct report_group *g;
	size_t i;

	ls_sort(t->groups, t->nr, sizeof(*t->groups), cmp_group);
	for (i = 0; i < t->nr; i++) {
		g = &t->groups[i];
		g->average_ns = g->total_ns / g->count;
		g->percent = percent(g->total_ns, t->total_ns);
		if (g->causes) {
			table_finish(g->causes);
		}
	}
	t->nr_probes = table_probes(t);
}

/* The tables, largest total first; with --by process the system-wide keys named first. */
static int finish_tables(struct report *r)
{
	size_t i;

	r->many_hosts = r->hosts.nr > 1;
	if (r->by == REPORT_BY_PROCESS && name_process_keys(r)) {
		return -ENOMEM;
	}
	table_finish(&r->system);
	table_finish(&r->hosts);
	for (i = 0; i < r->nr_procs; i++) {
		table_finish(&r->procs[i].table);
	}
	if (r->nr_procs > 1) {
		ls_sort(r->procs, r->nr_procs, sizeof(*r->procs), cmp_process);
	}
	return 0;
}

/* --- stalls -------------------------------------------------------------------------------- */

/**
 * report_wait_host() - the host of a wait's snapshot
 * @w: the wait
 *
 * Return: its name, "" when unknown.
 */
const char *report_wait_host(const struct snapshot_wait *w)
{
	return w->snap && w->snap->host ? w->snap->host : "";
}

/* Is @h (a holder) the thread of the stall @st, on @host? */
static bool is_holder(const struct outlier_holder *h, const char *host,
		      const struct report_stall *st)
{
	return h && h->tid == st->w->o->tid && h->pid == st->w->o->pid &&
	       !strcmp(host, report_wait_host(st->w));
}

/* Is @st's thread one of the deadlock @d's (its cycle as the recorder wrote it)? */
static bool in_cycle(const struct outlier_deadlock *d, const char *host,
		     const struct report_stall *st)
{
	size_t i;

	for (i = 0; d && i < d->nr; i++) {
		if (d->threads[i].tid == st->w->o->tid && d->threads[i].pid == st->w->o->pid &&
		    !strcmp(host, report_wait_host(st->w))) {
			return true;
		}
	}
	return false;
}

/* Does the thread of @from wait for what the thread of @to holds? */
static bool waits_for(const struct report_stall *from, const struct report_stall *to)
{
	return is_holder(from->w->holder, report_wait_host(from->w), to);
}

/* Are the stalls @a and @b in the same deadlock: @b in @a's cycle, or holding what @a waits for? */
static bool same_deadlock(const struct report_stall *a, const struct report_stall *b)
{
	return snapshots_is_deadlock(b->w->o) &&
	       (in_cycle(a->w->o->deadlock, report_wait_host(a->w), b) || waits_for(a, b));
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
	const struct report_stall *x = a, *y = b;

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

/* Each stall's cycle: the deadlocked ones joined (union-find) by same_deadlock(), numbered. */
static int number_cycles(struct report *r)
{
	size_t i, j, n = r->nr_stalls, *root = malloc((n ? n : 1) * sizeof(*root));
	int *cycle_of = malloc((n ? n : 1) * sizeof(*cycle_of)), ret = -ENOMEM;

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
			if (j != i && same_deadlock(&r->stalls[i], &r->stalls[j])) {
				root[find_root(root, i)] = find_root(root, j);
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (snapshots_is_deadlock(r->stalls[i].w->o)) {
			j = find_root(root, i);
			if (cycle_of[j] < 0) {
				cycle_of[j] = (int)r->nr_cycles++;
			}
			r->stalls[i].cycle = cycle_of[j];
		}
	}
	ret = 0;
out:
	free(root);
	free(cycle_of);
	return ret;
}

/*
 * The stalled waits of @r into @r->stalls; the deadlocked ones into cycles: a thread and the
 * threads of its "deadlock", or (a summary written before it) the thread holding what it waits
 * for, both deadlocked, are in the same one.
 */
static int find_stalls(struct report *r)
{
	size_t i, n = 0;
	int ret;

	r->stalls = calloc(r->nr_waits ? r->nr_waits : 1, sizeof(*r->stalls));
	if (!r->stalls) {
		return -ENOMEM;
	}
	for (i = 0; i < r->nr_waits; i++) {
		if (r->waits[i].stalled) {
			r->stalls[n++] =
				(struct report_stall){ .w = &r->waits[i], .cycle = -1, .pos = i };
		}
	}
	r->nr_stalls = n;
	ret = number_cycles(r);
	if (!ret) {
		ls_sort(r->stalls, n, sizeof(*r->stalls), cmp_stall);
	}
	return ret;
}

/*
 * The threads of the deadlock @st[0..@c->nr) in @c, in the order they wait for each other: each
 * chain from its first thread on, along the holders; and what the last one waits for.
 */
static int order_cycle(struct report_cycle *c, const struct report_stall *st)
{
	size_t n = c->nr, placed = 0, i, k, cur, start = 0;
	bool *done = calloc(n, sizeof(*done));
	int ret = -ENOMEM;

	c->threads = calloc(n, sizeof(*c->threads));
	if (!c->threads || !done) {
		goto out;
	}
	while (placed < n) {
		for (cur = 0; done[cur]; cur++) {
		}
		for (;;) {
			done[cur] = true;
			c->threads[placed++].stall = &st[cur];
			for (k = 0; k < n && (done[k] || !waits_for(&st[cur], &st[k])); k++) {
			}
			if (k == n) {
				break;
			}
			cur = k;
		}
	}
	for (i = 1; i < n; i++) {
		c->threads[i].chained = waits_for(c->threads[i - 1].stall, c->threads[i].stall);
		start = c->threads[i].chained ? start : i;
	}
	if (waits_for(c->threads[n - 1].stall, c->threads[start].stall)) {
		c->closed_by = c->threads[start].stall;
	} else {
		c->holder = c->threads[n - 1].stall->w->holder;
	}
	ret = 0;
out:
	free(done);
	return ret;
}

/* @r->cycles: each deadlock's stalls (together in @r->stalls) in the order they wait. */
static int find_cycles(struct report *r)
{
	size_t i, j, c = 0;
	int ret = 0;

	r->cycles = calloc(r->nr_cycles ? r->nr_cycles : 1, sizeof(*r->cycles));
	if (!r->cycles) {
		return -ENOMEM;
	}
	for (i = 0; i < r->nr_stalls && r->stalls[i].cycle >= 0 && !ret; i = j) {
		for (j = i + 1; j < r->nr_stalls && r->stalls[j].cycle == r->stalls[i].cycle; j++) {
		}
		r->cycles[c].nr = j - i;
		ret = order_cycle(&r->cycles[c++], &r->stalls[i]);
	}
	return ret;
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
		    strcmp(report_wait_host(&r->waits[i]), report_wait_host(w))) {
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
		if (r->by == REPORT_BY_REQUEST && r->waits[i].o->kind != OUTLIER_REQUEST) {
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

/* Who held @lw's wait up: its holder, else the nearest of its wait chain, else its waker. */
static void held_up(const struct report *r, struct report_longest *lw)
{
	const struct outlier *o = lw->w->o;
	const struct outlier_link *l = held_up_by(lw->w);
	uint64_t span;

	if (lw->w->holder) {
		lw->how = REPORT_HELD_BY_HOLDER;
	} else if (l) {
		span = l->to_ns > l->from_ns ? l->to_ns - l->from_ns : 0;
		lw->how = REPORT_HELD_UP_BY_LINK;
		lw->link = l;
		lw->blocked_percent = percent(l->blocked_ns, span);
		lw->link_wait = link_wait(r, lw->w, l);
	} else if (o->waker && !o->waker->tid) {
		lw->how = REPORT_WOKEN_BY_INTERRUPT;
	} else if (o->waker) {
		lw->how = REPORT_WOKEN_BY_THREAD;
	}
}

/* @r->longest: the longest waits, each with what held it up. */
static void find_longest(struct report *r)
{
	size_t idx[REPORT_LONGEST_ROWS], i;

	r->nr_longest = longest_waits(r, idx, REPORT_LONGEST_ROWS);
	for (i = 0; i < r->nr_longest; i++) {
		r->longest[i] = (struct report_longest){ .w = &r->waits[idx[i]] };
		held_up(r, &r->longest[i]);
	}
}

/* --- the report ---------------------------------------------------------------------------- */

/*
 * Every wait of the complete snapshots of @set into @r, once however many times it was reported
 * (snapshots_waits()); their idle waits, by thread and place, into @r->idle.
 */
static int add_snapshots(struct report *r, const struct snapshot_set *set)
{
	size_t i;
	int ret;

	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state == SNAPSHOT_COMPLETE) {
			r->complete++;
			r->skipped = sat_add(r->skipped, set->snaps[i].summary->skipped);
		}
	}
	ret = snapshots_waits(set, &r->waits, &r->nr_waits);
	for (i = 0; i < r->nr_waits && !ret; i++) {
		ret = report_add(r, r->waits[i].o, report_wait_host(&r->waits[i]));
	}
	ret = ret ?: snapshots_idle(set, &r->idle, &r->nr_idle);
	for (i = 0; i < r->nr_idle && !ret; i++) {
		r->idle_count = sat_add(r->idle_count, r->idle[i].count);
		r->idle_total_ns = sat_add(r->idle_total_ns, r->idle[i].total_ns);
	}
	return ret;
}

/**
 * report_analyse() - what the report of a set of snapshots says
 * @r: the report, zeroed but for its @by
 * @set: the snapshots; @r points into it, so it outlives @r
 *
 * Return: 0, or -ENOMEM (@r is then partly filled: report_free() it all the same).
 */
int report_analyse(struct report *r, const struct snapshot_set *set)
{
	int ret;

	r->set = set;
	ret = add_snapshots(r, set);
	ret = ret ?: find_stalls(r);
	ret = ret ?: find_cycles(r);
	ret = ret ?: finish_tables(r);
	if (!ret) {
		find_longest(r);
	}
	return ret;
}

/**
 * report_free() - free what report_analyse() made
 * @r: the report
 */
void report_free(struct report *r)
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
	for (i = 0; r->cycles && i < r->nr_cycles; i++) {
		free(r->cycles[i].threads);
	}
	free(r->procs);
	free(r->waits);
	free(r->stalls);
	free(r->cycles);
	free(r->idle);
}
