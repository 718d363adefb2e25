/* SPDX-License-Identifier: GPL-2.0 */
/*
 * holder.h - who holds what a blocked thread waits for: the owner of the pthread mutex it waits
 * on, the processes holding the other end of its pipe or unix socket. Read from /proc alone: the
 * target is never stopped, signalled or slowed (no ptrace).
 */
#ifndef LATSNAP_HOLDER_H
#define LATSNAP_HOLDER_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/outlier.h"

/**
 * struct holder_query - a blocked thread, as the hang check sees it
 * @pid: its process
 * @tid: the thread
 * @syscall_nr: the number of the syscall it is blocked in (this machine's), -1 for none
 * @args: the syscall's arguments, from the saved user registers
 * @user: its user stack, symbolized, innermost first; may be NULL or empty
 */
struct holder_query {
	pid_t pid;
	pid_t tid;
	long syscall_nr;
	uint64_t args[6];
	const struct outlier_frames *user;
};

enum holder_kind {
	HOLDER_NONE,
	HOLDER_MUTEX,
	HOLDER_PIPE,
	HOLDER_SOCKET,
	HOLDER_THREAD, /* a thread joined: it holds up the joiner until it ends */
};

/**
 * struct holder_found - who holds it
 * @kind: what is held
 * @pid: the holder's process
 * @tid: the holder thread; for a pipe or socket, held by a process, its pid
 * @comm: the holder thread's comm
 * @what: what it holds ("pthread mutex 0x55d0c0a04040", "pipe:[12345] write end (fd 4)")
 * @state: its own state when looked at ("running", "blocked in futex", ...)
 * @nr_others: further processes that hold it too (a pipe's other end in several processes)
 */
struct holder_found {
	enum holder_kind kind;
	pid_t pid;
	pid_t tid;
	char comm[16];
	char what[128];
	char state[64];
	unsigned int nr_others;
};

int holder_find(const struct holder_query *q, struct holder_found *h);
int holder_state(pid_t pid, pid_t tid, char *buf, size_t size);
const char *holder_kind_name(enum holder_kind kind);

#endif /* LATSNAP_HOLDER_H */
