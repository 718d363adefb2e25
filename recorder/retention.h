/* SPDX-License-Identifier: GPL-2.0 */
/*
 * retention.h - which snapshots a run keeps once its limits (count, size) are reached: the
 * first and the worst outlier of each cause stay; a batch that brings neither is skipped, and
 * the oldest snapshot that holds neither any more makes room for one that does. With an age
 * limit, a snapshot older than it goes too, unless it holds a first or a worst.
 *
 * The limits bound the output directory, not one run: the snapshots earlier runs left there are
 * adopted first (retention_adopt(), from their summary.json), oldest first, so that the first of
 * a cause is the oldest snapshot holding it whichever run wrote it.
 */
#ifndef LATSNAP_RETENTION_H
#define LATSNAP_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct summary;

/* Snapshots a run keeps track of, whatever the limits. */
#define RETENTION_MAX_KEPT 4096

/* One outlier of a batch, as the policy sees it. */
struct retention_item {
	const char *cause;
	uint64_t duration_ns;
};

/* What a kept snapshot holds of one cause: its longest outlier, and whether it was the first. */
struct retention_cause {
	char *cause;
	uint64_t worst_ns;
	bool first;
};

struct retention_kept {
	char id[64];
	uint64_t bytes;
	uint64_t time_ns; /* when it was written, on the caller's clock */
	struct retention_cause *causes;
	unsigned int nr_causes;
	bool incomplete; /* an earlier run's, without summary.json: only its bytes count */
};

/**
 * struct retention - the snapshots kept, oldest first, and the worst outlier persisted of each
 * cause so far
 * @max_snapshots: 0 for no limit
 * @max_size: bytes for all snapshots; 0 for no limit
 * @max_age_ns: how old a snapshot may get (retention_expired()); 0 for no limit
 */
struct retention {
	unsigned int max_snapshots;
	uint64_t max_size;
	uint64_t max_age_ns;
	struct retention_kept kept[RETENTION_MAX_KEPT];
	unsigned int nr_kept;
	unsigned int nr_incomplete; /* of @kept, the incomplete ones: first in it */
	uint64_t kept_bytes;
	struct retention_cause *seen;
	unsigned int nr_seen;
};

/*
 * What an earlier run's snapshot says of itself in its summary.json: its outliers as the policy
 * sees them, and when it was created.
 */
struct retention_summary {
	struct retention_item *items;
	size_t nr_items;
	uint64_t created_ns; /* CLOCK_REALTIME; 0 when the summary does not say */
	struct summary *summary; /* as read (SUMMARY_LENIENT): holds the items' causes */
};

/* Called with a kept snapshot about to be forgotten to make room: remove its files. */
typedef void (*retention_evict_fn)(const struct retention_kept *k, void *ctx);

bool retention_admit(struct retention *r, const struct retention_item *items, size_t n,
		     struct retention_kept *pending, retention_evict_fn evict, void *ctx,
		     bool *notable);
bool retention_notable(const struct retention *r, const struct retention_item *items, size_t n);
void retention_remember(struct retention *r, const struct retention_item *items, size_t n,
			struct retention_kept *pending);
bool retention_over_limits(const struct retention *r);
int retention_victim(const struct retention *r);
int retention_expired(const struct retention *r, uint64_t now_ns);
void retention_drop(struct retention *r, unsigned int i);
void retention_keep(struct retention *r, struct retention_kept *pending, const char *id,
		    uint64_t bytes, uint64_t time_ns);
void retention_kept_free(struct retention_kept *k);
bool retention_id_shaped(const char *name);
int retention_summary_parse(struct retention_summary *s, const char *text, size_t len);
void retention_summary_free(struct retention_summary *s);
int retention_adopt(struct retention *r, const char *id, uint64_t bytes, uint64_t time_ns,
		    const struct retention_item *items, size_t n);
int retention_adopt_incomplete(struct retention *r, const char *id, uint64_t bytes,
			       uint64_t time_ns);
void retention_free(struct retention *r);

#endif /* LATSNAP_RETENTION_H */
