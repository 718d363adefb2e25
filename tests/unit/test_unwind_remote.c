// SPDX-License-Identifier: GPL-2.0
/*
 * usyms_unwind(): walk the user stack of a thread of another process from its saved registers,
 * with CFI, through /proc/PID/mem, without stopping or waking the thread.
 *
 * The target is a forked child with three threads, each blocked in read() on a pipe at the bottom
 * of unwind_test_outer() -> unwind_test_middle() -> unwind_test_inner(), functions built without
 * frame pointers; the third one in a signal handler, on an alternate stack. The test takes each
 * thread's registers with ptrace (PTRACE_SEIZE, then PTRACE_INTERRUPT, PTRACE_GETREGS,
 * PTRACE_DETACH): the ground truth the tracker gets from BPF. Once the thread is back in its
 * read(), it is unwound, and must still be there afterwards, never switched out again; when the
 * test finally writes to its pipe, the read() must return that byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracker/usyms.h"
#include "tap.h"

#define MAX_FRAMES 64
#define TIMED_UNWINDS 1000

/*
 * Each function stays a frame of its own (not inlined, cloned or tail-called) and has no frame
 * pointer whatever CFLAGS say, so that only its CFI tells where its caller's frame is.
 */
#ifdef __clang__
#define NOFP_FRAME __attribute__((noinline, used))
#else
#define NOFP_FRAME __attribute__((noinline, noclone, used, optimize("omit-frame-pointer")))
#endif

static volatile long sink;

/* What a thread of the child says when its read() returns. */
struct report {
	int which; /* as struct child_thread says */
	int err; /* errno when n < 0 */
	ssize_t n;
	char byte;
};

static NOFP_FRAME ssize_t unwind_test_inner(int fd, char *byte)
{
	volatile char buf[40];
	ssize_t n;

	buf[0] = 0;
	n = read(fd, (char *)buf, 1);
	__asm__ volatile("" ::: "memory");
	*byte = buf[0];
	sink += n;
	return n;
}

static NOFP_FRAME ssize_t unwind_test_middle(int fd, char *byte)
{
	volatile long pad[5];
	ssize_t n;

	pad[0] = fd;
	n = unwind_test_inner((int)pad[0], byte);
	__asm__ volatile("" ::: "memory");
	sink += pad[0];
	return n;
}

static NOFP_FRAME ssize_t unwind_test_outer(int fd, char *byte)
{
	volatile long pad[3];
	ssize_t n;

	pad[0] = fd;
	n = unwind_test_middle((int)pad[0], byte);
	__asm__ volatile("" ::: "memory");
	sink -= pad[0];
	return n;
}

#define NR_THREADS 3
#define ALTSTACK_SIZE (64 * 1024)

struct child_thread {
	int which; /* 0: the main thread, 1: a thread, 2: a thread in a signal handler */
	int fd; /* the pipe it reads */
	int report_fd;
};

static NOFP_FRAME void run_chain(const struct child_thread *t)
{
	struct report r = { .which = t->which };

	r.n = unwind_test_outer(t->fd, &r.byte);
	r.err = r.n < 0 ? errno : 0;
	if (write(t->report_fd, &r, sizeof(r)) != sizeof(r)) {
		_exit(3);
	}
}

/* Each thread of the child says its tid here before it blocks. */
static int tids_fd;

static void say_tid(int which)
{
	pid_t said[2] = { which, (pid_t)syscall(SYS_gettid) };

	if (write(tids_fd, said, sizeof(said)) != sizeof(said)) {
		_exit(4);
	}
}

