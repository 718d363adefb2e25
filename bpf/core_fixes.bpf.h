/* SPDX-License-Identifier: GPL-2.0 */
/*
 * core_fixes.bpf.h - where the kernels latsnap runs on differ, in one place, as libbpf-tools'
 * file of the same name. Each shim names the release that changed what it hides; its path is
 * picked by CO-RE or by a setting that user space derived from probing the running kernel
 * (tracker/kernel.c), never by a version number.
 */
#ifndef LATSNAP_CORE_FIXES_BPF_H
#define LATSNAP_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/*
 * task_group_dead - whether @task, at sched_process_exit, is the last thread of its process to
 * exit. Newer kernels (6.18 here) pass that as the tracepoint's second argument, group_dead;
 * 6.12 and older pass the task alone, and refuse a tp_btf program that names a second argument
 * ("func 'sched_process_exit' doesn't have 2-th argument"). Every release's do_exit() counts
 * signal->live down before the tracepoint, so the count tells on all of them. Two threads that
 * exit at once may both read 0: both are then in a process that is gone, which is all that the
 * caller needs to know.
 */
static __always_inline bool task_group_dead(struct task_struct *task)
{
	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

/*
 * bounded_index - @i, which the caller has checked to be below @n (a power of two), in a form
 * the verifier can see is bounded. Clang folds "i &= n - 1" away after a "i < n" test, and 6.1's
 * verifier then follows a path it cannot rule out with an unbounded index (array access through
 * a "scalar": R2 invalid mem access). The empty asm keeps the mask.
 */
#define bounded_index(i, n)                                         \
	({                                                          \
		__u32 __bi = (__u32)(i);                            \
		asm volatile("%0 &= %1" : "+r"(__bi) : "i"((n)-1)); \
		__bi;                                               \
	})

/*
 * bpf_get_current_task_btf() (Linux 5.11) gives a task pointer that programs read through with
 * plain loads. Before it, current is only an address (bpf_get_current_task()), which must be
 * read with bpf_probe_read_kernel(). Which of the two the kernel has is a constant at load
 * (a CO-RE relocation of the kernel's own enum), so the verifier drops the other path.
 */
#define current_task_typed() \
	bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)

static __always_inline struct task_struct *current_task(void)
{
	if (current_task_typed()) {
		return bpf_get_current_task_btf();
	}
	return (struct task_struct *)bpf_get_current_task();
}

/*
 * task_rd - a field of @t, a task that may be current_task(): a load where that is typed, a
 * probe read where it is an address (5.10).
 */
#define task_rd(t, field) (current_task_typed() ? (t)->field : BPF_CORE_READ(t, field))

/*
 * task_comm_copy - @t's comm into the 16 bytes at @dst: two loads where @t is typed (the JIT
 * guards each with an exception entry), a probe read where current is an address (5.10).
 */
static __always_inline void task_comm_copy(char *dst, const struct task_struct *t)
{
	const __u64 *src = (const __u64 *)t->comm;

	if (current_task_typed()) {
		((__u64 *)dst)[0] = src[0];
		((__u64 *)dst)[1] = src[1];
	} else if (bpf_probe_read_kernel(dst, 16, src)) {
		__builtin_memset(dst, 0, 16);
	}
}

/*
 * task_regs - the user registers @task saved at its entry into the kernel. bpf_task_pt_regs()
 * (Linux 5.15); before it, task_pt_regs() by hand: the pt_regs at the top of the task's kernel
 * stack, on x86-64 and arm64 alike (THREAD_SIZE, 16 KiB on both without KASAN, which
 * distribution kernels are; arm64 with 4 KiB pages, as Debian's). Either is read with the _CORE
 * macros (probe reads). NULL elsewhere: what needs them is lost.
 */
#define LS_THREAD_SIZE (4096 << 2)

static __always_inline struct pt_regs *task_regs(struct task_struct *task)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)) {
		return (struct pt_regs *)bpf_task_pt_regs(task);
	}
