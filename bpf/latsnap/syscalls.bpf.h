/* SPDX-License-Identifier: GPL-2.0 */
/*
 * syscalls.bpf.h - syscalls: their entry and exit, the cheap path, the work marks they leave. A
 * part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_SYSCALLS_BPF_H
#define LATSNAP_BPF_SYSCALLS_BPF_H

static __always_inline bool idle_syscall(long id)
{
	return id >= 0 && id < LS_MAX_SYSCALLS && idle_syscalls[id & (LS_MAX_SYSCALLS - 1)];
}

/*
 * syscall_entry_cheap - whether a tracked thread's syscall entry may skip the clock (issue 48):
 * nearly every syscall ends on the CPU it began on, and a clock read at each entry and exit was
 * most of what latsnap cost a server. Its exit then knows its length in ticks alone, which proves
 * it short when the threshold is two ticks or more; below that, and with --exact-start, the
 * entry reads the clock as before (a time taken at entry is exact where a run time is an
 * estimate).
 */
static __always_inline bool syscall_entry_cheap(void)
{
	return !exact_start && threshold_ns >= 2 * tick_ns;
}

/*
 * syscall_enter_fast - the entry of a syscall of a tracked thread, kept in its CPU's cache and
 * not in task storage: most syscalls end without leaving the CPU, and a task storage lookup
 * costs about as much as the rest of the hook (65 ns here). The thread's switch-out moves it to
 * task storage (syscall_flush()); its exit finds it here if it never left. A tracked thread's
 * entry keeps its run time (a load) instead of the clock where syscall_entry_cheap() allows and
 * its number is not one of sc_clocked: the switch-out, which reads the clock anyway, works out
 * when it began (sc_start_at()).
 */
static __always_inline void syscall_enter_fast(struct ls_cpu_verdict *v, struct task_struct *task,
					       long id)
{
	v->sc_task = 0;
	asm volatile("" ::: "memory");
	v->sc_nr = id;
	if (v->fast == LS_FAST_TRACKED && syscall_entry_cheap() && id >= 0 && id < LS_MAX_SYSCALLS &&
	    !sc_clocked[id & (LS_MAX_SYSCALLS - 1)]) {
		v->sc_rt = 1;
		v->sc_start = task_rd(task, se.sum_exec_runtime);
	} else {
		v->sc_rt = 0;
		v->sc_start = clock_now();
	}
	v->sc_jiffies = bpf_jiffies64();
	asm volatile("" ::: "memory");
	v->sc_task = (__u64)task;
}

/*
 * sc_start_at - when the syscall in @v's cache began, told at @now by @task, whose syscall it is,
 * on its CPU. An entry that kept the run time (sc_rt) began that much CPU time before now: the
 * scheduler's count of it is exact at a switch-out and stale by at most a tick elsewhere, and
 * it may count from before the entry (since the thread's last switch-in, tick or wakeup nearby):
 * the syscall looks that much longer.
 */
static __always_inline __u64 sc_start_at(struct ls_cpu_verdict *v, struct task_struct *task,
					 __u64 now)
{
	__u64 ran;

	if (!v->sc_rt) {
		return v->sc_start;
	}
	ran = task_rd(task, se.sum_exec_runtime) - v->sc_start;
	return now > ran ? now - ran : 0;
}

/* Whether the syscall in @v's cache is on the idle list (its exit and its flush ask). */
static __always_inline bool sc_quiet(struct ls_cpu_verdict *v)
{
	return idle_syscall(v->sc_nr) && !include_idle;
}

/* A tracked thread's syscall @nr began at @start (@jiffies): its state starts over. */
static __always_inline void syscall_begin(struct task_state *s, long nr, bool quiet, __u64 start,
					  __u64 jiffies)
{
	s->in_syscall = 1;
	s->quiet = quiet;
	s->nr = nr;
	s->start = start;
	s->start_jiffies = jiffies;
	s->last = start;
	s->run_state = RS_RUNNING;
	s->on_cpu = 0;
	s->blocked = 0;
	s->runq = 0;
	s->switches = 0;
	s->cur_slot = -1;
	s->unseen_switch = 0;
	s->clock_back = 0;
	s->work_at_start = s->in_work || s->in_req;
	s->work_came = 0;
	s->answered = 0;
}

