// SPDX-License-Identifier: GPL-2.0
/*
 * top.bpf.c - `latsnap top`: every off-CPU wait of every thread, aggregated in the kernel by
 * (process, thread, kernel stack, syscall, object) into count, sum and max.
 *
 * Only the scheduler's hooks: no syscall tracepoint, so no thread is moved to the syscall slow
 * path. The syscall a thread blocks in and its first argument (the fd or futex address) are read
 * from the thread's saved user registers when it switches out.
 *
 * A wait ends at its wakeup (blocked time) or when the thread runs again (runnable time, which is
 * "waiting for CPU"). The kernel stack of a blocked wait is read at its wakeup, when its length is
 * known: waits shorter than sample_below_ns are kept only 1 in sample_ratio (at random) and
 * counted sample_ratio times, as LatencyTOP for OpenSolaris did, so that hundreds of thousands of
 * switches a second cost a hash lookup each and only a few stack walks. Both maps are bounded:
 * a full aggregate map counts its losses, the stacks map is LRU.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "include/top.h"
#include "bpf/kernel-defs.h"

char LICENSE[] SEC("license") = "GPL";


/* Settings, fixed between open and load. */
const volatile __u64 sample_below_ns = 1000000;
const volatile __u32 sample_ratio = 100;
/* latsnap top itself: its own refresh sleeps are not the system's latencies. */
const volatile __u32 self_tgid = 0;
/* Kernel threads wait for work nearly all the time: left out unless asked for. */
const volatile bool include_kthreads = false;
const volatile __u8 obj_syscalls[TOP_MAX_SYSCALLS] = {};

enum run_state {
	TS_UNKNOWN = 0, /* first seen running: no wait to time */
	TS_RUNNING,
	TS_BLOCKED,
	TS_RUNNABLE,
};

struct task_wait {
	__u64 start;
	__u64 obj;
	__s32 nr;
	__u8 state; /* enum run_state */
	__u8 obj_kind;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_wait);
} waits SEC(".maps");

/* Read and emptied by user space at each refresh. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct top_key);
	__type(value, struct top_value);
} agg SEC(".maps");

/* Stack hash -> frames; user space caches the cause of each hash, so eviction costs little. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct top_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct top_stack);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TOP_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v) {
		*v += 1;
	}
}

/* The kernel stack of @task, which is not running, filed in the stacks map; its hash, 0 if none. */
static __always_inline __u64 capture_stack(struct task_struct *task)
{
	__u64 hash = 14695981039346656037ULL;
	struct top_stack *st;
	__u32 zero = 0;
	long len;
	int i;

	st = bpf_map_lookup_elem(&scratch, &zero);
	if (!st) {
		return 0;
	}
	len = bpf_get_task_stack(task, st->ips, sizeof(st->ips), 0);
	if (len <= 0) {
		stat_inc(TOP_STAT_STACK_FAILED);
		return 0;
	}
	st->nr = len / sizeof(__u64);
	for (i = 0; i < TOP_MAX_DEPTH; i++) {
		if (i >= (int)st->nr) {
			break;
		}
		hash = (hash ^ st->ips[i]) * 1099511628211ULL;
	}
	hash = hash ? hash : 1;
	if (!bpf_map_lookup_elem(&stacks, &hash)) {
		bpf_map_update_elem(&stacks, &hash, st, BPF_ANY);
	}
	return hash;
}

