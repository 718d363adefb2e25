// SPDX-License-Identifier: GPL-2.0
/*
 * preload.c - liblatsnap.so: registers the process with latsnap and, on latsnap's signal,
 * unwinds the user stack where the slow syscall returned and emits it as latsnap:user_stack.
 *
 * The signal path (ls_on_signal) runs on top of whatever the thread was doing: it takes no lock,
 * allocates nothing, calls no stdio and leaves errno as it found it. Everything it needs is set
 * up ahead: libunwind's cache policy and lttng-ust's per-thread data in the constructor and at
 * thread start. Nothing here runs on the application's hot path: the only wrappers are
 * pthread_create, fork, dl_iterate_phdr (which lets libunwind find unwind tables without the
 * loader's lock) and getenv (so that lttng-ust does not wait for the session daemon), and the
 * registration is one prctl per process image.
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
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <lttng/ust-fork.h>
#include <lttng/ust-thread.h>

#include <linux/types.h>
#include "latsnap.h"
#include "latsnap-tp.h"
#include "signame.h"

#define LS_PRELOAD_MAX_DEPTH LS_UNWOUND_MAX_DEPTH
#define LS_PRELOAD_DEFAULT_DEPTH 64
/* The longest an application's fork() waits for a handler or a loader operation to finish. */
#define LS_FORK_WAIT_NS 1000000

#define LS_EXPORT __attribute__((visibility("default")))
#define LS_TLS __thread __attribute__((tls_model("initial-exec")))

/* Read by latsnap (process_vm_readv) to find a process that registered before it started. */
LS_EXPORT volatile struct ls_preload_abi latsnap_preload_abi = {
	.magic = LS_PRELOAD_ABI_MAGIC,
	.version = LS_ABI_VERSION,
};

static int ls_signal; /* 0: the library is off in this process */
static unsigned int ls_max_depth = LS_PRELOAD_DEFAULT_DEPTH;

/* lttng_ust_init_thread() ran in this thread: a tracepoint in a signal handler is safe. */
static LS_TLS int tls_ready;

/*
 * fork() and the handler exclude each other: the child must not inherit what a handler in another
 * thread was in the middle of (libunwind's walk, a tracepoint's reservation), with no thread left
 * there to finish it.
 */
static int ls_forking;
static int ls_unwinding;
static LS_TLS pid_t tls_tid;

/*
 * Set while this thread's handler walks its stack: libunwind's lookups of unwind tables then go
 * to find_object_unlocked(), for the pc the handler is about to step from (tls_lookup_pc).
 */
static LS_TLS int tls_in_handler;
static LS_TLS uintptr_t tls_lookup_pc;

typedef int (*phdr_callback_fn)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_fn)(phdr_callback_fn, void *);

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef pid_t (*fork_fn)(void);

struct ls_thread_start {
	void *(*routine)(void *);
	void *arg;
	int tracer_thread;
};

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
 * report_stack - hand the unwound stack to latsnap through the prctl its BPF side watches. A
 * system call, async-signal-safe, and independent of lttng-ust: a process still registering
 * with the session daemon, or a run without snapshots, gets its stack all the same.
 */
static void report_stack(const uint64_t *ips, uint32_t depth, uint8_t status, uint8_t truncated)
{
	prctl(LS_PRCTL_OPTION, LS_PRCTL_USER_STACK, (unsigned long)(uintptr_t)ips,
	      LS_UNWOUND_ARG(depth, status, truncated), LS_ABI_VERSION);
}

/*
 * ls_on_signal - unwind from the interrupted context and report it. Async-signal-safe:
 * libunwind's local unwinder without its cache, a prctl, a tracepoint on per-thread data
 * initialized ahead, clock_gettime from the vDSO. Every other signal but the synchronous ones is
 * blocked while it runs (see latsnap_preload_init()).
 *
 * No cache, because the cache's lock and the loader's lock would be taken in both orders: a
 * thread signalled inside dlclose holds the loader's lock and waits for the cache, while another,
 * in the handler, holds the cache and waits for the loader. And no loader's lock either: inside
 * the handler, libunwind's dl_iterate_phdr() calls come to ours, which takes none.
 *
 * A fork in another thread waits for the handler (see quiesce_before_fork()); the walk is given
 * up at the next frame so that it never waits long.
 */
