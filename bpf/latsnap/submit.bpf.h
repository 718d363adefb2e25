/* SPDX-License-Identifier: GPL-2.0 */
/*
 * submit.bpf.h - an outlier's submission, the preload library's report, and its registration
 * calls. A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_SUBMIT_BPF_H
#define LATSNAP_BPF_SUBMIT_BPF_H

/*
 * submit_from - send @task's outlier of @kind that ended at @end (@ret: a syscall's return). A
 * syscall ends in its thread's context, a sleep in its successor's (@current false), or in its
 * own at the end of its switch in (owe_walk()): its user stack is then walked, and its signal
 * goes at once.
 */
static __always_inline void submit_from(void *ctx, struct task_struct *task, struct task_state *s,
					__u8 kind, __u64 end, long ret, bool current)
{
	bool signal;
	__u32 tid = task_rd(task, pid), part;
	struct ls_event *e;

	if (!within_share(task, s, end)) {
		return;
	}
	part = request_part(task, s, kind, end, &signal);
	/*
	 * A sleep whose switch-in went unseen ends later, at a hook of the thread's own: a signal
	 * from there would unwind where it is now, not where it waited. Its stack is the frame kept
	 * at its switch-out.
	 */
	if (!current && s->unseen_switch) {
		signal = false;
	}
	e = s->has_accum ? bpf_map_lookup_elem(&accum, &tid) : NULL;
	if (e) {
		fill_event(e, task, s, kind, end, ret);
		e->flags |= part | work_flags(s);
		capture_user_stack(e, task, s, ctx, current);
		if (!restarting(ret) && signal) {
			ask_unwind(task, s, e, current);
		}
		if (bpf_ringbuf_output(&events, e, sizeof(*e), 0)) {
			stat_inc(LS_STAT_RINGBUF_LOST);
			return;
		}
		stat_inc(LS_STAT_OUTLIERS);
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		return;
	}
	fill_event(e, task, s, kind, end, ret);
	e->nr_stacks = 0;
	e->has_waker = 0;
	e->flags = (s->accum_lost ? LS_EF_ACCUM_FULL : 0) |
		   (s->unseen_switch ? LS_EF_SWITCH_UNSEEN : 0) |
		   (s->clock_back ? LS_EF_CLOCK_BACK : 0) | part | work_flags(s);
	e->stacks_dropped = 0;
	capture_user_stack(e, task, s, ctx, current);
	if (!restarting(ret) && signal) {
		ask_unwind(task, s, e, current);
	}
	bpf_ringbuf_submit(e, 0);
	stat_inc(LS_STAT_OUTLIERS);
}

static __always_inline void submit(void *ctx, struct task_struct *task, struct task_state *s,
				   __u8 kind, __u64 end, long ret)
{
	submit_from(ctx, task, s, kind, end, ret, kind == LS_KIND_SYSCALL);
}

/*
 * report_unwound - pass on the stack the preload library unwound for a signal latsnap sent this
 * thread, numbered as the signal it answers. The handler runs with the signal blocked, so no
 * signal is sent during it; but one sent after the kernel took the previous one and before it
 * blocked it (the thread slept writing the signal frame: a page fault while another thread
 * forks, say) waits pending while this handler runs, and its own handler answers it next. A
 * report answers the last signal sent, or the one before it while another is pending. Only one
 * report per signal is taken, so that a process cannot flood the ring or pin a stack of its
 * choosing on an outlier it was not signalled for.
 */
