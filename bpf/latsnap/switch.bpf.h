/* SPDX-License-Identifier: GPL-2.0 */
/*
 * switch.bpf.h - context switches: off-CPU intervals, the context stream's switches, owed signals
 * and walks. A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_SWITCH_BPF_H
#define LATSNAP_BPF_SWITCH_BPF_H

/* The wait under way began at s->start; is it long enough to be worth a stack? */
static __always_inline bool wait_is_long(struct task_state *s, __u64 now)
{
	__u64 limit = s->in_req ? ctx_floor_ns : s->in_syscall ? threshold_ns : sleep_threshold_ns;

	return !s->quiet && now > s->start && now - s->start >= limit / 2;
}

/*
 * ctx_flush_out - send @task's held-back switch-out, with its stack when the wait it began
 * lasted at least the context floor (a stack walk costs microseconds: only waits that may be
 * in a wait chain pay for one). @task must be off CPU for its stack to be read: a wakeup that
 * finds it still switching out, or its own switch-in, sends it without.
 */
/* @e, of @kind: @task's held-back switch-out, written @now; it is held no longer. */
static __always_inline void ctx_fill_out(struct ls_ctx_record *e, __u8 kind,
					 struct task_struct *task, struct task_state *s, __u64 now)
{
	ctx_fill(e, kind, s->out_ts, task, NULL);
	e->cpu = s->out_cpu;
	e->at = now; /* written now, about a switch at out_ts */
	e->tid2 = s->out_next_tid;
	e->pid2 = s->out_next_pid;
	__builtin_memcpy(e->comm2, s->out_next_comm, sizeof(e->comm2));
	e->arg = s->out_state;
	e->nr = s->out_nr;
	s->out_ts = 0;
}

static __always_inline void ctx_flush_out(struct task_struct *task, struct task_state *s, __u64 now,
					  bool stack_readable)
{
	struct ls_ctx_record *e;
	struct ls_ctx_stack *st;
	bool long_wait;
	long len;

	if (!s->out_ts) {
		return;
	}
	long_wait = stack_readable && now - s->out_ts >= ctx_floor_ns;
	e = ctx_reserve();
	if (!e) {
		s->out_ts = 0;
		return;
	}
	ctx_fill_out(e, LS_CTX_SWITCH, task, s, now);
	st = long_wait ? ctx_stack_reserve(e) : NULL;
	if (st) {
		len = bpf_get_task_stack(task, st->ips, sizeof(st->ips), 0);
		e->nr_ips = len > 0 ? len / sizeof(__u64) : 0;
		ctx_stack_done(st);
	}
	ctx_submit(e);
}

/*
 * The switch on the context stream, if either side is streamed. A streamed thread that blocks
 * is held back (in its state) until its wakeup, so that its stack is taken only if the wait
 * turns out long, in the full stream; the rest goes out at once.
 */
static __always_inline void ctx_switch(struct task_struct *prev, struct task_state *ps,
				       struct task_struct *next, struct task_state *ns,
				       bool preempt, unsigned int prev_state, __u64 now)
{
	bool runnable = preempt || prev_state == TASK_RUNNING, prev_streamed;
	struct ls_ctx_record *e;
	__s64 nr = -1;

	/* A switch-in whose wakeup went unseen: what was held back goes now, without a stack. */
	if (ns && ns->out_ts) {
		ctx_flush_out(next, ns, now, false);
	}
	prev_streamed = streamed(ps, now);
	if (!prev_streamed && !streamed(ns, now)) {
		return;
	}
	if (ps && ps->tracked && ps->in_syscall) {
		nr = ps->nr;
	} else if (ps && ps->sc_active) {
		nr = ps->sc_nr;
	}
	if (prev_streamed && !runnable && ctx_level == LS_CTX_FULL) {
		if (ps->out_ts) {
			ctx_flush_out(prev, ps, now, false);
		}
		ps->out_ts = now;
		ps->flushed_out_ts = 0;
		ps->out_nr = nr;
		ps->out_state = prev_state;
		ps->out_cpu = bpf_get_smp_processor_id();
		ps->out_next_tid = next->pid;
		ps->out_next_pid = next->tgid;
		copy_comm(ps->out_next_comm, next);
		return;
	}
	e = ctx_reserve();
	if (!e) {
		return;
	}
	ctx_fill(e, LS_CTX_SWITCH, now, prev, next);
	e->preempted = preempt;
	e->arg = prev_state;
	e->nr = nr;
	ctx_submit(e);
}

/*
 * A thread owed a signal (owe_signal()) that is switched out again before the end of the switch
 * that brought it in was reached in its own context (fexit on schedule(): schedule() loops while
 * another preemption is due, as under CPU contention): its signal is kept in its state, and owed
 * again at its next switch-in, where it will get there.
 */
static __always_inline void owed_carry(struct task_struct *prev, struct task_state *ps)
{
	struct ls_owed_signal *o = &owed_signals[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)];

	if (o->task == (__u64)prev) {
		if (ps) {
			ps->sig_owed = (__u8)o->sig;
		}
		o->task = 0;
	}
}

