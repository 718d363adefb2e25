// SPDX-License-Identifier: GPL-2.0
/*
 * fsyncer PATH [MB=64]
 *
 * Writes MB MiB of data to PATH (created or truncated) in 1 MiB write()s from
 * fill_file(), then calls fsync() on it once from flush_file() and exits right
 * after (the file is left for the caller to remove). Known cause: the fsync
 * waits for the writeback of the dirty page cache of the whole file (and, on
 * ext4, the journal commit); latsnap should report an fsync outlier with the
 * filesystem's fsync path (ext4_sync_file, file_write_and_wait_range, ...) in
 * its kernel stacks. On tmpfs the fsync does nothing: give a path on a disk.
 * WL_LOG lines: "pid P", "fsync TID START_NS END_NS".
 */
#include "wl_common.h"

#define CHUNK (1024 * 1024)

static __attribute__((noinline)) void fill_file(int fd, long mb)
{
	static char buf[CHUNK];
	long i;
	size_t off;
	ssize_t n;

	for (off = 0; off < sizeof(buf); off++)
		buf[off] = (char)(off * 31 + 7);
	for (i = 0; i < mb; i++) {
		buf[0] = (char)i; /* no two chunks alike */
		for (off = 0; off < sizeof(buf); off += (size_t)n) {
			n = write(fd, buf + off, sizeof(buf) - off);
			if (n < 0)
				wl_die("write", errno);
		}
	}
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void flush_file(int fd)
{
	uint64_t t0 = wl_now_ns(), t1;

	if (fsync(fd) != 0)
		wl_die("fsync", errno);
	t1 = wl_now_ns();
	wl_log_span("fsync", t0, t1);
	wl_say("fsync took %.3f ms", (double)(t1 - t0) / 1e6);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	long mb;
	int fd;

	wl_init("fsyncer", "PATH [MB=64]", argc, argv);
	if (wl_argc < 2) {
		fprintf(stderr, "usage: fsyncer PATH [MB=64] [-v]\n");
		return 2;
	}
	mb = wl_arg(2, 64, 1, 65536);
	fd = open(wl_argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		wl_die(wl_argv[1], errno);
	fill_file(fd, mb);
	flush_file(fd);
	return 0;
}
