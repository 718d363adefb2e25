// SPDX-License-Identifier: GPL-2.0
/*
 * empty-hooks: load bench/empty.bpf.c, attach every program, print "ready" on stdout and wait
 * for SIGINT or SIGTERM. The bench's floor configuration: the hooks latsnap uses, doing nothing.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct empty_bpf *skel;
	sigset_t none;
	int err;

	libbpf_set_print(print_libbpf);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = empty_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "empty-hooks: cannot load the BPF programs: %s\n", strerror(errno));
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
