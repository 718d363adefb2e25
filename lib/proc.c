// SPDX-License-Identifier: GPL-2.0
/* proc.c - the one reader of /proc/PID/stat: a process's (or thread's) state and start time. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/proc.h"

/**
 * proc_stat_read() - the state and start time of process @pid, or of its thread @tid (> 0)
 *
 * Return: 0, -ESRCH when it is gone, -EIO when the file does not read as one, or -errno.
 */
int proc_stat_read(pid_t pid, pid_t tid, struct proc_stat *st)
{
	/* Fields 3 (state) and 22 (starttime), from after the comm. */
	static const char stat_fmt[] =
		" %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu";
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd, err = 0;

	if (tid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	} else {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return errno == ENOENT ? -ESRCH : -errno;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0) {
		/* Read as it exits: the file is there, the process no longer. */
		err = n == 0 || errno == ESRCH ? -ESRCH : -errno;
		goto out;
	}
	buf[n] = '\0';
	/* The comm may hold spaces and parentheses: the fields resume after its last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, stat_fmt, &st->state, &st->start_time) != 2) {
		err = -EIO;
	}
out:
	close(fd);
	return err;
}

/**
 * proc_start_time() - process @pid's start time (/proc/PID/stat's starttime, clock ticks since
 * boot), which tells it from a later process that got its pid
 *
 * Return: 0, -ESRCH when it is gone, or another negative errno.
 */
int proc_start_time(pid_t pid, unsigned long long *start_time)
{
	struct proc_stat st;
	int err = proc_stat_read(pid, 0, &st);

	if (!err) {
		*start_time = st.start_time;
	}
	return err;
}
