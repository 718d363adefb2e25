/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wakeup.bpf.h - wakeups: the waker, interrupt context, work handed over, answers, a child's exit.
 * A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_WAKEUP_BPF_H
#define LATSNAP_BPF_WAKEUP_BPF_H

/*
 * Interrupt context is told apart in user space, from the irq entry frames of the waker's stack:
 * percpu symbols such as __preempt_count are not in every kernel's kallsyms.
 */
static __always_inline void record_waker(struct ls_event *acc, void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	long len;

	acc->has_waker = 1;
	acc->flags &= ~LS_EF_WAKER_STACK_FAILED;
	acc->waker.pid = pid_tgid >> 32;
	acc->waker.tid = (__u32)pid_tgid;
	bpf_get_current_comm(acc->waker.comm, sizeof(acc->waker.comm));
	len = bpf_get_stack(ctx, acc->waker.ips, sizeof(acc->waker.ips), 0);
	if (len > 0) {
		acc->waker.nr = len / sizeof(__u64);
	} else {
		acc->waker.nr = 0;
		acc->flags |= LS_EF_WAKER_STACK_FAILED;
		stat_inc(LS_STAT_STACK_FAILED);
	}
}

/*
 * sched_waking, not sched_wakeup: it fires in the waker's context, while sched_wakeup may run on
 * the target CPU from the wakeup IPI, where current is whoever happens to be there.
 */
/* Interrupt entry code: a wakeup whose stack passes through it ran in an interrupt. */
extern const void __irqentry_text_start __ksym __weak;
extern const void __irqentry_text_end __ksym __weak;

/* A stack for the interrupt test when the event carries none. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_stack);
} wake_stack SEC(".maps");

/*
 * In a hard interrupt, current did not wake anyone: it is only the task the interrupt landed on.
 * Told from the kernel stack of the wakeup: it passes through the interrupt entry text. (The
 * preempt count would say it at once, but x86's per-CPU __preempt_count is not in kallsyms,
 * where the verifier looks per-CPU variables up.) A softirq the task ran itself, at the end of a
 * local_bh_disable() section, works on its behalf: a loopback send wakes the receiver so.
 */
static __always_inline bool stack_in_interrupt(const __u64 *ips, long bytes)
{
	__u64 irq_lo = (__u64)&__irqentry_text_start, irq_hi = (__u64)&__irqentry_text_end;
	long nr = bytes / (long)sizeof(__u64);
	int i;

	for (i = 0; i < LS_MAX_DEPTH; i++) {
		if (i >= nr) {
			break;
		}
		if (ips[i] >= irq_lo && ips[i] < irq_hi) {
			return true;
		}
	}
	return false;
}

/*
 * on_task_stack - whether this program runs on @task's own kernel stack: @ctx, the tracepoint's
 * arguments, lies in its caller's frame. x86-64 and arm64 run hard interrupts on the CPU's
 * interrupt stack (softirqs too, but for ksoftirqd), so a wakeup on the task's stack is its own
 * doing. The task's stack ends where its saved user registers begin (task_regs()).
 */
static __always_inline bool on_task_stack(void *ctx, struct task_struct *task)
{
	__u64 lo = (__u64)BPF_CORE_READ(task, stack), hi = (__u64)task_regs(task), at = (__u64)ctx;

	return lo && hi > lo && at >= lo && at < hi;
}

/*
 * Whether the wakeup under way runs in an interrupt, for a hook that has no stack at hand: on
 * the task's own stack it does not (a compare); elsewhere, an interrupt's stack or a softirq's,
 * its walk decides (3 us).
 */
static __always_inline bool waking_in_interrupt(void *ctx)
{
	__u32 zero = 0;
	struct ls_stack *st;
	long len;

	if (on_task_stack(ctx, current_task())) {
		return false;
	}
	st = bpf_map_lookup_elem(&wake_stack, &zero);
	if (!st) {
		return true;
	}
	len = bpf_get_stack(ctx, st->ips, sizeof(st->ips), 0);
	return len <= 0 || stack_in_interrupt(st->ips, len);
}

