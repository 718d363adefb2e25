// SPDX-License-Identifier: GPL-2.0
/*
 * causes.c - what each aggregate of `latsnap top` waited for, and what each stalled thread waits
 * for: its cause, from the recorder's rules applied to its symbolized kernel stack, its syscall
 * (a futex's lock bit as its op and val) and its thread's name, and whether the idle policy could
 * call it a wait for work, cached per (stack, syscall, lock bit, thread name); and its
 * synchronization object (a futex address, or the pipe, socket or file behind an fd).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "classify/idle.h"
#include "classify/rules.h"
#include "lib/outlier.h"
#include "classify/syscalls.h"
#include "tracker/decode.h"
#include "top.skel.h"
#include "top/top-int.h"

static int cmp_cause(const void *a, const void *b)
{
	const struct top_cause *x = a, *y = b;

	if (x->stack != y->stack) {
		return x->stack < y->stack ? -1 : 1;
	}
	if (x->nr != y->nr) {
		return x->nr < y->nr ? -1 : 1;
	}
	if (x->futex_lock != y->futex_lock) {
		return x->futex_lock ? 1 : -1;
	}
	return strcmp(x->comm, y->comm);
}

static void free_cause(void *p)
{
	struct top_cause *e = p;

	free(e->cause);
	free(e);
}

static int cmp_string(const void *a, const void *b)
{
	return strcmp(a, b);
}

static bool is_futex(int32_t nr)
{
	const char *name = nr >= 0 ? syscall_name(nr) : NULL;

	return name && !strncmp(name, "futex", 5);
}

/* Syscall @nr is on the idle list (classify/syscalls.c): a wait for work, whatever the policy. */
static bool on_idle_list(int32_t nr)
{
	const char *name = nr >= 0 ? syscall_name(nr) : NULL;
	size_t i;

	for (i = 0; name && syscall_default_idle[i]; i++) {
		if (!strcmp(name, syscall_default_idle[i])) {
			return true;
		}
	}
	return false;
}

/*
 * The idle verdicts of @e's waits, judged on @o, which stands for them: for a process's main
 * thread and for another thread, which the policy tells apart (a main thread does its process's
 * work), each for a first wait at its place and for a thread that came back to it. Nothing else
 * of pid and tid matters to it, so two stand-in ids serve every thread and the verdicts can be
 * cached with the cause.
 */
static void judge_idle(struct top *t, struct outlier *o, struct top_cause *e)
{
	const char *why;
	int worker, back;

	for (worker = 0; worker < 2; worker++) {
		o->pid = 1;
		o->tid = worker ? 2 : 1;
		for (back = 0; back < 2; back++) {
			e->idle[worker][back] = !t->opts.include_idle && on_idle_list(e->nr);
			if (!e->idle[worker][back]) {
				e->idle[worker][back] = idle_judge_wait(t->idle, o, back, &why);
			}
		}
	}
}

/*
 * The cause and idle verdicts of @e, a blocked wait in syscall e->nr (-1: none) with kernel
 * frames @ips[0..@n), of thread e->comm. A futex's lock bit goes to the rules as a synthetic op
 * and val (FUTEX_WAIT_BITSET of 2 for a lock, of 0 otherwise, private) that their futex:lock and
 * futex:wait matchers tell apart as they would the real ones. Return: 0, or -ENOMEM.
 */
static int classify_frames(struct top *t, const __u64 *ips, size_t n, struct top_cause *e)
{
	struct outlier *o = outlier_new();
	struct outlier_kstack *st;
	struct rules_match m;
	const char *name = e->nr >= 0 ? syscall_name(e->nr) : NULL;
	int err = -ENOMEM;

	if (!o || outlier_set_str(&o->syscall, name) || outlier_set_str(&o->comm, e->comm)) {
		goto out;
	}
	o->kind = e->nr >= 0 ? OUTLIER_SYSCALL : OUTLIER_SLEEP;
	o->syscall_nr = e->nr;
	o->duration_ns = 1;
	if (name && !strcmp(name, "futex")) {
		o->has_args = true;
		o->args[1] = e->futex_lock ? 128 : 128 | 9;
		o->args[2] = e->futex_lock ? 2 : 0;
	}
	if (n) {
		st = outlier_add_kstack(o, 1);
		if (!st ||
		    decode_kernel_frames(t->ksyms, ips, n < TOP_MAX_DEPTH ? n : TOP_MAX_DEPTH,
					 &st->frames)) {
			goto out;
		}
	}
	rules_classify(t->rules, o, &m);
	e->cause = strdup(m.cause);
	if (!e->cause) {
		goto out;
	}
	judge_idle(t, o, e);
	err = 0;
out:
	outlier_free(o);
	return err;
}

