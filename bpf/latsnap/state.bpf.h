/* SPDX-License-Identifier: GPL-2.0 */
/*
 * state.bpf.h - the settings (rodata and .data knobs), the per-thread state and the maps every
 * part shares. A part of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_STATE_BPF_H
#define LATSNAP_BPF_STATE_BPF_H

/*
 * The thresholds, in .data: user space changes them at run time (record's SIGHUP reload) without
 * a reload of the programs. Each is read with one load where a wait ends or is checked, as the
 * read-only settings below are: the verifier knew their values but the programs only ever
 * compare them with a clock, so nothing was folded, and the code is the same.
 */
__u64 threshold_ns = 50000000;
__u64 sleep_threshold_ns = 50000000;

/* Settings, fixed between open and load. */
const volatile bool track_all = false;
/* latsnap itself, whose own waits (and lttng-ust's threads in it) are never outliers. */
const volatile __u32 self_tgid = 0;
const volatile bool include_idle = false;
/* record --exact-start: every tracked syscall's entry reads the clock (syscall_entry_cheap()). */
const volatile bool exact_start = false;
/*
 * Per syscall number, whether a tracked thread's entry reads the clock all the same (issue 48):
 * those that wait by nature, seeded by user space (sleeps, futex, read, the idle list), and any
 * seen to leave the CPU since, learned at its first switch-out (syscall_flush()). Their waits,
 * the outliers, get exact starts; the rest, which nearly never leave the CPU, pay no clock.
 */
__u8 sc_clocked[LS_MAX_SYSCALLS];
const volatile __u8 idle_syscalls[LS_MAX_SYSCALLS] = {};
/* No target given: every process that registers through the preload library is tracked. */
const volatile bool track_registered = false;
/* record --cgroup, --comm: the processes of these cgroups (want_cgroups), of these names. */
const volatile bool track_cgroups = false;
const volatile bool track_comms = false;
/*
 * An end-of-switch hook is attached (ls_sched_exit, or ls_schedule_exit where the kernel lacks
 * sched_exit_tp): a thread switched in can be signalled from its own context before it runs.
 */
const volatile bool switch_end_hook = false;
/*
 * The syscalls that move a unit of work (enum ls_work_syscall), by number: a read that brings a
 * request in, a write that may be its reply. From user space, which knows the numbers.
 */
const volatile __u8 work_syscalls[LS_MAX_SYSCALLS] = {};
/* prctl's number on this architecture; -1 turns registration off. */
const volatile long prctl_nr = -1;
/* futex(2)'s number: a lock's next owner is handed no work (waits_for_lock()). */
const volatile long futex_nr = -1;
/*
 * The waits for descriptors (poll, select: FD_WAIT; epoll_wait: FD_WAIT | FD_WAIT_EPOLL, by
 * syscall number) that a child's exit, or an answer, may end as latency. Not wait4, waitid,
 * rt_sigsuspend (coreutils' timeout): a launcher waits there for its program's whole life.
 */
const volatile __u8 fd_wait_syscalls[LS_MAX_SYSCALLS] = {};
#define FD_WAIT 1
#define FD_WAIT_EPOLL 2
/* The context stream: syscalls shorter than this are not sent. */
const volatile __u64 ctx_floor_ns = 1000000;
/* Events kept per CPU in ctx_ring, a power of two (from user space). */
const volatile __u32 ctx_slots = 1;
/* Stacks kept per CPU in ctx_stacks, a power of two (from user space). */
const volatile __u32 ctx_stack_slots = 1;
/* How long a thread stays streamed after it last woke, or was woken by, a tracked thread. */
const volatile __u64 interest_ns = 10000000000ULL;
/*
 * The length of a tick (from user space). A syscall that began and ended within a few ticks,
 * less than the threshold, cannot be an outlier: it ends without a read of the precise clock,
 * which costs as much as the rest of the hook together (a serialized rdtsc), where jiffies is a
 * load. Tracing programs may not read the coarse clock (it is not NMI-safe).
 */
const volatile __u64 tick_ns = 10000000;
/*
 * Tests only (LATSNAP_TEST_CLOCK_SKEW_NS): the clock of odd-numbered CPUs reads this far behind,
 * so that the parts of a wait read on two CPUs disagree as an emulated 6.12 guest's clocks did
 * (issue 33: a split that underflowed). Zero, the verifier drops the branch as dead code.
 */
