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
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

/*
 * A knob: a positional argument, a decimal integer in [@min, @max], @def when not given, shown as
 * "[NAME=DEF]" in the usage. A workload whose arguments are all knobs lists them once, to
 * wl_init_knobs(), so that its usage cannot state another default than the one it takes.
 */
struct wl_knob {
	const char *name;
	long *value;
	long def, min, max;
};

#define WL_KNOB(name, var, def, min, max)           \
	{                                           \
		(name), &(var), (def), (min), (max) \
	}
/* The ranges most knobs have: a time in ms (up to an hour), a count, a signal number. */
#define WL_MS(name, var, def) WL_KNOB(name, var, def, 0, 3600000)
#define WL_COUNT(name, var, def) WL_KNOB(name, var, def, 0, 1000000)
#define WL_SIG(name, var, def) WL_KNOB(name, var, def, 1, 64)

static WL_UNUSED void wl_init_knobs_(const char *name, int argc, char **argv,
				     const struct wl_knob *knobs)
{
	char usage[256] = "";
	size_t len = 0;
	int i;

	for (i = 0; knobs[i].name && len < sizeof(usage); i++) {
		len += (size_t)snprintf(usage + len, sizeof(usage) - len, "%s[%s=%ld]",
					i ? " " : "", knobs[i].name, knobs[i].def);
	}
	wl_init(name, usage, argc, argv);
	for (i = 0; knobs[i].name; i++) {
		*knobs[i].value = wl_arg(i + 1, knobs[i].def, knobs[i].min, knobs[i].max);
	}
}

/* wl_init() with the knobs WL_KNOB(), WL_MS()... in the order of the arguments. */
#define wl_init_knobs(name, argc, argv, ...) \
	wl_init_knobs_(name, argc, argv, (const struct wl_knob[]){ __VA_ARGS__, { 0 } })

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

/* Logs "WHAT TID START_NS END_NS": something the calling thread waited for from @t0 to @t1. */
static WL_UNUSED void wl_log_span(const char *what, uint64_t t0, uint64_t t1)
{
	wl_log("%s %d %llu %llu", what, (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)t1);
}

/*
 * The waits the tests look for in stacks are macros, not functions: the call is then made by the
 * workload's own function (slow_nap, block_on_mutex...) from its own source line, as the tests
 * expect, with no helper's frame in between, even in the -fno-inline builds of *-nofp; an inlined
 * function would put this file's line in the frame.
 */

/* nanosleep(@ms), logged as "nap TID START_NS END_NS"; how long it took, in ns. */
#define wl_timed_nap(ms)                                  \
	({                                                \
		struct timespec wl_ts_ = wl_ms_to_ts(ms); \
		uint64_t wl_t0_ = wl_now_ns(), wl_t1_;    \
                                                          \
		nanosleep(&wl_ts_, NULL);                 \
		wl_t1_ = wl_now_ns();                     \
		wl_log_span("nap", wl_t0_, wl_t1_);       \
		wl_t1_ - wl_t0_;                          \
	})

/* Takes and drops the mutex @lock, logged as "lock TID START_NS END_NS"; the wait for it, in ns. */
#define wl_timed_lock(lock)                            \
	({                                             \
		uint64_t wl_t0_ = wl_now_ns(), wl_t1_; \
                                                       \
		pthread_mutex_lock(lock);              \
		wl_t1_ = wl_now_ns();                  \
		pthread_mutex_unlock(lock);            \
		wl_log_span("lock", wl_t0_, wl_t1_);   \
		wl_t1_ - wl_t0_;                       \
	})

/* The runtime address of function FN as "fn FN 0xADDR": the tests map stack frames with it. */
#define wl_log_fn(fn) wl_log("fn %s %p", #fn, (void *)(fn))

/*
 * Names the calling thread (or process): the comm latsnap reports. PR_SET_NAME is what
 * pthread_setname_np() does for the calling thread too.
 */
static WL_UNUSED void wl_set_comm(const char *comm)
{
	if (prctl(PR_SET_NAME, comm, 0, 0, 0) != 0) {
		wl_die("prctl(PR_SET_NAME)", errno);
	}
}

/* A thread with a part to play: named after it, and logged as "tid ROLE TID". */
static WL_UNUSED void wl_role(const char *role)
{
	wl_set_comm(role);
	wl_log("tid %s %d", role, (int)wl_gettid());
}

/* pthread_create() of @fn(@arg) into @t; on failure the workload ends with "NAME: @what: why". */
static WL_UNUSED void wl_spawn(pthread_t *t, void *(*fn)(void *), void *arg, const char *what)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		wl_die(what, err);
	}
}

/*
 * @n threads of @fn, each given its index (0 .. @n - 1) as its argument, on 256 KiB stacks so
 * that thousands of them take little memory; joined with wl_join_all().
 */
static WL_UNUSED pthread_t *wl_spawn_all(long n, void *(*fn)(void *))
{
	pthread_attr_t attr;
	pthread_t *th;
	long i;
	int err;

	th = calloc((size_t)n, sizeof(*th));
	if (!th) {
		wl_die("calloc", errno);
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < n; i++) {
		err = pthread_create(&th[i], &attr, fn, (void *)(intptr_t)i);
		if (err) {
			wl_die("pthread_create", err);
		}
	}
	return th;
}

static WL_UNUSED void wl_join_all(pthread_t *th, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
	}
}

/*
 * The application's own handler (wl_count_signal()): how often it ran, and how often for a
 * signal the kernel sent (si_code SI_KERNEL, as bpf_send_signal_thread() sends them).
 */
static WL_UNUSED volatile sig_atomic_t wl_handled;
static WL_UNUSED volatile sig_atomic_t wl_from_kernel;

static WL_UNUSED void wl_on_signal(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)uc;
	wl_handled++;
	if (info->si_code == SI_KERNEL) {
		wl_from_kernel++;
	}
}

/* Installs wl_on_signal() for @sig, SA_RESTART so that a call it interrupts goes on. */
static WL_UNUSED void wl_count_signal(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = wl_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		wl_die("sigaction", errno);
	}
}

#endif
