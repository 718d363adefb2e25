/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracking.bpf.h - which threads are tracked: the per-CPU verdict cache, the targets, the state
 * lookups. A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_TRACKING_BPF_H
#define LATSNAP_BPF_TRACKING_BPF_H

/*
 * Per CPU, the task last seen running there and whether it is cold: neither tracked nor ever of
 * interest to the context stream, as nearly every thread on the machine is. The syscall hooks of
 * a cold thread then end without a task storage lookup. Keyed by the task and the tracking
 * generation, so that a stale entry (a switch the recursion guard hid, a thread tracked since)
 * only sends the hook the slow way. One cache line per CPU: each CPU writes its own at every
 * switch.
 */
struct ls_cpu_verdict verdicts[LS_VERDICT_CPUS] __attribute__((aligned(64)));

static __always_inline bool verdict_cold(struct task_struct *task)
{
	struct ls_cpu_verdict *v = &verdicts[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)];

	return v->task == (__u64)task && v->gen == tracking_gen && v->cold;
}

static __always_inline struct ls_cpu_verdict *this_verdict(void)
{
	return &verdicts[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)];
}

static __always_inline void verdict_set(struct task_struct *task, __u32 gen, bool cold)
{
	struct ls_cpu_verdict *v = this_verdict();

	v->task = (__u64)task;
	v->gen = gen;
	v->cold = cold;
	v->fast = 0;
	v->sc_task = 0;
}

/*
 * After its state changed in task storage: may the next syscall of @task, running here, start
 * in the per-CPU cache (syscall_enter_fast())? A tracked thread with no outlier in the making
 * (whose entry would have an accumulation to drop); and a thread streamed for interest (the
 * waker of a tracked one, a server it calls) while the full stream runs, whose syscalls go on
 * the stream only if they last the context floor: outside a syscall held in its state, at a
 * time @now (0: unknown) before its interest ends. It stays fast until its next switch-in
 * decides again, at most a time slice past the end of its interest: nothing of it is kept
 * then but a syscall event of the context stream.
 */
static __always_inline void verdict_fast(struct task_struct *task, struct task_state *s, __u64 now)
{
	struct ls_cpu_verdict *v = this_verdict();

	if (v->task != (__u64)task || v->gen != s->gen) {
		return;
	}
	if (s->tracked) {
		v->fast = !s->has_accum && !s->in_req ? LS_FAST_TRACKED : LS_FAST_NONE;
	} else {
		v->fast = ctx_level == LS_CTX_FULL && now && s->interest_until > now &&
					  !s->sc_active ?
				  LS_FAST_STREAMED :
				  LS_FAST_NONE;
	}
}

/* @task stops being cold: the entry of the CPU it last ran on no longer says so. */
static __always_inline void verdict_forget(struct task_struct *task)
{
	struct ls_cpu_verdict *v = &verdicts[task_cpu(task) & (LS_VERDICT_CPUS - 1)];

	if (v->task == (__u64)task) {
		v->task = 0;
	}
}

/*
 * Per CPU, a thread just switched in whose signal the kernel would not send from its
 * predecessor's context: ls_sched_exit() sends it from the thread's own, at the end of the same
 * switch. One cache line per CPU, as verdicts.
 */
struct ls_owed_signal {
	__u64 task;
	__u32 sig;
	/*
	 * A thread just switched in whose long interval outside any syscall waits for its user
	 * stack (save_user_ip()): its outlier goes from ls_sched_exit(), in its own context.
	 */
	__u64 walk_task;
	__u8 pad[40];
};

static struct ls_owed_signal owed_signals[LS_VERDICT_CPUS] __attribute__((aligned(64)));

static __always_inline void stat_inc(__u32 key)
{
	__u64 *count = bpf_map_lookup_elem(&stats, &key);

	if (count) {
		(*count)++;
	}
}

/*
 * Kernel threads, latsnap itself, the tracer's threads and the processes of quiet_tgids (LTTng's
 * daemons, latsnap's helpers, another latsnap): never tracked, whatever the target.
 */
static __always_inline bool never_tracked(struct task_struct *task)
{
	__u32 tid = task_rd(task, pid), tgid = task_rd(task, tgid);

	if (task_rd(task, flags) & PF_KTHREAD) {
		return true;
	}
	return bpf_map_lookup_elem(&quiet_tids, &tid) || tgid == self_tgid ||
	       bpf_map_lookup_elem(&quiet_tgids, &tgid);
}

/* Deeper cgroups than this are not looked up past (systemd's trees are a handful deep). */
#define LS_MAX_CGROUP_DEPTH 32

/*
 * in_wanted_cgroup - is @task's cgroup of the default (v2) hierarchy, or an ancestor of it, one of
 * record --cgroup's? Read from the task itself, not from current (bpf_get_current_ancestor_
 * cgroup_id() would be current's): decide_tracked() also runs for a task being woken or switched.
 * A cgroup's id is its kernfs node's, the directory's inode number; the walk goes up through
 * the parent of its own css (cgroup->self), which every kernel with cgroup v2 has.
 */
