// SPDX-License-Identifier: GPL-2.0
/*
 * chain3 [MS=100]
 *
 * A three-process wait chain over pipes: chainA asks chainB and waits for its answer
 * (ask_b(), read); chainB, asked, asks chainC and waits for its answer (ask_c(), read) before it
 * answers; chainC, asked, sleeps MS ms (slow_c(), nanosleep) and answers. Known cause: A's read
 * outlier of ~MS waits on B (blocked in read, depth 1), which waits on C (in nanosleep, depth 2).
 * WL_LOG lines: "pid P", "a TID", "b TID", "c TID", "read TID START END" for A's read.
 */
#include "wl_common.h"
#include <sys/wait.h>

static char get(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1) {
		wl_die("read", errno ? errno : EPIPE);
	}
	return c;
}

static void put(int fd, char c)
{
	if (write(fd, &c, 1) != 1) {
		wl_die("write", errno);
	}
}

/*
 * fork() of chainB or chainC: the child, named @comm, logs "@key TID" and says on @ready that it
 * runs. Returns the child's pid, or 0 in the child.
 */
static pid_t start_link(const char *comm, const char *key, int ready)
{
	pid_t pid = fork();

	if (pid < 0) {
		wl_die("fork", errno);
	}
	if (pid == 0) {
		wl_set_comm(comm);
		wl_log("%s %d", key, (int)wl_gettid());
		put(ready, key[0]);
	}
	return pid;
}

static __attribute__((noinline)) void slow_c(long ms)
{
	wl_nanosleep_ms(ms);
}

static __attribute__((noinline)) char ask_c(int to_c, int from_c, char c)
{
	put(to_c, c);
	return get(from_c);
}

static __attribute__((noinline)) char ask_b(int to_b, int from_b)
{
	uint64_t t0 = wl_now_ns(), t1;
	char c;

	put(to_b, 'a');
	c = get(from_b);
	t1 = wl_now_ns();
	wl_log_span("read", t0, t1);
	return c;
}

int main(int argc, char **argv)
{
	int a2b[2], b2a[2], b2c[2], c2b[2], ready[2], status;
	pid_t b, c;
	long ms;

	wl_init_knobs("chain3", argc, argv, WL_MS("MS", ms, 100));
	if (pipe(a2b) || pipe(b2a) || pipe(b2c) || pipe(c2b) || pipe(ready)) {
		wl_die("pipe", errno);
	}
	c = start_link("chainC", "c", ready[1]);
	if (c == 0) {
		put(c2b[1], get(b2c[0]) == 0 ? 0 : (slow_c(ms), 'c'));
		_exit(0);
	}
	b = start_link("chainB", "b", ready[1]);
	if (b == 0) {
		put(b2a[1], ask_c(b2c[1], c2b[0], get(a2b[0])));
		_exit(0);
	}
	wl_set_comm("chainA");
	wl_log("a %d", (int)wl_gettid());
	/*
	 * Both children started (their preload library set up after fork), and a moment for them
	 * to reach their reads: the chain is then B, then C, and nothing else.
	 */
	get(ready[0]);
	get(ready[0]);
	wl_nanosleep_ms(30);
	ask_b(a2b[1], b2a[0]);
	waitpid(b, &status, 0);
	waitpid(c, &status, 0);
	return 0;
}
