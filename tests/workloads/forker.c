// SPDX-License-Identifier: GPL-2.0
/*
 * forker [MS=100] [MAX=100]
 *
 * A sleeper loop that forks on request: calls nanosleep(MS) in parent_nap()
 * up to MAX times (exits 0 then). Each SIGUSR1 makes it fork a child named
 * "forkchild" (PR_SET_NAME) that calls nanosleep(MS) once in child_nap() and
 * exits 0; the parent reaps it (waitpid: an idle syscall) and goes on.
 * Meant for attaching with `latsnap record -p PID` to a process that is
 * already running, and checking that its later children are tracked too.
 * SIGTERM ends it (default action).
 * WL_LOG lines: "pid P", "nap PID START END", "child PID",
 * "childnap PID START END".
 */
#include "wl_common.h"
#include <signal.h>
#include <sys/wait.h>

static volatile sig_atomic_t fork_requests;

static void on_usr1(int sig)
{
	(void)sig;
	fork_requests++;
}

static __attribute__((noinline)) void timed_nap(const char *what, long ms)
{
	struct timespec ts = wl_ms_to_ts(ms);
	uint64_t t0 = wl_now_ns(), t1;

	nanosleep(&ts, NULL);
	t1 = wl_now_ns();
	wl_log("%s %d %llu %llu", what, (int)getpid(), (unsigned long long)t0,
	       (unsigned long long)t1);
}

static __attribute__((noinline)) void parent_nap(long ms)
{
	timed_nap("nap", ms);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void child_nap(long ms)
{
	timed_nap("childnap", ms);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) int spawn_child(long ms)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		wl_die("fork", errno);
	if (pid == 0) {
		signal(SIGUSR1, SIG_IGN);
		wl_set_comm("forkchild");
		child_nap(ms);
		_exit(0);
	}
	wl_log("child %d", (int)pid);
	wl_say("forked child %d", (int)pid);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			wl_die("waitpid", errno);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	long ms, max, i;

	wl_init_knobs("forker", argc, argv, WL_MS("MS", ms, 100),
		      WL_KNOB("MAX", max, 100, 0, 100000000));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		wl_die("sigaction", errno);
	for (i = 0; i < max; i++) {
		parent_nap(ms);
		while (fork_requests > 0) {
			fork_requests--;
			if (spawn_child(ms) != 0) {
				fprintf(stderr, "forker: child failed\n");
				return 1;
			}
		}
	}
	return 0;
}
