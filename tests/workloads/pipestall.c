// SPDX-License-Identifier: GPL-2.0
/*
 * pipestall [SECONDS=30]
 *
 * A pipe whose writer never writes. The parent, "reader", makes a pipe and forks "writer", which
 * keeps the write end and sleeps in writer_sleeps(), in nanosleep, for good; the parent closes
 * its own write end and blocks in read() in read_forever(). The writer dies with the parent
 * (PR_SET_PDEATHSIG); should it die first, the reader sees the end of the pipe and exits 0.
 * After SECONDS (0: never) the reader _exit(0)s, still stuck, and the writer with it.
 * WL_LOG lines: "pid P", "tid reader T", "tid writer T" (the child's pid), "pid writer P",
 * "pipe READ_FD WRITE_FD", "fn read_forever 0xADDR", "fn writer_sleeps 0xADDR", "stuck reader T".
 */
#include "wl_stuck.h"

/* nanosleep() called from here, not from a helper, so that its caller's frame is this one. */
static WL_STUCK_FN void writer_sleeps(void)
{
	struct timespec hour = { 3600, 0 };

	for (;;) {
		nanosleep(&hour, NULL);
		__asm__ volatile("" ::: "memory");
	}
}

static WL_STUCK_FN ssize_t read_forever(int fd)
{
	ssize_t n;
	char c;

	wl_stuck("reader");
	n = read(fd, &c, 1);
	__asm__ volatile("" ::: "memory");
	return n;
}

static __attribute__((noreturn)) void writer_main(pid_t parent, int ready_fd)
{
	wl_role("writer");
	/* Dies with the reader; if that already happened, the reparenting shows it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent) {
		_exit(0);
	}
	close(ready_fd);
	writer_sleeps();
	_exit(0);
}

int main(int argc, char **argv)
{
	int fds[2], ready[2];
	long seconds;
	pid_t child, parent = getpid();
	char c;

	wl_init_knobs("pipestall", argc, argv, WL_SECONDS(seconds));
	wl_role("reader");
	wl_log_fn(read_forever);
	wl_log_fn(writer_sleeps);
	if (pipe(fds) || pipe(ready)) {
		wl_die("pipe", errno);
	}
	child = fork();
	if (child < 0) {
		wl_die("fork", errno);
	}
	if (child == 0) {
		close(fds[0]);
		close(ready[0]);
		writer_main(parent, ready[1]);
	}
	/* The writer is set up once it closed its end of @ready: read() then returns 0. */
	close(ready[1]);
	if (read(ready[0], &c, 1) < 0) {
		wl_die("read", errno);
	}
	close(ready[0]);
	wl_stuck_child = child;
	wl_exit_after(seconds);
	wl_log("pid writer %d", (int)child);
	wl_log("pipe %d %d", fds[0], fds[1]);
	close(fds[1]);
	if (read_forever(fds[0]) < 0) {
		wl_die("read", errno);
	}
	wl_say("the writer went away");
	waitpid(child, NULL, 0);
	return 0;
}
