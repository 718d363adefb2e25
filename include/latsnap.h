/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latsnap.h - types and constants shared by the BPF tracker and user space.
 *
 * Plain types only: this header is included by bpf/latsnap.bpf.c (with vmlinux.h) and by the
 * user-space tracker (with <linux/types.h>), so it must not pull in anything else.
 */
#ifndef LATSNAP_H
#define LATSNAP_H

/* Distinct kernel stacks kept per outlier, and frames per stack. */
#define LS_MAX_STACKS 8
#define LS_MAX_DEPTH 48
/* Frames of a user stack walked by frame pointers in the kernel. */
#define LS_MAX_USER_DEPTH 64
/* Syscall numbers the idle bitmap covers. */
#define LS_MAX_SYSCALLS 512
#define LS_TASK_COMM_LEN 16

/* The first byte of every ring buffer record. */
enum ls_kind {
	LS_KIND_SYSCALL = 1, /* struct ls_event */
	LS_KIND_SLEEP = 2, /* struct ls_event */
	LS_NOTICE_MAPS = 3, /* struct ls_notice: it waits, so it lives: read its maps; arg a key */
	LS_NOTICE_EXEC = 4, /* struct ls_notice: new mappings; arg the time's low 32 bits */
	LS_NOTICE_EXIT = 5, /* struct ls_notice: the process is gone */
	LS_NOTICE_DISPLACED = 6, /* struct ls_notice: the application took our signal (arg) */
	LS_NOTICE_REGISTERED = 7, /* struct ls_notice: the process registered, signal arg */
	LS_NOTICE_REFUSED = 8, /* struct ls_notice: registration refused (once), uid arg */
	LS_KIND_UNWOUND = 9, /* struct ls_unwound: the preload library's answer to a signal */
	LS_KIND_REQUEST = 10, /* struct ls_request: a request that ended (record --request) */
	LS_KIND_SAMPLE = 11, /* struct ls_sample: an on-CPU sample of a thread inside a request */
};

/* Values of the BPF map maps_noticed (tgid -> what was said of its mappings). */
#define LS_MAPS_TOLD 1 /* LS_NOTICE_MAPS went out */
#define LS_MAPS_RETELL 2 /* user space asks for another at the process's next blocking wait */

/*
 * Requests (record --request): operations of a thread between a start and an end probe of its
 * program. Each attachment's cookie is its pair's index << LS_REQ_COOKIE_SHIFT, with the bits
 * below.
 */
#define LS_REQ_COOKIE_END 1 /* the end probe */
#define LS_REQ_COOKIE_NESTS 2 /* a function's entry and return: a start inside it is recursion */
/*
 * What pairs a start with its end (bits 2-5): the thread (0), the probe's argument N (1 to 12,
 * a uprobe's first 5 registers or a USDT probe's arguments), or the function's return value.
 */
#define LS_REQ_COOKIE_KEY_SHIFT 2
#define LS_REQ_COOKIE_KEY_MASK 0xf
#define LS_REQ_KEY_THREAD 0
#define LS_REQ_KEY_ARGS 12
#define LS_REQ_KEY_RET 15
#define LS_REQ_COOKIE_SHIFT 6
#define LS_MAX_REQUESTS 16
#define LS_REQ_ARG_LEN 256

/* record --cgroup and --comm: how many of each (the BPF maps of the wanted ones are this big). */
#define LS_MAX_CGROUPS 8
#define LS_MAX_COMMS 8

/*
 * The name of an executable file (its last path component), NUL-padded: the key of the map of
 * latsnap's own and LTTng's daemons' file names (quiet_exes; tracker/ours.c).
 */
#define LS_EXE_NAME_LEN 32

/* A process name as the kernel keeps it, NUL-padded: the key of the wanted names' map. */
struct ls_comm {
	char name[LS_TASK_COMM_LEN];
};

enum ls_req_arg {
	LS_REQ_ARG_NONE = 0,
	LS_REQ_ARG_TEXT = 1, /* the start probe's first argument, a string */
	LS_REQ_ARG_NUMBER = 2, /* not a readable string: its value */
};

