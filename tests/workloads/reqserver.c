// SPDX-License-Identifier: GPL-2.0
/*
 * reqserver [COMPUTE_MS:SLEEP_MS ...]   (default: 5:0 5:0 150:0 0:120 5:0)
 *
 * A small "server" for `latsnap record --request`: one thread, named "worker", handles one
 * request per argument, in order, each through handle_request(ID, COMPUTE_MS, SLEEP_MS), which
 * first computes for COMPUTE_MS in crunch() (a busy loop in user space, no system call), then
 * sleeps for SLEEP_MS in wait_io() (one nanosleep). The requests are 3 ms apart (a nanosleep
 * outside handle_request). IDs count from 0. The main thread waits for the worker in
 * pthread_join (a futex wait of its own, in thread "reqserver", not the worker's).
 * handle_request, crunch and wait_io are noinline, with frame pointers: a probe on
 * handle_request sees each request, and stacks show crunch (on CPU) and wait_io (blocked).
 * wait_io makes its system call itself (x86-64: no libc wrapper), so that it is the innermost
 * user frame of its wait even for a frame-pointer walk, which skips the caller of a libc
 * wrapper (libc keeps no frame pointers).
 *
 * Known cause of each request's time: COMPUTE_MS on CPU in crunch(), then SLEEP_MS blocked in
 * nanosleep in wait_io(). With `--request uprobe:PATH:handle_request -t 50ms`, latsnap should
 * report one request outlier per request of 50 ms or more, and no other outlier of the worker
 * while a request lasts (its nanosleep is a wait of the request).
 *
 * Fork, exec, exit (environment):
 *  REQSERVER_FORK=1     after its requests the worker forks a child (a copy of the worker,
 *                       comm "worker", pid = tid) that handles one more request, 150:0, with ID
 *                       N (N requests before it), then _exits 0. The worker waits for it
 *                       (waitpid: wait4, an idle wait).
 *  REQSERVER_EXEC="PATH [ARG...]"  (implies REQSERVER_FORK=1) the child execs PATH with the ARGs
 *                       (split at blanks) instead, without REQSERVER_FORK and REQSERVER_EXEC in
 *                       its environment (so a reqserver exec'd so does not fork in turn);
 *                       LD_PRELOAD and WL_LOG are kept. A reqserver exec'd so logs its own
 *                       "pid", "tid worker" and "req" lines (its IDs count from 0 again).
 * Either way the child's request is the last "req" line of the log.
 *
 * WL_LOG lines: "pid P", "tid worker T", "req ID START_NS END_NS" per request (CLOCK_MONOTONIC,
 * read right before handle_request is called and right after it returns), "fn NAME 0xADDR" for
 * handle_request, crunch and wait_io; with a child: "child C", then "child_status S" (the raw
 * wait status). Exit status: 0; 1 when the child did not exit 0 (or a set-up failed); 2 for a
 * bad argument.
 */
#include "wl_common.h"
#include <sys/wait.h>

#define GAP_MS 3
#define CHILD_COMPUTE_MS 150
#define MAX_EXEC_ARGS 32

struct req {
	long compute_ms;
	long sleep_ms;
};

static struct req *reqs;
static long nr_reqs;
static int do_fork;
static char *exec_argv[MAX_EXEC_ARGS + 1];
static int child_failed;

static volatile unsigned long sink;

/* On CPU for @ms, in user space only. The clock (vDSO, no system call) is read every ~10 us, so
 * that samples land in this loop, not in the clock read (libc/vDSO code without frames). */
static __attribute__((noinline)) void crunch(long ms)
{
	uint64_t deadline = wl_now_ns() + (uint64_t)ms * 1000000ull;
	unsigned long i, x = sink;

	while (wl_now_ns() < deadline) {
		for (i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			__asm__ volatile("" : "+r"(x));
		}
	}
	sink = x;
}

/* Blocked for @ms in one nanosleep, made from this function itself. */
static __attribute__((noinline)) void wait_io(long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);

#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(NULL)
			 : "rcx", "r11", "memory");
	(void)ret;
#else
	nanosleep(&ts, NULL);
#endif
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