static void ls_on_signal(int sig, siginfo_t *info, void *ucontext)
{
	uint64_t ips[LS_PRELOAD_MAX_DEPTH];
	int saved_errno = errno;
	uint8_t truncated = 0, status = LS_UNWIND_OK;
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
	__atomic_add_fetch(&ls_unwinding, 1, __ATOMIC_SEQ_CST);
	start = now_ns();
	if (__atomic_load_n(&ls_forking, __ATOMIC_SEQ_CST)) {
		status = LS_UNWIND_FORK;
		goto report;
	}
	tls_lookup_pc = 0; /* none until the first step: no stale pc from an earlier signal */
	tls_in_handler = 1;
	if (unw_init_local2(&cursor, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) < 0) {
		status = LS_UNWIND_FAILED;
		goto walked;
	}
	for (;;) {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) {
			break;
		}
		ips[depth++] = ip;
		if (__atomic_load_n(&ls_forking, __ATOMIC_RELAXED)) {
			status = LS_UNWIND_FORK;
			break;
		}
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
walked:
	tls_in_handler = 0;
report:
	report_stack(ips, depth, status, truncated);
	/* The trace's copy, for readers of the snapshot; only once lttng-ust is set up here. */
	if (tls_ready && lttng_ust_tracepoint_enabled(latsnap, user_stack)) {
		lttng_ust_tracepoint(latsnap, user_stack, tls_tid, ips, depth, truncated, status,
				     now_ns() - start);
	}
	/* Only now: the tracepoint's reservation is what a fork must not copy half done. */
	__atomic_sub_fetch(&ls_unwinding, 1, __ATOMIC_SEQ_CST);
out:
	errno = saved_errno;
}

/* The thread is ready for the signal: the tracer's per-thread data exists. */
static void thread_ready(void)
{
	tls_tid = gettid();
	lttng_ust_init_thread();
	tls_ready = 1;
}

/* Tell latsnap (if it runs now) that this thread is the tracer's own, and remember it. */
static void thread_quiet(void)
{
	uint32_t slot;

	tls_tid = gettid();
	prctl(LS_PRCTL_OPTION, LS_PRCTL_QUIET_THREAD, 0, 0, LS_ABI_VERSION);
	slot = __atomic_fetch_add(&latsnap_preload_abi.nr_quiet, 1, __ATOMIC_RELAXED);
	if (slot < LS_PRELOAD_MAX_QUIET) {
		latsnap_preload_abi.quiet_tids[slot] = tls_tid;
	}
}

/* Say who we are and how to signal us. The kernel, not these arguments, says which process. */
static void register_process(void)
{
	latsnap_preload_abi.handler = (uint64_t)(uintptr_t)ls_on_signal;
	latsnap_preload_abi.sig = ls_signal;
	prctl(LS_PRCTL_OPTION, LS_PRCTL_REGISTER, ls_signal, (unsigned long)(uintptr_t)ls_on_signal,
	      LS_ABI_VERSION);
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
 * Before a fork: no handler of ours unwinding in another thread (a handler gives up its walk at
 * the next frame once it sees ls_forking), and, as far as can be seen, no other thread inside
 * dlopen or dlclose, which hold the loader's locks. Bounded by LS_FORK_WAIT_NS: an application's
 * fork is never held up longer. A fork that went ahead after the bound is counted in
 * latsnap_preload_abi.forks_late, for a debugger or latsnap to read.
 */
static void quiesce_before_fork(void)
{
	struct timespec pause = { 0, 20000 };
	uint64_t deadline;

	__atomic_add_fetch(&ls_forking, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&ls_unwinding, __ATOMIC_SEQ_CST) &&
	    _r_debug.r_state == RT_CONSISTENT) {
		return;
	}
	deadline = now_ns() + LS_FORK_WAIT_NS;
	while (__atomic_load_n(&ls_unwinding, __ATOMIC_SEQ_CST) ||
	       _r_debug.r_state != RT_CONSISTENT) {
		if (now_ns() >= deadline) {
			__atomic_add_fetch(&latsnap_preload_abi.forks_late, 1, __ATOMIC_RELAXED);
			return;
		}
		nanosleep(&pause, NULL);
	}
}

/*
 * lttng_ust_after_fork_child() dlopens liblttng-ust (already loaded: it only takes a reference),
 * and ld.so asserts its debugger state is consistent first. A child forked while another thread of
 * its parent was inside dlopen or dlclose inherits that operation half done, forever: the
 * assertion would kill it, where the same child without the library lives (until it dlopens
 * itself). So the state is declared consistent for lttng-ust's call only, and put back.
 * liblttng-ust-fork.so has the same problem, unmitigated.
 */