/*
 * A request that ended, slow (or with waits sent as parts of it, which user space then drops
 * with it when it was not slow after all: @slow 0).
 */
struct ls_request {
	__u8 kind; /* LS_KIND_REQUEST */
	__u8 slow; /* at least the threshold */
	__u8 arg_kind; /* enum ls_req_arg */
	__u8 pad;
	__u32 pair;
	__u32 pid;
	__u32 tid;
	char comm[LS_TASK_COMM_LEN];
	__u32 switches;
	__u32 waits; /* its waits sent before it, LS_EF_IN_REQUEST */
	__u64 start_ns;
	__u64 end_ns;
	__u64 on_cpu_ns; /* from the scheduler's own accounting: within a tick */
	__u64 runqueue_ns;
	__u64 arg_num;
	char arg[LS_REQ_ARG_LEN];
	/*
	 * A request keyed by an object (LS_REQ_KEY_THREAD not its key): @key, the object; its
	 * on_cpu_ns, runqueue_ns, switches and waits are not its own (its thread served others);
	 * @others, the requests its thread began while it lasted. @peer_tid: the thread that last
	 * wrote to the socket it connected (its upstream), at @peer_ns; 0 when unknown.
	 */
	__u64 key;
	__u64 peer_ns;
	__u32 peer_pid;
	__u32 peer_tid;
	__u32 others;
	__u8 keyed;
	__u8 pad2[3];
	char peer_comm[LS_TASK_COMM_LEN];
};

struct ls_notice {
	__u8 kind;
	__u8 pad[3];
	__u32 pid;
	__u32 arg;
};

/*
 * Registration with the preload library. The library calls
 *	prctl(LS_PRCTL_OPTION, op, signal, handler, LS_ABI_VERSION)
 * which the kernel rejects with EINVAL whether latsnap runs or not; the BPF program sees it at
 * sys_enter and files it under the caller's tgid, so a process can only ever speak for itself.
 */
#define LS_PRCTL_OPTION 0x4c534e50 /* "LSNP" */
#define LS_ABI_VERSION 1

enum ls_prctl_op {
	LS_PRCTL_REGISTER = 1, /* signal me with sig; my handler is at handler */
	LS_PRCTL_UNREGISTER = 2, /* never signal me again */
	LS_PRCTL_QUIET_THREAD = 3, /* the calling thread is the tracer's, not the application's */
	/*
	 * From latsnap's signal handler: the unwound stack, a struct ls_unwind_report, with
	 * LS_UNWOUND_ARG(nr, status, truncated, rt_state) as the third argument. Taken only from a thread
	 * latsnap signalled and has not heard from since.
	 */
	LS_PRCTL_USER_STACK = 4,
	/*
	 * After LS_PRCTL_REGISTER: the language runtime the process runs (LS_RUNTIME_*, the
	 * third argument), whose waits the library tells apart. It speaks for itself only.
	 */
	LS_PRCTL_RUNTIME = 5,
};

/*
 * LS_RUNTIME_RUBY: CRuby 3.1, whose thread that holds the signal pipe sleeps, and joins, in a
 * ppoll: not an event loop's wait for work, the thread's status tells (LS_RT_*).
 */
enum ls_runtime {
	LS_RUNTIME_NONE = 0,
	LS_RUNTIME_RUBY = 1,
};

/* The most frames the preload library unwinds, and so reports. */
#define LS_UNWOUND_MAX_DEPTH 128
/* The deepest stack of any outlier or event latsnap writes: the unwound ones. */
#define LS_MAX_FRAMES LS_UNWOUND_MAX_DEPTH
#define LS_UNWOUND_ARG(nr, status, truncated, rt_state)                                         \
	((unsigned long)(nr) | ((unsigned long)(status) << 16) |                                  \
	 ((unsigned long)(truncated) << 24) | ((unsigned long)(rt_state) << 25))
#define LS_UNWOUND_RT_STATE(arg) (((arg) >> 25) & 0x7f)
/*
 * What the thread's language runtime said of it, in its own state, when the handler ran (bits of
 * rt_state; 0 from a library that reads no runtime state). LS_RT_GVL_WAIT: it waits for its
 * interpreter's global lock, which another of its threads holds (Ruby 3.1: the thread is the
 * GVL's timer, the waiter that asks the holder to yield every 100 ms, or in its waiters' list).
 */
