// SPDX-License-Identifier: GPL-2.0
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

#include "tracker/dbgfetch.h"
#include "tracker/perfmap.h"
#include "tracker/usyms.h"
#include "lib/proc.h"
#include "lib/util.h"
#include "tracker/usyms-int.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++) {
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	}
	return h;
}

static int strset_grow(struct strset *set)
{
	size_t cap = set->cap ? set->cap * 2 : 1024, i, j;
	char **slots = calloc(cap, sizeof(*slots));

	if (!slots) {
		return -ENOMEM;
	}
	for (i = 0; i < set->cap; i++) {
		if (!set->slots[i]) {
			continue;
		}
		for (j = hash_str(set->slots[i]) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1)) {
		}
		slots[j] = set->slots[i];
	}
	free(set->slots);
	set->slots = slots;
	set->cap = cap;
	return 0;
}

/* Returns the kept copy of @s, or NULL when out of memory. */
const char *usyms_intern(struct strset *set, const char *s)
{
	size_t i;

	if ((set->nr + 1) * 2 > set->cap && strset_grow(set)) {
		return NULL;
	}
	for (i = hash_str(s) & (set->cap - 1); set->slots[i]; i = (i + 1) & (set->cap - 1)) {
		if (!strcmp(set->slots[i], s)) {
			return set->slots[i];
		}
	}
	set->slots[i] = strdup(s);
	if (set->slots[i]) {
		set->nr++;
	}
	return set->slots[i];
}

static void strset_free(struct strset *set)
{
	size_t i;

	for (i = 0; i < set->cap; i++) {
		free(set->slots[i]);
	}
	free(set->slots);
}

static struct usyms_proc *find_proc(struct usyms *us, pid_t pid)
{
	int i;

	for (i = 0; i < USYMS_MAX_PROCS; i++) {
		if (us->procs[i].dwfl && us->procs[i].pid == pid) {
			return &us->procs[i];
		}
	}
	return NULL;
}

/* A complete capture of another process with the code @hash names, whose Dwfl can be shared. */
static struct usyms_proc *same_code(struct usyms *us, uint64_t hash)
{
	int i;

	for (i = 0; hash && i < USYMS_MAX_PROCS; i++) {
		if (us->procs[i].dwfl && us->procs[i].code_hash == hash &&
		    !us->procs[i].loading_captures) {
			return &us->procs[i];
		}
	}
	return NULL;
}

/* Ends @dwfl unless a cached process, or a capture not taken over yet, still holds it. */
static void put_dwfl(struct usyms *us, Dwfl *dwfl)
{
	int i;

	for (i = 0; dwfl && i < USYMS_MAX_PROCS; i++) {
		if (us->procs[i].dwfl == dwfl) {
			return;
		}
	}
	for (i = 0; dwfl && i < USYMS_PENDING; i++) {
		if (us->pending[i].dwfl == dwfl) {
			return;
		}
	}
	dwfl_end(dwfl);
}

static void drop_pending(struct usyms *us, struct usyms_pending *pend)
{
	Dwfl *dwfl = pend->dwfl;

	memset(pend, 0, sizeof(*pend));
	put_dwfl(us, dwfl);
}

static void drop_proc(struct usyms *us, struct usyms_proc *p)
{
	Dwfl *dwfl = p->dwfl;

	perfmap_free(p->jit);
	memset(p, 0, sizeof(*p));
	put_dwfl(us, dwfl);
}

/* Caches @tmp, a new capture, in place of the least recently used process. */
static struct usyms_proc *add_proc(struct usyms *us, struct usyms_proc *tmp)
{
	struct usyms_proc *victim = &us->procs[0];
	int i;

	/* Who it is, while it lives: its perf map may be needed after it exited. */
	tmp->jit = perfmap_new(tmp->pid);
	for (i = 0; i < USYMS_MAX_PROCS; i++) {
		if (!us->procs[i].dwfl) {
			victim = &us->procs[i];
			break;
		}
		if (us->procs[i].last_use < victim->last_use) {
			victim = &us->procs[i];
		}
	}
	if (victim->dwfl == tmp->dwfl) {
		/* The least recently used is the one whose Dwfl it takes over. */
		victim->dwfl = NULL;
	}
	if (victim->dwfl || victim->jit) {
		drop_proc(us, victim);
	}
	*victim = *tmp;
	return victim;
}

