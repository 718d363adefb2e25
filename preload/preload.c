// SPDX-License-Identifier: GPL-2.0
/*
 * preload.c - liblatsnap.so: registers the process with latsnap and, on latsnap's signal,
 * unwinds the user stack where the thread was and reports it to latsnap through the kernel.
 *
 * The signal path (ls_on_signal) runs on top of whatever the thread was doing: it takes no lock,
 * allocates nothing, calls no stdio and leaves errno as it found it. Its report is one prctl,
 * which latsnap's BPF program takes from the signalled thread only. The library loads nothing
 * but libunwind: no tracer, no thread, no wrapper of fork or pthread_create, so that a fork or
 * an exec of a preloaded process costs what it costs without it, and nothing of latsnap's own
 * ever waits in the application. latsnap itself puts the stack into the trace
 * (latsnap:user_stack). The only wrapper is dl_iterate_phdr (which lets libunwind find unwind
 * tables without the loader's lock), and the registration is one prctl per process image; the
 * kernel side carries it over to forked children. In a CPython 3.11 process the report also
 * holds the thread's Python frames, as the interpreter's pointers (py_frames(): a fixed number
 * of fault-safe reads); latsnap names them (tracker/pyframes.c). In a Ruby 3.1 process it holds
 * the thread's Ruby control frames the same way (rb_frames(), tracker/rbframes.c), and in a
 * PHP 8.2 process its PHP frames (php_frames(), tracker/phpframes.c).
 *
 * Settings come from the environment, read once in the constructor and never in secure
 * execution (setuid and the like), where the library does nothing at all:
 *	LATSNAP_SIGNAL	the signal to take (number or name, see ls_parse_signal), "off" for none
 *	LATSNAP_DEPTH	the most frames an unwound stack holds (1..LS_PRELOAD_MAX_DEPTH, 64)
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include "include/latsnap.h"
#include "lib/php82.h"
#include "lib/py311.h"
#include "lib/rb31.h"
#include "lib/signame.h"

#define LS_PRELOAD_MAX_DEPTH LS_UNWOUND_MAX_DEPTH
#define LS_PRELOAD_DEFAULT_DEPTH 64

#define LS_EXPORT __attribute__((visibility("default")))
#define LS_TLS __thread __attribute__((tls_model("initial-exec")))

/* Read by latsnap (process_vm_readv) to find a process that registered before it started. */
LS_EXPORT volatile struct ls_preload_abi latsnap_preload_abi = {
	.magic = LS_PRELOAD_ABI_MAGIC,
	.version = LS_ABI_VERSION,
};

static int ls_signal; /* 0: the library is off in this process */
static unsigned int ls_max_depth = LS_PRELOAD_DEFAULT_DEPTH;

/*
 * Set while this thread's handler walks its stack: libunwind's lookups of unwind tables then go
 * to find_object_unlocked(), for the pc the handler is about to step from (tls_lookup_pc).
 */
static LS_TLS int tls_in_handler;
static LS_TLS uintptr_t tls_lookup_pc;

/*
 * fork and the handler exclude each other. libunwind's locks are copied into a child in the
 * state they had: a thread of the parent inside the handler at fork leaves one held there for
 * good, and the child's own handler then waits for it for ever (seen: a child of stress.c's
 * fork thread, signalled before fork had even returned in it). So fork waits for the handlers
 * under way to end (pthread_atfork's prepare), and a handler that finds a fork under way, in
 * the parent or in the child before fork returns there, unwinds nothing (it reports an empty
 * stack: LS_UNWIND_FORKING). But for the forking thread itself in the parent (tls_forking, and
 * the process that forks, ls_forking_pid): its handler runs before the copy is made (in the
 * prepare's wait) or after (on its way back from clone), never during it.
 */
static volatile int ls_forking;
static volatile int ls_handlers_active;
static volatile pid_t ls_forking_pid;
static LS_TLS int tls_forking;

/*
 * CPython 3.11's _PyRuntime, found at init when the process is a 3.11 interpreter (0: it is
 * not, and the handler reads no Python frames).
 */
static uintptr_t ls_py_runtime;
/* _PyEval_EvalFrameDefault's code: each of its calls in the stack runs Python frames. */
static uintptr_t ls_py_eval_start, ls_py_eval_end;

