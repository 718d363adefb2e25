// SPDX-License-Identifier: GPL-2.0
/*
 * usyms-maps.c - a process's /proc/PID/maps and stat read: its start time, its mappings' text, the
 * hash of its code mappings.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "tracker/usyms-int.h"
#include "lib/proc.h"
#include "lib/util.h"

/*
 * The start time of @pid: 0, -ESRCH when it is gone or a zombie (it has no mappings left to
 * read), or another -errno.
 */
int usyms_live_start_time(pid_t pid, unsigned long long *start_time)
{
	struct proc_stat st;
	int err = proc_stat_read(pid, 0, &st);

	if (err) {
		return err;
	}
	*start_time = st.start_time;
	return st.state == 'Z' || st.state == 'X' ? -ESRCH : 0;
}

/* The whole of /proc/@pid/maps, NUL-terminated, *@len bytes (malloc'd); NULL when unreadable. */
static char *read_maps(pid_t pid, size_t *len)
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

/*
 * The code a process runs, as a hash of the executable file mappings in @buf, its
 * /proc/PID/maps (addresses, offset, inode, path): two processes with the same hash have the same
 * objects at the same addresses, and one capture symbolizes both. A server's forked workers (a
 * PostgreSQL backend per connection) differ from their parent in data mappings only. 0 when the
 * maps could not be read or hold no code.
 */
uint64_t usyms_maps_code_hash(const char *buf, size_t len)
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

/* usyms_maps_code_hash() of @pid's mappings as they are now. */
uint64_t usyms_code_hash(pid_t pid)
{
	size_t len;
	char *buf = read_maps(pid, &len);
	uint64_t h = usyms_maps_code_hash(buf, len);

	free(buf);
	return h;
}

/**
 * usyms_maps_read() - read the mappings of a process now, without the cache
 * @pid: a process id (thread group id)
 *
 * The maps reader reads each process as it is noticed, whoever holds the cache's lock: the main
 * loop holds it through each symbolization, whose CPU time a load stretches (its thread has no
 * priority of its own), 50 to 300 ms behind a nice -15 spinner on each CPU. A process that lived
 * less was gone once the reader got the lock; its mappings, read here, still name its files.
 *
 * Return: what usyms_precapture_maps() takes, to free with usyms_maps_free(); NULL when out of
 * memory.
 */
struct usyms_maps *usyms_maps_read(pid_t pid)
{
	struct usyms_maps *m = calloc(1, sizeof(*m));

	if (!m) {
		return NULL;
	}
	m->pid = pid;
	m->err = pid > 0 ? usyms_live_start_time(pid, &m->start_time) : -ESRCH;
	if (!m->err) {
		m->read_ns = ls_now_ns();
		m->text = read_maps(pid, &m->len);
	}
	return m;
}

/**
 * usyms_maps_gone() - whether usyms_maps_read() found no process, or nothing mapped in it
 * @m: its return
 *
 * Return: true when @m names no code: the process exited, or is past its mm.
 */
bool usyms_maps_gone(const struct usyms_maps *m)
{
	return m->err || !m->text || !usyms_maps_code_hash(m->text, m->len);
}

/**
 * usyms_maps_free() - free what usyms_maps_read() returned
 * @m: its return, or NULL
 */
void usyms_maps_free(struct usyms_maps *m)
{
	if (m) {
		free(m->text);
		free(m);
	}
}
