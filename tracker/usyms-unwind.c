// SPDX-License-Identifier: GPL-2.0
/*
 * usyms-unwind.c - a thread's stack unwound from a copy of its registers and its memory
 * (/proc/PID/task/TID/mem), with the captured process's CFI.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "tracker/usyms-int.h"
#include "lib/proc.h"
#include "lib/util.h"

/* Dwfl_Thread_Callbacks.next_thread: the one thread of the call in progress, if any. */
static pid_t unwind_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct usyms *us = arg;

	(void)dwfl;
	if (!us->call || *thread_argp) {
		return 0;
	}
	*thread_argp = us->call;
	return us->call->tid;
}

/* Dwfl_Thread_Callbacks.get_thread: no thread but the one whose registers the call holds. */
static bool unwind_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct usyms *us = arg;

	(void)dwfl;
	if (!us->call || us->call->tid != tid) {
		return false;
	}
	*thread_argp = us->call;
	return true;
}

/* The page of the target's memory that starts at @addr, read now if not yet; NULL if unmapped. */
static const uint8_t *unwind_page(struct usyms *us, uint64_t addr)
{
	struct unwind_call *c = us->call;
	struct unwind_page *pg;
	int i;

	for (i = 0; i < UNWIND_PAGES; i++) {
		if (us->pages[i].loaded && us->pages[i].addr == addr) {
			return us->pages[i].data;
		}
	}
	if (addr > (uint64_t)INT64_MAX - UNWIND_PAGE) {
		return NULL;
	}
	pg = &us->pages[c->next_page];
	c->next_page = (c->next_page + 1) % UNWIND_PAGES;
	pg->loaded = pread(c->mem_fd, pg->data, UNWIND_PAGE, (off_t)addr) == UNWIND_PAGE;
	pg->addr = addr;
	return pg->loaded ? pg->data : NULL;
}

/* Dwfl_Thread_Callbacks.memory_read: a word of the target, through /proc/PID/mem. */
static bool unwind_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct usyms *us = arg;
	uint8_t word[sizeof(*result)];
	const uint8_t *data;
	size_t done = 0, off, n;

	(void)dwfl;
	if (!us->call) {
		return false;
	}
	/* A word that straddles two pages takes its bytes from both. */
	while (done < sizeof(word)) {
		off = (addr + done) % UNWIND_PAGE;
		n = sizeof(word) - done;
		if (n > UNWIND_PAGE - off) {
			n = UNWIND_PAGE - off;
		}
		data = unwind_page(us, addr + done - off);
		if (!data) {
			return false;
		}
		memcpy(word + done, data + off, n);
		done += n;
	}
	memcpy(result, word, sizeof(word));
	return true;
}

/* Dwfl_Thread_Callbacks.set_initial_registers: the registers the caller gave. */
static bool unwind_set_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind_call *c = thread_arg;

#if defined(__aarch64__)
	/* As libdw's own aarch64 backend: the DWARF registers x0..sp, then the pc apart. */
	if (!dwfl_thread_state_registers(thread, 0, USYMS_REG_IP, c->regs)) {
		return false;
	}
	dwfl_thread_state_register_pc(thread, c->regs[USYMS_REG_IP]);
	return true;
#else
	return dwfl_thread_state_registers(thread, 0, USYMS_NR_REGS, c->regs);
#endif
}

static const Dwfl_Thread_Callbacks unwind_callbacks = {
	.next_thread = unwind_next_thread,
	.get_thread = unwind_get_thread,
	.memory_read = unwind_memory_read,
	.set_initial_registers = unwind_set_registers,
};

/*
 * Called by dwfl_getthread_frames() for each frame, innermost first. Keeps its pc and stops at
 * the limit, at a zero pc, and where the stack pointer does not go up: each return pops its
 * address, so a CFA that repeats or goes down means garbage or a loop. Only a signal frame may
 * switch stacks (sigaltstack), so the frame it interrupted may have its stack pointer anywhere.
 */
static int unwind_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwind_call *c = arg;
	bool activation = false, sp_known;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc) {
		return DWARF_CB_ABORT;
	}
	sp_known = !dwfl_frame_reg(frame, USYMS_REG_SP, &sp);
	if (sp_known && c->nr && (sp == c->last_sp || (sp < c->last_sp && !activation))) {
		return DWARF_CB_ABORT;
	}
	if (!dwfl_addrmodule(c->dwfl, activation ? pc : pc - 1)) {
		c->missed = true;
	}
	c->ips[c->nr++] = pc;
	c->last_sp = sp;
	/* Without a stack pointer the pc is real, but nothing above it can be told from garbage. */
	return sp_known && c->nr < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* The Dwfl of @p with the thread callbacks attached: once per Dwfl, which a refresh replaces. */