/*
 * The cause of a blocked wait, from the cause rules: an outlier with the stack as its only
 * kernel stack. *@cacheable is false when the stack was gone from the map.
 */
static int classify(struct top *t, struct top_cause *e, bool *cacheable)
{
	struct top_stack frames;

	*cacheable = true;
	if (e->stack &&
	    !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.stacks), &e->stack, &frames)) {
		return classify_frames(t, frames.ips, frames.nr, e);
	}
	if (e->stack) {
		*cacheable = false;
	}
	return classify_frames(t, NULL, 0, e);
}

/*
 * A cause whose stack was gone from the map: not cached, as the next refresh may find the
 * stack. Its text is kept among a few interned ones (rule causes and syscall names), for the
 * waits that point to it. Takes @e; NULL when memory ran out.
 */
static const struct top_cause *cause_uncached(struct top *t, struct top_cause *e)
{
	static struct top_cause uncached;
	char **intern;

	intern = tfind(e->cause, &t->uncached, cmp_string);
	if (intern) {
		free(e->cause);
		e->cause = *intern;
	} else if (!tsearch(e->cause, &t->uncached, cmp_string)) {
		free_cause(e);
		return NULL;
	}
	uncached.cause = e->cause;
	uncached.special = e->special;
	memcpy(uncached.idle, e->idle, sizeof(uncached.idle));
	free(e);
	return &uncached;
}

/*
 * A new cache entry for @probe's key, its cause and idle verdicts from the rules and the policy;
 * NULL when memory ran out. *@cacheable as classify()'s.
 */
static struct top_cause *cause_new(struct top *t, const struct top_cause *probe, const __u64 *ips,
				   size_t n, bool *cacheable)
{
	struct top_cause *e = calloc(1, sizeof(*e));
	int err;

	if (!e) {
		return NULL;
	}
	*e = *probe;
	if (cacheable) {
		err = classify(t, e, cacheable);
	} else {
		err = classify_frames(t, ips, n, e);
	}
	if (err) {
		free_cause(e);
		return NULL;
	}
	e->special = is_futex(e->nr) || strstr(e->cause, "contention") ||
		     strstr(e->cause, "lock contention");
	return e;
}

/* The key of the cache for a wait of thread @comm (not always terminated in the kernel's). */
static void cause_key(struct top_cause *probe, uint64_t stack, int32_t nr, bool futex_lock,
		      const char *comm)
{
	memset(probe, 0, sizeof(*probe));
	probe->stack = stack;
	probe->nr = nr;
	probe->futex_lock = futex_lock;
	snprintf(probe->comm, sizeof(probe->comm), "%.*s", (int)sizeof(probe->comm) - 1, comm);
}

/* Files @e in the cache. Return: @e, or NULL (@e freed) when memory ran out. */
static const struct top_cause *cause_cache(struct top *t, struct top_cause *e)
{
	if (!tsearch(e, &t->causes, cmp_cause)) {
		free_cause(e);
		return NULL;
	}
	t->nr_causes++;
	return e;
}

static struct top_cause cause_cpu = { .cause = RULES_CAUSE_CPU, .special = true };
static struct top_cause cause_oom = { .cause = "(out of memory)" };

/**
 * top_cause_of() - the cause of the waits of one aggregate, and its idle verdicts, from the cache
 * or the rules and the idle policy
 * @t: the cache, the rules, the policy, the stacks map
 * @k: the aggregate's key
 * @comm: its thread's name (the rules' comm: matchers)
 *
 * Return: the cause, valid until top_causes_clear(); never NULL ("(out of memory)" then).
 */
const struct top_cause *top_cause_of(struct top *t, const struct top_key *k, const char *comm)
{
	struct top_cause probe, *e, **found;
	const struct top_cause *c;
	bool cacheable;

	if (k->kind == TOP_WAIT_CPU) {
		return &cause_cpu;
	}
	cause_key(&probe, k->stack, k->nr, k->futex_lock, comm);
	found = tfind(&probe, &t->causes, cmp_cause);
	if (found) {
		return *found;
	}
	e = cause_new(t, &probe, NULL, 0, &cacheable);
	if (!e) {
		return &cause_oom;
	}
	if (!cacheable) {
		c = cause_uncached(t, e);
		return c ? c : &cause_oom;
	}
	c = cause_cache(t, e);
	return c ? c : &cause_oom;
}

