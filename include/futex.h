/* SPDX-License-Identifier: GPL-2.0 */
/*
 * futex.h - the futex lock rule, in one place for the BPF programs (latsnap's work handover, top's
 * lock column) and user space (the cause rules' futex:lock): whether a futex call waits for a
 * lock, or for an event (a condition variable, a semaphore, a thread's exit).
 */
#ifndef LATSNAP_FUTEX_H
#define LATSNAP_FUTEX_H

/* linux/futex.h's commands (BTF carries no macros, and older headers lack FUTEX_LOCK_PI2). */
#define LS_FUTEX_WAIT 0
#define LS_FUTEX_LOCK_PI 6
#define LS_FUTEX_TRYLOCK_PI 8
#define LS_FUTEX_WAIT_BITSET 9
#define LS_FUTEX_WAIT_REQUEUE_PI 11
#define LS_FUTEX_LOCK_PI2 13 /* Linux 5.14 */
/* The command, without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256) around it. */
#define LS_FUTEX_CMD_MASK 127
/*
 * glibc's lll_lock and Rust's std Mutex (and Go's runtime lock) mark a contended lock word 2 and
 * wait for it to change from 2: a FUTEX_WAIT for 2 is a thread waiting for a lock.
 */
#define LS_FUTEX_CONTENDED 2

/*
 * ls_futex_waits_for_lock - whether futex(2) with @op and @val (ints to the kernel: the upper
 * half of a register is not theirs) waits for a lock: a PI lock's, or a contended lock word's.
 */
static inline int ls_futex_waits_for_lock(unsigned int op, unsigned int val)
{
	unsigned int cmd = op & LS_FUTEX_CMD_MASK;

	return cmd == LS_FUTEX_LOCK_PI || cmd == LS_FUTEX_TRYLOCK_PI || cmd == LS_FUTEX_LOCK_PI2 ||
	       ((cmd == LS_FUTEX_WAIT || cmd == LS_FUTEX_WAIT_BITSET) && val == LS_FUTEX_CONTENDED);
}

#endif /* LATSNAP_FUTEX_H */
