/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctxstream.bpf.h - the context stream: per-CPU rings of switches, wakeups and syscalls, read
 * before a snapshot. A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_CTXSTREAM_BPF_H
#define LATSNAP_BPF_CTXSTREAM_BPF_H

/*
 * The context stream stays in the kernel: per CPU, a ring of its last ctx_slots events in
 * ctx_ring, which latsnap maps and reads only before a snapshot. Streaming every event to user
 * space cost more than everything else (a ring buffer record, then latsnap's read and its
 * lttng-ust event, for every switch of a tracked thread), while only the context of an outlier
 * is ever kept. An event's seq is its place in its CPU's ring plus one, set once it is
 * complete: the reader tells a slot being written, or written over, by it.
 */
#define LS_CTX_SEQ_BUSY (1ULL << 63)

static __always_inline void ctx_submit(struct ls_ctx_record *e)
{
	asm volatile("" ::: "memory");
	e->seq &= ~LS_CTX_SEQ_BUSY;
}

/*
 * ctx_take - the next value of @head, a counter of this CPU's, or -1 when a program that this
 * one interrupted (a wakeup in a hard interrupt, say) is taking one right now. No atomics: Linux
 * 5.10 refuses an atomic that returns the old value (5.12) anywhere in a program, even where it
 * cannot run. Programs on one CPU nest only as interrupts do, the later one ending first, and
 * a CPU sees its own stores in order: one that runs between another's read and store of @head
 * sees @busy set and takes nothing; one that runs before the read or after the store takes its
 * own value. What is not taken is counted as lost.
 */
static __always_inline __s64 ctx_take(__u64 *head, __u8 *busy)
{
	__u64 v;

	if (*(volatile __u8 *)busy) {
		return -1;
	}
	*(volatile __u8 *)busy = 1;
	asm volatile("" ::: "memory");
	v = *(volatile __u64 *)head;
	*(volatile __u64 *)head = v + 1;
	asm volatile("" ::: "memory");
	*(volatile __u8 *)busy = 0;
	return (__s64)v;
}

/* A slot of this CPU's ring. */
static __always_inline struct ls_ctx_record *ctx_reserve(void)
{
	__u32 cpu = bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1), idx;
	struct ls_ctx_record *e;
	__s64 taken;
	__u64 head;

	taken = ctx_take(&verdicts[cpu].ctx_head, &verdicts[cpu].ctx_busy);
	if (taken < 0) {
		stat_inc(LS_STAT_CTX_LOST);
		return NULL;
	}
	head = (__u64)taken;
	idx = cpu * ctx_slots + (__u32)(head & (ctx_slots - 1));
	e = bpf_map_lookup_elem(&ctx_ring, &idx);
	if (!e) {
		stat_inc(LS_STAT_CTX_LOST);
		return NULL;
	}
	e->seq = (head + 1) | LS_CTX_SEQ_BUSY;
	asm volatile("" ::: "memory");
	stat_inc(LS_STAT_CTX_EVENTS);
	return e;
}

/*
 * A slot of this CPU's stack ring for the stack of @e, a record reserved on this CPU; NULL when
 * there is none (the record then goes without). ctx_stack_done() once the stack is in.
 */
static __always_inline struct ls_ctx_stack *ctx_stack_reserve(struct ls_ctx_record *e)
{
	__u32 cpu = bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1), idx;
	struct ls_ctx_stack *st;
	__s64 taken;
	__u64 head;

	taken = ctx_take(&verdicts[cpu].ctx_stack_head, &verdicts[cpu].ctx_busy);
	if (taken < 0) {
		return NULL;
	}
	head = (__u64)taken;
	idx = cpu * ctx_stack_slots + (__u32)(head & (ctx_stack_slots - 1));
	st = bpf_map_lookup_elem(&ctx_stacks, &idx);
	if (!st) {
		return NULL;
	}
	st->seq = (head + 1) | LS_CTX_SEQ_BUSY;
	e->stack_seq = head + 1;
	asm volatile("" ::: "memory");
	stat_inc(LS_STAT_CTX_STACKS);
	return st;
}

static __always_inline void ctx_stack_done(struct ls_ctx_stack *st)
{
	asm volatile("" ::: "memory");
	st->seq &= ~LS_CTX_SEQ_BUSY;
}

/*
 * A task's comm, read straight through its BTF pointer (two loads the JIT guards with an
 * exception entry), not with bpf_probe_read_kernel(): a helper call on every context event.
 */
static __always_inline void copy_comm(char *dst, const struct task_struct *task)
{
	task_comm_copy(dst, task);
}

/* The header of a context event about @task (and @other, which may be NULL). */
static __always_inline void ctx_fill(struct ls_ctx_record *e, __u8 kind, __u64 now,
				     struct task_struct *task, struct task_struct *other)
{
	e->kind = kind;
	e->preempted = 0;
	e->nr_ips = 0;
	e->cpu = bpf_get_smp_processor_id();
	e->ts = now;
	e->at = now;
	e->tid = task_rd(task, pid);
	e->pid = task_rd(task, tgid);
	copy_comm(e->comm, task);
	if (other) {
		e->tid2 = task_rd(other, pid);
		e->pid2 = task_rd(other, tgid);
		copy_comm(e->comm2, other);
	} else {
		e->tid2 = 0;
		e->pid2 = 0;
		__builtin_memset(e->comm2, 0, sizeof(e->comm2));
	}
	e->nr = -1;
	e->arg = 0;
	e->start = 0;
	e->stack_seq = 0;
}

/* A simple context event about @task, if it is streamed. */
static __always_inline void ctx_task_event(__u8 kind, struct task_struct *task,
					   struct task_struct *other)
{
	struct ls_ctx_record *e;
	__u64 now;

	if (ctx_level == LS_CTX_NONE) {
		return;
	}
	now = clock_now();
	if (!streamed(any_state(task, false), now)) {
		return;
	}
	e = ctx_reserve();
	if (e) {
		ctx_fill(e, kind, now, task, other);
		ctx_submit(e);
	}
}

/*
 * @task, a user thread, is streamed from now on (or for longer), because of @other. The first
 * time, an LS_CTX_INTEREST event says from when its record is complete.
 */
static __always_inline void ctx_interest(struct task_state *s, struct task_struct *task,
					 struct task_struct *other, __u64 now, __u64 until,
					 __u32 reason)
{
	struct ls_ctx_record *e;
	bool was = s->interest_until > now;

	if (s->tracked || (task_rd(task, flags) & PF_KTHREAD) || !task_rd(task, pid) ||
	    (__u32)task_rd(task, tgid) == self_tgid || s->interest_until >= until) {
		return;
	}
	s->interest_until = until;
	if (was) {
		return;
	}
	verdict_forget(task);
	e = ctx_reserve();
	if (e) {
		ctx_fill(e, LS_CTX_INTEREST, now, task, other);
		e->arg = reason;
		ctx_submit(e);
	}
}

#endif /* LATSNAP_BPF_CTXSTREAM_BPF_H */