/*
 * Ruby 3.1's ruby_current_ec, a thread-local of libruby: its distance from the thread pointer,
 * the same in every thread (libruby was loaded with the program, so its TLS is static). And
 * rb_vm_exec's code: each of its calls in the stack runs Ruby frames. ls_rb_exec_start is 0 when
 * the process is no Ruby 3.1.
 */
static intptr_t ls_rb_ec_offset;
static uintptr_t ls_rb_exec_start, ls_rb_exec_end;

/*
 * PHP 8.2's executor_globals (a non-thread-safe build: one for the process) and execute_ex's
 * code, whose calls run PHP frames; ls_php_eg is 0 when the process is no PHP 8.2.
 */
static uintptr_t ls_php_eg;
static uintptr_t ls_php_exec_start, ls_php_exec_end;

typedef int (*phdr_callback_fn)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_fn)(phdr_callback_fn, void *);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * object_at - the loaded object holding @pc, as dl_iterate_phdr() would describe it, found with
 * _dl_find_object(): a lock-free read of the loader's table (glibc 2.35), where
 * dl_iterate_phdr() takes the loader's lock. Its program headers are read from the ELF header
 * at the start of its mapping. Return: 0, or -1 when no object holds @pc or its header is not
 * what is expected.
 */
static int object_at(uintptr_t pc, struct dl_phdr_info *info, uintptr_t *map_start)
{
	struct dl_find_object found;
	const ElfW(Ehdr) * ehdr;
	uintptr_t start, size;

	if (_dl_find_object((void *)pc, &found) != 0 || !found.dlfo_link_map) {
		return -1;
	}
	start = (uintptr_t)found.dlfo_map_start;
	size = (uintptr_t)found.dlfo_map_end - start;
	ehdr = (const ElfW(Ehdr) *)start;
	if (size < sizeof(*ehdr) || ehdr->e_ident[EI_MAG0] != ELFMAG0 ||
	    ehdr->e_ident[EI_MAG1] != ELFMAG1 || ehdr->e_ident[EI_MAG2] != ELFMAG2 ||
	    ehdr->e_ident[EI_MAG3] != ELFMAG3 || ehdr->e_phentsize != sizeof(ElfW(Phdr)) ||
	    ehdr->e_phoff > size || (size - ehdr->e_phoff) / sizeof(ElfW(Phdr)) < ehdr->e_phnum) {
		return -1;
	}
	memset(info, 0, sizeof(*info));
	info->dlpi_addr = found.dlfo_link_map->l_addr;
	info->dlpi_name = found.dlfo_link_map->l_name;
	info->dlpi_phdr = (const ElfW(Phdr) *)(start + ehdr->e_phoff);
	info->dlpi_phnum = ehdr->e_phnum;
	*map_start = start;
	return 0;
}

/*
 * find_object_unlocked - dl_iterate_phdr() for libunwind inside the handler: @callback sees
 * only the object of the pc being stepped from. libunwind looks up pc - 1 for a call's return
 * address and pc itself for the interrupted frame; both objects are offered when they differ.
 */
static int find_object_unlocked(phdr_callback_fn callback, void *data)
{
	struct dl_phdr_info info;
	uintptr_t pc = tls_lookup_pc, map_start, offered = 0;
	int ret = 0, i;

	for (i = 0; i < 2 && !ret && pc; i++) {
		if (object_at(pc - 1 + (uintptr_t)i, &info, &map_start) || map_start == offered) {
			continue;
		}
		offered = map_start;
		ret = callback(&info, sizeof(info), data);
	}
	return ret;
}

/*
 * glibc's dl_iterate_phdr, found on first use (other libraries' constructors call it before ours
 * runs) and at the latest by our constructor, so never first in some application's handler.
 */
