/* SPDX-License-Identifier: GPL-2.0 */
/*
 * work.bpf.h - the idle policy's marks: units of work, home waits, and each process's and user's
 * share. A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_WORK_BPF_H
#define LATSNAP_BPF_WORK_BPF_H

/*
 * A syscall that returns -ERESTART* is not over: a signal came for the thread, and the kernel
 * restarts the call after it, unless a handler runs, in which case nanosleep(), poll() and the
 * like (-ERESTARTNOHAND, -ERESTART_RESTARTBLOCK) return EINTR to the application instead. Our
 * signal there would cut the application's call short: none is sent.
 */
static __always_inline bool restarting(long ret)
{
	return ret >= -516 && ret <= -512;
}

/*
 * A wait inside a request is sent as a part of it, down to the context floor; only those as long
 * as the threshold are worth a signal for their unwound stack.
 */
static __always_inline __u32 request_part(struct task_struct *task, struct task_state *s,
					  __u8 kind, __u64 end, bool *signal)
{
	struct req_state *r;

	*signal = !s->in_req || end - s->start >= (kind == LS_KIND_SYSCALL ? threshold_ns :
									    sleep_threshold_ns);
	if (!s->in_req) {
		return 0;
	}
	r = task_storage_get(&reqs, task, false);
	if (r) {
		r->waits++;
	}
	return LS_EF_IN_REQUEST;
}

static __always_inline __u64 unit_key(__u32 tgid, int fd)
{
	return (__u64)tgid << 32 | (__u32)fd;
}

/* Syscall @nr waits for a connection (accept, accept4). */
static __always_inline bool accepts(long nr)
{
	return nr >= 0 && nr < LS_MAX_SYSCALLS &&
	       (work_syscalls[nr & (LS_MAX_SYSCALLS - 1)] & LS_WORK_KIND) == LS_WORK_ACCEPT;
}

/* The generation of the unit of work on socket @fd of process @tgid (0: none ended yet). */
static __always_inline __u32 unit_gen(__u32 tgid, int fd)
{
	__u64 key = unit_key(tgid, fd);
	__u32 *gen = bpf_map_lookup_elem(&units, &key);

	return gen ? *gen : 0;
}

/*
 * A unit's generation with UNIT_CLOSED: its socket was closed since, and the number may name
 * another file now (a log file opened and closed for each line): what is done to that number is
 * nothing of the unit's, until a socket of that number brings a request again.
 */
#define UNIT_CLOSED 0x80000000U

/*
 * unit_entry - the entry of socket @fd of process @tgid in units, or NULL. One without
 * UNIT_CLOSED is a socket that brought a request and is still open: its peer was looked at then
 * (peer_is_ours()), and a socket's peer does not change.
 */
static __always_inline __u32 *unit_entry(__u32 tgid, int fd)
{
	__u64 key = unit_key(tgid, fd);

	return bpf_map_lookup_elem(&units, &key);
}

/*
 * A unit begins on socket @fd of process @tgid, whose entry unit_entry() found (@gen) or did
 * not (NULL): the socket is known to bring requests.
 */
static __always_inline __u32 unit_start(__u32 tgid, int fd, __u32 *gen)
{
	__u64 key;
	__u32 zero = 0;

	if (gen) {
		/* A new connection of that number: the next generation, open. */
		if (*gen & UNIT_CLOSED) {
			*gen = (*gen + 1) & ~UNIT_CLOSED;
		}
		return *gen;
	}
	key = unit_key(tgid, fd);
	bpf_map_update_elem(&units, &key, &zero, BPF_NOEXIST);
	return 0;
}

/*
 * A thread in work writes to or closes socket @fd, not its unit's: if a unit began on @fd (a
 * request came there), that is the reply to it, and it ends. A thread handed its unit has then
 * answered a request of its own (a lock's next owner, woken by the holder, does its own job) or
 * was handed a unit that was not its job's (the reader had read the next request before): either
 * way it is out of the unit it was handed. A write to any other socket is a call to a backend.
 */
