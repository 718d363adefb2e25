// SPDX-License-Identifier: GPL-2.0
/*
 * The primitives latsnap's programs are built of, one per program, each alone on a hook latsnap
 * uses (bench/prims.c loads one at a time and reads its bpf_stats): what a clock read, a per-CPU
 * slot, a task-storage lookup, a context record and a stack walk cost on this machine's kernel.
 * issue 31: the part of each latsnap program's cost its design requires is a sum of these.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* As struct ls_cpu_verdict: the per-CPU cache a syscall's entry looks at. */
struct slot {
	__u64 task;
	__u64 head;
	__u64 ts;
	__u64 nr;
};

/* As struct ls_ctx_record, by size: one event of the context ring. */
struct record {
	__u64 seq;
	__u64 ts;
	__u64 at;
	__u32 tid, pid, tid2, pid2;
	char comm[16];
	char comm2[16];
	__u32 cpu;
	__u32 arg;
	__s64 nr;
	__u64 stack_seq;
	__u32 nr_ips;
	__u8 kind;
};

struct task_data {
	__u64 last;
	__u64 count;
};

#define RING_SLOTS 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RING_SLOTS);
	__type(key, __u32);
	__type(value, struct record);
} ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_data);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[32]);
} scratch SEC(".maps");

/* The programs' own slot: what the compiler cannot drop. */
static __always_inline struct slot *my_slot(void)
{
	__u32 cpu = bpf_get_smp_processor_id() & 63;

	return bpf_map_lookup_elem(&slots, &cpu);
}

static __always_inline void record_write(struct task_struct *a, struct task_struct *b, __u64 now)
{
	struct slot *s = my_slot();
	struct record *e;
	__u32 idx;

	if (!s) {
		return;
	}
	idx = (__u32)(s->head++ & (RING_SLOTS - 1));
	e = bpf_map_lookup_elem(&ring, &idx);
	if (!e) {
		return;
	}
	e->seq = s->head;
	e->ts = now;
	e->at = now;
	e->tid = a->pid;
	e->pid = a->tgid;
	__builtin_memcpy(e->comm, a->comm, 16);
	e->tid2 = b->pid;
	e->pid2 = b->tgid;
	__builtin_memcpy(e->comm2, b->comm, 16);
	e->cpu = bpf_get_smp_processor_id();
	e->kind = 1;
}

/* sys_enter: the getppid loop's hook. */
SEC("tp_btf/sys_enter")
int BPF_PROG(enter_empty, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(enter_slot, struct pt_regs *regs, long id)
{
	struct slot *s = my_slot();

	if (s) {
		s->nr = id;
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(enter_clock, struct pt_regs *regs, long id)
{
	struct slot *s = my_slot();

	if (s) {
		s->ts = bpf_ktime_get_ns();
	}
	return 0;
}

/* jiffies: the clock a syscall's entry could read instead (bpf_ktime_get_coarse_ns() is
 * refused to tracing programs). */
SEC("tp_btf/sys_enter")
int BPF_PROG(enter_jiffies, struct pt_regs *regs, long id)
{
	struct slot *s = my_slot();

	if (s) {
		s->ts = bpf_jiffies64();
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(enter_storage, struct pt_regs *regs, long id)
{
	struct task_data *d = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (d) {
		d->count++;
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(enter_record, struct pt_regs *regs, long id)
{
	struct task_struct *t = bpf_get_current_task_btf();

	record_write(t, t, 0);
	return 0;
}

/* sched_switch: the ping-pong's hook. */
SEC("tp_btf/sched_switch")
int BPF_PROG(switch_empty, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_clock, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct slot *s = my_slot();

	if (s) {
		s->ts = bpf_ktime_get_ns();
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_storage2, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct task_data *d;

	d = bpf_task_storage_get(&tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (d) {
		d->count++;
	}
	d = bpf_task_storage_get(&tasks, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (d) {
		d->count++;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_record, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	record_write(prev, next, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_kstack, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0;
	__u64 *buf = bpf_map_lookup_elem(&scratch, &zero);

	if (buf) {
		bpf_get_task_stack(prev, buf, 32 * sizeof(__u64), 0);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_ustack, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0;
	__u64 *buf = bpf_map_lookup_elem(&scratch, &zero);

	if (buf) {
		bpf_get_stack(ctx, buf, 32 * sizeof(__u64), BPF_F_USER_STACK);
	}
	return 0;
}