/*
 * A wakeup on the context stream, when the woken thread is streamed; and who else becomes
 * streamed: its waker (the wait chain runs through it), and the thread a tracked one wakes (a
 * request to a server, whose work the tracked thread will wait for). Interest flows from tracked
 * threads only: a waker of a thread streamed for interest stays streamed no longer than that
 * thread, so two threads of interest never keep each other on the stream.
 * Returns the waker's state when it looked it up (*@looked), for work_handover().
 */
static __always_inline struct task_state *ctx_wakeup(void *ctx, struct task_struct *p,
						     struct task_state *ps, __u64 now, bool *looked)
{
	struct task_struct *cur = current_task();
	struct ls_ctx_stack *st;
	struct task_state *cs;
	struct ls_ctx_record *e;
	bool irq, long_wait;
	__u64 out_ts;
	long len;

	if (streamed(ps, now)) {
		out_ts = ps->out_ts ? ps->out_ts : ps->flushed_out_ts;
		long_wait = out_ts && now - out_ts >= ctx_floor_ns;
		ps->flushed_out_ts = 0;
		if (ctx_level == LS_CTX_FULL && long_wait) {
			ctx_flush_out(p, ps, now, !p->on_cpu);
			e = ctx_reserve();
			if (!e) {
				return NULL;
			}
			ctx_fill(e, LS_CTX_WAKEUP, now, p, cur);
			st = ctx_stack_reserve(e);
			if (st) {
				len = bpf_get_stack(ctx, st->ips, sizeof(st->ips), 0);
				irq = len <= 0 || stack_in_interrupt(st->ips, len);
				e->nr_ips = len > 0 ? len / sizeof(__u64) : 0;
				ctx_stack_done(st);
			} else {
				irq = !task_rd(cur, pid) || cpu_in_hardirq(cur);
			}
			e->arg = irq;
			ctx_submit(e);
		} else {
			/*
			 * A wakeup without the waker's stack (a short wait, or --context sched)
			 * gets the interrupt test without one: the idle task wakes no one itself,
			 * and a hard interrupt on top of a busy CPU's task (a timer that ends a
			 * sleep) is not its doing. Walking the stack to tell (waking_in_interrupt())
			 * cost 3 us per wakeup: --context sched cost more than full.
			 */
			irq = !task_rd(cur, pid) || cpu_in_hardirq(cur);
			e = ctx_reserve();
			if (!e) {
				ps->out_ts = 0;
				return NULL;
			}
			if (ps->out_ts) {
				/* Its held-back switch-out in the same record: one slot, not two. */
				ctx_fill_out(e, LS_CTX_SWITCH_WAKEUP, p, ps, now);
				e->waker_tid = task_rd(cur, pid);
				e->waker_pid = task_rd(cur, tgid);
				copy_comm(e->comm3, cur);
				e->wake_cpu = bpf_get_smp_processor_id();
				e->wake_irq = irq;
			} else {
				ctx_fill(e, LS_CTX_WAKEUP, now, p, cur);
				e->arg = irq;
			}
			ctx_submit(e);
		}
		/* In an interrupt the waker is no one: work_handover() looks no further. */
		*looked = true;
		cs = irq ? NULL : any_state(cur, true);
		if (cs) {
			ctx_interest(cs, cur, p, now,
				     ps->tracked ? now + interest_ns : ps->interest_until,
				     LS_INTEREST_WAKER);
		}
		return cs;
	}
	*looked = true;
	cs = any_state(cur, false);
	if (!cs || !cs->tracked || (p->flags & PF_KTHREAD) || waking_in_interrupt(ctx)) {
		return cs;
	}
	ps = ps ? ps : task_storage_get(&states, p, true);
	if (ps) {
		if (ps->gen != tracking_gen) {
			redecide(ps, p);
		}
		ctx_interest(ps, p, cur, now, now + interest_ns, LS_INTEREST_WAKEE);
	}
	return cs;
}

