/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rb31.h - where Ruby 3.1 (x86-64, as Debian 12's libruby-3.1.so.3.1 lays it out) keeps what
 * latsnap reads of a Ruby thread's frames.
 *
 * Ruby installs none of these structs' headers (vm_core.h, iseq.h and vm_callinfo.h are
 * internal; ruby3.1-dev ships only the public ones) and Debian's libruby has no debug info, so
 * no build can check them. They are the layouts of Ruby 3.1's vm_core.h, iseq.h, iseq.c and
 * include/ruby/internal/core/r{basic,string,array}.h, and were checked on a live ruby3.1 process
 * (gdb on a thread sleeping in a known script: each control frame's iseq, its flags, its label
 * and path as these offsets read them) and by tests/integration/89d-ruby-frames.t, which names
 * a known script's frames and their lines. The preload library reads a process only when its
 * ruby_version says 3.1.
 */
#ifndef LATSNAP_LIB_RB31_H
#define LATSNAP_LIB_RB31_H

#define LS_RB31_VERSION "3.1." /* ruby_version's start */

/* rb_execution_context_t: the thread's VM stack and its current control frame */
#define LS_RB31_EC_VM_STACK 0 /* VALUE *vm_stack */
#define LS_RB31_EC_VM_STACK_SIZE 8 /* size_t vm_stack_size, in VALUEs */
#define LS_RB31_EC_CFP 16 /* rb_control_frame_t *cfp: frames grow down from the stack's end */
#define LS_RB31_EC_INTERRUPT_FLAG 32 /* rb_atomic_t interrupt_flag, then interrupt_mask */
#define LS_RB31_EC_THREAD 48 /* rb_thread_t *thread_ptr */
/*
 * interrupt_flag's PENDING_INTERRUPT_MASK: set by rb_threadptr_interrupt(), which every wakeup of
 * a sleeping thread goes through (a joined thread's end, Queue#push, Mutex#unlock, Thread#wakeup),
 * and cleared only once the thread is back in Ruby's code, its GVL taken. A thread that gave the
 * GVL up at its timeslice's end had its interrupts just handled: none is pending.
 */
#define LS_RB31_PENDING_INTERRUPT_MASK 0x2

/*
 * The GVL, in the thread's ractor (rb_thread_t.ractor, then rb_ractor_t.threads.gvl, an
 * rb_global_vm_lock_t): its owner, and its timer, the one waiter that sleeps 100 ms at a time and
 * then asks the owner to yield (do_gvl_timer()). Found on a live ruby3.1 with two threads
 * computing: the owner and timer words swap between their rb_thread_t every 100 ms, 64 bytes
 * apart (lock, a pthread_mutex_t, and the waiters' list between them), threads.main 192 bytes
 * after the owner; checked by tests/integration/89d-ruby-frames.t.
 */
#define LS_RB31_RACTOR_GVL_WAITQ 384 /* threads.gvl.waitq: a list_head of waiters' nodes */
#define LS_RB31_GVL_WAITQ_WALK 8 /* waiters looked at, at most */
#define LS_RB31_TH_RACTOR 24 /* rb_ractor_t *ractor */
/*
 * rb_thread_t's native_thread_data.node.gvl: its node in the GVL's waiters' list (a union with
 * its node in the list of threads blocked in I/O, so only a walk from the list's head tells).
 * Found on the same live process: the waiters' list's first node, 104 bytes into the timer.
 */
#define LS_RB31_TH_GVL_NODE 104
/*
 * rb_thread_t's status (its low 2 bits, a bitfield after the int tid) and locking_mutex (the
 * Mutex it waits to lock, else Qfalse): found on a live ruby3.1 with four threads, one holding a
 * Mutex in sleep, one in its lock, one in Queue#pop, one in sleep (Fiddle.dlwrap gave the
 * Mutex's VALUE).
 */
#define LS_RB31_TH_STATUS 92
#define LS_RB31_TH_STATUS_MASK 0x3
#define LS_RB31_THREAD_RUNNABLE 0 /* running Ruby code, or ready to: a GVL wait is a yield */
#define LS_RB31_THREAD_STOPPED 1 /* a sleep with a deadline, or outside the GVL (I/O) */
#define LS_RB31_THREAD_STOPPED_FOREVER 2 /* a join, Queue#pop, ConditionVariable#wait */
#define LS_RB31_TH_LOCKING_MUTEX 264
/*
 * rb_thread_t's blocking_region_buffer: set while the thread runs outside the GVL in a blocking
 * region (I/O: a read, an accept's ppoll), NULL in a sleep. Right after native_thread_data (the
 * GVL node at 104, a list node and a pthread_cond_t: 64 bytes), and 96 bytes before
 * locking_mutex (thgroup, value, the two pending-interrupt VALUEs, interrupt_lock, unblock):
 * both give 168. Checked by tests/integration/41b-ruby-waits.t (a sleep's ppoll is a sleep, a
 * server's accept is not).
 */
