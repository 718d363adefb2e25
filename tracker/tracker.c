// SPDX-License-Identifier: GPL-2.0
/*
 * tracker.c - load the BPF tracker, tell it what to track, and turn what it submits into
 * OUTLIER objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/decode.h"
#include "tracker/goroutines.h"
#include "tracker/kernel.h"
#include "tracker/ksyms.h"
#include "tracker/libbpf-log.h"
#include "lib/outlier.h"
#include "latsnap.skel.h"
#include "tracker/preloaded.h"
#include "tracker/request.h"
#include "classify/syscalls.h"
#include "tracker/tracker.h"
#include "tracker/pyframes.h"
#include "tracker/usyms.h"
#include "lib/util.h"

/*
 * An outlier whose thread latsnap signalled, held back until the preload library reports the
 * stack it unwound (LS_KIND_UNWOUND), so that every consumer sees the outlier whole.
 */
struct parked {
	struct outlier *outlier;
	pid_t pid;
	pid_t tid;
	uint64_t until_ns; /* handed over without the stack from then on */
};

/*
 * How long an outlier waits for its unwound stack. The handler runs when the thread returns to
 * user space, at once unless it waits for a CPU; an unwind takes tens to hundreds of µs.
 */
#define UNWIND_WAIT_NS (200 * 1000000ULL)
#define PARKED_MAX 256
/* Waits sent as parts of requests not ended yet, at most (the oldest go first). */
#define REQ_PARTS_MAX 1024
/* On-CPU samples of requests not ended yet, at most: 40 s of one CPU (the oldest go first). */
#define REQ_SAMPLES_MAX 4096

struct tracker {
	struct latsnap_bpf *skel;
	bool has_attach_cookie; /* BPF cookies (5.15), which --request's probes need */
	bool iter_whole; /* task iterators walk every task: none over one process (before 6.1) */
	struct ring_buffer *ring;
	struct ksyms *ksyms;
	struct usyms *usyms;
	struct pyframes *pyframes; /* CPython 3.11 code objects named (pyframes.c) */
	tracker_outlier_fn fn;
	void *ctx;
	tracker_context_fn ctx_fn; /* the kernel context stream's consumer */
	void *ctx_ctx;
	int ncpus;
	/*
	 * The BPF side's context rings (ctx_ring), mapped. Every event of CPU c below ctx_done[c]
	 * written at or after ctx_low[c] was handed over already.
	 */
	const struct ls_ctx_record *ctx_ring;
	size_t ctx_ring_size;
	uint32_t ctx_slots;
	const struct ls_ctx_stack *ctx_stacks; /* and their stacks (ctx_stacks) */
	size_t ctx_stacks_size;
	uint32_t ctx_stack_slots;
	uint64_t *ctx_done;
	uint64_t *ctx_low;
	uint64_t received;
	/* Losses already reported in an outlier's flags. */
	struct tracker_totals reported;
	int cb_status;
	unsigned int budget; /* outliers this poll or drain may still hand over */
	bool track_registered;
	bool track_all;
	/* --cgroup or --comm: tracked processes that the tracked map does not list. */
	bool track_unlisted;
	/* Loaded for --cgroup, --comm: their checks are in the programs, the rest left out. */
	bool track_cgroups;
	bool track_comms;
	/* The -p targets of tracker_set_targets(), as it last made them (COMMAND's is not one). */
	pid_t *pids;
	unsigned int nr_pids;
	/*
	 * Exited processes whose mappings are kept until tracker_release_exited(): the recorder
	 * records them in the trace (latsnap:bin_info) only as the snapshot is written.
	 */
	bool keep_exited;
	pid_t exited[256];
	unsigned int nr_exited;
	struct parked parked[PARKED_MAX]; /* in arrival order */
	unsigned int nr_parked;
	/* record --request: each pair as given, and the waits of requests still under way */
	char *req_text[LS_MAX_REQUESTS];
	unsigned int nr_requests;
	struct bpf_link *req_links[2 * LS_MAX_REQUESTS];
	struct outlier *req_parts[REQ_PARTS_MAX];
	unsigned int nr_req_parts;
	struct ls_sample *req_samples; /* REQ_SAMPLES_MAX of them, a ring */
	unsigned int req_sample_head; /* the oldest */
	unsigned int nr_req_samples;
	struct bpf_link **sample_links; /* one per CPU: the cpu-clock events */
	struct goroutines *go; /* the goroutine waits of tracked Go processes */
};

/*
 * Outliers one poll, and one drain before a snapshot, hand over at most. In a storm the ring
 * fills faster than outliers are decoded, and libbpf would consume it without ever returning:
 * no snapshot would be taken. What is left waits in the ring (or is counted lost there).
 */
#define POLL_BUDGET 512
#define DRAIN_BUDGET 4096


static uint64_t stat_sum(struct tracker *tr, enum ls_stat key)
{
	uint64_t values[tr->ncpus];
	uint64_t sum = 0;
	__u32 index = key;
	int i;

	/* Written by the kernel; cleared for tools (valgrind) that cannot see a per-CPU lookup. */
	memset(values, 0, sizeof(values));
	if (bpf_map_lookup_elem(bpf_map__fd(tr->skel->maps.stats), &index, values)) {
		return 0;
	}
	for (i = 0; i < tr->ncpus; i++) {
		sum += values[i];
	}
	return sum;
}

static uint64_t runs_skipped(struct tracker *tr)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, tr->skel->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			sum += info.recursion_misses;
		}
	}
	return sum;
}

/**
 * tracker_totals - what the kernel side saw and lost so far.
 */
void tracker_totals(struct tracker *tr, struct tracker_totals *totals)
{
	memset(totals, 0, sizeof(*totals));
	totals->outliers = stat_sum(tr, LS_STAT_OUTLIERS);
	totals->received = tr->received;
	totals->ringbuf_lost = stat_sum(tr, LS_STAT_RINGBUF_LOST);
	totals->stack_failed = stat_sum(tr, LS_STAT_STACK_FAILED);
	totals->stacks_dropped = stat_sum(tr, LS_STAT_STACKS_DROPPED);
	totals->accum_full = stat_sum(tr, LS_STAT_ACCUM_FULL);
	totals->storage_failed = stat_sum(tr, LS_STAT_STORAGE_FAILED);
	totals->runs_skipped = runs_skipped(tr);
	totals->signals = stat_sum(tr, LS_STAT_SIGNALS);
	totals->signal_busy = stat_sum(tr, LS_STAT_SIGNAL_BUSY);
	totals->signal_skipped = stat_sum(tr, LS_STAT_SIGNAL_SKIPPED);
	totals->ctx_events = stat_sum(tr, LS_STAT_CTX_EVENTS);
	totals->ctx_lost = stat_sum(tr, LS_STAT_CTX_LOST);
	totals->unwound = stat_sum(tr, LS_STAT_UNWOUND);
	totals->unwound_refused = stat_sum(tr, LS_STAT_UNWOUND_REFUSED);
	totals->user_walks = stat_sum(tr, LS_STAT_USER_WALKS);
	totals->signal_refused = stat_sum(tr, LS_STAT_SIGNAL_REFUSED);
}

static void flag_new_loss(struct outlier *o, const char *what, uint64_t now, uint64_t *seen)
{
	if (now <= *seen) {
		return;
	}
	outlier_add_flag(o, "lost-before: %" PRIu64 " %s since the previous outlier", now - *seen,
			 what);
	*seen = now;
}

/* Losses that happened since the previous outlier (counted at @now), as flags for @o. */
static void flag_losses(struct tracker *tr, const struct tracker_totals *now, struct outlier *o)
{
	flag_new_loss(o, "outliers (ring buffer full)", now->ringbuf_lost,
		      &tr->reported.ringbuf_lost);
	flag_new_loss(o, "outliers lost their stacks (accumulator map full)", now->accum_full,
		      &tr->reported.accum_full);
	flag_new_loss(o, "threads untimed (task storage full)", now->storage_failed,
		      &tr->reported.storage_failed);
	flag_new_loss(o, "BPF program runs skipped by the kernel", now->runs_skipped,
		      &tr->reported.runs_skipped);
}

/* The command name of @pid for messages, "?" once it is gone. */
static const char *comm_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, buf, size - 1) : -1;
	if (fd >= 0) {
		close(fd);
	}
	if (len <= 0) {
		snprintf(buf, size, "?");
		return buf;
	}
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* @size bytes of the mmapable array @map, to read; NULL with *err set on failure, said. */
static void *map_read_only(const struct bpf_map *map, size_t size, int *err)
{
	void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);

	if (p == MAP_FAILED) {
		*err = -errno;
		ls_err("tracker: cannot map %s: %s", bpf_map__name(map), strerror(errno));
		return NULL;
	}
	return p;
}

/* A record, then the stack: tracker_read_context() copies the one into the other's head. */
_Static_assert(offsetof(struct ls_ctx_event, ips) == sizeof(struct ls_ctx_record),
	       "struct ls_ctx_event begins with struct ls_ctx_record's fields");
_Static_assert(sizeof(struct ls_cpu_verdict) == 64, "struct ls_cpu_verdict is a cache line");

/*
 * Context records kept per CPU: 65536 (7 MB, about 1.7 s of a busy PostgreSQL's switches and
 * wakeups), and a stack for one in 16 (4096, 1.6 MB); fewer for all CPUs to stay under 256 MB.
 */
static uint32_t ctx_slots_for(int ncpus)
{
	uint64_t cap = (256ULL << 20) /
		       (sizeof(struct ls_ctx_record) + sizeof(struct ls_ctx_stack) / 16) /
		       (uint64_t)ncpus;
	uint32_t slots = 65536;

	while (slots > 256 && slots > cap) {
		slots /= 2;
	}
	return slots;
}

/* A record of the window a read hands over, with its stack (index into the read's stacks). */
struct ctx_item {
	struct ls_ctx_record rec;
	long stack; /* or -1 */
};

