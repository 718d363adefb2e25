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
#include "lib/util.h"

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
	/* Its executable file mappings when captured (code_hash()); 0: none read. */
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
 * USYMS_PENDING_NS, or to make room.
 */
#define USYMS_PENDING 64
#define USYMS_PENDING_NS (5 * 1000 * 1000 * 1000ULL)

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
	uint64_t own_hash; /* this process's code_hash(), when usyms_skip_own() asked for it */
	struct elf_entry elves[USYMS_ELF_CACHE];
	uint64_t tick;
	uint64_t gen;
	struct strset names;
	struct memo memo[USYMS_MEMO_SIZE];
	struct unwind_call *call;
	struct unwind_page pages[UNWIND_PAGES];
	struct dbgfetch *fetch; /* NULL without DEBUGINFOD_URLS */
};

struct vma {
	uint64_t start, end;
};

/* What usyms_find_elf() needs while a report opens the files of a process. */
struct report_ctx {
	struct usyms *us;
	pid_t pid;
	Dwfl *old; /* an earlier capture of the process, whose files can be shared; or NULL */
	struct vma *vmas; /* the names in /proc/PID/map_files, sorted by start */
	size_t nr_vmas;
	bool vmas_loaded;
	bool data_file; /* the file usyms_find_elf() opened last is no ELF object */
};

/*
 * A module's userdata after its capture: its file is a data file (ld.so.cache, locale-archive,
 * fonts), which holds no code. Not a module of any address, then: the loader unmaps its cache
 * before main(), and a capture taken while the process loaded still has it where JIT code or
 * other anonymous memory may lie by the time of a stack.
 */
static char data_file_mark;

static const char deleted_suffix[] = " (deleted)";

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
static const char *intern(struct strset *set, const char *s)
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

static int cmp_vma(const void *a, const void *b)
{
	const struct vma *x = a, *y = b;

	if (x->start != y->start) {
		return x->start < y->start ? -1 : 1;
	}
	return 0;
}

/*
 * Fills ctx->vmas once from /proc/PID/maps, whose ranges are the names in /proc/PID/map_files:
 * one read, where listing map_files had the kernel build a dentry per mapping (a third of a
 * capture's cost for a process with a hundred mappings). On failure leaves it empty, so the
 * callers fall back to the path.
 */
static void load_vmas(struct report_ctx *ctx)
{
	size_t cap = 0, len = 0;
	char path[64], *line = NULL;
	FILE *maps;

	ctx->vmas_loaded = true;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)ctx->pid);
	maps = fopen(path, "re");
	if (!maps) {
		return;
	}
	while (getline(&line, &len, maps) > 0) {
		struct vma v;
		char *end;

		v.start = strtoull(line, &end, 16);
		if (*end != '-') {
			continue;
		}
		v.end = strtoull(end + 1, &end, 16);
		if (*end != ' ') {
			continue;
		}
		if (ctx->nr_vmas == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct vma *n = realloc(ctx->vmas, ncap * sizeof(*n));

			if (!n) {
				break;
			}
			ctx->vmas = n;
			cap = ncap;
		}
		ctx->vmas[ctx->nr_vmas++] = v;
	}
	free(line);
	fclose(maps);
	/* Sorted already; none when the process is exiting: no array. */
	ls_sort(ctx->vmas, ctx->nr_vmas, sizeof(*ctx->vmas), cmp_vma);
}

/*
 * The path in /proc/PID/map_files of the object mapped at @start, into @path, and its stat:
 * that is the very inode the process mapped, even when the path was deleted or replaced since (a
 * package upgrade) or names another file in our mount namespace (a container). Needs
 * CAP_SYS_ADMIN (or, since Linux 5.9, CAP_CHECKPOINT_RESTORE); returns -1 without it, or when
 * it is no regular file.
 */
static int stat_mapped_file(struct report_ctx *ctx, uint64_t start, char *path, size_t size,
			    struct stat *st)
{
	struct vma key = { .start = start };
	const struct vma *v;

