/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stalls.bpf.h - the task iterators: the stall scan (--hang), and the context flush before a
 * snapshot. A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_STALLS_BPF_H
#define LATSNAP_BPF_STALLS_BPF_H

/*
 * The stall scan, run by user space every so often (see recorder/stall.c): stall_min_ns and
 * stall_tid are set before each run. Nothing on any hot path: a thread stuck for good reaches no
 * hook again, so only a walk over the tasks finds it.
 */
__u64 stall_min_ns;
/* Non-zero: report this thread only, whatever it does (a holder; its link iterates it alone). */
__u32 stall_tid;
/*
 * Non-zero: report every tracked thread waiting now, however long and with -a too, for the idle
 * policy to learn where threads wait for work (once, when tracking begins).
 */
__u32 stall_seed;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_stall);
} stall_scratch SEC(".maps");

static __always_inline void stall_regs(struct ls_stall *r, struct task_struct *task)
{
	struct pt_regs *regs = task_regs(task);

	if (!regs) {
		return;
	}
#if defined(__TARGET_ARCH_x86)
	r->regs[0] = BPF_CORE_READ(regs, ax);
	r->regs[1] = BPF_CORE_READ(regs, dx);
	r->regs[2] = BPF_CORE_READ(regs, cx);
	r->regs[3] = BPF_CORE_READ(regs, bx);
	r->regs[4] = BPF_CORE_READ(regs, si);
	r->regs[5] = BPF_CORE_READ(regs, di);
	r->regs[6] = BPF_CORE_READ(regs, bp);
	r->regs[7] = BPF_CORE_READ(regs, sp);
	r->regs[8] = BPF_CORE_READ(regs, r8);
	r->regs[9] = BPF_CORE_READ(regs, r9);
	r->regs[10] = BPF_CORE_READ(regs, r10);
	r->regs[11] = BPF_CORE_READ(regs, r11);
	r->regs[12] = BPF_CORE_READ(regs, r12);
	r->regs[13] = BPF_CORE_READ(regs, r13);
	r->regs[14] = BPF_CORE_READ(regs, r14);
	r->regs[15] = BPF_CORE_READ(regs, r15);
	r->regs[16] = BPF_CORE_READ(regs, ip);
	r->args[0] = r->regs[5];
	r->args[1] = r->regs[4];
	r->args[2] = r->regs[1];
	r->args[3] = r->regs[10];
	r->args[4] = r->regs[8];
	r->args[5] = r->regs[9];
#elif defined(__TARGET_ARCH_arm64)
	/* x0..x30, sp, pc: user_pt_regs's order, which is DWARF's (pc last, LS_NR_UREGS). */
	bpf_probe_read_kernel(r->regs, sizeof(r->regs),
			      (void *)regs + bpf_core_field_offset(struct pt_regs, regs));
	r->args[0] = BPF_CORE_READ(regs, orig_x0);
	r->args[1] = r->regs[1];
	r->args[2] = r->regs[2];
	r->args[3] = r->regs[3];
	r->args[4] = r->regs[4];
	r->args[5] = r->regs[5];
#endif
	if (user_syscall_nr(regs) < 0) {
		r->flags |= LS_STALL_IN_USER;
	}
	if (r->syscall_nr < 0 && r->in_syscall) {
		r->syscall_nr = user_syscall_nr(regs);
	}
}

