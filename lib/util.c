// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/text.h"
#include "lib/util.h"

bool ls_verbose_enabled;

/*
 * Every message is escaped whole (lib/text.c): messages name comms, paths and symbols that a
 * traced process chose, and none of latsnap's own holds a control character.
 */
static void ls_vprint(const char *fmt, va_list ap)
{
	char small[1024], safe_small[1024];
	char *msg = small, *safe = safe_small;
	va_list ap2;
	int saved_errno = errno;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		msg = malloc((size_t)n + 1);
		if (msg) {
			vsnprintf(msg, (size_t)n + 1, fmt, ap2);
		} else {
			/* Out of memory: a truncated message beats none. */
			msg = small;
		}
	}
	va_end(ap2);
	if (ls_text_escape(safe_small, sizeof(safe_small), msg) >= sizeof(safe_small)) {
		/* Longer: a copy; out of memory, the part that ls_text_escape() left in safe_small. */
		safe = ls_text_dup(msg) ?: safe_small;
	}

	/*
	 * One fprintf call: glibc formats into a temporary buffer for the unbuffered stderr, so the
	 * line reaches the terminal in a single write and does not interleave with the traced
	 * command's output.
	 */
	fprintf(stderr, "latsnap: %s\n", safe);

	if (safe != safe_small) {
		free(safe);
	}
	if (msg != small) {
		free(msg);
	}
	/* Callers often print strerror(errno) next; do not let stdio clobber it. */
	errno = saved_errno;
}

/**
 * ls_err() - print one "latsnap: ..." error line on stderr
 * @fmt: printf format of the message, without a trailing newline
 */
void ls_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ls_vprint(fmt, ap);
	va_end(ap);
}

/**
 * ls_verbose() - like ls_err(), but only when ls_verbose_enabled is set
 * @fmt: printf format of the message, without a trailing newline
 */
void ls_verbose(const char *fmt, ...)
{
	va_list ap;

	if (!ls_verbose_enabled) {
		return;
	}
	va_start(ap, fmt);
	ls_vprint(fmt, ap);
	va_end(ap);
}

/**
 * ls_parse_pid() - parse a process id strictly
 * @text: plain decimal digits, nothing else (no sign, no spaces)
 * @pid: receives the value on success, untouched on failure
 *
 * Return: 0, or -EINVAL unless @text is a decimal number in 1..INT_MAX.
 */
int ls_parse_pid(const char *text, int *pid)
{
	long long v = 0;
	const char *p;

	if (!text || !*text) {
		return -EINVAL;
	}
	/* Hand-rolled instead of strtol, which accepts spaces, signs and 0x prefixes. */
	for (p = text; *p; p++) {
		if (*p < '0' || *p > '9') {
			return -EINVAL;
		}
		v = v * 10 + (*p - '0');
		if (v > INT_MAX) {
			return -EINVAL;
		}
	}
	if (v < 1) {
		return -EINVAL;
	}
	*pid = (int)v;
	return 0;
}

/*
 * find_file - the path of latsnap's file @name, @mode-accessible: in the directory of the
 * running binary, then (@parent_too) the one above it, else in LS_LIBDIR.
 */
static const char *find_file(const char *name, int mode, bool parent_too, char *buf, size_t size)
{
	char exe[PATH_MAX], *slash;
	ssize_t len;
	int up;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		for (up = 0; up <= (parent_too ? 1 : 0); up++) {
			slash = strrchr(exe, '/');
			if (!slash) {
				break;
			}
			*slash = '\0';
			snprintf(buf, size, "%s/%s", exe, name);
			if (access(buf, mode) == 0) {
				return buf;
			}
		}
	}
	snprintf(buf, size, "%s/%s", LS_LIBDIR, name);
	return access(buf, mode) == 0 ? buf : NULL;
}

/**
 * ls_find_library - the path of latsnap's library @name: next to the latsnap binary (a build
 * tree) first, else in LS_LIBDIR where `make install` puts it. Returns @buf, or NULL when neither
 * is readable.
 */
const char *ls_find_library(const char *name, char *buf, size_t size)
{
	return find_file(name, R_OK, false, buf, size);
}

/**
 * ls_find_helper - the path of latsnap's helper program @name: next to the running binary, or
 * one directory up (the tests and fuzzers of a build tree live in its subdirectories), else in
 * LS_LIBDIR. Returns @buf, or NULL when none is executable.
 */
const char *ls_find_helper(const char *name, char *buf, size_t size)
{
	return find_file(name, X_OK, true, buf, size);
}

/**
 * ls_relay_name - the name snapshot @id has on an lttng-relayd: LTTng refuses a '.' in a
 * snapshot's name, so the id's milliseconds separator becomes '_'. lttng-relayd then files it
 * as HOST/SESSION-DATE-TIME/NAME-DATE-TIME-SEQ.
 */
void ls_relay_name(const char *id, char *buf, size_t size)
{
	size_t i;

	snprintf(buf, size, "%s", id);
	for (i = 0; buf[i]; i++) {
		if (buf[i] == '.') {
			buf[i] = '_';
		}
	}
}

/**
 * ls_sort - qsort() that also takes an empty array: one never allocated is NULL, which qsort()
 * does not accept even with no element (UBSan's nonnull check, found in four places so far).
 */
void ls_sort(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *))
{
	if (nmemb) {
		qsort(base, nmemb, size, cmp);
	}
}

/**
 * ls_now_ns - CLOCK_MONOTONIC in nanoseconds: the clock of BPF's bpf_ktime_get_ns() and of
 * LTTng-UST, so times taken here compare with theirs.
 */
uint64_t ls_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ls_format_bytes() - bytes for people: B, KB, MB, GB (powers of 1024, as --max-size reads them) */
void ls_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
	} else if (bytes < (1ull << 20)) {
		snprintf(buf, size, "%.1f KB", bytes / 1024.0);
	} else if (bytes < (1ull << 30)) {
		snprintf(buf, size, "%.1f MB", bytes / (double)(1ull << 20));
	} else {
		snprintf(buf, size, "%.1f GB", bytes / (double)(1ull << 30));
	}
}