/*
 * sleep_came_back - at a hook of @task's own (its switch-out, a syscall's entry): if it is off
 * CPU for latsnap, outside a syscall, its switch-in went unseen (came_back_at()). The off-CPU
 * interval ended when it came back: sent as an outlier if long enough, flagged, instead of lost
 * when the next interval starts over.
 */
static __always_inline void sleep_came_back(void *ctx, struct task_struct *task,
					    struct task_state *s, __u64 now)
{
	__u64 end;

	if (s->in_syscall || (s->run_state != RS_RUNNABLE && s->run_state != RS_BLOCKED)) {
		return;
	}
	/* An interval outside a syscall counts no CPU time: it ended where the CPU time began. */
	on_cpu_since_last(task, s, now);
	s->on_cpu = 0;
	end = s->start + s->blocked + s->runq;
	s->run_state = RS_RUNNING;
	if (end - s->start >= (s->in_req ? ctx_floor_ns : sleep_threshold_ns)) {
		submit(ctx, task, s, LS_KIND_SLEEP, end, 0);
	}
	accum_drop(s, task_rd(task, pid));
}

/*
 * syscall_flush - @task leaves the CPU (or ends a long syscall) inside the syscall its CPU's
 * cache holds: into its task storage, as a slow entry would have written it. @s may be NULL
 * (no storage reachable): the syscall is then not seen.
 */
static __always_inline void syscall_flush(struct ls_cpu_verdict *v, struct task_struct *task,
					  struct task_state *s, __u64 now)
{
	struct ls_parked_syscall parked;
	__u64 start;
	__u32 tid;

	if (v->sc_task != (__u64)task) {
		return;
	}
	v->sc_task = 0;
	start = v->sc_rt ? sc_start_at(v, task, now ?: clock_now()) : v->sc_start;
	if (v->sc_rt && v->sc_nr >= 0 && v->sc_nr < LS_MAX_SYSCALLS) {
		/* It left the CPU: the next of its number times its entry exactly. */
		sc_clocked[v->sc_nr & (LS_MAX_SYSCALLS - 1)] = 1;
	}
	if (v->fast == LS_FAST_STREAMED && (!s || !s->tracked)) {
		/* Streamed, not tracked: the syscall is only for the context stream's event. */
		if (s && ctx_level == LS_CTX_FULL) {
			s->sc_start = start;
			s->sc_nr = v->sc_nr;
			s->sc_active = 1;
		}
		return;
	}
	if (!s) {
		/* A tracked thread's syscall, its storage out of reach. */
		parked.nr = v->sc_nr;
		parked.start = start;
		parked.jiffies = v->sc_jiffies;
		parked.quiet = sc_quiet(v);
		tid = task_rd(task, pid);
		bpf_map_update_elem(&parked_syscalls, &tid, &parked, BPF_ANY);
		return;
	}
	if (!s->tracked) {
		return;
	}
	syscall_begin(s, v->sc_nr, sc_quiet(v), start, v->sc_jiffies);
	if (ctx_level == LS_CTX_FULL) {
		s->sc_start = s->start;
		s->sc_nr = s->nr;
		s->sc_active = 1;
	}
}

/*
 * syscall_unpark - the exit of a syscall of tracked thread @s that its state does not hold: if
 * its switch-out parked it (syscall_flush() without storage), it is taken back. What it did off
 * the CPU went unseen: all of it is counted blocked, and flagged (unseen_switch).
 */
static __always_inline void syscall_unpark(struct task_struct *task, struct task_state *s,
					   struct pt_regs *regs)
{
	__u32 tid = task_rd(task, pid);
	struct ls_parked_syscall *p = bpf_map_lookup_elem(&parked_syscalls, &tid);
	__u64 now;

