// SPDX-License-Identifier: GPL-2.0
/*
 * prims VARIANT [N]: load one program of bench/prims.bpf.c (enter_* on sys_enter, switch_* on
 * sched_switch), drive its hook from here (N getppid calls, or N pipe round trips between two
 * threads on one CPU), and print "prim VARIANT RUNS NS_PER_RUN" from the kernel's bpf_stats
 * (turned on for the run with BPF_ENABLE_STATS: its own clock reads are in every variant, so
 * compare variants with each other, not with zero). "prims list" names the variants.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "prims.skel.h"

static int ping[2], pong[2];
static long rounds;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG) {
		return 0;
	}
	return vfprintf(stderr, fmt, ap);
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *ponger(void *arg)
{
	char c;
	long i;

	(void)arg;
	pin_cpu(1);
	for (i = 0; i < rounds; i++) {
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) {
			break;
		}
	}
	return NULL;
}

static int drive_switches(long n)
{
	pthread_t th;
	char c = 'x';
	long i;

	rounds = n;
	if (pipe(ping) || pipe(pong)) {
		return -errno;
	}
	pin_cpu(1);
	if (pthread_create(&th, NULL, ponger, NULL)) {
		return -EAGAIN;
	}
	for (i = 0; i < n; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			break;
		}
	}
	pthread_join(th, NULL);
	return 0;
}

static void drive_syscalls(long n)
{
	long i;

	pin_cpu(1);
	for (i = 0; i < n; i++) {
		syscall(SYS_getppid);
	}
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct bpf_program *prog, *chosen = NULL;
	struct bpf_link *link = NULL;
	struct prims_bpf *skel;
	int stats_fd = -1, err = 1;
	long n;

	if (argc < 2) {
		fprintf(stderr, "usage: prims VARIANT|list [N]\n");
		return 2;
	}
	n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	libbpf_set_print(print_libbpf);
	skel = prims_bpf__open();
	if (!skel) {
		fprintf(stderr, "prims: cannot open the BPF programs: %s\n", strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		if (strcmp(argv[1], "list") == 0) {
			printf("%s\n", bpf_program__name(prog));
		}
		if (strcmp(bpf_program__name(prog), argv[1]) == 0) {
			chosen = prog;
		}
		bpf_program__set_autoload(prog, false);
	}
	if (strcmp(argv[1], "list") == 0) {
		err = 0;
		goto out;
	}
	if (!chosen) {
		fprintf(stderr, "prims: no variant '%s' (prims list)\n", argv[1]);
		goto out;
	}
	bpf_program__set_autoload(chosen, true);
	if (prims_bpf__load(skel)) {
		fprintf(stderr, "prims: %s: cannot load: %s\n", argv[1], strerror(errno));
		goto out;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "prims: cannot enable bpf_stats: %s\n", strerror(errno));
		goto out;
	}
	link = bpf_program__attach(chosen);
	if (!link) {
		fprintf(stderr, "prims: %s: cannot attach: %s\n", argv[1], strerror(errno));
		goto out;
	}
	if (strncmp(argv[1], "switch_", 7) == 0) {
		drive_switches(n > 0 ? n : 200000);
	} else {
		drive_syscalls(n > 0 ? n : 2000000);
	}
	if (bpf_obj_get_info_by_fd(bpf_program__fd(chosen), &info, &len)) {
		fprintf(stderr, "prims: %s: no program info: %s\n", argv[1], strerror(errno));
		goto out;
	}
	printf("prim %s %llu %.1f\n", argv[1], (unsigned long long)info.run_cnt,
	       info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0);
	err = 0;
out:
	bpf_link__destroy(link);
	if (stats_fd >= 0) {
		close(stats_fd);
	}
	prims_bpf__destroy(skel);
	return err;
}
