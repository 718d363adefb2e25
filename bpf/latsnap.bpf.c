// SPDX-License-Identifier: GPL-2.0
/*
 * latsnap.bpf.c - times syscalls and off-CPU intervals of tracked threads, splits each outlier
 * into on-CPU, blocked and runqueue time, and keeps the kernel stacks where it waited and who
 * woke it.
 *
 * Per-thread state lives in task storage, so an untracked thread costs one storage lookup per
 * hook. Stacks are taken only once a wait is already long (half the threshold), as EfficiOS'
 * latency_tracker did: the data of such an outlier-in-the-making accumulates in a hash map keyed
 * by tid and goes to the ring buffer in one copy when the syscall or the sleep ends.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "include/latsnap.h"
#include "bpf/kernel-defs.h"
#include "bpf/core_fixes.bpf.h"

char LICENSE[] SEC("license") = "GPL";


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
 * syscall number) that a child's exit may end as latency. Not wait4, waitid, rt_sigsuspend (coreutils' timeout): a launcher waits
 * there for its program's whole life.
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

/*
 * Per CPU, the task last seen running there and whether it is cold: neither tracked nor ever of
 * interest to the context stream, as nearly every thread on the machine is. The syscall hooks of
 * a cold thread then end without a task storage lookup. Keyed by the task and the tracking
 * generation, so that a stale entry (a switch the recursion guard hid, a thread tracked since)
 * only sends the hook the slow way. One cache line per CPU: each CPU writes its own at every
 * switch.
 */
struct ls_cpu_verdict verdicts[LS_VERDICT_CPUS];

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
	__u8 pad[44];
};

static struct ls_owed_signal owed_signals[LS_VERDICT_CPUS];

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

/*
 * The context stream stays in the kernel: per CPU, a ring of its last ctx_slots events in
 * ctx_ring, which latsnap maps and reads only before a snapshot. Streaming every event to user
 * space cost more than everything else (a ring buffer record, then latsnap's read and its
 * lttng-ust event, for every switch of a tracked thread), while only the context of an outlier
 * is ever kept. An event's seq is its place in its CPU's ring plus one, set once it is
 * complete: the reader tells a slot being written, or written over, by it.
 */
#define LS_CTX_SEQ_BUSY (1ULL << 63)

static __always_inline void ctx_submit(struct ls_ctx_record *e)
{
	asm volatile("" ::: "memory");
	e->seq &= ~LS_CTX_SEQ_BUSY;
}

/*
 * ctx_take - the next value of @head, a counter of this CPU's, or -1 when a program that this
 * one interrupted (a wakeup in a hard interrupt, say) is taking one right now. No atomics: Linux
 * 5.10 refuses an atomic that returns the old value (5.12) anywhere in a program, even where it
 * cannot run. Programs on one CPU nest only as interrupts do, the later one ending first, and
 * a CPU sees its own stores in order: one that runs between another's read and store of @head
 * sees @busy set and takes nothing; one that runs before the read or after the store takes its
 * own value. What is not taken is counted as lost.
 */
static __always_inline __s64 ctx_take(__u64 *head, __u8 *busy)
{
	__u64 v;

	if (*(volatile __u8 *)busy) {
		return -1;
	}
	*(volatile __u8 *)busy = 1;
	asm volatile("" ::: "memory");
	v = *(volatile __u64 *)head;
	*(volatile __u64 *)head = v + 1;
	asm volatile("" ::: "memory");
	*(volatile __u8 *)busy = 0;
	return (__s64)v;
}

/* A slot of this CPU's ring. */
static __always_inline struct ls_ctx_record *ctx_reserve(void)
{
	__u32 cpu = bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1), idx;
	struct ls_ctx_record *e;
	__s64 taken;
	__u64 head;

	taken = ctx_take(&verdicts[cpu].ctx_head, &verdicts[cpu].ctx_busy);
	if (taken < 0) {
		stat_inc(LS_STAT_CTX_LOST);
		return NULL;
	}
	head = (__u64)taken;
	idx = cpu * ctx_slots + (__u32)(head & (ctx_slots - 1));
	e = bpf_map_lookup_elem(&ctx_ring, &idx);
	if (!e) {
		stat_inc(LS_STAT_CTX_LOST);
		return NULL;
	}
	e->seq = (head + 1) | LS_CTX_SEQ_BUSY;
	asm volatile("" ::: "memory");
	stat_inc(LS_STAT_CTX_EVENTS);
	return e;
}

/*
 * A slot of this CPU's stack ring for the stack of @e, a record reserved on this CPU; NULL when
 * there is none (the record then goes without). ctx_stack_done() once the stack is in.
 */
static __always_inline struct ls_ctx_stack *ctx_stack_reserve(struct ls_ctx_record *e)
{
	__u32 cpu = bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1), idx;
	struct ls_ctx_stack *st;
	__s64 taken;
	__u64 head;

	taken = ctx_take(&verdicts[cpu].ctx_stack_head, &verdicts[cpu].ctx_busy);
	if (taken < 0) {
		return NULL;
	}
	head = (__u64)taken;
	idx = cpu * ctx_stack_slots + (__u32)(head & (ctx_stack_slots - 1));
	st = bpf_map_lookup_elem(&ctx_stacks, &idx);
	if (!st) {
		return NULL;
	}
	st->seq = (head + 1) | LS_CTX_SEQ_BUSY;
	e->stack_seq = head + 1;
	asm volatile("" ::: "memory");
	stat_inc(LS_STAT_CTX_STACKS);
	return st;
}