static __always_inline void unit_reply(__u32 tgid, struct task_state *s, int fd, bool closes)
{
	__u64 key = unit_key(tgid, fd);
	__u32 *gen = bpf_map_lookup_elem(&units, &key);

	if (!gen || (*gen & UNIT_CLOSED)) {
		return;
	}
	/* No 32-bit atomic OR on older kernels (and no need: the unit is over either way). */
	if (closes) {
		*gen = (*gen + 1) | UNIT_CLOSED;
	} else {
		__sync_fetch_and_add(gen, 1);
	}
	if (s->handed) {
		s->in_work = 0;
	}
}

/*
 * The unit on socket @fd of process @tgid ends (its reply, its close: @closes), for every thread
 * in it.
 * Its entry, made when it began (unit_start()), moves on in place: an update of an LRU hash
 * costs more than the rest of a request's bookkeeping.
 */
static __always_inline void unit_end(__u32 tgid, int fd, bool closes)
{
	__u64 key = unit_key(tgid, fd);
	__u32 *gen = bpf_map_lookup_elem(&units, &key), next = 1 | (closes ? UNIT_CLOSED : 0);

	if (gen) {
		if (closes) {
			*gen = (*gen + 1) | UNIT_CLOSED;
		} else {
			__sync_fetch_and_add(gen, 1);
		}
		return;
	}
	bpf_map_update_elem(&units, &key, &next, BPF_ANY);
}

/*
 * Where a thread waits, for the home rule: the syscall and its first argument (a futex's word,
 * a descriptor), the futex word rounded down to 8 bytes: glibc's condition variable waits on one
 * of its two group words (__g_signals[0] or [1], 4 bytes apart), one place all the same. 0 for
 * a wait outside a syscall.
 */
static __always_inline __u64 home_key(long nr, const __u64 *args)
{
	return nr < 0 ? 0 : ((__u64)nr << 52) ^ (args[0] & ~7ULL) ^ 1;
}

/*
 * work_begin - a wait of @task (@s), in syscall @nr or -1, begins (it leaves the CPU): is it in
 * work? Not when its
 * unit was ended by another thread of it (the reply came from the thread it handed the job to),
 * nor when it was handed its unit and now waits again where it waited when it was: a thread woken
 * by one in work (a JIT compiler, a collector, a pool's worker) does that part and goes back to
 * wait for the next; the pool's worker replies first (its unit ends then), the others do not.
 */
static __always_inline void work_begin(struct task_struct *task, struct task_state *s, long nr)
{
	if (!s->in_work) {
		s->work_at_start = s->in_req;
		return;
	}
	if (unit_gen(task_rd(task, tgid), s->work_fd) != s->work_gen) {
		s->in_work = 0;
	}
	if (s->in_work && s->home_key) {
		__u64 args[6];

		syscall_args(args, task);
		if (s->home_key == home_key(nr, args)) {
			s->in_work = 0;
			/* Home again: where the next unit it reads comes from. */
			if (!s->handed) {
				s->idle_key = s->home_key;
			}
		}
	}
	s->work_at_start = s->in_work || s->in_req;
}

/*
 * idle_wait_begin - a wait of @task (@s) in syscall @nr begins outside work: where it is, for
 * the unit a read may start next (work_note()). A server that reads jobs from a socket and never
 * answers (a worker fed over a socket pair) then leaves the unit when it waits there again.
 */
static __always_inline void idle_wait_begin(struct task_struct *task, struct task_state *s,
					    long nr)
{
	__u64 args[6];

	/*
	 * Only a wait for input (a read, a poll): a futex is no socket's, and a runtime that sleeps
	 * on the thread's one condition variable (Ruby's) would be home in its own sleeps.
	 */
	if (nr < 0 || nr >= LS_MAX_SYSCALLS ||
	    (!fd_wait_syscalls[nr & (LS_MAX_SYSCALLS - 1)] &&
	     (work_syscalls[nr & (LS_MAX_SYSCALLS - 1)] & LS_WORK_KIND) != LS_WORK_INPUT)) {
		return;
	}
	syscall_args(args, task);
	s->idle_key = home_key(nr, args);
}

/* Ask @task's preload library for outlier @e's stack, if it has one: @e says what came of it. */
static __always_inline void ask_unwind(struct task_struct *task, struct task_state *s,
				       struct ls_event *e, bool current)
{
	__u32 seq = 0;

