/* SPDX-License-Identifier: GPL-2.0 */
/*
 * go.bpf.h - goroutines (--go-waits): a parked goroutine's wait, timed on the goroutine. A part of
 * latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_GO_BPF_H
#define LATSNAP_BPF_GO_BPF_H

/*
 * Goroutines (Go programs on amd64, Go 1.17+): a goroutine that waits (a sync.Mutex, time.Sleep,
 * a channel) is parked by the runtime (runtime.gopark) and keeps no thread; its M runs other
 * goroutines or waits for one, idle. Its wait is timed on the goroutine itself, by uprobes
 * attached per binary (tracker/goroutines.c): from gopark to runtime.ready, which makes it
 * runnable again. The register ABI passes gopark's waitReason (its third argument) in rcx and
 * ready's gp in rax, and keeps the current g in r14. Wakeups that bypass ready (the netpoller's
 * injectglist, the GC's idle workers) leave their park behind until the goroutine parks again,
 * or its process exits and the LRU map drops it.
 */
struct go_park_key {
	__u32 tgid;
	__u32 pad;
	__u64 g; /* the goroutine's runtime.g: it cannot exit, so it is not reused, while parked */
};

struct go_park {
	__u64 start;
	__u64 goid;
	__u32 tid; /* the M it parked on */
	__u32 nr; /* valid entries in ips */
	__u8 reason; /* its waitReason */
	__u8 pad[7];
	__u64 ips[LS_MAX_USER_DEPTH];
};

/* tgid -> what the probes need of its binary (struct ls_go_proc), from user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_GO_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct ls_go_proc);
} go_procs SEC(".maps");

/* The goroutines parked now, in the followed processes. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LS_GO_MAX_PARKED);
	__type(key, struct go_park_key);
	__type(value, struct go_park);
} go_parks SEC(".maps");

/* Scratch: a park being made (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct go_park);
} go_park_scratch SEC(".maps");

/*
 * go_user_stack - the parking goroutine's stack, innermost first, at gopark's entry: the kernel's
 * frame-pointer walk starts at the frame of gopark's caller (gopark has not pushed its own yet),
 * so it would skip that caller; its return address, at the top of the stack, is put back.
 */
static __always_inline void go_user_stack(struct pt_regs *ctx, struct go_park *p)
{
	long len;

	len = bpf_get_stack(ctx, &p->ips[1], sizeof(p->ips) - sizeof(p->ips[0]), BPF_F_USER_STACK);
	p->nr = len > 0 ? len / sizeof(__u64) + 1 : 2;
	p->ips[0] = PT_REGS_IP(ctx);
	if (bpf_probe_read_user(&p->ips[1], sizeof(p->ips[1]), (void *)PT_REGS_SP(ctx))) {
		p->ips[1] = 0;
		p->nr = 1;
	}
}

SEC("uprobe")
int ls_go_park(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = current_task();
	__u32 tgid = task_rd(task, tgid), zero = 0;
	struct go_park_key key = {};
	struct ls_go_proc *proc;
	struct go_park *p;

	proc = bpf_map_lookup_elem(&go_procs, &tgid);
	if (!proc || !task_state(task, true)) {
		return 0;
	}
	p = bpf_map_lookup_elem(&go_park_scratch, &zero);
	if (!p) {
		return 0;
	}
	key.tgid = tgid;
	key.g = ctx->r14;
	p->start = clock_now();
	p->tid = task_rd(task, pid);
	p->reason = (__u8)ctx->cx;
	p->goid = 0;
	bpf_probe_read_user(&p->goid, sizeof(p->goid), (void *)(key.g + proc->goid_off));
	go_user_stack(ctx, p);
	bpf_map_update_elem(&go_parks, &key, p, BPF_ANY);
#endif
	return 0;
}

SEC("uprobe")
int ls_go_ready(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = current_task();
	__u32 tgid = task_rd(task, tgid);
	struct go_park_key key = {};
	struct ls_go_proc *proc;
	__u64 now, m = 0, curg = 0;
	struct ls_event *e;
	struct go_park *p;

	proc = bpf_map_lookup_elem(&go_procs, &tgid);
	if (!proc) {
		return 0;
	}
	key.tgid = tgid;
	key.g = ctx->ax;
	p = bpf_map_lookup_elem(&go_parks, &key);
	if (!p) {
		return 0;
	}
	now = clock_now();
	/* Parked on another CPU, whose clock may be ahead by microseconds (advance()). */
	if (now <= p->start || now - p->start < sleep_threshold_ns) {
		goto out;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		goto out;
	}
	e->kind = LS_KIND_SLEEP;
	e->nr_stacks = 0;
	/* The waker is the thread that runs ready(): its M, running the goroutine that readied. */
	e->has_waker = 1;
	e->waker.pid = tgid;
	e->waker.tid = task_rd(task, pid);
	bpf_probe_read_kernel_str(e->waker.comm, sizeof(e->waker.comm), task->comm);
	e->waker.nr = 0;
	e->waker.pad = 0;
	e->pad0 = 0;
	e->flags = LS_EF_GOROUTINE;
	e->pid = tgid;
	e->tid = p->tid;
	/* The waker's name: Go's threads keep their process's, unless the program renames one. */
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	e->syscall_nr = -1;
	e->switches = 0;
	e->ret = 0;
	e->start_ns = p->start;
	e->end_ns = now;
	e->on_cpu_ns = 0;
	e->blocked_ns = now - p->start;
	e->runqueue_ns = 0;
	e->stacks_dropped = 0;
	e->signal_seq = 0;
	__builtin_memset(e->args, 0, sizeof(e->args));
	e->args[0] = p->goid;
	e->args[1] = p->reason;
	/* ready() runs on the g0 stack (goready's systemstack): the readying goroutine is m.curg. */
	if (proc->m_off && proc->curg_off &&
	    !bpf_probe_read_user(&m, sizeof(m), (void *)(ctx->r14 + proc->m_off)) && m &&
	    !bpf_probe_read_user(&curg, sizeof(curg), (void *)(m + proc->curg_off)) && curg) {
		bpf_probe_read_user(&e->args[2], sizeof(e->args[2]),
				    (void *)(curg + proc->goid_off));
	}
	e->nvcsw = 0;
	e->user.nr = p->nr < LS_MAX_USER_DEPTH ? p->nr : LS_MAX_USER_DEPTH;
	e->user.pad = 0;
	__builtin_memcpy(e->user.ips, p->ips, sizeof(e->user.ips));
	bpf_ringbuf_submit(e, 0);
	stat_inc(LS_STAT_OUTLIERS);
out:
	bpf_map_delete_elem(&go_parks, &key);
#endif
	return 0;
}

#endif /* LATSNAP_BPF_GO_BPF_H */