struct ctx_read {
	struct ctx_item *items;
	size_t nr, cap;
	__u64 (*stacks)[LS_MAX_DEPTH];
	size_t nr_stacks, cap_stacks;
};

static int grow(void **array, size_t *cap, size_t nr, size_t size)
{
	size_t want = *cap ? *cap * 2 : 1024;
	void *p;

	if (nr < *cap) {
		return 0;
	}
	p = realloc(*array, want * size);
	if (!p) {
		return -ENOMEM;
	}
	*array = p;
	*cap = want;
	return 0;
}

/*
 * The stack of @it, a record of @cpu's ring, into the read: it->stack stays -1 and nr_ips goes
 * to 0 when the stack ring went round since (counted in @r->stacks_lost).
 */
static int ctx_copy_stack(struct tracker *tr, int cpu, struct ctx_read *cr, struct ctx_item *it,
			  struct tracker_ctx_read *r)
{
	uint64_t seq = it->rec.stack_seq;
	const struct ls_ctx_stack *st;
	int err;

	it->stack = -1;
	if (!it->rec.nr_ips) {
		return 0;
	}
	err = grow((void **)&cr->stacks, &cr->cap_stacks, cr->nr_stacks, sizeof(*cr->stacks));
	if (err) {
		return err;
	}
	st = &tr->ctx_stacks[(size_t)cpu * tr->ctx_stack_slots +
			     ((seq - 1) & (tr->ctx_stack_slots - 1))];
	if (seq && __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE) == seq) {
		memcpy(cr->stacks[cr->nr_stacks], st->ips, it->rec.nr_ips * sizeof(__u64));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&st->seq, __ATOMIC_RELAXED) == seq) {
			it->stack = (long)cr->nr_stacks++;
			return 0;
		}
	}
	it->rec.nr_ips = 0;
	r->stacks_lost++;
	return 0;
}

/*
 * tracker_ctx_event_size - about what an event with @nr_ips addresses takes in the trace as a
 * latsnap_kernel:* event (the header, the payload, the stack): the byte budget of
 * tracker_read_context() counts in it.
 */
uint64_t tracker_ctx_event_size(unsigned int nr_ips)
{
	return 160 + (uint64_t)nr_ips * sizeof(__u64);
}

static int ctx_by_time(const void *a, const void *b)
{
	const struct ls_ctx_record *x = &(*(const struct ctx_item *const *)a)->rec;
	const struct ls_ctx_record *y = &(*(const struct ctx_item *const *)b)->rec;

	if (x->ts != y->ts) {
		return x->ts < y->ts ? -1 : 1;
	}
	return x->at < y->at ? -1 : x->at > y->at;
}

/* The records of @cpu's ring written at or after @from_ns and not handed over before. */
static int ctx_read_cpu(struct tracker *tr, int cpu, uint64_t from_ns, struct ctx_read *cr,
			struct tracker_ctx_read *r)
{
	uint64_t head, i, seq, oldest = UINT64_MAX;
	const struct ls_ctx_record *slot;
	struct ctx_item *it;
	bool done;
	int err = 0;

	head = __atomic_load_n(&tr->skel->bss->verdicts[cpu].ctx_head, __ATOMIC_ACQUIRE);
	for (i = head > tr->ctx_slots ? head - tr->ctx_slots : 0; i < head; i++) {
		err = grow((void **)&cr->items, &cr->cap, cr->nr, sizeof(*cr->items));
		if (err) {
			goto out;
		}
		it = &cr->items[cr->nr];
		slot = &tr->ctx_ring[(size_t)cpu * tr->ctx_slots + (i & (tr->ctx_slots - 1))];
		seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
		if (seq != i + 1) {
			r->torn++;
			continue;
		}
		memcpy(&it->rec, slot, sizeof(*slot));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != seq ||
		    it->rec.nr_ips > LS_MAX_DEPTH) {
			r->torn++;
			continue;
		}
		if (it->rec.at < oldest) {
			oldest = it->rec.at;
		}
		/*
		 * Handed over by an earlier read, or older than the window. Except the record
		 * saying a thread is of interest: it says why that thread is in the window at
		 * all, and its interest may well have begun before (a thread stays of interest
		 * for seconds). Each such record goes once, the first read that finds it.
		 */
		done = i < tr->ctx_done[cpu];
		if (it->rec.kind == LS_CTX_INTEREST) {
			if (done) {
				continue;
			}
		} else if (it->rec.at < from_ns || (done && it->rec.at >= tr->ctx_low[cpu])) {
			continue;
		}
		err = ctx_copy_stack(tr, cpu, cr, it, r);
		if (err) {
			goto out;
		}
		cr->nr++;
	}
	/* The ring went round inside the window: its start is gone. */
	if (head > tr->ctx_slots && oldest != UINT64_MAX && oldest > from_ns &&
	    oldest - from_ns > r->wrapped_ns) {
		r->wrapped_ns = oldest - from_ns;
	}
	tr->ctx_done[cpu] = head;
	tr->ctx_low[cpu] = from_ns;
out:
	return err;
}

/*
 * flush_held_switches - the switch-outs the BPF side holds back until their thread's wakeup go
 * into the rings now (ls_ctx_flush): the switch-in of the thread that took the CPU is in them.
 */
static void flush_held_switches(struct tracker *tr)
{
	char buf[64];
	int fd;

	fd = bpf_iter_create(bpf_link__fd(tr->skel->links.ls_ctx_flush));
	if (fd < 0) {
		return;
	}
	while (read(fd, buf, sizeof(buf)) > 0) {
	}
	close(fd);
}

/*
 * tracker_read_context - hand the consumer, in time order across CPUs, the context events the
 * BPF side kept that were written at or after @from_ns and not handed over before: call right
 * before a snapshot. At most @max_bytes of them (tracker_ctx_event_size()), the newest: the
 * consumer writes them all at once into one CPU's LTTng ring, which overwrites its oldest
 * sub-buffers, latsnap's outlier events among them, once a burst is larger than it. A slot
 * being written, or written over while copied, is left out (counted in @r->torn).
 *
 * Return: 0, or -ENOMEM.
 */
int tracker_read_context(struct tracker *tr, uint64_t from_ns, uint64_t max_bytes,
			 struct tracker_ctx_read *r)
{
	struct ctx_read cr = { 0 };
	struct ctx_item **order = NULL;
	struct ls_ctx_event ev;
	uint64_t bytes = 0;
	size_t k, first;
	int cpu, err = 0;

	memset(r, 0, sizeof(*r));
	if (!tr->ctx_ring || !tr->ctx_fn) {
		return 0;
	}
	flush_held_switches(tr);
	for (cpu = 0; cpu < tr->ncpus && cpu < LS_VERDICT_CPUS && !err; cpu++) {
		err = ctx_read_cpu(tr, cpu, from_ns, &cr, r);
	}
	order = err ? NULL : malloc((cr.nr ? cr.nr : 1) * sizeof(*order));
	if (!order) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < cr.nr; k++) {
		order[k] = &cr.items[k];
	}
	ls_sort(order, cr.nr, sizeof(*order), ctx_by_time);
	/* The newest that fit: a wait's end, and its wakeup, matter most. */
	first = cr.nr;
	while (first > 0) {
		uint64_t size = tracker_ctx_event_size(order[first - 1]->rec.nr_ips);

		if (bytes + size > max_bytes) {
			break;
		}
		bytes += size;
		first--;
	}
	r->trimmed = first;
	r->bytes = bytes;
	for (k = first; k < cr.nr; k++) {
		memcpy(&ev, &order[k]->rec, sizeof(order[k]->rec));
		if (order[k]->stack >= 0) {
			memcpy(ev.ips, cr.stacks[order[k]->stack], ev.nr_ips * sizeof(__u64));
		}
		tr->ctx_fn(&ev, tr->ctx_ctx);
		r->emitted++;
	}
out:
	free(order);
	free(cr.items);
	free(cr.stacks);
	return err;
}

/* Hand @outlier to the callback, which owns it from now on. */
static int deliver(struct tracker *tr, struct outlier *outlier)
{
	int err;

	if (outlier->part_of_request) {
		/* Its request's end takes it (or drops it, when the request was not slow). */
		if (tr->nr_req_parts == REQ_PARTS_MAX) {
			outlier_free(tr->req_parts[0]);
			memmove(tr->req_parts, tr->req_parts + 1,
				--tr->nr_req_parts * sizeof(tr->req_parts[0]));
		}
		tr->req_parts[tr->nr_req_parts++] = outlier;
		return 0;
	}
	err = tr->fn(outlier, tr->ctx);

	if (err) {
		tr->cb_status = err;
	}
	return err;
}

/* Hand over parked outlier @i as it is, and close the gap. */
static int unpark(struct tracker *tr, unsigned int i)
{
	struct outlier *outlier = tr->parked[i].outlier;

	tr->nr_parked--;
	memmove(tr->parked + i, tr->parked + i + 1, (tr->nr_parked - i) * sizeof(tr->parked[0]));
	return deliver(tr, outlier);
}

static int park(struct tracker *tr, struct outlier *outlier)
{
	struct parked *p;
	int err = 0;

	if (tr->nr_parked == PARKED_MAX) {
		outlier_add_flag(tr->parked[0].outlier,
				 "no-unwound-stack: too many outliers waited for their unwound "
				 "stacks at once");
		err = unpark(tr, 0);
	}
	p = &tr->parked[tr->nr_parked++];
	p->outlier = outlier;
	p->pid = outlier->pid;
	p->tid = outlier->tid;
	p->until_ns = ls_now_ns() + UNWIND_WAIT_NS;
	return err;
}

