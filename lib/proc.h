/* SPDX-License-Identifier: GPL-2.0 */
/* proc.h - what latsnap reads of /proc/PID/stat: a process's (or thread's) state and start time. */
#ifndef LATSNAP_PROC_H
#define LATSNAP_PROC_H

#include <sys/types.h>

/**
 * struct proc_stat - fields of /proc/PID/stat (or /proc/PID/task/TID/stat)
 * @state: field 3, one letter: R running, S sleeping, D uninterruptible, Z zombie, ...
 * @start_time: field 22, clock ticks since boot: tells a process from a later one with its pid
 */
struct proc_stat {
	char state;
	unsigned long long start_time;
};

int proc_stat_read(pid_t pid, pid_t tid, struct proc_stat *st);
int proc_start_time(pid_t pid, unsigned long long *start_time);

#endif /* LATSNAP_PROC_H */
