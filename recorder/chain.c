// SPDX-License-Identifier: GPL-2.0
/*
 * chain.c - who held each outlier up. The outlier's thread was blocked until a waker woke it;
 * during that wait the waker ran on a CPU, waited for one, or was blocked itself, on something
 * and until its own waker woke it; and so on. This follows that chain through the scheduler
 * events the BPF side streamed into the snapshot (latsnap_kernel:sched_switch, sched_wakeup,
 * syscall, interest), across processes, CHAIN_MAX_DEPTH links at most, each inside the window
 * of the wait it explains.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "recorder/chain.h"
#include "trace/ctf.h"
#include "lib/ojson.h"
#include "tracker/tracker.h"
#include "lib/util.h"

enum kev_kind {
	KEV_SWITCH,
	KEV_WAKEUP,
	KEV_SYSCALL,
	KEV_INTEREST,
};

/* One event of the stream, as much of it as the analysis needs. */
struct kev {
	uint64_t ts; /* the kernel's time of it */
	uint64_t start; /* KEV_SYSCALL: its entry */
	int32_t tid; /* SWITCH: prev; WAKEUP: the woken; SYSCALL, INTEREST: the thread */
	int32_t pid;
	int32_t tid2; /* SWITCH: next; WAKEUP: current at the wakeup */
	int32_t pid2;
	int64_t prev_state;
	uint8_t kind;
	uint8_t preempted;
	uint8_t in_irq; /* WAKEUP: from an interrupt, so tid2 is a bystander */
	char comm[16];
	char comm2[16];
	char syscall[32]; /* SWITCH: prev's syscall; SYSCALL: its name */
	uint64_t *ips; /* SWITCH: prev's stack when it blocked */
	unsigned int nr_ips;
};

struct kevs {
	struct kev *v;
	size_t n, cap;
	struct tracker *tr;
	int err;
};

static void str_into(struct json_object *o, const char *key, char *buf, size_t size)
{
	struct json_object *v;

	buf[0] = '\0';
	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)) {
		snprintf(buf, size, "%s", json_object_get_string(v));
	}
}

