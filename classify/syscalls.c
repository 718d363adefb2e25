// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "classify/syscalls.h"

/* Indexed by number; holes (numbers the architecture never assigned) are NULL. */
static const char *const syscall_names[] = {
#include "syscalls_gen.h"
};

#define SYSCALL_COUNT ((int)(sizeof(syscall_names) / sizeof(syscall_names[0])))

/*
 * Syscalls whose whole purpose is to wait until there is work: a long one is an idle thread, not
 * a latency problem, so they are not reported unless --include-idle. Names that do not exist on
 * this architecture (arm64 has no epoll_wait, poll, select, pause) are simply never matched.
 * nanosleep and clock_nanosleep are not here: a sleep is a decision in the code path and can be
 * the latency. Neither is futex: a contended lock is exactly what latsnap should show.
 */
const char *const syscall_default_idle[] = {
	"epoll_wait", /* event loop waiting for fds */
	"epoll_pwait", /* the same, with a signal mask */
	"epoll_pwait2", /* the same, with a timespec timeout */
	"poll", /* fd readiness wait */
	"ppoll", /* the same, with a signal mask */
	"select", /* fd readiness wait, old style */
	"pselect6", /* the same, with a signal mask */
	"accept", /* server waiting for a connection */
	"accept4", /* the same, with flags */
	"wait4", /* parent waiting for a child to exit */
	"waitid", /* the same, newer interface */
	"pause", /* waiting for any signal */
	"rt_sigsuspend", /* waiting for a signal with a temporary mask */
	"rt_sigtimedwait", /* sigwait()/sigtimedwait(): waiting for a signal */
	"io_getevents", /* waiting for AIO completions */
	"io_pgetevents", /* the same, with a signal mask */
	NULL,
};

/**
 * syscall_name() - name of a syscall number on this architecture
 * @nr: the number
 *
 * Return: the name without "sys_", or NULL when @nr is not a known syscall.
 */
const char *syscall_name(int nr)
{
	if (nr < 0 || nr >= SYSCALL_COUNT) {
		return NULL;
	}
	return syscall_names[nr];
}

/**
 * syscall_number() - number of a syscall name on this architecture
 * @name: the name without "sys_", e.g. "read"
 *
 * Return: the number, or -1 when @name is not a syscall here.
 */
int syscall_number(const char *name)
{
	int nr;

	if (!name || !*name) {
		return -1;
	}
	/* A few hundred entries, looked up while parsing options: no index needed. */
	for (nr = 0; nr < SYSCALL_COUNT; nr++) {
		if (syscall_names[nr] && !strcmp(syscall_names[nr], name)) {
			return nr;
		}
	}
	return -1;
}

/**
 * syscall_count() - size of the syscall number space
 *
 * Return: one more than the highest known syscall number.
 */
int syscall_count(void)
{
	return SYSCALL_COUNT;
}

static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Decimal syscall number in [0, nbits), or -1. */
static int parse_nr(const char *tok, size_t len, int nbits)
{
	long v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (tok[i] < '0' || tok[i] > '9') {
			return -1;
		}
		v = v * 10 + (tok[i] - '0');
		if (v >= nbits) {
			return -1;
		}
	}
	return (int)v;
}

/*
 * One pass over @csv; sets bitmap entries when @bitmap is not NULL. Returns 0, or -EINVAL with
 * the offending token copied to @bad.
 */
static int walk_list(const char *csv, unsigned char *bitmap, int nbits, char *bad, size_t badlen)
{
	char name[64];
	const char *p = csv, *tok;
	size_t len;
	int nr;

	for (;;) {
		while (is_sep(*p)) {
			p++;
		}
		if (!*p) {
			return 0;
		}
		tok = p;
		while (*p && !is_sep(*p)) {
			p++;
		}
		len = (size_t)(p - tok);

		if (tok[0] >= '0' && tok[0] <= '9') {
			nr = parse_nr(tok, len, nbits);
		} else if (len < sizeof(name)) {
			memcpy(name, tok, len);
			name[len] = '\0';
			nr = syscall_number(name);
			if (nr >= nbits) {
				nr = -1;
			}
		} else {
			nr = -1;
		}

		if (nr < 0) {
			if (bad && badlen) {
				snprintf(bad, badlen, "%.*s", (int)len, tok);
			}
			return -EINVAL;
		}
		if (bitmap) {
			bitmap[nr] = 1;
		}
	}
}

/**
 * syscall_parse_list() - parse a list of syscalls into a byte-per-syscall bitmap
 * @csv: names or decimal numbers separated by commas and/or blanks; may be empty
 * @bitmap: @nbits bytes; on success exactly the listed entries are 1, the rest 0
 * @nbits: number of entries in @bitmap
 * @bad: receives the offending token on failure (truncated to @badlen); may be NULL
 * @badlen: size of @bad
 *
 * A number needs no name (new syscalls may be missing from the headers) but must be below
 * @nbits, and so must the number of a name.
 *
 * Return: 0, or -EINVAL on an unknown or out-of-range entry, in which case @bitmap is untouched.
 */
int syscall_parse_list(const char *csv, unsigned char *bitmap, int nbits, char *bad, size_t badlen)
{
	int ret;

	if (bad && badlen) {
		bad[0] = '\0';
	}
	if (!csv || !bitmap || nbits <= 0) {
		return -EINVAL;
	}
	/* Validate everything first so that a typo does not leave a half-applied list behind. */
	ret = walk_list(csv, NULL, nbits, bad, badlen);
	if (ret) {
		return ret;
	}
	memset(bitmap, 0, (size_t)nbits);
	return walk_list(csv, bitmap, nbits, bad, badlen);
}