static __always_inline void ctx_stack_done(struct ls_ctx_stack *st)
{
	asm volatile("" ::: "memory");
	st->seq &= ~LS_CTX_SEQ_BUSY;
}

/*
 * A task's comm, read straight through its BTF pointer (two loads the JIT guards with an
 * exception entry), not with bpf_probe_read_kernel(): a helper call on every context event.
 */
static __always_inline void copy_comm(char *dst, const struct task_struct *task)
{
	task_comm_copy(dst, task);
}

/* The header of a context event about @task (and @other, which may be NULL). */
static __always_inline void ctx_fill(struct ls_ctx_record *e, __u8 kind, __u64 now,
				     struct task_struct *task, struct task_struct *other)
{
	e->kind = kind;
	e->preempted = 0;
	e->nr_ips = 0;
	e->cpu = bpf_get_smp_processor_id();
	e->ts = now;
	e->at = now;
	e->tid = task_rd(task, pid);
	e->pid = task_rd(task, tgid);
	copy_comm(e->comm, task);
	if (other) {
		e->tid2 = task_rd(other, pid);
		e->pid2 = task_rd(other, tgid);
		copy_comm(e->comm2, other);
	} else {
		e->tid2 = 0;
		e->pid2 = 0;
		__builtin_memset(e->comm2, 0, sizeof(e->comm2));
	}
	e->nr = -1;
	e->arg = 0;
	e->start = 0;
	e->stack_seq = 0;
}

/* A simple context event about @task, if it is streamed. */
static __always_inline void ctx_task_event(__u8 kind, struct task_struct *task,
					   struct task_struct *other)
{
	struct ls_ctx_record *e;
	__u64 now;

	if (ctx_level == LS_CTX_NONE) {
		return;
	}
	now = clock_now();
	if (!streamed(any_state(task, false), now)) {
		return;
	}
	e = ctx_reserve();
	if (e) {
		ctx_fill(e, kind, now, task, other);
		ctx_submit(e);
	}
}

/*
 * @task, a user thread, is streamed from now on (or for longer), because of @other. The first
 * time, an LS_CTX_INTEREST event says from when its record is complete.
 */
static __always_inline void ctx_interest(struct task_state *s, struct task_struct *task,
					 struct task_struct *other, __u64 now, __u64 until,
					 __u32 reason)
{
	struct ls_ctx_record *e;
	bool was = s->interest_until > now;

	if (s->tracked || (task_rd(task, flags) & PF_KTHREAD) || !task_rd(task, pid) ||
	    (__u32)task_rd(task, tgid) == self_tgid || s->interest_until >= until) {
		return;
	}
	s->interest_until = until;
	if (was) {
		return;
	}
	verdict_forget(task);
	e = ctx_reserve();
	if (e) {
		ctx_fill(e, LS_CTX_INTEREST, now, task, other);
		e->arg = reason;
		ctx_submit(e);
	}
}

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

/* The handler @task's process has installed for @sig, as the kernel will run it. */
static __always_inline __u64 installed_handler(struct task_struct *task, __u32 sig)
{
	struct sighand_struct *sighand = BPF_CORE_READ(task, sighand);
	__u64 handler = 0, off;

	off = bpf_core_field_offset(struct sighand_struct, action) +
	      (__u64)(sig - 1) * bpf_core_type_size(struct k_sigaction) +
	      bpf_core_field_offset(struct k_sigaction, sa.sa_handler);
	if (bpf_probe_read_kernel(&handler, sizeof(handler), (void *)sighand + off)) {
		return 0;
	}
	return handler;
}

static __always_inline bool valid_signal(__u64 sig)
{
	return sig >= 1 && sig <= 64 && sig != SIGKILL && sig != SIGSTOP;
}

/*
 * Signals @task itself, where bpf_send_signal_thread() signals only current (kernel >= 6.13).
 * Sent with si_code SI_KERNEL, as the helper's, which is what the library's handler answers.
 */
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;

/*
 * owe_signal - have @task signalled with @sig at the end of the switch that brings it in, from
 * its own context, by whichever end-of-switch hook this kernel has (send_owed_signal()).
 */
static __always_inline __u32 owe_signal(struct task_struct *task, struct task_state *s, __u32 sig,
					__u32 *seq)
{
	__u32 cpu = bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1);
	struct ls_owed_signal *o = &owed_signals[cpu];

	if (!switch_end_hook) {
		return LS_EF_SIGNAL_UNSUPPORTED;
	}
	o->task = (__u64)task;
	o->sig = sig;
	/* Counted when it goes (send_owed_signal()): unsent, the next signal has its number. */
	*seq = s->signals_sent + 1;
	return LS_EF_SIGNALLED;
}

/*
 * signal_preload - ask the preload library in @task to unwind its user stack: current at the end
 * of a syscall, or a thread being switched in after a sleep outlier, which has run no user code
 * since it was switched out, so that the handler unwinds from where it stopped. The signal goes
 * only where the library's handler is still the one the kernel would run, and where the thread
 * neither blocks it nor has it pending: otherwise it would wait, or land on a handler that is not
 * ours, or on the default action. Returns the LS_EF_SIGNAL* flag saying what happened; when
 * LS_EF_SIGNALLED, *@seq is the signal's number in @s's count (counted when it goes: at once,
 * or at the end of the switch, send_owed_signal()).
 */