/* Returns the cached entry of @pid, capturing it first if needed; NULL with *err set on failure. */
struct usyms_proc *usyms_get_proc(struct usyms *us, pid_t pid, int *err)
{
	struct usyms_proc *p = find_proc(us, pid), *same;
	struct usyms_proc tmp = { .pid = pid };
	bool loading = false;

	*err = 0;
	if (p) {
		goto out;
	}
	if (pid <= 0) {
		*err = -ESRCH;
		goto out;
	}
	*err = usyms_live_start_time(pid, &tmp.start_time);
	if (*err) {
		goto out;
	}
	tmp.read_ns = ls_now_ns();
	tmp.code_hash = proc_code_hash(pid);
	if (us->own_hash && tmp.code_hash == us->own_hash) {
		*err = -ECHILD;
		goto out;
	}
	same = same_code(us, tmp.code_hash);
	if (same) {
		/* Its Dwfl, names and all: reading the maps is all a capture costs then. */
		tmp.dwfl = same->dwfl;
		tmp.gen = same->gen;
		tmp.fetches_seen = same->fetches_seen;
		tmp.debuginfo_pending = same->debuginfo_pending;
	} else {
		tmp.fetches_seen = us->fetch ? dbgfetch_done(us->fetch) : 0;
		*err = usyms_report(us, pid, NULL, NULL, &tmp.dwfl, &loading);
		if (*err) {
			goto out;
		}
		tmp.loading_captures = loading;
		tmp.gen = ++us->gen;
	}
	tmp.reported_ns = ls_now_ns();
	p = add_proc(us, &tmp);
out:
	if (p) {
		p->last_use = ++us->tick;
	}
	return p;
}

/*
 * A lookup missed every module (@force false), or the process is known to be past its loader:
 * pick up objects mapped since the capture. The new Dwfl replaces the old one only once it is
 * complete, so a process that exits meanwhile keeps what was captured.
 */
void usyms_refresh(struct usyms *us, struct usyms_proc *p, bool force)
{
	unsigned long long start_time;
	uint64_t fetches, hash, read_ns;
	bool loading = false;
	Dwfl *dwfl, *old;
	int err;

	if (p->final || (!force && ls_now_ns() - p->reported_ns < USYMS_REFRESH_NS)) {
		return;
	}
	if (usyms_live_start_time(p->pid, &start_time) || start_time != p->start_time) {
		p->final = true;
		return;
	}
	fetches = us->fetch ? dbgfetch_done(us->fetch) : 0;
	read_ns = ls_now_ns();
	hash = proc_code_hash(p->pid);
	err = usyms_report(us, p->pid, NULL, p->dwfl, &dwfl, &loading);
	p->reported_ns = ls_now_ns();
	if (err) {
		p->final = err == -ESRCH;
		return;
	}
	p->loading_captures = loading ? p->loading_captures + 1 : 0;
	p->code_hash = hash;
	p->read_ns = read_ns;
	old = p->dwfl;
	p->dwfl = dwfl;
	put_dwfl(us, old);
	p->gen = ++us->gen;
	p->debuginfo_pending = false;
	p->fetches_seen = fetches;
}

