// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong [N=100000] [-v]
 *
 * Two processes pass one byte back and forth through two pipes, N round trips: each hop is a
 * write, a read that blocked, a wakeup and a context switch (run both on one CPU with taskset to
 * make every hop a switch). Prints on stderr
 *   "pingpong: N round trips in T ms: X ns/round trip wall, C ns/round trip cpu"
 * where C is the CPU time of both processes' main threads over the round trips (the child sends
 * its own back at the end): on one CPU it is the wall time minus what other programs took there,
 * so it holds on a busy machine. Threads a preloaded library may start are not counted, nor the
 * child's start-up.
 * Exit 0, 1 when a set-up call fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * Echo every byte from @in back to @out until @in closes, then write the CPU time it took from
 * the first byte on (8 bytes).
 */
static void echo(int in, int out)
{
	uint64_t c0 = 0, cpu;
	char c;

	while (read(in, &c, 1) == 1) {
		if (!c0) {
			c0 = cpu_ns();
		}
		if (write(out, &c, 1) != 1) {
			_exit(1);
		}
	}
	cpu = c0 ? cpu_ns() - c0 : 0;
	_exit(write(out, &cpu, sizeof(cpu)) == sizeof(cpu) ? 0 : 1);
}

int main(int argc, char **argv)
{
	int ping[2], pong[2], status;
	long n = 100000, i;
	uint64_t t0, t1, c0, c1, child_cpu;
	double ns;
	char c = 'x';
	pid_t child;

	if (argc > 1) {
		char *end;

		n = strtol(argv[1], &end, 10);
		if (*end || n <= 0) {
			fprintf(stderr, "usage: pingpong [N=100000]\n");
			return 2;
		}
	}
	if (pipe(ping) || pipe(pong)) {
		die("pipe");
	}
	child = fork();
	if (child < 0) {
		die("fork");
	}
	if (child == 0) {
		close(ping[1]);
		close(pong[0]);
		echo(ping[0], pong[1]);
	}
	close(ping[0]);
	close(pong[1]);
	c0 = cpu_ns();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			die("round trip");
		}
	}
	t1 = now_ns();
	c1 = cpu_ns();
	close(ping[1]);
	if (read(pong[0], &child_cpu, sizeof(child_cpu)) != sizeof(child_cpu)) {
		die("reading the child's CPU time");
	}
	if (waitpid(child, &status, 0) < 0) {
		die("waitpid");
	}
	ns = (double)(t1 - t0) / (double)n;
	fprintf(stderr,
		"pingpong: %ld round trips in %.3f ms: %.1f ns/round trip wall, "
		"%.1f ns/round trip cpu\n",
		n, (double)(t1 - t0) / 1e6, ns, (double)(c1 - c0 + child_cpu) / (double)n);
	return 0;
}
