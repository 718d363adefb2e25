// SPDX-License-Identifier: GPL-2.0
/*
 * forkexec fork MS
 * forkexec exec-keep MS SLEEPER
 * forkexec exec-drop MS SLEEPER
 * forkexec self-exec-drop MS SLEEPER
 *
 * A process registered with latsnap (through liblatsnap.so in LD_PRELOAD)
 * that makes new processes and new images, to check where the registration
 * follows and where it must not:
 *  fork            fork a child that stays this image: it calls nanosleep(MS)
 *                  in child_nap() and _exits 0. The child is a new process
 *                  the library registers again, so it gets latsnap's signal.
 *  exec-keep       fork a child that execs `SLEEPER MS` with the environment
 *                  as it is: the new image loads the library and registers.
 *  exec-drop       fork a child that execs `SLEEPER MS` without LD_PRELOAD:
 *                  the new image has no handler, so latsnap must not signal
 *                  it (the default action of its signal would kill it).
 *  self-exec-drop  no fork: this registered process itself execs
 *                  `SLEEPER MS` without LD_PRELOAD; same rule.
 * The parent waits for the child (wait4: an idle syscall, no outlier).
 * Known cause of every outlier: the timer sleep of MS ms.
 * WL_LOG lines: "pid P", "fn child_nap 0xADDR" (runtime address), "child C",
 * "child_status S" (S is the raw wait status: 0 when the child exited 0, the
 * signal number when a signal killed it), "nap PID START_NS END_NS" for the
 * fork child's nap. The exec'd sleeper logs its own "pid" and "nap" lines.
 * Exit status: 0 if the child exited 0; 128+N if signal N killed it; 1 if it
 * exited non-zero; 2 for bad arguments.
 */
#include "wl_common.h"
#include <sys/wait.h>

static __attribute__((noinline)) void child_nap(long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);
	uint64_t t0 = wl_now_ns(), t1;

	nanosleep(&ts, NULL);
	t1 = wl_now_ns();
	wl_log("nap %d %llu %llu", (int)getpid(), (unsigned long long)t0, (unsigned long long)t1);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

/* Replace this image by `SLEEPER MS`, with or without the preload library. */
static __attribute__((noreturn)) void exec_sleeper(const char *path, const char *ms, int keep)
{
	char *args[] = { (char *)path, (char *)ms, NULL };

	/* All of LD_PRELOAD goes: the point is an image that has no handler at all. */
	if (!keep && unsetenv("LD_PRELOAD") != 0)
		wl_die("unsetenv", errno);
	execv(path, args);
	fprintf(stderr, "forkexec: exec %s: %s\n", path, strerror(errno));
	_exit(127);
}

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			wl_die("waitpid", errno);
	wl_log("child_status %d", status);
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "forkexec: child %d killed by signal %d\n", (int)pid,
			WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	wl_say("child %d exited %d", (int)pid, WEXITSTATUS(status));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: forkexec fork MS | forkexec exec-keep|exec-drop|self-exec-drop "
			"MS SLEEPER\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode, *path = NULL;
	int exec_mode, keep = 0;
	pid_t pid;
	long ms;

	wl_init("forkexec", "fork MS | exec-keep|exec-drop|self-exec-drop MS SLEEPER", argc, argv);
	if (wl_argc < 3)
		usage();
	mode = wl_argv[1];
	ms = wl_arg(2, 100, 0, 3600000);
	exec_mode = strcmp(mode, "fork") != 0;
	if (exec_mode) {
		if (wl_argc < 4)
			usage();
		path = wl_argv[3];
		if (strcmp(mode, "exec-keep") == 0)
			keep = 1;
		else if (strcmp(mode, "exec-drop") != 0 && strcmp(mode, "self-exec-drop") != 0)
			usage();
	}
	wl_log("fn child_nap %p", (void *)child_nap);

	if (strcmp(mode, "self-exec-drop") == 0)
		exec_sleeper(path, wl_argv[2], 0);

	pid = fork();
	if (pid < 0)
		wl_die("fork", errno);
	if (pid == 0) {
		if (exec_mode)
			exec_sleeper(path, wl_argv[2], keep);
		child_nap(ms);
		_exit(0);
	}
	wl_log("child %d", (int)pid);
	wl_say("forked child %d (%s)", (int)pid, mode);
	return wait_child(pid);
}