#define LS_RT_GVL_WAIT 0x1
/* It waits to lock a mutex of its language (Ruby 3.1: rb_thread_t.locking_mutex is set). */
#define LS_RT_MUTEX_WAIT 0x2
/*
 * It is stopped with a deadline (Ruby 3.1: status THREAD_STOPPED: Kernel#sleep, a timed wait;
 * also any call that left the GVL, I/O included, which waits in its own syscall).
 */
#define LS_RT_TIMED_STOP 0x4
/*
 * With LS_RT_GVL_WAIT: the thread was running, and gave the lock up at its timeslice's end for
 * another that wanted it (Ruby 3.1: status runnable): the interpreter's run queue.
 */
#define LS_RT_GVL_YIELD 0x8
/*
 * It waits for another of its threads, without a deadline (Ruby 3.1: status
 * THREAD_STOPPED_FOREVER: Thread#join, Queue#pop, ConditionVariable#wait, Mutex#sleep).
 */
#define LS_RT_STOPPED_FOREVER 0x10

/* The most CPython frames the handler copies, and the mark of a report that holds them. */
#define LS_PY_MAX_FRAMES 32
#define LS_PY_MAGIC 0x50594652 /* "PYFR": an older library's report has no py part */
/*
 * In a Ruby 3.1 process the same fields hold its frames instead: py_magic is LS_RB_MAGIC, each
 * ls_py_frame's code is a control frame's iseq and instr its pc, and bit i of py_entry marks the
 * frame its rb_vm_exec call entered at (VM_FRAME_FLAG_FINISH).
 */
#define LS_RB_MAGIC 0x52424652 /* "RBFR" */
/*
 * And in a PHP 8.2 process, py_magic is LS_PHP_MAGIC: code is a frame's zend_function, instr its
 * opline, and bit i of py_entry marks the frame its execute_ex call entered at (ZEND_CALL_TOP).
 */
#define LS_PHP_MAGIC 0x50484652 /* "PHFR" */

/* A CPython 3.11 frame as the handler found it: the tracker names it from the code object. */
struct ls_py_frame {
	__u64 code; /* its PyCodeObject (f_code) */
	__u64 instr; /* the last instruction it ran (prev_instr) */
};

/* What the handler reports, in its own stack frame. */
struct ls_unwind_report {
	__u64 unwind_ns; /* how long the walk took */
	__u64 ips[LS_UNWOUND_MAX_DEPTH]; /* innermost first */
	__u32 py_magic; /* LS_PY_MAGIC (LS_RB_MAGIC) when the py fields are the library's */
	__u32 py_nr; /* valid entries in py */
	__u32 py_entry; /* bit i: py[i] is the frame its _PyEval_EvalFrameDefault call entered at */
	__u32 py_ns; /* how long the walk of the Python frames took */
	struct ls_py_frame py[LS_PY_MAX_FRAMES]; /* innermost first */
};

/* The unwound stack of a signalled thread, as the BPF side passes it on. */
struct ls_unwound {
	__u8 kind; /* LS_KIND_UNWOUND */
	__u8 status; /* enum ls_unwind_status */
	__u8 truncated; /* the walk stopped at the library's depth limit */
	__u8 rt_state; /* LS_RT_* bits: what the thread's runtime said of it */
	__u32 pid;
	__u32 tid;
	__u32 nr; /* valid entries in report.ips */
	/* The thread's signal this answers (struct ls_event's signal_seq): its outlier's key. */
	__u32 seq;
	/* Reports of the thread the ring buffer had no room for, since its previous one. */
	__u32 lost_before;
	struct ls_unwind_report report;
};

/* Values of the registered map, keyed by tgid. */
struct ls_registration {
	__u64 handler; /* the handler the library installed for sig */
	__u32 sig;
	__u32 runtime; /* enum ls_runtime, as the library said (LS_PRCTL_RUNTIME) */
	__u64 displaced; /* the application replaced the handler: never signal again */
};

