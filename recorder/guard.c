// SPDX-License-Identifier: GPL-2.0
/*
 * guard.c - the flood guard: whether an outlier may start a snapshot. An always-on recorder
 * must write nothing when nothing new is wrong, and one tenant must not spend everyone's
 * snapshots. Three rules, in order (man page, "Flood guard"):
 *
 *   1. a repeat: the same process, cause, syscall and stacks (the wait site) snapshotted less
 *      than repeat_ns ago starts none, unless it lasted at least twice the worst snapshotted;
 *   2. a cause new to its user in the last 60 s (a different problem in the middle of a storm)
 *      gets its snapshot, unless that user has had twice user_per_minute in those 60 s;
 *   3. otherwise, at most user_per_minute snapshots in any 60 s for one user's outliers, and
 *      per_minute for all users together.
 *
 * So one user takes at most 2 x user_per_minute snapshots a minute whatever it does, and cannot
 * spend another user's: each user's first outlier of each cause is taken.
 *
 * An outlier held back is still reported (stdout, --json); it joins a snapshot already on its
 * way, and otherwise is counted as skipped, by reason and by process, in the next summary, in
 * status.json and in the totals line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/outlier.h"
#include "recorder/guard.h"

#define MINUTE_NS 60000000000ULL
/* Wait sites remembered; full, the oldest goes (it may then start one more snapshot). */
#define SITES_MAX 4096
/* Users with snapshots in the last minute, and causes; beyond, the oldest is forgotten. */
#define USERS_MAX 64
#define CAUSES_MAX 256
/* A budget's snapshots remembered (its times): more than this is no limit in practice. */
#define RING_MAX 256
/* Processes with outliers held back since the last snapshot, listed in its summary. */
#define HELD_MAX 256
/* Frames of each stack that make a site: the innermost, where it waits. */
#define SITE_FRAMES 16

/* Snapshot times within a minute, oldest first (a ring). */
struct ring {
	uint64_t t[RING_MAX];
	unsigned int head, nr;
};

struct site {
	uint64_t key; /* 0: free */
	uint64_t last_ns; /* its last snapshot */
	uint64_t worst_ns; /* the longest of it snapshotted */
};

struct user {
	uint32_t uid;
	bool used;
	struct ring ring;
};

/* A cause of one user's, and its last snapshot. */
struct cause {
	char *text;
	uint32_t uid;
	uint64_t last_ns;
};

struct guard {
	struct guard_opts opts;
	struct site *sites;
	size_t nr_sites;
	struct ring all;
	struct user users[USERS_MAX];
	struct cause causes[CAUSES_MAX];
	struct guard_held held[HELD_MAX];
	size_t nr_held;
	struct guard_totals totals;
};

static const char *const verdict_texts[GUARD_NR_VERDICTS] = {
	[GUARD_SNAPSHOT] = "snapshot",
	[GUARD_REPEAT] = "a repeat of a wait site snapshotted lately",
	[GUARD_USER_BUDGET] = "its user's snapshots of the last minute are spent",
	[GUARD_BUDGET] = "the snapshots of the last minute are spent, and its cause had one",
};

/**
 * guard_verdict_text() - what @v means, for people
 */
const char *guard_verdict_text(enum guard_verdict v)
{
	return v < GUARD_NR_VERDICTS ? verdict_texts[v] : "?";
}

/**
 * guard_open() - a flood guard with @opts
 *
 * Return: 0, or -ENOMEM.
 */
int guard_open(struct guard **gp, const struct guard_opts *opts)
{
	struct guard *g = calloc(1, sizeof(*g));

	if (!g) {
		return -ENOMEM;
	}
	g->sites = calloc(SITES_MAX, sizeof(*g->sites));
	if (!g->sites) {
		free(g);
		return -ENOMEM;
	}
	g->opts = *opts;
	*gp = g;
	return 0;
}

/**
 * guard_set_opts() - new limits (record's reload); what was counted stays
 */
void guard_set_opts(struct guard *g, const struct guard_opts *opts)
{
	g->opts = *opts;
}

/**
 * guard_close() - free @g
 */
void guard_close(struct guard *g)
{
	size_t i;

	if (!g) {
		return;
	}
	for (i = 0; i < CAUSES_MAX; i++) {
		free(g->causes[i].text);
	}
	free(g->sites);
	free(g);
}

/* FNV-1a, 64 bits. */
static uint64_t mix(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h = (h ^ p[i]) * 1099511628211ULL;
	}
	return h;
}

