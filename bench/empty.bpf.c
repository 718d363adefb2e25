// SPDX-License-Identifier: GPL-2.0
/*
 * The floor: one empty program on each hook latsnap's BPF program uses, with the same attach
 * type (tp_btf). What any tracer built on these hooks pays before doing any work: the syscall
 * slow path, the trampolines and the program calls. bench/run.sh checks that this list matches
 * the SEC() lines of bpf/latsnap.bpf.c and says so in the table's header when it does not.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int empty_sys_enter(void *ctx)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int empty_sys_exit(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int empty_sched_switch(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int empty_sched_waking(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_process_fork")
int empty_sched_process_fork(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_process_exit")
int empty_sched_process_exit(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_process_exec")
int empty_sched_process_exec(void *ctx)
{
	return 0;
}

SEC("tp_btf/block_rq_issue")
int empty_block_rq_issue(void *ctx)
{
	return 0;
}

SEC("tp_btf/block_rq_complete")
int empty_block_rq_complete(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_exit_tp")
int empty_sched_exit(void *ctx)
{
	return 0;
}

/* Where the kernel lacks sched_exit_tp, latsnap's end-of-switch hook (empty-hooks picks one). */
SEC("fexit/schedule")
int empty_schedule_exit(void *ctx)
{
	return 0;
}