static struct memo *memo_slot(struct usyms *us, uint64_t gen, uint64_t addr)
{
	uint64_t h = (addr ^ (gen * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

	return &us->memo[h >> (64 - USYMS_MEMO_BITS)];
}

/**
 * usyms_new() - create an empty cache of per-process symbolizers
 *
 * Return: the cache, or NULL when out of memory.
 */
struct usyms *usyms_new(void)
{
	struct usyms *us = calloc(1, sizeof(struct usyms));
	pthread_condattr_t attr;

	pthread_once(&usyms_debuginfo_once, usyms_init_debuginfo_path);
	if (us) {
		pthread_mutex_init(&us->lock, NULL);
		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&us->reader_cond, &attr);
		pthread_condattr_destroy(&attr);
		us->fetch = dbgfetch_new();
	}
	return us;
}

/**
 * usyms_free() - free the cache and every string it handed out
 * @us: the cache, or NULL
 */
void usyms_free(struct usyms *us)
{
	int i;

	if (!us) {
		return;
	}
	for (i = 0; i < USYMS_MAX_PROCS; i++) {
		if (us->procs[i].dwfl) {
			drop_proc(us, &us->procs[i]);
		}
	}
	for (i = 0; i < USYMS_PENDING; i++) {
		if (us->pending[i].dwfl) {
			drop_pending(us, &us->pending[i]);
		}
	}
	for (i = 0; i < USYMS_ELF_CACHE; i++) {
		if (us->elves[i].elf) {
			elf_end(us->elves[i].elf);
		}
	}
	strset_free(&us->names);
	dbgfetch_free(us->fetch);
	pthread_mutex_destroy(&us->lock);
	pthread_cond_destroy(&us->reader_cond);
	free(us);
}

/**
 * usyms_skip_own() - never capture a child of this process that has not exec'd
 * @us: the cache
 *
 * Such a child runs this process's code at the same addresses, and what it waits in before its
 * exec is this process's business: its capture (every library of this process's) would only
 * delay the next one (a second, in an emulated guest). Captures of it fail with -ECHILD.
 */
void usyms_skip_own(struct usyms *us)
{
	pthread_mutex_lock(&us->lock);
	us->own_hash = proc_code_hash(getpid());
	pthread_mutex_unlock(&us->lock);
}

/**
 * usyms_capture() - record the mappings of a process while it lives
 * @us: the cache
 * @pid: a process id (thread group id)
 *
 * Reads /proc/@pid/maps and opens the ELF file of every mapped object, so that its addresses can
 * be symbolized after it exits. Does nothing when @pid is cached already. Capturing one more than
 * USYMS_MAX_PROCS processes drops the least recently used one. The cache cannot tell a reused pid
 * or an exec from the process it captured: call usyms_forget() when a process exits or execs.
 *
 * Holds no file descriptor; each mapped object of a cached process stays mapped in memory.
 *
 * Return: 0, or -errno: -ESRCH when the process is gone, a zombie or a kernel thread (nothing
 * mapped in user space), -EACCES without the right to read its maps.
 */
int usyms_capture(struct usyms *us, pid_t pid)
{
	int err;

	pthread_mutex_lock(&us->lock);
	usyms_get_proc(us, pid, &err);
	pthread_mutex_unlock(&us->lock);
	return err;
}

/*
 * Takes over @pend, the maps reader's capture of a process, as that process's capture (as
 * usyms_refresh() or usyms_get_proc() would have made it then); @pend is free after.
 */
static void adopt(struct usyms *us, struct usyms_pending *pend)
{
	struct usyms_proc *p = find_proc(us, pend->pid);
	struct usyms_proc tmp = { .pid = pend->pid };
	Dwfl *old;

	if (p) {
		old = p->dwfl;
		p->dwfl = pend->dwfl;
		p->loading_captures = pend->loading ? p->loading_captures + 1 : 0;
		p->code_hash = pend->code_hash;
		p->reported_ns = pend->reported_ns;
		p->read_ns = pend->read_ns;
		p->gen = ++us->gen;
		p->debuginfo_pending = false;
		p->fetches_seen = pend->fetches_seen;
		memset(pend, 0, sizeof(*pend));
		put_dwfl(us, old);
		return;
	}
	tmp.dwfl = pend->dwfl;
	tmp.start_time = pend->start_time;
	tmp.reported_ns = pend->reported_ns;
	tmp.read_ns = pend->read_ns;
	tmp.loading_captures = pend->loading;
	tmp.code_hash = pend->code_hash;
	tmp.fetches_seen = pend->fetches_seen;
	tmp.gen = ++us->gen;
	memset(pend, 0, sizeof(*pend));
	p = add_proc(us, &tmp);
	p->last_use = ++us->tick;
}

static bool reader_answered(const struct usyms *us, pid_t pid, uint32_t key)
{
	int i;

	/*
	 * It answered a later notice (the key is the low half of the notice's clock: compared
	 * only while that clock has not gone round since): it read this one before, or never got
	 * it. The answers below are a ring: a reader far ahead has none of this one left.
	 */
	if (us->reader_last_ns && ls_now_ns() - us->reader_last_ns < USYMS_READER_WAIT_NS &&
	    (int32_t)(us->reader_last_key - key) > 0) {
		return true;
	}

	for (i = 0; i < USYMS_ANSWERED; i++) {
		if (us->reader_done[i].pid == pid && us->reader_done[i].key == key) {
			return true;
		}
	}
	for (i = 0; i < USYMS_PENDING; i++) {
		if (us->pending[i].dwfl && us->pending[i].pid == pid && us->pending[i].key == key) {
			return true;
		}
	}
	return false;
}

/*
 * With the cache's lock held: while the maps reader runs, let it answer @pid's notice @key (it
 * got the same one), up to USYMS_READER_WAIT_NS; the lock is free meanwhile.
 */
static void wait_for_reader(struct usyms *us, pid_t pid, uint32_t key)
{
	struct timespec deadline;
	uint64_t end;

	if (!key || !us->reader_on || us->reader_behind) {
		return;
	}
	end = ls_now_ns() + USYMS_READER_WAIT_NS;
	deadline.tv_sec = (time_t)(end / 1000000000ULL);
	deadline.tv_nsec = (long)(end % 1000000000ULL);
	while (us->reader_on && !reader_answered(us, pid, key)) {
		if (pthread_cond_timedwait(&us->reader_cond, &us->lock, &deadline) == ETIMEDOUT) {
			us->reader_behind = true;
			break;
		}
	}
}

/**
 * usyms_reader() - say whether a maps reader thread calls usyms_precapture() for each notice
 * @us: the cache
 * @on: true once it runs, false once it stopped
 *
 * While it runs, usyms_recapture() waits for its capture instead of reading the process itself.
 */
void usyms_reader(struct usyms *us, bool on)
{
	pthread_mutex_lock(&us->lock);
	us->reader_on = on;
	us->reader_behind = false;
	pthread_cond_broadcast(&us->reader_cond);
	pthread_mutex_unlock(&us->lock);
}

/**
 * usyms_recapture() - read the mappings of a process again now, or capture it the first time
 * @us: the cache
 * @pid: a process id (thread group id)
 * @key: the key usyms_precapture() was given for the same notice, or 0
 *
 * A capture taken while the process was still loading (an outlier decoded right after its exec)
 * lacks the libraries the loader maps next, and a process that exits soon after cannot be read
 * again on the miss: call this when the process is known to be running its own code. Files
 * already open are shared, not opened again. When the maps reader already captured @pid for
 * @key, that capture is taken instead: it was read when the notice was written, the process
 * alive, whatever this thread was doing meanwhile.
 *
 * Return: 0, or the -errno of usyms_capture() when @pid was not cached and cannot be captured.
 */
int usyms_recapture(struct usyms *us, pid_t pid, uint32_t key)
{
	struct usyms_proc *p;
	int err = 0, i;

	pthread_mutex_lock(&us->lock);
	wait_for_reader(us, pid, key);
	for (i = 0; key && i < USYMS_PENDING; i++) {
		if (us->pending[i].dwfl && us->pending[i].pid == pid && us->pending[i].key == key) {
			adopt(us, &us->pending[i]);
			goto out;
		}
	}
	if (key) {
		us->answered[us->answered_next].pid = pid;
		us->answered[us->answered_next].key = key;
		us->answered_next = (us->answered_next + 1) % USYMS_ANSWERED;
	}
	p = find_proc(us, pid);
	if (p) {
		usyms_refresh(us, p, true);
	} else {
		usyms_get_proc(us, pid, &err);
	}
out:
	pthread_mutex_unlock(&us->lock);
	return err;
}

/**
 * usyms_precapture() - read the mappings of a process now, for a usyms_recapture() to come
 * @us: the cache
 * @pid: a process id (thread group id)
 * @key: names the notice both calls answer (non-zero)
 *
 * For the maps reader, a thread that only reads the mappings of processes as they are noticed,
 * while the thread that decodes their outliers may be busy elsewhere: a process that exits
 * before that thread gets to its notice was captured here. The capture is not used until a
 * usyms_recapture() with the same @pid and @key takes it over, in the order of the outliers:
 * those of an earlier image of the process keep their capture until its exec is told.
 *
 * Return: 0, or the -errno of usyms_capture().
 */
int usyms_precapture(struct usyms *us, pid_t pid, uint32_t key)
{
	struct usyms_maps *m;
	int err;

	if (pid <= 0 || !key) {
		return -ESRCH;
	}
	m = usyms_maps_read(pid);
	err = usyms_precapture_maps(us, pid, key, m, true, NULL);
	usyms_maps_free(m);
	return err;
}

/**
 * usyms_precapture_maps() - usyms_precapture() with the mappings read at the notice
 * @us: the cache
 * @pid: a process id (thread group id)
 * @key: names the notice both calls answer (non-zero)
 * @m: usyms_maps_read() of @pid, at the notice; NULL: read now
 * @wait: wait for the cache's lock, else return -EBUSY while another thread holds it
 * @loading: set to how many captures of @pid in a row found ld.so at work (usyms_loading()),
 *	counting this one, or 0; or NULL
 *
 * The process is captured as it is when it still lives, else from @m: its files by path, no
 * vDSO. So the maps reader keeps reading the processes it is told of (usyms_maps_read()) while
 * the main loop holds the lock, and files their captures once it can.
 *
 * Return: 0, -EBUSY (only without @wait; nothing done), or the -errno of usyms_capture().
 */
int usyms_precapture_maps(struct usyms *us, pid_t pid, uint32_t key, const struct usyms_maps *m,
			  bool wait, unsigned int *loading)
{
	struct usyms_pending pend = { .pid = pid, .key = key }, *slot = NULL, *e;
	struct usyms_proc *p, *same;
	unsigned long long start_time;
	const char *text = NULL;
	uint64_t now;
	int err = 0, i;

	if (loading) {
		*loading = 0;
	}
	if (pid <= 0 || !key) {
		return -ESRCH;
	}
	if (!wait && pthread_mutex_trylock(&us->lock)) {
		return -EBUSY;
	}
	if (wait) {
		pthread_mutex_lock(&us->lock);
	}
	for (i = 0; i < USYMS_ANSWERED; i++) {
		if (us->answered[i].pid == pid && us->answered[i].key == key) {
			/* The main loop got there first (this thread was not scheduled): done. */
			goto out;
		}
	}
	err = m && m->pid == pid ? m->err : usyms_live_start_time(pid, &pend.start_time);
	if (err) {
		goto out;
	}
	if (m && m->pid == pid) {
		pend.start_time = m->start_time;
		text = m->text;
	}
	if (!text || (!usyms_live_start_time(pid, &start_time) && start_time == pend.start_time)) {
		/* Alive: read it as it is now (the vDSO, the inodes it maps). */
		text = NULL;
		pend.read_ns = ls_now_ns();
		pend.code_hash = proc_code_hash(pid);
	} else {
		pend.read_ns = m->read_ns;
		pend.code_hash = proc_maps_code_hash(text, m->len);
	}
	if (us->own_hash && pend.code_hash == us->own_hash) {
		err = -ECHILD;
		goto out;
	}
	same = same_code(us, pend.code_hash);
	pend.fetches_seen = us->fetch ? dbgfetch_done(us->fetch) : 0;
	if (same) {
		pend.dwfl = same->dwfl;
	} else {
		p = find_proc(us, pid);
		err = usyms_report(us, pid, text, p ? p->dwfl : NULL, &pend.dwfl, &pend.loading);
		if ((err == -ESRCH || err == -ENODATA) && !text && m && m->pid == pid && m->text) {
			/* It exited while read (or is past its mm, in exit). */
			pend.read_ns = m->read_ns;
			pend.code_hash = proc_maps_code_hash(m->text, m->len);
			err = usyms_report(us, pid, m->text, p ? p->dwfl : NULL, &pend.dwfl,
					   &pend.loading);
		}
		if (err) {
			goto out;
		}
	}
	now = ls_now_ns();
	pend.reported_ns = now;
	for (i = 0; i < USYMS_PENDING; i++) {
		e = &us->pending[i];
		if (e->dwfl && now - e->reported_ns > USYMS_PENDING_NS) {
			drop_pending(us, e);
		}
		/* The same notice's, read again (ld.so was at work), else a free slot, else the oldest. */
		if (e->dwfl && e->pid == pid && e->key == key) {
			slot = e;
			break;
		}
		if (!slot || (slot->dwfl && (!e->dwfl || e->reported_ns < slot->reported_ns))) {
			slot = e;
		}
	}
	if (slot->dwfl) {
		drop_pending(us, slot);
	}
	*slot = pend;
	if (loading && pend.loading) {
		/* In a row: those of it not taken over yet, and the one taken over last. */
		p = find_proc(us, pid);
		*loading = 1 + (p ? p->loading_captures : 0);
		for (i = 0; i < USYMS_PENDING; i++) {
			e = &us->pending[i];
			*loading += e != slot && e->dwfl && e->pid == pid && e->loading;
		}
	}
out:
	us->reader_done[us->reader_done_next].pid = pid;
	us->reader_done[us->reader_done_next].key = key;
	us->reader_done_next = (us->reader_done_next + 1) % USYMS_ANSWERED;
	now = ls_now_ns();
	if (now - us->reader_last_ns >= USYMS_READER_WAIT_NS ||
	    (int32_t)(key - us->reader_last_key) > 0) {
		us->reader_last_key = key;
	}
	us->reader_last_ns = now;
	us->reader_behind = false;
	pthread_cond_broadcast(&us->reader_cond);
	pthread_mutex_unlock(&us->lock);
	return err;
}

/**
 * usyms_loading() - how many captures of a process in a row found ld.so still at work
 * @us: the cache
 * @pid: a process id (thread group id)
 *
 * A process that waited in its loader (a library read from disk) is captured without the
 * libraries mapped after that wait: its stacks through them could not be symbolized once it
 * exits. Capture it again when it next waits (usyms_recapture()).
 *
 * Return: 0 when its last capture had every library its objects need, or it is not cached.
 */
unsigned int usyms_loading(struct usyms *us, pid_t pid)
{
	struct usyms_proc *p;
	unsigned int loading;

	pthread_mutex_lock(&us->lock);
	p = find_proc(us, pid);
	loading = p ? p->loading_captures : 0;
	pthread_mutex_unlock(&us->lock);
	return loading;
}

/**
 * usyms_forget() - drop a cached process, after it exited (its pid may be reused) or exec'd
 * @us: the cache
 * @pid: the process id; nothing happens when it is not cached
 */
void usyms_forget(struct usyms *us, pid_t pid)
{
	usyms_forget_image(us, pid, UINT64_MAX);
}

/**
 * usyms_forget_image() - drop the capture of a process that exec'd, unless it is of the new image
 * @us: the cache
 * @pid: the process id
 * @exec_ns: when it exec'd, CLOCK_MONOTONIC
 *
 * A capture read after the exec is of the new image: a notice read late (the process exec'd
 * between its first wait and the read) is captured as the process is now, and a process that
 * exits soon after could not be read again.
 */
void usyms_forget_image(struct usyms *us, pid_t pid, uint64_t exec_ns)
{
	struct usyms_proc *p;

	pthread_mutex_lock(&us->lock);
	p = find_proc(us, pid);
	if (p && p->read_ns <= exec_ns) {
		drop_proc(us, p);
	}
	pthread_mutex_unlock(&us->lock);
}

/*
 * Whether @addr lies in a loaded segment of @mod's ELF file. libdwfl makes one module of all the
 * mappings of a file from its first to its last, with whatever lies between: node maps its own
 * file again far above its image (V8's code range), and its JIT code between the two was
 * attributed to /usr/bin/node. A module whose file is not known is taken at its word.
 */
static bool in_image(Dwfl_Module *mod, uint64_t addr)
{
	GElf_Phdr mem, *ph;
	GElf_Addr bias = 0;
	bool ret = true;
	size_t n, i;
	Elf *elf;

	elf = dwfl_module_getelf(mod, &bias);
	if (!elf || elf_getphdrnum(elf, &n)) {
		goto out;
	}
	ret = false;
	for (i = 0; i < n && !ret; i++) {
		ph = gelf_getphdr(elf, (int)i, &mem);
		ret = ph && ph->p_type == PT_LOAD && addr - bias >= ph->p_vaddr &&
		      addr - bias - ph->p_vaddr < ph->p_memsz;
	}
out:
	return ret;
}

/* Whether @addr is code of @mod: an ELF image's, or a module whose file could not be read. */
bool usyms_holds_code(Dwfl_Module *mod, uint64_t addr)
{
	void **userdata = NULL;

	if (!mod) {
		return false;
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	return !(userdata && *userdata == &usyms_data_file_mark) && in_image(mod, addr);
}

/*
 * An address in no object (anonymous memory): JIT code, named by the process's perf map if it
 * writes one. Not memoized: the JIT frees code and compiles other code at the same place.
 */
static void jit_lookup(struct usyms *us, struct usyms_proc *p, uint64_t addr, struct usym *out)
{
	const char *name;
	uint64_t off = 0;

	if (!p->jit) {
		return;
	}
	name = perfmap_lookup(p->jit, addr, &off);
	if (!name) {
		return;
	}
	out->symbol = usyms_intern(&us->names, name);
	out->module = usyms_intern(&us->names, perfmap_module(p->jit));
	out->offset = out->symbol ? off : 0;
}

/**
 * usyms_lookup() - symbolize a user-space address of a process
 * @us: the cache
 * @pid: the process id (thread group id)
 * @addr: the address, unadjusted: pass a return address minus 1 to get the calling function
 * @out: the result; every field is set on every return
 *
 * Captures @pid first if it is not cached. An address outside every captured object makes the
 * mappings of a live process be read again (at most every 100 ms) to find objects mapped since;
 * one still in none (anonymous memory: JIT code) is looked up in the process's perf map,
 * /tmp/perf-PID.map (perfmap.h), and its module is then "/tmp/perf-PID.map".
 * The strings are the cache's own and stay valid until usyms_free(), whatever is forgotten or
 * evicted meanwhile.
 *
 * Return: 0, also when only the module or nothing is known, or the -errno of usyms_capture()
 * when @pid is not cached and cannot be captured.
 */
int usyms_lookup(struct usyms *us, pid_t pid, uint64_t addr, struct usym *out)
{
	struct usyms_proc *p;
	Dwfl_Module *mod;
	struct memo *m;
	const char *name;
	GElf_Off off;
	GElf_Sym sym;
	int err;

	out->symbol = NULL;
	out->offset = 0;
	out->module = NULL;
	pthread_mutex_lock(&us->lock);
	p = usyms_get_proc(us, pid, &err);
	if (!p) {
		goto out;
	}
	if (p->debuginfo_pending && dbgfetch_done(us->fetch) != p->fetches_seen) {
		/* Fetched since this Dwfl looked for it: a new one looks again, sharing the files. */
		usyms_refresh(us, p, true);
	}
	m = memo_slot(us, p->gen, addr);
	if (m->gen == p->gen && m->addr == addr) {
		*out = m->sym;
		goto out;
	}
	usyms_tls_us = us;
	usyms_tls_proc = p;
	mod = dwfl_addrmodule(p->dwfl, addr);
	/* In no object, or in a data file the loader has unmapped since: maps changed since. */
	if (!usyms_holds_code(mod, addr)) {
		usyms_refresh(us, p, false);
		mod = dwfl_addrmodule(p->dwfl, addr);
	}
	/* Misses are not remembered: a later refresh may find the object, the JIT its name. */
	if (!usyms_holds_code(mod, addr)) {
		jit_lookup(us, p, addr, out);
		goto out;
	}
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* libdwfl calls it "[vdso: PID]"; /proc/PID/maps and everyone else say "[vdso]". */
	if (name && !strncmp(name, "[vdso", 5)) {
		out->module = "[vdso]";
	} else if (name) {
		out->module = usyms_intern(&us->names, name);
	}
	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if (name && name[0]) {
		out->symbol = usyms_intern(&us->names, name);
		out->offset = out->symbol ? off : 0;
	}
	if (!out->module) {
		goto out;
	}
	m = memo_slot(us, p->gen, addr);
	m->gen = p->gen;
	m->addr = addr;
	m->sym = *out;
out:
	usyms_tls_us = NULL;
	usyms_tls_proc = NULL;
	pthread_mutex_unlock(&us->lock);
	return err;
}

struct modules_ctx {
	usyms_module_fn fn;
	void *ctx;
};

static int each_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	struct modules_ctx *mc = arg;
	struct usyms_module m = { .path = name, .base = start };
	const unsigned char *bits = NULL;
	Dwarf_Addr end = start, vaddr;
	int len;

	(void)userdata;
	dwfl_module_info(mod, NULL, NULL, &end, NULL, NULL, NULL, NULL);
	m.size = end > start ? end - start : 0;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len > 0) {
		m.build_id = bits;
		m.build_id_len = (size_t)len;
	}
	mc->fn(&m, mc->ctx);
	return DWARF_CB_OK;
}

/**
 * usyms_modules - hand each object mapped in @pid (as captured) to @fn: what the trace needs to
 * symbolize the process's addresses later, elsewhere (latsnap:bin_info).
 *
 * Return: 0, or a negative errno when the process was never captured and cannot be now.
 */
int usyms_modules(struct usyms *us, pid_t pid, usyms_module_fn fn, void *ctx)
{
	struct modules_ctx mc = { .fn = fn, .ctx = ctx };
	struct usyms_proc *p;
	int err;

	pthread_mutex_lock(&us->lock);
	p = usyms_get_proc(us, pid, &err);
	if (p) {
		dwfl_getmodules(p->dwfl, each_module, &mc, 0);
	}
	pthread_mutex_unlock(&us->lock);
	return err;
}
