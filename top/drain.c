// SPDX-License-Identifier: GPL-2.0
/*
 * drain.c - each refresh of `latsnap top`: the aggregates of bpf/top.bpf.c read and emptied
 * into a new period, each named by its cause and object, and the counters of the stats map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/util.h"
#include "top.skel.h"
#include "top/top-int.h"

/* Cached causes before the cache starts over (new stacks keep coming on a long run). */
#define CAUSE_CACHE_MAX 65536

static void period_free(struct top_period *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++) {
		free(p->waits[i].object);
	}
	free(p->waits);
	memset(p, 0, sizeof(*p));
}

/* What the stats counters, summed over the CPUs, gained since the last refresh. */
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

/* One aggregate taken from the map, as a wait of the period. */
static void period_add(struct top *t, struct top_period *p, const struct top_key *k,
		       const struct top_value *v)
{
	struct top_wait *w = &p->waits[p->nr];
	const struct top_cause *c = top_cause_of(t, k);

	w->tgid = k->tgid;
	w->tid = k->tid;
	w->count = v->count;
	w->sum_ns = v->sum_ns;
	w->max_ns = v->max_ns;
	w->cause = c->cause;
	w->special = c->special;
	w->object = top_object_of(k);
	memcpy(w->comm, v->comm, sizeof(w->comm));
	memcpy(w->pcomm, v->pcomm, sizeof(w->pcomm));
	w->comm[sizeof(w->comm) - 1] = '\0';
	w->pcomm[sizeof(w->pcomm) - 1] = '\0';
	p->total_ns += w->sum_ns;
	p->nr++;
}

/*
 * Reads and empties the aggregate map into @p. Keys are listed first and then taken one by
 * one, so that waits ending meanwhile land in the next period rather than being lost.
 */
static int drain_map(struct top *t, struct top_period *p)
{
	int fd = bpf_map__fd(t->skel->maps.agg);
	size_t cap = bpf_map__max_entries(t->skel->maps.agg), nkeys = 0, i;
	struct top_key *keys = calloc(cap, sizeof(*keys)), *prev = NULL;
	struct top_value v;
	int ret = 0;

	p->waits = calloc(cap ? cap : 1, sizeof(*p->waits));
	if (!keys || !p->waits) {
		ret = -ENOMEM;
		goto out;
	}
	while (nkeys < cap && !bpf_map_get_next_key(fd, prev, &keys[nkeys])) {
		prev = &keys[nkeys++];
	}
	for (i = 0; i < nkeys; i++) {
		if (bpf_map_lookup_and_delete_elem(fd, &keys[i], &v)) {
			continue;
		}
		if (!v.count) {
			continue;
		}
		period_add(t, p, &keys[i], &v);
	}
out:
	free(keys);
	return ret;
}

/**
 * top_drain() - ends a period: its waits read and emptied from the kernel, named, counted
 * @t: the loaded program; t->cur receives the new period, the previous one is freed
 *
 * Return: 0, or -ENOMEM, said on stderr.
 */
int top_drain(struct top *t)
{
	struct top_period p = { 0 };
	uint64_t now = ls_now_ns();
	int ret;

	/* Only between periods: the waits of a period point to the cached texts. */
	if (t->nr_causes >= CAUSE_CACHE_MAX) {
		period_free(&t->cur);
		top_causes_clear(t);
	}
	ret = drain_map(t, &p);
	if (ret) {
		goto out;
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
	return ret;
}

/**
 * top_drain_free() - frees the last period
 * @t: its period; no longer shown
 */
void top_drain_free(struct top *t)
{
	period_free(&t->cur);
}