/* The addresses of array @key of @o, malloc'ed into *@ips; their count. */
static unsigned int ips_of(struct json_object *o, const char *key, uint64_t **ips)
{
	struct json_object *arr;
	size_t i, n;

	*ips = NULL;
	if (!json_object_object_get_ex(o, key, &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		return 0;
	}
	n = json_object_array_length(arr);
	if (!n || n > 128) {
		return 0;
	}
	*ips = malloc(n * sizeof(**ips));
	if (!*ips) {
		return 0;
	}
	for (i = 0; i < n; i++) {
		(*ips)[i] = (uint64_t)json_object_get_int64(json_object_array_get_idx(arr, i));
	}
	return (unsigned int)n;
}

static int collect(const struct ctf_event *ev, void *ctx)
{
	struct kevs *ks = ctx;
	const char *name = ev->name + strlen("latsnap_kernel:");
	struct json_object *f = ev->fields;
	struct kev *k, *grown;
	uint64_t *ips;
	unsigned int own;

	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? ks->cap * 2 : 4096;
		grown = realloc(ks->v, ks->cap * sizeof(*ks->v));
		if (!grown) {
			ks->err = -ENOMEM;
			return -ENOMEM;
		}
		ks->v = grown;
	}
	k = &ks->v[ks->n];
	memset(k, 0, sizeof(*k));
	k->ts = (uint64_t)ojson_i64(f, "ts_ns");
	if (!strcmp(name, "sched_switch")) {
		k->kind = KEV_SWITCH;
		k->tid = (int32_t)ojson_i64(f, "prev_tid");
		k->pid = (int32_t)ojson_i64(f, "prev_pid");
		k->tid2 = (int32_t)ojson_i64(f, "next_tid");
		k->pid2 = (int32_t)ojson_i64(f, "next_pid");
		k->prev_state = ojson_i64(f, "prev_state");
		k->preempted = (uint8_t)ojson_i64(f, "preempted");
		str_into(f, "prev_comm", k->comm, sizeof(k->comm));
		str_into(f, "next_comm", k->comm2, sizeof(k->comm2));
		str_into(f, "prev_syscall", k->syscall, sizeof(k->syscall));
		k->nr_ips = ips_of(f, "prev_stack", &k->ips);
	} else if (!strcmp(name, "sched_wakeup")) {
		k->kind = KEV_WAKEUP;
		k->tid = (int32_t)ojson_i64(f, "tid");
		k->pid = (int32_t)ojson_i64(f, "pid");
		k->tid2 = (int32_t)ojson_i64(f, "waker_tid");
		k->pid2 = (int32_t)ojson_i64(f, "waker_pid");
		str_into(f, "comm", k->comm, sizeof(k->comm));
		str_into(f, "waker_comm", k->comm2, sizeof(k->comm2));
		k->in_irq = ojson_i64(f, "in_irq") != 0;
		if (!k->in_irq && ips_of(f, "waker_stack", &ips)) {
			k->in_irq = tracker_wake_context(
					    ks->tr, ips,
					    (unsigned int)json_object_array_length(
						    json_object_object_get(f, "waker_stack")),
					    &own) != 0;
			free(ips);
		}
	} else if (!strcmp(name, "syscall")) {
		k->kind = KEV_SYSCALL;
		k->tid = (int32_t)ojson_i64(f, "tid");
		k->pid = (int32_t)ojson_i64(f, "pid");
		k->start = (uint64_t)ojson_i64(f, "start_ns");
		str_into(f, "comm", k->comm, sizeof(k->comm));
		str_into(f, "name", k->syscall, sizeof(k->syscall));
	} else if (!strcmp(name, "interest")) {
		k->kind = KEV_INTEREST;
		k->tid = (int32_t)ojson_i64(f, "tid");
		k->pid = (int32_t)ojson_i64(f, "pid");
		str_into(f, "comm", k->comm, sizeof(k->comm));
	} else {
		return 0;
	}
	ks->n++;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct kev *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

enum run { RUN_UNKNOWN, RUN_CPU, RUN_QUEUED, RUN_BLOCKED };

/* What thread @tid did in [from, to], and the longest time it was blocked then. */
struct link {
	int32_t tid, pid;
	char comm[16];
	uint64_t from, to;
	uint64_t ns[4]; /* by enum run */
	/* The longest blocked stretch: [block_from, block_to], entered at *block_out. */
	uint64_t block_from, block_to;
	const struct kev *block_out;
	const struct kev *block_wake; /* what ended it, if a wakeup did */
	uint64_t unknown_until; /* the thread's record starts then (it became of interest) */
};

/* The state @tid is in right after @k, an event about it. */
static enum run after(const struct kev *k, int32_t tid)
{
	switch (k->kind) {
	case KEV_SWITCH:
		if (k->tid == tid) {
			return k->preempted || k->prev_state == 0 ? RUN_QUEUED : RUN_BLOCKED;
		}
		return RUN_CPU;
	case KEV_WAKEUP:
		return k->tid == tid ? RUN_QUEUED : RUN_CPU;
	default:
		return RUN_UNKNOWN;
	}
}

/* The state @tid was in right before @k, an event about it, as far as @k alone tells. */
static enum run before(const struct kev *k, int32_t tid)
{
	switch (k->kind) {
	case KEV_SWITCH:
		return k->tid == tid ? RUN_CPU : RUN_QUEUED;
	case KEV_WAKEUP:
		return k->tid == tid ? RUN_BLOCKED : RUN_CPU;
	default:
		return RUN_UNKNOWN;
	}
}

/* Is @k an event that says something of @tid's scheduling? */
static bool about(const struct kev *k, int32_t tid)
{
	switch (k->kind) {
	case KEV_SWITCH:
		return k->tid == tid || k->tid2 == tid;
	case KEV_WAKEUP:
		/* A wakeup from an interrupt says nothing of the task it landed on. */
		return k->tid == tid || (k->tid2 == tid && !k->in_irq);
	default:
		return false;
	}
}

static void analyze(const struct kevs *ks, struct link *l)
{
	enum run state = RUN_UNKNOWN;
	uint64_t t = l->from, stretch_from = 0;
	const struct kev *stretch_out = NULL, *k;
	size_t i;

	/* Its record starts when it became of interest, if that was inside the window. */
	for (i = 0; i < ks->n && ks->v[i].ts <= l->to; i++) {
		k = &ks->v[i];
		if (k->kind == KEV_INTEREST && k->tid == l->tid && k->ts > l->from) {
			l->unknown_until = k->ts;
		}
	}
	for (i = 0; i < ks->n && ks->v[i].ts <= l->to; i++) {
		k = &ks->v[i];
		if (!about(k, l->tid)) {
			continue;
		}
		if (k->ts <= l->from) {
			state = after(k, l->tid);
			if (state == RUN_BLOCKED) {
				stretch_from = l->from;
				stretch_out = k;
			}
			continue;
		}
		if (state == RUN_UNKNOWN && k->ts > l->unknown_until) {
			/* No event before the window: the first one inside tells what came before. */
			state = before(k, l->tid);
			if (state == RUN_BLOCKED) {
				stretch_from = t;
				stretch_out = NULL;
			}
		}
		if (t < l->unknown_until) {
			l->ns[RUN_UNKNOWN] +=
				(k->ts < l->unknown_until ? k->ts : l->unknown_until) - t;
			t = k->ts < l->unknown_until ? k->ts : l->unknown_until;
		}
		l->ns[state] += k->ts - t;
		if (state == RUN_BLOCKED && after(k, l->tid) != RUN_BLOCKED &&
		    k->ts - stretch_from > l->block_to - l->block_from) {
			l->block_from = stretch_from;
			l->block_to = k->ts;
			l->block_out = stretch_out;
			l->block_wake = k->kind == KEV_WAKEUP && k->tid == l->tid ? k : NULL;
		}
		if (after(k, l->tid) == RUN_BLOCKED && state != RUN_BLOCKED) {
			stretch_from = k->ts;
			stretch_out = k;
		}
		state = after(k, l->tid);
		t = k->ts;
		if (!l->comm[0]) {
			snprintf(l->comm, sizeof(l->comm), "%s",
				 (k->kind == KEV_SWITCH && k->tid2 == l->tid) ||
						 (k->kind == KEV_WAKEUP && k->tid2 == l->tid) ?
					 k->comm2 :
					 k->comm);
			l->pid = (k->kind == KEV_SWITCH && k->tid2 == l->tid) ||
						 (k->kind == KEV_WAKEUP && k->tid2 == l->tid) ?
					 k->pid2 :
					 k->pid;
		}
	}
	if (state == RUN_UNKNOWN && !l->unknown_until) {
		/* Nothing at all about it in the window, though it woke the previous link at its end. */
		state = RUN_CPU;
	}
	if (t < l->to) {
		l->ns[state] += l->to - t;
		if (state == RUN_BLOCKED && l->to - stretch_from > l->block_to - l->block_from) {
			l->block_from = stretch_from;
			l->block_to = l->to;
			l->block_out = stretch_out;
			l->block_wake = NULL;
		}
	}
}

/* The wakeup that ended @tid's wait at about @at: the last one in [from, at]. */
static const struct kev *wakeup_of(const struct kevs *ks, int32_t tid, uint64_t from, uint64_t at)
{
	const struct kev *found = NULL;
	size_t i;

	for (i = 0; i < ks->n && ks->v[i].ts <= at; i++) {
		if (ks->v[i].kind == KEV_WAKEUP && ks->v[i].tid == tid && ks->v[i].ts >= from) {
			found = &ks->v[i];
		}
	}
	return found;
}

/* The streamed syscall of @tid that overlaps [from, to] the most, or NULL. */
static const struct kev *syscall_during(const struct kevs *ks, int32_t tid, uint64_t from,
					uint64_t to)
{
	const struct kev *best = NULL;
	uint64_t best_ns = 0, lo, hi;
	size_t i;

	for (i = 0; i < ks->n; i++) {
		const struct kev *k = &ks->v[i];

		if (k->kind != KEV_SYSCALL || k->tid != tid || k->ts < from || k->start > to) {
			continue;
		}
		lo = k->start > from ? k->start : from;
		hi = k->ts < to ? k->ts : to;
		if (hi > lo && hi - lo > best_ns) {
			best = k;
			best_ns = hi - lo;
		}
	}
	return best;
}

static struct json_object *u64_json(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

static struct json_object *link_json(const struct kevs *ks, const struct link *l, int depth)
{
	struct json_object *o = json_object_new_object();
	const struct kev *sc;
	const char *syscall = NULL;

	json_object_object_add(o, "depth", json_object_new_int(depth));
	json_object_object_add(o, "pid", json_object_new_int(l->pid));
	json_object_object_add(o, "tid", json_object_new_int(l->tid));
	json_object_object_add(o, "comm", json_object_new_string(l->comm));
	json_object_object_add(o, "from_ns", u64_json(l->from));
	json_object_object_add(o, "to_ns", u64_json(l->to));
	json_object_object_add(o, "on_cpu_ns", u64_json(l->ns[RUN_CPU]));
	json_object_object_add(o, "blocked_ns", u64_json(l->ns[RUN_BLOCKED]));
	json_object_object_add(o, "runqueue_ns", u64_json(l->ns[RUN_QUEUED]));
	if (l->ns[RUN_UNKNOWN]) {
		json_object_object_add(o, "unknown_ns", u64_json(l->ns[RUN_UNKNOWN]));
	}
	if (l->block_out && l->block_out->syscall[0] && l->ns[RUN_BLOCKED] >= l->ns[RUN_CPU] / 2) {
		syscall = l->block_out->syscall;
	} else {
		sc = syscall_during(ks, l->tid, l->from, l->to);
		syscall = sc ? sc->syscall : NULL;
	}
	json_object_object_add(o, "syscall", syscall ? json_object_new_string(syscall) : NULL);
	json_object_object_add(o, "frames",
			       l->block_out && l->block_out->nr_ips ?
				       tracker_kernel_frames(ks->tr, l->block_out->ips,
							     l->block_out->nr_ips) :
				       json_object_new_array());
	return o;
}

/* The wait chain of @outlier: its waker, that waker's waker through its longest wait, ... */
static struct json_object *chain_of(const struct kevs *ks, struct json_object *outlier)
{
	struct json_object *chain = json_object_new_array();
	int32_t tid = (int32_t)ojson_i64(outlier, "tid"), seen[CHAIN_MAX_DEPTH + 1];
	uint64_t from = (uint64_t)ojson_i64(outlier, "start_ns"),
		 to = (uint64_t)ojson_i64(outlier, "end_ns");

	/* Each link spans from the start of the wait it explains to the wakeup that ended it. */
	const struct kev *wake;
	struct link l;
	int depth, nr_seen = 0, i;
	char text[200];

	seen[nr_seen++] = tid;
	wake = wakeup_of(ks, tid, from, to);
	for (depth = 1; depth <= CHAIN_MAX_DEPTH && wake && !wake->in_irq && wake->tid2 > 0;
	     depth++) {
		for (i = 0; i < nr_seen; i++) {
			if (seen[i] == wake->tid2) {
				break;
			}
		}
		if (i < nr_seen) {
			break;
		}
		seen[nr_seen++] = wake->tid2;
		memset(&l, 0, sizeof(l));
		l.tid = wake->tid2;
		l.pid = wake->pid2;
		snprintf(l.comm, sizeof(l.comm), "%s", wake->comm2);
		l.from = from;
		l.to = wake->ts;
		analyze(ks, &l);
		json_object_array_add(chain, link_json(ks, &l, depth));
		if (l.unknown_until) {
			snprintf(
				text, sizeof(text),
				"wait-chain-partial: %s (tid %d) was followed only from %.1f ms into "
				"the wait, when it became of interest",
				l.comm, l.tid, (double)(l.unknown_until - l.from) / 1e6);
			ojson_add_flag(outlier, text);
		}
		/* Followed further only through a wait that matters to this window. */
		if (!l.block_wake || (l.block_to - l.block_from) * 10 < l.to - l.from) {
			break;
		}
		wake = l.block_wake;
		from = l.block_from;
	}
	return chain;
}

/**
 * chain_build - set "wait_chain" of every outlier of @outliers from the kernel context events
 * of the trace in @trace_dir. Outliers woken from an interrupt, or by nobody the stream saw,
 * keep an empty chain.
 *
 * Return: 0, or a negative errno when the trace could not be read (the chains stay empty).
 */
int chain_build(const char *trace_dir, struct json_object *outliers, struct tracker *tr)
{
	struct kevs ks = { .tr = tr };
	size_t i, n = json_object_array_length(outliers);
	int err;

	err = ctf_read(trace_dir, "latsnap_kernel:", collect, &ks);
	if (err || ks.err) {
		err = err ? err : ks.err;
		goto out;
	}
	ls_sort(ks.v, ks.n, sizeof(*ks.v), by_time);
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(outliers, i);

		json_object_object_add(o, "wait_chain", chain_of(&ks, o));
	}
out:
	for (i = 0; i < ks.n; i++) {
		free(ks.v[i].ips);
	}
	free(ks.v);
	return err;
}
