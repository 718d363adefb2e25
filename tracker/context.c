// SPDX-License-Identifier: GPL-2.0
/*
 * context.c - the reader of the kernel context stream: the BPF side keeps the switches, wakeups
 * and syscalls of the threads of interest in a ring per CPU (ctx_ring, and their stacks in
 * ctx_stacks), mapped here read-only; right before a snapshot, tracker_read_context() hands the
 * window's records over in time order.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/tracker-int.h"
#include "latsnap.skel.h"
#include "lib/array.h"
#include "lib/util.h"

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
 * Context records kept per CPU: 65536 (8 MB, about 1.7 s of a busy PostgreSQL's switches and
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
	err = array_reserve((void **)&cr->stacks, &cr->cap_stacks, cr->nr_stacks + 1,
			    sizeof(*cr->stacks));
	if (err) {
		return err;
	}
	st = &tr->context.stacks[(size_t)cpu * tr->context.stack_slots +
				 ((seq - 1) & (tr->context.stack_slots - 1))];
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

/*
 * ctx_split - the last item read, a held-back switch-out and the wakeup that ended its wait in
 * one record (LS_CTX_SWITCH_WAKEUP: the kernel writes one slot for the two), becomes the two
 * records the kernel would have written, neither with a stack.
 */
static int ctx_split(struct ctx_read *cr)
{
	struct ctx_item *sw, *wk;
	int err;

	err = array_reserve((void **)&cr->items, &cr->cap, cr->nr + 1, sizeof(*cr->items));
	if (err) {
		return err;
	}
	sw = &cr->items[cr->nr - 1];
	wk = &cr->items[cr->nr];
	*wk = *sw;
	wk->rec.kind = LS_CTX_WAKEUP;
	wk->rec.ts = sw->rec.at;
	wk->rec.cpu = sw->rec.wake_cpu;
	wk->rec.tid2 = sw->rec.waker_tid;
	wk->rec.pid2 = sw->rec.waker_pid;
	memcpy(wk->rec.comm2, sw->rec.comm3, sizeof(wk->rec.comm2));
	wk->rec.nr = -1;
	wk->rec.arg = sw->rec.wake_irq;
	wk->rec.start = 0;
	wk->rec.stack_seq = 0;
	sw->rec.kind = LS_CTX_SWITCH;
	sw->rec.start = 0;
	sw->rec.stack_seq = 0;
	wk->stack = sw->stack = -1;
	cr->nr++;
	return 0;
}

/*
 * The records of @cpu's ring written at or after @from_ns and, unless @again, not handed over
 * before.
 */
static int ctx_read_cpu(struct tracker *tr, int cpu, uint64_t from_ns, bool again,
			struct ctx_read *cr, struct tracker_ctx_read *r)
{
	uint64_t head, i, seq, oldest = UINT64_MAX;
	const struct ls_ctx_record *slot;
	struct ctx_item *it;
	bool done;
	int err = 0;

