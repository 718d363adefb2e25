/* SPDX-License-Identifier: GPL-2.0 */
/*
 * outlier.bpf.h - an outlier in the making: notices, the accumulator, its stacks and its record. A
 * part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_OUTLIER_BPF_H
#define LATSNAP_BPF_OUTLIER_BPF_H

static __always_inline void notify(__u8 kind, __u32 pid, __u32 arg)
{
	struct ls_notice *n = bpf_ringbuf_reserve(&events, sizeof(*n), 0);

	if (!n) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		return;
	}
	n->kind = kind;
	n->pid = pid;
	n->arg = arg;
	bpf_ringbuf_submit(n, 0);
}

/*
 * Both notices of @tgid's mappings carry the same key (the low half of the clock), by which the
 * main loop knows the capture the maps reader took for it.
 */
static __always_inline void tell_maps(__u32 tgid)
{
	__u32 key = (__u32)bpf_ktime_get_ns();
	struct ls_notice *n;

	notify(LS_NOTICE_MAPS, tgid, key);
	n = bpf_ringbuf_reserve(&maps_ring, sizeof(*n), 0);
	if (!n) {
		return;
	}
	n->kind = LS_NOTICE_MAPS;
	n->pid = tgid;
	n->arg = key;
	bpf_ringbuf_submit(n, 0);
}

static __always_inline void notice_maps_once(struct task_state *s, __u32 tgid)
{
	__u32 gen = *(volatile __u32 *)&maps_retell_gen;
	__u8 told = LS_MAPS_TOLD;
	__u8 *noticed;

	if (s->maps_told && s->maps_told_gen == gen) {
		return;
	}
	s->maps_told = 1;
	s->maps_told_gen = gen;
	noticed = bpf_map_lookup_elem(&maps_noticed, &tgid);
	if (noticed) {
		/* Two threads may both see the request: a second notice only reads the maps again. */
		if (*noticed == LS_MAPS_RETELL) {
			*noticed = LS_MAPS_TOLD;
			tell_maps(tgid);
		}
		return;
	}
	if (bpf_map_update_elem(&maps_noticed, &tgid, &told, BPF_NOEXIST) == 0) {
		tell_maps(tgid);
	}
}

static __always_inline struct ls_event *accum_get(struct task_state *s, struct task_struct *task)
{
	__u32 tid = task_rd(task, pid);
	struct ls_event *acc;
	__u32 zero = 0;

	if (s->has_accum) {
		acc = bpf_map_lookup_elem(&accum, &tid);
		if (acc) {
			return acc;
		}
	}
	acc = bpf_map_lookup_elem(&zero_event, &zero);
	if (!acc) {
		return NULL;
	}
	if (bpf_map_update_elem(&accum, &tid, acc, BPF_ANY)) {
		if (!s->accum_lost) {
			stat_inc(LS_STAT_ACCUM_FULL);
		}
		s->accum_lost = 1;
		return NULL;
	}
	s->has_accum = 1;
	return bpf_map_lookup_elem(&accum, &tid);
}

static __always_inline void accum_drop(struct task_state *s, __u32 tid)
{
	if (s->has_accum) {
		bpf_map_delete_elem(&accum, &tid);
		s->has_accum = 0;
	}
	s->cur_slot = -1;
	s->accum_lost = 0;
}

/*
 * capture_wait_stack - file @task's kernel stack into @acc, merging it with an identical one.
 * Returns the slot, or -1 when it could not be read or no slot was left.
 */
static __always_inline int capture_wait_stack(struct ls_event *acc, struct task_struct *task)
{
	struct ls_stack *st;
	__u32 zero = 0, hash = 2166136261u;
	long len;
	int i, n;

	st = bpf_map_lookup_elem(&scratch_stack, &zero);
	if (!st) {
		return -1;
	}
	stat_inc(LS_STAT_WAIT_STACKS);
	len = bpf_get_task_stack(task, st->ips, sizeof(st->ips), 0);
	if (len <= 0) {
		acc->flags |= LS_EF_STACK_FAILED;
		stat_inc(LS_STAT_STACK_FAILED);
		return -1;
	}
	st->nr = len / sizeof(__u64);
	for (i = 0; i < LS_MAX_DEPTH; i++) {
		if (i >= (int)st->nr) {
			break;
		}
		hash = (hash ^ (__u32)st->ips[i] ^ (__u32)(st->ips[i] >> 32)) * 16777619u;
	}
	st->hash = hash;
	st->weight_ns = 0;

	n = acc->nr_stacks;
	for (i = 0; i < LS_MAX_STACKS; i++) {
		if (i >= n) {
			break;
		}
		if (acc->stacks[i].hash == hash && acc->stacks[i].nr == st->nr) {
			return i;
		}
	}
	if (n >= LS_MAX_STACKS) {
		acc->flags |= LS_EF_STACKS_DROPPED;
		acc->stacks_dropped++;
		stat_inc(LS_STAT_STACKS_DROPPED);
		return -1;
	}
	n = bounded_index(n, LS_MAX_STACKS);
	__builtin_memcpy(&acc->stacks[n], st, sizeof(*st));
	acc->nr_stacks = n + 1;
	return n;
}