static dl_iterate_phdr_fn next_dl_iterate_phdr(void)
{
	static dl_iterate_phdr_fn next;
	dl_iterate_phdr_fn iterate = __atomic_load_n(&next, __ATOMIC_ACQUIRE);

	if (!iterate) {
		iterate = (dl_iterate_phdr_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
		__atomic_store_n(&next, iterate, __ATOMIC_RELEASE);
	}
	return iterate;
}

/**
 * dl_iterate_phdr - glibc's, except inside latsnap's handler. glibc's holds the loader's lock
 * across every callback, and code that holds it calls malloc (dlclose frees the object, lttng-ust
 * and other callers allocate in their callbacks): a handler waiting for that lock on top of a
 * thread interrupted inside malloc would wait forever, and so would the thread holding the lock
 * (the check-asan storm caught it: 68 threads stuck). libunwind 1.6 offers no other way in.
 */
LS_EXPORT int dl_iterate_phdr(phdr_callback_fn callback, void *data)
{
	dl_iterate_phdr_fn iterate;

	if (tls_in_handler) {
		return find_object_unlocked(callback, data);
	}
	iterate = next_dl_iterate_phdr();
	return iterate ? iterate(callback, data) : 0;
}

/*
 * safe_read - copy @len bytes at @addr of this process (@self, from getpid(): asked in the
 * handler, right in a child however it was made), or fail (-1) where a plain load would
 * fault: the interpreter's pointers are read while it runs on, and a stale one must cost the
 * report its Python frames, never the process its life. One system call, async-signal-safe.
 */
static int safe_read(pid_t self, uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)addr, .iov_len = len };

	return process_vm_readv(self, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static uintptr_t word_at(const unsigned char *buf, size_t off)
{
	uintptr_t w;

	memcpy(&w, buf + off, sizeof(w));
	return w;
}

/*
 * py_frames - this thread's CPython 3.11 frames, innermost first, into @report: per frame its
 * code object, last instruction and is_entry bit (the tracker names them later). The thread's
 * PyThreadState is the value of the interpreter's own TSS key (pthread_getspecific() reads the
 * thread's descriptor, no lock); each frame is one safe_read(), at most LS_PY_MAX_FRAMES of them
 * and two more. Only as many eval calls' frames are read as the native stack (@depth frames) has
 * _PyEval_EvalFrameDefault frames to place them at: none, no read at all. A thread that is not
 * Python's, or any unreadable pointer, ends the walk there.
 */
static void py_frames(struct ls_unwind_report *report, uint32_t depth)
{
	unsigned char frame[LS_PY311_FRAME_READ];
	uintptr_t tstate, cframe, cur;
	uint64_t start = now_ns();
	uint32_t i, evals = 0;
	pid_t self;
	int tss[2];

	report->py_magic = LS_PY_MAGIC;
	report->py_nr = 0;
	report->py_entry = 0;
	for (i = 0; i < depth; i++) {
		/* A return address is past its call: it may be the function's end itself. */
		if (report->ips[i] > ls_py_eval_start && report->ips[i] <= ls_py_eval_end) {
			evals++;
		}
	}
	if (!evals) {
		goto out;
	}
	memcpy(tss, (const void *)(ls_py_runtime + LS_PY311_RUNTIME_TSS), sizeof(tss));
	if (!tss[LS_PY311_TSS_INITIALIZED / sizeof(int)]) {
		goto out;
	}
	tstate = (uintptr_t)pthread_getspecific((pthread_key_t)tss[LS_PY311_TSS_KEY / sizeof(int)]);
	self = getpid();
	if (!tstate || safe_read(self, tstate + LS_PY311_TSTATE_CFRAME, &cframe, sizeof(cframe)) ||
	    !cframe || safe_read(self, cframe + LS_PY311_CFRAME_CURRENT, &cur, sizeof(cur))) {
		goto out;
	}
	while (cur && report->py_nr < LS_PY_MAX_FRAMES &&
	       !safe_read(self, cur, frame, sizeof(frame))) {
		report->py[report->py_nr].code = word_at(frame, LS_PY311_FRAME_CODE);
		report->py[report->py_nr].instr = word_at(frame, LS_PY311_FRAME_PREV_INSTR);
		if (frame[LS_PY311_FRAME_IS_ENTRY]) {
			report->py_entry |= 1U << report->py_nr;
			evals--;
		}
		report->py_nr++;
		if (!evals) {
			break;
		}
		cur = word_at(frame, LS_PY311_FRAME_PREVIOUS);
	}
out:
	report->py_ns = (uint32_t)(now_ns() - start);
}

/*
 * rb_thread_state - what Ruby 3.1 says of the thread of execution context @ec (LS_RT_* bits):
 * it waits for the GVL another thread owns, as its timer (the waiter that asks the owner to
 * yield every 100 ms, in a timed condition wait that looks like any other) or in its waiters'
 * list, and gave it up at its timeslice's end or not; it waits to lock a Mutex; it is stopped
 * with a deadline. Reads of the process's own memory only.
 */
/*
 * rb_gvl_waiter - whether thread @th is in the GVL's waiters' list of @ractor: walked from its
 * head, a few nodes at most (the node is shared with the list of threads blocked in I/O).
 */
static bool rb_gvl_waiter(pid_t self, uintptr_t ractor, uintptr_t th)
{
	uintptr_t head = ractor + LS_RB31_RACTOR_GVL_WAITQ, node;
	int i;

	if (safe_read(self, head, &node, sizeof(node))) {
		return false;
	}
	for (i = 0; i < LS_RB31_GVL_WAITQ_WALK && node && node != head; i++) {
		if (node == th + LS_RB31_TH_GVL_NODE) {
			return true;
		}
		if (safe_read(self, node, &node, sizeof(node))) {
			return false;
		}
	}
	return false;
}

static uint8_t rb_thread_state(pid_t self, uintptr_t ec)
{
	/* interrupt_flag, interrupt_mask, fiber_ptr, thread_ptr: one read */
	unsigned char ec_buf[LS_RB31_EC_THREAD + sizeof(uintptr_t) - LS_RB31_EC_INTERRUPT_FLAG];
	uintptr_t th, ractor, owner, timer, locking_mutex, blocking_region;
	uint32_t interrupt_flag;
	uint8_t status, state = 0;

	if (safe_read(self, ec + LS_RB31_EC_INTERRUPT_FLAG, ec_buf, sizeof(ec_buf))) {
		return 0;
	}
	memcpy(&interrupt_flag, ec_buf, sizeof(interrupt_flag));
	th = word_at(ec_buf, LS_RB31_EC_THREAD - LS_RB31_EC_INTERRUPT_FLAG);
	if (!th ||
	    safe_read(self, th + LS_RB31_TH_RACTOR, &ractor, sizeof(ractor)) || !ractor ||
	    safe_read(self, ractor + LS_RB31_RACTOR_GVL_OWNER, &owner, sizeof(owner)) ||
	    safe_read(self, ractor + LS_RB31_RACTOR_GVL_TIMER, &timer, sizeof(timer)) ||
	    safe_read(self, th + LS_RB31_TH_STATUS, &status, sizeof(status)) ||
	    safe_read(self, th + LS_RB31_TH_LOCKING_MUTEX, &locking_mutex, sizeof(locking_mutex)) ||
	    safe_read(self, th + LS_RB31_TH_BLOCKING_REGION, &blocking_region,
		      sizeof(blocking_region))) {
		return 0;
	}
	/*
	 * A waiter the owner's release woke finds no owner yet; it leaves the waiters' list only
	 * once back in Ruby's code, after the handler.
	 */
	if (owner != th && ((timer == th && owner) || rb_gvl_waiter(self, ractor, th))) {
		state |= LS_RT_GVL_WAIT;
		/*
		 * Runnable: it was running Ruby code, or was woken and made runnable by the
		 * waker (a join's end does so), an interrupt pending for it then. Only the first
		 * gave the GVL up at its timeslice's end.
		 */
		if ((status & LS_RB31_TH_STATUS_MASK) == LS_RB31_THREAD_RUNNABLE &&
		    !(interrupt_flag & LS_RB31_PENDING_INTERRUPT_MASK)) {
			state |= LS_RT_GVL_YIELD;
		}
	}
	if (locking_mutex != LS_RB31_QFALSE) {
		state |= LS_RT_MUTEX_WAIT;
	}
	/* Stopped in a blocking region is I/O outside the GVL (an accept's ppoll): no sleep. */
	if ((status & LS_RB31_TH_STATUS_MASK) == LS_RB31_THREAD_STOPPED && !blocking_region) {
		state |= LS_RT_TIMED_STOP;
	}
	/*
	 * Stopped with no deadline, or runnable again with an interrupt pending outside the GVL
	 * and any blocking region: the thread that ended its wait made it so (a joined thread's
	 * end sets the joiner runnable before it returns from its ppoll).
	 */
	if ((status & LS_RB31_TH_STATUS_MASK) == LS_RB31_THREAD_STOPPED_FOREVER ||
	    ((status & LS_RB31_TH_STATUS_MASK) == LS_RB31_THREAD_RUNNABLE &&
	     (interrupt_flag & LS_RB31_PENDING_INTERRUPT_MASK) && !(state & LS_RT_GVL_WAIT) &&
	     !blocking_region)) {
		state |= LS_RT_STOPPED_FOREVER;
	}
	return state;
}

/*
 * rb_frames - this thread's Ruby 3.1 control frames that run Ruby code, innermost first, into
 * @report: per frame its iseq and pc, and whether it is the first of its rb_vm_exec call (the
 * tracker names them later). The thread's execution context is its ruby_current_ec (that of
 * the fiber it runs); C frames (cfuncs and the like) are left out, their native frames stand
 * for them. Two safe_read()s a frame, as many eval calls' frames as the native stack (@depth
 * frames) has rb_vm_exec frames; any unreadable pointer ends the walk there.
 */
static uint8_t rb_frames(struct ls_unwind_report *report, uint32_t depth)
{
	unsigned char cfp_buf[LS_RB31_CFP_READ];
	uintptr_t ec, head[3], cfp, end, ep, flags;
	uint64_t start = now_ns();
	uint32_t i, evals = 0;
	uint8_t rt_state = 0;
	pid_t self;

	report->py_magic = LS_RB_MAGIC;
	report->py_nr = 0;
	report->py_entry = 0;
	for (i = 0; i < depth; i++) {
		if (report->ips[i] > ls_rb_exec_start && report->ips[i] <= ls_rb_exec_end) {
			evals++;
		}
	}
	self = getpid();
	if (safe_read(self, (uintptr_t)__builtin_thread_pointer() + ls_rb_ec_offset, &ec,
		      sizeof(ec)) ||
	    !ec) {
		goto out;
	}
	rt_state = rb_thread_state(self, ec);
	if (!evals || safe_read(self, ec, head, sizeof(head))) {
		goto out;
	}
	cfp = head[LS_RB31_EC_CFP / sizeof(uintptr_t)];
	end = head[LS_RB31_EC_VM_STACK / sizeof(uintptr_t)] +
	      head[LS_RB31_EC_VM_STACK_SIZE / sizeof(uintptr_t)] * sizeof(uintptr_t);
	for (; cfp && cfp < end && report->py_nr < LS_PY_MAX_FRAMES; cfp += LS_RB31_CFP_SIZE) {
		if (safe_read(self, cfp, cfp_buf, sizeof(cfp_buf))) {
			break;
		}
		ep = word_at(cfp_buf, LS_RB31_CFP_EP);
		if (!ep || safe_read(self, ep, &flags, sizeof(flags))) {
			break;
		}
		if ((flags & LS_RB31_FRAME_FLAG_CFRAME) || !word_at(cfp_buf, LS_RB31_CFP_ISEQ)) {
			continue;
		}
		report->py[report->py_nr].code = word_at(cfp_buf, LS_RB31_CFP_ISEQ);
		report->py[report->py_nr].instr = word_at(cfp_buf, LS_RB31_CFP_PC);
		if (flags & LS_RB31_FRAME_FLAG_FINISH) {
			report->py_entry |= 1U << report->py_nr;
			evals--;
		}
		report->py_nr++;
		if (!evals) {
			break;
		}
	}
out:
	report->py_ns = (uint32_t)(now_ns() - start);
	return rt_state;
}

/* How many return addresses among @report's first @depth lie in (@start, @end]. */
static uint32_t evals_in(const struct ls_unwind_report *report, uint32_t depth, uintptr_t start,
			 uintptr_t end)
{
	uint32_t i, evals = 0;

	for (i = 0; i < depth; i++) {
		if (report->ips[i] > start && report->ips[i] <= end) {
			evals++;
		}
	}
	return evals;
}

/*
 * php_frames - this thread's PHP 8.2 frames that run PHP code, innermost first, into @report:
 * per frame its zend_function and opline, and whether it is the first of its execute_ex call
 * (the tracker names them later). The frames are executor_globals' current_execute_data and
 * its callers; internal functions' frames (usleep, flock) are left out, their native frames
 * stand for them. Two safe_read()s a frame, as many eval calls' frames as the native stack
 * (@depth frames) has execute_ex frames; any unreadable pointer ends the walk there.
 */
static void php_frames(struct ls_unwind_report *report, uint32_t depth)
{
	unsigned char ex[LS_PHP82_EX_READ];
	uint64_t start = now_ns();
	uintptr_t cur, func;
	uint32_t evals, info;
	unsigned char type;
	pid_t self;

	report->py_magic = LS_PHP_MAGIC;
	report->py_nr = 0;
	report->py_entry = 0;
	evals = evals_in(report, depth, ls_php_exec_start, ls_php_exec_end);
	if (!evals) {
		goto out;
	}
	self = getpid();
	if (safe_read(self, ls_php_eg + LS_PHP82_EG_CURRENT, &cur, sizeof(cur))) {
		goto out;
	}
	while (cur && report->py_nr < LS_PY_MAX_FRAMES && !safe_read(self, cur, ex, sizeof(ex))) {
		func = word_at(ex, LS_PHP82_EX_FUNC);
		cur = word_at(ex, LS_PHP82_EX_PREV);
		if (!func || safe_read(self, func + LS_PHP82_FN_TYPE, &type, sizeof(type))) {
			continue;
		}
		if (type != LS_PHP82_USER_FUNCTION && type != LS_PHP82_EVAL_CODE) {
			continue;
		}
		memcpy(&info, ex + LS_PHP82_EX_CALL_INFO, sizeof(info));
		report->py[report->py_nr].code = func;
		report->py[report->py_nr].instr = word_at(ex, LS_PHP82_EX_OPLINE);
		if (info & LS_PHP82_CALL_TOP) {
			report->py_entry |= 1U << report->py_nr;
			evals--;
		}
		report->py_nr++;
		if (!evals) {
			break;
		}
	}
out:
	report->py_ns = (uint32_t)(now_ns() - start);
}

/*
 * ls_on_signal - unwind from the interrupted context and hand the stack to latsnap through the
 * prctl its BPF side watches (one system call, async-signal-safe). Async-signal-safe throughout:
 * libunwind's local unwinder without its cache, clock_gettime from the vDSO. Every other signal
 * but the synchronous ones is blocked while it runs (see latsnap_preload_init()).
 *
 * No cache, because the cache's lock and the loader's lock would be taken in both orders: a
 * thread signalled inside dlclose holds the loader's lock and waits for the cache, while another,
 * in the handler, holds the cache and waits for the loader. And no loader's lock either: inside
 * the handler, libunwind's dl_iterate_phdr() calls come to ours, which takes none.
 */
static void ls_on_signal(int sig, siginfo_t *info, void *ucontext)
{
	struct ls_unwind_report report;
	int saved_errno = errno;
	uint8_t truncated = 0, status = LS_UNWIND_OK, rt_state = 0;
	unw_cursor_t cursor;
	unw_word_t ip;
	uint32_t depth = 0;
	uint64_t start;
	int step;

	(void)sig;
	/* Only the kernel's signal is latsnap's; a kill(2) of our signal is nobody's request. */
	if (info->si_code != SI_KERNEL) {
		goto out;
	}
	__atomic_add_fetch(&ls_handlers_active, 1, __ATOMIC_SEQ_CST);
	start = now_ns();
	if (__atomic_load_n(&ls_forking, __ATOMIC_SEQ_CST) &&
	    !(tls_forking && getpid() == ls_forking_pid)) {
		/*
		 * No walk, but a report: the signal's outlier then says why it has no stack,
		 * and the thread's next report goes to its own outlier, not to this one.
		 */
		status = LS_UNWIND_FORKING;
		goto report;
	}
	tls_lookup_pc = 0; /* none until the first step: no stale pc from an earlier signal */
	tls_in_handler = 1;
	if (unw_init_local2(&cursor, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) < 0) {
		status = LS_UNWIND_FAILED;
		goto report;
	}
	for (;;) {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) {
			break;
		}
		report.ips[depth++] = ip;
		tls_lookup_pc = ip;
		step = unw_step(&cursor);
		if (step < 0) {
			status = LS_UNWIND_BAD_FRAME;
			break;
		}
		if (step == 0) {
			break;
		}
		if (depth == ls_max_depth) {
			truncated = 1;
			break;
		}
	}
report:
	tls_in_handler = 0;
	report.unwind_ns = now_ns() - start;
	report.py_magic = 0;
	report.py_nr = 0;
	if (ls_py_runtime && status != LS_UNWIND_FORKING) {
		py_frames(&report, depth);
	} else if (ls_rb_exec_start && status != LS_UNWIND_FORKING) {
		rt_state = rb_frames(&report, depth);
	} else if (ls_php_eg && status != LS_UNWIND_FORKING) {
		php_frames(&report, depth);
	}
	prctl(LS_PRCTL_OPTION, LS_PRCTL_USER_STACK, (unsigned long)(uintptr_t)&report,
	      LS_UNWOUND_ARG(depth, status, truncated, rt_state), LS_ABI_VERSION);
	__atomic_sub_fetch(&ls_handlers_active, 1, __ATOMIC_SEQ_CST);
out:
	errno = saved_errno;
}

