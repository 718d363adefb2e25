/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel-defs.h - the kernel's macros the BPF programs use: vmlinux.h carries types and enums
 * from BTF, never a #define.
 */
#ifndef LATSNAP_KERNEL_DEFS_H
#define LATSNAP_KERNEL_DEFS_H

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000
#define TASK_RUNNING 0
/* Scheduling policies (include/uapi/linux/sched.h): the CFS ones. */
#define SCHED_NORMAL 0
#define SCHED_BATCH 3
#define SCHED_IDLE 5
#define SIGKILL 9
#define SIGSTOP 19
#define EPERM 1
#define EBUSY 16
#define EEXIST 17
#define ENOSYS 38

#endif /* LATSNAP_KERNEL_DEFS_H */
