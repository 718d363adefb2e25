// SPDX-License-Identifier: GPL-2.0
/*
 * retention.c - the snapshot retention policy of `record` (--max-snapshots, --max-size,
 * --max-age), apart
 * from the files it applies to, so that it can be checked on made-up batches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/retention.h"

static const struct retention_cause *seen_find(const struct retention *r, const char *cause)
{
	unsigned int i;

	for (i = 0; i < r->nr_seen; i++) {
		if (!strcmp(r->seen[i].cause, cause)) {
			return &r->seen[i];
		}
	}
	return NULL;
}

/**
 * retention_notable() - does the batch of @n @items hold the first outlier of a cause, or one
 *                       worse than any persisted of its cause?
 */
bool retention_notable(const struct retention *r, const struct retention_item *items, size_t n)
{
	const struct retention_cause *c;
	size_t i;

	for (i = 0; i < n; i++) {
		c = seen_find(r, items[i].cause);
		if (!c || items[i].duration_ns > c->worst_ns) {
			return true;
		}
	}
	return false;
}

/* Add @cause (@dur, first or not) to the causes of @k, or raise its worst. */
static void pending_add(struct retention_kept *k, const char *cause, uint64_t dur, bool first)
{
	struct retention_cause *kc;
	unsigned int j;

	for (j = 0; j < k->nr_causes && strcmp(k->causes[j].cause, cause); j++) {
	}
	if (j < k->nr_causes) {
		if (dur > k->causes[j].worst_ns) {
			k->causes[j].worst_ns = dur;
		}
		return;
	}
	kc = realloc(k->causes, (k->nr_causes + 1) * sizeof(*kc));
	if (!kc) {
		return;
	}
	k->causes = kc;
	kc[j].cause = strdup(cause);
	kc[j].worst_ns = dur;
	kc[j].first = first;
	if (kc[j].cause) {
		k->nr_causes++;
	}
}

/**
 * retention_remember() - file the batch's causes under @pending (the snapshot it will be), and
 *                        raise the worst persisted of each cause
 * @pending: NULL to raise the worst only
 */
void retention_remember(struct retention *r, const struct retention_item *items, size_t n,
			struct retention_kept *pending)
{
	struct retention_cause *c, *grown;
	size_t i;

	for (i = 0; i < n; i++) {
		c = (struct retention_cause *)seen_find(r, items[i].cause);
		if (pending) {
			pending_add(pending, items[i].cause, items[i].duration_ns, !c);
		}
		if (c) {
			if (items[i].duration_ns > c->worst_ns) {
				c->worst_ns = items[i].duration_ns;
			}
			continue;
		}
		grown = realloc(r->seen, (r->nr_seen + 1) * sizeof(*grown));
		if (!grown) {
			continue;
		}
		r->seen = grown;
		r->seen[r->nr_seen].cause = strdup(items[i].cause);
		r->seen[r->nr_seen].worst_ns = items[i].duration_ns;
		r->seen[r->nr_seen].first = true;
		if (r->seen[r->nr_seen].cause) {
			r->nr_seen++;
		}
	}
}

/* Does @k still hold the first outlier of a cause, or the worst one persisted of it? */
static bool kept_notable(const struct retention *r, const struct retention_kept *k)
{
	const struct retention_cause *c;
	unsigned int i;

	for (i = 0; i < k->nr_causes; i++) {
		c = seen_find(r, k->causes[i].cause);
		if (k->causes[i].first || !c || k->causes[i].worst_ns >= c->worst_ns) {
			return true;
		}
	}
	return false;
}

/**
 * retention_over_limits() - would one more snapshot break a limit?
 */
bool retention_over_limits(const struct retention *r)
{
	return (r->max_snapshots && r->nr_kept + 1 > r->max_snapshots) ||
	       (r->max_size && r->kept_bytes >= r->max_size) || r->nr_kept >= RETENTION_MAX_KEPT;
}

/**
 * retention_victim() - the snapshot to remove to make room: the oldest that no longer holds a
 *                      first or a worst case
 *
 * Return: its index in @r->kept, or -1 when every one still does.
 */
int retention_victim(const struct retention *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_kept; i++) {
		if (!kept_notable(r, &r->kept[i])) {
			return (int)i;
		}
	}
	return -1;
}