/* Before fork: no handler of another thread is left inside libunwind. */
static void ls_fork_prepare(void)
{
	tls_forking = 1;
	ls_forking_pid = getpid();
	/* A count: two threads may fork at once, and the first back must not end the other's. */
	__atomic_add_fetch(&ls_forking, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ls_handlers_active, __ATOMIC_SEQ_CST)) {
		sched_yield();
	}
}

static void ls_fork_parent(void)
{
	__atomic_sub_fetch(&ls_forking, 1, __ATOMIC_SEQ_CST);
	tls_forking = 0;
}

/* In the child: the only thread, none of its handlers under way; libunwind's locks are free. */
static void ls_fork_child(void)
{
	__atomic_store_n(&ls_handlers_active, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ls_forking, 0, __ATOMIC_SEQ_CST);
	tls_forking = 0;
}

/* Say who we are and how to signal us. The kernel, not these arguments, says which process. */
static void register_process(void)
{
	latsnap_preload_abi.handler = (uint64_t)(uintptr_t)ls_on_signal;
	latsnap_preload_abi.sig = ls_signal;
	prctl(LS_PRCTL_OPTION, LS_PRCTL_REGISTER, ls_signal, (unsigned long)(uintptr_t)ls_on_signal,
	      LS_ABI_VERSION);
	if (ls_rb_exec_start) {
		prctl(LS_PRCTL_OPTION, LS_PRCTL_RUNTIME, LS_RUNTIME_RUBY, 0, LS_ABI_VERSION);
	}
}

