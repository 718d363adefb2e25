/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top.h - what bpf/top.bpf.c and top/top.c share: the key and value of the wait aggregates
 * of `latsnap top`, and the record of its stall scan. Plain types only.
 */
#ifndef LATSNAP_TOP_H
#define LATSNAP_TOP_H

#define TOP_COMM_LEN 16
/* Kernel frames kept per stack: deeper frames rarely change the cause. */
#define TOP_MAX_DEPTH 32
/* Syscall numbers that name a synchronization object in their first argument. */
#define TOP_MAX_SYSCALLS 512

/* What a wait was, in struct top_key.kind. */
enum top_wait_kind {
	TOP_WAIT_BLOCKED = 1, /* switched out voluntarily until woken: a cause from its stack */
	TOP_WAIT_CPU = 2, /* runnable (preempted, or woken) until it ran: waiting for CPU */
};

/* What the first argument of a syscall is, in top_bpf's obj_syscalls[]. */
enum top_obj_kind {
	TOP_OBJ_NONE = 0,
	TOP_OBJ_FD = 1,
	TOP_OBJ_FUTEX = 2,
};

/* Counters of top_bpf's stats map (per CPU). */
enum top_stat {
	TOP_STAT_WAITS, /* waits that ended, kept or not */
	TOP_STAT_SAMPLED_OUT, /* short waits left out by sampling (each kept one stands for N) */
	TOP_STAT_AGG_FULL, /* waits lost because the aggregate map was full */
	TOP_STAT_STACK_FAILED, /* waits whose kernel stack could not be read */
	TOP_STAT_NR,
};

struct top_key {
	__u32 tgid;
	__u32 tid;
	__u64 stack; /* hash of the kernel stack, a key of the stacks map; 0 for none */
	__u64 obj; /* the fd or futex address, when obj_syscalls[] names one */
	__s32 nr; /* syscall number; -1 outside any syscall */
	__u8 kind; /* enum top_wait_kind */
	__u8 obj_kind; /* enum top_obj_kind */
	/*
	 * A futex wait for a lock (FUTEX_LOCK_PI*, or FUTEX_WAIT* of the value 2), told by its op
	 * and val as the recorder's futex:lock matcher tells it: 1, else 0 (a condition variable,
	 * a semaphore...; and any other syscall). The idle policy needs it: a waiter on a lock is
	 * never idle, a waiter on an event may be.
	 */
	__u8 futex_lock;
	__u8 pad;
};

struct top_value {
	__u64 count; /* waits, sampled ones scaled up */
	__u64 sum_ns; /* their total, scaled up likewise */
	__u64 max_ns; /* the longest one seen (sampled waits are short by definition) */
	char comm[TOP_COMM_LEN]; /* the thread's */
	char pcomm[TOP_COMM_LEN]; /* its process's (the group leader's) */
};

struct top_stack {
	__u32 nr;
	__u32 pad;
	__u64 ips[TOP_MAX_DEPTH];
};

/* What is known of a stall, in struct top_stall.flags. */
enum top_stall_flag {
	/*
	 * It was blocked before top's program first saw the thread: its start is the scheduler's
	 * last switch out of the thread (precise to a scheduler tick), or, when that cannot be
	 * read, the moment top first saw it blocked.
	 */
	TOP_STALL_BEFORE_TOP = 1,
};

/*
 * One thread waiting for at least stall_min_ns, as the stall scan (the task iterator of
 * top_bpf) writes it with bpf_seq_write(): fixed size, one after the other.
 */
struct top_stall {
	__u32 tgid;
	__u32 tid;
	__u64 start; /* the wait's start, bpf_ktime_get_ns() */
	__u64 now; /* when the scan saw it, the same clock */
	__u64 obj; /* the fd or futex address, when obj_syscalls[] names one */
	__s32 nr; /* syscall number; -1 outside any syscall, and for a wait for CPU */
	__u8 kind; /* enum top_wait_kind: blocked, or runnable (waiting for CPU) */
	__u8 obj_kind; /* enum top_obj_kind */
	__u8 flags; /* enum top_stall_flag */
	__u8 futex_lock; /* as struct top_key's */
	char comm[TOP_COMM_LEN]; /* the thread's */
	char pcomm[TOP_COMM_LEN]; /* its process's (the group leader's) */
	__u32 nr_ips; /* kernel frames in ips[]; 0 for a wait for CPU, or when unreadable */
	__u32 pad2;
	__u64 ips[TOP_MAX_DEPTH];
};

#endif /* LATSNAP_TOP_H */