static __always_inline __u32 signal_preload(struct task_struct *task, struct task_state *s,
					    bool current, __u32 *seq)
{
	__u32 tgid = task_rd(task, tgid), sig;
	struct ls_registration *reg;
	__u64 bit, pending;
	__u8 one = 1;
	long err;

	reg = bpf_map_lookup_elem(&registered, &tgid);
	if (!reg) {
		return 0;
	}
	if (reg->displaced) {
		return LS_EF_SIGNAL_DISPLACED;
	}
	sig = reg->sig;
	if (!valid_signal(sig) || reg->handler <= 1) {
		return 0;
	}
	if (installed_handler(task, sig) != reg->handler) {
		/* Once per process: the application's handler keeps the signal from now on. */
		/* Once per process: the map says who came first, with no atomic (ctx_take()). */
		reg->displaced = 1;
		if (bpf_map_update_elem(&displaced_noticed, &tgid, &one, BPF_NOEXIST) == 0) {
			notify(LS_NOTICE_DISPLACED, tgid, sig);
		}
		return LS_EF_SIGNAL_DISPLACED;
	}
	bit = 1ULL << ((sig - 1) & 63);
	pending = BPF_CORE_READ(task, pending.signal.sig[0]) |
		  BPF_CORE_READ(task, signal, shared_pending.signal.sig[0]);
	if ((BPF_CORE_READ(task, blocked.sig[0]) | pending) & bit) {
		stat_inc(LS_STAT_SIGNAL_SKIPPED);
		return LS_EF_SIGNAL_BLOCKED;
	}
	if (current) {
		err = bpf_send_signal_thread(sig);
	} else if (bpf_send_signal_task) {
		/*
		 * IRQs are off in the scheduler: like the helper's, the signal is deferred to an
		 * irq_work, which runs before the thread returns to user space.
		 */
		err = bpf_send_signal_task(task, sig, PIDTYPE_PID, 0);
		if (err == -EPERM) {
			/*
			 * The kernel sends nothing while current has no user memory of its own:
			 * the idle task (a thread picked up by an idle CPU, the common case), a
			 * kernel thread, an exiting thread. The thread is then signalled at the
			 * end of this switch, from its own context.
			 */
			return owe_signal(task, s, sig, seq);
		}
	} else {
		/* Before 6.13 only current can be signalled: the thread, once it runs. */
		return owe_signal(task, s, sig, seq);
	}
	if (err == -EBUSY) {
		stat_inc(LS_STAT_SIGNAL_BUSY);
		return LS_EF_SIGNAL_BUSY;
	}
	if (err) {
		stat_inc(LS_STAT_SIGNAL_REFUSED);
		return LS_EF_SIGNAL_REFUSED;
	}
	stat_inc(LS_STAT_SIGNALS);
	*seq = ++s->signals_sent;
	return LS_EF_SIGNALLED;
}

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

/* A unit begins on socket @fd of process @tgid: the socket is known to bring requests. */
static __always_inline __u32 unit_start(__u32 tgid, int fd)
{
	__u64 key = unit_key(tgid, fd);
	__u32 *gen = bpf_map_lookup_elem(&units, &key), zero = 0;

	if (gen) {
		return *gen;
	}
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
static __always_inline void unit_reply(__u32 tgid, struct task_state *s, int fd)
{
	__u64 key = unit_key(tgid, fd);
	__u32 *gen = bpf_map_lookup_elem(&units, &key);

	if (!gen) {
		return;
	}
	__sync_fetch_and_add(gen, 1);
	if (s->handed) {
		s->in_work = 0;
	}
}

/*
 * The unit on socket @fd of process @tgid ends (its reply, its close), for every thread in it.
 * Its entry, made when it began (unit_start()), moves on in place: an update of an LRU hash
 * costs more than the rest of a request's bookkeeping.
 */
static __always_inline void unit_end(__u32 tgid, int fd)
{
	__u64 key = unit_key(tgid, fd);
	__u32 *gen = bpf_map_lookup_elem(&units, &key), next = 1;

	if (gen) {
		__sync_fetch_and_add(gen, 1);
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

/* Whether current's file descriptor @fd is a socket (read through its file table). */
static __always_inline bool fd_is_socket(struct task_struct *task, int fd)
{
	struct files_struct *files = BPF_CORE_READ(task, files);
	struct fdtable *fdt;
	struct file **fds, *f = NULL;
	unsigned int mode;

	if (fd < 0 || !files) {
		return false;
	}
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds)) {
		return false;
	}
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f) {
		return false;
	}
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFSOCK;
}

/*
 * work_note - the end of syscall @nr of tracked thread @s, which returned @ret: a socket read
 * that brought data, outside any work, starts a unit of work on that socket, unless the thread
 * wrote there first (a client reading its answer); a write to it ends the unit (the reply). A
 * read on another socket inside work (a call to a backend) changes nothing. Only the
 * work_syscalls pay for the lookup of the file.
 */
static __always_inline void work_note(struct task_struct *task, struct task_state *s, long nr,
				      struct pt_regs *regs, long ret)
{
	__u8 kind, sock_only;
	int fd;