static NOFP_FRAME void *unwind_test_thread(void *arg)
{
	const struct child_thread *t = arg;

	say_tid(t->which);
	run_chain(t);
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static const struct child_thread *signalled;

/* Blocks in the chain on the alternate signal stack, far above the stack it interrupted. */
static NOFP_FRAME void unwind_test_handler(int sig)
{
	(void)sig;
	run_chain(signalled);
	__asm__ volatile("" ::: "memory");
}

static NOFP_FRAME void *unwind_test_signalled(void *arg)
{
	const struct child_thread *t = arg;
	stack_t ss = { .ss_sp = (char *)t + sizeof(*t), .ss_size = ALTSTACK_SIZE };

	if (sigaltstack(&ss, NULL)) {
		_exit(5);
	}
	say_tid(t->which);
	pthread_kill(pthread_self(), SIGUSR1);
	__asm__ volatile("" ::: "memory");
	/* ASan unmaps at thread exit whatever alternate stack is set, as if it were its own. */
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return NULL;
}

/*
 * The child: a thread blocks in the chain, another one in the chain called by a signal handler,
 * then the main thread in the chain. The handler's alternate stack is on the main thread's stack,
 * above the thread stacks, so that the walk goes down to the stack the signal interrupted.
 */
static NOFP_FRAME __attribute__((noreturn)) void unwind_test_child(const int fds[NR_THREADS],
								   int report_fd)
{
	struct {
		struct child_thread t;
		char altstack[ALTSTACK_SIZE];
	} with_altstack;
	struct sigaction sa = { .sa_handler = unwind_test_handler, .sa_flags = SA_ONSTACK };
	struct child_thread main_thread = { 0, fds[0], report_fd };
	struct child_thread other = { 1, fds[1], report_fd };
	pthread_t threads[2];

	with_altstack.t = (struct child_thread){ 2, fds[2], report_fd };
	signalled = &with_altstack.t;
	if (sigaction(SIGUSR1, &sa, NULL) ||
	    pthread_create(&threads[0], NULL, unwind_test_thread, &other) ||
	    pthread_create(&threads[1], NULL, unwind_test_signalled, &with_altstack.t)) {
		_exit(2);
	}
	say_tid(0);
	run_chain(&main_thread);
	__asm__ volatile("" ::: "memory");
	pthread_join(threads[0], NULL);
	pthread_join(threads[1], NULL);
	_exit(0);
}

/* A synthetic stack: every word returns into unwind_test_inner(), each frame 8 bytes above. */
static uint64_t fake_stack[64];

static bool has_fp_prologue(const void *fn)
{
	static const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5 }; /* push %rbp; mov %rsp,%rbp */
	const uint8_t *code = fn;
	int i;

	for (i = 0; i < 12; i++) {
		if (!memcmp(code + i, prologue, sizeof(prologue))) {
			return true;
		}
	}
	return false;
}

static int read_proc_line(pid_t pid, pid_t tid, const char *file, char *buf, size_t len)
{
	char path[96];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	f = fopen(path, "r");
	if (f && fgets(buf, (int)len, f)) {
		ret = 0;
	}
	if (f) {
		fclose(f);
	}
	return ret;
}

/* Whether @tid sleeps in read(): the syscall it is in is 0, its state S. */
static bool in_read(pid_t pid, pid_t tid)
{
	char sys[256], stat[512];
	const char *p;

	if (read_proc_line(pid, tid, "syscall", sys, sizeof(sys)) ||
	    read_proc_line(pid, tid, "stat", stat, sizeof(stat))) {
		return false;
	}
	p = strrchr(stat, ')');
	return !strncmp(sys, "0 ", 2) && p && p[1] == ' ' && p[2] == 'S';
}

static bool wait_in_read(pid_t pid, pid_t tid)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int i;

	for (i = 0; i < 2500; i++) {
		if (in_read(pid, tid)) {
			return true;
		}
		nanosleep(&ts, NULL);
	}
	return false;
}

/* How many times @tid was switched out, voluntarily or not; -1 if unknown. */
static long long ctxt_switches(pid_t pid, pid_t tid)
{
	char path[96], line[256];
	long long total = 0, v;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f) {
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1) {
			total += v;
			found++;
		}
	}
	fclose(f);
	return found == 2 ? total : -1;
}

/*
 * The registers of @tid as the kernel saved them at its syscall entry, in DWARF order: the ground
 * truth, taken with ptrace. The thread is detached again before returning.
 */
static int grab_regs(pid_t tid, uint64_t regs[USYMS_NR_REGS])
{
	struct user_regs_struct r;
	int status, err = 0;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		return -errno;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		err = -errno;
		goto out;
	}
	if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status) ||
	    status >> 16 != PTRACE_EVENT_STOP) {
		err = -EIO;
		goto out;
	}
	if (ptrace(PTRACE_GETREGS, tid, 0, &r)) {
		err = -errno;
		goto out;
	}
	regs[0] = r.rax;
	regs[1] = r.rdx;
	regs[2] = r.rcx;
	regs[3] = r.rbx;
	regs[4] = r.rsi;
	regs[5] = r.rdi;
	regs[6] = r.rbp;
	regs[7] = r.rsp;
	regs[8] = r.r8;
	regs[9] = r.r9;
	regs[10] = r.r10;
	regs[11] = r.r11;
	regs[12] = r.r12;
	regs[13] = r.r13;
	regs[14] = r.r14;
	regs[15] = r.r15;
	regs[16] = r.rip;
out:
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return err;
}

/* The function frame @i of @ips is in: a return address is looked up minus 1. */
static struct usym frame_sym(struct usyms *us, pid_t pid, const uint64_t *ips, int i)
{
	struct usym s;

