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
 *
 * A thread stuck for good never ends its wait, so no aggregate ever shows it: the stall scan, a
 * task iterator that user space runs at each refresh, lists the threads that wait now and have
 * for stall_min_ns or more (top --hang).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "include/top.h"
#include "include/futex.h"
#include "bpf/kernel-defs.h"
#include "bpf/core_fixes.bpf.h"

char LICENSE[] SEC("license") = "GPL";


/* Settings, fixed between open and load. */
const volatile __u64 sample_below_ns = 1000000;
const volatile __u32 sample_ratio = 100;
/* latsnap top itself: its own refresh sleeps are not the system's latencies. */
const volatile __u32 self_tgid = 0;
/* Kernel threads wait for work nearly all the time: left out unless asked for. */
const volatile bool include_kthreads = false;
const volatile __u8 obj_syscalls[TOP_MAX_SYSCALLS] = {};
/* Syscalls that wait for work (classify/syscalls.c's idle list): never a stall. */
const volatile __u8 idle_syscalls[TOP_MAX_SYSCALLS] = {};

/*
 * The stall scan lists waits at least this long. In .bss, not .rodata: user space sets it before
 * each scan (through the skeleton's mapping), to ~0 for a scan that only notes the threads
 * blocked before top.
 */
__u64 stall_min_ns;

enum run_state {
	TS_UNKNOWN = 0, /* first seen running: no wait to time */
	TS_RUNNING,
	TS_BLOCKED,
	TS_RUNNABLE,
	/*
	 * Blocked already when the stall scan first saw the thread, its start estimated: set by the
	 * scan only. The hooks below count no wait for it (they know only the states above), and
	 * its next switch in or out leaves it for one of them.
	 */
	TS_BLOCKED_BEFORE,
};

struct task_wait {
	__u64 start;
	__u64 obj;
	__s32 nr;
	__u8 state; /* enum run_state */
	__u8 obj_kind;
	__u8 futex_lock; /* struct top_key's */
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

/* The record the stall scan writes, too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct top_stall);
} stall_scratch SEC(".maps");

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
		key.futex_lock = w->futex_lock;
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

/* The same, where @regs is an address to read through (core_fixes.bpf.h's task_regs()). */
static __always_inline long syscall_of_core(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	if (PT_REGS_RC_CORE(regs) != (unsigned long)-ENOSYS) {
		return -1;
	}
	return BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(regs, syscallno);
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
	bool typed = bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs);
	struct pt_regs *regs;
	__u32 cmd, val;
	long nr;
	__u8 kind;

	w->nr = -1;
	w->obj = 0;
	w->obj_kind = TOP_OBJ_NONE;
	w->futex_lock = 0;
	if (task->flags & PF_KTHREAD) {
		return;
	}
	/* Before 5.15, the registers' address by hand, read through (core_fixes.bpf.h). */
	regs = task_regs(task);
	if (!regs) {
		return;
	}
	nr = typed ? syscall_of(regs) : syscall_of_core(regs);
	if (nr < 0 || nr >= TOP_MAX_SYSCALLS) {
		return;
	}
	w->nr = nr;
	kind = obj_syscalls[nr & (TOP_MAX_SYSCALLS - 1)];
	if (kind != TOP_OBJ_NONE) {
		w->obj_kind = kind;
		w->obj = typed ? PT_REGS_PARM1_SYSCALL(regs) : PT_REGS_PARM1_CORE_SYSCALL(regs);
	}
	/*
	 * A lock or an event: the idle policy's futex:lock test, on op and val (ints to the
	 * kernel: the upper half of the register is not theirs). Two more loads from the same
	 * registers, for futex only; the key keeps its size (a byte of its padding).
	 */
	if (kind == TOP_OBJ_FUTEX) {
		cmd = (__u32)(typed ? PT_REGS_PARM2_SYSCALL(regs) : PT_REGS_PARM2_CORE_SYSCALL(regs));
		val = (__u32)(typed ? PT_REGS_PARM3_SYSCALL(regs) : PT_REGS_PARM3_CORE_SYSCALL(regs));
		w->futex_lock = ls_futex_waits_for_lock(cmd, val);
	}
}

static __always_inline int sched_switch(bool preempt, struct task_struct *prev,
					struct task_struct *next, unsigned int prev_state)
{
	struct task_wait *w;
	__u64 now = bpf_ktime_get_ns();

