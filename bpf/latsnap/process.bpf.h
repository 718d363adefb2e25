/* SPDX-License-Identifier: GPL-2.0 */
/*
 * process.bpf.h - processes: fork, exit, cgroup moves, exec. A part of latsnap.bpf.c, which
 * includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_PROCESS_BPF_H
#define LATSNAP_BPF_PROCESS_BPF_H

/*
 * A forked process has its parent's handler, at the same address (the kernel copies the signal
 * actions): it is registered as its parent was, without a word from the library. Its exec, if
 * any, ends that (ls_sched_process_exec). Tracked like any process in track_registered mode.
 */
static __always_inline void inherit_registration(__u32 parent_tgid, __u32 child_tgid)
{
	__u32 reason = LS_TRACK_REGISTERED;
	struct ls_registration *reg;

	reg = bpf_map_lookup_elem(&registered, &parent_tgid);
	if (!reg || reg->displaced) {
		return;
	}
	if (bpf_map_update_elem(&registered, &child_tgid, reg, BPF_ANY)) {
		return;
	}
	/* A new task has no cached verdict: no need to make every thread decide again. */
	if (track_registered) {
		bpf_map_update_elem(&tracked, &child_tgid, &reason, BPF_NOEXIST);
	}
}

/*
 * work_inherit - a thread in a unit of work starts a thread, @child: it is in that unit, as if
 * handed it (a pool that starts its workers on demand hands the first job to the thread it
 * starts for it, which may run it without ever waiting to be handed it). It leaves the unit as a
 * handed thread does, but has no place to go back to (home_key() is never ~0).
 */
static __always_inline void work_inherit(struct task_struct *parent, struct task_struct *child)
{
	struct task_state *ps = task_storage_get(&states, parent, false), *cs;

	work_log_replay(parent, ps);
	if (!ps || !ps->tracked || !ps->in_work || ps->work_fd < 0) {
		return;
	}
	cs = task_storage_get(&states, child, true);
	if (!cs) {
		return;
	}
	cs->in_work = 1;
	cs->worked = 1;
	cs->work_fd = ps->work_fd;
	cs->work_gen = ps->work_gen;
	cs->handed = 1;
	cs->home_key = ~0ULL;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ls_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = child->tgid, ptgid, reason = LS_TRACK_CHILD;
	__u8 one = 1;

	ctx_task_event(LS_CTX_FORK, parent, child);
	if (child->tgid != parent->tgid) {
		inherit_registration(parent->tgid, tgid);
	}
	/*
	 * Only a process tracked as such passes it on: a child of one tracked for its cgroup or
	 * its name is tracked while it is in the cgroup or has the name, decided on its own.
	 */
	ptgid = parent->tgid;
	if (child->tgid == parent->tgid) {
		work_inherit(parent, child);
	}
	/*
	 * A new process of latsnap's or of one of quiet_tgids is one too, until its exec: a
	 * consumer daemon or a run-as worker of the session daemon, a helper, COMMAND at its gate.
	 */
	if (child->tgid != parent->tgid &&
	    (ptgid == self_tgid || bpf_map_lookup_elem(&quiet_tgids, &ptgid))) {
		bpf_map_update_elem(&quiet_tgids, &tgid, &one, BPF_ANY);
	}
	if (track_all || child->tgid == parent->tgid || never_tracked(parent) ||
	    !bpf_map_lookup_elem(&tracked, &ptgid)) {
		return 0;
	}
	bpf_map_update_elem(&tracked, &tgid, &reason, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ls_sched_process_exit, struct task_struct *task)
{
	__u32 tid = task->pid, tgid = task->tgid;

	ctx_task_event(LS_CTX_EXIT, task, NULL);
	task_storage_drop(&states, task);
	task_storage_drop(&reqs, task);
	bpf_map_delete_elem(&accum, &tid);
	bpf_map_delete_elem(&quiet_tids, &tid);
	if (task_group_dead(task)) {
		bpf_map_delete_elem(&tracked, &tgid);
		bpf_map_delete_elem(&quiet_tgids, &tgid);
		bpf_map_delete_elem(&registered, &tgid);
		bpf_map_delete_elem(&displaced_noticed, &tgid);
		if (bpf_map_delete_elem(&maps_noticed, &tgid) == 0) {
			notify(LS_NOTICE_EXIT, tgid, 0);
		}
	}
	return 0;
}

/*
 * A process (or, through cgroup.threads, a thread) moved to another cgroup: with --cgroup, into
 * or out of a wanted one, every thread must decide again. A new tracking generation does it,
 * lazily (each thread at its next hook, as for -p), and only for a move that changes something:
 * it is wanted now or was tracked before. Nothing on any hot path: moves are rare (a service
 * started, a container), this program is loaded only with --cgroup, and a process forked inside
 * a wanted cgroup needs nothing at all (a new task decides at its first hook). The tracepoint
 * fires after the move, once, with the group leader: its cgroup now is the new one.
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(ls_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	struct task_state *s;

	if (never_tracked(task)) {
		return 0;
	}
	s = task_storage_get(&states, task, false);
	if (in_wanted_cgroup(task) || (s && s->tracked)) {
		__sync_fetch_and_add(&tracking_gen, 1);
	}
	return 0;
}

/*
 * exec_quiet - is the process of @p, which has just exec'd @bprm, one of quiet_tgids from now on
 * (LTTng's daemons, latsnap's helpers, another latsnap)? Whatever it was before: COMMAND leaves
 * it at its exec, as a process of another latsnap does for the program it runs. Not one the
 * tracked map names (COMMAND, -p, their children), nor one a user other than root started (a
 * name is anyone's to take): a root process running a file of one of quiet_exes' names. The
 * file's own name (its dentry's), as /proc/PID/exe says it, not the name it was run by.
 * Return: whether quiet_tgids changed.
 */
static __always_inline bool exec_quiet(struct task_struct *p, struct linux_binprm *bprm)
{
	char name[LS_EXE_NAME_LEN] = {};
	__u32 tgid = p->tgid;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&tracked, &tgid) || BPF_CORE_READ(p, cred, uid.val) != 0) {
		goto not_quiet;
	}
	bpf_probe_read_kernel_str(name, sizeof(name),
				  BPF_CORE_READ(bprm, file, f_path.dentry, d_name.name));
	if (!bpf_map_lookup_elem(&quiet_exes, name)) {
		goto not_quiet;
	}
	return bpf_map_update_elem(&quiet_tgids, &tgid, &one, BPF_NOEXIST) == 0;
