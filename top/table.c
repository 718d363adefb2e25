// SPDX-License-Identifier: GPL-2.0
/*
 * table.c - a refresh of `latsnap top` grouped for display: the rows of a table (its waits added
 * up by cause or by object) and the processes or threads that waited, largest first.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "top/top-int.h"

static int cmp_label(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return strcmp(x->label, y->label);
}

/* The key cmp_row() sorts by: ls_sort() passes no context. */
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

/* Adds up the rows of the same label; @rows sorted by label. Return: how many are left. */
static size_t rows_merge(struct top_row *rows, size_t n)
{
	size_t i, out = 0;

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
	return out;
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
	size_t i, n = 0, out;

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
	out = rows_merge(rows, n);
	sort_key = sort;
	ls_sort(rows, out, sizeof(*rows), cmp_row);
	if (!out) {
		free(rows);
		rows = NULL;
	}
	*rowsp = rows;
	return out;
}

/**
 * top_pid_listed() - whether a process is among the --pid ones (all are, without --pid)
 * @t: the --pid list
 * @tgid: the process
 *
 * Return: true when it is listed.
 */
bool top_pid_listed(const struct top *t, uint32_t tgid)
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
	const struct top_entity *x = a, *y = b;

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

/**
 * top_entities() - the processes (or threads) of the period, largest total first
 * @t: the period and the --pid list
 * @threads: threads rather than processes
 * @listp: receives the list (free() it, even when empty); names point into the waits
 *
 * The waits are sorted by process and thread in place, which the tables do not mind.
 *
 * Return: the number of entities; 0 when none waited or memory ran out.
 */
size_t top_entities(struct top *t, bool threads, struct top_entity **listp)
{
	struct top_period *p = &t->cur;
	struct top_entity *list = calloc(p->nr ? p->nr : 1, sizeof(*list)), *e = NULL;
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

		if (!top_pid_listed(t, w->tgid)) {
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

/**
 * top_entity_index() - where an entity is in a list
 * @list: from top_entities()
 * @n: its length
 * @id: the pid, or tid in thread view
 *
 * Return: its index; 0 (the first, the largest) when it is not there any more.
 */
size_t top_entity_index(const struct top_entity *list, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (list[i].id == id) {
			return i;
		}
	}
	return 0;
}