static uint64_t mix_frames(uint64_t h, const struct outlier_frames *f)
{
	size_t i;

	for (i = 0; i < f->nr && i < SITE_FRAMES; i++) {
		h = mix(h, &f->v[i].addr, sizeof(f->v[i].addr));
	}
	return h;
}

/*
 * The wait site of @o: its process, cause, syscall and user stack. Not its kernel stacks: the
 * cause says where it waited, and an outlier over its share has none (the BPF side's throttle).
 * A site seen with and without its unwound stack is two sites: at worst one snapshot more.
 */
static uint64_t site_key(const struct outlier *o)
{
	uint64_t h = 14695981039346656037ULL;

	h = mix(h, &o->pid, sizeof(o->pid));
	h = mix(h, &o->kind, sizeof(o->kind));
	h = mix(h, &o->syscall_nr, sizeof(o->syscall_nr));
	if (o->cause) {
		h = mix(h, o->cause, strlen(o->cause));
	}
	h = mix_frames(h, &o->user_stack.frames);
	return h ? h : 1;
}

static struct site *site_find(struct guard *g, uint64_t key, bool add)
{
	size_t i, slot = key % SITES_MAX;

	for (i = 0; i < SITES_MAX; i++, slot = (slot + 1) % SITES_MAX) {
		if (g->sites[slot].key == key) {
			return &g->sites[slot];
		}
		if (!g->sites[slot].key) {
			break;
		}
	}
	if (!add) {
		return NULL;
	}
	if (g->nr_sites >= SITES_MAX * 3 / 4) {
		/* Full: start over (a site forgotten may start one snapshot more). */
		memset(g->sites, 0, SITES_MAX * sizeof(*g->sites));
		g->nr_sites = 0;
		slot = key % SITES_MAX;
	}
	while (g->sites[slot].key) {
		slot = (slot + 1) % SITES_MAX;
	}
	g->sites[slot].key = key;
	g->nr_sites++;
	return &g->sites[slot];
}

/* How many of @r's snapshots are within the minute before @now (older ones go). */
static unsigned int ring_count(struct ring *r, uint64_t now)
{
	while (r->nr && r->t[r->head] + MINUTE_NS <= now) {
		r->head = (r->head + 1) % RING_MAX;
		r->nr--;
	}
	return r->nr;
}

static void ring_add(struct ring *r, uint64_t now)
{
	if (r->nr == RING_MAX) {
		r->head = (r->head + 1) % RING_MAX;
		r->nr--;
	}
	r->t[(r->head + r->nr) % RING_MAX] = now;
	r->nr++;
}

/* The real user id of @o's process: the BPF side's, or /proc's; UINT32_MAX when gone. */
static uint32_t uid_of(const struct outlier *o)
{
	char path[64], line[256];
	unsigned int uid;
	uint32_t found = UINT32_MAX;
	FILE *f;

	if (o->has_uid) {
		return o->uid;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", o->pid);
	f = fopen(path, "re");
	if (!f) {
		return UINT32_MAX;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u", &uid) == 1) {
			found = uid;
			break;
		}
	}
	fclose(f);
	return found;
}

static struct user *user_find(struct guard *g, uint32_t uid, bool add, uint64_t now)
{
	struct user *u, *oldest = NULL;
	size_t i;

	for (i = 0; i < USERS_MAX; i++) {
		u = &g->users[i];
		if (u->used && u->uid == uid) {
			return u;
		}
	}
	if (!add) {
		return NULL;
	}
	for (i = 0; i < USERS_MAX; i++) {
		u = &g->users[i];
		if (!u->used || !ring_count(&u->ring, now)) {
			break;
		}
		if (!oldest || u->ring.t[(u->ring.head + u->ring.nr - 1) % RING_MAX] <
				       oldest->ring.t[(oldest->ring.head + oldest->ring.nr - 1) %
						      RING_MAX]) {
			oldest = u;
		}
	}
	u = i < USERS_MAX ? &g->users[i] : oldest;
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	u->used = true;
	return u;
}

static struct cause *cause_find(struct guard *g, uint32_t uid, const char *text, bool add)
{
	struct cause *c, *oldest = NULL;
	size_t i;

	for (i = 0; i < CAUSES_MAX; i++) {
		c = &g->causes[i];
		if (c->text && c->uid == uid && !strcmp(c->text, text)) {
			return c;
		}
		if (!oldest || !c->text || (oldest->text && c->last_ns < oldest->last_ns)) {
			oldest = c;
		}
	}
	if (!add) {
		return NULL;
	}
	free(oldest->text);
	oldest->text = strdup(text);
	oldest->uid = uid;
	oldest->last_ns = 0;
	return oldest->text ? oldest : NULL;
}

