// SPDX-License-Identifier: GPL-2.0
/*
 * dwfl-sym.c - symbolize a snapshot's user addresses with libdwfl, from what the trace recorded.
 *
 * The lttng-ust statedump in each snapshot says, per process, where each object was loaded
 * (bin_info: base, size, path) and what it was (build_id). That is enough to symbolize on
 * another day or another machine: each object is reported to a Dwfl of its process at its
 * recorded base, from a file whose build-id is the recorded one - the path itself if it still
 * is that object, else a file of that build-id under a debug directory (--debug-dir, then
 * /usr/lib/debug), the way gdb and eu-stack find separate debug info. An object that changed
 * since is never used: its frames keep the symbols the recorder stored, and a warning names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "review/dwfl-sym.h"
#include "lib/util.h"

#define BUILD_ID_MAX 64
#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

struct mapping {
	int64_t pid;
	uint64_t base, memsz;
	char *path;
	uint8_t build_id[BUILD_ID_MAX];
	size_t id_len;
	bool reported;
	char *used; /* the file the Dwfl reads for it, or NULL when none fits */
};

struct proc_dwfl {
	int64_t pid;
	Dwfl *dwfl;
};

struct dwfl_sym {
	char *debug_dir;
	char *env_dirs; /* LATSNAP_DEBUG_DIR's absolute directories, ':'-separated, or NULL */
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
	struct mapping *maps;
	size_t nr_maps, cap_maps;
	struct proc_dwfl *procs;
	size_t nr_procs, cap_procs;
};

static void hex(const uint8_t *id, size_t len, char *buf, size_t size)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < len && 2 * i + 3 <= size; i++) {
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
	}
}

/*
 * The absolute directories of the ':'-separated @list (libdwfl takes the others as relative to
 * the binary's), or NULL when it has none.
 */
static char *absolute_dirs(const char *list)
{
	char *copy = list ? strdup(list) : NULL, *out = NULL, *dir, *save = NULL;
	size_t len = 0;

	if (!copy) {
		goto out;
	}
	out = calloc(1, strlen(list) + 1);
	for (dir = out ? strtok_r(copy, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] == '/') {
			len += (size_t)sprintf(out + len, "%s%s", len ? ":" : "", dir);
		}
	}
	if (out && !len) {
		free(out);
		out = NULL;
	}
out:
	free(copy);
	return out;
}

/**
 * dwfl_sym_new() - an empty symbolizer
 * @debug_dir: a directory searched for .build-id/xx/yyyy(.debug) before /usr/lib/debug; NULL
 *	for none
 *
 * The directories of LATSNAP_DEBUG_DIR (':'-separated) are searched next, as record does.
 *
 * Return: the symbolizer, or NULL (out of memory).
 */
struct dwfl_sym *dwfl_sym_new(const char *debug_dir)
{
	struct dwfl_sym *ds = calloc(1, sizeof(*ds));

	/* Before any elf_begin() of ours: build-ids are read before the first dwfl_begin(). */
	elf_version(EV_CURRENT);
	if (!ds) {
		goto out;
	}
	if (debug_dir) {
		ds->debug_dir = strdup(debug_dir);
	}
	ds->env_dirs = absolute_dirs(getenv("LATSNAP_DEBUG_DIR"));
	/* Build-id lookups of separate debug info for the files that match: --debug-dir first. */
	if (asprintf(&ds->debuginfo_path, "-:.debug%s%s%s%s:" SYSTEM_DEBUG_DIR,
		     debug_dir ? ":" : "", debug_dir ? debug_dir : "", ds->env_dirs ? ":" : "",
		     ds->env_dirs ? ds->env_dirs : "") < 0 ||
	    (debug_dir && !ds->debug_dir)) {
		free(ds->env_dirs);
		free(ds->debug_dir);
		free(ds);
		ds = NULL;
		goto out;
	}
	ds->callbacks.find_elf = dwfl_build_id_find_elf;
	ds->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	ds->callbacks.debuginfo_path = &ds->debuginfo_path;
out:
	return ds;
}

/**
 * dwfl_sym_free() - release the symbolizer and every string it handed out
 */
void dwfl_sym_free(struct dwfl_sym *ds)
{
	size_t i;

	if (!ds) {
		return;
	}
	for (i = 0; i < ds->nr_procs; i++) {
		dwfl_end(ds->procs[i].dwfl);
	}
	for (i = 0; i < ds->nr_maps; i++) {
		free(ds->maps[i].path);
		free(ds->maps[i].used);
	}
	free(ds->procs);
	free(ds->maps);
	free(ds->debug_dir);
	free(ds->env_dirs);
	free(ds->debuginfo_path);
	free(ds);
}

static struct mapping *find_mapping(struct dwfl_sym *ds, int64_t pid, uint64_t base)
{
	size_t i;

	for (i = 0; i < ds->nr_maps; i++) {
		if (ds->maps[i].pid == pid && ds->maps[i].base == base) {
			return &ds->maps[i];
		}
	}
	return NULL;
}