	if (!p) {
		return;
	}
	if (p->nr == user_syscall_nr(regs)) {
		syscall_begin(s, p->nr, p->quiet, p->start, p->jiffies);
		now = clock_now();
		s->blocked = now > p->start ? now - p->start : 0;
		s->last = now > p->start ? now : p->start;
		s->switches = 1;
		s->unseen_switch = 1;
	}
	bpf_map_delete_elem(&parked_syscalls, &tid);
}

/*
 * A syscall cut short because its process is being killed did not finish its wait: its length
 * is the process's lifetime, not a latency (idle helper threads end like this at every exit).
 */
static __always_inline bool dying(struct task_struct *task)
{
	return BPF_CORE_READ(task, pending.signal.sig[0]) & (1ULL << (SIGKILL - 1));
}

/*
 * syscall_exit_fast - the end of a syscall that started in the CPU's cache and never left the
 * CPU. Returns false when it is long enough to be an outlier: the caller then takes the slow
 * way, through task storage. A tracked thread's, unless the clock is wanted at every entry
 * (syscall_entry_cheap()), ends on a look at the jiffies alone when it did not span a tick: the
 * context stream, which wants syscalls from its floor up, then misses one that stayed on the
 * CPU between the floor and a tick.
 */
static __always_inline bool syscall_exit_fast(void *ctx, struct ls_cpu_verdict *v,
					      struct task_struct *task, long ret)
{
	struct ls_ctx_record *e;
	__u64 now = 0, start = v->sc_start, ticks;

	if (v->fast == LS_FAST_TRACKED && (v->sc_rt || syscall_entry_cheap())) {
		ticks = bpf_jiffies64() - v->sc_jiffies;
		if ((!ticks || ctx_level != LS_CTX_FULL) &&
		    ((ticks + 2) * tick_ns < threshold_ns || sc_quiet(v))) {
			v->sc_task = 0;
			return true;
		}
		now = clock_now();
		start = sc_start_at(v, task, now);
	} else if (ctx_level == LS_CTX_FULL) {
		now = clock_now();
	}
	/* As in ls_sys_exit: two ticks more than it counted. A thread only streamed has none. */
	if (v->fast == LS_FAST_TRACKED && !sc_quiet(v) &&
	    (now ? now - start >= threshold_ns :
		   (bpf_jiffies64() - v->sc_jiffies + 2) * tick_ns >= threshold_ns)) {
		return false;
	}
	v->sc_task = 0;
	if (ctx_level == LS_CTX_FULL && now && now - start >= ctx_floor_ns) {
		e = ctx_reserve();
		if (e) {
			ctx_fill(e, LS_CTX_SYSCALL, now, task, NULL);
			e->nr = v->sc_nr;
			e->start = start;
			e->arg = ret;
			ctx_submit(e);
		}
	}
	return true;
}

#ifndef S_IFMT
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#endif

/* The file of descriptor @fd of @task (read through its file table), or NULL. */
static __always_inline struct file *fd_file(struct task_struct *task, int fd)
{
	struct files_struct *files = BPF_CORE_READ(task, files);
	struct fdtable *fdt;
	struct file **fds, *f = NULL;

	if (fd < 0 || !files) {
		return NULL;
	}
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds)) {
		return NULL;
	}
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd])) {
		return NULL;
	}
	return f;
}

/* Whether @task's file descriptor @fd is a socket. */
static __always_inline bool fd_is_socket(struct task_struct *task, int fd)
{
	struct file *f = fd_file(task, fd);

	return f && (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) == S_IFSOCK;
}

/*
 * Whether socket @fd of @task is connected to a process of quiet_tgids (sk_peer_pid, set at
 * connect and accept): an application's lttng-ust listener reading LTTng's session daemon's
 * commands does LTTng's work, not the application's, and its process serves nothing by it.
 */
static __always_inline bool peer_is_ours(struct task_struct *task, int fd)
{
	struct file *f = fd_file(task, fd);
	struct socket *sock = f ? BPF_CORE_READ(f, private_data) : NULL;
	struct pid *peer = sock ? BPF_CORE_READ(sock, sk, sk_peer_pid) : NULL;
	__u32 tgid;

	if (!peer) {
		return false;
	}
	tgid = BPF_CORE_READ(peer, numbers[0].nr);
	return tgid && bpf_map_lookup_elem(&quiet_tgids, &tgid);
}

