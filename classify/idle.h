/* SPDX-License-Identifier: GPL-2.0 */
/*
 * idle.h - the idle policy: a thread waiting *for* work is not latency.
 *
 * A wait qualifies only if it waits for an event that nobody owns (a condition variable or other
 * futex that is not a lock, a pipe, socket or terminal read, a signal, a timer, an eventfd...);
 * locks, disk I/O, fsync, memory, sleeps and everything else always count. Such a wait is idle
 * when it ended by its own timeout (nothing came), or when it is the thread's home wait: the
 * thread was waiting there when tracking began; or it came back to a place it waited at before
 * (for a socket or a futex, only a thread that is not its process's main thread: a main thread's
 * replies are its process's work); or it is the first wait of a new thread that is not the
 * main thread (a worker waiting for its first job). A thread never in work of a process that
 * serves (a socket listens, or a thread of it was in work) that sleeps or waits to its own
 * timeout is a server's housekeeping: idle, a sleep too. Inside a request nothing is idle; rules
 * with the cause `idle` or `!idle` decide before all of this; --include-idle turns the policy
 * off. Idle waits are not dropped: each is counted per thread and place.
 */
#ifndef LATSNAP_IDLE_H
#define LATSNAP_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rules;
struct outlier;

/* Longest description of a place a thread waits at, with its NUL. */
#define IDLE_SITE_LEN 160

/* A thread's idle waits at one place. */
struct idle_entry {
	int32_t pid;
	int32_t tid;
	char comm[16];
	/* "pthread_cond_wait in bioProcessBackgroundJobs", "read in main", "futex" */
	char site[IDLE_SITE_LEN];
	uint64_t count;
	uint64_t total_ns;
	/* since the last idle_window_reset() */
	uint64_t window_count;
	uint64_t window_ns;
	/* a wait counted while it lasted (still-blocked): its start, and the time counted so far */
	uint64_t open_start_ns;
	uint64_t open_ns;
};

struct idle_policy;

int idle_open(struct idle_policy **policyp, const struct rules *rules, bool enabled);
void idle_set_rules(struct idle_policy *policy, const struct rules *rules);
void idle_close(struct idle_policy *policy);
void idle_seed(struct idle_policy *policy, int32_t tid, int32_t syscall_nr, uint64_t ip);
bool idle_judge(struct idle_policy *policy, const struct outlier *outlier, const char **why);
bool idle_judge_wait(const struct idle_policy *policy, const struct outlier *wait, bool came_back,
		     const char **why);
size_t idle_entries(const struct idle_policy *policy, const struct idle_entry **entries);
uint64_t idle_count(const struct idle_policy *policy);
void idle_window_reset(struct idle_policy *policy);

#endif /* LATSNAP_IDLE_H */
