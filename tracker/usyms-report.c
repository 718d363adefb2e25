// SPDX-License-Identifier: GPL-2.0
/*
 * usyms-report.c - a process's objects opened into a Dwfl: its mapped files (shared between the
 * processes of a program), their debug info, and whether ld.so was still loading.
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

#include "tracker/dbgfetch.h"
#include "tracker/usyms-int.h"
#include "lib/proc.h"
#include "lib/util.h"

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
char usyms_data_file_mark;

static const char deleted_suffix[] = " (deleted)";

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
	GElf_Ehdr ehdr;

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
	/*
	 * A relocatable object (a .o a linker or a hostile process maps, even executable) is no
	 * code at the addresses it is mapped at: its data, not a module. libdwfl would relocate
	 * it first, through a section_address callback.
	 */
	if (elf && (!gelf_getehdr(elf, &ehdr) || ehdr.e_type == ET_REL)) {
		elf_end(elf);
		elf = NULL;
		*data_file = true;
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
	struct report_ctx *ctx = *userdata == &usyms_data_file_mark ? NULL : *userdata;
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
pthread_once_t usyms_debuginfo_once = PTHREAD_ONCE_INIT;

void usyms_init_debuginfo_path(void)
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
__thread struct usyms *usyms_tls_us;
__thread struct usyms_proc *usyms_tls_proc;

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
	if (fd >= 0 || !usyms_tls_us || !usyms_tls_us->fetch) {
		goto out;
	}
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0) {
		goto out;
	}
	fd = dbgfetch_get(usyms_tls_us->fetch, bits, (size_t)len, debuginfo_file_name);
	if (fd == -EAGAIN && usyms_tls_proc) {
		usyms_tls_proc->debuginfo_pending = true;
	}
	fd = fd >= 0 ? fd : -1;
out:
	return fd;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = usyms_find_elf,
	.find_debuginfo = usyms_find_debuginfo,
	/*
	 * For an ET_REL module, which libdwfl relocates before it hands out its Elf: none is let
	 * in (elf_from_fd()), but a NULL here is a call to address 0 if one ever is.
	 */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

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
	*userdata = !elf && ctx->data_file ? &usyms_data_file_mark : NULL;
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
int usyms_report(struct usyms *us, pid_t pid, const char *maps, Dwfl *old, Dwfl **dwflp,
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
	if ((err || !nr_modules) && usyms_live_start_time(pid, &start_time) == -ESRCH) {
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
