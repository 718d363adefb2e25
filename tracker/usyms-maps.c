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
		m->text = proc_maps_read(pid, &m->len);
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
	return m->err || !m->text || !proc_maps_code_hash(m->text, m->len);
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