static __always_inline void charge_slot(struct ls_event *acc, int slot, __u64 delta)
{
	if (slot >= 0 && slot < LS_MAX_STACKS) {
		acc->stacks[slot & (LS_MAX_STACKS - 1)].weight_ns += delta;
	}
}

/*
 * advance - the time since s->last, which moves to @now; 0, with s->last kept, when @now is
 * earlier: the two were read on different CPUs (a wakeup runs on the waker's), whose clocks may
 * disagree by microseconds (an emulated 6.12 guest: ~54 us). Never a negative part of the
 * split: what the earlier clock missed goes to the next part, and the outlier says so.
 */
static __always_inline __u64 advance(struct task_state *s, __u64 now)
{
	__u64 delta;

	if (now < s->last) {
		s->clock_back = 1;
		return 0;
	}
	delta = now - s->last;
	s->last = now;
	return delta;
}

/*
 * came_back_at - when @task, running now, came back onto the CPU, its switch-in unseen: no
 * sched_switch reached latsnap for it (the kernel's recursion guard skips a program; this VM's
 * 6.18 kernel traces no switch out of its own agent's threads, and the thread they hand the CPU
 * to is switched in unseen). The scheduler charged a CFS thread, since it was last picked, the
 * CPU time se.sum_exec_runtime - se.prev_sum_exec_runtime: exact at a switch, a tick behind
 * elsewhere. Bounded by what latsnap saw (s->last); a real-time thread's is not kept: s->last.
 */
static __always_inline __u64 came_back_at(struct task_struct *task, struct task_state *s,
					  __u64 now)
{
	unsigned int policy = BPF_CORE_READ(task, policy);
	__u64 ran;

	if (policy != SCHED_NORMAL && policy != SCHED_BATCH && policy != SCHED_IDLE) {
		return s->last;
	}
	ran = BPF_CORE_READ(task, se.sum_exec_runtime) -
	      BPF_CORE_READ(task, se.prev_sum_exec_runtime);
	return now > s->last && ran < now - s->last ? now - ran : s->last;
}

/*
 * The thread runs now, and ran since s->last, unless its switch-in went unseen (came_back_at()):
 * then it waited until it came back, on the runqueue or blocked as it was, and the split is
 * flagged (unseen_switch).
 */
static __always_inline void on_cpu_since_last(struct task_struct *task, struct task_state *s,
					      __u64 now)
{
	__u64 back;

	if (s->run_state != RS_RUNNABLE && s->run_state != RS_BLOCKED) {
		s->on_cpu += advance(s, now);
		return;
	}
	back = came_back_at(task, s, now);
	if (s->run_state == RS_RUNNABLE) {
		s->runq += advance(s, back);
	} else {
		s->blocked += advance(s, back);
	}
	s->on_cpu += advance(s, now);
	s->unseen_switch = 1;
}

/*
 * The arguments of the syscall @task is in, from its saved user registers (x86-64: rdi rsi rdx
 * r10 r8 r9), which the kernel leaves as they were at entry; zeros for no @task. Read once per
 * outlier, at its submission: what the idle policy tells a lock from an event by (futex).
 */
static __always_inline void syscall_args(__u64 *args, struct task_struct *task)
{
	struct pt_regs *regs = task ? task_regs(task) : NULL;

	__builtin_memset(args, 0, 6 * sizeof(__u64));
	if (!regs) {
		return;
	}
#if defined(__TARGET_ARCH_x86)
	args[0] = BPF_CORE_READ(regs, di);
	args[1] = BPF_CORE_READ(regs, si);
	args[2] = BPF_CORE_READ(regs, dx);
	args[3] = BPF_CORE_READ(regs, r10);
	args[4] = BPF_CORE_READ(regs, r8);
	args[5] = BPF_CORE_READ(regs, r9);
#elif defined(__TARGET_ARCH_arm64)
	args[0] = BPF_CORE_READ(regs, orig_x0);
	args[1] = BPF_CORE_READ(regs, regs[1]);
	args[2] = BPF_CORE_READ(regs, regs[2]);
	args[3] = BPF_CORE_READ(regs, regs[3]);
	args[4] = BPF_CORE_READ(regs, regs[4]);
	args[5] = BPF_CORE_READ(regs, regs[5]);
#endif
}