/* Whether @s waits in a futex for a lock (@args: its syscall's): FUTEX_LOCK_PI, or a wait for 2. */
static __always_inline bool waits_for_lock(const struct task_state *s, const __u64 *args)
{
	return s->nr == futex_nr && ls_futex_waits_for_lock((__u32)args[1], (__u32)args[2]);
}

/*
 * work_handover - a thread outside work, @p (@s), blocked in a syscall and not for a lock, is
 * woken by a thread of its process in a unit of work (a socket's, or a request's; not an
 * interrupt that landed on one): it was handed a part of that work (a job for a pool, a task for
 * a helper thread), so the wait that ends now was a wait for work, and it is in that unit now,
 * until the unit's reply or close (by it or by any thread of the unit), or until it waits again
 * where it waited now (home_key(): a JIT compiler or a collector woken by a worker goes back to
 * wait for its next task without replying). A lock's next owner is handed nothing. @own_stack:
 * the wakeup runs on the waker's own stack (on_task_stack(), which the caller knows already).
 */
static __always_inline void work_handover(void *ctx, struct task_struct *p, struct task_state *s,
					  struct task_state *ws, bool looked, bool own_stack)
{
	struct task_struct *waker = current_task();
	__u64 args[6];
	__u32 tgid;

	if (!looked) {
		ws = task_storage_get(&states, waker, false);
	}
	/*
	 * The waker's notes of this CPU, on its own stack only: elsewhere this may be an
	 * interrupt that came in while its syscall's exit was writing them.
	 */
	if (own_stack) {
		work_log_replay(waker, ws);
	}
	if (!ws || !ws->tracked || !((ws->in_work && ws->work_fd >= 0) || ws->in_req) ||
	    (!own_stack && waking_in_interrupt(ctx))) {
		return;
	}
	if (s->asked_fd1 && s->in_syscall) {
		/*
		 * It reads where it wrote: a client woken by the server's reply to its own request,
		 * not a thread given work (a client and its server under one record, or -a).
		 */
		syscall_args(args, p);
		if (s->asked_fd1 == (__s32)args[0] + 1) {
			return;
		}
	}
	s->work_came = 1;
	tgid = task_rd(p, tgid);
	if (!ws->in_work || ws->work_fd < 0 || (__u32)task_rd(waker, tgid) != tgid || !s->in_syscall ||
	    unit_gen(tgid, ws->work_fd) != ws->work_gen) {
		return;
	}
	syscall_args(args, p);
	if (waits_for_lock(s, args)) {
		return;
	}
	s->in_work = 1;
	s->worked = 1;
	s->work_fd = ws->work_fd;
	s->work_gen = ws->work_gen;
	s->handed = 1;
	s->home_key = home_key(s->nr, args);
}

#define WAKERS_KEPT 4

/* @tid's syscall woke the thread of @s: kept, unless it is the last one kept already. */
static __always_inline void keep_waker(struct task_state *s, __u32 tid)
{
	__u8 last = (s->wakers_next - 1) & (WAKERS_KEPT - 1);

	if (s->wakers[last] != tid) {
		s->wakers[s->wakers_next & (WAKERS_KEPT - 1)] = tid;
		s->wakers_next++;
	}
}

/*
 * Whether the waker under way, a tracked thread, was woken lately by @p (one of its last
 * WAKERS_KEPT wakers): it answers @p. A worker handed a job by a parent, then woken by a sibling
 * (a lock's release), answers the parent all the same.
 */
static __always_inline bool answers_waker(struct task_struct *p)
{
	struct task_state *ws = task_storage_get(&states, current_task(), false);
	__u32 tid = task_rd(p, pid);
	int i;

	if (!ws || !ws->tracked) {
		return false;
	}
	for (i = 0; i < WAKERS_KEPT; i++) {
		if (ws->wakers[i] == tid) {
			return true;
		}
	}
	return false;
}

/*
 * Whether the wakeup under way, run on the waker's own stack, is its syscall's doing: not an
 * interrupt that came from user space (x86 runs those on the interrupted task's stack, whose
 * saved registers then hold no syscall number), not the idle task or a kernel thread.
 */
