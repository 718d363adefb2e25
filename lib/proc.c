// SPDX-License-Identifier: GPL-2.0
/*
 * proc.c - the one reader of /proc/PID/stat (a process's or thread's state, parent and start
 * time) and of /proc/PID/maps (its mappings, the hash of its code).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
	/* Fields 3 (state), 4 (ppid) and 22 (starttime), from after the comm. */
	static const char stat_fmt[] =
		" %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu";
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
	if (!p || sscanf(p + 1, stat_fmt, &st->state, &st->ppid, &st->start_time) != 3) {
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

/**
 * proc_maps_read() - the whole of /proc/@pid/maps, NUL-terminated, *@len bytes (malloc'd); NULL
 * when unreadable
 */
char *proc_maps_read(pid_t pid, size_t *len)
{
	char path[64], *buf = NULL, *more;
	size_t cap = 0;
	ssize_t n;
	int fd;

	*len = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return NULL;
	}
	/* Read whole: each read() of the file walks the mappings again. */
	do {
		if (cap - *len < 4096) {
			cap = cap ? 2 * cap : 65536;
			more = realloc(buf, cap);
			if (!more) {
				free(buf);
				buf = NULL;
				*len = 0;
				break;
			}
			buf = more;
		}
		n = read(fd, buf + *len, cap - *len - 1);
		*len += n > 0 ? (size_t)n : 0;
	} while (n > 0);
	close(fd);
	if (buf) {
		buf[*len] = '\0';
	}
	return buf;
}

/**
 * proc_maps_code_hash() - the code a process runs, as a hash of the executable file mappings in @buf, its
 * /proc/PID/maps (addresses, offset, inode, path): two processes with the same hash have the same
 * objects at the same addresses, and one capture symbolizes both. A server's forked workers (a
 * PostgreSQL backend per connection) differ from their parent in data mappings only. 0 when the
 * maps could not be read or hold no code.
 */
uint64_t proc_maps_code_hash(const char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	const char *line, *eol, *f;
	size_t nr_code = 0;
	const unsigned char *c;
	int field;

	for (line = buf; line && line < buf + len; line = eol + 1) {
		eol = strchr(line, '\n');
		eol = eol ? eol : buf + len;
		/* start-end perms offset dev inode path: the 6th field, at its first byte. */
		f = line;
		for (field = 1; field < 6 && f < eol; field++) {
			f = memchr(f, ' ', (size_t)(eol - f));
			if (!f) {
				break;
			}
			while (f < eol && *f == ' ') {
				f++;
			}
			if (field == 1 && (eol - f < 3 || f[2] != 'x')) {
				f = NULL;
				break;
			}
		}
		if (!f || f >= eol || (*f != '/' && strncmp(f, "[vdso]", 6))) {
			continue;
		}
		for (c = (const unsigned char *)line; c < (const unsigned char *)eol; c++) {
			h = (h ^ *c) * 0x100000001b3ULL;
		}
		nr_code++;
	}
	return nr_code ? h : 0;
}

/**
 * proc_code_hash() - proc_maps_code_hash() of @pid's mappings as they are now (0: unreadable)
 */
uint64_t proc_code_hash(pid_t pid)
{
	size_t len;
	char *buf = proc_maps_read(pid, &len);
	uint64_t h = proc_maps_code_hash(buf, len);

	free(buf);
	return h;
}
