// SPDX-License-Identifier: GPL-2.0
/*
 * dwfl-sym: symbolize addresses of this very program from a mapping and a build-id given as a
 * statedump gives them, as show does for a snapshot: with the right build-id (symbol, offset,
 * source line; a return address looked up at addr - 1), with a wrong one (never used), with the
 * file gone but a copy under DEBUG_DIR/.build-id/, for a process with no mappings, and with a
 * FIFO named as the mapped file (not opened).
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include "review/dwfl-sym.h"
#include "tap.h"

#define PID 4242

struct self {
	uint64_t base, memsz;
};

static __attribute__((noinline, used)) int target_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self *self = data;
	uint64_t end = 0;
	int i;

	(void)size;
	/* The first object is the program itself. */
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz > end) {
			end = info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
		}
	}
	self->base = info->dlpi_addr;
	self->memsz = end;
	return 1;
}

static ssize_t build_id_of(const char *path, uint8_t *id, size_t size)
{
	const void *bits = NULL;
	ssize_t n = -1;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		n = dwelf_elf_gnu_build_id(elf, &bits);
		if (n > 0 && (size_t)n <= size) {
			memcpy(id, bits, (size_t)n);
		}
		elf_end(elf);
	}
	close(fd);
	return n;
}

int main(void)
{
	char exe[PATH_MAX], dir[64], path[PATH_MAX + 128], cmd[4 * PATH_MAX];
	uint64_t fn = (uint64_t)(uintptr_t)&target_fn;
	struct dwfl_sym_result res;
	struct self self = { 0 };
	struct dwfl_sym *ds;
	uint8_t id[64];
	ssize_t n, len;
	char hex[129];
	int i;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0) {
		bail_out("readlink /proc/self/exe: %s", strerror(errno));
	}
	exe[len] = '\0';
	dl_iterate_phdr(find_self, &self);
	n = build_id_of(exe, id, sizeof(id));
	if (n <= 0 || !self.memsz) {
		bail_out("no build-id or no mapping for %s", exe);
	}
	ok(target_fn(1) == 4, "the target function runs");

	/* The recorded build-id is the file's. */
	ds = dwfl_sym_new(NULL);
	ok(!dwfl_sym_add_mapping(ds, PID, self.base, self.memsz, exe) &&
		   !dwfl_sym_add_build_id(ds, PID, self.base, id, (size_t)n),
	   "a mapping and its build-id are added");
	is_int((int)dwfl_sym_nr_mappings(ds, PID), 1, "one mapping for the pid");
	ok(!dwfl_sym_add_mapping(ds, PID, self.base, self.memsz, exe),
	   "the same mapping again (a second statedump)");
	is_int((int)dwfl_sym_nr_mappings(ds, PID), 1, "  is taken once");
	is_int(dwfl_sym_lookup(ds, PID, fn + 2, 0, &res), 0, "target_fn+2 is found");
	is_str(res.symbol ? res.symbol : "(null)", "target_fn", "  in target_fn");
	is_u64(res.offset, 2, "  at offset 2");
	is_str(res.module ? res.module : "(null)", exe, "  in this program");
	ok(res.file && strstr(res.file, "test_dwfl_sym.c") && res.line > 0,
	   "  with its source line (%s:%d)", res.file ? res.file : "(none)", res.line);
	/* The byte before target_fn: the function before it, or padding without a symbol. */
	dwfl_sym_lookup(ds, PID, fn, 1, &res);
	ok(!res.symbol || strcmp(res.symbol, "target_fn"),
	   "target_fn's first byte as a return address is looked up at addr - 1, not in "
	   "target_fn (%s)",
	   res.symbol ? res.symbol : "no symbol");
	is_int(dwfl_sym_lookup(ds, PID + 1, fn, 0, &res), -ENOENT,
	       "another pid, no mappings: -ENOENT");
	ok(res.module == NULL, "  and no module");
	dwfl_sym_add_build_id(ds, PID + 1, 0, id, (size_t)n);
	dwfl_sym_free(ds);

	/* A build-id that is not the file's: the file is never used (a warning names it). */
	id[0] ^= 0xff;
	ds = dwfl_sym_new(NULL);
	dwfl_sym_add_mapping(ds, PID, self.base, self.memsz, exe);
	dwfl_sym_add_build_id(ds, PID, self.base, id, (size_t)n);
	is_int(dwfl_sym_lookup(ds, PID, fn + 2, 0, &res), -ENOENT,
	       "a build-id that is not the file's: not symbolized from it");
	is_str(res.module ? res.module : "(null)", exe, "  the module is still named");
	dwfl_sym_free(ds);
	id[0] ^= 0xff;

	/* The file gone from its path, a copy of it under DEBUG_DIR/.build-id/xx/yyyy. */
	snprintf(dir, sizeof(dir), "/tmp/latsnap-test-dwfl.XXXXXX");
	if (!mkdtemp(dir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	for (i = 0; i < n; i++) {
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	}
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/%s.debug", path, exe, path, hex + 2);
	if (system(cmd)) {
		bail_out("%s failed", cmd);
	}
	ds = dwfl_sym_new(dir);
	dwfl_sym_add_mapping(ds, PID, self.base, self.memsz, "/nonexistent/gone/prog");
	dwfl_sym_add_build_id(ds, PID, self.base, id, (size_t)n);
	is_int(dwfl_sym_lookup(ds, PID, fn + 2, 0, &res), 0,
	       "the file gone: found by build-id under the debug directory");
	is_str(res.symbol ? res.symbol : "(null)", "target_fn", "  target_fn");
	is_str(res.module ? res.module : "(null)", "/nonexistent/gone/prog",
	       "  named by the path recorded");
	dwfl_sym_free(ds);

	ds = dwfl_sym_new(NULL);
	dwfl_sym_add_mapping(ds, PID, self.base, self.memsz, "/nonexistent/gone/prog");
	dwfl_sym_add_build_id(ds, PID, self.base, id, (size_t)n);
	is_int(dwfl_sym_lookup(ds, PID, fn + 2, 0, &res), -ENOENT,
	       "the file gone, no debug directory: not symbolized");
	dwfl_sym_free(ds);

	/*
	 * A trace names the mapped files, and the traced program can write into it: a FIFO there
	 * (or a device) is neither opened nor waited on. Before, opening the FIFO blocked show
	 * forever; the alarm turns such a hang into a failure.
	 */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	if (mkfifo(path, 0600)) {
		bail_out("mkfifo %s: %s", path, strerror(errno));
	}
	alarm(20);
	ds = dwfl_sym_new(NULL);
	dwfl_sym_add_mapping(ds, PID, self.base, self.memsz, path);
	is_int(dwfl_sym_lookup(ds, PID, fn + 2, 0, &res), -ENOENT,
	       "a FIFO as the mapped file: not opened, not symbolized, no hang");
	dwfl_sym_add_mapping(ds, PID + 1, self.base, self.memsz, path);
	dwfl_sym_add_build_id(ds, PID + 1, self.base, id, (size_t)n);
	is_int(dwfl_sym_lookup(ds, PID + 1, fn + 2, 0, &res), -ENOENT,
	       "  nor with a recorded build-id");
	dwfl_sym_free(ds);
	alarm(0);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
		diag("could not remove %s", dir);
	}
	return tap_done();
}