static __always_inline bool in_wanted_cgroup(struct task_struct *task)
{
	struct cgroup_subsys_state *parent;
	struct cgroup *cgrp;
	__u64 id;
	int i;

	cgrp = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	for (i = 0; i < LS_MAX_CGROUP_DEPTH && cgrp; i++) {
		id = BPF_CORE_READ(cgrp, kn, id);
		if (bpf_map_lookup_elem(&want_cgroups, &id)) {
			return true;
		}
		parent = BPF_CORE_READ(cgrp, self.parent);
		cgrp = parent ? BPF_CORE_READ(parent, cgroup) : NULL;
	}
	return false;
}

/* has_wanted_comm - is the name of @task's process (its group leader's comm) one of --comm's? */
static __always_inline bool has_wanted_comm(struct task_struct *task)
{
	struct ls_comm key = {};

	bpf_probe_read_kernel_str(key.name, sizeof(key.name),
				  BPF_CORE_READ(task, group_leader, comm));
	return bpf_map_lookup_elem(&want_comms, &key) != NULL;
}

/*
 * decide_tracked - whether @task is tracked: any target that matches (a tracked process, -p or
 * COMMAND or a child of one, or a registered one; a wanted cgroup; a wanted name). Runs once per
 * task and tracking generation (any_state()), so the cgroup walk and the name's lookup stay off
 * the hot path; the targets off (rodata) are left out by the verifier.
 */
static __always_inline bool decide_tracked(struct task_struct *task)
{
	__u32 tgid = task_rd(task, tgid);

	if (never_tracked(task)) {
		return false;
	}
	if (track_all || bpf_map_lookup_elem(&tracked, &tgid)) {
		return true;
	}
	if (track_cgroups && in_wanted_cgroup(task)) {
		return true;
	}
	return track_comms && has_wanted_comm(task);
}

/*
 * redecide - @task's answer for this tracking generation. A thread can also stop being tracked
 * (moved out of a --cgroup, renamed by exec away from a --comm) and start again later: what its
 * state says of a syscall or a wait under way is stale then, and starts over as for a new thread.
 */
static __always_inline void redecide(struct task_state *s, struct task_struct *task)
{
	/*
	 * The generation first, then the answer. User space adds a target, then bumps the
	 * generation (tracker_track_pid()): a thread that looked the target up before the add
	 * and read the generation after the bump kept "untracked" for a generation that had the
	 * target, for good. A COMMAND's child deciding at its first syscall while latsnap marked
	 * it, then never tracked (05-kernel a) and b) in a 6.1 guest, 3 runs of 84). Read before,
	 * a bump under way leaves an old generation here: the next hook decides again. x86-64
	 * keeps the two loads in order; arm64 may not, and BPF had no load-acquire before 6.15.
	 */
	__u32 gen = *(volatile __u32 *)&tracking_gen;
	bool tracked;

	asm volatile("" ::: "memory");
	tracked = decide_tracked(task);
	s->gen = gen;
	if (tracked != s->tracked) {
		s->tracked = tracked;
		s->in_syscall = 0;
		s->run_state = RS_UNKNOWN;
	}
	s->cur_slot = -1;
}

/*
 * The state of a task, tracked or not, or NULL. Only where @task is current may an entry be
 * created: that keeps the decision, made once per thread and tracking generation, off the wakeup
 * path. A kernel thread (the idle task too) has none: never tracked nor streamed, it costs a
 * switch or a wakeup no task storage lookup.
 */
static __always_inline struct task_state *any_state(struct task_struct *task, bool create)
{
	struct task_state *s;

	if (task_rd(task, flags) & PF_KTHREAD) {
		return NULL;
	}
	s = task_storage_get(&states, task, create);
	if (!s) {
		if (create) {
			stat_inc(LS_STAT_STORAGE_FAILED);
		}
		return NULL;
	}
	if (s->gen != tracking_gen) {
		redecide(s, task);
	}
	return s;
}

/* The state of a tracked task, or NULL. */
static __always_inline struct task_state *task_state(struct task_struct *task, bool create)
{
	struct task_state *s = any_state(task, create);

	return s && s->tracked ? s : NULL;
}

/* Neither tracked nor ever of interest: its hooks have nothing to do. */
static __always_inline bool state_cold(struct task_state *s)
{
	return !s->tracked && !s->interest_until;
}

/* Is @s's thread on the context stream (tracked, or of interest until later than @now)? */
static __always_inline bool streamed(struct task_state *s, __u64 now)
{
	return s && ((s->tracked && s->throttled_until <= now) || s->interest_until > now);
}

#endif /* LATSNAP_BPF_TRACKING_BPF_H */
