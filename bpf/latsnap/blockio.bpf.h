/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blockio.bpf.h - block I/O: a request's issue and completion, for the context stream. A part of
 * latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_BLOCKIO_BPF_H
#define LATSNAP_BPF_BLOCKIO_BPF_H

static __always_inline int block_issue(struct request *rq)
{
	struct task_struct *task = current_task();
	struct block_issue issue;
	struct ls_ctx_record *e;
	__u64 key = (__u64)rq, now;

	if (ctx_level != LS_CTX_FULL) {
		return 0;
	}
	now = clock_now();
	if (!streamed(any_state(task, false), now)) {
		return 0;
	}
	issue.ts = now;
	issue.tid = task_rd(task, pid);
	issue.pid = task_rd(task, tgid);
	bpf_map_update_elem(&block_issued, &key, &issue, BPF_ANY);
	e = ctx_reserve();
	if (e) {
		ctx_fill(e, LS_CTX_BLOCK_ISSUE, now, task, NULL);
		e->arg = request_dev(rq);
		e->nr = BPF_CORE_READ(rq, __sector);
		e->start = BPF_CORE_READ(rq, __data_len);
		e->tid2 = BPF_CORE_READ(rq, cmd_flags) & 0xff;
		ctx_submit(e);
	}
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ls_block_rq_issue, struct request *rq)
{
	return block_issue(rq);
}

/* Before Linux 5.11 the tracepoint passed the request's queue first (user space picks one). */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(ls_block_rq_issue_q, struct request_queue *q, struct request *rq)
{
	return block_issue(rq);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ls_block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	struct block_issue *issue;
	struct ls_ctx_record *e;
	__u64 key = (__u64)rq;

	if (ctx_level != LS_CTX_FULL) {
		return 0;
	}
	issue = bpf_map_lookup_elem(&block_issued, &key);
	if (!issue) {
		return 0;
	}
	e = ctx_reserve();
	if (e) {
		e->kind = LS_CTX_BLOCK_COMPLETE;
		e->preempted = 0;
		e->nr_ips = 0;
		e->cpu = bpf_get_smp_processor_id();
		e->ts = clock_now();
		e->at = e->ts;
		e->tid = issue->tid;
		e->pid = issue->pid;
		__builtin_memset(e->comm, 0, sizeof(e->comm));
		__builtin_memset(e->comm2, 0, sizeof(e->comm2));
		e->pid2 = 0;
		e->tid2 = error;
		e->arg = request_dev(rq);
		e->nr = BPF_CORE_READ(rq, __sector);
		e->start = issue->ts;
		ctx_submit(e);
	}
	bpf_map_delete_elem(&block_issued, &key);
	return 0;
}

#endif /* LATSNAP_BPF_BLOCKIO_BPF_H */
