// SPDX-License-Identifier: GPL-2.0
/*
 * idle.c - the idle policy (classify/idle.h) in `latsnap top`: which aggregates and stalled
 * threads wait for work. They are left out of the tables and the stalled list, and counted apart.
 *
 * The policy's verdicts come cached with each cause (causes.c); what it needs besides is whether
 * the thread came back to the place it waits at. The recorder knows a place by its syscall and
 * innermost user frame; top has no user stack and knows it by kernel stack, syscall and futex
 * lock bit (not by object: a condition variable waits on one of two futex words in turn),
 * remembered across refreshes as the recorder remembers its places across a run. An aggregate's
 * thread came back when it waited there more than once in the interval (its aggregates at that
 * place added up first), or in an earlier interval; a stalled thread, when it waited there
 * before, or was blocked there already when top started (the recorder's "waiting there when
 * tracking began").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify/idle.h"
#include "lib/util.h"
#include "top/top-int.h"

/*
 * Places remembered, open addressing. Full (three quarters), it starts over: some threads then
 * have a wait or two counted as latency before their place is known again.
 */
#define PLACES_SLOTS 65536

struct top_place {
	uint64_t stack;
	uint32_t tid;
	int32_t nr;
	uint8_t futex_lock;
	uint8_t used;
	/* the thread waited there in an earlier interval than that of @gen */
	uint8_t before;
	/* the interval (top_idle_begin()) @count is of */
	uint32_t gen;
	/* its waits there in that interval */
	uint64_t count;
};

/**
 * top_idle_open() - the idle policy of the run, with top's rules (their `idle` and `!idle`
 * rules), enabled unless --include-idle
 * @t: the options and the rules; receives the policy and an empty memory of places
 *
 * Return: 0, or -ENOMEM said on stderr.
 */
int top_idle_open(struct top *t)
{
	if (idle_open(&t->idle, t->rules, !t->opts.include_idle)) {
		ls_err("top: out of memory");
		return -ENOMEM;
	}
	if (t->opts.include_idle) {
		return 0;
	}
	t->places = calloc(PLACES_SLOTS, sizeof(*t->places));
	if (!t->places) {
		ls_err("top: out of memory");
		return -ENOMEM;
	}
	return 0;
}

/**
 * top_idle_close() - frees the policy and the places
 * @t: as top_idle_open() left it, even after a failure
 */
void top_idle_close(struct top *t)
{
	idle_close(t->idle);
	t->idle = NULL;
	free(t->places);
	t->places = NULL;
	t->nr_places = 0;
}

static size_t place_hash(const struct top_place *k)
{
	uint64_t h = (uint64_t)k->tid * 0x9e3779b97f4a7c15ULL;

	h ^= k->stack * 0xc2b2ae3d27d4eb4fULL;
	h ^= ((uint64_t)(uint32_t)k->nr << 1 | k->futex_lock) * 0x165667b19e3779f9ULL;
	h ^= h >> 29;
	return (size_t)(h % PLACES_SLOTS);
}

/*
 * Thread @tid's place: NULL when it never waited there, unless @add: then it is filed (a full
 * memory emptied first).
 */
static struct top_place *place_find(struct top *t, uint32_t tid, uint64_t stack, int32_t nr,
				    bool futex_lock, bool add)
{
	struct top_place k = {
		.stack = stack,
		.tid = tid,
		.nr = nr,
		.futex_lock = futex_lock,
		.used = 1,
		.gen = t->places_gen,
	};
	struct top_place *s;
	size_t i = place_hash(&k);

	for (s = &t->places[i]; s->used; s = &t->places[i]) {
		if (s->stack == k.stack && s->tid == k.tid && s->nr == k.nr &&
		    s->futex_lock == k.futex_lock) {
			return s;
		}
		i = (i + 1) % PLACES_SLOTS;
	}
	if (!add) {
		return NULL;
	}
	if (t->nr_places >= PLACES_SLOTS * 3 / 4) {
		memset(t->places, 0, PLACES_SLOTS * sizeof(*t->places));
		t->nr_places = 0;
		i = place_hash(&k);
	}
	t->places[i] = k;
	t->nr_places++;
	return &t->places[i];
}