/* One request: the function the tests put a probe on. */
static __attribute__((noinline)) void handle_request(int id, long compute_ms, long sleep_ms)
{
	if (compute_ms > 0)
		crunch(compute_ms);
	if (sleep_ms > 0)
		wait_io(sleep_ms);
	wl_say("request %d: %ld ms computing, %ld ms sleeping", id, compute_ms, sleep_ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

/* handle_request(), timed and logged as "req ID START_NS END_NS". */
static void serve(int id, long compute_ms, long sleep_ms)
{
	uint64_t t0, t1;

	t0 = wl_now_ns();
	handle_request(id, compute_ms, sleep_ms);
	t1 = wl_now_ns();
	wl_log("req %d %llu %llu", id, (unsigned long long)t0, (unsigned long long)t1);
}

/* The child of REQSERVER_FORK/REQSERVER_EXEC: one slow request, or another image. */
static __attribute__((noreturn)) void child_main(void)
{
	if (exec_argv[0]) {
		execv(exec_argv[0], exec_argv);
		fprintf(stderr, "reqserver: exec %s: %s\n", exec_argv[0], strerror(errno));
		_exit(127);
	}
	serve((int)nr_reqs, CHILD_COMPUTE_MS, 0);
	_exit(0);
}

static void fork_child(void)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		wl_die("fork", errno);
	if (pid == 0)
		child_main();
	wl_log("child %d", (int)pid);
	wl_say("forked child %d%s%s", (int)pid, exec_argv[0] ? " to exec " : "",
	       exec_argv[0] ? exec_argv[0] : "");
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			wl_die("waitpid", errno);
	wl_log("child_status %d", status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "reqserver: child %d ended with wait status %d\n", (int)pid,
			status);
		child_failed = 1;
	}
}

static void *worker_main(void *arg)
{
	long i;

	(void)arg;
	wl_role("worker");
	for (i = 0; i < nr_reqs; i++) {
		if (i > 0)
			wl_nanosleep_ms(GAP_MS);
		serve((int)i, reqs[i].compute_ms, reqs[i].sleep_ms);
	}
	if (do_fork) {
		wl_nanosleep_ms(GAP_MS);
		fork_child();
	}
	return NULL;
}

/* "COMPUTE_MS:SLEEP_MS", each in [0, 3600000]. */
static void parse_req(const char *arg, struct req *r)
{
	const char *s = arg;
	char *end;

	errno = 0;
	r->compute_ms = strtol(s, &end, 10);
	if (errno || end == s || *end != ':' || r->compute_ms < 0 || r->compute_ms > 3600000)
		goto bad;
	s = end + 1;
	r->sleep_ms = strtol(s, &end, 10);
	if (errno || end == s || *end || r->sleep_ms < 0 || r->sleep_ms > 3600000)
		goto bad;
	return;
bad:
	fprintf(stderr,
		"reqserver: bad request '%s': want COMPUTE_MS:SLEEP_MS (0 .. 3600000 each)\n", arg);
	exit(2);
}

/* REQSERVER_EXEC="PATH [ARG...]" into exec_argv (before any fork: no malloc in the child). */
static void parse_exec(const char *spec)
{
	char *copy = strdup(spec), *save = NULL, *tok;
	int n = 0;

	if (!copy)
		wl_die("strdup", errno);
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_EXEC_ARGS) {
			fprintf(stderr, "reqserver: REQSERVER_EXEC: more than %d words\n",
				MAX_EXEC_ARGS);
			exit(2);
		}
		exec_argv[n++] = tok;
	}
	if (n == 0) {
		fprintf(stderr, "reqserver: REQSERVER_EXEC is empty\n");
		exit(2);
	}
	exec_argv[n] = NULL;
}

int main(int argc, char **argv)
{
	static const char *defaults[] = { "5:0", "5:0", "150:0", "0:120", "5:0" };
	const char *fork_env, *exec_env;
	pthread_t worker;
	long i;

	wl_init("reqserver", "[COMPUTE_MS:SLEEP_MS ...] (default 5:0 5:0 150:0 0:120 5:0)", argc,
		argv);
	nr_reqs = wl_argc > 1 ? wl_argc - 1 : (long)(sizeof(defaults) / sizeof(defaults[0]));
	reqs = calloc((size_t)nr_reqs, sizeof(*reqs));
	if (!reqs)
		wl_die("calloc", errno);
	for (i = 0; i < nr_reqs; i++)
		parse_req(wl_argc > 1 ? wl_argv[i + 1] : defaults[i], &reqs[i]);

	fork_env = getenv("REQSERVER_FORK");
	exec_env = getenv("REQSERVER_EXEC");
	do_fork = (fork_env && strcmp(fork_env, "1") == 0) || (exec_env && *exec_env);
	if (exec_env && *exec_env)
		parse_exec(exec_env);
	/* Not inherited: a reqserver this one execs must not fork in turn. */
	if (unsetenv("REQSERVER_FORK") != 0 || unsetenv("REQSERVER_EXEC") != 0)
		wl_die("unsetenv", errno);

	wl_log_fn(handle_request);
	wl_log_fn(crunch);
	wl_log_fn(wait_io);
	wl_spawn(&worker, worker_main, NULL, "pthread_create(worker)");
	pthread_join(worker, NULL);
	return child_failed ? 1 : 0;
}
