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
#define bounded_index(i, n)                                                                        \
	({                                                                                         \
		__u32 __bi = (__u32)(i);                                                           \
		asm volatile("%0 &= %1" : "+r"(__bi) : "i"((n)-1));                                \
		__bi;                                                                              \
	})

#endif /* LATSNAP_CORE_FIXES_BPF_H */