/*
 * What the library exports, as the symbol LS_PRELOAD_ABI_SYMBOL, for latsnap to find processes
 * that registered before it started. Read with process_vm_readv; trusted for nothing but the
 * process itself, since the handler is checked against the kernel's sigaction at every signal.
 */
#define LS_PRELOAD_ABI_SYMBOL "latsnap_preload_abi"
#define LS_PRELOAD_ABI_MAGIC 0x4c534e50414249ULL /* "LSNPABI" */
#define LS_PRELOAD_MAX_QUIET 8

/* The status of an unwound stack: why it holds fewer frames than it might. */
enum ls_unwind_status {
	LS_UNWIND_OK = 0, /* walked to the outermost frame, or to the depth limit */
	LS_UNWIND_FAILED = 1, /* libunwind could not start from the signal frame */
	LS_UNWIND_BAD_FRAME = 2, /* a frame without unwind info ended the walk early */
	/*
	 * No walk: a thread of the process was forking, when libunwind's locks may be held by
	 * the forking thread. Reported all the same, empty: else the next report of the thread
	 * would be taken for this signal's outlier.
	 */
	LS_UNWIND_FORKING = 3,
};

struct ls_preload_abi {
	__u64 magic;
	__u32 version;
	__s32 sig; /* 0 while not registered */
	__u64 handler;
	__u32 nr_quiet; /* tracer threads (lttng-ust's), never the application's */
	__s32 quiet_tids[LS_PRELOAD_MAX_QUIET];
};

/* Per-outlier flags: what is missing or uncertain, and why. */
enum ls_event_flag {
	LS_EF_STACK_FAILED = 1 << 0, /* a kernel stack could not be read */
	LS_EF_STACKS_DROPPED = 1 << 1, /* more distinct stacks than LS_MAX_STACKS */
	LS_EF_WAKER_STACK_FAILED = 1 << 2,
	LS_EF_ACCUM_FULL = 1 << 3, /* no room to keep its stacks and waker */
	LS_EF_USER_STACK_FAILED = 1 << 4, /* the frame-pointer walk of the user stack failed */
	LS_EF_SIGNALLED = 1 << 5, /* the preload library was signalled to unwind the user stack */
	LS_EF_SIGNAL_DISPLACED = 1 << 6, /* not signalled: the application handles our signal */
	LS_EF_SIGNAL_BLOCKED = 1 << 7, /* not signalled: the thread blocks or has it pending */
	LS_EF_SIGNAL_BUSY = 1 << 8, /* not signalled: the kernel's deferral slot was taken */
	LS_EF_SWITCH_UNSEEN = 1 << 9, /* a switch-in was missed: its runqueue time is a bound */
	LS_EF_IN_REQUEST = 1 << 10, /* a wait inside a request of its thread: a part of it */
	LS_EF_SIGNAL_UNSUPPORTED = 1 << 11, /* not signalled: the kernel has no way to (off-CPU) */
	/* Work context, for the idle policy (see work_note() in latsnap.bpf.c): */
	LS_EF_IN_WORK = 1 << 12, /* the thread was in a unit of work when the wait began */
	LS_EF_WORKED = 1 << 13, /* the thread has been in work before: it serves */
	LS_EF_GOT_WORK = 1 << 14, /* outside work when it began, in work when it ended */
	LS_EF_ANSWERED = 1 << 15, /* a read that brought the answer to what the thread wrote there */
	/*
	 * A goroutine's wait (LS_KIND_SLEEP), from runtime.gopark to runtime.ready: tid is the M
	 * (thread) it parked on, args[0] its goid, args[1] its waitReason, args[2] the goid of the
 * goroutine that readied it (0: unknown), whose thread is the waker (see struct ls_go_proc).
	 */
	LS_EF_GOROUTINE = 1 << 16,
	/* Two CPUs' clocks disagreed while it waited: a time read later was earlier (clamped). */
	LS_EF_CLOCK_BACK = 1 << 17,
	LS_EF_SIGNAL_REFUSED = 1 << 18, /* not signalled: the kernel refused the signal */
	LS_EF_HANDED = 1 << 19, /* its unit of work was handed to it (a wakeup), not read */
	/*
	 * A sleep's user stack is the one frame kept at its switch-out: the walk waited for its
	 * switch back in (owe_walk()), which went unseen.
	 */
	LS_EF_WALK_UNSEEN = 1 << 20,
};

