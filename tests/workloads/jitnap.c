// SPDX-License-Identifier: GPL-2.0
/*
 * jitnap MODE [MS=300]
 *
 * A JIT of one function: copies a frame-pointer trampoline into anonymous executable memory
 * and sleeps MS through it (nanosleep in jit_inner(), called by the JIT code, called by
 * main()), after putting at /tmp/perf-PID.map, by MODE:
 *   good     the map a JIT writes: one line naming the trampoline "jitnap::trampoline"
 *   garbage  junk, bad numbers, a line of 100 KiB, then that line
 *   fifo     a FIFO (opening it for reading would block)
 *   symlink  a symlink to a file holding that line
 *   foreign  that line, in a file owned by another user (65534: run as root)
 *   none     nothing
 *   remap    the good map, with the trampoline where a data file (/etc/ld.so.cache) was mapped
 *            until after a first short wait (50 ms): as the loader leaves its cache, which a
 *            capture of the maps during that wait holds
 * What it put there stays at exit, as JITs leave their map for perf: the test removes it.
 * WL_LOG lines: "pid P", "jit ADDR SIZE" (the trampoline's place).
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include "wl_common.h"

/* push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret; then int3 up to 16 bytes. */
static const unsigned char trampoline[16] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3,
					      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc };

static long nap_ms;

static __attribute__((noinline)) void jit_inner(void)
{
	uint64_t ns = wl_timed_nap(nap_ms);

	wl_say("slept %.3f ms", (double)ns / 1e6);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

static void write_file(const char *path, const char *text, size_t len, int owner)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		wl_die(path, errno);
	if (write(fd, text, len) != (ssize_t)len)
		wl_die("write", errno);
	if (owner >= 0 && fchown(fd, (uid_t)owner, (gid_t)owner))
		wl_die("fchown", errno);
	close(fd);
}

int main(int argc, char **argv)
{
	char map[64], real[64], line[128], *junk;
	void (*code)(void (*)(void));
	const char *mode;
	size_t len, n;
	void *mem;

	wl_init("jitnap", "good|garbage|fifo|symlink|foreign|none|remap [MS=300]", argc, argv);
	if (wl_argc < 2) {
		fprintf(stderr, "usage: jitnap good|garbage|fifo|symlink|foreign|none|remap [MS=300]\n");
		return 2;
	}
	mode = wl_argv[1];
	nap_ms = wl_arg(2, 300, 0, 3600000);
	mem = NULL;
	if (!strcmp(mode, "remap")) {
		int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			wl_die("/etc/ld.so.cache", errno);
		mem = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		if (mem == MAP_FAILED)
			wl_die("mmap /etc/ld.so.cache", errno);
		close(fd);
		wl_timed_nap(50);
		if (munmap(mem, 4096))
			wl_die("munmap", errno);
		mode = "good";
	}
	mem = mmap(mem, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | (mem ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (mem == MAP_FAILED)
		wl_die("mmap", errno);
	memcpy(mem, trampoline, sizeof(trampoline));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		wl_die("mprotect", errno);
	code = (void (*)(void (*)(void)))mem;
	wl_log("jit %p %zu", mem, sizeof(trampoline));

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	snprintf(real, sizeof(real), "/tmp/jitnap-%d.real", (int)getpid());
	len = (size_t)snprintf(line, sizeof(line), "%lx %zx jitnap::trampoline\n",
			       (unsigned long)(uintptr_t)mem, sizeof(trampoline));
	unlink(map);
	if (!strcmp(mode, "good")) {
		write_file(map, line, len, -1);
	} else if (!strcmp(mode, "garbage")) {
		static const char bad[] = "\x01\x02junk\xff\n"
					  "zzzz 10 bad start\n"
					  "10 zz bad size\n"
					  "0x10\n"
					  "10 0 empty\n"
					  "ffffffffffffffff 10 wraps around\n"
					  "20 10\n";
		n = sizeof(bad) - 1 + 100 * 1024 + 1 + len;
		junk = malloc(n);
		if (!junk)
			wl_die("malloc", errno);
		memcpy(junk, bad, sizeof(bad) - 1);
		memset(junk + sizeof(bad) - 1, 'A', 100 * 1024);
		junk[sizeof(bad) - 1 + 100 * 1024] = '\n';
		memcpy(junk + sizeof(bad) + 100 * 1024, line, len);
		write_file(map, junk, n, -1);
		free(junk);
	} else if (!strcmp(mode, "fifo")) {
		if (mkfifo(map, 0644))
			wl_die("mkfifo", errno);
	} else if (!strcmp(mode, "symlink")) {
		write_file(real, line, len, -1);
		if (symlink(real, map))
			wl_die("symlink", errno);
	} else if (!strcmp(mode, "foreign")) {
		write_file(map, line, len, 65534);
	} else if (strcmp(mode, "none")) {
		fprintf(stderr, "jitnap: bad mode '%s'\n", mode);
		return 2;
	}
	code(jit_inner);
	return 0;
}