/* A wait of @task that lasted until @now ends: count it, unless sampling leaves it out. */
static __always_inline void end_wait(struct task_struct *task, struct task_wait *w, __u64 now,
				     __u8 kind)
{
	struct top_key key = {};
	struct top_value init = {}, *v;
	__u64 dur = now - w->start, weight = 1;
	long err;

	stat_inc(TOP_STAT_WAITS);
	if (dur < sample_below_ns && sample_ratio > 1) {
		if (bpf_get_prandom_u32() % sample_ratio) {
			stat_inc(TOP_STAT_SAMPLED_OUT);
			return;
		}
		weight = sample_ratio;
	}
	key.tgid = task->tgid;
	key.tid = task->pid;
	key.kind = kind;
	key.nr = -1;
	if (kind == TOP_WAIT_BLOCKED) {
		key.stack = capture_stack(task);
		key.nr = w->nr;
		key.obj = w->obj;
		key.obj_kind = w->obj_kind;
	}
	v = bpf_map_lookup_elem(&agg, &key);
	if (!v) {
		bpf_probe_read_kernel_str(init.comm, sizeof(init.comm), task->comm);
		bpf_probe_read_kernel_str(init.pcomm, sizeof(init.pcomm), task->group_leader->comm);
		err = bpf_map_update_elem(&agg, &key, &init, BPF_NOEXIST);
		if (err && err != -EEXIST) {
			stat_inc(TOP_STAT_AGG_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&agg, &key);
		if (!v) {
			/* Drained by user space in between: this one wait is lost. */
			stat_inc(TOP_STAT_AGG_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->count, weight);
	__sync_fetch_and_add(&v->sum_ns, dur * weight);
	if (dur > v->max_ns) {
		v->max_ns = dur;
	}
}

/*
 * The syscall a thread is in, from its saved user registers @regs, or -1. libbpf names the
 * argument and return registers of each architecture, not the number's. An entry from user space
 * by an interrupt or an exception stores -1 as the number (x86 orig_ax, arm64 syscallno); on x86
 * the entry code also keeps -ENOSYS as the return value until the syscall returns, which leaves
 * out a thread on its way out of one (whose orig_ax keeps the number).
 */
static __always_inline long syscall_of(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return PT_REGS_RC(regs) == (unsigned long)-ENOSYS ? (long)regs->orig_ax : -1;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#else
#error "top.bpf.c knows the saved user registers of x86 and arm64 only"
#endif
}

/*
 * The syscall @task blocks in and, for those that name one, the object it waits on (its first
 * argument). The registers are loaded directly (relocated by CO-RE all the same), not read with
 * the _CORE macros' bpf_probe_read_kernel(): bpf_task_pt_regs() gives a pointer the verifier
 * knows, and this runs at every blocking switch of the machine.
 */
static __always_inline void note_syscall(struct task_struct *task, struct task_wait *w)
{
	struct pt_regs *regs;
	long nr;
	__u8 kind;

	w->nr = -1;
	w->obj = 0;
	w->obj_kind = TOP_OBJ_NONE;
	if (task->flags & PF_KTHREAD) {
		return;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs) {
		return;
	}
	nr = syscall_of(regs);
	if (nr < 0 || nr >= TOP_MAX_SYSCALLS) {
		return;
	}
	w->nr = nr;
	kind = obj_syscalls[nr & (TOP_MAX_SYSCALLS - 1)];
	if (kind != TOP_OBJ_NONE) {
		w->obj_kind = kind;
		w->obj = PT_REGS_PARM1_SYSCALL(regs);
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(top_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct task_wait *w;
	__u64 now = bpf_ktime_get_ns();

	if (prev->pid && (__u32)prev->tgid != self_tgid && !(prev->flags & PF_EXITING) &&
	    (include_kthreads || !(prev->flags & PF_KTHREAD))) {
		w = bpf_task_storage_get(&waits, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (w) {
			w->start = now;
			if (preempt || prev_state == TASK_RUNNING) {
				w->state = TS_RUNNABLE;
			} else {
				w->state = TS_BLOCKED;
				note_syscall(prev, w);
			}
		}
	}
	if (!next->pid) {
		return 0;
	}
	w = bpf_task_storage_get(&waits, next, NULL, 0);
	if (!w) {
		return 0;
	}
	if (w->state == TS_RUNNABLE) {
		end_wait(next, w, now, TOP_WAIT_CPU);
	} else if (w->state == TS_BLOCKED) {
		/* Its wakeup went unseen: the whole interval counts as blocked. */
		end_wait(next, w, now, TOP_WAIT_BLOCKED);
	}
	w->state = TS_RUNNING;
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(top_sched_wakeup, struct task_struct *p)
{
	struct task_wait *w = bpf_task_storage_get(&waits, p, NULL, 0);
	__u64 now;

	if (!w || w->state != TS_BLOCKED) {
		return 0;
	}
	now = bpf_ktime_get_ns();
	end_wait(p, w, now, TOP_WAIT_BLOCKED);
	w->state = TS_RUNNABLE;
	w->start = now;
	return 0;
}
