/* SPDX-License-Identifier: GPL-2.0 */
/*
 * retention.h - which snapshots a run keeps once its limits (count, size) are reached: the
 * first and the worst outlier of each cause stay; a batch that brings neither is skipped, and
 * the oldest snapshot that holds neither any more makes room for one that does. With an age
 * limit, a snapshot older than it goes too, unless it holds a first or a worst.
 */
#ifndef LATSNAP_RETENTION_H
#define LATSNAP_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	uint64_t kept_bytes;
	struct retention_cause *seen;
	unsigned int nr_seen;
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
void retention_free(struct retention *r);

#endif /* LATSNAP_RETENTION_H */