static __always_inline bool syscall_wakes(void)
{
	struct task_struct *cur = current_task();

	return !(task_rd(cur, flags) & PF_KTHREAD) && user_syscall_nr(task_regs(cur)) >= 0;
}

/*
 * Whether the wakeup under way is the exit of a process @p started (its child, or a child's
 * child: a shell between them): its pipes closing, its SIGCHLD. A wait it ends is the caller
 * waiting for work it started (Node's execSync in epoll_wait, a waitpid), not for work to come.
 */
static __always_inline bool woken_by_child_exit(struct task_struct *p)
{
	struct task_struct *cur = current_task(), *t = cur;
	__u32 tgid = task_rd(p, tgid);
	int i;

	if (!(task_rd(cur, flags) & PF_EXITING) || (__u32)task_rd(cur, tgid) == tgid) {
		return false;
	}
	for (i = 0; i < 3; i++) {
		t = BPF_CORE_READ(t, real_parent);
		if (!t) {
			return false;
		}
		/* real_parent is read as a plain pointer: probe-read, not dereferenced. */
		if ((__u32)BPF_CORE_READ(t, tgid) == tgid) {
			return true;
		}
	}
	return false;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ls_sched_waking, struct task_struct *p)
{
	struct task_state *s, *ws = NULL;
	struct ls_event *acc;
	__u64 now = 0, delta;
	bool looked = false, own_stack;
	__u8 fd_wait;
	int slot;

	s = any_state(p, false);
	if (ctx_level != LS_CTX_NONE) {
		now = clock_now();
		ws = ctx_wakeup(ctx, p, s, now, &looked);
	}
	if (!s || !s->tracked || s->run_state != RS_BLOCKED) {
		return 0;
	}
	own_stack = on_task_stack(ctx, current_task());
	if (s->quiet && s->in_syscall && s->nr >= 0 && s->nr < LS_MAX_SYSCALLS) {
		fd_wait = fd_wait_syscalls[s->nr & (LS_MAX_SYSCALLS - 1)];
		/*
		 * An idle-list wait for descriptors that a child's exit ends (Node's execSync in
		 * epoll_wait, its pipes closing) is latency, and so is a poll or select that the
		 * thread it woke last ends (a parent waiting for the answers of the worker
		 * processes it handed jobs over pipes): the idle policy judges them. Not an
		 * event loop's epoll_wait: its upstream's answer is one event among its others.
		 */
		if ((fd_wait && woken_by_child_exit(p)) ||
		    (fd_wait == FD_WAIT && own_stack && syscall_wakes() && answers_waker(p))) {
			s->quiet = 0;
		}
	}
	if (own_stack && syscall_wakes()) {
		keep_waker(s, (__u32)bpf_get_current_pid_tgid());
	}
	if (s->handed && handed_unit_over(p, s)) {
		/* Out of the unit, it may be handed the next one by this wakeup. */
		s->in_work = 0;
		s->work_at_start = 0;
	}
	if (!s->in_work && !s->work_came) {
		work_handover(ctx, p, s, ws, looked, own_stack);
	}
	if (!now) {
		now = clock_now();
	}
	delta = advance(s, now);
	s->blocked += delta;
	s->run_state = RS_RUNNABLE;
	if (!wait_is_long(s, now) || s->throttled_until > now) {
		return 0;
	}
	acc = accum_get(s, p);
	if (!acc) {
		return 0;
	}
	slot = s->cur_slot;
	if (slot < 0 && !p->on_cpu) {
		/*
		 * The wait grew long while the thread slept: its stack still shows where. A thread
		 * still on its CPU, finishing its switch out, has no stack to read and no wait.
		 */
		slot = capture_wait_stack(acc, p);
	}
	charge_slot(acc, slot, delta);
	s->cur_slot = -1;
	record_waker(acc, ctx);
	return 0;
}

#endif /* LATSNAP_BPF_WAKEUP_BPF_H */