/* Whether @c's verdict for the waits of a thread (@worker or a main thread) needs their place. */
static bool place_matters(const struct top_cause *c, bool worker)
{
	return c->idle[worker][0] != c->idle[worker][1];
}

/**
 * top_idle_begin() - a new interval: its aggregates' places are noted anew
 * @t: the policy's memory of places
 */
void top_idle_begin(struct top *t)
{
	t->places_gen++;
}

/**
 * top_idle_note() - an aggregate of the interval, noted at its place before any of them is
 * judged, so that a thread's waits there add up whatever the order they come in
 * @t: the policy's memory of places
 * @k: the aggregate's key
 * @count: its waits
 * @c: its cause, with the policy's verdicts (top_cause_of())
 */
void top_idle_note(struct top *t, const struct top_key *k, uint64_t count,
		   const struct top_cause *c)
{
	struct top_place *pl;

	/* Most waits are idle either way or not at all: no place to note. */
	if (!t->places || k->kind != TOP_WAIT_BLOCKED || !place_matters(c, k->tid != k->tgid)) {
		return;
	}
	pl = place_find(t, k->tid, k->stack, k->nr, k->futex_lock, true);
	if (pl->gen != t->places_gen) {
		pl->before = 1;
		pl->gen = t->places_gen;
		pl->count = 0;
	}
	pl->count += count;
}

/**
 * top_idle_wait() - whether the waits of an aggregate are a thread waiting for work
 * @t: the policy's memory of places, the interval's aggregates noted (top_idle_note())
 * @k: the aggregate's key
 * @c: its cause, with the policy's verdicts (top_cause_of())
 *
 * Return: true when idle; never with --include-idle.
 */
bool top_idle_wait(struct top *t, const struct top_key *k, const struct top_cause *c)
{
	bool worker = k->tid != k->tgid;
	const struct top_place *pl;

	if (!t->places || k->kind != TOP_WAIT_BLOCKED) {
		return false;
	}
	if (!place_matters(c, worker)) {
		return c->idle[worker][0];
	}
	pl = place_find(t, k->tid, k->stack, k->nr, k->futex_lock, false);
	/* NULL: the memory started over after the note; as a first wait then. */
	return c->idle[worker][pl && (pl->before || pl->count > 1)];
}

/**
 * top_idle_stall() - whether a thread waiting longer than --hang now waits for work
 * @t: the policy's memory of places (not changed: the wait has not ended)
 * @s: the record of the stall scan
 * @c: its cause, with the policy's verdicts (top_cause_of_stall())
 *
 * Return: true when idle; never with --include-idle.
 */
bool top_idle_stall(struct top *t, const struct top_stall *s, const struct top_cause *c)
{
	bool worker = s->tid != s->tgid, back;
	size_t n = s->nr_ips < TOP_MAX_DEPTH ? s->nr_ips : TOP_MAX_DEPTH;

	if (!t->places || s->kind != TOP_WAIT_BLOCKED) {
		return false;
	}
	if (!place_matters(c, worker)) {
		return c->idle[worker][0];
	}
	back = (s->flags & TOP_STALL_BEFORE_TOP) ||
	       place_find(t, s->tid, n ? top_stack_hash(s->ips, n) : 0, s->nr, s->futex_lock,
			  false);
	return c->idle[worker][back];
}

static int cmp_tid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * top_idle_threads() - how many threads a list of tids names
 * @tids: the tids, one per idle aggregate; sorted in place
 * @n: how many
 *
 * Return: the number of different ones.
 */
size_t top_idle_threads(uint32_t *tids, size_t n)
{
	size_t i, distinct = 0;

	ls_sort(tids, n, sizeof(*tids), cmp_tid);
	for (i = 0; i < n; i++) {
		if (!i || tids[i] != tids[i - 1]) {
			distinct++;
		}
	}
	return distinct;
}