/**
 * top_stack_hash() - the hash bpf/top.bpf.c files a stack under (capture_stack()): the same
 * stack, the same key
 * @ips: its frames, innermost first
 * @n: how many (those beyond TOP_MAX_DEPTH do not count)
 *
 * Return: the hash, never 0.
 */
uint64_t top_stack_hash(const __u64 *ips, size_t n)
{
	uint64_t hash = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < n && i < TOP_MAX_DEPTH; i++) {
		hash = (hash ^ ips[i]) * 1099511628211ull;
	}
	return hash ? hash : 1;
}

/**
 * top_cause_of_stall() - the cause of a wait still going on, and its idle verdicts, from its
 * kernel stack, syscall and thread through the same rules, policy and cache as the aggregates'
 * @t: the cache, the rules, the idle policy
 * @s: the record of the stall scan
 *
 * Return: the cause, valid until top_causes_clear(); never NULL ("(out of memory)" then).
 */
const struct top_cause *top_cause_of_stall(struct top *t, const struct top_stall *s)
{
	size_t n = s->nr_ips < TOP_MAX_DEPTH ? s->nr_ips : TOP_MAX_DEPTH;
	struct top_cause probe, *e, **found;
	const struct top_cause *c;

	if (s->kind == TOP_WAIT_CPU) {
		return &cause_cpu;
	}
	cause_key(&probe, n ? top_stack_hash(s->ips, n) : 0, s->nr, s->futex_lock, s->comm);
	found = tfind(&probe, &t->causes, cmp_cause);
	if (found) {
		return *found;
	}
	e = cause_new(t, &probe, s->ips, n, NULL);
	c = e ? cause_cache(t, e) : NULL;
	return c ? c : &cause_oom;
}

/**
 * top_causes_clear() - empties the cause cache (new stacks keep coming on a long run)
 * @t: its cache; no wait may point to a cached text any more
 */
void top_causes_clear(struct top *t)
{
	if (t->causes) {
		tdestroy(t->causes, free_cause);
	}
	t->causes = NULL;
	t->nr_causes = 0;
}

/**
 * top_causes_free() - frees the cause cache and the interned texts of uncached causes
 * @t: its cache; no wait may point to either any more
 */
void top_causes_free(struct top *t)
{
	top_causes_clear(t);
	if (t->uncached) {
		tdestroy(t->uncached, free);
	}
	t->uncached = NULL;
}

/**
 * top_object_of() - the synchronization object an aggregate waited on, as the screen names it
 * @k: the aggregate's key
 *
 * Return: "futex 0x... (pid N)", "pipe:[123]", "socket:[456]", "PATH (pid N)", or "fd N of pid
 * N" when the fd is closed since (free() it); NULL when the syscall names no object or memory
 * ran out.
 */
char *top_object_of(const struct top_key *k)
{
	char path[64], target[256];
	char *text = NULL;
	ssize_t n;

	if (k->obj_kind == TOP_OBJ_FUTEX) {
		if (asprintf(&text, "futex 0x%" PRIx64 " (pid %u)", (uint64_t)k->obj, k->tgid) <
		    0) {
			text = NULL;
		}
		return text;
	}
	if (k->obj_kind != TOP_OBJ_FD || k->obj > INT_MAX) {
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", k->tid, (int)k->obj);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		/* Closed since, or the process is gone. */
		snprintf(target, sizeof(target), "fd %d of pid %u", (int)k->obj, k->tgid);
	} else {
		target[n] = '\0';
	}
	/* Pipes and sockets are named by inode, shared by every process that holds them. */
	if (n >= 0 && target[0] != '/') {
		text = strdup(target);
	} else if (n >= 0) {
		if (asprintf(&text, "%s (pid %u)", target, k->tgid) < 0) {
			text = NULL;
		}
	} else {
		text = strdup(target);
	}
	/* A path can hold anything: nothing below a space reaches the terminal. */
	for (char *p = text; p && *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*p = '?';
		}
	}
	return text;
}