/**
 * retention_expired() - the oldest snapshot older than the age limit that no longer holds a
 *                       first or a worst case, to remove
 * @now_ns: now, on the clock of the times given to retention_keep()
 *
 * A first or a worst case stays whatever its age, as it does under the other limits: the age
 * limit trims what repeats, never what is new.
 *
 * Return: its index in @r->kept, or -1 when none is due (or there is no age limit).
 */
int retention_expired(const struct retention *r, uint64_t now_ns)
{
	unsigned int i;

	if (!r->max_age_ns) {
		return -1;
	}
	/* Oldest first: the first one young enough ends the search. */
	for (i = 0; i < r->nr_kept && now_ns - r->kept[i].time_ns > r->max_age_ns; i++) {
		if (!kept_notable(r, &r->kept[i])) {
			return (int)i;
		}
	}
	return -1;
}

static void causes_free(struct retention_cause **causes, unsigned int *nr)
{
	unsigned int i;

	for (i = 0; i < *nr; i++) {
		free((*causes)[i].cause);
	}
	free(*causes);
	*causes = NULL;
	*nr = 0;
}

/**
 * retention_admit() - may a batch become a snapshot under the limits?
 * @items: the batch, @n outliers
 * @pending: empty; receives the batch's causes when room had to be made (else it stays empty,
 *	and retention_remember() files them once the snapshot is written)
 * @evict: called with each kept snapshot removed to make room, before it is forgotten (the
 *	caller removes its files)
 * @notable: set when the batch brings a first or a worst case
 *
 * Under the limits, every batch is admitted. Over them, only one that brings a first or worst
 * case, and only if the oldest snapshots that no longer hold one make enough room.
 *
 * Return: true when the batch is to be written.
 */
bool retention_admit(struct retention *r, const struct retention_item *items, size_t n,
		     struct retention_kept *pending, retention_evict_fn evict, void *ctx,
		     bool *notable)
{
	int victim;

	*notable = retention_notable(r, items, n);
	if (!retention_over_limits(r)) {
		return true;
	}
	if (!*notable) {
		return false;
	}
	/* The worst seen so far counts the batch before anything is chosen to go. */
	retention_remember(r, items, n, pending);
	while (retention_over_limits(r)) {
		victim = retention_victim(r);
		if (victim < 0) {
			retention_kept_free(pending);
			return false;
		}
		if (evict) {
			evict(&r->kept[victim], ctx);
		}
		retention_drop(r, (unsigned int)victim);
	}
	return true;
}

/**
 * retention_kept_free() - free what @k holds and leave it empty
 */
void retention_kept_free(struct retention_kept *k)
{
	causes_free(&k->causes, &k->nr_causes);
}

/**
 * retention_drop() - forget kept snapshot @i (its files are the caller's to remove)
 */
void retention_drop(struct retention *r, unsigned int i)
{
	r->kept_bytes -= r->kept[i].bytes;
	retention_kept_free(&r->kept[i]);
	memmove(&r->kept[i], &r->kept[i + 1], (r->nr_kept - i - 1) * sizeof(r->kept[0]));
	r->nr_kept--;
}

/**
 * retention_keep() - count a new snapshot @id of @bytes written at @time_ns, with the causes
 *                    filed in @pending (taken over: @pending is left empty)
 */
void retention_keep(struct retention *r, struct retention_kept *pending, const char *id,
		    uint64_t bytes, uint64_t time_ns)
{
	struct retention_kept *k;

	if (r->nr_kept >= RETENTION_MAX_KEPT) {
		retention_kept_free(pending);
		return;
	}
	k = &r->kept[r->nr_kept++];
	*k = *pending;
	pending->causes = NULL;
	pending->nr_causes = 0;
	snprintf(k->id, sizeof(k->id), "%s", id);
	k->bytes = bytes;
	k->time_ns = time_ns;
	r->kept_bytes += bytes;
}

/**
 * retention_free() - free everything @r holds (not @r itself)
 */
void retention_free(struct retention *r)
{
	unsigned int i;

	causes_free(&r->seen, &r->nr_seen);
	for (i = 0; i < r->nr_kept; i++) {
		retention_kept_free(&r->kept[i]);
	}
	r->nr_kept = 0;
	r->kept_bytes = 0;
}