/**
 * dwfl_sym_add_mapping() - an object of process @pid, as a statedump bin_info event gives it
 * @ds: the symbolizer
 * @pid: the process (the event's vpid)
 * @base: where it was loaded
 * @memsz: its size in memory
 * @path: its path then
 *
 * A repeated statedump of the same object is taken once.
 *
 * Return: 0 or -ENOMEM.
 */
int dwfl_sym_add_mapping(struct dwfl_sym *ds, int64_t pid, uint64_t base, uint64_t memsz,
			 const char *path)
{
	struct mapping *m, *grown;
	int ret = 0;

	if (find_mapping(ds, pid, base)) {
		goto out;
	}
	if (ds->nr_maps == ds->cap_maps) {
		grown = realloc(ds->maps, (ds->cap_maps ? ds->cap_maps * 2 : 32) * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			goto out;
		}
		ds->maps = grown;
		ds->cap_maps = ds->cap_maps ? ds->cap_maps * 2 : 32;
	}
	m = &ds->maps[ds->nr_maps];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->base = base;
	m->memsz = memsz;
	m->path = strdup(path ? path : "");
	if (!m->path) {
		ret = -ENOMEM;
		goto out;
	}
	ds->nr_maps++;
out:
	return ret;
}

/**
 * dwfl_sym_add_build_id() - the build-id of an object added by dwfl_sym_add_mapping()
 *
 * Return: 0, or -ENOENT when no such object was added (a build_id event without its bin_info).
 */
int dwfl_sym_add_build_id(struct dwfl_sym *ds, int64_t pid, uint64_t base, const uint8_t *id,
			  size_t len)
{
	struct mapping *m = find_mapping(ds, pid, base);

	if (!m) {
		return -ENOENT;
	}
	m->id_len = len < BUILD_ID_MAX ? len : BUILD_ID_MAX;
	memcpy(m->build_id, id, m->id_len);
	return 0;
}

/**
 * dwfl_sym_nr_mappings() - how many objects of @pid the statedump gave
 */
size_t dwfl_sym_nr_mappings(const struct dwfl_sym *ds, int64_t pid)
{
	size_t i, n = 0;

	for (i = 0; i < ds->nr_maps; i++) {
		n += ds->maps[i].pid == pid;
	}
	return n;
}

/*
 * Whether @path names a regular file. The paths come from the trace, which the traced program
 * can write: a FIFO or a device there must not block `show` or be opened by it (as root).
 */
static bool is_regular_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* Whether @file is an ELF file whose build-id is @id; @found gets its own (hex) when it has one. */
static bool file_has_build_id(const char *file, const uint8_t *id, size_t len, char *found,
			      size_t size)
{
	const void *bits = NULL;
	struct stat st;
	Elf *elf = NULL;
	ssize_t n = -1;
	bool ret = false;
	int fd;

	found[0] = '\0';
	/* Not blocking on a FIFO; and one swapped in after is_regular_file() is refused here. */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		goto out;
	}
	n = dwelf_elf_gnu_build_id(elf, &bits);
	if (n > 0) {
		hex(bits, (size_t)n, found, size);
	}
	ret = n > 0 && (size_t)n == len && !memcmp(bits, id, len);
out:
	if (elf) {
		elf_end(elf);
	}
	if (fd >= 0) {
		close(fd);
	}
	return ret;
}

/* A file of build-id @id under @root/.build-id/: the debug file first, then the object. */
static char *by_build_id(const char *root, const uint8_t *id, size_t len)
{
	static const char *const suffixes[] = { ".debug", "" };
	char idhex[2 * BUILD_ID_MAX + 1], found[2 * BUILD_ID_MAX + 1], *path = NULL;
	size_t i;

	if (!root || len < 2) {
		goto out;
	}
	hex(id, len, idhex, sizeof(idhex));
	for (i = 0; i < 2; i++) {
		if (asprintf(&path, "%s/.build-id/%.2s/%s%s", root, idhex, idhex + 2, suffixes[i]) <
		    0) {
			path = NULL;
			goto out;
		}
		if (file_has_build_id(path, id, len, found, sizeof(found))) {
			goto out;
		}
		free(path);
		path = NULL;
	}
out:
	return path;
}

/* by_build_id() in each of LATSNAP_DEBUG_DIR's directories, in order. */
static char *by_env_dirs(struct dwfl_sym *ds, const uint8_t *id, size_t len)
{
	char *copy = ds->env_dirs ? strdup(ds->env_dirs) : NULL, *dir, *save = NULL, *path = NULL;

	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !path;
	     dir = strtok_r(NULL, ":", &save)) {
		path = by_build_id(dir, id, len);
	}
	free(copy);
	return path;
}