	if (nr < 0 || nr >= LS_MAX_SYSCALLS || ret < 0) {
		return;
	}
	sock_only = work_syscalls[nr & (LS_MAX_SYSCALLS - 1)] & LS_WORK_SOCKET_ONLY;
	kind = work_syscalls[nr & (LS_MAX_SYSCALLS - 1)] & LS_WORK_KIND;
	if (!kind || (ret == 0 && kind != LS_WORK_ACCEPT && kind != LS_WORK_CLOSE)) {
		return;
	}
	fd = (int)PT_REGS_PARM1_CORE_SYSCALL(regs);
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
			unit_end(task_rd(task, tgid), fd);
		} else if (s->in_work || s->worked) {
			/*
			 * Closed by a serving thread latsnap did not know in the unit, the
			 * connection is over all the same: left open, the unit would keep its
			 * reader in work. A thread that never served pays no lookup.
			 */
			unit_reply(task_rd(task, tgid), s, fd);
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
			s->in_work = 1;
			s->worked = 1;
			s->work_fd = fd;
			s->work_gen = unit_start(task_rd(task, tgid), fd);
			s->handed = 0;
			s->home_key = s->idle_key;
			s->idle_key = 0;
			s->work_came = 1;
		} else {
			s->plain_fd1 = fd + 1;
		}
	} else if (s->in_work && s->work_fd == fd) {
		s->in_work = 0;
		unit_end(task_rd(task, tgid), fd);
	} else if (s->in_work) {
		unit_reply(task_rd(task, tgid), s, fd);
	} else {
		s->asked_fd1 = fd + 1;
	}
}

/*
 * work_note() for a syscall that ended in its CPU's cache (syscall_exit_fast()). A read or write
 * of a file that is no socket changes nothing and is told from its file alone: task storage is
 * looked up only for sockets, accepts and closes. Its lookup holds the CPU's storage lock, which
 * a wakeup's hook from an interrupt meanwhile would not get: the fewer, the fewer wakeups unseen.
 */
static __always_inline void work_note_fast(struct task_struct *task, long nr, struct pt_regs *regs,
					   long ret)
{
	struct task_state *s;
	__u8 work;

	if (nr < 0 || nr >= LS_MAX_SYSCALLS || ret < 0) {
		return;
	}
	work = work_syscalls[nr & (LS_MAX_SYSCALLS - 1)];
	if (!work) {
		return;
	}
	if (((work & LS_WORK_KIND) == LS_WORK_INPUT || (work & LS_WORK_KIND) == LS_WORK_OUTPUT) &&
	    !(work & LS_WORK_SOCKET_ONLY) &&
	    (ret == 0 || !fd_is_socket(task, (int)PT_REGS_PARM1_CORE_SYSCALL(regs)))) {
		return;
	}
	s = task_storage_get(&states, task, false);
	if (s && s->tracked) {
		work_note(task, s, nr, regs, ret);
	}
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
	work_note(task, s, s->nr, regs, ret);
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
	__u64 op = args[1] & 127; /* without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */

	return s->nr == futex_nr && (op == 6 || op == 13 || ((op == 0 || op == 9) && args[2] == 2));
}

/*
 * work_handover - a thread outside work, @p (@s), blocked in a syscall and not for a lock, is
 * woken by a thread of its process in a unit of work (a socket's, or a request's; not an
 * interrupt that landed on one): it was handed a part of that work (a job for a pool, a task for
 * a helper thread), so the wait that ends now was a wait for work, and it is in that unit now,
 * until the unit's reply or close (by it or by any thread of the unit), or until it waits again
 * where it waited now (home_key(): a JIT compiler or a collector woken by a worker goes back to
 * wait for its next task without replying). A lock's next owner is handed nothing.
 */
static __always_inline void work_handover(void *ctx, struct task_struct *p, struct task_state *s,
					  struct task_state *ws, bool looked)
{
	struct task_struct *waker = current_task();
	__u64 args[6];
	__u32 tgid;