static __always_inline void owed_restore(struct task_struct *next, struct task_state *s)
{
	struct ls_owed_signal *o = &owed_signals[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)];

	if (s->sig_owed) {
		o->task = (__u64)next;
		o->sig = s->sig_owed;
		s->sig_owed = 0;
	}
}

/*
 * Whether @task's poll or select (not an epoll_wait) is its language runtime's own wait, which
 * the preload library tells apart (LS_PRCTL_RUNTIME): Ruby's thread that holds the signal pipe
 * sleeps and joins in a ppoll. The idle policy judges it, with the thread's status.
 */
static __always_inline bool runtime_polls(struct task_struct *task, struct task_state *s)
{
	__u32 tgid = task_rd(task, tgid);
	struct ls_registration *reg;

	if (s->nr < 0 || s->nr >= LS_MAX_SYSCALLS ||
	    fd_wait_syscalls[s->nr & (LS_MAX_SYSCALLS - 1)] != FD_WAIT) {
		return false;
	}
	reg = bpf_map_lookup_elem(&registered, &tgid);
	return reg && reg->runtime == LS_RUNTIME_RUBY;
}

/* The long interval of @next, switched in now, is sent from the end of this switch. */
static __always_inline void owe_walk(struct task_struct *next)
{
	owed_signals[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)].walk_task = (__u64)next;
}

static __always_inline bool walk_owed_to(struct task_struct *task)
{
	return owed_signals[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)].walk_task ==
	       (__u64)task;
}

static __always_inline void walk_owed_clear(void)
{
	owed_signals[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)].walk_task = 0;
}

static __always_inline int sched_switch(void *ctx, bool preempt, struct task_struct *prev,
					struct task_struct *next, unsigned int prev_state)
{
	bool runnable = preempt || prev_state == TASK_RUNNING;
	struct ls_cpu_verdict *v;
	struct task_state *ps, *s;
	struct ls_event *acc;
	__u64 now = 0;
	__u32 tid;
	int slot;

	ps = (prev->flags & PF_EXITING) || verdict_cold(prev) ? NULL : any_state(prev, true);
	/* Its socket syscalls' notes, before its syscall's start reads whether it is in work. */
	work_log_replay(prev, ps);
	v = this_verdict();
	/* A syscall whose entry kept no clock is timed from here: one clock read for both. */
	if (v->sc_task == (__u64)prev && v->sc_rt) {
		now = clock_now();
	}
	syscall_flush(v, prev, ps, now);
	owed_carry(prev, ps);
	s = any_state(next, false);
	if (s) {
		verdict_set(next, s->gen, state_cold(s));
		owed_restore(next, s);
	} else {
		verdict_set(next, 0, false);
	}
	if (ctx_level != LS_CTX_NONE) {
		if (!now) {
			now = clock_now();
		}
		ctx_switch(prev, ps, next, s, preempt, prev_state, now);
	}
	if (ps && ps->tracked) {
		if (!now) {
			now = clock_now();
		}
		tid = prev->pid;
		sleep_came_back(ctx, prev, ps, now);
		if (ps->in_syscall) {
			on_cpu_since_last(prev, ps, now);
			/* Its wait begins: the syscall's entry did not know where it would wait. */
			if (!ps->switches && (ps->in_work || ps->work_at_start)) {
				work_begin(prev, ps, ps->nr);
				/*
				 * Inside a unit of work an idle-list syscall is no wait for work (a
				 * PostgreSQL backend waits for a row lock in epoll_wait): the idle
				 * policy judges it as any other wait. An accept waits for the next
				 * connection wherever it is (an acceptor that read a request and
				 * handed it on is in that unit until its reply).
				 */
				ps->quiet = ps->quiet && !(ps->work_at_start && !accepts(ps->nr));
			} else if (!ps->switches) {
				idle_wait_begin(prev, ps, ps->nr);
			}
			if (!ps->switches && ps->quiet && runtime_polls(prev, ps)) {
				ps->quiet = 0;
			}
			ps->switches++;
		} else if (walk_owed_to(prev)) {
			/*
			 * Switched out again before the end of its switch in (schedule() loops
			 * while a preemption is due): it ran no user code, so its interval goes on,
			 * owed its walk at its next switch in.
			 */
			walk_owed_clear();
			ps->runq += advance(ps, now);
		} else {
			/* An off-CPU interval outside any syscall starts here. */
			accum_drop(ps, tid);
			save_user_ip(ctx, prev, ps, now, !preempt);
			ps->start = now;
			ps->on_cpu = 0;
			ps->blocked = 0;
			ps->runq = 0;
			ps->switches = 1;
			ps->quiet = 0;
			ps->unseen_switch = 0;
			ps->clock_back = 0;
			ps->last = now;
			work_begin(prev, ps, -1);
			ps->work_came = 0;
		}
		ps->run_state = runnable ? RS_RUNNABLE : RS_BLOCKED;
		ps->cur_slot = -1;
		if (!runnable) {
			notice_maps_once(ps, prev->tgid);
		}
		if (!runnable && wait_is_long(ps, now) && ps->throttled_until <= now) {
			acc = accum_get(ps, prev);
			if (acc) {
				slot = capture_wait_stack(acc, prev);
				ps->cur_slot = slot;
			}
		}
	}