/*
 * libunwind initializes itself (under a lock of its own) at its first unwind: let that be now,
 * not in a signal handler.
 */
static void warm_up_unwinder(void)
{
	unw_context_t context;
	unw_cursor_t cursor;

	if (unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0) {
		unw_step(&cursor);
	}
}

/*
 * find_python - whether this process is a CPython 3.11 interpreter (its executable or a library
 * it was linked with exports _PyRuntime and Py_Version): looked up here, never in the handler.
 * An interpreter loaded later with dlopen() (an embedding program) is not seen.
 */
static void find_python(void)
{
	const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version");
	void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!version || !runtime || !eval || (*version & LS_PY311_HEX_MASK) != LS_PY311_HEX ||
	    !dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
		return;
	}
	ls_py_eval_start = (uintptr_t)eval;
	ls_py_eval_end = (uintptr_t)eval + sym->st_size;
	ls_py_runtime = (uintptr_t)runtime;
}

/*
 * find_ruby - whether this process is a Ruby 3.1 interpreter (a library it was linked with, or
 * its executable, exports ruby_version "3.1.*", ruby_current_ec and rb_vm_exec): looked up here,
 * never in the handler. A libruby loaded later with dlopen() is not seen: its TLS would not be
 * at one distance from every thread's pointer.
 */