	if (!looked) {
		ws = task_storage_get(&states, waker, false);
	}
	if (!ws || !ws->tracked || !((ws->in_work && ws->work_fd >= 0) || ws->in_req) ||
	    waking_in_interrupt(ctx)) {
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
		work_handover(ctx, p, s, ws, looked);
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

/*
 * struct request as it was before Linux 5.17, which named its disk itself: the disk is reached
 * through the request's queue (request_queue->disk, Linux 5.15) since. libbpf matches this flavour
 * to the kernel's struct request and drops the "___old" suffix.
 */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/*
 * The device number of a request's disk, as the kernel's disk_devt() makes it. Which layout the
 * kernel has is a constant at load, so the other branch is left out by the verifier.
 */
static __always_inline __u64 request_dev(struct request *rq)
{
	struct request___old *old = (struct request___old *)rq;
	struct gendisk *disk;

	if (bpf_core_field_exists(old->rq_disk)) {
		disk = BPF_CORE_READ(old, rq_disk);
	} else {
		disk = BPF_CORE_READ(rq, q, disk);
	}
	if (!disk) {
		return 0;
	}
	return ((__u64)BPF_CORE_READ(disk, major) << 20) | BPF_CORE_READ(disk, first_minor);
}

static __always_inline int block_issue(struct request *rq)
{
	struct task_struct *task = current_task();
	struct block_issue issue;
	struct ls_ctx_record *e;
	__u64 key = (__u64)rq, now;

	if (ctx_level != LS_CTX_FULL) {
		return 0;
	}
	now = clock_now();
	if (!streamed(any_state(task, false), now)) {
		return 0;
	}
	issue.ts = now;
	issue.tid = task_rd(task, pid);
	issue.pid = task_rd(task, tgid);
	bpf_map_update_elem(&block_issued, &key, &issue, BPF_ANY);
	e = ctx_reserve();
	if (e) {
		ctx_fill(e, LS_CTX_BLOCK_ISSUE, now, task, NULL);
		e->arg = request_dev(rq);
		e->nr = BPF_CORE_READ(rq, __sector);
		e->start = BPF_CORE_READ(rq, __data_len);
		e->tid2 = BPF_CORE_READ(rq, cmd_flags) & 0xff;
		ctx_submit(e);
	}
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ls_block_rq_issue, struct request *rq)
{
	return block_issue(rq);
}

/* Before Linux 5.11 the tracepoint passed the request's queue first (user space picks one). */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(ls_block_rq_issue_q, struct request_queue *q, struct request *rq)
{
	return block_issue(rq);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ls_block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	struct block_issue *issue;
	struct ls_ctx_record *e;
	__u64 key = (__u64)rq;

	if (ctx_level != LS_CTX_FULL) {
		return 0;
	}
	issue = bpf_map_lookup_elem(&block_issued, &key);
	if (!issue) {
		return 0;
	}
	e = ctx_reserve();
	if (e) {
		e->kind = LS_CTX_BLOCK_COMPLETE;
		e->preempted = 0;
		e->nr_ips = 0;
		e->cpu = bpf_get_smp_processor_id();
		e->ts = clock_now();
		e->at = e->ts;
		e->tid = issue->tid;
		e->pid = issue->pid;
		__builtin_memset(e->comm, 0, sizeof(e->comm));
		__builtin_memset(e->comm2, 0, sizeof(e->comm2));
		e->pid2 = 0;
		e->tid2 = error;
		e->arg = request_dev(rq);
		e->nr = BPF_CORE_READ(rq, __sector);
		e->start = issue->ts;
		ctx_submit(e);
	}
	bpf_map_delete_elem(&block_issued, &key);
	return 0;
}

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
 * Requests (record --request): a start probe of a tracked thread opens one, its pair's end probe
 * closes it. Only the outermost request of a thread is followed; the same pair's start again
 * inside it (a recursive function's entry) only counts depth.
 */
static __always_inline __u64 run_delay(struct task_struct *task)
{
	if (bpf_core_field_exists(task->sched_info.run_delay)) {
		return BPF_CORE_READ(task, sched_info.run_delay);
	}
	return 0;
}

static __always_inline void request_start(struct task_struct *task, struct task_state *s,
					  __u32 pair, bool nests, __u64 arg, bool has_arg)
{
	struct req_state *r;

	r = task_storage_get(&reqs, task, true);
	if (!r) {
		stat_inc(LS_STAT_STORAGE_FAILED);
		return;
	}
	/*
	 * Its own start again: a recursive function's entry (it nests), or the next request after
	 * one whose end never came (an error unwound past it: PostgreSQL's query__done): that one
	 * is abandoned. Another pair's start inside it is the outer request's business.
	 */
	if (s->in_req && (r->pair != pair || nests)) {
		if (r->pair == pair) {
			r->depth++;
		}
		return;
	}
	r->pair = pair;
	r->depth = 1;
	r->waits = 0;
	r->exec = BPF_CORE_READ(task, se.sum_exec_runtime);
	r->delay = run_delay(task);
	r->nvcsw = task_rd(task, nvcsw) + task_rd(task, nivcsw);
	r->arg_kind = LS_REQ_ARG_NONE;
	r->arg_num = arg;
	r->arg[0] = 0;
	if (has_arg) {
		r->arg_kind = bpf_probe_read_user_str(r->arg, sizeof(r->arg), (void *)arg) > 0 ?
				      LS_REQ_ARG_TEXT :
				      LS_REQ_ARG_NUMBER;
	}
	r->start = clock_now();
	s->in_req = 1;
	/* Its syscalls take the slow way now: each may be a part of the request. */
	verdict_fast(task, s, 0);
}

static __always_inline void request_end(struct task_struct *task, struct task_state *s, __u32 pair)
{
	struct ls_request *e;
	struct req_state *r;
	__u64 now, delay;
	bool slow;

	if (!s->in_req) {
		return;
	}
	r = task_storage_get(&reqs, task, false);
	if (!r || r->pair != pair) {
		return;
	}
	if (--r->depth > 0) {
		return;
	}
	s->in_req = 0;
	verdict_fast(task, s, 0);
	now = clock_now();
	if (now - r->start < threshold_ns && !r->waits) {
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		return;
	}
	e->kind = LS_KIND_REQUEST;
	e->slow = now - r->start >= threshold_ns;
	e->arg_kind = r->arg_kind;
	e->pad = 0;
	e->pair = pair;
	e->pid = task_rd(task, tgid);
	e->tid = task_rd(task, pid);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	e->switches = (__u32)(task_rd(task, nvcsw) + task_rd(task, nivcsw) - r->nvcsw);
	e->waits = r->waits;
	e->start_ns = r->start;
	e->end_ns = now;
	e->on_cpu_ns = BPF_CORE_READ(task, se.sum_exec_runtime) - r->exec;
	delay = run_delay(task);
	e->runqueue_ns = delay > r->delay ? delay - r->delay : 0;
	e->arg_num = r->arg_num;
	__builtin_memcpy(e->arg, r->arg, sizeof(e->arg));
	slow = e->slow;
	bpf_ringbuf_submit(e, 0);
	if (slow) {
		stat_inc(LS_STAT_OUTLIERS);
	}
}

/*
 * Keyed requests (a probe's =KEY): a request is an object, not a thread, so that an event loop's
 * thread has many under way at once, each begun and ended by the probes that name it. Its time
 * is its own; what its thread did meanwhile was also for the others. An upstream it waited for
 * is found through the socket it connected (kreq_connect(), kreq_sk_ready()).
 */
static __always_inline void kreq_start(struct task_struct *task, __u32 pair, __u64 key)
{
	struct kreq_key k = { .tgid = task_rd(task, tgid), .pair = pair, .key = key };
	struct kreq v = {};
	struct req_state *r;
	__u32 slot;

	r = task_storage_get(&reqs, task, true);
	if (!r) {
		stat_inc(LS_STAT_STORAGE_FAILED);
		return;
	}
	v.start = clock_now();
	v.tid = task_rd(task, pid);
	v.kstarts = ++r->kstarts;
	bpf_probe_read_kernel_str(v.comm, sizeof(v.comm), task->comm);
	bpf_map_update_elem(&kreqs, &k, &v, BPF_ANY);
	/* The oldest pending one makes room: its loop never connected for it. */
	if (r->pend_n == KREQ_PENDING) {
		r->pend_head = (r->pend_head + 1) % KREQ_PENDING;
		r->pend_n--;
	}
	slot = (r->pend_head + r->pend_n) % KREQ_PENDING;
	r->pend[slot & (KREQ_PENDING - 1)] = k;
	r->pend_n++;
}

static __always_inline void kreq_end(struct task_struct *task, __u32 pair, __u64 key)
{
	struct kreq_key k = { .tgid = task_rd(task, tgid), .pair = pair, .key = key };
	struct req_state *r;
	struct ls_request *e;
	struct kreq *v;
	__u64 now = clock_now();

	v = bpf_map_lookup_elem(&kreqs, &k);
	if (!v) {
		return;
	}
	if (v->sk) {
		bpf_map_delete_elem(&kreq_socks, &v->sk);
	}
	if (now - v->start < threshold_ns) {
		bpf_map_delete_elem(&kreqs, &k);
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		bpf_map_delete_elem(&kreqs, &k);
		stat_inc(LS_STAT_RINGBUF_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = LS_KIND_REQUEST;
	e->slow = 1;
	e->arg_kind = LS_REQ_ARG_NONE;
	e->keyed = 1;
	e->pair = pair;
	e->pid = k.tgid;
	e->tid = v->tid;
	__builtin_memcpy(e->comm, v->comm, sizeof(e->comm));
	e->start_ns = v->start;
	e->end_ns = now;
	e->key = key;
	e->peer_ns = v->peer_ns;
	e->peer_pid = v->peer_pid;
	e->peer_tid = v->peer_tid;
	__builtin_memcpy(e->peer_comm, v->peer_comm, sizeof(e->peer_comm));
	r = task_storage_get(&reqs, task, false);
	e->others = r && (__u32)task_rd(task, pid) == v->tid ? r->kstarts - v->kstarts : 0;
	bpf_map_delete_elem(&kreqs, &k);
	bpf_ringbuf_submit(e, 0);
	stat_inc(LS_STAT_OUTLIERS);
}

/* The key probe @cookie names, read from @ctx: an argument or the return value. */
static __always_inline bool kreq_key_of(struct pt_regs *ctx, __u64 cookie, bool usdt, __u64 *key)
{
	unsigned int which = (cookie >> LS_REQ_COOKIE_KEY_SHIFT) & LS_REQ_COOKIE_KEY_MASK;
	long v = 0;

	if (which == LS_REQ_KEY_RET) {
		*key = PT_REGS_RC_CORE(ctx);
		return true;
	}
	if (usdt) {
		if (bpf_usdt_arg(ctx, which - 1, &v)) {
			return false;
		}
		*key = (__u64)v;
		return true;
	}
	switch (which) {
	case 1:
		*key = PT_REGS_PARM1_CORE(ctx);
		break;
	case 2:
		*key = PT_REGS_PARM2_CORE(ctx);
		break;
	case 3:
		*key = PT_REGS_PARM3_CORE(ctx);
		break;
	case 4:
		*key = PT_REGS_PARM4_CORE(ctx);
		break;
	default:
		*key = PT_REGS_PARM5_CORE(ctx);
		break;
	}
	return true;
}

/* A keyed request's probe: the start of a tracked thread's, or the end of any. */
static __always_inline bool kreq_probe(struct pt_regs *ctx, __u64 cookie, bool usdt)
{
	struct task_struct *task;
	struct task_state *s;
	__u64 key;

	if (!((cookie >> LS_REQ_COOKIE_KEY_SHIFT) & LS_REQ_COOKIE_KEY_MASK)) {
		return false;
	}
	if (!kreq_key_of(ctx, cookie, usdt, &key)) {
		return true;
	}
	task = current_task();
	if (cookie & LS_REQ_COOKIE_END) {
		kreq_end(task, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT), key);
		return true;
	}
	s = task_state(task, true);
	if (s) {
		kreq_start(task, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT), key);
	}
	return true;
}

static __always_inline void request_probe(__u64 cookie, __u64 arg, bool has_arg)
{
	struct task_struct *task = current_task();
	struct task_state *s = task_state(task, true);

	if (!s) {
		return;
	}
	if (cookie & LS_REQ_COOKIE_END) {
		request_end(task, s, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT));
	} else {
		request_start(task, s, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT),
			      cookie & LS_REQ_COOKIE_NESTS, arg, has_arg);
	}
}

/* A request's uprobe or uretprobe (attached by user space, its cookie saying which). */
SEC("uprobe")
int ls_req_uprobe(struct pt_regs *ctx)
{
	/* BPF cookies came with Linux 5.15: user space refuses uprobe requests without them. */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_attach_cookie)) {
		__u64 cookie = bpf_get_attach_cookie(ctx);

		if (!kreq_probe(ctx, cookie, false)) {
			request_probe(cookie, 0, false);
		}
	}
	return 0;
}

