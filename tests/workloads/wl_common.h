// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers for the latsnap test workloads (header only: the Makefile
 * compiles each tests/workloads/NAME.c on its own into build/workloads/NAME).
 *
 * Conventions every workload follows:
 *  - stdout is never written (it belongs to `latsnap record --json`);
 *    anything said goes to stderr.
 *  - knobs are positional decimal arguments (milliseconds, counts); a missing
 *    argument takes the documented default.
 *  - WL_LOG=FILE (environment): append machine-readable facts to FILE, one
 *    `key value...` per line ("pid 123", "tid waiter 125",
 *    "nap 125 START_NS END_NS"), timestamps in CLOCK_MONOTONIC ns, so that the
 *    integration tests can compare what latsnap reports with what happened.
 *  - WL_VERBOSE=1 (environment) or a "-v" argument anywhere: say on stderr
 *    what was measured.
 *  - exit 0 on success; a failed set-up prints `NAME: what: why` on stderr
 *    and exits 1 (2 for a bad argument).
 */
#ifndef LATSNAP_WL_COMMON_H
#define LATSNAP_WL_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WL_UNUSED __attribute__((unused))

static const char *wl_name = "workload";
static int wl_verbose;
static int wl_log_fd = -1;

/* Positional arguments with "-v" removed. */
static int wl_argc;
static char **wl_argv;

static WL_UNUSED uint64_t wl_now_ns(void)
{
	struct timespec ts;

	/* vDSO with the tsc clocksource: no system call. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static WL_UNUSED pid_t wl_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static WL_UNUSED void wl_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (!wl_verbose)
		return;
	n = snprintf(buf, sizeof(buf), "%s: ", wl_name);
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0) {
		/* nothing to do */
	}
}

static WL_UNUSED __attribute__((noreturn)) void wl_die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", wl_name, what, err ? strerror(err) : "failed");
	exit(1);
}

/* Async-signal-safe enough: one write(2) per line with O_APPEND. */
static WL_UNUSED void wl_log(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	if (wl_log_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(wl_log_fd, buf, (size_t)n) < 0) {
		/* ignore: the log is a test aid */
	}
}

static WL_UNUSED void wl_init(const char *name, const char *usage, int argc, char **argv)
{
	const char *v = getenv("WL_VERBOSE");
	const char *log = getenv("WL_LOG");
	int i, j = 0;

	wl_name = name;
	wl_verbose = v && *v && strcmp(v, "0") != 0;
	wl_argv = calloc((size_t)argc + 1, sizeof(char *));
	if (!wl_argv)
		wl_die("calloc", errno);
	for (i = 0; i < argc; i++) {
		if (i > 0 && strcmp(argv[i], "-v") == 0) {
			wl_verbose = 1;
			continue;
		}
		if (i > 0 && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
			fprintf(stderr, "usage: %s %s [-v]\n", name, usage);
			exit(0);
		}
		wl_argv[j++] = argv[i];
	}
	wl_argc = j;
	if (log && *log) {
		wl_log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (wl_log_fd < 0)
			wl_die(log, errno);
	}
	wl_log("pid %d", (int)getpid());
}

/* Positional argument IDX (1-based) as a non-negative integer, or DEF. */
static WL_UNUSED long wl_arg(int idx, long def, long min, long max)
{
	char *end;
	long v;

	if (idx >= wl_argc)
		return def;
	errno = 0;
	v = strtol(wl_argv[idx], &end, 10);
	if (errno || end == wl_argv[idx] || *end || v < min || v > max) {
		fprintf(stderr, "%s: bad argument %d '%s': want an integer in [%ld, %ld]\n",
			wl_name, idx, wl_argv[idx], min, max);
		exit(2);
	}
	return v;
}

static WL_UNUSED struct timespec wl_ms_to_ts(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	return ts;
}

/* nanosleep() that does not resume after a signal: one system call. */
static WL_UNUSED void wl_nanosleep_ms(long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);

	nanosleep(&ts, NULL);
}

#endif