const volatile __u64 test_clock_skew_ns = 0;
/*
 * record --max-rate N: each process may send N outliers a second on average and 2N at once (the
 * interval between two, and how far ahead of now its share may run), each user twice that; 0:
 * no limit. Over it, a thread's outliers are dropped and counted, and it is left off the context
 * stream and the stack slots for LS_THROTTLE_NS (share_spend()).
 */
const volatile __u64 share_interval_ns = 0;
const volatile __u64 share_burst_ns = 0;

/* Every time latsnap's programs read: bpf_ktime_get_ns(), but for the tests' skew above. */
static __always_inline __u64 clock_now(void)
{
	__u64 now = bpf_ktime_get_ns();

	if (test_clock_skew_ns && (bpf_get_smp_processor_id() & 1)) {
		now -= test_clock_skew_ns;
	}
	return now;
}

/*
 * enum ls_ctx_level, set by user space at run time: the stream starts only once a snapshot
 * session exists (and has no kernel tracer of its own to do it).
 */
__u32 ctx_level = LS_CTX_NONE;

/*
 * Bumped by user space whenever the tracked set grows for processes that may already be running,
 * or a reload drops targets, so that threads re-decide whether they are tracked; cached answers
 * stay valid otherwise.
 */
__u32 tracking_gen = 1;

enum run_state {
	RS_UNKNOWN = 0, /* first seen while already off or on CPU: no interval to time */
	RS_RUNNING,
	RS_BLOCKED, /* switched out voluntarily, not woken yet */
	RS_RUNNABLE, /* woken or preempted, waiting for a CPU */
};

struct task_state {
	__u32 gen;
	__u8 tracked;
	__u8 run_state;
	__u8 in_syscall;
	__u8 quiet; /* in an idle-list syscall that is not reported */
	__u8 has_accum;
	__s8 cur_slot; /* stack slot the wait under way is charged to, -1 for none */
	__u8 accum_lost; /* a long wait found no room in accum: its stacks are lost */
	__u8 unseen_switch; /* a switch-in went unseen: runqueue and on-CPU time are mixed */
	__u8 clock_back; /* a clock read on another CPU was behind s->last (advance()) */
	__s32 nr;
	__u32 switches;
	__u64 start; /* syscall entry, or switch-out that began an off-CPU interval */
	__u64 last; /* last change of run_state */
	__u64 on_cpu;
	__u64 blocked;
	__u64 runq;
	/* The context stream, for any thread (tracked or of interest). */
	__u64 interest_until; /* not tracked, but streamed until then */
	__u64 sc_start; /* entry of the syscall under way, when sc_active */
	__u64 start_jiffies; /* jiffies at the entry of the syscall under way */
	/*
	 * A blocking switch-out of a streamed thread, held back until its wakeup: only then is it
	 * known whether the wait was long enough to be worth its stack (see ctx_switch()).
	 */
	__u64 out_ts; /* 0: none held */
	/*
	 * The time of a held switch-out that a snapshot's flush (ls_ctx_flush) sent before the
	 * wakeup: the wakeup still knows the wait was long, and walks the waker's stack to tell an
	 * interrupt (a timer that ended a sleep) from the task it landed on.
	 */
	__u64 flushed_out_ts;
	__s64 out_nr;
	__u32 out_state;
	__u32 out_cpu;
	__u32 out_next_tid;
	__u32 out_next_pid;
	char out_next_comm[LS_TASK_COMM_LEN];
	__s32 sc_nr;
	__u8 sc_active;
	/*
	 * The user stack where the off-CPU interval outside any syscall that began at sleep_start
	 * left user code, kept at its switch-out (see save_user_ip()): walked, or its one frame.
	 */
	__u64 sleep_start;
	__u32 sleep_nr;
	__u64 sleep_ips[LS_MAX_USER_DEPTH];
	/* Only its innermost frame was kept: the walk is owed, if the interval turns out long. */
	__u8 sleep_walk;
	/*
	 * Signals sent to it to unwind, and the last of them whose report was taken: the kernel
	 * delivers them in order, each once, so the count tells which one a report answers.
	 */
	__u32 signals_sent;
	__u32 signal_answered;
	__u32 reports_lost; /* answers the ring had no room for, since the last that went */
	/*
	 * Its process's LS_NOTICE_MAPS went out (since its exec), as of maps_retell_gen: no map
	 * lookup at each wait.
	 */
	__u8 maps_told;
	__u32 maps_told_gen;
	/* Inside a request (struct req_state): its waits down to the context floor are parts of it. */
	__u8 in_req;
	/* A signal owed at a switch-in that it left again before it ran (owed_carry()). */
	__u8 sig_owed;
	/*
	 * Work context (the idle policy): in a unit of work since a socket read brought data, or
	 * since a thread in one woke it (handed a part: a job for a pool), until the reply on that
	 * socket (work_fd) or its close, by any thread of the unit (units). work_at_start: in work
	 * when the wait under way began; worked: ever in work (or accepted a connection).
	 */
	__u8 in_work;
	__u8 worked;
	__u8 work_at_start;
	__u8 work_came; /* the syscall under way brought work: a request, a connection */
	__u8 answered; /* the syscall under way read the answer to what the thread wrote */
	__u8 handed; /* in a unit it was handed, not one it read */
	__s32 work_fd;
	__u32 work_gen; /* the generation of its unit (units) when it joined it */
	/*
	 * Where it was waiting when work came (home_key()), handed or read by itself: back there,
	 * it is done, whether it replied or not (a job read from a socket that wants no answer).
	 */
	__u64 home_key;
	/* Where its last wait outside work began: a unit it reads next makes that its home. */
	__u64 idle_key;
	/* 1 + the descriptor it last wrote to outside work: what it reads there is an answer. */
	__s32 asked_fd1;
	/*
	 * The last threads whose syscalls woke it (a wakeup from an interrupt, its sleep's timer,
	 * is nobody's), a ring of WAKERS_KEPT (4): a thread it wakes after may be answering one.
	 */
	__u32 wakers[4];
	__u8 wakers_next;
	/* 1 + the descriptor its last read found no socket: a pipe read in a loop looks once. */
	__s32 plain_fd1;
	/* 1 + the descriptor of the connection it accepted last: what comes there is a request. */
	__s32 accepted_fd1;
	/* Its process or user was over its share (share_spend()): no stacks nor context until then. */
	__u64 throttled_until;
};