/*
 * Go programs (amd64, Go 1.17+ register ABI): uprobes on runtime.gopark and runtime.ready time a
 * goroutine's wait on the goroutine itself. Per tracked Go process (tgid), what the probes need
 * to know of its binary, from user space (tracker/goroutines.c), which reads it from the
 * binary's DWARF: a process not in the map is not followed.
 */
#define LS_GO_MAX_PROCS 1024
/* Goroutines parked at once, in all followed processes (the oldest go first beyond). */
#define LS_GO_MAX_PARKED 8192

struct ls_go_proc {
	__u32 goid_off; /* offset of runtime.g's goid */
	/*
	 * Offsets of runtime.g's m and runtime.m's curg, 0 when unknown: the goroutine that readies
	 * another runs ready() on its M's g0 stack, and g0.m.curg is that goroutine.
	 */
	__u32 m_off;
	__u32 curg_off;
	__u32 pad;
};

/* work_syscalls[nr]: what a syscall does to a unit of work, if it is on a socket. */
enum ls_work_syscall {
	LS_WORK_NONE = 0,
	LS_WORK_INPUT = 1, /* read, recv...: data in starts a unit */
	LS_WORK_OUTPUT = 2, /* write, send...: to the unit's socket, its reply, ends it */
	LS_WORK_ACCEPT = 3, /* accept: a connection came, work for others */
	LS_WORK_CLOSE = 4, /* close: what was said of the descriptor no longer holds */
	LS_WORK_KIND = 0x0f, /* the kind, above */
	LS_WORK_SOCKET_ONLY = 0x10, /* or'ed: its descriptor is a socket (recv, send...) */
};

/*
 * record --max-rate: each process, and each user, has a share of the outliers the BPF side sends
 * a second, so that one tenant's storm cannot take the ring buffer, the stack slots and the
 * signals from the others. A share's key is its kind (high half) and the tgid or uid (low half).
 */
enum ls_share_kind {
	LS_SHARE_PROCESS = 1,
	LS_SHARE_USER = 2,
};

struct ls_share {
	/*
	 * The share as a virtual clock (GCRA): each outlier sent moves it one interval on, from now
	 * at the earliest; it may run ahead of now by the burst, no further.
	 */
	__u64 tat_ns;
	__u32 dropped; /* outliers dropped in all, over the share (a user's: its processes') */
	__u32 pad;
};

/* Loss and health counters, one slot each in the per-CPU stats map. */
enum ls_stat {
	LS_STAT_RINGBUF_LOST, /* ring buffer reservations that failed: outliers lost */
	LS_STAT_STACK_FAILED, /* bpf_get_*stack() errors */
	LS_STAT_STACKS_DROPPED, /* distinct stacks beyond LS_MAX_STACKS */
	LS_STAT_ACCUM_FULL, /* outliers that found no room in the in-flight map */
	LS_STAT_STORAGE_FAILED, /* task storage could not be created */
	LS_STAT_OUTLIERS, /* outliers submitted */
	LS_STAT_SIGNALS, /* signals sent to the preload library */
	LS_STAT_SIGNAL_BUSY, /* signals the kernel refused with -EBUSY (deferral slot taken) */
	LS_STAT_SIGNAL_SKIPPED, /* registered, but the thread blocked the signal or had it pending */
	LS_STAT_CTX_EVENTS, /* kernel context events streamed */
	LS_STAT_CTX_LOST, /* kernel context events the stream's ring buffer had no room for */
	LS_STAT_UNWOUND, /* unwound stacks the preload library reported */
	LS_STAT_UNWOUND_REFUSED, /* stack reports from threads latsnap had not signalled */
	LS_STAT_USER_WALKS, /* user stacks walked at a switch-out from interrupted user code */
	LS_STAT_SIGNAL_REFUSED, /* signals the kernel would not send, at once or owed (ls_sched_exit) */
	LS_STAT_CTX_STACKS, /* kernel stacks walked for the context stream (waits over its floor) */
	LS_STAT_WAIT_STACKS, /* kernel stacks walked for a tracked thread's long wait */
	/* user stacks walked at the end of a switch back in, for a long interval (save_user_ip()) */
	LS_STAT_USER_WALKS_DEFERRED,
	LS_STAT_THROTTLED, /* outliers dropped at the source: their process or user over its share */
	LS_STAT_MAX,
};