	if (!ctx->vmas_loaded) {
		load_vmas(ctx);
	}
	v = ctx->nr_vmas ? bsearch(&key, ctx->vmas, ctx->nr_vmas, sizeof(*ctx->vmas), cmp_vma) :
			   NULL;
	if (!v) {
		return -1;
	}
	snprintf(path, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)ctx->pid, v->start,
		 v->end);
	/* Device mappings can block in open() or read(); like libdwfl, only take regular files. */
	if (stat(path, st) || !S_ISREG(st->st_mode)) {
		return -1;
	}
	return 0;
}

static bool same_file(const struct elf_entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* A new reference to the Elf of the file @st describes, if a capture mapped it already. */
static Elf *cached_elf(struct usyms *us, const struct stat *st)
{
	struct elf_entry *e;
	int i;

	for (i = 0; i < USYMS_ELF_CACHE; i++) {
		e = &us->elves[i];
		if (e->elf && same_file(e, st)) {
			e->last_use = ++us->tick;
			return elf_begin(-1, ELF_C_READ_MMAP, e->elf);
		}
	}
	return NULL;
}

/* Keep a reference to @elf, the file @st describes, for the next process that maps it. */
static void cache_elf(struct usyms *us, const struct stat *st, Elf *elf)
{
	struct elf_entry *victim = &us->elves[0];
	int i;

	for (i = 0; i < USYMS_ELF_CACHE; i++) {
		if (!us->elves[i].elf) {
			victim = &us->elves[i];
			break;
		}
		if (us->elves[i].last_use < victim->last_use) {
			victim = &us->elves[i];
		}
	}
	if (victim->elf) {
		elf_end(victim->elf);
	}
	victim->dev = st->st_dev;
	victim->ino = st->st_ino;
	victim->size = st->st_size;
	victim->mtime = st->st_mtim;
	victim->elf = elf_begin(-1, ELF_C_READ_MMAP, elf);
	victim->last_use = ++us->tick;
}

/*
 * Turns an open ELF file into an Elf that needs no descriptor: libdwfl would keep one open per
 * module of every cached process, which soon exhausts RLIMIT_NOFILE. The whole file is mapped, so
 * the Elf keeps the inode and never reads through a path again. Closes @fd.
 */
static Elf *elf_from_fd(int fd, bool *data_file)
{
	char magic[SELFMAG];
	Elf *elf = NULL;

	/* Processes map data files too (locale-archive, fonts): do not map those again. */
	if (pread(fd, magic, SELFMAG, 0) != SELFMAG || memcmp(magic, ELFMAG, SELFMAG)) {
		*data_file = true;
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && (elf_kind(elf) != ELF_K_ELF || elf_cntl(elf, ELF_C_FDREAD))) {
		elf_end(elf);
		elf = NULL;
	}
out:
	close(fd);
	return elf;
}

/*
 * A refresh finds most objects where the previous capture saw them: share that Elf (libelf
 * counts references) instead of opening and mapping the file again.
 */
static Elf *reuse_elf(struct report_ctx *ctx, const char *name, Dwarf_Addr base, char **file_name)
{
	Dwfl_Module *mod = ctx->old ? dwfl_addrmodule(ctx->old, base) : NULL;
	const char *oname, *mainfile = NULL;
	Dwarf_Addr start = 0, bias;
	Elf *elf;

	if (!mod) {
		return NULL;
	}
	oname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &mainfile, NULL);
	if (start != base || !oname || strcmp(oname, name)) {
		return NULL;
	}
	elf = dwfl_module_getelf(mod, &bias);
	elf = elf ? elf_begin(-1, ELF_C_READ_MMAP, elf) : NULL;
	if (elf && mainfile) {
		*file_name = strdup(mainfile);
	}
	return elf;
}

/*
 * Dwfl_Callbacks.find_elf: the Elf of the previous capture, else the mapped inode, else what
 * dwfl_linux_proc_find_elf() does (the path as this process sees it; the vDSO from
 * /proc/PID/mem). *userdata is the report_ctx while a capture opens the files, NULL otherwise.
 */