/* A request keyed by an object (record --request with =KEY): its process, its pair, the object. */
struct kreq_key {
	__u32 tgid;
	__u32 pair;
	__u64 key;
};

/* Requests its thread began, not yet given the socket it connected (kreq_connect()), oldest first. */
#define KREQ_PENDING 4

/* A thread inside a request: from its start probe, for its end probe. */
struct req_state {
	__u32 kstarts; /* keyed requests it began, ever */
	__u32 pend_head;
	__u32 pend_n;
	struct kreq_key pend[KREQ_PENDING];
	__u64 start;
	__u64 exec; /* its task's sum_exec_runtime then */
	__u64 delay; /* and its sched_info.run_delay */
	__u64 nvcsw;
	__u64 arg_num;
	__u32 pair;
	__u32 depth; /* starts of the pair not ended yet (an entry probe of a recursive function) */
	__u32 waits;
	__u8 arg_kind;
	char arg[LS_REQ_ARG_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct req_state);
} reqs SEC(".maps");

/* A keyed request under way; an event loop's thread has many. */
struct kreq {
	__u64 start;
	__u64 sk; /* the socket it connected (to its upstream), or 0 */
	__u64 peer_ns;
	__u32 tid;
	__u32 kstarts; /* its thread's then */
	__u32 peer_pid;
	__u32 peer_tid;
	char comm[LS_TASK_COMM_LEN];
	char peer_comm[LS_TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct kreq_key);
	__type(value, struct kreq);
} kreqs SEC(".maps");

/* The socket a keyed request connected -> that request: who writes to it is its upstream. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct kreq_key);
} kreq_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} states SEC(".maps");

_Static_assert(sizeof(struct task_state) <= LS_STORAGE_ZERO_SIZE &&
		       sizeof(struct req_state) <= LS_STORAGE_ZERO_SIZE,
	       "task storage's stand-in copies new entries from storage_zeros");

/* tgid -> enum ls_track_reason bits */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u32);
} tracked SEC(".maps");