static int unwind_attach(struct usyms *us, struct usyms_proc *p)
{
	if (dwfl_pid(p->dwfl) > 0) {
		return 0;
	}
	/* No Elf: libdwfl takes the architecture of the first captured object that has one. */
	return dwfl_attach_state(p->dwfl, NULL, p->pid, &unwind_callbacks, us) ? 0 : -ENOEXEC;
}

/* One walk of c->tid's stack with the Dwfl of @p; returns 0 or -errno. */
static int unwind_once(struct usyms *us, struct usyms_proc *p, struct unwind_call *c)
{
	int err, i;

	err = unwind_attach(us, p);
	if (err) {
		return err;
	}
	c->dwfl = p->dwfl;
	c->nr = 0;
	c->missed = false;
	for (i = 0; i < UNWIND_PAGES; i++) {
		us->pages[i].loaded = false;
	}
	us->call = c;
	usyms_tls_us = us;
	usyms_tls_proc = p;
	/* -1 says where the walk stopped (no CFI, unreadable stack): the frames so far stand. */
	dwfl_getthread_frames(p->dwfl, c->tid, unwind_frame, c);
	us->call = NULL;
	usyms_tls_us = NULL;
	usyms_tls_proc = NULL;
	/* Not even the first frame: the registers did not fit the process's (a 32-bit one). */
	return c->nr ? 0 : -ENOEXEC;
}

/**
 * usyms_unwind() - walk the user stack of a thread of another process from its saved registers
 * @us: the cache
 * @pid: the process (thread group id)
 * @tid: the thread of @pid that @regs belong to
 * @regs: its user registers, in DWARF numbering (see USYMS_NR_REGS): what the kernel
 *	saved at the thread's last entry, valid while it stays in the kernel (blocked)
 * @ips: out, innermost first: ips[0] is regs[USYMS_REG_IP], then the return addresses as found
 *	in the stack (not minus 1; a frame that a signal interrupted has its exact pc instead)
 * @max: the room in @ips, at least 1
 *
 * Unwinds with the CFI (.eh_frame, else .debug_frame) of the objects captured for @pid, so that
 * code without frame pointers unwinds too; where an object has no CFI for a pc, libdwfl falls
 * back to the frame pointer chain. The stack is read with pread() of /proc/@pid/task/@tid/mem:
 * no ptrace, no signal, the thread is never stopped (needs the right to ptrace it, as root has).
 *
 * Captures @pid first if it is not cached (usyms_capture()); as for usyms_lookup(), a process
 * that exited or exec'd must have been forgotten (usyms_forget()), else the objects of the one
 * captured under that pid are used. A pc in no captured object makes a live process's mappings be
 * read again (at most every 100 ms, as usyms_lookup() does) and the stack walked once more.
 *
 * The walk is bounded: it stops at @max frames, at a zero pc, where the stack pointer does not
 * grow (a repeated CFA), and where a frame cannot be unwound or the stack cannot be read; the
 * frames found until then are returned.
 *
 * Return: the number of frames in @ips, at least 1 when regs[USYMS_REG_IP] is not 0; 0 when it
 * is (nothing is read then). Or -errno: -EINVAL when @max is 0, -ESRCH when @pid or @tid (as a
 * thread of @pid) does not exist, -EACCES or -EPERM without the right to read its memory,
 * -ENOEXEC when the process is not one of this architecture (or none of its objects says what
 * it is), the
 * errors of usyms_capture().
 */
int usyms_unwind(struct usyms *us, pid_t pid, pid_t tid, const uint64_t regs[USYMS_NR_REGS],
		 uint64_t *ips, unsigned int max)
{
	struct unwind_call c = { .tid = tid, .mem_fd = -1, .regs = regs, .ips = ips, .max = max };
	struct usyms_proc *p;
	char path[64];
	uint64_t gen;
	int err;

	if (!max) {
		err = -EINVAL;
		goto out;
	}
	if (!regs[USYMS_REG_IP]) {
		err = 0;
		goto out;
	}
	if (pid <= 0 || tid <= 0) {
		err = -ESRCH;
		goto out;
	}
	/* The thread's own file: it exists only while @tid is a thread of @pid. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", (int)pid, (int)tid);
	c.mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c.mem_fd < 0) {
		err = errno == ENOENT ? -ESRCH : -errno;
		goto out;
	}
	pthread_mutex_lock(&us->lock);
	p = usyms_get_proc(us, pid, &err);
	if (!p) {
		goto unlock;
	}
	err = unwind_once(us, p, &c);
	if (err || !c.missed) {
		goto unlock;
	}
	gen = p->gen;
	usyms_refresh(us, p, false);
	if (p->gen != gen) {
		err = unwind_once(us, p, &c);
	}
unlock:
	pthread_mutex_unlock(&us->lock);
out:
	if (c.mem_fd >= 0) {
		close(c.mem_fd);
	}
	return err ? err : (int)c.nr;
}