static __always_inline void fill_event(struct ls_event *e, struct task_struct *task,
				       struct task_state *s, __u8 kind, __u64 end, long ret)
{
	e->kind = kind;
	e->pid = task_rd(task, tgid);
	e->tid = task_rd(task, pid);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	e->syscall_nr = kind == LS_KIND_SYSCALL ? s->nr : -1;
	e->switches = s->switches;
	e->ret = ret;
	e->start_ns = s->start;
	e->end_ns = end;
	e->on_cpu_ns = s->on_cpu;
	if (s->unseen_switch) {
		e->flags |= LS_EF_SWITCH_UNSEEN;
	}
	if (s->clock_back) {
		e->flags |= LS_EF_CLOCK_BACK;
	}
	e->blocked_ns = s->blocked;
	e->runqueue_ns = s->runq;
	e->nvcsw = BPF_CORE_READ(task, nvcsw);
	e->signal_seq = 0; /* ask_unwind() numbers a signalled one */
	e->uid = BPF_CORE_READ(task, real_cred, uid.val);
	syscall_args(e->args, kind == LS_KIND_SYSCALL ? task : NULL);
}

/*
 * The syscall number in a thread's saved user registers @regs. libbpf names the argument and
 * return registers of each architecture, not this one. On x86 (orig_ax) and arm64 (syscallno)
 * alike, an entry from user space by an interrupt or an exception stores -1 there.
 */
static __always_inline long user_syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(regs, syscallno);
#else
#error "latsnap.bpf.c knows the saved user registers of x86 and arm64 only"
#endif
}

/*
 * save_user_ip - where a tracked thread left user code, at the switch-out that begins an off-CPU
 * interval outside any syscall, for the sleep outlier it may become: at its switch-in, where a
 * sleep ends, the kernel walks no other task's user stack. The interrupted ip always (two loads).
 * The frame-pointer walk only when an interrupt or an exception took it out of user code (no
 * syscall number): a thread computing, preempted by the tick or an IPI, at most a few hundred
 * times a second. Not when it is preempted on its way out of a syscall (its number is still
 * there): a pipe ping-pong does that ~46k times a second, and a walk there cost 1 to 5 us (reads
 * through rbp fault in code without frame pointers); the preload library, signalled at the
 * switch-in, unwinds those.
 * Where the end of the switch back in is hooked (switch_end_hook) and the thread leaves through
 * schedule() (@deferrable: not a preemption inside the kernel, which comes back elsewhere), the
 * walk waits for that end, in the thread's own context, where its user stack is as it was: only
 * an interval that turned out long pays for it (owe_walk()). A walk costs 5 to 10 us in code
 * without frame pointers, and ~1% of a busy server's switches are such preemptions.
 */
static __always_inline void save_user_ip(void *ctx, struct task_struct *task, struct task_state *s,
					 __u64 start, bool deferrable)
{
	struct pt_regs *regs = task_regs(task);
	long len = 0;

	s->sleep_start = start;
	s->sleep_walk = 0;
	if (user_syscall_nr(regs) < 0) {
		if (switch_end_hook && deferrable) {
			s->sleep_walk = 1;
		} else {
			len = bpf_get_stack(ctx, s->sleep_ips, sizeof(s->sleep_ips),
					    BPF_F_USER_STACK);
			stat_inc(LS_STAT_USER_WALKS);
		}
	}
	if (len > 0) {
		s->sleep_nr = len / sizeof(__u64);
	} else {
		s->sleep_ips[0] = PT_REGS_IP_CORE(regs);
		s->sleep_nr = s->sleep_ips[0] ? 1 : 0;
	}
}

/*
 * The user stack, walked by frame pointers: only binaries that keep them give more than a frame
 * or two, which is what the preload library's unwinder is for. A syscall ends in the thread's
 * own context, where it is walked now; a sleep ends in its successor's, where the kernel refuses
 * to walk it (another task's user memory): its innermost frame was kept at its switch-out.
 */
static __always_inline void capture_user_stack(struct ls_event *e, struct task_struct *task,
					       struct task_state *s, void *ctx, bool current)
{
	long len = 0;

	if (current) {
		len = bpf_get_stack(ctx, e->user.ips, sizeof(e->user.ips), BPF_F_USER_STACK);
	} else if (s->sleep_start == s->start && s->sleep_nr) {
		/* Else not of this interval: its switch-out went unseen (or was before tracking). */
		len = s->sleep_nr < LS_MAX_USER_DEPTH ? s->sleep_nr : LS_MAX_USER_DEPTH;
		len *= sizeof(__u64);
		__builtin_memcpy(e->user.ips, s->sleep_ips, sizeof(e->user.ips));
		if (s->sleep_walk) {
			e->flags |= LS_EF_WALK_UNSEEN;
		}
	}
	if (len > 0) {
		e->user.nr = len / sizeof(__u64);
	} else {
		e->user.nr = 0;
		e->flags |= LS_EF_USER_STACK_FAILED;
	}
}

#endif /* LATSNAP_BPF_OUTLIER_BPF_H */