	/* seq is set only when signalled: 0 otherwise. */
	e->flags |= signal_preload(task, s, current, &seq);
	e->signal_seq = seq;
}

/*
 * handed_unit_over - whether @s (@task) is in a unit it was handed that has ended since (its
 * reply or its close went out). A wait of it under way then holds no reply up: it is no part of
 * the unit, though it began in it. A helper woken where it waited for one thing (a latch that a
 * statement released, InnoDB's own futex locks, which waits_for_lock() cannot tell from a wait
 * for an event) and then going back to wait for its next task at another place before the
 * statement's reply, stays in the unit at that wait: without this, its wait for work would count
 * as the statement's latency for as long as it lasts.
 */
static __always_inline bool handed_unit_over(struct task_struct *task, const struct task_state *s)
{
	return s->in_work && s->handed && !s->in_req &&
	       unit_gen(task_rd(task, tgid), s->work_fd) != s->work_gen;
}

/* What the wait that ends now had to do with work (enum ls_event_flag's LS_EF_*WORK*). */
static __always_inline __u32 work_flags(const struct task_state *s)
{
	return (s->work_at_start ? LS_EF_IN_WORK : 0) | (s->worked ? LS_EF_WORKED : 0) |
	       ((s->in_work && !s->work_at_start) || s->work_came ? LS_EF_GOT_WORK : 0) |
	       (s->answered ? LS_EF_ANSWERED : 0) |
	       /* Branch-free: one branch more here, and Linux 6.1's verifier gives up on the switch. */
	       ((__u32)(s->handed & 1) << 19);
}
_Static_assert(LS_EF_HANDED == 1 << 19, "work_flags() shifts s->handed into LS_EF_HANDED");

/* How long a thread over its share stays off the context stream and the stack slots. */
#define LS_THROTTLE_NS 1000000000ULL

/*
 * share_spend - take one outlier from the share of @key (struct ls_share): one each @interval on
 * average, @burst ahead at most. Approximate under races between CPUs (no atomic that returns the
 * old value before 5.12): a share may let one or two more through, never block a tenant within.
 */
static __always_inline bool share_spend(__u64 key, __u64 interval, __u64 burst, __u64 now)
{
	struct ls_share *sh = bpf_map_lookup_elem(&shares, &key), fresh = {};
	__u64 tat;

	if (!sh) {
		fresh.tat_ns = now + interval;
		bpf_map_update_elem(&shares, &key, &fresh, BPF_NOEXIST);
		return true;
	}
	tat = sh->tat_ns > now ? sh->tat_ns : now;
	if (tat - now > burst) {
		__sync_fetch_and_add(&sh->dropped, 1);
		return false;
	}
	sh->tat_ns = tat + interval;
	return true;
}

/*
 * within_share - whether @task's process and user may send one more outlier (record
 * --max-rate). One over its share is dropped here, before it takes a ring buffer record, a
 * signal or an unwind, counted in its process's share (and its user's), and its thread is left
 * off the context stream and the stack slots for a while (throttled_until).
 */
static __always_inline bool within_share(struct task_struct *task, struct task_state *s,
					 __u64 now)
{
	__u64 pkey = ((__u64)LS_SHARE_PROCESS << 32) | (__u32)task_rd(task, tgid);
	__u64 ukey = ((__u64)LS_SHARE_USER << 32) | BPF_CORE_READ(task, real_cred, uid.val);
	struct ls_share *sh;

	if (!share_interval_ns) {
		return true;
	}
	if (share_spend(pkey, share_interval_ns, share_burst_ns, now)) {
		/* Twice the rate, and so twice the outliers at once in the same time ahead. */
		if (share_spend(ukey, share_interval_ns / 2, share_burst_ns, now)) {
			return true;
		}
		/* Its user's share is spent: the drop is its process's too. */
		sh = bpf_map_lookup_elem(&shares, &pkey);
		if (sh) {
			__sync_fetch_and_add(&sh->dropped, 1);
		}
	}
	s->throttled_until = now + LS_THROTTLE_NS;
	stat_inc(LS_STAT_THROTTLED);
	return false;
}

#endif /* LATSNAP_BPF_WORK_BPF_H */