/* A request's USDT probe: its first argument is the request's (a query's text). */
SEC("usdt")
int ls_req_usdt(struct pt_regs *ctx)
{
	long arg = 0;
	bool has_arg;

	if (kreq_probe(ctx, bpf_usdt_cookie(ctx), true)) {
		return 0;
	}
	has_arg = bpf_usdt_arg_cnt(ctx) > 0 && bpf_usdt_arg(ctx, 0, &arg) == 0;
	request_probe(bpf_usdt_cookie(ctx), (__u64)arg, has_arg);
	return 0;
}

/* The stream socket of @task's descriptor @fd, or 0. */
static __always_inline __u64 fd_sock(struct task_struct *task, int fd)
{
	struct files_struct *files = BPF_CORE_READ(task, files);
	struct file **fds, *f = NULL;
	struct socket *sock;
	struct fdtable *fdt;

	if (fd < 0 || !files) {
		return 0;
	}
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds)) {
		return 0;
	}
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f ||
	    (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) != S_IFSOCK) {
		return 0;
	}
	sock = BPF_CORE_READ(f, private_data);
	/* A stream's: a datagram socket's connect() (a DNS lookup) is not a request's upstream. */
	if (!sock || BPF_CORE_READ(sock, type) != 1 /* SOCK_STREAM */) {
		return 0;
	}
	return (__u64)BPF_CORE_READ(sock, sk);
}