struct ls_stack {
	__u64 weight_ns; /* blocked time spent with this stack */
	__u32 hash;
	__u32 nr; /* valid entries in ips */
	__u64 ips[LS_MAX_DEPTH];
};

struct ls_waker {
	__u32 pid; /* 0 when the wakeup came from interrupt context */
	__u32 tid;
	char comm[LS_TASK_COMM_LEN];
	__u32 nr;
	__u32 pad;
	__u64 ips[LS_MAX_DEPTH];
};

struct ls_user_stack {
	__u32 nr;
	__u32 pad;
	__u64 ips[LS_MAX_USER_DEPTH];
};

/*
 * One outlier, as submitted on the ring buffer. The same struct accumulates in a hash map while
 * a long wait is under way, so that submission is one copy.
 */
struct ls_event {
	__u8 kind; /* enum ls_kind */
	__u8 nr_stacks;
	__u8 has_waker;
	__u8 pad0;
	__u32 flags; /* enum ls_event_flag */
	__u32 pid;
	__u32 tid;
	char comm[LS_TASK_COMM_LEN];
	__s32 syscall_nr; /* -1 for a sleep */
	__u32 switches;
	__s64 ret;
	__u64 start_ns;
	__u64 end_ns;
	__u64 on_cpu_ns;
	__u64 blocked_ns;
	__u64 runqueue_ns;
	__u32 stacks_dropped;
	/*
	 * LS_EF_SIGNALLED: the number of the signal it was sent, in its thread's count (from 1),
	 * which the LS_KIND_UNWOUND record answering it carries; 0 otherwise.
	 */
	__u32 signal_seq;
	__u32 uid; /* its process's real user id (the global one), for each user's share */
	__u32 pad1;
	/* read when it is submitted, never on the way: */
	__u64 args[6]; /* LS_KIND_SYSCALL: its arguments, from the saved user registers */
	__u64 nvcsw; /* the thread's voluntary context switches in all (the idle policy) */
	struct ls_waker waker;
	struct ls_user_stack user;
	struct ls_stack stacks[LS_MAX_STACKS];
};

/*
 * The kernel context stream: what the scheduler did to the tracked threads and to the threads
 * their waits depend on, for the snapshot (latsnap_kernel:* events) and the wait chain. The level
 * is set at run time: none until a snapshot session without a kernel tracer of its own exists.
 */
enum ls_ctx_level {
	LS_CTX_NONE = 0,
	LS_CTX_SCHED = 1, /* switches, wakeups, fork/exec/exit */
	LS_CTX_FULL =
		2, /* and syscalls above the floor, block I/O, the stacks of waits and wakers */
};

enum ls_ctx_kind {
	LS_CTX_SWITCH = 1, /* tid: prev, tid2: next; arg: prev_state; nr: prev's syscall or -1;
			      ips: prev's stack when it blocks */
	LS_CTX_WAKEUP, /* tid: the woken, tid2: current (the waker, or the task an interrupt hit);
			  arg: 1 from a hard interrupt; ips: the waker's stack */
	LS_CTX_FORK, /* tid: parent, tid2: child */
	LS_CTX_EXEC, /* tid */
	LS_CTX_EXIT, /* tid */
	LS_CTX_SYSCALL, /* tid; nr; start: entry; ts: exit; arg: return value */
	LS_CTX_BLOCK_ISSUE, /* tid: issuer; arg: dev; nr: sector; start: bytes; tid2: op */
	LS_CTX_BLOCK_COMPLETE, /* tid: issuer; arg: dev; nr: sector; start: issue time;
				  tid2: error */
	LS_CTX_INTEREST, /* tid: a thread not tracked whose context is streamed from now on;
			    tid2: the thread it relates to; arg: enum ls_interest_reason */
	/*
	 * A held-back switch-out (LS_CTX_SWITCH, no stack) and the wakeup that ended its wait
	 * (LS_CTX_WAKEUP, no stack) in one record, as the kernel writes them: the switch's fields,
	 * at: the wakeup's time; waker_tid, waker_pid, comm3: the waker; wake_cpu, wake_irq: the
	 * wakeup's CPU and arg. User space reads it as the two (tracker/context.c).
	 */
	LS_CTX_SWITCH_WAKEUP,
};