/* Hand over the parked outliers whose stack is overdue (every one with @all). */
static int unpark_overdue(struct tracker *tr, bool all)
{
	uint64_t now = ls_now_ns();
	int err = 0;

	while (tr->nr_parked && !err && (all || tr->parked[0].until_ns <= now)) {
		outlier_add_flag(tr->parked[0].outlier,
				 "no-unwound-stack: the preload library was signalled, but reported "
				 "no stack within 200 ms (the thread did not return to user space, or "
				 "its process ended)");
		err = unpark(tr, 0);
	}
	return err;
}

static const char *const unwind_status_text[] = {
	[LS_UNWIND_FAILED] = "libunwind could not start from the signal frame",
	[LS_UNWIND_BAD_FRAME] = "a frame without unwind information ended the walk",
};

/*
 * on_unwound - the preload library's stack for a signalled thread: it replaces the frame-pointer
 * walk of that thread's oldest parked outlier, which is then handed over.
 */
static int on_unwound(struct tracker *tr, const struct ls_unwound *u)
{
	unsigned int i, nr = u->nr < LS_UNWOUND_MAX_DEPTH ? u->nr : LS_UNWOUND_MAX_DEPTH;
	struct outlier_frames frames = { 0 };
	struct outlier *outlier;

	for (i = 0; i < tr->nr_parked; i++) {
		if (tr->parked[i].tid == (pid_t)u->tid && tr->parked[i].pid == (pid_t)u->pid) {
			break;
		}
	}
	if (i == tr->nr_parked) {
		/* Its outlier went on without it (overdue): nothing to add it to. */
		return 0;
	}
	outlier = tr->parked[i].outlier;
	if (u->status && u->status < sizeof(unwind_status_text) / sizeof(unwind_status_text[0]) &&
	    unwind_status_text[u->status]) {
		outlier_add_flag(outlier, "%s: %s", nr ? "user-stack-partial" : "no-unwound-stack",
				 unwind_status_text[u->status]);
	}
	if (nr &&
	    !decode_user_frames(tr->usyms, (pid_t)u->pid, (const uint64_t *)u->report.ips, nr,
				&frames) &&
	    !pyframes_insert(tr->pyframes, (pid_t)u->pid, &u->report, &frames)) {
		outlier_frames_move(&outlier->user_stack.frames, &frames);
		outlier->user_stack.source = OUTLIER_USTACK_UNWIND;
		outlier->user_stack.unwound = true;
		outlier->user_stack.unwind_ns = u->report.unwind_ns;
		outlier->user_stack.status = u->status;
		outlier->user_stack.truncated = u->truncated;
		/* What was said of the frame-pointer stack no longer holds. */
		outlier_drop_flags(outlier, "no-user-stack:");
		outlier_drop_flags(outlier, "user-stack-truncated:");
		if (u->truncated) {
			outlier_add_flag(outlier,
					 "user-stack-truncated: the unwind stopped at %u frames "
					 "(LATSNAP_DEPTH)",
					 nr);
		}
	}
	outlier_frames_free(&frames);
	return unpark(tr, i);
}

static int by_start(const void *a, const void *b)
{
	const struct outlier *x = *(struct outlier *const *)a, *y = *(struct outlier *const *)b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The start probe's argument as text: printable bytes kept, the rest as '?'. */
static void request_arg(const struct ls_request *r, char *text, size_t size)
{
	size_t i;

	if (r->arg_kind == LS_REQ_ARG_NUMBER) {
		snprintf(text, size, "%llu", (unsigned long long)r->arg_num);
		return;
	}
	snprintf(text, size, "%.*s", LS_REQ_ARG_LEN - 1, r->arg);
	for (i = 0; text[i]; i++) {
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) {
			text[i] = text[i] == '\n' || text[i] == '\t' ? ' ' : '?';
		}
	}
}

static struct ls_sample *sample_at(struct tracker *tr, unsigned int i)
{
	return &tr->req_samples[(tr->req_sample_head + i) % REQ_SAMPLES_MAX];
}

static void keep_sample(struct tracker *tr, const struct ls_sample *sample)
{
	if (!tr->req_samples) {
		return;
	}
	if (tr->nr_req_samples == REQ_SAMPLES_MAX) {
		tr->req_sample_head = (tr->req_sample_head + 1) % REQ_SAMPLES_MAX;
		tr->nr_req_samples--;
	}
	*sample_at(tr, tr->nr_req_samples++) = *sample;
}

static bool same_stack(const struct ls_sample *a, const struct ls_sample *b)
{
	return a->nr_kips == b->nr_kips && a->nr_uips == b->nr_uips &&
	       !memcmp(a->kips, b->kips, a->nr_kips * sizeof(a->kips[0])) &&
	       !memcmp(a->uips, b->uips, a->nr_uips * sizeof(a->uips[0]));
}

/* One stack of a CPU profile: its kernel frames, then its user frames, innermost first. */
static int profile_stack(struct tracker *tr, const struct ls_sample *sample, uint64_t weight_ns,
			 struct outlier *o)
{
	unsigned int nk = sample->nr_kips > LS_MAX_DEPTH ? LS_MAX_DEPTH : sample->nr_kips;
	unsigned int nu = sample->nr_uips > LS_MAX_USER_DEPTH ? LS_MAX_USER_DEPTH : sample->nr_uips;
	struct outlier_frames kf = { 0 }, uf = { 0 };
	struct outlier_kstack *st;
	size_t i;
	int err;

	err = decode_kernel_frames(tr->ksyms, sample->kips, nk, &kf);
	err = err ?: decode_user_frames(tr->usyms, (pid_t)sample->pid,
					(const uint64_t *)sample->uips, nu, &uf);
	st = err ? NULL : outlier_add_profile(o, weight_ns);
	err = err ?: st ? outlier_frames_alloc(&st->frames, kf.nr + uf.nr) : -ENOMEM;
	for (i = 0; !err && i < kf.nr + uf.nr; i++) {
		const struct outlier_frame *f = i < kf.nr ? &kf.v[i] : &uf.v[i - kf.nr];

		err = outlier_frame_set(&st->frames.v[i], f->addr, f->symbol, f->offset, f->module);
	}
	outlier_frames_free(&kf);
	outlier_frames_free(&uf);
	return err;
}

static int by_weight(const void *a, const void *b)
{
	const struct outlier_kstack *x = a, *y = b;

	return x->weight_ns > y->weight_ns ? -1 : x->weight_ns < y->weight_ns;
}

/*
 * request_profile - the samples of @r's thread while it lasted, the same stacks together, as
 * @o's CPU profile, heaviest first. Its thread's samples up to its end are used up.
 */
static void request_profile(struct tracker *tr, const struct ls_request *r, struct outlier *o)
{
	unsigned int i, j, n = 0, count;
	struct ls_sample *si, *sj;
	bool *used;

	if (!tr->nr_req_samples) {
		return;
	}
	used = calloc(tr->nr_req_samples, sizeof(*used));
	if (!used) {
		return;
	}
	usyms_capture(tr->usyms, (pid_t)r->pid);
	for (i = 0; i < tr->nr_req_samples; i++) {
		si = sample_at(tr, i);
		if (used[i] || si->tid != r->tid || si->ts < r->start_ns || si->ts > r->end_ns) {
			continue;
		}
		for (count = 0, j = i; j < tr->nr_req_samples; j++) {
			sj = sample_at(tr, j);
			if (!used[j] && sj->tid == r->tid && sj->ts >= r->start_ns &&
			    sj->ts <= r->end_ns && same_stack(si, sj)) {
				used[j] = true;
				count++;
			}
		}
		profile_stack(tr, si, count * LS_SAMPLE_PERIOD_NS, o);
	}
	if (o->nr_cpu_profile > 1) {
		qsort(o->cpu_profile, o->nr_cpu_profile, sizeof(o->cpu_profile[0]), by_weight);
	}
	/* Keep the others' samples, and this thread's after its end. */
	for (i = 0; i < tr->nr_req_samples; i++) {
		si = sample_at(tr, i);
		if (!used[i] && (si->tid != r->tid || si->ts > r->end_ns)) {
			*sample_at(tr, n++) = *si;
		}
	}
	tr->nr_req_samples = n;
	free(used);
}

/* The cpu-clock event of each CPU, for ls_req_sample: once, with the first request pair. */
static int attach_sampling(struct tracker *tr)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = LS_SAMPLE_PERIOD_NS,
	};
	int cpu, fd, err = 0;

	tr->req_samples = calloc(REQ_SAMPLES_MAX, sizeof(*tr->req_samples));
	tr->sample_links = calloc((size_t)tr->ncpus, sizeof(*tr->sample_links));
	if (!tr->req_samples || !tr->sample_links) {
		return -ENOMEM;
	}
	for (cpu = 0; cpu < tr->ncpus; cpu++) {
		fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			/* An offline CPU runs nothing to sample. */
			if (errno != ENODEV) {
				err = -errno;
			}
			continue;
		}
		tr->sample_links[cpu] = bpf_program__attach_perf_event(tr->skel->progs.ls_req_sample,
								       fd);
		if (!tr->sample_links[cpu]) {
			err = -errno;
			close(fd);
		}
	}
	if (err) {
		ls_err("tracker: --request: the on-CPU sampling could not start on every CPU: %s "
		       "(request outliers go without CPU profiles there)",
		       strerror(-err));
	}
	return 0;
}

/*
 * on_request - a request ended: a slow one becomes an outlier of kind request with the waits
 * sent as its parts, in time order; a short one's parts are dropped. Its thread's outliers still
 * parked for their unwound stacks go first: those reports came before it, the ring is in order.
 */
