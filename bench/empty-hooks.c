// SPDX-License-Identifier: GPL-2.0
/*
 * empty-hooks: load bench/empty.bpf.c, attach every program, print "ready" on stdout and wait
 * for SIGINT or SIGTERM. The bench's floor configuration: the hooks latsnap uses, doing nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "empty.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG) {
		return 0;
	}
	return vfprintf(stderr, fmt, ap);
}

/* Whether the kernel's BTF has the sched_exit_tp tracepoint (Linux 6.15). */
static bool has_sched_exit_tp(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool has;

	if (!btf) {
		return true;
	}
	has = btf__find_by_name_kind(btf, "btf_trace_sched_exit_tp", BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return has;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct empty_bpf *skel;
	sigset_t none;
	bool tp;
	int err;

	libbpf_set_print(print_libbpf);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = empty_bpf__open();
	if (!skel) {
		fprintf(stderr, "empty-hooks: cannot open the BPF programs: %s\n", strerror(errno));
		return 1;
	}
	/* As latsnap's tracker: sched_exit_tp where the kernel has it, else fexit on schedule(). */
	tp = has_sched_exit_tp();
	bpf_program__set_autoload(skel->progs.empty_sched_exit, tp);
	bpf_program__set_autoload(skel->progs.empty_schedule_exit, !tp);
	err = empty_bpf__load(skel);
	if (err) {
		fprintf(stderr, "empty-hooks: cannot load the BPF programs: %s\n", strerror(-err));
		empty_bpf__destroy(skel);
		return 1;
	}
	err = empty_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "empty-hooks: cannot attach: %s\n", strerror(-err));
		empty_bpf__destroy(skel);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	sigemptyset(&none);
	while (!stop) {
		sigsuspend(&none);
	}
	empty_bpf__destroy(skel);
	return 0;
}