enum ls_interest_reason {
	LS_INTEREST_WAKER = 1, /* it woke a streamed thread */
	LS_INTEREST_WAKEE = 2, /* a tracked thread woke it (a request to a server) */
};

/*
 * The fields of a record of the context stream. In the kernel, a record (struct ls_ctx_record)
 * sits in its CPU's ring (ctx_ring) and its stack, if any, in the CPU's stack ring (ctx_stacks):
 * records of a hundred bytes written one after the other stay cheap to write, where each with
 * room for a stack cost a cache miss more per event (about 100 ns). User space reads both into
 * one struct ls_ctx_event.
 */
#define LS_CTX_FIELDS                                                                              \
	__u8 kind; /* enum ls_ctx_kind */                                                          \
	__u8 preempted; /* LS_CTX_SWITCH: prev was preempted */                                    \
	__u16 nr_ips;                                                                              \
	__u32 cpu;                                                                                 \
	__u64 ts;                                                                                  \
	__u32 tid;                                                                                 \
	__u32 pid;                                                                                 \
	__u32 tid2;                                                                                \
	__u32 pid2;                                                                                \
	char comm[LS_TASK_COMM_LEN];                                                               \
	char comm2[LS_TASK_COMM_LEN];                                                              \
	__s64 nr;                                                                                  \
	__s64 arg;                                                                                 \
	union {                                                                                    \
		__u64 start;                                                                       \
		struct {                                                                           \
			__u32 waker_tid; /* LS_CTX_SWITCH_WAKEUP */                                \
			__u32 waker_pid;                                                           \
		};                                                                                 \
	};                                                                                         \
	/* when it was written: ts, or later for a switch-out held back till the wakeup */         \
	__u64 at;                                                                                  \
	/* its place in its CPU's ring, plus one; the top bit while being written */               \
	__u64 seq;                                                                                 \
	union {                                                                                    \
		/* with nr_ips: the seq of its stack in its CPU's stack ring */                    \
		__u64 stack_seq;                                                                   \
		struct {                                                                           \
			__u32 wake_cpu; /* LS_CTX_SWITCH_WAKEUP, which has no stack */             \
			__u32 wake_irq;                                                            \
		};                                                                                 \
	};                                                                                         \
	/* LS_CTX_SWITCH_WAKEUP: the waker's comm; 128 bytes, two whole lines of the mmaped ring */ \
	char comm3[LS_TASK_COMM_LEN];

struct ls_ctx_record {
	LS_CTX_FIELDS
};

/* A stack of the context stream, in its CPU's stack ring (ctx_stacks). */
struct ls_ctx_stack {
	__u64 seq; /* as ls_ctx_record.seq */
	__u64 ips[LS_MAX_DEPTH];
};

/* A record of the context stream as user space hands it on: only nr_ips of ips count. */
struct ls_ctx_event {
	LS_CTX_FIELDS
	__u64 ips[LS_MAX_DEPTH];
};


/*
 * The BPF side's per-CPU cache of the task running there: whether it is cold (see
 * verdict_cold()), and the syscall it is in while that has not left the CPU (see
 * syscall_enter_fast()).
 */