static int on_request(struct tracker *tr, const struct ls_request *r)
{
	char arg[LS_REQ_ARG_LEN + 24];
	struct outlier *o = NULL, *part;
	unsigned int i, n = 0;
	uint64_t dur, cpu, rq;
	int err = 0;

	for (i = 0; i < tr->nr_parked && !err;) {
		if (tr->parked[i].tid == (pid_t)r->tid) {
			err = unpark(tr, i);
		} else {
			i++;
		}
	}
	if (r->slow && r->pair < tr->nr_requests) {
		o = outlier_new();
	}
	if (o) {
		dur = r->end_ns - r->start_ns;
		cpu = r->on_cpu_ns < dur ? r->on_cpu_ns : dur;
		rq = r->runqueue_ns < dur - cpu ? r->runqueue_ns : dur - cpu;
		o->pid = (int32_t)r->pid;
		o->tid = (int32_t)r->tid;
		snprintf(arg, sizeof(arg), "%.*s", LS_TASK_COMM_LEN, r->comm);
		outlier_set_str(&o->comm, arg);
		o->start_ns = r->start_ns;
		o->end_ns = r->end_ns;
		o->duration_ns = dur;
		o->on_cpu_ns = cpu;
		o->runqueue_ns = rq;
		o->blocked_ns = dur - cpu - rq;
		o->switches = r->switches;
		request_arg(r, arg, sizeof(arg));
		if (!outlier_set_request(o, tr->req_text[r->pair],
					 r->arg_kind != LS_REQ_ARG_NONE ? arg : NULL)) {
			outlier_free(o);
			o = NULL;
		} else {
			outlier_set_cause(o, "request");
			outlier_add_flag(o, "split-from-scheduler: on-CPU and runqueue time from the "
					    "scheduler's own accounting, within a tick");
		}
	}
	/* Its parts: the waits of its thread sent while it lasted. */
	for (i = 0; i < tr->nr_req_parts; i++) {
		part = tr->req_parts[i];
		if (part->tid != (int32_t)r->tid || part->start_ns > r->end_ns) {
			tr->req_parts[n++] = part;
		} else if (o && part->start_ns >= r->start_ns) {
			part->part_of_request = false;
			outlier_add_wait(o, part);
		} else {
			outlier_free(part);
		}
	}
	tr->nr_req_parts = n;
	if (!o) {
		return err;
	}
	if (o->nr_waits > 1) {
		qsort(o->waits, o->nr_waits, sizeof(o->waits[0]), by_start);
	}
	if (r->waits > o->nr_waits) {
		outlier_add_flag(o, "waits-lost: %u of its %u waits were not received",
				 r->waits - (unsigned int)o->nr_waits, r->waits);
	}
	request_profile(tr, r, o);
	return err ?: deliver(tr, o);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct tracker *tr = ctx;
	struct tracker_totals now;
	struct outlier *outlier;
	char comm[32];
	int err;

	if (size == sizeof(struct ls_notice)) {
		const struct ls_notice *notice = data;

		if (notice->kind == LS_NOTICE_EXIT) {
			goroutines_forget(tr->go, notice->pid);
		} else if (notice->kind == LS_NOTICE_MAPS || notice->kind == LS_NOTICE_EXEC) {
			/* Its image is loaded (or new): a Go program's goroutines are followed. */
			goroutines_follow(tr->go, notice->pid, NULL);
		}
		if (notice->kind == LS_NOTICE_MAPS) {
			/* It blocks in its own code: a capture taken while it loaded lacks libraries. */
			usyms_recapture(tr->usyms, notice->pid);
		} else if (notice->kind == LS_NOTICE_EXIT && tr->keep_exited) {
			if (tr->nr_exited == sizeof(tr->exited) / sizeof(tr->exited[0])) {
				usyms_forget(tr->usyms, tr->exited[0]);
				memmove(tr->exited, tr->exited + 1,
					(tr->nr_exited - 1) * sizeof(tr->exited[0]));
				tr->nr_exited--;
			}
			tr->exited[tr->nr_exited++] = notice->pid;
		} else if (notice->kind == LS_NOTICE_EXEC || notice->kind == LS_NOTICE_EXIT) {
			/* Outliers before this notice were decoded already: the ring is in order. */
			usyms_forget(tr->usyms, notice->pid);
		} else if (notice->kind == LS_NOTICE_REGISTERED) {
			ls_verbose("tracker: pid %u (%s) registered through the preload library, "
				   "signal %u",
				   notice->pid, comm_of(notice->pid, comm, sizeof(comm)),
				   notice->arg);
		} else if (notice->kind == LS_NOTICE_REFUSED) {
			/* Anyone may call the prctl: a refusal is a bug or an attempt, worth a line. */
			ls_err("tracker: pid %u (%s, uid %u) refused: its registration names a "
			       "signal or handler it has not installed (further attempts of this "
			       "process not logged)",
			       notice->pid, comm_of(notice->pid, comm, sizeof(comm)), notice->arg);
		} else if (notice->kind == LS_NOTICE_DISPLACED) {
			ls_err("tracker: pid %u (%s) installed its own handler for signal %u: no more "
			       "unwound user stacks for it, frame pointers only",
			       notice->pid, comm_of(notice->pid, comm, sizeof(comm)), notice->arg);
		}
		return 0;
	}
	if (size == sizeof(struct ls_unwound) && *(const __u8 *)data == LS_KIND_UNWOUND) {
		return on_unwound(tr, data);
	}
	if (size == sizeof(struct ls_request) && *(const __u8 *)data == LS_KIND_REQUEST) {
		return on_request(tr, data);
	}
	if (size == sizeof(struct ls_sample) && *(const __u8 *)data == LS_KIND_SAMPLE) {
		keep_sample(tr, data);
		return 0;
	}
	if (size < sizeof(struct ls_event)) {
		ls_err("tracker: short event (%zu bytes)", size);
		return 0;
	}
	tr->received++;
	tracker_totals(tr, &now);
	if (decode_event(data, tr->ksyms, tr->usyms, &outlier)) {
		ls_err("tracker: an outlier could not be decoded: %s", strerror(ENOMEM));
		return 0;
	}
	if (goroutines_decorate(tr->go, data, outlier)) {
		ls_err("tracker: an outlier could not be decoded: %s", strerror(ENOMEM));
		outlier_free(outlier);
		return 0;
	}
	flag_losses(tr, &now, outlier);
	if (((const struct ls_event *)data)->flags & LS_EF_SIGNALLED) {
		err = park(tr, outlier);
	} else {
		err = deliver(tr, outlier);
	}
	if (err) {
		return err;
	}
	/* libbpf stops at a negative return, this sample consumed: the rest waits in the ring. */
	if (tr->budget && --tr->budget == 0) {
		return -EAGAIN;
	}
	return 0;
}

/*
 * Once at start: how threads coming back from an off-CPU sleep get their unwound stacks on this
 * kernel, and what is lost where it has no way to signal them (said without -v too).
 */
static void say_switch_end(enum kernel_switch_end hook)
{
	struct utsname uts;

	if (uname(&uts)) {
		snprintf(uts.release, sizeof(uts.release), "?");
	}
	switch (hook) {
	case KERNEL_SWITCH_END_TP:
		break;
	case KERNEL_SWITCH_END_FEXIT:
		ls_verbose("tracker: this kernel (%s) lacks the sched_exit_tp tracepoint (Linux "
			   "6.15): threads back from a sleep are signalled on their return from "
			   "schedule() (fexit)",
			   uts.release);
		break;
	case KERNEL_SWITCH_END_NONE:
		ls_err("tracker: this kernel (%s) lacks the sched_exit_tp tracepoint (Linux 6.15) "
		       "and fexit on schedule() (ftrace): a sleep outside a syscall gets a "
		       "frame-pointer user stack only, flagged kernel-no-switch-signal",
		       uts.release);
		break;
	}
}

/*
 * The syscalls that carry a unit of work in and out, when they are on a socket (work_note() in
 * latsnap.bpf.c): the file descriptor first, and what they return a count of bytes or messages.
 */
static void set_work_syscalls(__u8 *work)
{
	static const char *const input[] = { "read", "readv", "recvfrom", "recvmsg", "recvmmsg" };
	static const char *const output[] = { "write", "writev", "sendto", "sendmsg", "sendmmsg",
					      "sendfile" };
	static const char *const accepts[] = { "accept", "accept4" };
	size_t i;
	int nr;

	for (i = 0; i < sizeof(input) / sizeof(input[0]); i++) {
		nr = syscall_number(input[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			/* read and readv take any file; the others, sockets only. */
			work[nr] = LS_WORK_INPUT | (i >= 2 ? LS_WORK_SOCKET_ONLY : 0);
		}
	}
	for (i = 0; i < sizeof(output) / sizeof(output[0]); i++) {
		nr = syscall_number(output[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			/* write, writev and sendfile take any file; send*, sockets only. */
			work[nr] = LS_WORK_OUTPUT | (i >= 2 && i <= 4 ? LS_WORK_SOCKET_ONLY : 0);
		}
	}
	nr = syscall_number("close");
	if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
		work[nr] = LS_WORK_CLOSE;
	}
	for (i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
		nr = syscall_number(accepts[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			work[nr] = LS_WORK_ACCEPT;
		}
	}
}

/* The length of a tick: the resolution of the coarse clock, 10 ms if it cannot be asked. */
static uint64_t tick_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec || !res.tv_nsec) {
		return 10000000;
	}
	return (uint64_t)res.tv_nsec;
}

/* The wanted cgroups and names of record --cgroup and --comm, into their maps before attach. */
static int want_targets(struct tracker *tr, const struct tracker_opts *opts)
{
	int cg_fd = bpf_map__fd(tr->skel->maps.want_cgroups);
	int comm_fd = bpf_map__fd(tr->skel->maps.want_comms);
	unsigned int i;
	__u8 one = 1;
	int err;

	for (i = 0; i < opts->nr_cgroups && i < LS_MAX_CGROUPS; i++) {
		if (bpf_map_update_elem(cg_fd, &opts->cgroup_ids[i], &one, BPF_ANY)) {
			err = -errno;
			ls_err("tracker: cannot track cgroup %" PRIu64 ": %s", opts->cgroup_ids[i],
			       strerror(-err));
			return err;
		}
	}
	for (i = 0; i < opts->nr_comms && i < LS_MAX_COMMS; i++) {
		if (bpf_map_update_elem(comm_fd, &opts->comms[i], &one, BPF_ANY)) {
			err = -errno;
			ls_err("tracker: cannot track processes named '%.*s': %s",
			       LS_TASK_COMM_LEN, opts->comms[i].name, strerror(-err));
			return err;
		}
	}
	return 0;
}