	usyms_lookup(us, pid, i ? ips[i] - 1 : ips[i], &s);
	return s;
}

static void diag_stack(struct usyms *us, pid_t pid, const uint64_t *ips, int nr)
{
	struct usym s;
	int i;

	for (i = 0; i < nr; i++) {
		s = frame_sym(us, pid, ips, i);
		diag("  #%d 0x%" PRIx64 " %s+0x%" PRIx64 " (%s)", i, ips[i], s.symbol ?: "?",
		     s.offset, s.module ?: "?");
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Unwinds thread @tid of @pid, blocked in the chain (@outermost its first frame above it, @beyond
 * one further up, or NULL), from the registers ptrace gives, which are left in @regs. Returns
 * whether it had them.
 */
static bool test_thread(struct usyms *us, pid_t pid, pid_t tid, const char *outermost,
			const char *beyond, bool timed, uint64_t regs[USYMS_NR_REGS])
{
	static const char *const chain[] = { "unwind_test_inner", "unwind_test_middle",
					     "unwind_test_outer" };
	uint64_t ips[MAX_FRAMES], again[MAX_FRAMES], t0, t1, sp, pc;
	char syscall_line[256], line[256];
	long long switches;
	struct usym s;
	int nr, i, k, err;
	bool same;

	diag("thread %d of %d", (int)tid, (int)pid);
	if (!ok(wait_in_read(pid, tid), "thread %d blocks in read()", (int)tid)) {
		return false;
	}
	err = grab_regs(tid, regs);
	if (err == -EPERM) {
		skip("ptrace is not permitted here: no registers to start from");
		return false;
	}
	if (!is_int(err, 0, "ptrace gives the registers of thread %d", (int)tid)) {
		return false;
	}
	if (!ok(wait_in_read(pid, tid), "after PTRACE_DETACH, thread %d is back in read()",
		(int)tid)) {
		return false;
	}
	switches = ctxt_switches(pid, tid);
	/* "nr args... sp pc": the read() it sleeps in, with the stack and pc the kernel keeps. */
	sp = pc = 0;
	if (!read_proc_line(pid, tid, "syscall", syscall_line, sizeof(syscall_line))) {
		sscanf(syscall_line, "%*d %*x %*x %*x %*x %*x %*x %" SCNx64 " %" SCNx64, &sp, &pc);
	}
	ok(sp == regs[USYMS_REG_SP] && pc == regs[USYMS_REG_IP],
	   "the registers match /proc/PID/task/TID/syscall: sp %" PRIx64 ", pc %" PRIx64, sp, pc);

	t0 = now_ns();
	nr = usyms_unwind(us, pid, tid, regs, ips, MAX_FRAMES);
	t1 = now_ns();
	diag("first unwind (capture included): %.1f us, %d frames", (double)(t1 - t0) / 1e3, nr);
	diag_stack(us, pid, ips, nr > 0 ? nr : 0);
	if (!ok(nr >= 6 && nr < MAX_FRAMES, "%d frames: read, the chain, %s and more", nr,
		outermost)) {
		return true;
	}
	is_u64(ips[0], regs[USYMS_REG_IP], "frame 0 is the saved rip");
	s = frame_sym(us, pid, ips, 0);
	ok(s.symbol && strstr(s.symbol, "read") && s.module && strstr(s.module, "libc.so"),
	   "frame 0 is libc's read: %s in %s", s.symbol ?: "?", s.module ?: "?");
	/* Frame 1 is the caller of read(), but for a sanitizer's interceptor of it in between. */
	for (k = 1; k < 3; k++) {
		s = frame_sym(us, pid, ips, k);
		if (s.symbol && !strcmp(s.symbol, chain[0])) {
			break;
		}
		diag("frame %d, %s, is not in the chain: an interceptor?", k, s.symbol ?: "?");
	}
	if (!ok(k < 3 && k + 5 <= nr, "the chain starts at frame %d", k)) {
		return true;
	}
	for (i = 0; i < 3; i++) {
		s = frame_sym(us, pid, ips, k + i);
		is_str(s.symbol, chain[i], "frame %d", k + i);
	}
	s = frame_sym(us, pid, ips, k + 3);
	is_str(s.symbol, "run_chain", "frame %d", k + 3);
	s = frame_sym(us, pid, ips, k + 4);
	is_str(s.symbol, outermost, "frame %d", k + 4);
	ok(ips[k] > (uint64_t)(uintptr_t)&unwind_test_inner,
	   "frame %d is a return address into unwind_test_inner, not its start", k);
	for (i = k + 5; beyond && i < nr; i++) {
		s = frame_sym(us, pid, ips, i);
		if (s.symbol && !strcmp(s.symbol, beyond)) {
			break;
		}
	}
	if (beyond) {
		ok(i < nr, "%s further up, frame %d", beyond, i);
	}

	nr = usyms_unwind(us, pid, tid, regs, again, 2);
	ok(nr == 2 && again[0] == ips[0] && again[1] == ips[1], "max 2: the first 2 frames");

	if (timed) {
		nr = usyms_unwind(us, pid, tid, regs, ips, MAX_FRAMES);
		same = true;
		t0 = now_ns();
		for (i = 0; i < TIMED_UNWINDS; i++) {
			same &= usyms_unwind(us, pid, tid, regs, again, MAX_FRAMES) == nr &&
				!memcmp(again, ips, nr * sizeof(*ips));
		}
		t1 = now_ns();
		diag("cost: %.2f us per unwind of %d frames (mean of %d)",
		     (double)(t1 - t0) / 1e3 / TIMED_UNWINDS, nr, TIMED_UNWINDS);
		ok(same, "%d unwinds find the same %d frames", TIMED_UNWINDS, nr);
	}

	ok(in_read(pid, tid), "thread %d is still in read() after being unwound", (int)tid);
	ok(!read_proc_line(pid, tid, "syscall", line, sizeof(line)) && !strcmp(line, syscall_line),
	   "the same read(), same arguments, stack and pc");
	is_int(ctxt_switches(pid, tid), switches, "thread %d was not woken (context switches)",
	       (int)tid);
	return true;
}

/*
 * Registers no thread has, for a thread that exists (@good are its own, still valid: it sleeps in
 * the same read()): what comes back stays in bounds.
 */
static void test_bad_registers(struct usyms *us, pid_t pid, pid_t tid,
			       const uint64_t good[USYMS_NR_REGS])
{
	uint64_t regs[USYMS_NR_REGS], ips[MAX_FRAMES];
	int nr, i;

	memcpy(regs, good, sizeof(regs));
	regs[USYMS_REG_IP] = 0;
	is_int(usyms_unwind(us, pid, tid, regs, ips, MAX_FRAMES), 0, "rip 0: no frame");
	is_int(usyms_unwind(us, pid, tid, good, ips, 0), -EINVAL, "max 0: -EINVAL");

	memcpy(regs, good, sizeof(regs));
	regs[USYMS_REG_SP] = 0;
	nr = usyms_unwind(us, pid, tid, regs, ips, MAX_FRAMES);
	ok(nr == 1 && ips[0] == good[USYMS_REG_IP], "rsp 0: the one frame of rip (%d)", nr);

	for (i = 0; i < USYMS_NR_REGS; i++) {
		regs[i] = 0xdead0000beef0000ULL + (uint64_t)i * 0x1010;
	}
	nr = usyms_unwind(us, pid, tid, regs, ips, MAX_FRAMES);
	ok(nr >= 1 && nr <= MAX_FRAMES && ips[0] == regs[USYMS_REG_IP],
	   "garbage registers: rip and nothing that crashes (%d frames)", nr);

	/* fake_stack is in the child as in the test: a stack of return addresses, no end to it. */
	memcpy(regs, good, sizeof(regs));
	regs[USYMS_REG_IP] = (uint64_t)(uintptr_t)&unwind_test_inner;
	regs[USYMS_REG_SP] = (uint64_t)(uintptr_t)fake_stack;
	nr = usyms_unwind(us, pid, tid, regs, ips, 16);
	ok(nr == 16 && ips[1] == fake_stack[0] && ips[15] == fake_stack[0],
	   "a stack that never ends stops at max (%d frames)", nr);

	ok(in_read(pid, tid), "thread %d is still in read()", (int)tid);
}

static void test_bad_pids(struct usyms *us, pid_t child)
{
	uint64_t regs[USYMS_NR_REGS] = { 0 }, ips[MAX_FRAMES];
	pid_t gone = fork();

	if (gone < 0) {
		bail_out("fork: %s", strerror(errno));
	}
	if (!gone) {
		_exit(0);
	}
	waitpid(gone, NULL, 0);
	regs[USYMS_REG_IP] = (uint64_t)(uintptr_t)&unwind_test_inner;
	regs[USYMS_REG_SP] = (uint64_t)(uintptr_t)fake_stack;
	is_int(usyms_unwind(us, gone, gone, regs, ips, MAX_FRAMES), -ESRCH,
	       "a process that exited: -ESRCH");
	is_int(usyms_unwind(us, INT_MAX, INT_MAX, regs, ips, MAX_FRAMES), -ESRCH,
	       "a pid that never existed: -ESRCH");
	is_int(usyms_unwind(us, -1, -1, regs, ips, MAX_FRAMES), -ESRCH, "pid -1: -ESRCH");
	is_int(usyms_unwind(us, child, getpid(), regs, ips, MAX_FRAMES), -ESRCH,
	       "a tid of another process: -ESRCH");
}

/* Writes a byte to each pipe; each thread must say its read() returned just that byte. */
static void test_reads_return(const int fds[NR_THREADS], int report_fd)
{
	bool seen[NR_THREADS] = { false };
	struct report r;
	int i, nr_seen = 0;

	for (i = 0; i < NR_THREADS; i++) {
		char byte = (char)('a' + i);

		if (write(fds[i], &byte, 1) != 1) {
			bail_out("write: %s", strerror(errno));
		}
	}
	for (i = 0; i < NR_THREADS; i++) {
		if (read(report_fd, &r, sizeof(r)) != sizeof(r) || r.which < 0 ||
		    r.which >= NR_THREADS) {
			ok(0, "the child reports its read()");
			return;
		}
		nr_seen += !seen[r.which];
		seen[r.which] = true;
		ok(r.n == 1 && r.byte == 'a' + r.which,
		   "thread %d: read() returned the byte written (n %zd, %s), not interrupted",
		   r.which, r.n, r.n < 0 ? strerror(r.err) : "no error");
	}
	is_int(nr_seen, NR_THREADS, "every thread reported");
}

int main(void)
{
	static const char *const outermost[NR_THREADS] = { "unwind_test_child",
							   "unwind_test_thread",
							   "unwind_test_handler" };
	static const char *const beyond[NR_THREADS] = { "main", NULL, "unwind_test_signalled" };
	uint64_t regs[NR_THREADS][USYMS_NR_REGS];
	int in[NR_THREADS][2], fds[NR_THREADS], report[2], tids_pipe[2], status, i;
	pid_t child, tids[NR_THREADS] = { 0 }, said[2];
	struct usyms *us;

	ok(!has_fp_prologue(&unwind_test_inner) && !has_fp_prologue(&unwind_test_middle) &&
		   !has_fp_prologue(&unwind_test_outer),
	   "the chain is built without frame pointers");
	for (i = 0; i < 64; i++) {
		fake_stack[i] = (uint64_t)(uintptr_t)&unwind_test_inner + 1;
	}
	for (i = 0; i < NR_THREADS; i++) {
		if (pipe(in[i])) {
			bail_out("pipe: %s", strerror(errno));
		}
	}
	if (pipe(report) || pipe(tids_pipe)) {
		bail_out("pipe: %s", strerror(errno));
	}
	fflush(stdout);
	child = fork();
	if (child < 0) {
		bail_out("fork: %s", strerror(errno));
	}
	if (!child) {
		for (i = 0; i < NR_THREADS; i++) {
			close(in[i][1]);
			fds[i] = in[i][0];
		}
		close(report[0]);
		close(tids_pipe[0]);
		tids_fd = tids_pipe[1];
		unwind_test_child(fds, report[1]);
	}
	for (i = 0; i < NR_THREADS; i++) {
		close(in[i][0]);
		fds[i] = in[i][1];
	}
	close(report[1]);
	close(tids_pipe[1]);
	for (i = 0; i < NR_THREADS; i++) {
		if (read(tids_pipe[0], said, sizeof(said)) != sizeof(said) || said[0] < 0 ||
		    said[0] >= NR_THREADS) {
			kill(child, SIGKILL);
			bail_out("the child's threads did not start");
		}
		tids[said[0]] = said[1];
	}
	is_int(tids[0], child, "the child's main thread is its pid");
	us = usyms_new();
	if (!us) {
		bail_out("usyms_new");
	}

	if (test_thread(us, child, tids[0], outermost[0], beyond[0], true, regs[0])) {
		for (i = 1; i < NR_THREADS; i++) {
			test_thread(us, child, tids[i], outermost[i], beyond[i], false, regs[i]);
		}
		test_bad_registers(us, child, child, regs[0]);
	}
	test_bad_pids(us, child);
	test_reads_return(fds, report[0]);

	if (waitpid(child, &status, 0) != child) {
		bail_out("waitpid: %s", strerror(errno));
	}
	ok(WIFEXITED(status) && !WEXITSTATUS(status), "the child exits normally");
	usyms_free(us);
	return tap_done();
}