#define LS_VERDICT_CPUS 1024
/* ls_cpu_verdict.fast: whose syscalls may start in the cache. */
enum ls_verdict_fast {
	LS_FAST_NONE = 0,
	LS_FAST_TRACKED, /* tracked, no outlier in the making */
	LS_FAST_STREAMED, /* not tracked, on the full context stream (of interest) */
};
struct ls_cpu_verdict {
	__u64 task;
	__u32 gen;
	__u8 cold;
	__u8 fast; /* enum ls_verdict_fast */
	__u8 sc_rt; /* sc_start is the thread's run time at entry, not the clock (see sc_start_at()) */
	__u8 ctx_busy; /* a ring slot is being taken (see ctx_take()) */
	__u64 ctx_head; /* context events this CPU wrote into its ring (see ctx_reserve()) */
	__u64 sc_task; /* the task whose syscall the next fields hold, set last; or 0 */
	__u64 sc_start;
	__u64 sc_jiffies;
	__s64 sc_nr;
	__u64 ctx_stack_head; /* stacks this CPU wrote into its stack ring */
}; /* 64 bytes: a cache line each */

/*
 * The stall scan (SEC("iter/task") ls_stall_scan): a record per tracked thread that has waited,
 * off CPU or in one syscall, at least stall_min_ns, or per the one thread stall_tid names. A
 * thread stuck for good never reaches a hook again: only a scan finds it.
 */
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define LS_NR_UREGS 33 /* arm64 user registers in DWARF order: x0..x30 sp, then pc */
#else
#define LS_NR_UREGS 17 /* x86-64 user registers in DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
#endif

enum ls_stall_flag {
	LS_STALL_NO_STATE = 1 << 0, /* no state: blocked since before it was tracked; start unknown */
	LS_STALL_ON_CPU = 1 << 1, /* on a CPU: its registers are those of its last kernel entry */
	LS_STALL_IN_USER = 1 << 2, /* its last kernel entry was not a syscall (interrupt, fault) */
	LS_STALL_IN_WORK = 1 << 3, /* in a unit of work when the wait began (LS_EF_IN_WORK) */
	LS_STALL_WORKED = 1 << 4, /* it has been in work before (LS_EF_WORKED) */
};

struct ls_stall {
	__u32 pid;
	__u32 tid;
	char comm[LS_TASK_COMM_LEN];
	__u32 flags; /* enum ls_stall_flag */
	__u32 task_state; /* task->__state: 0 runnable, TASK_INTERRUPTIBLE 1, UNINTERRUPTIBLE 2 */
	__u8 run_state; /* latsnap's: 1 running, 2 blocked, 3 runnable (0 unknown) */
	__u8 in_syscall;
	__u16 nr_kips;
	__s32 syscall_nr; /* the syscall it waits in, -1 for an off-CPU interval outside one */
	__u32 switches;
	__u32 pad;
	__u64 start_ns; /* when the wait began (syscall entry or switch-out) */
	__u64 now_ns; /* when the scan saw it */
	__u64 on_cpu_ns; /* the split so far */
	__u64 blocked_ns;
	__u64 runqueue_ns;
	__u64 nvcsw; /* the kernel's context switch count: unchanged between scans, the same wait */
	__u64 voluntary; /* its voluntary switches alone (the idle policy) */
	__u64 args[6]; /* the syscall's arguments, from the saved user registers */
	__u64 regs[LS_NR_UREGS];
	__u64 kips[LS_MAX_DEPTH]; /* its kernel stack, innermost first (off CPU, stall_tid only) */
};

/*
 * On-CPU samples of the threads inside requests, one every LS_SAMPLE_PERIOD_NS of a CPU's time
 * (a cpu-clock perf event per CPU): where a slow request's on-CPU time went.
 */
#define LS_SAMPLE_PERIOD_NS 10000000ULL

struct ls_sample {
	__u8 kind; /* LS_KIND_SAMPLE */
	__u8 pad[3];
	__u32 pid;
	__u32 tid;
	__u16 nr_kips;
	__u16 nr_uips;
	__u64 ts;
	__u64 kips[LS_MAX_DEPTH]; /* innermost first */
	__u64 uips[LS_MAX_USER_DEPTH]; /* frame pointers walked by the kernel */
};

/* Values of the tracked-processes map. */
enum ls_track_reason {
	LS_TRACK_TARGET = 1, /* -p PID or the COMMAND latsnap started */
	LS_TRACK_CHILD = 2, /* a descendant of a tracked process */
	LS_TRACK_REGISTERED = 4, /* registered itself through the preload library */
};

#endif /* LATSNAP_H */