static int usyms_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			  char **file_name, Elf **elfp)
{
	/* libdwfl looks no module's file up twice: a marked one is never asked for again. */
	struct report_ctx *ctx = *userdata == &data_file_mark ? NULL : *userdata;
	bool mapped = false, data_file = false;
	size_t len = strlen(name);
	char path[96];
	struct stat st;
	int fd = -1;

	if (ctx) {
		*elfp = reuse_elf(ctx, name, base, file_name);
		if (*elfp) {
			goto out;
		}
	}
	/* A file another capture opened is known by its stat: not opened again. */
	if (ctx && name[0] == '/' && !stat_mapped_file(ctx, base, path, sizeof(path), &st)) {
		*elfp = cached_elf(ctx->us, &st);
		if (!*elfp) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			mapped = fd >= 0;
		}
	}
	if (fd >= 0 || *elfp) {
		/* The name serves the search for separate debug info, which works by path. */
		if (len > sizeof(deleted_suffix) - 1 &&
		    !strcmp(name + len - (sizeof(deleted_suffix) - 1), deleted_suffix)) {
			len -= sizeof(deleted_suffix) - 1;
		}
		*file_name = strndup(name, len);
	} else {
		fd = dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	}
	if (fd >= 0) {
		*elfp = elf_from_fd(fd, &data_file);
		if (ctx) {
			ctx->data_file = data_file;
		}
		if (mapped && *elfp) {
			cache_elf(ctx->us, &st, *elfp);
		}
	}
	if (!*elfp) {
		/* Else libdwfl would try to open the name itself. */
		free(*file_name);
		*file_name = NULL;
	}
out:
	/* With *elfp set and no descriptor, libdwfl takes the Elf as it is (as for the vDSO). */
	return -1;
}

/*
 * The directories whose .build-id/NN/REST.debug libdwfl opens: LATSNAP_DEBUG_DIR's (a list, as
 * PATH is), then the system's. Set once, by the first usyms_new().
 */
static char *debuginfo_path;
static pthread_once_t debuginfo_once = PTHREAD_ONCE_INIT;

static void init_debuginfo_path(void)
{
	const char *env = getenv("LATSNAP_DEBUG_DIR");
	char *copy = env ? strdup(env) : NULL, *dir, *save = NULL;
	size_t len = sizeof("/usr/lib/debug") + (env ? strlen(env) + 1 : 0);

	debuginfo_path = calloc(1, len);
	if (!debuginfo_path) {
		goto out;
	}
	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		/* libdwfl takes only absolute directories; a "-" or "+" first would be a flag. */
		if (dir[0] == '/') {
			strcat(strcat(debuginfo_path, dir), ":");
		}
	}
	strcat(debuginfo_path, "/usr/lib/debug");
out:
	free(copy);
}

/*
 * The usyms and the process whose Dwfl is at work in this thread (a lookup or an unwind), for
 * usyms_find_debuginfo(), which libdwfl calls lazily, with nothing of ours.
 */
static __thread struct usyms *tls_us;
static __thread struct usyms_proc *tls_proc;

/*
 * Dwfl_Callbacks.find_debuginfo: the separate debug file of the module's build-id, in the
 * debug directories, else from a debuginfod server (dbgfetch.h). Not by .gnu_debuglink: that
 * names a file in the traced program's own directory, which libdwfl opens as it is (a FIFO
 * there would block record for good).
 */
static int usyms_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int fd, len;

	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !tls_us || !tls_us->fetch) {
		goto out;
	}
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0) {
		goto out;
	}
	fd = dbgfetch_get(tls_us->fetch, bits, (size_t)len, debuginfo_file_name);
	if (fd == -EAGAIN && tls_proc) {
		tls_proc->debuginfo_pending = true;
	}
	fd = fd >= 0 ? fd : -1;
out:
	return fd;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = usyms_find_elf,
	.find_debuginfo = usyms_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};


/*
 * Reads the state and start time of @pid. Returns 0, -ESRCH when it is gone or a zombie (it has
 * no mappings left to read), or another -errno.
 */