SEC("iter/task")
int ls_stall_scan(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_state *s = NULL;
	struct ls_stall *r;
	__u64 now, since;
	__u32 zero = 0;
	bool tracked;
	long len;

	if (!task) {
		return 0;
	}
	if (!stall_tid) {
		if (task->flags & (PF_KTHREAD | PF_EXITING)) {
			return 0;
		}
		s = task_storage_get(&states, task, false);
		tracked = s && s->gen == tracking_gen ? s->tracked : decide_tracked(task);
		if (!tracked) {
			return 0;
		}
	} else if ((__u32)task->pid != stall_tid) {
		return 0;
	}
	now = clock_now();
	r = bpf_map_lookup_elem(&stall_scratch, &zero);
	if (!r) {
		return 0;
	}
	r->flags = 0;
	r->syscall_nr = -1;
	r->in_syscall = 0;
	r->run_state = 0;
	r->start_ns = 0;
	r->on_cpu_ns = 0;
	r->blocked_ns = 0;
	r->runqueue_ns = 0;
	r->switches = 0;
	if (s && !stall_tid) {
		if ((s->run_state != RS_BLOCKED && s->run_state != RS_RUNNABLE) || s->quiet ||
		    ((now <= s->start || now - s->start < stall_min_ns) && !stall_seed)) {
			return 0;
		}
		since = now > s->last ? now - s->last : 0;
		r->run_state = s->run_state;
		r->in_syscall = s->in_syscall;
		r->syscall_nr = s->in_syscall ? s->nr : -1;
		r->start_ns = s->start;
		r->on_cpu_ns = s->on_cpu;
		r->blocked_ns = s->blocked + (s->run_state == RS_BLOCKED ? since : 0);
		r->runqueue_ns = s->runq + (s->run_state == RS_RUNNABLE ? since : 0);
		r->switches = s->switches;
		r->flags |= (s->work_at_start && !handed_unit_over(task, s) ? LS_STALL_IN_WORK : 0) |
			    (s->worked ? LS_STALL_WORKED : 0);
	} else if (!stall_tid) {
		/*
		 * Never switched out since it was tracked: it has waited since before. Only with
		 * named targets (-p): with -a, every idle thread of the machine is here, and with
		 * the registered processes, every idle thread of every service.
		 */
		if ((track_all || track_registered) && !stall_seed) {
			return 0;
		}
		if (task_run_state(task) == TASK_RUNNING) {
			return 0;
		}
		r->flags |= LS_STALL_NO_STATE;
		r->in_syscall = 1;
	}
	r->pid = task->tgid;
	r->tid = task->pid;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), task->comm);
	r->task_state = task_run_state(task);
	r->now_ns = now;
	r->nvcsw = task->nvcsw + task->nivcsw;
	r->voluntary = task->nvcsw;
	__builtin_memset(r->args, 0, sizeof(r->args));
	__builtin_memset(r->regs, 0, sizeof(r->regs));
	stall_regs(r, task);
	if ((r->flags & LS_STALL_NO_STATE) && idle_syscall(r->syscall_nr) && !include_idle &&
	    !stall_seed) {
		return 0;
	}
	r->nr_kips = 0;
	if (task->on_cpu) {
		r->flags |= LS_STALL_ON_CPU;
	} else if (stall_tid) {
		/* A stack walk costs microseconds: only for a thread about to be reported. */
		len = bpf_get_task_stack(task, r->kips, sizeof(r->kips), 0);
		if (len > 0) {
			r->nr_kips = len / sizeof(__u64);
		}
	}
	bpf_seq_write(ctx->meta->seq, r, sizeof(*r));
	return 0;
}

/*
 * Before a snapshot reads the context rings (tracker_read_context()): the held-back switch-outs
 * of threads still blocked go out now. Each is also the switch-in of the thread that took the
 * CPU, which may be the outlier's: held until the blocked thread's wakeup, it would be missing
 * from a snapshot taken before that (a CPU hog that blocks at the end of its run).
 */
SEC("iter/task")
int ls_ctx_flush(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_state *s;
	__u64 now;

	if (!task || ctx_level == LS_CTX_NONE) {
		return 0;
	}
	s = task_storage_get(&states, task, false);
	/* On a CPU, it is being switched in: its own switch-in sends it. */
	if (!s || !s->out_ts || task->on_cpu) {
		return 0;
	}
	/*
	 * Every thread's, not only the tracked ones': the switch a thread of interest was held
	 * back at may be the one that put an outlier's thread back on the CPU (another program's
	 * thread that woke it and then kept the CPU before it slept), and a thread whose interest
	 * ended before its wakeup keeps its record until it runs again.
	 */
	now = clock_now();
	s->flushed_out_ts = s->out_ts;
	ctx_flush_out(task, s, now, true);
	return 0;
}

#endif /* LATSNAP_BPF_STALLS_BPF_H */