#define LS_RB31_TH_BLOCKING_REGION 168
#define LS_RB31_QFALSE 0
#define LS_RB31_RACTOR_GVL_OWNER 336 /* threads.gvl.owner */
#define LS_RB31_RACTOR_GVL_TIMER 400 /* threads.gvl.timer */

/* rb_control_frame_t */
#define LS_RB31_CFP_PC 0
#define LS_RB31_CFP_ISEQ 16
#define LS_RB31_CFP_EP 32
#define LS_RB31_CFP_READ 40 /* the bytes read of a frame: pc up to ep */
#define LS_RB31_CFP_SIZE 64 /* sizeof: pc, sp, iseq, self, ep, block_code, __bp__, jit_return */

/* ep[VM_ENV_DATA_INDEX_FLAGS]: the frame's magic and flags */
#define LS_RB31_FRAME_FLAG_FINISH 0x0020 /* the first frame of its rb_vm_exec call */
#define LS_RB31_FRAME_FLAG_CFRAME 0x0080 /* a C frame (cfunc, ifunc, dummy): no iseq */

/* rb_iseq_t, an imemo */
#define LS_RB31_T_MASK 0x1f
#define LS_RB31_T_IMEMO 0x1a
#define LS_RB31_IMEMO_SHIFT 12 /* FL_USHIFT */
#define LS_RB31_IMEMO_MASK 0x0f
#define LS_RB31_IMEMO_ISEQ 7
#define LS_RB31_ISEQ_BODY 16 /* struct rb_iseq_constant_body *body */

/* struct rb_iseq_constant_body */
#define LS_RB31_BODY_ISEQ_SIZE 4 /* unsigned int iseq_size, in VALUEs */
#define LS_RB31_BODY_ENCODED 8 /* VALUE *iseq_encoded: pc - this = the position */
#define LS_RB31_BODY_PATHOBJ 64 /* location.pathobj: a String, or an Array [path, realpath] */
#define LS_RB31_BODY_LABEL 80 /* location.label: a String */
#define LS_RB31_BODY_INSNS 120 /* insns_info.body: struct iseq_insn_info_entry[size] */
#define LS_RB31_BODY_POSITIONS 128 /* insns_info.positions (NULL once encoded, as usual) */
#define LS_RB31_BODY_INSNS_SIZE 136 /* unsigned int insns_info.size */
#define LS_RB31_BODY_SUCC 144 /* insns_info.succ_index_table */
#define LS_RB31_BODY_READ 152
#define LS_RB31_INSN_ENTRY_SIZE 12 /* int line_no, int node_id, rb_event_flag_t events */
#define LS_RB31_INSN_LINE 0

/* struct succ_index_table (iseq.c): positions as a rank dictionary */
#define LS_RB31_SUCC_IMM_SIZE 54 /* IMMEDIATE_TABLE_SIZE: the first positions, 9 to a word */
#define LS_RB31_SUCC_PART 48 /* succ_part[]: after uint64_t imm_part[6] */
#define LS_RB31_SUCC_BLOCK_SIZE 80 /* unsigned rank; u64 small_block_ranks; u64 bits[8] */
#define LS_RB31_SUCC_BLOCK_SMALL 8
#define LS_RB31_SUCC_BLOCK_BITS 16

/* RBasic, RString, RArray (USE_RVARGC off, as 3.1 builds by default) */
#define LS_RB31_T_STRING 0x05
#define LS_RB31_T_ARRAY 0x07
#define LS_RB31_FL_USER1 (1UL << 13) /* RSTRING_NOEMBED, RARRAY_EMBED_FLAG */
#define LS_RB31_STR_EMBED_SHIFT 14 /* RSTRING_EMBED_LEN_SHIFT, 5 bits */
#define LS_RB31_STR_LEN 16 /* as.heap.len */
#define LS_RB31_STR_PTR 24 /* as.heap.ptr */
#define LS_RB31_STR_EMBED 16 /* as.embed.ary */
#define LS_RB31_ARY_EMBED 16 /* as.ary[0] of an embedded array */
#define LS_RB31_ARY_PTR 32 /* as.heap.ptr */

#endif /* LATSNAP_LIB_RB31_H */