static __always_inline void report_unwound(struct task_struct *task, struct pt_regs *regs)
{
	struct task_state *s = task_storage_get(&states, task, false);
	__u32 tgid = task_rd(task, tgid), seq;
	struct ls_registration *reg;
	struct ls_unwound *u;
	void *report;
	__u64 arg;

	reg = bpf_map_lookup_elem(&registered, &tgid);
	if (!s || !reg || !valid_signal(reg->sig)) {
		stat_inc(LS_STAT_UNWOUND_REFUSED);
		return;
	}
	seq = s->signals_sent;
	if (BPF_CORE_READ(task, pending.signal.sig[0]) & (1ULL << ((reg->sig - 1) & 63))) {
		seq--;
	}
	/* Signed: the counts may wrap. */
	if ((__s32)(seq - s->signal_answered) <= 0) {
		stat_inc(LS_STAT_UNWOUND_REFUSED);
		return;
	}
	s->signal_answered = seq;
	u = bpf_ringbuf_reserve(&events, sizeof(*u), 0);
	if (!u) {
		s->reports_lost++;
		stat_inc(LS_STAT_RINGBUF_LOST);
		return;
	}
	arg = PT_REGS_PARM4_CORE_SYSCALL(regs);
	u->kind = LS_KIND_UNWOUND;
	u->status = (arg >> 16) & 0xff;
	u->truncated = (arg >> 24) & 1;
	u->rt_state = LS_UNWOUND_RT_STATE(arg);
	u->pid = task_rd(task, tgid);
	u->tid = task_rd(task, pid);
	u->seq = seq;
	u->lost_before = s->reports_lost;
	s->reports_lost = 0;
	u->nr = arg & 0xffff;
	if (u->nr > LS_UNWOUND_MAX_DEPTH) {
		u->nr = LS_UNWOUND_MAX_DEPTH;
	}
	/* The whole report: the library always passes one, its array full size. */
	report = (void *)PT_REGS_PARM3_CORE_SYSCALL(regs);
	if (bpf_probe_read_user(&u->report, sizeof(u->report), report)) {
		u->nr = 0;
		u->status = LS_UNWIND_FAILED;
		u->report.unwind_ns = 0;
	}
	bpf_ringbuf_submit(u, 0);
	stat_inc(LS_STAT_UNWOUND);
}

/*
 * A registration call from the preload library (see LS_PRCTL_OPTION). The caller is current:
 * it can register, unregister or quiet only itself. Its arguments are read with libbpf's syscall
 * macros, which know where each architecture passes them (x86 the fourth in r10, not rcx).
 */
static __always_inline void handle_prctl(struct task_struct *task, struct pt_regs *regs)
{
	struct ls_registration reg = {};
	__u32 tgid = task_rd(task, tgid), tid = task_rd(task, pid), reason = LS_TRACK_REGISTERED;
	struct task_state *s;
	__u64 op, sig;
	__u8 one = 1;

	if (PT_REGS_PARM1_CORE_SYSCALL(regs) != LS_PRCTL_OPTION ||
	    PT_REGS_PARM5_CORE_SYSCALL(regs) != LS_ABI_VERSION) {
		return;
	}
	op = PT_REGS_PARM2_CORE_SYSCALL(regs);
	if (op == LS_PRCTL_UNREGISTER) {
		bpf_map_delete_elem(&registered, &tgid);
		return;
	}
	if (op == LS_PRCTL_USER_STACK) {
		report_unwound(task, regs);
		return;
	}
	if (op == LS_PRCTL_RUNTIME) {
		struct ls_registration *r = bpf_map_lookup_elem(&registered, &tgid);

		if (r) {
			r->runtime = (__u32)PT_REGS_PARM3_CORE_SYSCALL(regs);
		}
		return;
	}
	if (op == LS_PRCTL_QUIET_THREAD) {
		bpf_map_update_elem(&quiet_tids, &tid, &one, BPF_ANY);
		s = task_storage_get(&states, task, false);
		if (s) {
			s->gen = 0;
		}
		return;
	}
	if (op != LS_PRCTL_REGISTER) {
		return;
	}
	sig = PT_REGS_PARM3_CORE_SYSCALL(regs);
	reg.handler = PT_REGS_PARM4_CORE_SYSCALL(regs);
	/* SIG_DFL (0) and SIG_IGN (1) are no handlers: they would "match" a signal left alone. */
	if (!valid_signal(sig) || reg.handler <= 1 || installed_handler(task, sig) != reg.handler) {
		if (bpf_map_update_elem(&refused_noticed, &tgid, &one, BPF_NOEXIST) == 0) {
			notify(LS_NOTICE_REFUSED, tgid, (__u32)bpf_get_current_uid_gid());
		}
		return;
	}
	reg.sig = sig;
	if (bpf_map_update_elem(&registered, &tgid, &reg, BPF_ANY)) {
		return;
	}
	bpf_map_delete_elem(&displaced_noticed, &tgid);
	if (track_registered && !bpf_map_lookup_elem(&tracked, &tgid)) {
		bpf_map_update_elem(&tracked, &tgid, &reason, BPF_NOEXIST);
		__sync_fetch_and_add(&tracking_gen, 1);
	}
	notify(LS_NOTICE_REGISTERED, tgid, sig);
}

#endif /* LATSNAP_BPF_SUBMIT_BPF_H */