static int proc_stat(pid_t pid, unsigned long long *start_time)
{
	/* Fields 3 (state) and 22 (starttime), after the comm. */
	static const char stat_fmt[] =
		" %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu";
	char path[32], buf[1024], state;
	const char *p;
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return errno == ENOENT ? -ESRCH : -errno;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		err = errno == ESRCH ? -ESRCH : -errno;
		goto out;
	}
	buf[n] = '\0';
	/* comm may hold spaces and parentheses; the fields resume after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, stat_fmt, &state, start_time) != 2) {
		err = -EIO;
		goto out;
	}
	if (state == 'Z' || state == 'X') {
		err = -ESRCH;
	}
out:
	close(fd);
	return err;
}

static int open_module_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			   void *arg)
{
	struct report_ctx *ctx = arg;
	Dwarf_Addr bias;
	Elf *elf;

	(void)name;
	(void)start;
	*userdata = arg;
	ctx->data_file = false;
	/*
	 * Open now, while /proc/PID/ still has the process: a failure only costs this module its
	 * symbols, and a module that already has its ELF is not looked for again.
	 */
	elf = dwfl_module_getelf(mod, &bias);
	*userdata = !elf && ctx->data_file ? &data_file_mark : NULL;
	return DWARF_CB_OK;
}

static int count_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	(void)mod;
	(void)userdata;
	(void)name;
	(void)start;
	(*(int *)arg)++;
	return DWARF_CB_OK;
}

/* The names objects of a process are known by to the loader: file names and sonames. */
struct loader_names {
	const char **names;
	size_t nr, max;
	bool missing; /* a DT_NEEDED named none of them */
};

/* Calls @fn with each DT_NEEDED (@tag) or DT_SONAME string of @elf until it returns true. */
static bool each_dyn_string(Elf *elf, int64_t tag, bool (*fn)(const char *, void *), void *arg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Dyn dyn;
	Elf_Data *data;
	const char *str;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC || !shdr.sh_entsize) {
			continue;
		}
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL) {
				break;
			}
			if (dyn.d_tag != tag) {
				continue;
			}
			str = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
			if (str && fn(str, arg)) {
				return true;
			}
		}
	}
	return false;
}

static bool add_name(const char *name, void *arg)
{
	struct loader_names *ln = arg;
	const char **grown;

	if (ln->nr == ln->max) {
		ln->max = ln->max ? 2 * ln->max : 64;
		grown = realloc(ln->names, ln->max * sizeof(*grown));
		if (!grown) {
			return true;
		}
		ln->names = grown;
	}
	ln->names[ln->nr++] = name;
	return false;
}

static int collect_names(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			 void *arg)
{
	const char *slash = strrchr(name, '/');
	Dwarf_Addr bias;
	Elf *elf;

	(void)userdata;
	(void)start;
	add_name(slash ? slash + 1 : name, arg);
	elf = dwfl_module_getelf(mod, &bias);
	if (elf) {
		each_dyn_string(elf, DT_SONAME, add_name, arg);
	}
	return DWARF_CB_OK;
}

static bool needed_missing(const char *needed, void *arg)
{
	struct loader_names *ln = arg;
	size_t i;

	for (i = 0; i < ln->nr; i++) {
		if (!strcmp(ln->names[i], needed)) {
			return false;
		}
	}
	ln->missing = true;
	return true;
}

