// SPDX-License-Identifier: GPL-2.0
/*
 * preloaded.c - find processes that loaded liblatsnap.so before latsnap started.
 *
 * They registered while nobody listened, so latsnap reads what the library exported
 * (struct ls_preload_abi, by its dynamic symbol) from their memory. Nothing read there is
 * trusted beyond the process itself: the handler is checked against the kernel's sigaction at
 * every signal, and the tracer threads it names must be its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracker/preloaded.h"

#define LIB_NAME "liblatsnap.so"

/* The mapping of liblatsnap.so at file offset 0 in @pid: its start, and its map_files name. */
static int find_library(pid_t pid, uint64_t *base, char *range, size_t range_size)
{
	char path[64], line[4096];
	uint64_t start, end, offset;
	int found = -ENOENT, n;
	const char *name;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps) {
		return -errno;
	}
	while (fgets(line, sizeof(line), maps)) {
		/*
		 * A line longer than the buffer is a path the process chose: skip its rest, which
		 * it could have written to look like a line of its own.
		 */
		if (!strchr(line, '\n') && !feof(maps)) {
			while (fgets(line, sizeof(line), maps) && !strchr(line, '\n')) {
			}
			continue;
		}
		if (!strstr(line, LIB_NAME)) {
			continue;
		}
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start, &end,
			   &offset, &n) != 3) {
			continue;
		}
		name = strrchr(line + n, '/');
		if (!name || strncmp(name + 1, LIB_NAME, strlen(LIB_NAME)) != 0 || offset != 0) {
			continue;
		}
		*base = start;
		snprintf(range, range_size, "%" PRIx64 "-%" PRIx64, start, end);
		found = 0;
		break;
	}
	fclose(maps);
	return found;
}

/* The address of the ABI symbol relative to the load base, from the library's dynamic symbols. */
static int abi_symbol_offset(int fd, uint64_t *offset)
{
	uint64_t first_vaddr = UINT64_MAX;
	int err = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t i, nphdr;
	GElf_Phdr phdr;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	const char *name;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		return -EINVAL;
	}
	if (elf_getphdrnum(elf, &nphdr)) {
		err = -EINVAL;
		goto out;
	}
	for (i = 0; i < nphdr; i++) {
		if (gelf_getphdr(elf, i, &phdr) && phdr.p_type == PT_LOAD &&
		    phdr.p_vaddr < first_vaddr) {
			first_vaddr = phdr.p_vaddr &
				      ~(uint64_t)(phdr.p_align ? phdr.p_align - 1 : 0);
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || !shdr.sh_entsize) {
			continue;
		}
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			if (!gelf_getsym(data, i, &sym)) {
				break;
			}
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (name && strcmp(name, LS_PRELOAD_ABI_SYMBOL) == 0 &&
			    sym.st_size >= sizeof(struct ls_preload_abi) &&
			    first_vaddr != UINT64_MAX) {
				*offset = sym.st_value - first_vaddr;
				err = 0;
				goto out;
			}
		}
	}
out:
	elf_end(elf);
	return err;
}

/* Is @tid a thread of @pid? */
static bool thread_of(pid_t pid, pid_t tid)
{
	char path[64];

	if (tid <= 0) {
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
	return access(path, F_OK) == 0;
}

/**
 * preloaded_read - what liblatsnap.so in @pid registered, if it is there and registered.
 * @abi: filled on success; quiet_tids keeps only threads of @pid.
 *
 * Return: 0, -ENOENT when @pid has no registered library, or another negative errno.
 */
int preloaded_read(pid_t pid, struct ls_preload_abi *abi)
{
	struct iovec local = { abi, sizeof(*abi) }, remote;
	uint64_t base, offset;
	char range[80], path[128];
	uint32_t i, kept = 0;
	int fd, err;

	err = find_library(pid, &base, range, sizeof(range));
	if (err) {
		return err;
	}
	/* The mapped file itself, even if the path now names another or none. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", pid, range);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	err = abi_symbol_offset(fd, &offset);
	close(fd);
	if (err) {
		return err;
	}
	remote.iov_base = (void *)(uintptr_t)(base + offset);
	remote.iov_len = sizeof(*abi);
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(*abi)) {
		return errno ? -errno : -EIO;
	}
	if (abi->magic != LS_PRELOAD_ABI_MAGIC || abi->version != LS_ABI_VERSION || abi->sig <= 0 ||
	    abi->sig > 64 || abi->handler <= 1) {
		return -ENOENT;
	}
	for (i = 0; i < abi->nr_quiet && i < LS_PRELOAD_MAX_QUIET; i++) {
		if (thread_of(pid, abi->quiet_tids[i])) {
			abi->quiet_tids[kept++] = abi->quiet_tids[i];
		}
	}
	abi->nr_quiet = kept;
	return 0;
}

/**
 * preloaded_scan - call @fn for every process that registered through liblatsnap.so.
 *
 * Return: how many were found.
 */
int preloaded_scan(int (*fn)(pid_t pid, const struct ls_preload_abi *abi, void *ctx), void *ctx)
{
	struct ls_preload_abi abi;
	struct dirent *de;
	int found = 0;
	char *end;
	DIR *proc;
	long pid;

	proc = opendir("/proc");
	if (!proc) {
		return -errno;
	}
	while ((de = readdir(proc))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == getpid()) {
			continue;
		}
		if (preloaded_read((pid_t)pid, &abi) == 0 && fn((pid_t)pid, &abi, ctx) == 0) {
			found++;
		}
	}
	closedir(proc);
	return found;
}
