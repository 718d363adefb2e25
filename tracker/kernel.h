/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel.h - what latsnap's BPF programs need of the running kernel, probed before they load, so
 * that a kernel too old is named as such and not by the verifier's or libbpf's first complaint.
 */
#ifndef LATSNAP_KERNEL_H
#define LATSNAP_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

/* A mainline release, comparable: KERNEL_LINUX(5, 15) < KERNEL_LINUX(6, 1). */
#define KERNEL_LINUX(major, minor) ((unsigned int)(major) << 8 | (unsigned int)(minor))
#define KERNEL_MAJOR(version) ((version) >> 8)
#define KERNEL_MINOR(version) ((version)&0xff)

/* Who needs a feature: kernel_feature.users, and the @users of the functions below. */
#define KERNEL_FOR_RECORD 0x1u /* the recorder's program (latsnap.bpf.c) */
#define KERNEL_FOR_PRELOAD 0x2u /* its signals to the preload library */
#define KERNEL_FOR_TOP 0x4u /* top's program (top.bpf.c) */

enum kernel_probe {
	KERNEL_PROBE_MAP, /* a map type (arg) */
	KERNEL_PROBE_HELPER, /* a helper (arg) */
	KERNEL_PROBE_HOOK, /* a tracepoint (hook) that programs attach to */
};

struct kernel_feature {
	const char *what; /* as a message names it */
	unsigned int since; /* KERNEL_LINUX() of the release that brought it */
	unsigned int users; /* KERNEL_FOR_* */
	enum kernel_probe probe;
	int arg;
	const char *hook;
};

extern const struct kernel_feature kernel_features[];
extern const size_t kernel_nr_features;

/* 1 when the kernel has @f, 0 when it lacks it, a negative errno when it cannot tell. */
typedef int (*kernel_probe_fn)(const struct kernel_feature *f);

int kernel_probe(const struct kernel_feature *f);
unsigned int kernel_min_version(unsigned int users);
const struct kernel_feature *kernel_first_missing(unsigned int users, kernel_probe_fn probe);
int kernel_missing_message(char *buf, size_t size, const char *who, const char *release,
			   const struct kernel_feature *f, unsigned int users);
int kernel_check(const char *who, unsigned int users);

/* Where a thread switched in is signalled from its own context (kernel_switch_end()). */
enum kernel_switch_end {
	KERNEL_SWITCH_END_NONE, /* nowhere: a thread back from a sleep is not unwound */
	KERNEL_SWITCH_END_TP, /* the sched_exit_tp tracepoint (Linux 6.15) */
	KERNEL_SWITCH_END_FEXIT, /* fexit on schedule(), where ftrace has direct calls */
};

enum kernel_switch_end kernel_switch_end(void);

struct bpf_map;

bool kernel_has_task_storage(void);
bool kernel_has_attach_cookie(void);
int kernel_task_storage_standin(struct bpf_map *map);
int kernel_tp_args(const char *name);
long long kernel_preempt_from_rq(void);

#endif /* LATSNAP_KERNEL_H */