/**
 * tracker_open - open and load the BPF tracker with @opts; nothing is traced until attach.
 * @fn: called with each outlier, from tracker_poll().
 *
 * Return: 0, or a negative errno after printing why.
 */
int tracker_open(struct tracker **trackerp, const struct tracker_opts *opts, tracker_outlier_fn fn,
		 void *ctx)
{
	enum kernel_switch_end switch_end;
	struct tracker *tr;
	bool old_block, old_switch;
	int err;

	*trackerp = NULL;
	libbpf_log_init();
	/* Before any other complaint (no BTF, the verifier's), which would hide an old kernel. */
	err = kernel_check("record", KERNEL_FOR_RECORD);
	if (err) {
		return err;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		ls_err("tracker: /sys/kernel/btf/vmlinux: %s (a kernel built with "
		       "CONFIG_DEBUG_INFO_BTF is needed)",
		       strerror(errno));
		return -ENOTSUP;
	}
	tr = calloc(1, sizeof(*tr));
	if (!tr) {
		return -ENOMEM;
	}
	tr->fn = fn;
	tr->ctx = ctx;
	tr->ncpus = libbpf_num_possible_cpus();
	if (tr->ncpus <= 0) {
		err = tr->ncpus ? tr->ncpus : -EINVAL;
		ls_err("tracker: cannot count possible CPUs: %s", strerror(-err));
		goto fail;
	}

	tr->skel = latsnap_bpf__open();
	if (!tr->skel) {
		err = -errno;
		ls_err("tracker: cannot open the BPF program: %s", strerror(errno));
		goto fail;
	}
	tr->skel->data->threshold_ns = opts->threshold_ns;
	tr->skel->data->sleep_threshold_ns = opts->sleep_threshold_ns;
	tr->skel->rodata->track_all = opts->track_all;
	tr->skel->rodata->self_tgid = (__u32)getpid();
	tr->skel->rodata->include_idle = opts->include_idle;
	tr->skel->rodata->track_registered = opts->track_registered;
	tr->skel->rodata->track_cgroups = opts->nr_cgroups > 0;
	tr->skel->rodata->track_comms = opts->nr_comms > 0;
	tr->skel->rodata->prctl_nr = SYS_prctl;
	tr->skel->rodata->futex_nr = SYS_futex;
	if (opts->ctx_floor_ns) {
		tr->skel->rodata->ctx_floor_ns = opts->ctx_floor_ns;
	}
	tr->skel->rodata->tick_ns = tick_ns();
	tr->ctx_slots = ctx_slots_for(tr->ncpus);
	tr->skel->rodata->ctx_slots = tr->ctx_slots;
	bpf_map__set_max_entries(tr->skel->maps.ctx_ring, (__u32)tr->ncpus * tr->ctx_slots);
	tr->ctx_stack_slots = tr->ctx_slots / 16;
	tr->skel->rodata->ctx_stack_slots = tr->ctx_stack_slots;
	bpf_map__set_max_entries(tr->skel->maps.ctx_stacks,
				 (__u32)tr->ncpus * tr->ctx_stack_slots);
	tr->ctx_done = calloc((size_t)tr->ncpus, sizeof(*tr->ctx_done));
	tr->ctx_low = calloc((size_t)tr->ncpus, sizeof(*tr->ctx_low));
	if (!tr->ctx_done || !tr->ctx_low) {
		err = -ENOMEM;
		goto fail;
	}
	/* It runs at every switch of the machine, for the preload library's signals only. */
	switch_end = opts->no_preload ? KERNEL_SWITCH_END_NONE : kernel_switch_end();
	bpf_program__set_autoload(tr->skel->progs.ls_sched_exit,
				  switch_end == KERNEL_SWITCH_END_TP);
	bpf_program__set_autoload(tr->skel->progs.ls_schedule_exit,
				  switch_end == KERNEL_SWITCH_END_FEXIT);
	tr->skel->rodata->switch_end_hook = switch_end != KERNEL_SWITCH_END_NONE;
	if (!opts->no_preload) {
		say_switch_end(switch_end);
	}
	/*
	 * Older kernels: task storage's stand-in, a hash map by thread id (before 5.12);
	 * sched_switch without prev_state (before 5.18); block_rq_issue with the request's queue
	 * first (before 5.11).
	 */
	if (!kernel_has_task_storage()) {
		tr->skel->rodata->has_task_storage = false;
		err = kernel_task_storage_standin(tr->skel->maps.states);
		if (!err) {
			err = kernel_task_storage_standin(tr->skel->maps.reqs);
		}
		if (err) {
			ls_err("tracker: cannot set up the per-thread state maps: %s",
			       strerror(-err));
			goto fail;
		}
		ls_verbose("tracker: no BPF task storage for tracing programs (Linux 5.12): "
			   "per-thread state in hash maps");
	}
	old_switch = kernel_tp_args("sched_switch") == 3;
	bpf_program__set_autoload(tr->skel->progs.ls_sched_switch, !old_switch);
	bpf_program__set_autoload(tr->skel->progs.ls_sched_switch_3, old_switch);
	old_block = kernel_tp_args("block_rq_issue") == 2;
	bpf_program__set_autoload(tr->skel->progs.ls_block_rq_issue, !old_block);
	bpf_program__set_autoload(tr->skel->progs.ls_block_rq_issue_q, old_block);
	tr->has_attach_cookie = kernel_has_attach_cookie();
	/* Only --cgroup needs to hear of moves between cgroups. */
	bpf_program__set_autoload(tr->skel->progs.ls_cgroup_attach, opts->nr_cgroups > 0);
	/* Attached to each --request probe by tracker_add_request(), with its cookie. */
	bpf_program__set_autoattach(tr->skel->progs.ls_req_uprobe, false);
	bpf_program__set_autoattach(tr->skel->progs.ls_req_usdt, false);
	bpf_program__set_autoattach(tr->skel->progs.ls_req_sample, false);
	/* Attached to each Go binary a tracked process runs (goroutines_follow()). */
	bpf_program__set_autoattach(tr->skel->progs.ls_go_park, false);
	bpf_program__set_autoattach(tr->skel->progs.ls_go_ready, false);
	tr->track_registered = opts->track_registered;
	tr->track_all = opts->track_all;
	tr->track_unlisted = opts->nr_cgroups || opts->nr_comms;
	tr->track_cgroups = opts->nr_cgroups > 0;
	tr->track_comms = opts->nr_comms > 0;
	memcpy((void *)tr->skel->rodata->idle_syscalls, opts->idle_syscalls,
	       sizeof(opts->idle_syscalls));
	set_work_syscalls((__u8 *)tr->skel->rodata->work_syscalls);

	err = latsnap_bpf__load(tr->skel);
	if (err) {
		libbpf_log_explain_load("tracker", err);
		goto fail;
	}
	err = want_targets(tr, opts);
	if (err) {
		goto fail;
	}

	/* After the load, so that our own programs are named, and skipped, in stacks. */
	tr->ksyms = ksyms_load(NULL);
	if (!tr->ksyms) {
		err = -errno;
		ls_err("tracker: /proc/kallsyms: %s (kernel stacks need root and readable "
		       "kernel addresses)",
		       strerror(errno));
		goto fail;
	}

	/* Debug info from debuginfod (DEBUGINFOD_URLS) comes in a thread of its own: dbgfetch.h. */
	tr->usyms = usyms_new();
	tr->pyframes = pyframes_new();
	if (!tr->usyms || !tr->pyframes) {
		err = -ENOMEM;
		goto fail;
	}

	/*
	 * Opt-in: each park and wakeup of a goroutine of the binary traps into the kernel (two
	 * uprobes; a channel round trip went from 0.5 us to 40 us in this VM), for every process
	 * that runs it, tracked or not.
	 */
	if (opts->go_waits) {
		tr->go = goroutines_new(tr->skel->progs.ls_go_park, tr->skel->progs.ls_go_ready,
					bpf_map__fd(tr->skel->maps.go_procs));
		if (!tr->go) {
			err = -ENOMEM;
			goto fail;
		}
	}

	tr->ring = ring_buffer__new(bpf_map__fd(tr->skel->maps.events), handle_event, tr, NULL);
	if (!tr->ring) {
		err = -errno;
		ls_err("tracker: cannot open the ring buffer: %s", strerror(errno));
		goto fail;
	}
	tr->ctx_ring_size = (size_t)tr->ncpus * tr->ctx_slots * sizeof(struct ls_ctx_record);
	tr->ctx_ring = map_read_only(tr->skel->maps.ctx_ring, tr->ctx_ring_size, &err);
	if (!tr->ctx_ring) {
		goto fail;
	}
	tr->ctx_stacks_size =
		(size_t)tr->ncpus * tr->ctx_stack_slots * sizeof(struct ls_ctx_stack);
	tr->ctx_stacks = map_read_only(tr->skel->maps.ctx_stacks, tr->ctx_stacks_size, &err);
	if (!tr->ctx_stacks) {
		goto fail;
	}
	*trackerp = tr;
	return 0;

fail:
	tracker_close(tr);
	return err;
}

/*
 * mark_target - @pid's entry of the tracked map gains (@on) or loses the reason LS_TRACK_TARGET.
 * The other reasons stay: a target that was a tracked process's child goes back to being one.
 */