	if (!s || !s->tracked) {
		/* Not tracked: streamed for interest, its syscalls may start in the cache. */
		if (s && now && !state_cold(s)) {
			verdict_fast(next, s, now);
		}
		return 0;
	}
	if (!now) {
		now = clock_now();
	}
	tid = next->pid;
	if (s->run_state == RS_RUNNABLE) {
		s->runq += advance(s, now);
	} else if (s->run_state == RS_BLOCKED) {
		/* Its wakeup went unseen (tracking began while it slept): count it as blocked. */
		s->blocked += advance(s, now);
	} else {
		s->run_state = RS_RUNNING;
		s->last = now;
		goto out;
	}
	s->run_state = RS_RUNNING;
	if (!s->in_syscall) {
		if (s->last - s->start >= (s->in_req ? ctx_floor_ns : sleep_threshold_ns)) {
			if (s->sleep_walk && s->sleep_start == s->start) {
				/* Sent at the end of this switch, with its walk (ls_sched_exit). */
				owe_walk(next);
				goto out;
			}
			submit(ctx, next, s, LS_KIND_SLEEP, s->last, 0);
		}
		accum_drop(s, tid);
	}
out:
	/* Back in a syscall it blocked in, it ends the slow way: its exit drops what it kept. */
	if (!s->in_syscall) {
		verdict_fast(next, s, now);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ls_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return sched_switch(ctx, preempt, prev, next, prev_state);
}

/* Before Linux 5.18 the tracepoint did not pass prev_state (user space picks one of the two). */
SEC("tp_btf/sched_switch")
int BPF_PROG(ls_sched_switch_3, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return sched_switch(ctx, preempt, prev, next, task_run_state(prev));
}

/*
 * send_owed_signal - at the end of a switch, in the context of the thread switched in: the
 * signal it is owed (see struct ls_owed_signal) goes from here, before it runs user code again.
 * Every other switch ends at the first test.
 */
/*
 * The long interval owed its walk (owe_walk()) of current, the thread switched in by the switch
 * that ends here: sent now, walked here. A function of its own, so that the program every switch
 * of the machine runs keeps its small frame.
 */
static __noinline int send_owed_walk(void *ctx, __u64 owed)
{
	struct task_struct *task = current_task();
	struct task_state *s;

	s = owed == (__u64)task ? task_storage_get(&states, task, false) : NULL;
	if (s && s->sleep_walk) {
		s->sleep_walk = 0;
		stat_inc(LS_STAT_USER_WALKS_DEFERRED);
		submit_from(ctx, task, s, LS_KIND_SLEEP, s->last, 0, true);
		accum_drop(s, task_rd(task, pid));
	}
	return 0;
}

static __always_inline int send_owed_signal(void *ctx)
{
	struct ls_owed_signal *o = &owed_signals[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)];
	struct task_state *s;
	__u64 owed;
	long err;

	if (!o->task && !o->walk_task) {
		return 0;
	}
	if (o->walk_task) {
		owed = o->walk_task;
		o->walk_task = 0;
		send_owed_walk(ctx, owed);
		if (!o->task) {
			return 0;
		}
	}
	if (o->task != (__u64)current_task()) {
		/* Not the thread it was for: that switch-in was undone before it ran. */
		o->task = 0;
		stat_inc(LS_STAT_SIGNAL_REFUSED);
		return 0;
	}
	o->task = 0;
	err = bpf_send_signal_thread(o->sig);
	if (err == -EBUSY) {
		stat_inc(LS_STAT_SIGNAL_BUSY);
	} else if (err) {
		stat_inc(LS_STAT_SIGNAL_REFUSED);
	} else {
		stat_inc(LS_STAT_SIGNALS);
		/* The number its outlier was given (signal_preload()); unsent, the next has it. */
		s = task_storage_get(&states, current_task(), false);
		if (s) {
			s->signals_sent++;
		}
	}
	return 0;
}

/*
 * The end of __schedule() (Linux 6.15). Attached only when processes may carry the preload
 * library (not with --no-preload and a COMMAND): it runs at every switch of the machine.
 */
SEC("tp_btf/sched_exit_tp")
int BPF_PROG(ls_sched_exit, bool is_switch)
{
	return send_owed_signal(ctx);
}

/*
 * Where sched_exit_tp is missing (before 6.15): the return from schedule(), through ftrace.
 * A thread that blocked or was preempted on its way back to user space, which is every sleep
 * outside a syscall that is not a preemption inside the kernel, comes back through it, on the
 * CPU that switched it in unless it is preempted again first (then its signal is counted as
 * refused, and its outlier keeps its frame-pointer walk). IRQs are on here: the signal goes at
 * once, not through the irq_work slot.
 */
SEC("fexit/schedule")
int BPF_PROG(ls_schedule_exit)
{
	return send_owed_signal(ctx);
}

#endif /* LATSNAP_BPF_SWITCH_BPF_H */