/*
 * work_note - the end of syscall @nr of tracked thread @s, which returned @ret: a socket read
 * that brought data, outside any work, starts a unit of work on that socket, unless the thread
 * wrote there first (a client reading its answer); a write to it ends the unit (the reply). A
 * read on another socket inside work (a call to a backend) changes nothing. Only the
 * work_syscalls pay for the lookup of the file.
 */
static __always_inline void work_note(struct task_struct *task, struct task_state *s, long nr,
				      int fd, long ret)
{
	__u8 kind, sock_only;
	__u32 *gen, tgid;

	if (nr < 0 || nr >= LS_MAX_SYSCALLS || ret < 0) {
		return;
	}
	sock_only = work_syscalls[nr & (LS_MAX_SYSCALLS - 1)] & LS_WORK_SOCKET_ONLY;
	kind = work_syscalls[nr & (LS_MAX_SYSCALLS - 1)] & LS_WORK_KIND;
	if (!kind || (ret == 0 && kind != LS_WORK_ACCEPT && kind != LS_WORK_CLOSE)) {
		return;
	}
	if (kind == LS_WORK_CLOSE) {
		/* The number may come back as another file; a unit's connection closed ends it. */
		if (s->plain_fd1 == fd + 1) {
			s->plain_fd1 = 0;
		}
		if (s->asked_fd1 == fd + 1) {
			s->asked_fd1 = 0;
		}
		if (s->accepted_fd1 == fd + 1) {
			s->accepted_fd1 = 0;
		}
		if (s->in_work && s->work_fd == fd) {
			s->in_work = 0;
			unit_end(task_rd(task, tgid), fd, true);
		} else if (s->in_work || s->worked) {
			/*
			 * Closed by a serving thread latsnap did not know in the unit, the
			 * connection is over all the same: left open, the unit would keep its
			 * reader in work. A thread that never served pays no lookup. Closed, the
			 * number is no longer the unit's (UNIT_CLOSED): a file that gets it next
			 * and is closed in turn (by a worker in another unit) ends nothing.
			 */
			unit_reply(task_rd(task, tgid), s, fd, true);
		}
	} else if (kind == LS_WORK_ACCEPT) {
		/* A connection came: work to hand on, not a unit of its own. */
		s->worked = 1;
		s->work_came = !s->in_work;
		s->accepted_fd1 = (int)ret + 1;
	} else if (kind == LS_WORK_INPUT) {
		/* A unit another thread of it ended is over: this read may start the next. */
		if (s->in_work && unit_gen(task_rd(task, tgid), s->work_fd) != s->work_gen) {
			s->in_work = 0;
		}
		/*
		 * A connection it accepted brings a request: a unit of its own, never a backend's
		 * answer. An acceptor that read the last request and handed it on is out of that
		 * unit now, though its reply has not come yet: else it would hand the old unit
		 * with the new request, and the thread doing that would stay in it after its own
		 * reply, on a socket where no unit began.
		 */
		if (s->in_work && s->work_fd != fd && s->accepted_fd1 == fd + 1) {
			s->in_work = 0;
		}
		if (s->in_work) {
			return;
		}
		if (s->asked_fd1 == fd + 1) {
			s->asked_fd1 = 0;
			s->answered = 1;
		} else if (sock_only || (s->plain_fd1 != fd + 1 && fd_is_socket(task, fd))) {
			tgid = task_rd(task, tgid);
			gen = unit_entry(tgid, fd);
			/*
			 * A socket that brought requests before and is open had its peer looked
			 * at then: a server's every request on a connection pays one lookup.
			 */
			if ((gen && !(*gen & UNIT_CLOSED)) || !peer_is_ours(task, fd)) {
				s->in_work = 1;
				s->worked = 1;
				s->work_fd = fd;
				s->work_gen = unit_start(tgid, fd, gen);
				s->handed = 0;
				s->home_key = s->idle_key;
				s->idle_key = 0;
				s->work_came = 1;
			} else {
				s->plain_fd1 = fd + 1;
			}
		} else {
			s->plain_fd1 = fd + 1;
		}
	} else if (s->in_work && s->work_fd == fd) {
		s->in_work = 0;
		unit_end(task_rd(task, tgid), fd, false);
	} else if (s->in_work) {
		unit_reply(task_rd(task, tgid), s, fd, false);
	} else {
		s->asked_fd1 = fd + 1;
	}
}

