/* SPDX-License-Identifier: GPL-2.0 */
/* proc.h - what latsnap reads of /proc/PID/stat and /proc/PID/maps. */
#ifndef LATSNAP_PROC_H
#define LATSNAP_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * struct proc_stat - fields of /proc/PID/stat (or /proc/PID/task/TID/stat)
 * @state: field 3, one letter: R running, S sleeping, D uninterruptible, Z zombie, ...
 * @ppid: field 4, its parent
 * @start_time: field 22, clock ticks since boot: tells a process from a later one with its pid
 */
struct proc_stat {
	char state;
	pid_t ppid;
	unsigned long long start_time;
};

int proc_stat_read(pid_t pid, pid_t tid, struct proc_stat *st);
int proc_start_time(pid_t pid, unsigned long long *start_time);
char *proc_maps_read(pid_t pid, size_t *len);
uint64_t proc_maps_code_hash(const char *buf, size_t len);
uint64_t proc_code_hash(pid_t pid);

#endif /* LATSNAP_PROC_H */