/**
 * guard_judge() - may @o start a snapshot at @now? Nothing is counted: guard_hold() counts one
 * held back, guard_taken() the snapshot one started.
 */
enum guard_verdict guard_judge(struct guard *g, const struct outlier *o, uint64_t now)
{
	uint32_t uid = uid_of(o);
	struct site *site = NULL;
	unsigned int spent = 0;
	struct cause *c;
	struct user *u;

	if (g->opts.repeat_ns) {
		site = site_find(g, site_key(o), false);
	}
	if (site && site->last_ns + g->opts.repeat_ns > now && o->duration_ns < 2 * site->worst_ns) {
		return GUARD_REPEAT;
	}
	u = user_find(g, uid, false, now);
	if (u) {
		spent = ring_count(&u->ring, now);
	}
	if (g->opts.user_per_minute && spent >= 2 * g->opts.user_per_minute) {
		return GUARD_USER_BUDGET;
	}
	c = o->cause ? cause_find(g, uid, o->cause, false) : NULL;
	if (!c || c->last_ns + MINUTE_NS <= now) {
		/* The first of its cause for its user in this minute. */
		return GUARD_SNAPSHOT;
	}
	if (g->opts.user_per_minute && spent >= g->opts.user_per_minute) {
		return GUARD_USER_BUDGET;
	}
	if (g->opts.per_minute && ring_count(&g->all, now) >= g->opts.per_minute) {
		return GUARD_BUDGET;
	}
	return GUARD_SNAPSHOT;
}

/**
 * guard_hold() - @o started no snapshot (@v) and joins none: counted, by reason and process
 */
void guard_hold(struct guard *g, const struct outlier *o, enum guard_verdict v)
{
	struct guard_held *h = NULL;
	size_t i;

	if (v <= GUARD_SNAPSHOT || v >= GUARD_NR_VERDICTS) {
		return;
	}
	g->totals.held[v]++;
	for (i = 0; i < g->nr_held; i++) {
		if (g->held[i].pid == o->pid) {
			h = &g->held[i];
			break;
		}
	}
	if (!h && g->nr_held < HELD_MAX) {
		h = &g->held[g->nr_held++];
		memset(h, 0, sizeof(*h));
		h->pid = o->pid;
		h->uid = uid_of(o);
		snprintf(h->comm, sizeof(h->comm), "%s", o->comm ? o->comm : "");
	}
	if (h) {
		h->held[v]++;
	}
}

/**
 * guard_taken() - a snapshot was written at @now for the @n outliers of @batch: their sites are
 * snapshotted, their users and causes have one more in this minute
 */
void guard_taken(struct guard *g, struct outlier *const *batch, size_t n, uint64_t now)
{
	uint32_t uids[16];
	size_t i, j, nr_uids = 0;
	struct site *site;
	struct cause *c;
	struct user *u;
	uint32_t uid;

	ring_add(&g->all, now);
	for (i = 0; i < n; i++) {
		if (g->opts.repeat_ns) {
			site = site_find(g, site_key(batch[i]), true);
			if (site) {
				site->last_ns = now;
				if (batch[i]->duration_ns > site->worst_ns) {
					site->worst_ns = batch[i]->duration_ns;
				}
			}
		}
		uid = uid_of(batch[i]);
		c = batch[i]->cause ? cause_find(g, uid, batch[i]->cause, true) : NULL;
		if (c) {
			c->last_ns = now;
		}
		/* Each user in the batch is charged once for it. */
		for (j = 0; j < nr_uids && uids[j] != uid; j++) {
		}
		if (j < nr_uids || nr_uids == sizeof(uids) / sizeof(uids[0])) {
			continue;
		}
		uids[nr_uids++] = uid;
		u = user_find(g, uid, true, now);
		ring_add(&u->ring, now);
	}
}

/**
 * guard_totals() - what the guard held back so far
 */
void guard_totals(const struct guard *g, struct guard_totals *t)
{
	*t = g ? g->totals : (struct guard_totals){ 0 };
}

/**
 * guard_window() - the processes with outliers held back since the last guard_window_reset()
 *
 * Return: how many; *@held points at them until the next guard call.
 */
size_t guard_window(const struct guard *g, const struct guard_held **held)
{
	*held = g ? g->held : NULL;
	return g ? g->nr_held : 0;
}

/**
 * guard_window_reset() - a snapshot's summary has listed what was held back: a new window
 */
void guard_window_reset(struct guard *g)
{
	if (g) {
		g->nr_held = 0;
	}
}