static void find_ruby(void)
{
	const char *version = dlsym(RTLD_DEFAULT, "ruby_version");
	void *ec = dlsym(RTLD_DEFAULT, "ruby_current_ec");
	void *exec = dlsym(RTLD_DEFAULT, "rb_vm_exec");
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!version || !ec || !exec ||
	    strncmp(version, LS_RB31_VERSION, strlen(LS_RB31_VERSION)) != 0 ||
	    !dladdr1(exec, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
		return;
	}
	ls_rb_ec_offset = (intptr_t)((uintptr_t)ec - (uintptr_t)__builtin_thread_pointer());
	ls_rb_exec_start = (uintptr_t)exec;
	ls_rb_exec_end = (uintptr_t)exec + sym->st_size;
}

/*
 * find_php - whether this process is a PHP 8.2 interpreter of a non-thread-safe build (its
 * executable exports executor_globals of 8.2's size, and execute_ex): looked up here, never in
 * the handler.
 */
static void find_php(void)
{
	void *eg = dlsym(RTLD_DEFAULT, "executor_globals");
	void *exec = dlsym(RTLD_DEFAULT, "execute_ex");
	const ElfW(Sym) *sym = NULL, *eg_sym = NULL;
	Dl_info info;

	if (!eg || !exec || !dladdr1(eg, &info, (void **)&eg_sym, RTLD_DL_SYMENT) || !eg_sym ||
	    eg_sym->st_size != LS_PHP82_EG_SIZE ||
	    !dladdr1(exec, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
		return;
	}
	ls_php_exec_start = (uintptr_t)exec;
	ls_php_exec_end = (uintptr_t)exec + sym->st_size;
	ls_php_eg = (uintptr_t)eg;
}

static int parse_depth(const char *text)
{
	char *end;
	long n;

	if (!text || *text == '\0') {
		return LS_PRELOAD_DEFAULT_DEPTH;
	}
	n = strtol(text, &end, 10);
	if (*end != '\0' || n < 1 || n > LS_PRELOAD_MAX_DEPTH) {
		return LS_PRELOAD_DEFAULT_DEPTH;
	}
	return (int)n;
}

/*
 * Runs before main. A bad setting turns the library off rather than guess: it must never be the
 * reason a program fails.
 */
__attribute__((constructor)) static void latsnap_preload_init(void)
{
	const char *text;
	struct sigaction sa, old;
	int sig;

	next_dl_iterate_phdr();
	if (getauxval(AT_SECURE)) {
		return;
	}
	text = getenv("LATSNAP_SIGNAL");
	if (text && (strcmp(text, "off") == 0 || strcmp(text, "0") == 0)) {
		return;
	}
	sig = ls_parse_signal(text && *text ? text : LS_DEFAULT_SIGNAL_NAME);
	if (sig < 0) {
		return;
	}
	ls_max_depth = parse_depth(getenv("LATSNAP_DEPTH"));
	/* A handler already there is the application's (or another preload's): leave it be. */
	if (sigaction(sig, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL) {
		return;
	}
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE);
	warm_up_unwinder();
	find_python();
	if (!ls_py_runtime) {
		find_ruby();
	}
	if (!ls_py_runtime && !ls_rb_exec_start) {
		find_php();
	}
	if (pthread_atfork(ls_fork_prepare, ls_fork_parent, ls_fork_child)) {
		/* Without it a child could hang in our handler: stay off in this process. */
		return;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = ls_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/*
	 * No other handler runs on top of ours (it would find tls_in_handler set, and our
	 * dl_iterate_phdr in place of glibc's). The synchronous signals stay open: blocked, a
	 * fault would kill the process outright instead of reaching the application's handler.
	 */
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	sigdelset(&sa.sa_mask, SIGILL);
	sigdelset(&sa.sa_mask, SIGFPE);
	sigdelset(&sa.sa_mask, SIGTRAP);
	sigdelset(&sa.sa_mask, SIGSYS);
	if (sigaction(sig, &sa, NULL)) {
		return;
	}
	ls_signal = sig;
	register_process();
}