/* Choose the file for @m: the path if it still is the object, else one found by build-id. */
static void choose_file(struct dwfl_sym *ds, struct mapping *m)
{
	char idhex[2 * BUILD_ID_MAX + 1], now[2 * BUILD_ID_MAX + 1];
	bool exists = m->path[0] == '/' && is_regular_file(m->path) && !access(m->path, R_OK);

	hex(m->build_id, m->id_len, idhex, sizeof(idhex));
	if (exists &&
	    (!m->id_len || file_has_build_id(m->path, m->build_id, m->id_len, now, sizeof(now)))) {
		/* No recorded build-id: the path is all there is to go by. */
		m->used = strdup(m->path);
		goto out;
	}
	if (m->id_len) {
		m->used = by_build_id(ds->debug_dir, m->build_id, m->id_len);
		if (!m->used) {
			m->used = by_env_dirs(ds, m->build_id, m->id_len);
		}
		if (!m->used) {
			m->used = by_build_id(SYSTEM_DEBUG_DIR, m->build_id, m->id_len);
		}
	}
	if (exists) {
		ls_err("show: warning: %s: build-id %s is not the %s the snapshot recorded "
		       "(rebuilt since?): %s",
		       m->path, now[0] ? now : "(none)", idhex,
		       m->used ? "symbolized from the debug file of the recorded build-id" :
				 "its frames keep the symbols stored at record time");
	} else if (!m->used) {
		ls_verbose("show: %s: gone, and no file of build-id %s in the debug directories",
			   m->path, idhex[0] ? idhex : "(none recorded)");
	}
out:
	return;
}

static Dwfl *proc_dwfl(struct dwfl_sym *ds, int64_t pid)
{
	struct proc_dwfl *grown;
	struct mapping *m;
	Dwfl *dwfl = NULL;
	size_t i;

	for (i = 0; i < ds->nr_procs; i++) {
		if (ds->procs[i].pid == pid) {
			return ds->procs[i].dwfl;
		}
	}
	if (ds->nr_procs == ds->cap_procs) {
		grown = realloc(ds->procs,
				(ds->cap_procs ? ds->cap_procs * 2 : 8) * sizeof(*grown));
		if (!grown) {
			goto out;
		}
		ds->procs = grown;
		ds->cap_procs = ds->cap_procs ? ds->cap_procs * 2 : 8;
	}
	dwfl = dwfl_begin(&ds->callbacks);
	if (!dwfl) {
		goto out;
	}
	dwfl_report_begin(dwfl);
	for (i = 0; i < ds->nr_maps; i++) {
		m = &ds->maps[i];
		/* The vDSO and other in-memory objects have no file to read. */
		if (m->pid != pid || m->path[0] != '/' || !m->memsz) {
			continue;
		}
		if (!m->reported) {
			m->reported = true;
			choose_file(ds, m);
		}
		if (m->used && !dwfl_report_elf(dwfl, m->path, m->used, -1, m->base, false)) {
			ls_verbose("show: %s: libdwfl: %s", m->used, dwfl_errmsg(-1));
		}
	}
	dwfl_report_end(dwfl, NULL, NULL);
	ds->procs[ds->nr_procs].pid = pid;
	ds->procs[ds->nr_procs].dwfl = dwfl;
	ds->nr_procs++;
out:
	return dwfl;
}

static const char *module_path(struct dwfl_sym *ds, int64_t pid, uint64_t addr)
{
	size_t i;

	for (i = 0; i < ds->nr_maps; i++) {
		if (ds->maps[i].pid == pid && addr >= ds->maps[i].base &&
		    addr - ds->maps[i].base < ds->maps[i].memsz) {
			return ds->maps[i].path;
		}
	}
	return NULL;
}

/**
 * dwfl_sym_lookup() - what an address of process @pid was
 * @ds: the symbolizer, its mappings added
 * @pid: the process
 * @addr: the address
 * @is_return: a return address (every frame but the innermost): looked up at @addr - 1, the
 *	call instruction, which may be in another function or on another line
 * @out: filled; strings live until dwfl_sym_free()
 *
 * Return: 0 when a symbol was found; -ENOENT when none (@out->module may still be set: the
 * object is known, its file or symbols are not); -ENOMEM.
 */
int dwfl_sym_lookup(struct dwfl_sym *ds, int64_t pid, uint64_t addr, int is_return,
		    struct dwfl_sym_result *out)
{
	uint64_t at = is_return && addr ? addr - 1 : addr;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name, *file;
	Dwfl *dwfl;
	int ret = -ENOENT, lineno = 0;

	memset(out, 0, sizeof(*out));
	out->module = module_path(ds, pid, addr);
	dwfl = proc_dwfl(ds, pid);
	if (!dwfl) {
		ret = -ENOMEM;
		goto out;
	}
	mod = dwfl_addrmodule(dwfl, at);
	if (!mod) {
		goto out;
	}
	name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	if (!name) {
		goto out;
	}
	/* As the symbol table has it: show demangles what it prints (lib/demangle.c). */
	out->symbol = name;
	out->offset = off + (addr - at);
	line = dwfl_module_getsrc(mod, at);
	file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (file) {
		out->file = file;
		out->line = lineno;
	}
	ret = 0;
out:
	return ret;
}
