// SPDX-License-Identifier: GPL-2.0
/*
 * load.c - `latsnap top`'s BPF program (bpf/top.bpf.c) opened, configured from the options,
 * loaded and attached (its stall scan run once), and the kernel symbols its stacks are named
 * with; and all of it undone.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "classify/syscalls.h"
#include "lib/util.h"
#include "tracker/kernel.h"
#include "tracker/ksyms.h"
#include "tracker/libbpf-log.h"
#include "top.skel.h"
#include "top/top-int.h"

/* The syscalls whose first argument is the object they wait on: a file descriptor or a futex. */
static void mark_syscalls(struct top_bpf *skel)
{
	static const char *const fds[] = {
		"read",	       "write",		  "readv",    "writev",	  "pread64",
		"pwrite64",    "preadv",	  "pwritev",  "preadv2",  "pwritev2",
		"recvfrom",    "recvmsg",	  "recvmmsg", "sendto",	  "sendmsg",
		"sendmmsg",    "accept",	  "accept4",  "connect",  "fsync",
		"fdatasync",   "sync_file_range", "flock",    "ioctl",	  "epoll_wait",
		"epoll_pwait", "epoll_pwait2",	  "splice",   "sendfile", "fcntl",
	};
	volatile __u8 *obj = (volatile __u8 *)skel->rodata->obj_syscalls;
	size_t i;
	int nr;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		nr = syscall_number(fds[i]);
		if (nr >= 0 && nr < TOP_MAX_SYSCALLS) {
			obj[nr] = TOP_OBJ_FD;
		}
	}
	nr = syscall_number("futex");
	if (nr >= 0 && nr < TOP_MAX_SYSCALLS) {
		obj[nr] = TOP_OBJ_FUTEX;
	}
}

/* The syscalls that wait for work (the recorder's idle list): a long one is not a stall. */
static void mark_idle(struct top_bpf *skel)
{
	volatile __u8 *idle = (volatile __u8 *)skel->rodata->idle_syscalls;
	size_t i;
	int nr;

	for (i = 0; syscall_default_idle[i]; i++) {
		nr = syscall_number(syscall_default_idle[i]);
		if (nr >= 0 && nr < TOP_MAX_SYSCALLS) {
			idle[nr] = 1;
		}
	}
}

/**
 * top_load() - starts counting: the BPF program loaded and attached, kernel symbols read
 * @t: the options set; receives the skeleton, the symbols and the start of the first period
 *
 * Return: 0, or a negative errno said on stderr; top_unload() undoes what was done either way.
 */
int top_load(struct top *t)
{
	bool stand_in, old_switch;
	int err;

	libbpf_log_init();
	if (kernel_check("top", KERNEL_FOR_TOP)) {
		return -ENOTSUP;
	}
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		ls_err("top: cannot count possible CPUs");
		return -EINVAL;
	}
	t->skel = top_bpf__open();
	if (!t->skel) {
		err = -errno;
		ls_err("top: cannot open the BPF program: %s", strerror(errno));
		return err;
	}
	t->skel->rodata->self_tgid = (__u32)getpid();
	t->skel->rodata->sample_below_ns = t->opts.sample_below_ns;
	t->skel->rodata->sample_ratio = t->opts.sample_ratio;
	t->skel->rodata->include_kthreads = t->opts.kthreads;
	mark_syscalls(t->skel);
	/*
	 * Older kernels (as the tracker's): task storage's stand-in, a hash map by thread id, and
	 * its exit hook (before 5.12); sched_switch without prev_state (before 5.18).
	 */
	stand_in = !kernel_has_task_storage();
	if (stand_in) {
		t->skel->rodata->has_task_storage = false;
		err = kernel_task_storage_standin(t->skel->maps.waits);
		if (err) {
			ls_err("top: cannot set up the per-thread state map: %s", strerror(-err));
			return err;
		}
	}
	bpf_program__set_autoload(t->skel->progs.top_sched_process_exit, stand_in);
	old_switch = kernel_tp_args("sched_switch") == 3;
	bpf_program__set_autoload(t->skel->progs.top_sched_switch, !old_switch);
	bpf_program__set_autoload(t->skel->progs.top_sched_switch_3, old_switch);
	if (!t->opts.include_idle) {
		mark_idle(t->skel);
	}
	err = top_bpf__load(t->skel);
	if (err) {
		libbpf_log_explain_load("top", err);
		return err;
	}
	t->ksyms = ksyms_load(NULL);
	if (!t->ksyms) {
		err = -errno;
		ls_err("top: /proc/kallsyms: %s (kernel stacks need root and readable kernel "
		       "addresses)",
		       strerror(errno));
		return err;
	}
	err = top_bpf__attach(t->skel);
	if (err) {
		ls_err("top: cannot attach the BPF program: %s", strerror(-err));
		return err;
	}
	err = top_stalls_note(t);
	if (err) {
		return err;
	}
	t->last_drain_ns = ls_now_ns();
	return 0;
}

/**
 * top_unload() - stops counting: the BPF program detached and freed, the symbols freed
 * @t: as top_load() left it, even after a failure
 */
void top_unload(struct top *t)
{
	top_bpf__destroy(t->skel);
	t->skel = NULL;
	ksyms_free(t->ksyms);
	t->ksyms = NULL;
}