not_quiet:
	return bpf_map_delete_elem(&quiet_tgids, &tgid) == 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ls_sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct task_state *s = any_state(p, false);
	__u32 tgid = p->tgid;
	bool quiet_changed = exec_quiet(p, bprm);

	ctx_task_event(LS_CTX_EXEC, p, NULL);
	/*
	 * Alone in its process now: its answer, made before, is made again (COMMAND past its
	 * gate is tracked from its first instruction), with the CPU's cached verdict.
	 */
	if (s && quiet_changed && !track_comms) {
		redecide(s, p);
		verdict_forget(p);
	}
	if (s) {
		s->maps_told = 0; /* the new image's mappings are told at its first wait */
		/* A request of the old image never ends: its waits go back to being outliers. */
		s->in_req = 0;
		/*
		 * exec gave the process its new name (the file's, set before this tracepoint):
		 * with --comm the thread, now alone in it, decides again. Its own state only, not
		 * a new generation: no other thread's answer changes. The CPU's cached verdict
		 * (cold, or fast) was made from the old answer: it goes too.
		 */
		if (track_comms) {
			redecide(s, p);
			verdict_forget(p);
		}
	}
	/* The new image is not ready for the signal until it registers itself. */
	bpf_map_delete_elem(&registered, &tgid);
	if (bpf_map_delete_elem(&maps_noticed, &tgid) == 0) {
		/* When: a capture read after it is of the new image (usyms_forget_image()). */
		notify(LS_NOTICE_EXEC, tgid, (__u32)bpf_ktime_get_ns());
	}
	return 0;
}

#endif /* LATSNAP_BPF_PROCESS_BPF_H */