/*
 * Per CPU, the work notes of the tracked thread running there (issue 48): a socket syscall that
 * ended without leaving the CPU is only written down here, and work_note() runs on it where the
 * thread's task storage is looked up anyway (work_log_replay()): at its switch-out, at its next
 * slow syscall entry or exit, where it wakes a thread that may be handed its work, where it
 * forks. A server's request read and its reply written, both on the CPU, cost two stores instead
 * of two task storage lookups. What the notes do to the units map (a unit's start, its end) is
 * seen by the other threads that much later: at the latest when the thread next leaves the CPU
 * or wakes one of them.
 */
#define WORK_LOG_NOTES 3

struct ls_work_log {
	__u64 task; /* whose notes these are; 0: none */
	__u32 n;
	__u32 pad;
	struct {
		__s32 nr;
		__s32 fd;
		__s64 ret;
	} note[WORK_LOG_NOTES];
}; /* 64 bytes: a cache line each */

static struct ls_work_log work_logs[LS_VERDICT_CPUS] __attribute__((aligned(64)));

static __always_inline struct ls_work_log *this_work_log(void)
{
	return &work_logs[bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1)];
}

/*
 * work_log_replay - the notes this CPU holds for @task, its current or just switched-out thread,
 * into its state @s (NULL: they are dropped), in the order they were taken. Notes of another
 * thread, whose switch-out no hook saw, are dropped: at worst one unit of that thread starts or
 * ends late, at its next note.
 */
static __always_inline void work_log_replay(struct task_struct *task, struct task_state *s)
{
	struct ls_work_log *l = this_work_log();
	__u32 i, n = l->n;

	if (!n) {
		return;
	}
	l->n = 0;
	if (l->task != (__u64)task || !s || !s->tracked) {
		return;
	}
	for (i = 0; i < WORK_LOG_NOTES && i < n; i++) {
		work_note(task, s, l->note[i].nr, l->note[i].fd, l->note[i].ret);
	}
}

/*
 * work_note() for a syscall that ended in its CPU's cache (syscall_exit_fast()), written down in
 * this CPU's work log. A read or write of a file that is no socket changes nothing and is told
 * from its file alone. Only a full log looks the thread's task storage up: that lookup holds the
 * CPU's storage lock, which a wakeup's hook from an interrupt meanwhile would not get.
 */
