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
#include <sys/prctl.h>
#include <sys/wait.h>

static void name(const char *comm)
{
	if (prctl(PR_SET_NAME, comm, 0, 0, 0) != 0) {
		wl_die("prctl(PR_SET_NAME)", errno);
	}
}

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
	wl_log("read %d %llu %llu", (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)t1);
	return c;
}

int main(int argc, char **argv)
{
	int a2b[2], b2a[2], b2c[2], c2b[2], ready[2], status;
	pid_t b, c;
	long ms;

	wl_init("chain3", "[MS=100]", argc, argv);
	ms = wl_arg(1, 100, 0, 3600000);
	if (pipe(a2b) || pipe(b2a) || pipe(b2c) || pipe(c2b) || pipe(ready)) {
		wl_die("pipe", errno);
	}
	c = fork();
	if (c < 0) {
		wl_die("fork", errno);
	}
	if (c == 0) {
		name("chainC");
		wl_log("c %d", (int)wl_gettid());
		put(ready[1], 'c');
		put(c2b[1], get(b2c[0]) == 0 ? 0 : (slow_c(ms), 'c'));
		_exit(0);
	}
	b = fork();
	if (b < 0) {
		wl_die("fork", errno);
	}
	if (b == 0) {
		name("chainB");
		wl_log("b %d", (int)wl_gettid());
		put(ready[1], 'b');
		put(b2a[1], ask_c(b2c[1], c2b[0], get(a2b[0])));
		_exit(0);
	}
	name("chainA");
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