static int mark_target(struct tracker *tr, pid_t pid, bool on)
{
	int fd = bpf_map__fd(tr->skel->maps.tracked);
	__u32 key = pid, reason = 0;
	int err = 0;

	if (bpf_map_lookup_elem(fd, &key, &reason) && errno != ENOENT) {
		err = -errno;
		goto out;
	}
	if (on) {
		reason |= LS_TRACK_TARGET;
		err = bpf_map_update_elem(fd, &key, &reason, BPF_ANY) ? -errno : 0;
	} else if (reason & LS_TRACK_TARGET) {
		reason &= ~(__u32)LS_TRACK_TARGET;
		if (reason) {
			err = bpf_map_update_elem(fd, &key, &reason, BPF_EXIST) ? -errno : 0;
		} else {
			err = bpf_map_delete_elem(fd, &key) ? -errno : 0;
		}
		/* It exited meanwhile: its entry went with it. */
		if (err == -ENOENT) {
			err = 0;
		}
	}
out:
	if (err) {
		ls_err("tracker: cannot %s pid %d: %s", on ? "track" : "stop tracking", pid,
		       strerror(-err));
	}
	return err;
}

/**
 * tracker_follow_goroutines() - @pid, tracked, is about to exec @path (record's COMMAND, held
 *                               at its gate): if that is a Go program, its goroutines' waits
 *                               are followed from its first instruction on, not from its first
 *                               wait, which its first goroutines may be parked in already
 *
 * Return: 1 when followed, 0 when not (not a Go program), or a negative errno.
 */
int tracker_follow_goroutines(struct tracker *tr, pid_t pid, const char *path)
{
	return goroutines_follow(tr->go, pid, path);
}

/**
 * tracker_track_pid - track process @pid, all its threads, and its future children.
 *
 * For COMMAND: it stays a target until it exits, whatever tracker_set_targets() says later.
 */
int tracker_track_pid(struct tracker *tr, pid_t pid)
{
	int err;

	err = mark_target(tr, pid, true);
	if (err) {
		goto out;
	}
	/* Threads of @pid that already decided "untracked" must decide again. */
	__atomic_add_fetch(&tr->skel->data->tracking_gen, 1, __ATOMIC_SEQ_CST);
out:
	return err;
}

/**
 * tracker_live_targets - the kinds of target tracker_set_targets() can change in this run.
 *
 * None with -a (rodata: every thread already) or with no target at all (the processes that
 * register are tracked, a mode fixed at load); --cgroup and --comm only if the run started with
 * some: without, the verifier left their checks out of the programs (and --cgroup's hook of
 * cgroup moves was not loaded).
 *
 * Return: a mask of enum tracker_target_kind.
 */
unsigned int tracker_live_targets(struct tracker *tr)
{
	unsigned int kinds = 0;

	if (tr->track_all || tr->track_registered) {
		goto out;
	}
	kinds = TRACKER_TARGET_PIDS;
	if (tr->track_cgroups) {
		kinds |= TRACKER_TARGET_CGROUPS;
	}
	if (tr->track_comms) {
		kinds |= TRACKER_TARGET_COMMS;
	}
out:
	return kinds;
}

static bool has_key(const void *keys, unsigned int nr, size_t size, const void *key)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!memcmp((const char *)keys + i * size, key, size)) {
			return true;
		}
	}
	return false;
}

/*
 * want_exactly - make the keys of the hash map @map exactly the @nr keys at @keys (each the
 * map's key size), with the value 1. Those to drop are read first, all of them: a key deleted
 * while the keys are walked would send the walk back to the start.
 */
static int want_exactly(struct bpf_map *map, const void *keys, unsigned int nr, const char *what)
{
	size_t size = bpf_map__key_size(map);
	unsigned int max = bpf_map__max_entries(map), nr_old = 0, i, j;
	int fd = bpf_map__fd(map), err = 0;
	unsigned char *old;
	__u8 one = 1;

	old = calloc(max, size);
	if (!old) {
		err = -ENOMEM;
		goto out;
	}
	while (nr_old < max && !bpf_map_get_next_key(fd, nr_old ? old + (nr_old - 1) * size : NULL,
						     old + nr_old * size)) {
		nr_old++;
	}
	for (i = 0; i < nr_old; i++) {
		if (has_key(keys, nr, size, old + i * size)) {
			continue;
		}
		if (bpf_map_delete_elem(fd, old + i * size) && errno != ENOENT) {
			err = -errno;
			ls_err("tracker: cannot stop tracking a %s: %s", what, strerror(-err));
			goto out;
		}
	}
	for (j = 0; j < nr; j++) {
		if (bpf_map_update_elem(fd, (const char *)keys + j * size, &one, BPF_ANY)) {
			err = -errno;
			ls_err("tracker: cannot track a %s: %s", what, strerror(-err));
			goto out;
		}
	}
out:
	free(old);
	return err;
}

static bool has_pid(const pid_t *pids, unsigned int nr, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (pids[i] == pid) {
			return true;
		}
	}
	return false;
}

/**
 * tracker_set_targets - make the targets of -p, --cgroup and --comm exactly these, live: the
 *                       programs stay loaded and attached, the rings keep what they hold
 * @pids: the processes tracked as targets, with their threads and the children they fork from
 *        then on (tracker_track_pid()'s, COMMAND, is not among them: it stays)
 * @cgroup_ids: the cgroup v2 directories (inode numbers) whose processes are tracked
 * @comms: the process names (NUL-padded) that are tracked
 *
 * A pid that was a target already is left as it is: one that exited since is not put back, as
 * the pid may name another process by now. A pid dropped loses its own entry only. Its children
 * (LS_TRACK_CHILD) stay tracked: the map keeps no parent, and the family a dropped pid had is
 * only known from /proc, where a child whose parent exited was handed to another; a child
 * forked after the drop is not tracked (ls_sched_process_fork looks for its parent's entry).
 * Then one new tracking generation: every thread decides again, at its next hook, whether it is
 * tracked, those that stop being tracked as well as those that start (redecide() in the
 * programs).
 *
 * Return: 0; -EOPNOTSUPP, nothing changed, for a kind of target this run cannot change
 * (tracker_live_targets()); -E2BIG for more cgroups or names than LS_MAX_CGROUPS, LS_MAX_COMMS;
 * or a negative errno, said, the targets then partly changed (and the change in effect).
 */
int tracker_set_targets(struct tracker *tr, const pid_t *pids, int nr_pids,
			const uint64_t *cgroup_ids, int nr_cgroups, const struct ls_comm *comms,
			int nr_comms)
{
	unsigned int live = tracker_live_targets(tr), nr_kept = 0, i;
	pid_t *kept = NULL;
	int err = 0;

	if ((nr_pids && !(live & TRACKER_TARGET_PIDS)) ||
	    (nr_cgroups && !(live & TRACKER_TARGET_CGROUPS)) ||
	    (nr_comms && !(live & TRACKER_TARGET_COMMS))) {
		return -EOPNOTSUPP;
	}
	if (nr_pids < 0 || nr_cgroups < 0 || nr_comms < 0 || nr_cgroups > LS_MAX_CGROUPS ||
	    nr_comms > LS_MAX_COMMS) {
		return -E2BIG;
	}
	/* What is a target once this is done, whatever fails: the next call starts from it. */
	kept = calloc((size_t)tr->nr_pids + (size_t)nr_pids + 1, sizeof(*kept));
	if (!kept) {
		return -ENOMEM;
	}
	for (i = 0; i < tr->nr_pids; i++) {
		if (has_pid(pids, (unsigned int)nr_pids, tr->pids[i]) ||
		    mark_target(tr, tr->pids[i], false)) {
			kept[nr_kept++] = tr->pids[i];
		}
	}
	for (i = 0; i < (unsigned int)nr_pids; i++) {
		if (has_pid(kept, nr_kept, pids[i])) {
			continue;
		}
		err = mark_target(tr, pids[i], true);
		if (err) {
			goto out;
		}
		kept[nr_kept++] = pids[i];
	}
	if (live & TRACKER_TARGET_CGROUPS) {
		err = want_exactly(tr->skel->maps.want_cgroups, cgroup_ids,
				   (unsigned int)nr_cgroups, "cgroup");
		if (err) {
			goto out;
		}
	}
	if (live & TRACKER_TARGET_COMMS) {
		err = want_exactly(tr->skel->maps.want_comms, comms, (unsigned int)nr_comms,
				   "process name");
		if (err) {
			goto out;
		}
	}
	/* Processes tracked for a cgroup or a name are in no list: stall scans walk every task. */
	tr->track_unlisted = nr_cgroups || nr_comms;
out:
	free(tr->pids);
	tr->pids = kept;
	tr->nr_pids = nr_kept;
	/* Once, for all of it: the threads of a target gone as those of a new one decide again. */
	__atomic_add_fetch(&tr->skel->data->tracking_gen, 1, __ATOMIC_SEQ_CST);
	return err;
}

static int adopt(pid_t pid, const struct ls_preload_abi *abi, void *ctx)
{
	struct ls_registration reg = { .handler = abi->handler, .sig = (__u32)abi->sig };
	__u32 key = pid, reason = LS_TRACK_REGISTERED, tid;
	struct tracker *tr = ctx;
	__u8 one = 1;
	__u32 i;

	for (i = 0; i < abi->nr_quiet; i++) {
		tid = abi->quiet_tids[i];
		bpf_map_update_elem(bpf_map__fd(tr->skel->maps.quiet_tids), &tid, &one, BPF_ANY);
	}
	if (bpf_map_update_elem(bpf_map__fd(tr->skel->maps.registered), &key, &reg, BPF_NOEXIST) &&
	    errno != EEXIST) {
		return -errno;
	}
	if (tr->track_registered) {
		bpf_map_update_elem(bpf_map__fd(tr->skel->maps.tracked), &key, &reason,
				    BPF_NOEXIST);
	}
	ls_verbose("tracker: pid %d registered before latsnap started, signal %d", pid, abi->sig);
	return 0;
}