/*
 * A thread with keyed requests pending connects a socket: to its oldest request's upstream (an
 * event loop connects for a request soon after it began it, in order).
 */
SEC("tracepoint/syscalls/sys_enter_connect")
int ls_kreq_connect(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *task = current_task();
	struct kreq_key k = {};
	struct req_state *r;
	struct kreq *v = NULL;
	__u64 sk;
	int i;

	r = task_storage_get(&reqs, task, false);
	if (!r || !r->pend_n) {
		return 0;
	}
	sk = fd_sock(task, (int)ctx->args[0]);
	if (!sk) {
		return 0;
	}
	for (i = 0; i < KREQ_PENDING && r->pend_n; i++) {
		k = r->pend[r->pend_head & (KREQ_PENDING - 1)];
		r->pend_head = (r->pend_head + 1) % KREQ_PENDING;
		r->pend_n--;
		v = bpf_map_lookup_elem(&kreqs, &k);
		if (v) {
			break;
		}
	}
	if (!v) {
		return 0;
	}
	v->sk = sk;
	bpf_map_update_elem(&kreq_socks, &sk, &k, BPF_ANY);
	return 0;
}

/*
 * Data came on a socket a keyed request connected: its writer, on this machine, runs this
 * (loopback delivers in the sender's context), and is the request's upstream.
 */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(ls_kreq_sk_ready, const struct sock *sk)
{
	struct task_struct *task = current_task();
	__u64 key = (__u64)sk;
	struct kreq_key *k;
	struct kreq *v;

	k = bpf_map_lookup_elem(&kreq_socks, &key);
	if (!k || (task_rd(task, flags) & PF_KTHREAD)) {
		return 0;
	}
	v = bpf_map_lookup_elem(&kreqs, k);
	if (!v || (__u32)task_rd(task, tgid) == k->tgid) {
		return 0;
	}
	v->peer_ns = clock_now();
	v->peer_pid = task_rd(task, tgid);
	v->peer_tid = task_rd(task, pid);
	bpf_probe_read_kernel_str(v->peer_comm, sizeof(v->peer_comm), task->comm);
	return 0;
}

/*
 * An on-CPU sample (a cpu-clock perf event per CPU, attached with the first --request): only a
 * thread inside a request is sampled, its kernel and user stacks sent for user space to keep
 * until the request ends, and to use if it was slow.
 */
SEC("perf_event")
int ls_req_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = current_task();
	struct task_state *s;
	struct ls_sample *e;
	long len;

	s = task_storage_get(&states, task, false);
	if (!s || !s->in_req) {
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		return 0;
	}
	e->kind = LS_KIND_SAMPLE;
	e->pid = task_rd(task, tgid);
	e->tid = task_rd(task, pid);
	e->ts = clock_now();
	len = bpf_get_stack(ctx, e->kips, sizeof(e->kips), 0);
	e->nr_kips = len > 0 ? len / sizeof(__u64) : 0;
	len = bpf_get_stack(ctx, e->uips, sizeof(e->uips), BPF_F_USER_STACK);
	e->nr_uips = len > 0 ? len / sizeof(__u64) : 0;
	bpf_ringbuf_submit(e, 0);
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

/*
 * Goroutines (Go programs on amd64, Go 1.17+): a goroutine that waits (a sync.Mutex, time.Sleep,
 * a channel) is parked by the runtime (runtime.gopark) and keeps no thread; its M runs other
 * goroutines or waits for one, idle. Its wait is timed on the goroutine itself, by uprobes
 * attached per binary (tracker/goroutines.c): from gopark to runtime.ready, which makes it
 * runnable again. The register ABI passes gopark's waitReason (its third argument) in rcx and
 * ready's gp in rax, and keeps the current g in r14. Wakeups that bypass ready (the netpoller's
 * injectglist, the GC's idle workers) leave their park behind until the goroutine parks again,
 * or its process exits and the LRU map drops it.
 */
struct go_park_key {
	__u32 tgid;
	__u32 pad;
	__u64 g; /* the goroutine's runtime.g: it cannot exit, so it is not reused, while parked */
};

