/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_common.h - what the libFuzzer harnesses share: a file that holds the input (the readers
 * under test open paths), and a quiet stderr.
 */
#ifndef LATSNAP_FUZZ_COMMON_H
#define LATSNAP_FUZZ_COMMON_H

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * latsnap's error lines go through the stderr stream; libFuzzer and the sanitizers write to
 * file descriptor 2 their own way. Pointing the stream at /dev/null keeps the fuzzer's log
 * readable and fast without losing its reports.
 */
static inline void fuzz_quiet_stderr(void)
{
	FILE *null = fopen("/dev/null", "w");

	if (null) {
		stderr = null;
	}
}

/*
 * fuzz_input_path() - write @data to a memfd and return a path that opens it
 * ("/proc/self/fd/N"), for readers that take a file name. The same memfd is reused.
 */
static inline const char *fuzz_input_path(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0) {
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		abort();
	}
	return path;
}

/* A NUL-terminated copy of @data; the caller frees it. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s) {
		abort();
	}
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static char fuzz_tmp_dir[64];

static inline int fuzz_remove_one(const char *path, const struct stat *st, int flag,
				  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static inline void fuzz_remove_tmp_dir(void)
{
	nftw(fuzz_tmp_dir, fuzz_remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/*
 * fuzz_mkdtemp() - make a directory from @tmpl (mkdtemp()'s template, changed in place) that is
 * removed with all it holds at exit: a replay of the corpus in make check left one in /tmp per
 * harness per run.
 */
static inline void fuzz_mkdtemp(char *tmpl)
{
	if (!mkdtemp(tmpl)) {
		abort();
	}
	snprintf(fuzz_tmp_dir, sizeof(fuzz_tmp_dir), "%s", tmpl);
	atexit(fuzz_remove_tmp_dir);
}

#endif /* LATSNAP_FUZZ_COMMON_H */