/**
 * tracker_adopt_preloaded - take in processes that registered through the preload library
 * before latsnap started: @pid alone, or every one when @pid is 0. Call after tracker_attach(),
 * so that a process registering meanwhile is not missed.
 *
 * Return: how many were found, or a negative errno.
 */
int tracker_adopt_preloaded(struct tracker *tr, pid_t pid)
{
	struct ls_preload_abi abi;
	int found;

	if (pid) {
		found = preloaded_read(pid, &abi) == 0 && adopt(pid, &abi, tr) == 0;
	} else {
		found = preloaded_scan(adopt, tr);
	}
	if (found > 0) {
		__atomic_add_fetch(&tr->skel->data->tracking_gen, 1, __ATOMIC_SEQ_CST);
	}
	return found;
}

/**
 * tracker_keep_exited - keep the mappings of exited processes until tracker_release_exited().
 */
void tracker_keep_exited(struct tracker *tr, bool keep)
{
	tr->keep_exited = keep;
}

/**
 * tracker_release_exited - forget the mappings of the processes that exited so far.
 */
void tracker_release_exited(struct tracker *tr)
{
	while (tr->nr_exited > 0) {
		usyms_forget(tr->usyms, tr->exited[--tr->nr_exited]);
	}
}

/**
 * tracker_user_modules - hand each object mapped in @pid, as latsnap captured it, to @fn.
 */
int tracker_user_modules(struct tracker *tr, pid_t pid, usyms_module_fn fn, void *ctx)
{
	return usyms_modules(tr->usyms, pid, fn, ctx);
}

static unsigned int map_entries(int fd)
{
	__u32 key, next;
	unsigned int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/**
 * tracker_state_left - processes still tracked, and outliers still in the making, in the kernel.
 *
 * Exited processes and threads must leave nothing behind; this is how that is checked.
 */
void tracker_state_left(struct tracker *tr, unsigned int *processes, unsigned int *in_flight)
{
	*processes = map_entries(bpf_map__fd(tr->skel->maps.tracked));
	*in_flight = map_entries(bpf_map__fd(tr->skel->maps.accum));
}

/*
 * The program the skeleton failed to attach: it attaches in order and stops at the first failure,
 * so that is the first one it would attach that has no link.
 */
static struct bpf_program *first_unattached(const struct bpf_object_skeleton *s)
{
	struct bpf_program *prog;
	int i;

	for (i = 0; i < s->prog_cnt; i++) {
		prog = *s->progs[i].prog;
		if (bpf_program__autoload(prog) && bpf_program__autoattach(prog) &&
		    !*s->progs[i].link) {
			return prog;
		}
	}
	return NULL;
}

/**
 * tracker_attach - start tracing: attach every program loaded, naming the hook that is missing.
 */
int tracker_attach(struct tracker *tr)
{
	struct bpf_program *prog;
	int err;

	err = latsnap_bpf__attach(tr->skel);
	if (err) {
		prog = first_unattached(tr->skel->skeleton);
		if (prog) {
			ls_err("tracker: cannot attach %s (%s): %s", bpf_program__name(prog),
			       bpf_program__section_name(prog), strerror(-err));
		} else {
			ls_err("tracker: cannot attach the BPF programs: %s", strerror(-err));
		}
		return err;
	}
	/*
	 * An fexit program's trampoline exists only once attached, and it is in the stack of
	 * every thread that sleeps in schedule(): read kallsyms again, so that it is named, and
	 * left out as glue, rather than taken for the code below it.
	 */
	if (bpf_program__autoload(tr->skel->progs.ls_schedule_exit)) {
		struct ksyms *ksyms = ksyms_load(NULL);

		if (ksyms) {
			ksyms_free(tr->ksyms);
			tr->ksyms = ksyms;
		}
	}
	return 0;
}

/**
 * tracker_set_context - start (or stop, with LS_CTX_NONE) the kernel context stream, handing
 * each of its events to @fn.
 */
int tracker_set_context(struct tracker *tr, enum ls_ctx_level level, tracker_context_fn fn,
			void *ctx)
{
	tr->ctx_fn = fn;
	tr->ctx_ctx = ctx;
	tr->skel->bss->ctx_level = level;
	return 0;
}

/**
 * tracker_kernel_frames() - symbolize kernel addresses, innermost first, with the BPF and
 *                           tracepoint plumbing at the top left out
 * @frames: an empty stack, filled
 *
 * Return: 0 or -ENOMEM.
 */
int tracker_kernel_frames(struct tracker *tr, const uint64_t *ips, unsigned int nr,
			  struct outlier_frames *frames)
{
	return decode_kernel_frames(tr->ksyms, (const __u64 *)ips, nr, frames);
}

/*
 * stall_read - run the stall scan through @link and hand each record to @fn. A record can
 * straddle two reads of the iterator's seq_file: they are put together in @buf.
 */
static int stall_read(struct bpf_link *link, tracker_stall_fn fn, void *ctx)
{
	struct ls_stall rec;
	size_t have = 0;
	ssize_t n;
	int fd, ret = 0, cb = 0;

	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		n = read(fd, (char *)&rec + have, sizeof(rec) - have);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			break;
		}
		have += (size_t)n;
		if (have == sizeof(rec)) {
			have = 0;
			if (!cb) {
				cb = fn(&rec, ctx);
			}
		}
	}
	close(fd);
	if (!ret) {
		ret = cb;
	}
out:
	return ret;
}

/* Tracked processes a stall scan walks one by one; with more, it walks every task once. */
#define STALL_SCAN_PER_PROCESS 64

/* The iterator over the threads of process @tgid alone, or (@tgid 0) over every task. */
static struct bpf_link *stall_link(struct tracker *tr, uint32_t tgid)
{
	union bpf_iter_link_info linfo = { .task.pid = tgid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo,
		    .link_info_len = sizeof(linfo));

	return bpf_program__attach_iter(tr->skel->progs.ls_stall_scan, tgid ? &opts : NULL);
}

/**
 * tracker_scan_stalls() - every tracked thread waiting (off CPU, or in one syscall while off
 *                         CPU) for at least @min_ns now, one struct ls_stall each to @fn
 *
 * A walk in the kernel (SEC("iter/task")) over the threads of each tracked process, or over
 * every task of the machine once when every thread is tracked or the processes are many: a
 * visit costs about half a microsecond (see bench section 7). Idle-list syscalls are left out
 * unless --include-idle.
 *
 * Return: 0, a non-zero return of @fn, or a negative errno.
 */
int tracker_scan_stalls(struct tracker *tr, uint64_t min_ns, tracker_stall_fn fn, void *ctx)
{
	int fd = bpf_map__fd(tr->skel->maps.tracked), ret = 0;
	uint32_t tgids[STALL_SCAN_PER_PROCESS + 1];
	/* Processes tracked for their cgroup or name are in no list: only a walk of all finds them. */
	bool every_task = tr->track_all || tr->track_unlisted;
	struct bpf_link *link;
	unsigned int i, n = 0;

	tr->skel->bss->stall_tid = 0;
	tr->skel->bss->stall_min_ns = min_ns;
	while (!every_task && !bpf_map_get_next_key(fd, n ? &tgids[n - 1] : NULL, &tgids[n])) {
		if (++n > STALL_SCAN_PER_PROCESS) {
			every_task = true;
		}
	}
	if (every_task || tr->iter_whole) {
		return stall_read(tr->skel->links.ls_stall_scan, fn, ctx);
	}
	for (i = 0; i < n && !ret && !tr->iter_whole; i++) {
		link = stall_link(tr, tgids[i]);
		if (!link) {
			/*
			 * Gone since: nothing to walk. Any other error is a kernel whose task
			 * iterators take no process (before 6.1: E2BIG for the link info's
			 * fields it does not know): every task is walked then, now and from now on.
			 */
			if (errno != ESRCH && errno != ENOENT) {
				ls_verbose("tracker: a task iterator over one process: %s: the stall "
					   "scan walks every task",
					   strerror(errno));
				tr->iter_whole = true;
				return stall_read(tr->skel->links.ls_stall_scan, fn, ctx);
			}
			continue;
		}
		ret = stall_read(link, fn, ctx);
		bpf_link__destroy(link);
	}
	return ret;
}

/**
 * tracker_scan_waiting() - hand @fn every tracked thread that waits now, however long, with -a
 * too: where the idle policy learns that threads wait for work, once tracking has begun.
 *
 * Return: 0, a non-zero return of @fn, or a negative errno.
 */
int tracker_scan_waiting(struct tracker *tr, tracker_stall_fn fn, void *ctx)
{
	int ret;

	tr->skel->bss->stall_seed = 1;
	ret = tracker_scan_stalls(tr, 0, fn, ctx);
	tr->skel->bss->stall_seed = 0;
	return ret;
}

static int stall_copy(const struct ls_stall *rec, void *ctx)
{
	memcpy(ctx, rec, sizeof(*rec));
	return 1;
}

/**
 * tracker_stall_thread() - the registers, kernel stack and state of thread @tid, whatever it
 *                          does (a holder of what a stalled thread waits for)
 *
 * Return: 0, -ESRCH when there is no such thread, or a negative errno.
 */
int tracker_stall_thread(struct tracker *tr, pid_t tid, struct ls_stall *out)
{
	union bpf_iter_link_info linfo = { .task.tid = (__u32)tid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo,
		    .link_info_len = sizeof(linfo));
	struct bpf_link *link;
	int ret;

	/* Before 6.1, every task is walked, the program keeping @tid alone (stall_tid). */
	link = NULL;
	if (!tr->iter_whole) {
		link = bpf_program__attach_iter(tr->skel->progs.ls_stall_scan, &opts);
	}
	if (!link && !tr->iter_whole && (errno == ESRCH || errno == ENOENT)) {
		return -errno;
	}
	tr->skel->bss->stall_tid = (__u32)tid;
	ret = stall_read(link ? link : tr->skel->links.ls_stall_scan, stall_copy, out);
	tr->skel->bss->stall_tid = 0;
	bpf_link__destroy(link);
	return ret == 1 ? 0 : ret ? ret : -ESRCH;
}