	if (prev->pid && (__u32)prev->tgid != self_tgid && !(prev->flags & PF_EXITING) &&
	    (include_kthreads || !(prev->flags & PF_KTHREAD))) {
		w = task_storage_get(&waits, prev, true);
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
	w = task_storage_get(&waits, next, false);
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

SEC("tp_btf/sched_switch")
int BPF_PROG(top_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return sched_switch(preempt, prev, next, prev_state);
}

/* Before Linux 5.18 the tracepoint did not pass prev_state (top/load.c picks one of the two). */
SEC("tp_btf/sched_switch")
int BPF_PROG(top_sched_switch_3, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return sched_switch(preempt, prev, next, task_run_state(prev));
}

/* Task storage's stand-in (before 5.12) drops a thread's entry at its exit: tids are reused. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(top_sched_process_exit, struct task_struct *task)
{
	task_storage_drop(&waits, task);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(top_sched_wakeup, struct task_struct *p)
{
	struct task_wait *w = task_storage_get(&waits, p, false);
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

/*
 * The stall scan: what the hooks above do not see, a wait that has not ended.
 *
 * Nothing on the hot paths changes for it: sched_switch and sched_wakeup run the same code as
 * without it and never look at what the scan writes. The scan runs only when user space reads
 * its iterator (bpf_iter_create() on the link of top_stalls, once per refresh): it walks every
 * thread of the machine, reads the state the hooks left in its task storage and, for a thread
 * waiting for stall_min_ns or more, writes a struct top_stall with its kernel stack.
 *
 * A thread that was blocked when top started has no task storage (the hooks know a thread only
 * once it switches out), and a thread stuck for good never switches again: the scan gives it
 * one, TS_BLOCKED_BEFORE, whose start is the scheduler's last switch out of the thread
 * (blocked_since()). User space runs one scan at load for that, listing nothing.
 */

/*
 * When the blocked @task last switched out, on the clock of bpf_ktime_get_ns() (@now), from
 * the scheduler's: se.exec_start is its runqueue's clock_task when it stopped running, read
 * against that clock now; an idle CPU's clock is not kept up to date, so what it lags behind the
 * clock of this CPU's runqueue is added (the rq clocks of all CPUs are sched_clock()). Precise to
 * a scheduler tick. 0 when none of this can be read.
 */
static __always_inline __u64 blocked_since(struct task_struct *task, __u64 now)
{
	struct rq *trq = rq_of(task), *crq = rq_of(current_task());
	__u64 out, ago, task_clock, clock, this_clock;

	if (!trq || !crq) {
		return 0;
	}
	out = BPF_CORE_READ(task, se.exec_start);
	task_clock = BPF_CORE_READ(trq, clock_task);
	if (!out || out > task_clock) {
		return 0;
	}
	ago = task_clock - out;
	clock = BPF_CORE_READ(trq, clock);
	this_clock = BPF_CORE_READ(crq, clock);
	if (this_clock > clock) {
		ago += this_clock - clock;
	}
	return ago < now ? now - ago : 0;
}

/*
 * The task storage of @task, which has none: a thread blocked since before the hooks saw it is
 * given TS_BLOCKED_BEFORE and its syscall; anything else is left to the hooks. NULL then.
 */
static __always_inline struct task_wait *note_blocked_before(struct task_struct *task, __u64 now)
{
	struct task_wait init = {};

	if (task_run_state(task) == TASK_RUNNING || task->on_cpu) {
		return NULL;
	}
	init.state = TS_BLOCKED_BEFORE;
	init.start = blocked_since(task, now);
	if (!init.start) {
		/* At least since now. */
		init.start = now;
	}
	note_syscall(task, &init);
	/* NULL too when a hook gave it one meanwhile: the hook's is the truth. */
	return task_storage_init(&waits, task, &init);
}

SEC("iter/task")
int top_stalls(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct top_stall *rec;
	struct task_wait *w;
	__u64 now, start;
	__u8 kind, flags = 0;
	__u32 zero = 0;
	__s32 nr;
	long len;

	if (!task || !task->pid || (__u32)task->tgid == self_tgid || (task->flags & PF_EXITING) ||
	    (!include_kthreads && (task->flags & PF_KTHREAD))) {
		return 0;
	}
	now = bpf_ktime_get_ns();
	w = task_storage_get(&waits, task, false);
	if (!w) {
		w = note_blocked_before(task, now);
		if (!w) {
			return 0;
		}
	}
	/* The hooks write on other CPUs meanwhile: one copy of what is used. */
	start = w->start;
	nr = w->nr;
	switch (w->state) {
	case TS_BLOCKED:
		/* Running all the same: a hook did not run (BPF recursion) at its switch in. */
		if (task->on_cpu) {
			return 0;
		}
		kind = TOP_WAIT_BLOCKED;
		break;
	case TS_RUNNABLE:
		kind = TOP_WAIT_CPU;
		nr = -1;
		break;
	case TS_BLOCKED_BEFORE:
		/* Only while it still is: woken, nothing ends this state until it runs. */
		if (task_run_state(task) == TASK_RUNNING || task->on_cpu) {
			return 0;
		}
		kind = TOP_WAIT_BLOCKED;
		flags = TOP_STALL_BEFORE_TOP;
		break;
	default:
		return 0;
	}
	if (now < start || now - start < stall_min_ns) {
		return 0;
	}
	if (nr >= 0 && nr < TOP_MAX_SYSCALLS && idle_syscalls[nr & (TOP_MAX_SYSCALLS - 1)]) {
		return 0;
	}
	rec = bpf_map_lookup_elem(&stall_scratch, &zero);
	if (!rec) {
		return 0;
	}
	rec->tgid = task->tgid;
	rec->tid = task->pid;
	rec->start = start;
	rec->now = now;
	rec->nr = nr;
	rec->kind = kind;
	rec->flags = flags;
	rec->futex_lock = kind == TOP_WAIT_BLOCKED ? w->futex_lock : 0;
	rec->obj = kind == TOP_WAIT_BLOCKED ? w->obj : 0;
	rec->obj_kind = kind == TOP_WAIT_BLOCKED ? w->obj_kind : TOP_OBJ_NONE;
	bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), task->comm);
	bpf_probe_read_kernel_str(rec->pcomm, sizeof(rec->pcomm), task->group_leader->comm);
	rec->nr_ips = 0;
	if (kind == TOP_WAIT_BLOCKED) {
		len = bpf_get_task_stack(task, rec->ips, sizeof(rec->ips), 0);
		if (len > 0) {
			rec->nr_ips = len / sizeof(__u64);
		}
	}
	bpf_seq_write(seq, rec, sizeof(*rec));
	return 0;
}