#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)
	void *stack = BPF_CORE_READ(task, stack);

	if (!stack) {
		return NULL;
	}
	return (struct pt_regs *)(stack + LS_THREAD_SIZE - bpf_core_type_size(struct pt_regs));
#else
	return NULL;
#endif
}

/*
 * A task's run state: task_struct.__state since Linux 5.14, .state (a long) before. libbpf
 * matches the flavour below to the kernel's struct and drops its suffix.
 */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_run_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state)) {
		return BPF_CORE_READ(task, __state);
	}
	return (unsigned int)BPF_CORE_READ((struct task_struct___pre514 *)task, state);
}

/*
 * Task storage (BPF_MAP_TYPE_TASK_STORAGE, Linux 5.11). Without it, the same map is made a hash
 * map keyed by thread id (user space sets its type before load, tracker/kernel.c), its new
 * entries copied from storage_zeros, and its entries are dropped at sched_process_exit (task_storage_drop()). User space sets
 * has_task_storage from the same probe.
 */
const volatile bool has_task_storage = true;

/* What a new entry of the stand-in starts as: read, never written. */
#define LS_STORAGE_ZERO_SIZE 1024

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[LS_STORAGE_ZERO_SIZE]);
} storage_zeros SEC(".maps");

static __always_inline void *task_storage_get(void *map, struct task_struct *task, bool create)
{
	__u32 tid, zero = 0;
	void *v, *init;

	if (has_task_storage) {
		return bpf_task_storage_get(map, task, NULL,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	}
	tid = task_rd(task, pid);
	v = bpf_map_lookup_elem(map, &tid);
	if (!v && create) {
		init = bpf_map_lookup_elem(&storage_zeros, &zero);
		if (!init) {
			return NULL;
		}
		bpf_map_update_elem(map, &tid, init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(map, &tid);
	}
	return v;
}

/*
 * task_storage_init - @task's entry of @map, created from @init if it has none; as
 * bpf_task_storage_get() with a value and BPF_LOCAL_STORAGE_GET_F_CREATE.
 */
static __always_inline void *task_storage_init(void *map, struct task_struct *task, void *init)
{
	__u32 tid;

	if (has_task_storage) {
		return bpf_task_storage_get(map, task, init, BPF_LOCAL_STORAGE_GET_F_CREATE);
	}
	tid = task_rd(task, pid);
	bpf_map_update_elem(map, &tid, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &tid);
}

static __always_inline void task_storage_drop(void *map, struct task_struct *task)
{
	__u32 tid;

	if (!has_task_storage) {
		tid = task_rd(task, pid);
		bpf_map_delete_elem(map, &tid);
	}
}

/*
 * The CPU a task last ran on: thread_info.cpu on x86 since Linux 5.16, task_struct.cpu before.
 */
struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_cpu(struct task_struct *task)
{
	if (bpf_core_field_exists(task->thread_info.cpu)) {
		return task_rd(task, thread_info.cpu);
	}
	return BPF_CORE_READ((struct task_struct___pre516 *)task, cpu);
}

/*
 * cpu_in_hardirq - whether this CPU runs a hard interrupt (or an NMI) on top of @cur, current:
 * its preempt count says so. x86 keeps that count per CPU: __preempt_count (before 6.2, and again
 * since 6.15), pcpu_hot.preempt_count in between (64701838bf05 "x86/percpu: Move preempt_count
 * next to current_task", 6.2; 46e8fff6d45f "x86/preempt: Move preempt count to percpu hot
 * section", 6.15). Neither is in kallsyms without CONFIG_KALLSYMS_ALL, and a __ksym of it does
 * not load then ("ldimm64 failed to find the address for kernel symbol '__preempt_count'", 6.18
 * here). So its address is this CPU's runqueue's (current's, through its cfs_rq) moved by
 * preempt_from_rq, the distance of the two in the per-CPU area, which user space reads in
 * vmlinux's BTF for whichever layout it has (kernel_preempt_from_rq()). With none found (0), or
 * no cfs_rq->rq (!CONFIG_FAIR_GROUP_SCHED): false, as before. Softirqs are left out: one the task
 * runs itself at local_bh_enable() works on its behalf (see stack_in_interrupt()).
 */
const volatile __s64 preempt_from_rq = 0;

#define LS_HARDIRQ_NMI_MASK 0x00ff0000 /* HARDIRQ_MASK | NMI_MASK */

static __always_inline bool cpu_in_hardirq(struct task_struct *cur)
{
	struct rq *rq;
	int pc = 0;

	if (!preempt_from_rq || !bpf_core_field_exists(((struct cfs_rq *)0)->rq)) {
		return false;
	}
	rq = BPF_CORE_READ(cur, se.cfs_rq, rq);
	if (!rq || bpf_probe_read_kernel(&pc, sizeof(pc), (void *)rq + preempt_from_rq)) {
		return false;
	}
	return pc & LS_HARDIRQ_NMI_MASK;
}

/*
 * struct request as it was before Linux 5.17, which named its disk itself: the disk is reached
 * through the request's queue (request_queue->disk, Linux 5.15) since. libbpf matches this flavour
 * to the kernel's struct request and drops the "___old" suffix.
 */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/*
 * request_dev - the device number of a request's disk, as the kernel's disk_devt() makes it.
 * Which layout the kernel has is a constant at load, so the other branch is left out by the
 * verifier.
 */
static __always_inline __u64 request_dev(struct request *rq)
{
	struct request___old *old = (struct request___old *)rq;
	struct gendisk *disk;

	if (bpf_core_field_exists(old->rq_disk)) {
		disk = BPF_CORE_READ(old, rq_disk);
	} else {
		disk = BPF_CORE_READ(rq, q, disk);
	}
	if (!disk) {
		return 0;
	}
	return ((__u64)BPF_CORE_READ(disk, major) << 20) | BPF_CORE_READ(disk, first_minor);
}

/*
 * run_delay - the time @task has spent on a runqueue, waiting for a CPU, in all: sched_info's,
 * which a kernel without CONFIG_SCHED_INFO (nor schedstats, delay accounting) has not; 0 then.
 */
static __always_inline __u64 run_delay(struct task_struct *task)
{
	if (bpf_core_field_exists(task->sched_info.run_delay)) {
		return BPF_CORE_READ(task, sched_info.run_delay);
	}
	return 0;
}

/* has_attach_cookie - whether the kernel has BPF cookies, bpf_get_attach_cookie() (Linux 5.15). */
static __always_inline bool has_attach_cookie(void)
{
	return bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_attach_cookie);
}

/* The runqueue of a task's CPU, reached from its CFS entity where the kernel links them. */
struct sched_entity___grp {
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

struct cfs_rq___grp {
	struct rq *rq;
} __attribute__((preserve_access_index));

/*
 * rq_of - the runqueue of the CPU @task is on (last ran on, when it is not running): se.cfs_rq->rq,
 * which a kernel without CONFIG_FAIR_GROUP_SCHED has not (NULL then). Not the per-CPU runqueues
 * variable: it is reachable only with CONFIG_KALLSYMS_ALL.
 */
static __always_inline struct rq *rq_of(struct task_struct *task)
{
	struct sched_entity___grp *se = (void *)&task->se;
	struct cfs_rq___grp *cfs;

	if (!bpf_core_field_exists(se->cfs_rq) || !bpf_core_field_exists(struct cfs_rq___grp, rq)) {
		return NULL;
	}
	cfs = (void *)BPF_CORE_READ(se, cfs_rq);
	return cfs ? BPF_CORE_READ(cfs, rq) : NULL;
}

#endif /* LATSNAP_CORE_FIXES_BPF_H */
