// SPDX-License-Identifier: GPL-2.0
/*
 * pipewait [MS=120] [WCPU=-1]
 *
 * Forks a child named "pipewriter" (PR_SET_NAME) that sleeps MS ms once the
 * parent is blocked in read() in wait_for_pipe(), and then writes one byte to
 * the pipe from write_to_pipe(). Known cause: the parent's read is an outlier of ~MS,
 * woken by pipewriter (pipe_write in the waker's stack). The child's own
 * nanosleep is an outlier too. The parent reaps the child with waitpid (an
 * idle syscall).
 * WCPU >= 0: pipewriter moves itself to that CPU first (the wakeup then is read on another CPU
 * than the reader's, when the reader is pinned elsewhere).
 * WL_LOG lines: "pid P", "reader TID", "writer PID", "read TID START END".
 */
#include "wl_common.h"
#include <sched.h>
#include <sys/wait.h>

static __attribute__((noinline)) void write_to_pipe(int fd)
{
	char c = 'x';

	if (write(fd, &c, 1) != 1)
		wl_die("write", errno);
}

/* The first bytes of /proc/@pid/@file into @buf; -1 when it cannot be read. */
static int proc_head(pid_t pid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * Returns once @reader sleeps in read(2) (/proc/PID/syscall starts with its number, and its
 * state is S: preempted inside the call, it would still find the byte there), or when that
 * cannot be told. A nap begun at fork could end before a reader starved of CPU (its machine
 * busy at a higher priority) reached its read: the read then never waited at all.
 */
static void await_reader_blocked(pid_t reader)
{
	uint64_t t0 = wl_now_ns();
	char buf[256];
	const char *state;

	while (wl_now_ns() - t0 < 10000000000ULL) {
		if (proc_head(reader, "syscall", buf, sizeof(buf)))
			return;
		if (!strncmp(buf, "0 ", 2)) {
			if (proc_head(reader, "stat", buf, sizeof(buf)))
				return;
			state = strrchr(buf, ')');
			if (state && state[1] == ' ' && state[2] == 'S')
				return;
		}
		sched_yield();
	}
}

static __attribute__((noinline)) void pipewriter_main(int fd, long ms, long cpu, pid_t reader)
{
	cpu_set_t set;

	wl_set_comm("pipewriter");
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			wl_die("sched_setaffinity", errno);
	}
	await_reader_blocked(reader);
	wl_nanosleep_ms(ms);
	write_to_pipe(fd);
	_exit(0);
}

static __attribute__((noinline)) ssize_t wait_for_pipe(int fd)
{
	char c;
	uint64_t t0 = wl_now_ns(), t1;
	ssize_t r = read(fd, &c, 1);

	t1 = wl_now_ns();
	wl_log_span("read", t0, t1);
	wl_say("read blocked %.3f ms", (double)(t1 - t0) / 1e6);
	return r;
}

int main(int argc, char **argv)
{
	int fds[2], status;
	long ms, cpu;
	pid_t child, reader = getpid();

	wl_init_knobs("pipewait", argc, argv, WL_MS("MS", ms, 120),
		      WL_KNOB("WCPU", cpu, -1, -1, CPU_SETSIZE - 1));
	if (pipe(fds) != 0)
		wl_die("pipe", errno);
	child = fork();
	if (child < 0)
		wl_die("fork", errno);
	if (child == 0) {
		close(fds[0]);
		pipewriter_main(fds[1], ms, cpu, reader);
	}
	close(fds[1]);
	wl_log("reader %d", (int)wl_gettid());
	wl_log("writer %d", (int)child);
	if (wait_for_pipe(fds[0]) != 1)
		wl_die("read", errno);
	if (waitpid(child, &status, 0) != child)
		wl_die("waitpid", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pipewait: pipewriter failed (status 0x%x)\n", status);
		return 1;
	}
	return 0;
}
