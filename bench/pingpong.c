// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong [N=100000] [-v]
 *
 * Two processes pass one byte back and forth through two pipes, N round trips: each hop is a
 * write, a read that blocked, a wakeup and a context switch (run both on one CPU with taskset to
 * make every hop a switch). Prints on stderr "pingpong: N round trips in T ms: X ns/round trip,
 * Y round trips/s". Exit 0, 1 when a set-up call fails.
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

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Echo every byte from @in back to @out until @in closes. */
static void echo(int in, int out)
{
	char c;

	while (read(in, &c, 1) == 1) {
		if (write(out, &c, 1) != 1) {
			_exit(1);
		}
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int ping[2], pong[2], status;
	long n = 100000, i;
	uint64_t t0, t1;
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
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			die("round trip");
		}
	}
	t1 = now_ns();
	close(ping[1]);
	if (waitpid(child, &status, 0) < 0) {
		die("waitpid");
	}
	ns = (double)(t1 - t0) / (double)n;
	fprintf(stderr, "pingpong: %ld round trips in %.3f ms: %.1f ns/round trip, %.0f round trips/s\n",
		n, (double)(t1 - t0) / 1e6, ns, 1e9 / ns);
	return 0;
}
