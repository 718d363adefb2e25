/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usyms-int.h - the symbolizer's state, shared by the files that each do one of its jobs:
 * usyms.c (the processes' captures: cache, maps reader's hand-over, lookups), usyms-report.c (a
 * process's objects opened into a Dwfl), usyms-maps.c (/proc/PID/maps read and hashed),
 * usyms-unwind.c (remote unwinding of a stack copy), usyms-source.c (file and line). Not for
 * anyone outside tracker/usyms*.c.
 */
#ifndef LATSNAP_USYMS_INT_H
#define LATSNAP_USYMS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <elfutils/libdwfl.h>
#include <libelf.h>

#include "tracker/usyms.h"

/*
 * A lookup that finds no module re-reads the mappings of a live process (a library may have been
 * dlopen()ed since the capture), but at most this often, so that addresses in JIT code or other
 * anonymous memory cannot make every lookup re-read /proc/PID/maps.
 */
#define USYMS_REFRESH_NS (100 * 1000 * 1000ULL)

/*
 * Results of recent lookups. dwfl_module_addrinfo() scans the whole symbol table (about 200 us
 * in libc with its debug symbols installed), and the stacks of one program repeat the same
 * return addresses over and over.
 */
#define USYMS_MEMO_BITS 12
#define USYMS_MEMO_SIZE (1U << USYMS_MEMO_BITS)

struct usyms_proc {
	Dwfl *dwfl; /* NULL: a free slot */
	pid_t pid;
	uint64_t gen; /* names this Dwfl in the memo; never reused */
	/* /proc/PID/stat starttime: a refresh must not read the maps of a new owner of the pid. */
	unsigned long long start_time;
	uint64_t last_use; /* LRU stamp */
	uint64_t reported_ns; /* CLOCK_MONOTONIC of the last read of the maps, done or not */
	uint64_t read_ns; /* CLOCK_MONOTONIC when the read of the Dwfl's maps began */
	bool final; /* exited or replaced: what was captured is all there will be */
	/* Captures in a row that found ld.so still mapping libraries (loader_busy()). */
	unsigned int loading_captures;
	/* Its executable file mappings when captured (proc_code_hash()); 0: none read. */
	uint64_t code_hash;
	struct perfmap *jit; /* its /tmp/perf-PID.map, read once an address was in no object */
	/* A module's debug info was still being fetched (dbgfetch.h) when the Dwfl looked for it. */
	bool debuginfo_pending;
	uint64_t fetches_seen; /* dbgfetch_done() when the Dwfl was made */
};

struct memo {
	uint64_t gen; /* 0: empty */
	uint64_t addr;
	struct usym sym;
};

/*
 * Every string handed out is a copy kept here until usyms_free(), so that no eviction, forget or
 * refresh (which end a Dwfl and the symbol tables it maps) can leave a caller holding a dangling
 * pointer. Names repeat, so they are kept once each.
 */
struct strset {
	char **slots; /* open addressing, linear probing */
	size_t cap; /* a power of 2, or 0 */
	size_t nr;
};

/*
 * The files mapped for earlier captures, by inode: the processes of one program (a server's
 * workers, a backend forked per connection) share their objects' Elf instead of mapping each file
 * again. Mapping and unmapping them per process cost PostgreSQL about 3 ms a connection: each
 * munmap of latsnap's shot down the TLB of the CPU the server ran on (an IPI).
 */
#define USYMS_ELF_CACHE 256

struct elf_entry {
	dev_t dev; /* 0: a free slot */
	ino_t ino;
	off_t size;
	struct timespec mtime; /* a file rewritten in place is another one */
	Elf *elf; /* the cache's reference */
	uint64_t last_use;
};

/*
 * usyms_unwind() reads the target's stack a page at a time, not a word at a time as libdwfl asks
 * for it: the words of consecutive frames mostly share a page, and one pread of /proc/PID/mem
 * costs about as much for 4 KiB as for 8 bytes. Valid for one unwind only: the target runs on.
 */
#define UNWIND_PAGE 4096
#define UNWIND_PAGES 4

struct unwind_page {
	uint64_t addr; /* where the page starts in the target */
	bool loaded;
	uint8_t data[UNWIND_PAGE];
};

/*
 * The usyms_unwind() in progress. A Dwfl takes its thread callbacks and their argument once
 * (dwfl_attach_state()); that argument is the struct usyms, and this is what it points to during
 * a call (NULL otherwise), so each call hands the callbacks its own thread, registers and output.
 */
struct unwind_call {
	Dwfl *dwfl;
	pid_t tid;
	int mem_fd; /* /proc/PID/task/TID/mem */
	const uint64_t *regs;
	uint64_t *ips;
	unsigned int max;
	unsigned int nr;
	uint64_t last_sp; /* the stack pointer of ips[nr - 1] */
	bool missed; /* a pc lies in no captured object */
	unsigned int next_page; /* the page to load over next */
};

/*
 * Captures the maps reader took (usyms_precapture()) that the main loop has not taken over yet
 * (usyms_recapture() with the same key). Enough for a burst of new processes between two polls;
 * one never taken over (its notice lost, or read first by the main loop) goes after
 * USYMS_PENDING_NS, or to make room. Long: a snapshot under heavy load held the main loop 7-13 s,
 * and captures of 5 s went before it could take them over (90-unwind k)'s rare miss).
 */
#define USYMS_PENDING 64
#define USYMS_PENDING_NS (60 * 1000 * 1000 * 1000ULL)

struct usyms_pending {
	Dwfl *dwfl; /* NULL: a free slot; maybe a cached process's (same_code()) */
	pid_t pid;
	uint32_t key;
	unsigned long long start_time;
	uint64_t reported_ns;
	uint64_t read_ns;
	uint64_t code_hash;
	uint64_t fetches_seen;
	bool loading;
};

/* Notices the main loop answered itself, before the maps reader: it need not read those again. */
#define USYMS_ANSWERED 64

/*
 * How long the main loop waits for the maps reader's capture of a notice before it reads the
 * process itself. The reader answers each notice it gets within milliseconds, or as soon as a
 * CPU is free for it (300 ms behind real-time spinners here); reading in its place is what
 * cost the capture: the main loop held the cache's lock through its own read, starved by the
 * load, and the reader waited on it until the process was gone. Once the wait ran out, the
 * reader is behind (a notice its ring had no room for): no wait until it answers again.
 */
#define USYMS_READER_WAIT_NS (1000 * 1000 * 1000ULL)

struct usyms_answered {
	pid_t pid;
	uint32_t key;
};

struct usyms {
	/* The maps reader's thread and the main loop's: every entry point holds it. */
	pthread_mutex_t lock;
	struct usyms_proc procs[USYMS_MAX_PROCS];
	struct usyms_pending pending[USYMS_PENDING];
	struct usyms_answered answered[USYMS_ANSWERED]; /* a ring */
	unsigned int answered_next;
	/* The maps reader: whether it runs, the notices it answered (a ring), and its signal. */
	bool reader_on;
	bool reader_behind;
	struct usyms_answered reader_done[USYMS_ANSWERED];
	unsigned int reader_done_next;
	uint32_t reader_last_key; /* the latest notice it answered, */
	uint64_t reader_last_ns; /* when */
	pthread_cond_t reader_cond; /* on CLOCK_MONOTONIC */
	uint64_t own_hash; /* this process's proc_code_hash(), when usyms_skip_own() asked for it */
	struct elf_entry elves[USYMS_ELF_CACHE];
	uint64_t tick;
	uint64_t gen;
	struct strset names;
	struct memo memo[USYMS_MEMO_SIZE];
	struct unwind_call *call;
	struct unwind_page pages[UNWIND_PAGES];
	struct dbgfetch *fetch; /* NULL without DEBUGINFOD_URLS */
};

/* A process's mappings, read at its notice without the cache's lock (usyms_maps_read()). */
struct usyms_maps {
	pid_t pid;
	int err; /* of usyms_live_start_time(): the rest is unset unless 0 */
	unsigned long long start_time;
	uint64_t read_ns;
	char *text; /* its /proc/PID/maps; NULL when it could not be read */
	size_t len;
};

/* usyms.c */
const char *usyms_intern(struct strset *set, const char *s);
struct usyms_proc *usyms_get_proc(struct usyms *us, pid_t pid, int *err);
void usyms_refresh(struct usyms *us, struct usyms_proc *p, bool force);
bool usyms_holds_code(Dwfl_Module *mod, uint64_t addr);

/* usyms-report.c */
extern char usyms_data_file_mark;
extern pthread_once_t usyms_debuginfo_once;
extern __thread struct usyms *usyms_tls_us;
extern __thread struct usyms_proc *usyms_tls_proc;
void usyms_init_debuginfo_path(void);
int usyms_report(struct usyms *us, pid_t pid, const char *maps, Dwfl *old, Dwfl **dwflp,
		 bool *loading);

/* usyms-maps.c */
int usyms_live_start_time(pid_t pid, unsigned long long *start_time);

#endif /* LATSNAP_USYMS_INT_H */