/*
 * tid -> outlier in the making (only threads whose current wait is already long). Preallocated:
 * elements this large come from a small per-CPU cache refilled asynchronously, and a burst of
 * threads waking together from the scheduler hooks would find it empty. An entry lives from the
 * first long wait of a syscall to its end, so few are in use at once.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2048);
	__type(key, __u32);
	__type(value, struct ls_event);
} accum SEC(".maps");

/*
 * record --cgroup: cgroup v2 id (its directory's inode number) -> 1. A task is tracked when its
 * cgroup of the default hierarchy or one of that cgroup's ancestors is here. Filled before attach,
 * changed by a reload (then a new tracking generation).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u8);
} want_cgroups SEC(".maps");

/*
 * record --comm: process names (struct ls_comm, NUL-padded) -> 1. Filled before attach, changed
 * by a reload (then a new tracking generation).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_COMMS);
	__type(key, struct ls_comm);
	__type(value, __u8);
} want_comms SEC(".maps");

/*
 * tgid -> LS_MAPS_TOLD once user space was told to read the mappings of the process (since its
 * exec), so that user stacks can be symbolized after it exits. Told at its first blocking wait: the
 * process lives then, and the maps reader reads at once (maps_ring). ld.so may still be mapping
 * libraries then (it waited for a file to be read from disk): user space sets LS_MAPS_RETELL and
 * bumps maps_retell_gen, and the process's next blocking wait tells again.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} maps_noticed SEC(".maps");

/* Bumped by user space after it set an LS_MAPS_RETELL: each thread looks at the map once more. */
__u32 maps_retell_gen;

/*
 * Each LS_NOTICE_MAPS once more, for the tracker's maps reader: a thread of its own that reads the
 * mappings at once. The main loop may be held for tens of milliseconds (a snapshot), and a
 * process that exits meanwhile could never be read: its stacks would be bare addresses. The copy
 * in events keeps its place among the outliers; the capture is taken over there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} maps_ring SEC(".maps");

/*
 * Processes whose registration was refused and said so: one notice per process, so that a
 * process looping on bad prctls cannot crowd outliers out of the ring buffer.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} refused_noticed SEC(".maps");

/* Processes whose handler of latsnap's signal was displaced and said so: one notice each. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} displaced_noticed SEC(".maps");

/* tgid -> how to signal the preload library in it. Filled only by the process itself. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ls_registration);
} registered SEC(".maps");

/*
 * A syscall in its CPU's cache (syscall_enter_fast()) whose thread left the CPU while task
 * storage was out of reach: the kernel refuses it to a hook on a CPU where another BPF program
 * holds it, and a tracing program can be preempted while it does (more often the slower the CPU:
 * under QEMU without KVM). Kept here by thread id for its exit to find (syscall_unpark()),
 * rather than lost with the wait it began.
 */
struct ls_parked_syscall {
	__s64 nr;
	__u64 start;
	__u64 jiffies;
	__u8 quiet;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ls_parked_syscall);
} parked_syscalls SEC(".maps");

/*
 * Units of work, by process and socket (tgid << 32 | fd) -> a generation, bumped when the unit on
 * that socket ends (its reply, its close): the threads that share a unit (the one that read the
 * request, those it handed parts to) are out of it when its generation has moved on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u32);
} units SEC(".maps");

/* tid -> 1 for the tracer's own threads (lttng-ust's listeners), which are never tracked. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} quiet_tids SEC(".maps");

/*
 * tgid -> 1 for the processes latsnap commands or is made of, never tracked whatever the target
 * (issue 46: their waits are latsnap's own snapshots' doing): the LTTng daemons, latsnap's
 * helpers, another latsnap, and COMMAND until its exec (its wait at the start gate). Seeded
 * from /proc by user space (tracker/ours.c), passed on at fork, decided again at exec by the
 * file run (quiet_exes, a root process's only). The tracked map wins at exec: -p, COMMAND.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} quiet_tgids SEC(".maps");

/* The file names (char[LS_EXE_NAME_LEN]) that make a root process one of quiet_tgids at exec. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, char[LS_EXE_NAME_LEN]);
	__type(value, __u8);
} quiet_exes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/*
 * The context stream (struct ls_ctx_record): ctx_slots per CPU, CPU after CPU (the size is set by
 * user space), apart from the outliers' ring buffer so that a flood of it never costs an outlier.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_ctx_record);
} ctx_ring SEC(".maps");

/* The stacks of the context stream: ctx_stack_slots per CPU, as ctx_ring. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_ctx_stack);
} ctx_stacks SEC(".maps");

struct block_issue {
	__u64 ts;
	__u32 tid;
	__u32 pid;
};

/* request -> who issued it, for the block I/O requests of streamed threads. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct block_issue);
} block_issued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LS_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Each process's and each user's share of the outliers (record --max-rate; struct ls_share). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct ls_share);
} shares SEC(".maps");

/* Scratch: a zeroed event to create accum entries from, and a stack to dedupe against. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_event);
} zero_event SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_stack);
} scratch_stack SEC(".maps");

#endif /* LATSNAP_BPF_STATE_BPF_H */