/**
 * tracker_stall_outlier() - the outlier of a stalled thread's wait so far, its stacks
 *                           symbolized: the user stack unwound from outside, from its saved
 *                           registers, without stopping it
 *
 * Return: 0 or a negative errno.
 */
int tracker_stall_outlier(struct tracker *tr, const struct ls_stall *st, struct outlier **outp)
{
	return decode_stall(st, tr->ksyms, tr->usyms, outp);
}

/**
 * tracker_stall_user_frames() - @st's user stack, unwound from its saved registers
 *
 * Return: 0 or a negative errno.
 */
int tracker_stall_user_frames(struct tracker *tr, const struct ls_stall *st,
			      struct outlier_frames *frames)
{
	return decode_stall_user(st, tr->usyms, frames);
}

static const char *const probe_kind_name[] = {
	[REQUEST_USDT] = "usdt",
	[REQUEST_UPROBE] = "uprobe",
	[REQUEST_URETPROBE] = "uretprobe",
};

static struct bpf_link *attach_probe(struct tracker *tr, const struct request_probe *p,
				     __u64 cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, usdt, .usdt_cookie = cookie);
	LIBBPF_OPTS(bpf_uprobe_opts, uprobe, .bpf_cookie = cookie, .func_name = p->name,
		    .retprobe = p->kind == REQUEST_URETPROBE);

	if (p->kind == REQUEST_USDT) {
		return bpf_program__attach_usdt(tr->skel->progs.ls_req_usdt, -1, p->path,
						p->provider, p->name, &usdt);
	}
	return bpf_program__attach_uprobe_opts(tr->skel->progs.ls_req_uprobe, -1, p->path, 0,
					       &uprobe);
}

/**
 * tracker_set_thresholds() - change the thresholds of the loaded programs, at run time
 * @threshold_ns: a syscall (or request) this long is an outlier
 * @sleep_threshold_ns: an off-CPU interval outside syscalls this long is an outlier
 *
 * The programs stay loaded and attached, and their rings keep what they hold: a wait that ends
 * after the store is judged by the new values; one that ended before, by the old.
 */
void tracker_set_thresholds(struct tracker *tr, uint64_t threshold_ns, uint64_t sleep_threshold_ns)
{
	/* The .data section is mapped: each store is one aligned 64-bit write the programs see. */
	__atomic_store_n(&tr->skel->data->threshold_ns, threshold_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&tr->skel->data->sleep_threshold_ns, sleep_threshold_ns, __ATOMIC_RELAXED);
}

/**
 * tracker_add_request() - follow the requests @spec delimits, in every tracked process that runs
 *                         its probes' objects (after tracker_attach())
 *
 * A request as long as the threshold is an outlier of kind request; the waits of its thread
 * inside it, down to the context floor, idle-list syscalls included, are its parts, not outliers
 * of their own.
 *
 * Return: 0, -E2BIG beyond LS_MAX_REQUESTS pairs, or the error of a probe that could not be
 * attached (said on stderr).
 */
int tracker_add_request(struct tracker *tr, const struct request_spec *spec)
{
	const struct request_probe *probes[2] = { &spec->start, &spec->end };
	unsigned int i = tr->nr_requests, k;
	struct bpf_link *link;
	bool nests;
	int err;

	if (i == LS_MAX_REQUESTS) {
		ls_err("tracker: --request '%s': at most %d probe pairs", spec->text,
		       LS_MAX_REQUESTS);
		return -E2BIG;
	}
	if (!tr->has_attach_cookie) {
		struct utsname uts;

		if (uname(&uts)) {
			snprintf(uts.release, sizeof(uts.release), "?");
		}
		ls_err("tracker: --request '%s': this kernel (%s) lacks BPF cookies "
		       "(bpf_get_attach_cookie(), Linux 5.15), which tell one request probe from "
		       "another",
		       spec->text, uts.release);
		return -ENOTSUP;
	}
	if (!tr->sample_links && attach_sampling(tr)) {
		return -ENOMEM;
	}
	/* The entry and return of one function nest (recursion); other pairs do not. */
	nests = spec->start.kind == REQUEST_UPROBE && spec->end.kind == REQUEST_URETPROBE &&
		!strcmp(spec->start.path, spec->end.path) && !strcmp(spec->start.name, spec->end.name);
	for (k = 0; k < 2; k++) {
		link = attach_probe(tr, probes[k],
				    ((__u64)i << LS_REQ_COOKIE_SHIFT) | (k ? LS_REQ_COOKIE_END : 0) |
					    (nests ? LS_REQ_COOKIE_NESTS : 0));
		if (!link) {
			err = -errno;
			ls_err("tracker: --request '%s': cannot attach %s:%s%s%s:%s: %s", spec->text,
			       probe_kind_name[probes[k]->kind], probes[k]->path,
			       probes[k]->provider ? ":" : "",
			       probes[k]->provider ? probes[k]->provider : "", probes[k]->name,
			       err == -ENOENT ? "no such file, symbol or probe" : strerror(-err));
			return err;
		}
		tr->req_links[2 * i + k] = link;
	}
	tr->req_text[i] = strdup(spec->text);
	if (!tr->req_text[i]) {
		return -ENOMEM;
	}
	tr->nr_requests++;
	return 0;
}

/**
 * tracker_wake_context - where a wakeup ran, from the waker's kernel stack: 0 in the waker's
 * own context, 1 in a hard interrupt, 2 in a softirq (then the task it names is a bystander).
 * @own gets how many frames are the waker's own.
 */
int tracker_wake_context(struct tracker *tr, const uint64_t *ips, unsigned int nr,
			 unsigned int *own)
{
	enum wake_context wc;

	*own = decode_wake_context(tr->ksyms, (const __u64 *)ips, nr, &wc);
	return wc == WAKE_HARDIRQ ? 1 : wc == WAKE_SOFTIRQ ? 2 : 0;
}

/**
 * tracker_poll - wait up to @timeout_ms for outliers and hand each to the callback.
 *
 * Return: the number handled, or a negative errno (-EINTR when a signal arrived).
 */
int tracker_poll(struct tracker *tr, int timeout_ms)
{
	int n;

	tr->budget = POLL_BUDGET;
	if (tr->nr_parked) {
		/* Back in time for the oldest parked outlier's deadline. */
		uint64_t now = ls_now_ns(), due = tr->parked[0].until_ns;
		int due_ms = due > now ? (int)((due - now) / 1000000) + 1 : 0;

		if (due_ms < timeout_ms) {
			timeout_ms = due_ms;
		}
	}
	n = ring_buffer__poll(tr->ring, timeout_ms);
	if (n == -EAGAIN) {
		n = POLL_BUDGET;
	}
	tr->budget = 0;
	if (!tr->cb_status) {
		unpark_overdue(tr, false);
	}
	if (tr->cb_status) {
		n = tr->cb_status;
		tr->cb_status = 0;
	}
	return n;
}

/**
 * tracker_settle - at the end of a run: wait up to @timeout_ms for the unwound stacks of the
 * outliers still waiting for one, then hand every outlier over.
 *
 * Return: 0, or the callback's non-zero return.
 */
int tracker_settle(struct tracker *tr, int timeout_ms)
{
	uint64_t deadline = ls_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	int err;

	while (tr->nr_parked && ls_now_ns() < deadline) {
		tr->budget = DRAIN_BUDGET;
		ring_buffer__poll(tr->ring, 10);
		tr->budget = 0;
		if (tr->cb_status) {
			break;
		}
	}
	if (!tr->cb_status) {
		unpark_overdue(tr, true);
	}
	err = tr->cb_status;
	tr->cb_status = 0;
	return err;
}

/**
 * tracker_drain - handle every outlier already in the ring buffer, without waiting.
 */
int tracker_drain(struct tracker *tr)
{
	int n;

	tr->budget = DRAIN_BUDGET;
	n = ring_buffer__consume(tr->ring);
	if (n == -EAGAIN) {
		n = DRAIN_BUDGET;
	}
	tr->budget = 0;
	return n;
}

/**
 * tracker_close - detach and free everything; safe on a partly opened tracker.
 */
void tracker_close(struct tracker *tr)
{
	unsigned int i;

	if (!tr) {
		return;
	}
	/* First, so that every hook of the machine stops paying for latsnap while the rest goes. */
	if (tr->skel) {
		latsnap_bpf__detach(tr->skel);
	}
	while (tr->nr_parked > 0) {
		outlier_free(tr->parked[--tr->nr_parked].outlier);
	}
	for (i = 0; i < 2 * LS_MAX_REQUESTS; i++) {
		bpf_link__destroy(tr->req_links[i]);
	}
	goroutines_free(tr->go);
	for (i = 0; tr->sample_links && i < (unsigned int)tr->ncpus; i++) {
		bpf_link__destroy(tr->sample_links[i]);
	}
	free(tr->sample_links);
	free(tr->req_samples);
	for (i = 0; i < tr->nr_requests; i++) {
		free(tr->req_text[i]);
	}
	while (tr->nr_req_parts > 0) {
		outlier_free(tr->req_parts[--tr->nr_req_parts]);
	}
	ring_buffer__free(tr->ring);
	if (tr->ctx_stacks) {
		munmap((void *)tr->ctx_stacks, tr->ctx_stacks_size);
	}
	if (tr->ctx_ring) {
		munmap((void *)tr->ctx_ring, tr->ctx_ring_size);
	}
	free(tr->ctx_done);
	free(tr->ctx_low);
	free(tr->pids);
	latsnap_bpf__destroy(tr->skel);
	ksyms_free(tr->ksyms);
	usyms_free(tr->usyms);
	pyframes_free(tr->pyframes);
	free(tr);
}
