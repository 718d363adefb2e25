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
	top_stalls_free(p);
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

/*
 * One aggregate taken from the map, as a wait of the period; or, when it is waits for work,
 * counted apart, its tid added to @idle_tids.
 */
static void period_add(struct top *t, struct top_period *p, const struct top_key *k,
		       const struct top_value *v, const struct top_cause *c, uint32_t *idle_tids)
{
	struct top_wait *w = &p->waits[p->nr];

	if (top_idle_wait(t, k, c)) {
		idle_tids[p->idle_threads++] = k->tid;
		p->idle_waits += v->count;
		p->idle_ns += v->sum_ns;
		return;
	}
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

#ifndef ENOTSUPP
/* The kernel's own "not supported" (include/linux/errno.h), which bpf() passes on. */
#define ENOTSUPP 524
#endif

/* Batch operations unknown to the kernel (before 5.6), or not offered by the map's type. */
static bool batch_unsupported(int err)
{
	return err == -EINVAL || err == -ENOTSUPP || err == -EOPNOTSUPP;
}

/*
 * Takes the aggregates with BPF_MAP_LOOKUP_AND_DELETE_BATCH: each call walks the hash buckets
 * from where the last one stopped, copying and deleting each bucket's entries under its lock,
 * until the buffer is full or the last bucket is passed. The end is -ENOENT, with that last
 * call's count still valid; -ENOSPC says the next bucket does not fit in what is left of the
 * buffer, whose entries then wait for the next period. Any other error leaves the count as it
 * was given (an unknown command does not touch it), so nothing is counted from that call.
 *
 * Return: 0 or a negative errno; *@nr is what was taken either way.
 */
static int take_batch(int fd, size_t cap, struct top_key *keys, struct top_value *values,
		      size_t *nr)
{
	/* Where the walk is: a bucket index for a hash map, a key for other types. */
	struct top_key pos;
	void *in = NULL;
	__u32 count;
	int err = 0;

	*nr = 0;
	while (*nr < cap) {
		count = (__u32)(cap - *nr);
		err = bpf_map_lookup_and_delete_batch(fd, in, &pos, keys + *nr, values + *nr,
						      &count, NULL);
		if (err && err != -ENOENT) {
			break;
		}
		*nr += count;
		if (err || !count) {
			err = 0;
			break;
		}
		in = &pos;
	}
	return err == -ENOSPC ? 0 : err;
}

/*
 * Takes the aggregates one syscall per key, after the first @nr. Keys are listed first and then
 * taken one by one, so that waits ending meanwhile land in the next period rather than being
 * lost.
 */
static void take_per_key(int fd, size_t cap, struct top_key *keys, struct top_value *values,
			 size_t *nr)
{
	struct top_key *prev = NULL;
	size_t nkeys = *nr, i, n = *nr;

	while (nkeys < cap && !bpf_map_get_next_key(fd, prev, &keys[nkeys])) {
		prev = &keys[nkeys++];
	}
	for (i = *nr; i < nkeys; i++) {
		if (bpf_map_lookup_and_delete_elem(fd, &keys[i], &values[n])) {
			continue;
		}
		keys[n++] = keys[i];
	}
	*nr = n;
}

/**
 * top_drain_map() - takes (reads and deletes) the aggregates of a map, in as few syscalls as the
 * kernel allows
 * @fd: a hash map of struct top_key to struct top_value
 * @cap: room in @keys and @values; what does not fit stays in the map
 * @keys: receive the keys taken
 * @values: receive their values, in the same order
 * @batch_refused: true to take them one key at a time; set when the kernel or the map type
 *		   refuses the batch operations, for the next calls to skip them
 *
 * A wait that ends while the map is read counts in this period or the next, never in both, and
 * is never lost (but for the BPF program's own race between a lookup and its update).
 *
 * Return: how many were taken.
 */
size_t top_drain_map(int fd, size_t cap, struct top_key *keys, struct top_value *values,
		     bool *batch_refused)
{
	size_t nr = 0;
	int err;

	if (!*batch_refused) {
		err = take_batch(fd, cap, keys, values, &nr);
		if (!err) {
			return nr;
		}
		if (batch_unsupported(err) && !nr) {
			*batch_refused = true;
			ls_verbose(
				"top: no batch operations on the aggregate map (%s): one syscall "
				"per key",
				strerror(-err));
		} else {
			ls_verbose("top: reading the aggregate map in batches: %s: one syscall per "
				   "key for the rest",
				   strerror(-err));
		}
	}
	take_per_key(fd, cap, keys, values, &nr);
	return nr;
}

/* Reads and empties the aggregate map into @p. */
static int drain_map(struct top *t, struct top_period *p)
{
	size_t cap = bpf_map__max_entries(t->skel->maps.agg), nr, i;
	uint32_t *idle_tids;

	if (!t->keys) {
		t->keys = calloc(cap ? cap : 1, sizeof(*t->keys));
	}
	if (!t->values) {
		t->values = calloc(cap ? cap : 1, sizeof(*t->values));
	}
	if (!t->agg_causes) {
		t->agg_causes = calloc(cap ? cap : 1, sizeof(*t->agg_causes));
	}
	p->waits = calloc(cap ? cap : 1, sizeof(*p->waits));
	idle_tids = calloc(cap ? cap : 1, sizeof(*idle_tids));
	if (!t->keys || !t->values || !t->agg_causes || !p->waits || !idle_tids) {
		free(idle_tids);
		return -ENOMEM;
	}
	nr = top_drain_map(bpf_map__fd(t->skel->maps.agg), cap, t->keys, t->values,
			   &t->batch_refused);
	/* All named and noted at their places first: the idle policy judges a place's waits. */
	top_idle_begin(t);
	for (i = 0; i < nr; i++) {
		/* Created by a wait whose update has not landed yet: nothing to show. */
		if (!t->values[i].count) {
			continue;
		}
		t->agg_causes[i] = *top_cause_of(t, &t->keys[i], t->values[i].comm);
		top_idle_note(t, &t->keys[i], t->values[i].count, &t->agg_causes[i]);
	}
	for (i = 0; i < nr; i++) {
		if (t->values[i].count) {
			period_add(t, p, &t->keys[i], &t->values[i], &t->agg_causes[i], idle_tids);
		}
	}
	/* Until here, one per idle aggregate. */
	p->idle_threads = top_idle_threads(idle_tids, p->idle_threads);
	free(idle_tids);
	return 0;
}

/**
 * top_drain() - ends a period: its waits read and emptied from the kernel, named, counted; the
 * threads stalled now listed
 * @t: the loaded program; t->cur receives the new period, the previous one is freed
 *
 * Return: 0, or a negative errno, said on stderr.
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
	/* Said on stderr already. */
	if (top_stalls_scan(t, &p)) {
		period_free(&p);
		return -EIO;
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
 * top_drain_free() - frees the last period and the drain's buffers
 * @t: its period (no longer shown) and buffers
 */
void top_drain_free(struct top *t)
{
	period_free(&t->cur);
	free(t->keys);
	t->keys = NULL;
	free(t->values);
	t->values = NULL;
	free(t->agg_causes);
	t->agg_causes = NULL;
}