static int check_needed(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	struct loader_names *ln = arg;
	Dwarf_Addr bias;
	Elf *elf;

	(void)userdata;
	(void)name;
	(void)start;
	elf = dwfl_module_getelf(mod, &bias);
	if (elf && each_dyn_string(elf, DT_NEEDED, needed_missing, ln)) {
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/*
 * Whether ld.so was still mapping libraries when @dwfl was reported: an object it mapped needs
 * one that is not mapped yet. The process waited in the loader (a library read from disk) before
 * it ran its own code; the libc its stacks go through may come next.
 */
static bool loader_busy(Dwfl *dwfl)
{
	struct loader_names ln = { 0 };

	dwfl_getmodules(dwfl, collect_names, &ln, 0);
	dwfl_getmodules(dwfl, check_needed, &ln, 0);
	free(ln.names);
	return ln.missing;
}

/*
 * Reads the mappings of @pid into a new Dwfl and opens the file of each module, sharing those
 * @old (an earlier Dwfl of the process, or NULL) has. With @maps (its /proc/PID/maps, read
 * earlier) the mappings are those, for a process gone since: files are opened by path, and the
 * vDSO, which only the live process gives, is left out. Returns 0 or -errno; *@dwflp is the Dwfl
 * or NULL, *@loading whether ld.so was still at work (loader_busy()).
 */
static int report(struct usyms *us, pid_t pid, const char *maps, Dwfl *old, Dwfl **dwflp,
		  bool *loading)
{
	struct report_ctx ctx = { .us = us, .pid = pid, .old = old };
	Dwfl *dwfl = dwfl_begin(&callbacks);
	unsigned long long start_time;
	int err = 0, nr_modules = 0;
	FILE *f;

	if (!dwfl) {
		err = -ENOMEM;
		goto out;
	}
	dwfl_report_begin(dwfl);
	if (!maps) {
		err = dwfl_linux_proc_report(dwfl, pid);
	} else if (maps[0]) {
		f = fmemopen((void *)maps, strlen(maps), "r");
		err = f ? dwfl_linux_proc_maps_report(dwfl, f) : errno;
		if (f) {
			fclose(f);
		}
	}
	/* Always end the report: it builds the address lookup table. */
	if (dwfl_report_end(dwfl, NULL, NULL) && !err) {
		err = -1;
	}
	if (err) {
		/* A positive errno from /proc; -1 when libdwfl could not add a module (memory). */
		err = err == ENOENT || err == ESRCH ? -ESRCH : err > 0 ? -err : -ENOMEM;
		goto out;
	}
	dwfl_getmodules(dwfl, open_module_elf, &ctx, 0);
	dwfl_getmodules(dwfl, count_module, &nr_modules, 0);
	*loading = loader_busy(dwfl);
out:
	/*
	 * A process that exits while its maps are read leaves an empty auxv (ENOEXEC) or empty maps:
	 * say it is gone rather than cache nothing.
	 */
	if ((err || !nr_modules) && proc_stat(pid, &start_time) == -ESRCH) {
		err = -ESRCH;
	} else if (!err && !nr_modules) {
		/*
		 * Alive, nothing mapped: in exec, between its new mm and the mappings of the image,
		 * or in exit, past its mm. A capture of nothing would hide the next one's objects.
		 */
		err = -ENODATA;
	}
	if (err) {
		dwfl_end(dwfl);
		dwfl = NULL;
	}
	free(ctx.vmas);
	*dwflp = dwfl;
	return err;
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

/* The whole of /proc/@pid/maps, NUL-terminated, *@len bytes (malloc'd); NULL when unreadable. */
static char *read_maps(pid_t pid, size_t *len)
{
	char path[64], *buf = NULL, *more;
	size_t cap = 0;
	ssize_t n;
	int fd;

	*len = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return NULL;
	}
	/* Read whole: each read() of the file walks the mappings again. */
	do {
		if (cap - *len < 4096) {
			cap = cap ? 2 * cap : 65536;
			more = realloc(buf, cap);
			if (!more) {
				free(buf);
				buf = NULL;
				*len = 0;
				break;
			}
			buf = more;
		}
		n = read(fd, buf + *len, cap - *len - 1);
		*len += n > 0 ? (size_t)n : 0;
	} while (n > 0);
	close(fd);
	if (buf) {
		buf[*len] = '\0';
	}
	return buf;
}

/*
 * The code a process runs, as a hash of the executable file mappings in @buf, its
 * /proc/PID/maps (addresses, offset, inode, path): two processes with the same hash have the same
 * objects at the same addresses, and one capture symbolizes both. A server's forked workers (a
 * PostgreSQL backend per connection) differ from their parent in data mappings only. 0 when the
 * maps could not be read or hold no code.
 */
static uint64_t maps_code_hash(const char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	const char *line, *eol, *f;
	size_t nr_code = 0;
	const unsigned char *c;
	int field;

	for (line = buf; line && line < buf + len; line = eol + 1) {
		eol = strchr(line, '\n');
		eol = eol ? eol : buf + len;
		/* start-end perms offset dev inode path: the 6th field, at its first byte. */
		f = line;
		for (field = 1; field < 6 && f < eol; field++) {
			f = memchr(f, ' ', (size_t)(eol - f));
			if (!f) {
				break;
			}
			while (f < eol && *f == ' ') {
				f++;
			}
			if (field == 1 && (eol - f < 3 || f[2] != 'x')) {
				f = NULL;
				break;
			}
		}
		if (!f || f >= eol || (*f != '/' && strncmp(f, "[vdso]", 6))) {
			continue;
		}
		for (c = (const unsigned char *)line; c < (const unsigned char *)eol; c++) {
			h = (h ^ *c) * 0x100000001b3ULL;
		}
		nr_code++;
	}
	return nr_code ? h : 0;
}

/* maps_code_hash() of @pid's mappings as they are now. */
static uint64_t code_hash(pid_t pid)
{
	size_t len;
	char *buf = read_maps(pid, &len);
	uint64_t h = maps_code_hash(buf, len);

	free(buf);
	return h;
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
static struct usyms_proc *get_proc(struct usyms *us, pid_t pid, int *err)
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
	*err = proc_stat(pid, &tmp.start_time);
	if (*err) {
		goto out;
	}
	tmp.read_ns = ls_now_ns();
	tmp.code_hash = code_hash(pid);
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
		*err = report(us, pid, NULL, NULL, &tmp.dwfl, &loading);
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
static void refresh(struct usyms *us, struct usyms_proc *p, bool force)
{
	unsigned long long start_time;
	uint64_t fetches, hash, read_ns;
	bool loading = false;
	Dwfl *dwfl, *old;
	int err;

	if (p->final || (!force && ls_now_ns() - p->reported_ns < USYMS_REFRESH_NS)) {
		return;
	}
	if (proc_stat(p->pid, &start_time) || start_time != p->start_time) {
		p->final = true;
		return;
	}
	fetches = us->fetch ? dbgfetch_done(us->fetch) : 0;
	read_ns = ls_now_ns();
	hash = code_hash(p->pid);
	err = report(us, p->pid, NULL, p->dwfl, &dwfl, &loading);
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

	pthread_once(&debuginfo_once, init_debuginfo_path);
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
	us->own_hash = code_hash(getpid());
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
	get_proc(us, pid, &err);
	pthread_mutex_unlock(&us->lock);
	return err;
}

/*
 * Takes over @pend, the maps reader's capture of a process, as that process's capture (as
 * refresh() or get_proc() would have made it then); @pend is free after.
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
		refresh(us, p, true);
	} else {
		get_proc(us, pid, &err);
	}
out:
	pthread_mutex_unlock(&us->lock);
	return err;
}

/* A process's mappings, read at its notice without the cache's lock (usyms_maps_read()). */
struct usyms_maps {
	pid_t pid;
	int err; /* of proc_stat(): the rest is unset unless 0 */
	unsigned long long start_time;
	uint64_t read_ns;
	char *text; /* its /proc/PID/maps; NULL when it could not be read */
	size_t len;
};

/**
 * usyms_maps_read() - read the mappings of a process now, without the cache
 * @pid: a process id (thread group id)
 *
 * The maps reader reads each process as it is noticed, whoever holds the cache's lock: the main
 * loop holds it through each symbolization, whose CPU time a load stretches (its thread has no
 * priority of its own), 50 to 300 ms behind a nice -15 spinner on each CPU. A process that lived
 * less was gone once the reader got the lock; its mappings, read here, still name its files.
 *
 * Return: what usyms_precapture_maps() takes, to free with usyms_maps_free(); NULL when out of
 * memory.
 */
struct usyms_maps *usyms_maps_read(pid_t pid)
{
	struct usyms_maps *m = calloc(1, sizeof(*m));

	if (!m) {
		return NULL;
	}
	m->pid = pid;
	m->err = pid > 0 ? proc_stat(pid, &m->start_time) : -ESRCH;
	if (!m->err) {
		m->read_ns = ls_now_ns();
		m->text = read_maps(pid, &m->len);
	}
	return m;
}

/**
 * usyms_maps_gone() - whether usyms_maps_read() found no process, or nothing mapped in it
 * @m: its return
 *
 * Return: true when @m names no code: the process exited, or is past its mm.
 */
bool usyms_maps_gone(const struct usyms_maps *m)
{
	return m->err || !m->text || !maps_code_hash(m->text, m->len);
}

/**
 * usyms_maps_free() - free what usyms_maps_read() returned
 * @m: its return, or NULL
 */
void usyms_maps_free(struct usyms_maps *m)
{
	if (m) {
		free(m->text);
		free(m);
	}
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
	err = m && m->pid == pid ? m->err : proc_stat(pid, &pend.start_time);
	if (err) {
		goto out;
	}
	if (m && m->pid == pid) {
		pend.start_time = m->start_time;
		text = m->text;
	}
	if (!text || (!proc_stat(pid, &start_time) && start_time == pend.start_time)) {
		/* Alive: read it as it is now (the vDSO, the inodes it maps). */
		text = NULL;
		pend.read_ns = ls_now_ns();
		pend.code_hash = code_hash(pid);
	} else {
		pend.read_ns = m->read_ns;
		pend.code_hash = maps_code_hash(text, m->len);
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
		err = report(us, pid, text, p ? p->dwfl : NULL, &pend.dwfl, &pend.loading);
		if ((err == -ESRCH || err == -ENODATA) && !text && m && m->pid == pid && m->text) {
			/* It exited while read (or is past its mm, in exit). */
			pend.read_ns = m->read_ns;
			pend.code_hash = maps_code_hash(m->text, m->len);
			err = report(us, pid, m->text, p ? p->dwfl : NULL, &pend.dwfl,
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
static bool holds_code(Dwfl_Module *mod, uint64_t addr)
{
	void **userdata = NULL;

	if (!mod) {
		return false;
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	return !(userdata && *userdata == &data_file_mark) && in_image(mod, addr);
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
	out->symbol = intern(&us->names, name);
	out->module = intern(&us->names, perfmap_module(p->jit));
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
	p = get_proc(us, pid, &err);
	if (!p) {
		goto out;
	}
	if (p->debuginfo_pending && dbgfetch_done(us->fetch) != p->fetches_seen) {
		/* Fetched since this Dwfl looked for it: a new one looks again, sharing the files. */
		refresh(us, p, true);
	}
	m = memo_slot(us, p->gen, addr);
	if (m->gen == p->gen && m->addr == addr) {
		*out = m->sym;
		goto out;
	}
	tls_us = us;
	tls_proc = p;
	mod = dwfl_addrmodule(p->dwfl, addr);
	/* In no object, or in a data file the loader has unmapped since: maps changed since. */
	if (!holds_code(mod, addr)) {
		refresh(us, p, false);
		mod = dwfl_addrmodule(p->dwfl, addr);
	}
	/* Misses are not remembered: a later refresh may find the object, the JIT its name. */
	if (!holds_code(mod, addr)) {
		jit_lookup(us, p, addr, out);
		goto out;
	}
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	/* libdwfl calls it "[vdso: PID]"; /proc/PID/maps and everyone else say "[vdso]". */
	if (name && !strncmp(name, "[vdso", 5)) {
		out->module = "[vdso]";
	} else if (name) {
		out->module = intern(&us->names, name);
	}
	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if (name && name[0]) {
		out->symbol = intern(&us->names, name);
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
	tls_us = NULL;
	tls_proc = NULL;
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
	p = get_proc(us, pid, &err);
	if (p) {
		dwfl_getmodules(p->dwfl, each_module, &mc, 0);
	}
	pthread_mutex_unlock(&us->lock);
	return err;
}

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
	tls_us = us;
	tls_proc = p;
	/* -1 says where the walk stopped (no CFI, unreadable stack): the frames so far stand. */
	dwfl_getthread_frames(p->dwfl, c->tid, unwind_frame, c);
	us->call = NULL;
	tls_us = NULL;
	tls_proc = NULL;
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
 * -ENOEXEC when the process is not one of this architecture (or none of its objects says what it is), the
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
	p = get_proc(us, pid, &err);
	if (!p) {
		goto unlock;
	}
	err = unwind_once(us, p, &c);
	if (err || !c.missed) {
		goto unlock;
	}
	gen = p->gen;
	refresh(us, p, false);
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

/*
 * The outermost inlined call at @pc below @die (a unit, a subprogram, a lexical block), into
 * @out. A walk of its own: libdw 0.188's dwarf_getscopes() loses 32 bytes of its own on Go's
 * units (check-asan: LeakSanitizer, inside dwarf_getscopes, each process that named a Go frame).
 */
static bool outermost_inlined(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > 8 || dwarf_child(die, &child) != 0) {
		return false;
	}
	do {
		if (dwarf_haspc(&child, pc) != 1) {
			continue;
		}
		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) {
			*out = child;
			return true;
		}
		return outermost_inlined(&child, pc, out, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/*
 * Where the function of the frame at @pc, in @cu, called the outermost function inlined into it
 * (its call_file and call_line): the line in the frame's own function, the one its symbol names.
 * NULL when nothing is inlined there.
 */
static const char *inlined_call_site(Dwarf_Die *cu, Dwarf_Addr pc, int *lineno)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Die outer;
	const char *src = NULL;
	Dwarf_Word file, line;
	size_t nfiles;

	if (outermost_inlined(cu, pc, &outer, 0) &&
	    !dwarf_formudata(dwarf_attr(&outer, DW_AT_call_file, &attr), &file) &&
	    !dwarf_formudata(dwarf_attr(&outer, DW_AT_call_line, &attr), &line) && line &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && file < nfiles) {
		src = dwarf_filesrc(files, file, NULL, NULL);
		*lineno = (int)line;
	}
	return src;
}

/*
 * The line of @addr from the compilation units' own address ranges: libdw (elfutils 0.188) finds a
 * unit by .debug_aranges, which Go's linker does not write, so dwfl_module_getsrc() knows no
 * address of a Go binary. A Go binary has a unit per package: a few dozen to walk. Where code
 * is inlined, the line is the call's in the frame's own function (sync.(*Mutex).Lock inlined
 * into main.contend: main.contend's line that locks), as Go's tracebacks say it.
 */
static const char *cu_source(Dwfl_Module *mod, uint64_t addr, int *lineno)
{
	Dwarf_Off off = 0, next;
	Dwarf_Addr bias;
	Dwarf_Line *dl;
	const char *src;
	Dwarf_Die cu;
	size_t hsize;
	Dwarf *dw;

	dw = dwfl_module_getdwarf(mod, &bias);
	if (!dw) {
		return NULL;
	}
	for (; !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL); off = next) {
		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_haspc(&cu, addr - bias) != 1) {
			continue;
		}
		src = inlined_call_site(&cu, addr - bias, lineno);
		if (src) {
			return src;
		}
		dl = dwarf_getsrc_die(&cu, addr - bias);
		if (dl && !dwarf_lineno(dl, lineno)) {
			return dwarf_linesrc(dl, NULL, NULL);
		}
		return NULL;
	}
	return NULL;
}

/**
 * usyms_source() - the source line of an address of @pid, from its object's DWARF line table
 * @file: set to the source file (the cache's own string, valid until usyms_free()), or NULL
 * @line: set to its line, or 0
 *
 * Not remembered: it is asked for a goroutine's frames only, a few a wait.
 *
 * Return: 0 when the line is known; -ENOENT when not; the -errno of usyms_capture() when @pid is
 * not cached and cannot be captured.
 */
int usyms_source(struct usyms *us, pid_t pid, uint64_t addr, const char **file, uint32_t *line)
{
	struct usyms_proc *p;
	Dwfl_Module *mod;
	Dwfl_Line *dl;
	const char *src;
	int err = -ENOENT, lineno = 0;

	*file = NULL;
	*line = 0;
	pthread_mutex_lock(&us->lock);
	p = get_proc(us, pid, &err);
	if (!p) {
		goto out;
	}
	err = -ENOENT;
	tls_us = us;
	tls_proc = p;
	mod = dwfl_addrmodule(p->dwfl, addr);
	dl = holds_code(mod, addr) ? dwfl_module_getsrc(mod, addr) : NULL;
	src = dl ? dwfl_lineinfo(dl, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (!src && holds_code(mod, addr)) {
		src = cu_source(mod, addr, &lineno);
	}
	if (src && lineno > 0) {
		*file = intern(&us->names, src);
		*line = (uint32_t)lineno;
		err = *file ? 0 : -ENOMEM;
	}
out:
	tls_us = NULL;
	tls_proc = NULL;
	pthread_mutex_unlock(&us->lock);
	return err;
}
