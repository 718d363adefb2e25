// SPDX-License-Identifier: GPL-2.0
/*
 * pipeloop [MS=50] [N=100]
 *
 * Forks a child named "pipefeeder" (PR_SET_NAME) that writes one byte to a pipe every MS ms
 * (nanosleep in between), N times; the parent blocks in read() in read_from_pipe() for each.
 * Known cause: the parent waits N times ~MS "Reading from a pipe", on the pipe's inode; the
 * child sleeps N times ~MS in nanosleep. The workload of `latsnap top`'s tests.
 * WL_LOG lines: "pid P", "writer PID", "pipe INODE".
 */
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

static __attribute__((noinline)) int read_from_pipe(int fd)
{
	char c;

	return read(fd, &c, 1) == 1;
}

static __attribute__((noinline)) void feeder_main(int fd, long ms, long n)
{
	char c = 'x';
	long i;

	wl_set_comm("pipefeeder");
	for (i = 0; i < n; i++) {
		wl_nanosleep_ms(ms);
		if (write(fd, &c, 1) != 1)
			wl_die("write", errno);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	long ms, n, i;
	struct stat st;
	int fds[2];
	pid_t child;

	wl_init_knobs("pipeloop", argc, argv, WL_MS("MS", ms, 50),
		      WL_KNOB("N", n, 100, 1, 100000000));
	if (pipe(fds))
		wl_die("pipe", errno);
	if (fstat(fds[0], &st))
		wl_die("fstat", errno);
	wl_log("pipe %llu", (unsigned long long)st.st_ino);
	child = fork();
	if (child < 0)
		wl_die("fork", errno);
	if (child == 0) {
		close(fds[0]);
		feeder_main(fds[1], ms, n);
	}
	wl_log("writer %d", (int)child);
	close(fds[1]);
	for (i = 0; i < n; i++) {
		if (!read_from_pipe(fds[0]))
			break;
	}
	waitpid(child, NULL, 0);
	wl_say("read %ld bytes", i);
	return 0;
}