static void after_fork_child(sigset_t *saved)
{
	int state = _r_debug.r_state;

	if (state != RT_CONSISTENT) {
		_r_debug.r_state = RT_CONSISTENT;
	}
	lttng_ust_after_fork_child(saved);
	if (state != RT_CONSISTENT) {
		_r_debug.r_state = state;
	}
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
 * Runs after lttng-ust's own constructor (liblatsnap.so depends on it), before main. A bad
 * setting turns the library off rather than guess: it must never be the reason a program fails.
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
	thread_ready();

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

/*
 * getenv - the environment as it is, except that LTTNG_UST_REGISTER_TIMEOUT reads "0" when it is
 * not set. Otherwise lttng-ust's constructor (which runs before ours: we depend on it) and its
 * fork handling wait up to 3 s for a running session daemon to register the process: about
 * 100 ms at every start and every fork while latsnap records, the application's time spent on
 * latsnap's behalf, and a futex wait reported as if it were the application's. Unwound stacks
 * no longer need the registration (report_stack()), so not waiting loses nothing. A value the
 * user set is kept. Written out, not passed to libc's: a lookup of the next getenv through dlsym
 * could allocate, and an allocator that reads its settings with getenv would come back here.
 */
LS_EXPORT char *getenv(const char *name)
{
	static char no_wait[] = "0";
	size_t len = strlen(name);
	char **env;

	for (env = environ; env && *env; env++) {
		if (strncmp(*env, name, len) == 0 && (*env)[len] == '=') {
			return *env + len + 1;
		}
	}
	if (strcmp(name, "LTTNG_UST_REGISTER_TIMEOUT") == 0 && !getauxval(AT_SECURE)) {
		return no_wait;
	}
	return NULL;
}

static void *ls_thread_start(void *p)
{
	struct ls_thread_start start = *(struct ls_thread_start *)p;

	free(p);
	if (start.tracer_thread) {
		thread_quiet();
	} else if (ls_signal) {
		thread_ready();
	}
	return start.routine(start.arg);
}

/* Is @addr code of lttng-ust itself (whose threads are the tracer's, not the application's)? */
static int in_lttng_ust(const void *addr)
{
	Dl_info info;

	return dladdr(addr, &info) && info.dli_fname && strstr(info.dli_fname, "liblttng-ust");
}

/*
 * pthread_create - every thread the application creates is made ready for the signal before its
 * first instruction; lttng-ust's listener threads are marked as the tracer's.
 */
LS_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			     void *(*routine)(void *), void *arg)
{
	static pthread_create_fn real_create;
	struct ls_thread_start *start;
	pthread_create_fn create;
	int err;

	create = __atomic_load_n(&real_create, __ATOMIC_RELAXED);
	if (!create) {
		create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
		if (!create) {
			return EAGAIN;
		}
		__atomic_store_n(&real_create, create, __ATOMIC_RELAXED);
	}
	if (getauxval(AT_SECURE)) {
		return create(thread, attr, routine, arg);
	}
	start = malloc(sizeof(*start));
	if (!start) {
		return create(thread, attr, routine, arg);
	}
	start->routine = routine;
	start->arg = arg;
	start->tracer_thread = in_lttng_ust(__builtin_return_address(0));
	err = create(thread, attr, ls_thread_start, start);
	if (err) {
		free(start);
	}
	return err;
}

/*
 * fork - lttng-ust's fork handling (what liblttng-ust-fork.so does), and the child registers
 * itself: it is a new process, with a pid latsnap has never been told about. Signals stay blocked
 * across the fork (lttng_ust_before_fork), so latsnap's is never sent into the middle of it.
 */
LS_EXPORT pid_t fork(void)
{
	static fork_fn real_fork;
	sigset_t saved;
	fork_fn do_fork;
	int saved_errno;
	pid_t pid;

	do_fork = __atomic_load_n(&real_fork, __ATOMIC_RELAXED);
	if (!do_fork) {
		do_fork = (fork_fn)dlsym(RTLD_NEXT, "fork");
		if (!do_fork) {
			errno = ENOSYS;
			return -1;
		}
		__atomic_store_n(&real_fork, do_fork, __ATOMIC_RELAXED);
	}
	if (getauxval(AT_SECURE)) {
		return do_fork();
	}
	/* lttng-ust's locks first: the wait then ends right before the fork. */
	lttng_ust_before_fork(&saved);
	quiesce_before_fork();
	pid = do_fork();
	saved_errno = errno;
	if (pid == 0) {
		/* Only this thread went on: no one else forks or unwinds here. */
		ls_forking = 0;
		ls_unwinding = 0;
		latsnap_preload_abi.nr_quiet = 0;
		latsnap_preload_abi.sig = 0;
		tls_tid = gettid();
		after_fork_child(&saved);
		if (ls_signal) {
			register_process();
		}
	} else {
		__atomic_sub_fetch(&ls_forking, 1, __ATOMIC_SEQ_CST);
		lttng_ust_after_fork_parent(&saved);
	}
	errno = saved_errno;
	return pid;
}
