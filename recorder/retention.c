// SPDX-License-Identifier: GPL-2.0
/*
 * retention.c - the snapshot retention policy of `record` (--max-snapshots, --max-size,
 * --max-age), apart from the files it applies to, so that it can be checked on made-up batches;
 * and what it adopts of the snapshots earlier runs left in the directory.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/outlier.h"
#include "lib/summary.h"
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
	/* An incomplete snapshot is no snapshot: it counts in bytes only. */
	unsigned int snapshots = r->nr_kept - r->nr_incomplete;

	return (r->max_snapshots && snapshots + 1 > r->max_snapshots) ||
	       (r->max_size && r->kept_bytes >= r->max_size) || r->nr_kept >= RETENTION_MAX_KEPT;
}

/**
 * retention_victim() - the snapshot to remove to make room: the oldest that no longer holds a
 *                      first or a worst case
 *
 * The incomplete snapshots of earlier runs go before any, when bytes or room in @r->kept are
 * short; removing one does nothing for the count limit, so that alone takes none of them.
 *
 * Return: its index in @r->kept, or -1 when every one still does.
 */
int retention_victim(const struct retention *r)
{
	bool bytes_short = (r->max_size && r->kept_bytes >= r->max_size) ||
			   r->nr_kept >= RETENTION_MAX_KEPT;
	unsigned int i;

	for (i = 0; i < r->nr_kept; i++) {
		if (r->kept[i].incomplete) {
			if (bytes_short) {
				return (int)i;
			}
			continue;
		}
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
	/*
	 * Oldest first: the first one young enough ends the search. The incomplete ones, first
	 * in @r->kept, are not in time order with the rest: each is looked at. A time after
	 * @now_ns (a clock set back, or an earlier run's summary from a clock ahead) is young.
	 */
	for (i = 0; i < r->nr_kept; i++) {
		if (now_ns <= r->kept[i].time_ns || now_ns - r->kept[i].time_ns <= r->max_age_ns) {
			if (r->kept[i].incomplete) {
				continue;
			}
			break;
		}
		if (r->kept[i].incomplete || !kept_notable(r, &r->kept[i])) {
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
	if (r->kept[i].incomplete) {
		r->nr_incomplete--;
	}
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
	k->incomplete = false;
	r->kept_bytes += bytes;
}

/* @n digits at @s. */
static bool digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

/**
 * retention_id_shaped() - is @name a snapshot id, as `record` makes them
 *                         (20240131T235959.123Z-0001)?
 *
 * Only such names in the output directory are ever taken for snapshots: whatever else is there
 * (status.json, a user's files) is not latsnap's to count or remove.
 */
bool retention_id_shaped(const char *name)
{
	size_t seq;

	if (strlen(name) < 25 || !digits(name, 8) || name[8] != 'T' || !digits(name + 9, 6) ||
	    name[15] != '.' || !digits(name + 16, 3) || name[19] != 'Z' || name[20] != '-') {
		return false;
	}
	/* The sequence number: four digits or more, and nothing after it. */
	seq = strlen(name + 21);
	return seq >= 4 && seq <= 10 && digits(name + 21, seq);
}

/* "2024-01-31T23:59:59Z" (summary.json's "created") in CLOCK_REALTIME ns; 0 when it is not. */
static uint64_t parse_created(const char *text)
{
	struct tm tm = { 0 };
	const char *end;
	time_t t;

	end = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || strcmp(end, "Z")) {
		return 0;
	}
	t = timegm(&tm);
	if (t <= 0) {
		return 0;
	}
	return (uint64_t)t * 1000000000ull;
}

/**
 * retention_summary_parse() - what the summary.json text @text (@len bytes) of an earlier run's
 *                             snapshot holds for the policy: its outliers' causes and durations
 *                             and when it was created
 *
 * The summary is read leniently (lib/summary.c's SUMMARY_LENIENT): one written by another
 * version still counts. An outlier without a cause has the empty one, as in record; "created"
 * may be missing or odd (@s->created_ns is then 0).
 *
 * Return: 0; -EINVAL when the text is no summary (not JSON, no "outliers" array, an outlier
 * that is not an object or has no duration), with @s left empty; -ENOMEM.
 */
int retention_summary_parse(struct retention_summary *s, const char *text, size_t len)
{
	char why[512];
	size_t i;
	int err;

	memset(s, 0, sizeof(*s));
	err = summary_parse(text, len, "summary.json", SUMMARY_LENIENT, &s->summary, why,
			    sizeof(why));
	if (err) {
		err = err == -EBADMSG ? -EINVAL : err;
		goto out;
	}
	if (s->summary->created) {
		s->created_ns = parse_created(s->summary->created);
	}
	s->items = calloc(s->summary->nr_outliers ? s->summary->nr_outliers : 1, sizeof(*s->items));
	if (!s->items) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < s->summary->nr_outliers; i++) {
		s->items[i].cause = s->summary->outliers[i]->cause ?: "";
		s->items[i].duration_ns = s->summary->outliers[i]->duration_ns;
	}
	s->nr_items = s->summary->nr_outliers;
out:
	if (err) {
		retention_summary_free(s);
	}
	return err;
}

/**
 * retention_summary_free() - free what @s holds and leave it empty
 */
void retention_summary_free(struct retention_summary *s)
{
	free(s->items);
	summary_free(s->summary);
	memset(s, 0, sizeof(*s));
}

/**
 * retention_adopt() - count a complete snapshot @id an earlier run left in the directory, of
 *                     @bytes, created at @time_ns, holding the @n outliers @items (none for
 *                     one whose summary could not be read: it then goes first, oldest first)
 *
 * Call it for each, oldest first, before the run writes any: the first of a cause is the
 * oldest snapshot holding it, and the worst persisted of each cause counts theirs too.
 *
 * Return: 0, or -ENOSPC when @r keeps RETENTION_MAX_KEPT already (@id is then not counted).
 */
int retention_adopt(struct retention *r, const char *id, uint64_t bytes, uint64_t time_ns,
		    const struct retention_item *items, size_t n)
{
	struct retention_kept pending = { 0 };

	if (r->nr_kept >= RETENTION_MAX_KEPT) {
		return -ENOSPC;
	}
	retention_remember(r, items, n, &pending);
	retention_keep(r, &pending, id, bytes, time_ns);
	return 0;
}

/**
 * retention_adopt_incomplete() - count the incomplete snapshot @id (no summary.json) an earlier
 *                                run left, of @bytes, last written at @time_ns
 *
 * It counts in bytes, not as a snapshot, and is the first to go when bytes are short: it goes
 * before the complete ones in @r->kept.
 *
 * Return: 0, or -ENOSPC when @r keeps RETENTION_MAX_KEPT already.
 */
int retention_adopt_incomplete(struct retention *r, const char *id, uint64_t bytes,
			       uint64_t time_ns)
{
	struct retention_kept *k;
	unsigned int at = r->nr_incomplete;

	if (r->nr_kept >= RETENTION_MAX_KEPT) {
		return -ENOSPC;
	}
	memmove(&r->kept[at + 1], &r->kept[at], (r->nr_kept - at) * sizeof(r->kept[0]));
	k = &r->kept[at];
	memset(k, 0, sizeof(*k));
	snprintf(k->id, sizeof(k->id), "%s", id);
	k->bytes = bytes;
	k->time_ns = time_ns;
	k->incomplete = true;
	r->nr_kept++;
	r->nr_incomplete++;
	r->kept_bytes += bytes;
	return 0;
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