struct go_park {
	__u64 start;
	__u64 goid;
	__u32 tid; /* the M it parked on */
	__u32 nr; /* valid entries in ips */
	__u8 reason; /* its waitReason */
	__u8 pad[7];
	__u64 ips[LS_MAX_USER_DEPTH];
};

/* tgid -> what the probes need of its binary (struct ls_go_proc), from user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_GO_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct ls_go_proc);
} go_procs SEC(".maps");

/* The goroutines parked now, in the followed processes. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LS_GO_MAX_PARKED);
	__type(key, struct go_park_key);
	__type(value, struct go_park);
} go_parks SEC(".maps");

/* Scratch: a park being made (too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct go_park);
} go_park_scratch SEC(".maps");

/*
 * go_user_stack - the parking goroutine's stack, innermost first, at gopark's entry: the kernel's
 * frame-pointer walk starts at the frame of gopark's caller (gopark has not pushed its own yet),
 * so it would skip that caller; its return address, at the top of the stack, is put back.
 */
static __always_inline void go_user_stack(struct pt_regs *ctx, struct go_park *p)
{
	long len;

	len = bpf_get_stack(ctx, &p->ips[1], sizeof(p->ips) - sizeof(p->ips[0]), BPF_F_USER_STACK);
	p->nr = len > 0 ? len / sizeof(__u64) + 1 : 2;
	p->ips[0] = PT_REGS_IP(ctx);
	if (bpf_probe_read_user(&p->ips[1], sizeof(p->ips[1]), (void *)PT_REGS_SP(ctx))) {
		p->ips[1] = 0;
		p->nr = 1;
	}
}

SEC("uprobe")
int ls_go_park(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = current_task();
	__u32 tgid = task_rd(task, tgid), zero = 0;
	struct go_park_key key = {};
	struct ls_go_proc *proc;
	struct go_park *p;

	proc = bpf_map_lookup_elem(&go_procs, &tgid);
	if (!proc || !task_state(task, true)) {
		return 0;
	}
	p = bpf_map_lookup_elem(&go_park_scratch, &zero);
	if (!p) {
		return 0;
	}
	key.tgid = tgid;
	key.g = ctx->r14;
	p->start = clock_now();
	p->tid = task_rd(task, pid);
	p->reason = (__u8)ctx->cx;
	p->goid = 0;
	bpf_probe_read_user(&p->goid, sizeof(p->goid), (void *)(key.g + proc->goid_off));
	go_user_stack(ctx, p);
	bpf_map_update_elem(&go_parks, &key, p, BPF_ANY);
#endif
	return 0;
}

SEC("uprobe")
int ls_go_ready(struct pt_regs *ctx)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = current_task();
	__u32 tgid = task_rd(task, tgid);
	struct go_park_key key = {};
	struct ls_go_proc *proc;
	__u64 now, m = 0, curg = 0;
	struct ls_event *e;
	struct go_park *p;

	proc = bpf_map_lookup_elem(&go_procs, &tgid);
	if (!proc) {
		return 0;
	}
	key.tgid = tgid;
	key.g = ctx->ax;
	p = bpf_map_lookup_elem(&go_parks, &key);
	if (!p) {
		return 0;
	}
	now = clock_now();
	/* Parked on another CPU, whose clock may be ahead by microseconds (advance()). */
	if (now <= p->start || now - p->start < sleep_threshold_ns) {
		goto out;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		goto out;
	}
	e->kind = LS_KIND_SLEEP;
	e->nr_stacks = 0;
	/* The waker is the thread that runs ready(): its M, running the goroutine that readied. */
	e->has_waker = 1;
	e->waker.pid = tgid;
	e->waker.tid = task_rd(task, pid);
	bpf_probe_read_kernel_str(e->waker.comm, sizeof(e->waker.comm), task->comm);
	e->waker.nr = 0;
	e->waker.pad = 0;
	e->pad0 = 0;
	e->flags = LS_EF_GOROUTINE;
	e->pid = tgid;
	e->tid = p->tid;
	/* The waker's name: Go's threads keep their process's, unless the program renames one. */
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	e->syscall_nr = -1;
	e->switches = 0;
	e->ret = 0;
	e->start_ns = p->start;
	e->end_ns = now;
	e->on_cpu_ns = 0;
	e->blocked_ns = now - p->start;
	e->runqueue_ns = 0;
	e->stacks_dropped = 0;
	e->signal_seq = 0;
	__builtin_memset(e->args, 0, sizeof(e->args));
	e->args[0] = p->goid;
	e->args[1] = p->reason;
	/* ready() runs on the g0 stack (goready's systemstack): the readying goroutine is m.curg. */
	if (proc->m_off && proc->curg_off &&
	    !bpf_probe_read_user(&m, sizeof(m), (void *)(ctx->r14 + proc->m_off)) && m &&
	    !bpf_probe_read_user(&curg, sizeof(curg), (void *)(m + proc->curg_off)) && curg) {
		bpf_probe_read_user(&e->args[2], sizeof(e->args[2]),
				    (void *)(curg + proc->goid_off));
	}
	e->nvcsw = 0;
	e->user.nr = p->nr < LS_MAX_USER_DEPTH ? p->nr : LS_MAX_USER_DEPTH;
	e->user.pad = 0;
	__builtin_memcpy(e->user.ips, p->ips, sizeof(e->user.ips));
	bpf_ringbuf_submit(e, 0);
	stat_inc(LS_STAT_OUTLIERS);
out:
	bpf_map_delete_elem(&go_parks, &key);
#endif
	return 0;
}