static __always_inline void work_note_fast(struct task_struct *task, long nr, struct pt_regs *regs,
					   long ret)
{
	struct ls_work_log *l;
	struct task_state *s;
	__u8 work;
	__u32 n;
	int fd;

	if (nr < 0 || nr >= LS_MAX_SYSCALLS || ret < 0) {
		return;
	}
	work = work_syscalls[nr & (LS_MAX_SYSCALLS - 1)];
	if (!work) {
		return;
	}
	fd = (int)PT_REGS_PARM1_CORE_SYSCALL(regs);
	if (((work & LS_WORK_KIND) == LS_WORK_INPUT || (work & LS_WORK_KIND) == LS_WORK_OUTPUT) &&
	    !(work & LS_WORK_SOCKET_ONLY) && (ret == 0 || !fd_is_socket(task, fd))) {
		return;
	}
	l = this_work_log();
	if (l->task != (__u64)task) {
		/* Another thread's notes, whose switch-out went unseen: dropped. */
		l->n = 0;
		l->task = (__u64)task;
	}
	n = l->n;
	if (n < WORK_LOG_NOTES) {
		l->note[n].nr = nr;
		l->note[n].fd = fd;
		l->note[n].ret = ret;
		l->n = n + 1;
		return;
	}
	s = task_storage_get(&states, task, false);
	work_log_replay(task, s);
	if (s && s->tracked) {
		work_note(task, s, nr, fd, ret);
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ls_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = current_task();
	struct ls_cpu_verdict *v = this_verdict();
	struct task_state *s;
	__u64 now = 0;

	if (id == prctl_nr) {
		handle_prctl(task, regs);
	} else if (v->task == (__u64)task && v->gen == tracking_gen) {
		if (v->cold) {
			return 0;
		}
		if (v->fast) {
			syscall_enter_fast(v, task, id);
			return 0;
		}
	}
	s = any_state(task, true);
	work_log_replay(task, s);
	if (!s) {
		return 0;
	}
	verdict_set(task, s->gen, state_cold(s));
	/* Threads neither tracked nor ever of interest, nearly all of them, read no clock. */
	if (ctx_level == LS_CTX_FULL && (s->tracked || s->interest_until)) {
		now = clock_now();
		if (streamed(s, now)) {
			s->sc_start = now;
			s->sc_nr = id;
			s->sc_active = 1;
		}
	}
	if (!s->tracked) {
		return 0;
	}
	if (!now) {
		now = clock_now();
	}
	sleep_came_back(ctx, task, s, now);
	accum_drop(s, task_rd(task, pid));
	/* Inside a request nothing is idle. */
	syscall_begin(s, id, idle_syscall(id) && !include_idle && !s->in_req, now,
		      bpf_jiffies64());
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ls_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = current_task();
	struct ls_cpu_verdict *v = this_verdict();
	struct task_state *s;
	__u64 now = 0, limit;

	if (v->task == (__u64)task && v->gen == tracking_gen) {
		if (v->cold) {
			return 0;
		}
		if (v->sc_task == (__u64)task && syscall_exit_fast(ctx, v, task, ret)) {
			if (v->fast == LS_FAST_TRACKED) {
				work_note_fast(task, v->sc_nr, regs, ret);
			}
			return 0;
		}
	}
	s = any_state(task, false);
	work_log_replay(task, s);
	if (!s) {
		return 0;
	}
	/* A long syscall that never left the CPU: in task storage now, ended as any other. */
	syscall_flush(v, task, s, 0);
	if (s->tracked && !s->in_syscall) {
		syscall_unpark(task, s, regs);
	}
	if (s->sc_active) {
		s->sc_active = 0;
		now = clock_now();
		if (ctx_level == LS_CTX_FULL && now - s->sc_start >= ctx_floor_ns) {
			struct ls_ctx_record *e = ctx_reserve();

			if (e) {
				ctx_fill(e, LS_CTX_SYSCALL, now, task, NULL);
				e->nr = s->sc_nr;
				e->start = s->sc_start;
				e->arg = ret;
				ctx_submit(e);
			}
		}
	}
	if (!s->tracked) {
		verdict_fast(task, s, now);
		return 0;
	}
	if (!s->in_syscall) {
		return 0;
	}
	s->in_syscall = 0;
	/* Before the outlier is sent: a read that brought work was a wait for it. */
	work_note(task, s, s->nr, (int)PT_REGS_PARM1_CORE_SYSCALL(regs), ret);
	limit = s->in_req ? ctx_floor_ns : threshold_ns;
	/* Two ticks more than it counted: one for each end of the syscall within its tick. */
	if (!now && (s->quiet || (bpf_jiffies64() - s->start_jiffies + 2) * tick_ns < limit)) {
		/* Short for sure: nothing of it is kept, no precise clock needed. */
		s->run_state = RS_RUNNING;
		accum_drop(s, task_rd(task, pid));
		verdict_fast(task, s, 0);
		return 0;
	}
	if (!now) {
		now = clock_now();
	}
	on_cpu_since_last(task, s, now);
	s->run_state = RS_RUNNING;
	/* s->last: now, or later when this CPU's clock is behind the one that set it. */
	if (!s->quiet && s->last - s->start >= limit && !dying(task)) {
		submit(ctx, task, s, LS_KIND_SYSCALL, s->last, ret);
	}
	accum_drop(s, task_rd(task, pid));
	verdict_fast(task, s, now);
	return 0;
}

#endif /* LATSNAP_BPF_SYSCALLS_BPF_H */