	head = __atomic_load_n(&tr->skel->bss->verdicts[cpu].ctx_head, __ATOMIC_ACQUIRE);
	for (i = head > tr->context.slots ? head - tr->context.slots : 0; i < head; i++) {
		err = array_reserve((void **)&cr->items, &cr->cap, cr->nr + 1, sizeof(*cr->items));
		if (err) {
			goto out;
		}
		it = &cr->items[cr->nr];
		slot = &tr->context.ring[(size_t)cpu * tr->context.slots +
					 (i & (tr->context.slots - 1))];
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
		 * for seconds). Each such record goes once, the first read that finds it, and
		 * again (@again) when it is in the window.
		 */
		done = i < tr->context.done[cpu];
		if (it->rec.kind == LS_CTX_INTEREST) {
			if (done && (!again || it->rec.at < from_ns)) {
				continue;
			}
		} else if (it->rec.at < from_ns ||
			   (!again && done && it->rec.at >= tr->context.low[cpu])) {
			continue;
		}
		if (it->rec.kind == LS_CTX_SWITCH_WAKEUP) {
			it->rec.nr_ips = 0;
		}
		err = ctx_copy_stack(tr, cpu, cr, it, r);
		if (err) {
			goto out;
		}
		cr->nr++;
		if (it->rec.kind == LS_CTX_SWITCH_WAKEUP) {
			err = ctx_split(cr);
			if (err) {
				goto out;
			}
		}
	}
	/* The ring went round inside the window: its start is gone. */
	if (head > tr->context.slots && oldest != UINT64_MAX && oldest > from_ns &&
	    oldest - from_ns > r->wrapped_ns) {
		r->wrapped_ns = oldest - from_ns;
	}
	tr->context.done[cpu] = head;
	tr->context.low[cpu] = from_ns;
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
 * before a snapshot. With @again, those handed over before too: a consumer that writes each read
 * into a trace of its own needs the whole window in each (an outlier that began before the last
 * snapshot's cut has its start in the next one too), where one that writes into the same ring
 * would only repeat what the ring still holds. At most @max_bytes of them
 * (tracker_ctx_event_size()), the newest: the consumer writes them all at once into one CPU's
 * LTTng ring, which overwrites its oldest sub-buffers, latsnap's outlier events among them, once a
 * burst is larger than it. A slot being written, or written over while copied, is left out
 * (counted in @r->torn).
 *
 * Return: 0, or -ENOMEM.
 */
int tracker_read_context(struct tracker *tr, uint64_t from_ns, bool again, uint64_t max_bytes,
			 struct tracker_ctx_read *r)
{
	struct ctx_read cr = { 0 };
	struct ctx_item **order = NULL;
	struct ls_ctx_event ev;
	uint64_t bytes = 0;
	size_t k, first;
	int cpu, err = 0;

	memset(r, 0, sizeof(*r));
	if (!tr->context.ring || !tr->context.fn) {
		return 0;
	}
	flush_held_switches(tr);
	for (cpu = 0; cpu < tr->ncpus && cpu < LS_VERDICT_CPUS && !err; cpu++) {
		err = ctx_read_cpu(tr, cpu, from_ns, again, &cr, r);
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
		tr->context.fn(&ev, tr->context.fn_ctx);
		r->emitted++;
	}
out:
	free(order);
	free(cr.items);
	free(cr.stacks);
	return err;
}

/**
 * tracker_set_context - start (or stop, with LS_CTX_NONE) the kernel context stream, handing
 * each of its events to @fn.
 */
int tracker_set_context(struct tracker *tr, enum ls_ctx_level level, tracker_context_fn fn,
			void *ctx)
{
	tr->context.fn = fn;
	tr->context.fn_ctx = ctx;
	tr->skel->bss->ctx_level = level;
	return 0;
}

/**
 * context_size() - before the load: the rings' sizes, into the programs and their maps, and the
 *                  reader's own marks
 *
 * Return: 0 or -ENOMEM.
 */
int context_size(struct tracker *tr)
{
	tr->context.slots = ctx_slots_for(tr->ncpus);
	tr->skel->rodata->ctx_slots = tr->context.slots;
	bpf_map__set_max_entries(tr->skel->maps.ctx_ring, (__u32)tr->ncpus * tr->context.slots);
	tr->context.stack_slots = tr->context.slots / 16;
	tr->skel->rodata->ctx_stack_slots = tr->context.stack_slots;
	bpf_map__set_max_entries(tr->skel->maps.ctx_stacks,
				 (__u32)tr->ncpus * tr->context.stack_slots);
	tr->context.done = calloc((size_t)tr->ncpus, sizeof(*tr->context.done));
	tr->context.low = calloc((size_t)tr->ncpus, sizeof(*tr->context.low));
	if (!tr->context.done || !tr->context.low) {
		return -ENOMEM;
	}
	return 0;
}

/**
 * context_map() - after the load: the rings and their stacks, mapped to read
 *
 * Return: 0, or a negative errno after saying why.
 */
int context_map(struct tracker *tr)
{
	int err = 0;

	tr->context.ring_size =
		(size_t)tr->ncpus * tr->context.slots * sizeof(struct ls_ctx_record);
	tr->context.ring = map_read_only(tr->skel->maps.ctx_ring, tr->context.ring_size, &err);
	if (!tr->context.ring) {
		goto out;
	}
	tr->context.stacks_size =
		(size_t)tr->ncpus * tr->context.stack_slots * sizeof(struct ls_ctx_stack);
	tr->context.stacks =
		map_read_only(tr->skel->maps.ctx_stacks, tr->context.stacks_size, &err);
out:
	return err;
}

/**
 * context_free() - unmap the rings and free the reader's marks; safe on a partly opened tracker.
 */
void context_free(struct tracker *tr)
{
	if (tr->context.stacks) {
		munmap((void *)tr->context.stacks, tr->context.stacks_size);
	}
	if (tr->context.ring) {
		munmap((void *)tr->context.ring, tr->context.ring_size);
	}
	free(tr->context.done);
	free(tr->context.low);
}
