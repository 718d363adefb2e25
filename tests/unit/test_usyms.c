// SPDX-License-Identifier: GPL-2.0
/*
 * usyms: symbolize addresses of this process, of children that are gone, of a binary deleted
 * from disk, and of a library loaded after the capture.
 *
 * Run with "--target", the binary prints the address of usyms_target_func() and waits to be
 * killed: the test runs a copy of itself that way to have a process whose binary it can delete.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <time.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/sendfile.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracker/usyms.h"
#include "tap.h"

#define NR_CHILDREN USYMS_MAX_PROCS

static volatile int sink;

static __attribute__((noinline, noclone, used)) int usyms_test_func(int x)
{
	sink += x;
	return sink * 3 + x;
}

static __attribute__((noinline, noclone, used)) int usyms_target_func(int x)
{
	sink -= x;
	return sink * 5 - x;
}

static uint64_t test_func_addr(void)
{
	return (uint64_t)(uintptr_t)&usyms_test_func;
}

/*
 * The target: prints the address of usyms_target_func(), then answers "LIB SYMBOL" lines with
 * the address dlopen() and dlsym() give (0 on failure) until killed.
 */
static __attribute__((noreturn)) void run_target(void)
{
	char line[256], lib[128], sym[128];
	void *handle, *fn;

	printf("%" PRIx64 "\n", (uint64_t)(uintptr_t)&usyms_target_func);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		fn = NULL;
		if (sscanf(line, "%127s %127s", lib, sym) == 2) {
			handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
			fn = handle ? dlsym(handle, sym) : NULL;
		}
		printf("%" PRIx64 "\n", (uint64_t)(uintptr_t)fn);
		fflush(stdout);
	}
	for (;;) {
		pause();
	}
}

static char self_path[PATH_MAX];

static void read_self_path(void)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	if (n <= 0) {
		bail_out("readlink /proc/self/exe: %s", strerror(errno));
	}
	self_path[n] = '\0';
}

/* A forked child that stops itself at once; returns its pid once it is stopped. */
static pid_t fork_stopped(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		bail_out("fork: %s", strerror(errno));
	}
	if (!pid) {
		raise(SIGSTOP);
		_exit(usyms_test_func(1) & 1);
	}
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
		bail_out("child %d did not stop", (int)pid);
	}
	return pid;
}

static void kill_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
	}
}

/* Copies this binary next to itself (not /tmp: it may be noexec); returns 0 or -1. */
static int copy_self(char *copy, size_t len)
{
	int in = -1, out = -1, ret = -1;
	const char *slash = strrchr(self_path, '/');
	struct stat st;

	snprintf(copy, len, "%.*s/usyms-target.XXXXXX", (int)(slash - self_path), self_path);
	in = open(self_path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st)) {
		goto out;
	}
	out = mkstemp(copy);
	if (out < 0) {
		goto out;
	}
	while (st.st_size > 0) {
		ssize_t n = sendfile(out, in, NULL, st.st_size);

		if (n <= 0) {
			unlink(copy);
			goto out;
		}
		st.st_size -= n;
	}
	ret = fchmod(out, 0755);
out:
	if (in >= 0) {
		close(in);
	}
	/* Closed before the exec, which would fail with ETXTBSY on a file open for writing. */
	if (out >= 0) {
		close(out);
	}
	return ret;
}

struct target {
	pid_t pid;
	FILE *to, *from; /* its stdin and stdout */
};

static int target_read_addr(struct target *t, uint64_t *addr)
{
	char line[64];

	if (!fgets(line, sizeof(line), t->from) || sscanf(line, "%" SCNx64, addr) != 1) {
		return -1;
	}
	return 0;
}

static void target_end(struct target *t)
{
	kill_reap(t->pid);
	fclose(t->to);
	fclose(t->from);
}

/* Runs @path --target; returns 0 and the address it prints, or -1. */
static int target_start(struct target *t, const char *path, uint64_t *addr)
{
	int in[2], out[2];

	if (pipe(in)) {
		return -1;
	}
	if (pipe(out)) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	t->pid = fork();
	if (!t->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl(path, path, "--target", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->to = fdopen(in[1], "w");
	t->from = fdopen(out[0], "r");
	if (t->pid < 0 || !t->to || !t->from) {
		bail_out("cannot start %s", path);
	}
	if (target_read_addr(t, addr)) {
		target_end(t);
		return -1;
	}
	return 0;
}

static void test_self(struct usyms *us)
{
	void *vdso, *fn;
	struct usym s, t;
	int rc;

	rc = usyms_lookup(us, getpid(), test_func_addr(), &s);
	is_int(rc, 0, "self: lookup returns 0");
	is_str(s.symbol, "usyms_test_func", "self: a static noinline function by name");
	is_u64(s.offset, 0, "self: offset 0 at the function's first byte");
	is_str(s.module, self_path, "self: module is the test binary's path");

	rc = usyms_lookup(us, getpid(), test_func_addr(), &t);
	ok(rc == 0 && t.symbol == s.symbol && t.module == s.module && t.offset == s.offset,
	   "self: a repeated lookup gives the same strings");

	rc = usyms_lookup(us, getpid(), test_func_addr() + 5, &s);
	ok(rc == 0 && s.symbol && !strcmp(s.symbol, "usyms_test_func"),
	   "self: an address inside the function");
	is_u64(s.offset, 5, "self: offset is the distance from the function's start");

	rc = usyms_lookup(us, getpid(), (uint64_t)(uintptr_t)&getpid, &s);
	is_int(rc, 0, "libc: lookup returns 0");
	ok(s.module && strstr(s.module, "libc"), "libc: module '%s' is libc",
	   s.module ? s.module : "(null)");
	ok(s.module && s.module[0] == '/', "libc: module path is absolute");
	ok(s.symbol && strstr(s.symbol, "getpid"), "libc: symbol '%s' names getpid",
	   s.symbol ? s.symbol : "(null)");
	ok(s.offset < 64, "libc: offset %" PRIu64 " small", s.offset);

	vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	fn = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
	if (fn) {
		rc = usyms_lookup(us, getpid(), (uint64_t)(uintptr_t)fn + 3, &s);
		ok(rc == 0 && s.symbol && strstr(s.symbol, "clock_gettime") && s.offset == 3,
		   "vdso: __vdso_clock_gettime+3 (got %s+%" PRIu64 ")",
		   s.symbol ? s.symbol : "(null)", s.offset);
		is_str(s.module, "[vdso]", "vdso: module [vdso]");
	} else {
		skip("no vDSO (valgrind hides it)");
		skip("no vDSO (valgrind hides it)");
	}

	s.symbol = s.module = "junk";
	s.offset = 99;
	rc = usyms_lookup(us, getpid(), 0x1000, &s);
	is_int(rc, 0, "unmapped: lookup returns 0");
	ok(!s.module && !s.symbol && !s.offset, "unmapped: module and symbol NULL, offset 0");

	is_int(usyms_capture(us, getpid()), 0, "capture of a cached pid returns 0");
}

static void test_bad_pids(struct usyms *us)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	char comm[32] = "";
	int pid_max = 0, rc;
	struct usym s;

	if (!f || fscanf(f, "%d", &pid_max) != 1) {
		bail_out("cannot read /proc/sys/kernel/pid_max");
	}
	fclose(f);
	/* pids are below pid_max, so this one is never in use. */
	s.module = "junk";
	is_int(usyms_lookup(us, pid_max, 0x1000, &s), -ESRCH, "no such pid: -ESRCH");
	ok(!s.module && !s.symbol, "no such pid: result cleared");
	is_int(usyms_capture(us, pid_max), -ESRCH, "no such pid: capture -ESRCH");
	is_int(usyms_capture(us, 0), -ESRCH, "pid 0: -ESRCH");
	is_int(usyms_capture(us, -1), -ESRCH, "pid -1: -ESRCH");

	f = fopen("/proc/2/comm", "r");
	if (f && fgets(comm, sizeof(comm), f) && !strcmp(comm, "kthreadd\n")) {
		rc = usyms_capture(us, 2);
		/* Only root may read the auxv of another user's process. */
		ok(rc == -ESRCH || (geteuid() && rc == -EACCES),
		   "kernel thread (no user memory): -ESRCH (got %d)", rc);
	} else {
		skip("pid 2 is not kthreadd here");
	}
	if (f) {
		fclose(f);
	}
}

static void test_exited_child(struct usyms *us)
{
	pid_t pid = fork_stopped();
	struct usym s;

	is_int(usyms_capture(us, pid), 0, "child: captured while stopped");
	kill_reap(pid);
	is_int(usyms_lookup(us, pid, test_func_addr() + 1, &s), 0, "child: lookup after exit");
	is_str(s.symbol, "usyms_test_func", "child: right name after the child exited");
	is_u64(s.offset, 1, "child: right offset after exit");
	is_str(s.module, self_path, "child: module after exit");
	/* A miss on a gone process, once a refresh is due, must not lose what was captured. */
	usleep(150 * 1000);
	usyms_lookup(us, pid, 0x1000, &s);
	usyms_lookup(us, pid, test_func_addr() + 3, &s);
	ok(s.symbol && !strcmp(s.symbol, "usyms_test_func") && s.offset == 3,
	   "child: still right after a miss on the gone process");

	usyms_forget(us, pid);
	s.symbol = "junk";
	is_int(usyms_lookup(us, pid, test_func_addr(), &s), -ESRCH,
	       "forget: the gone child is not cached any more");
	ok(!s.symbol, "forget: no symbol");
	usyms_forget(us, pid); /* not cached: nothing happens */
	ok(1, "forget of an uncached pid is harmless");
}

/*
 * The maps reader's capture, taken while the child lived, is what the main loop's notice takes
 * over after the child is gone; with another key nothing is taken over, and the gone child
 * cannot be read.
 */
static void test_precapture(struct usyms *us)
{
	pid_t pid = fork_stopped(), other = fork_stopped();
	struct usym s;

	is_int(usyms_precapture(us, pid, 77), 0, "precapture: the living child");
	is_int(usyms_precapture(us, other, 78), 0, "precapture: another child");
	is_int(usyms_precapture(us, pid, 0), -ESRCH, "precapture: key 0 is no key");
	kill_reap(pid);
	kill_reap(other);
	s.symbol = "junk";
	is_int(usyms_lookup(us, pid, test_func_addr(), &s), -ESRCH,
	       "precapture: not used before its notice is taken over");
	is_int(usyms_recapture(us, pid, 77), 0, "precapture: taken over after the child exited");
	is_int(usyms_lookup(us, pid, test_func_addr() + 2, &s), 0, "precapture: lookup");
	ok(s.symbol && !strcmp(s.symbol, "usyms_test_func") && s.offset == 2,
	   "precapture: the gone child's address named (%s+%" PRIu64 ")", s.symbol ? s.symbol : "?",
	   s.offset);
	is_int(usyms_recapture(us, other, 79), -ESRCH,
	       "precapture: another key takes nothing over: the gone child cannot be read");
	is_int(usyms_precapture(us, other, 78), -ESRCH, "precapture: a gone process: -ESRCH");
	usyms_forget(us, pid);
}

struct reader_arg {
	struct usyms *us;
	pid_t pid;
	atomic_int started; /* set right before its precapture */
};

/* A maps reader late to its notice (its CPU taken): it reads the child, which then exits. */
static void *late_reader(void *arg)
{
	struct reader_arg *r = arg;

	usleep(100 * 1000);
	atomic_store(&r->started, 1);
	usyms_precapture(r->us, r->pid, 91);
	kill_reap(r->pid);
	return NULL;
}

/*
 * While a maps reader runs, the main loop's notice waits for the reader's capture instead of
 * reading the process itself (holding the lock the reader needs); without an answer it gives up
 * (once), and with no reader it never waits.
 */
static void test_reader_wait(struct usyms *us)
{
	struct reader_arg r = { .us = us, .pid = fork_stopped() };
	pid_t alone = fork_stopped();
	pthread_t thread;
	struct usym s;

	usyms_reader(us, true);
	if (pthread_create(&thread, NULL, late_reader, &r)) {
		bail_out("pthread_create failed");
	}
	is_int(usyms_recapture(us, r.pid, 91), 0, "reader: the notice taken over");
	ok(atomic_load(&r.started), "reader: the main loop waited for the reader's capture");
	pthread_join(thread, NULL);
	is_int(usyms_lookup(us, r.pid, test_func_addr() + 4, &s), 0,
	       "reader: the gone child's address named");
	ok(s.symbol && !strcmp(s.symbol, "usyms_test_func") && s.offset == 4,
	   "reader: by the reader's capture (%s+%" PRIu64 ")", s.symbol ? s.symbol : "?", s.offset);
	/* A notice the reader never got: the wait runs out, and the main loop reads it itself. */
	is_int(usyms_recapture(us, alone, 92), 0, "reader: never answered, read by the main loop");
	usyms_forget(us, alone);
	is_int(usyms_recapture(us, alone, 93), 0,
	       "reader: behind, the next notice is read at once");
	usyms_reader(us, false);
	usyms_forget(us, alone);
	is_int(usyms_recapture(us, alone, 94), 0, "no reader: read at once");
	kill_reap(alone);
	usyms_forget(us, alone);
	usyms_forget(us, r.pid);
}

struct held_reader {
	struct usyms *us;
	struct target t, t2;
	pthread_t thread;
	atomic_int tid;
	bool started;
	int err; /* the reader's usyms_precapture() */
	struct usyms_maps *maps; /* t2's, read while the lock was held */
	int busy; /* usyms_precapture_maps() of t2 then, not waiting */
};

static void *held_reader_run(void *arg)
{
	struct held_reader *h = arg;

	atomic_store(&h->tid, (int)gettid());
	h->err = usyms_precapture(h->us, h->t.pid, 95);
	return NULL;
}

/* Whether thread @tid of this process sleeps in futex(): it waits for the cache's lock. */
static bool in_futex(int tid)
{
	char path[64], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f)) {
			buf[0] = '\0';
		}
		fclose(f);
	}
	return !strncmp(buf, "202 ", 4);
}

/*
 * Called with the cache's lock held (usyms_modules()), as the main loop holds it through a
 * symbolization: the reader gets its notice, waits for the lock, and the target exits meanwhile.
 */
static void hold_lock(const struct usyms_module *m, void *ctx)
{
	struct held_reader *h = ctx;
	int i;

	(void)m;
	if (h->started) {
		return;
	}
	h->started = true;
	if (pthread_create(&h->thread, NULL, held_reader_run, h)) {
		bail_out("pthread_create failed");
	}
	for (i = 0; i < 10000 && !(atomic_load(&h->tid) && in_futex(atomic_load(&h->tid))); i++) {
		usleep(1000);
	}
	if (i == 10000) {
		bail_out("the reader thread never waited for the lock");
	}
	target_end(&h->t);
	/* The reader as tracker.c runs it: it reads at once, and files once the lock is free. */
	h->maps = usyms_maps_read(h->t2.pid);
	h->busy = usyms_precapture_maps(h->us, h->t2.pid, 96, h->maps, false, NULL);
	target_end(&h->t2);
}

/*
 * The maps reader waits for the lock while the main loop symbolizes, and a short-lived process
 * exits meanwhile: what the reader read before it waited is still its capture (90-unwind k).
 */
static void test_reader_held(struct usyms *us)
{
	struct held_reader h = { .us = us };
	uint64_t addr, addr2;
	struct usym s;

	if (target_start(&h.t, self_path, &addr) || target_start(&h.t2, self_path, &addr2)) {
		bail_out("cannot start %s --target", self_path);
	}
	usyms_reader(us, true);
	is_int(usyms_modules(us, getpid(), hold_lock, &h), 0,
	       "held: the lock held, the target killed");
	pthread_join(h.thread, NULL);
	is_int(h.err, 0, "held: the reader captured the target that exited while it waited");
	is_int(usyms_recapture(us, h.t.pid, 95), 0, "held: its capture taken over");
	is_int(usyms_lookup(us, h.t.pid, addr + 1, &s), 0, "held: lookup in the gone target");
	ok(s.symbol && !strcmp(s.symbol, "usyms_target_func") && s.offset == 1,
	   "held: its address named (%s+%" PRIu64 ")", s.symbol ? s.symbol : "?", s.offset);
	is_str(s.module, self_path, "held: in its executable");
	is_int(h.busy, -EBUSY, "held: filing without waiting: -EBUSY while the lock is held");
	is_int(usyms_precapture_maps(us, h.t2.pid, 96, h.maps, false, NULL), 0,
	       "held: filed once the lock is free, the target gone");
	usyms_maps_free(h.maps);
	is_int(usyms_recapture(us, h.t2.pid, 96), 0, "held: that capture taken over");
	is_int(usyms_lookup(us, h.t2.pid, addr2 + 3, &s), 0, "held: lookup in the second target");
	ok(s.symbol && !strcmp(s.symbol, "usyms_target_func") && s.offset == 3,
	   "held: named from the mappings read while the lock was held (%s+%" PRIu64 ")",
	   s.symbol ? s.symbol : "?", s.offset);
	usyms_reader(us, false);
	usyms_forget(us, h.t.pid);
	usyms_forget(us, h.t2.pid);
}

/*
 * A child stopped at its exec (traced), before ld.so mapped the libraries it needs: the maps
 * reader's capture says it is loading, and the reader reads it again for the same notice once
 * it runs: that capture replaces the first, and names its libc after it exited.
 */
static void test_precapture_loading(struct usyms *us)
{
	struct target t = { 0 };
	unsigned int loading = 99;
	int in[2], out[2], status;
	struct usyms_maps *m;
	uint64_t addr;
	struct usym s;

	if (pipe(in) || pipe(out)) {
		bail_out("pipe: %s", strerror(errno));
	}
	t.pid = fork();
	if (!t.pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(self_path, self_path, "--target", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t.to = fdopen(in[1], "w");
	t.from = fdopen(out[0], "r");
	if (t.pid < 0 || !t.to || !t.from || waitpid(t.pid, &status, 0) != t.pid ||
	    !WIFSTOPPED(status)) {
		bail_out("no child stopped at its exec");
	}
	m = usyms_maps_read(t.pid);
	is_int(usyms_precapture_maps(us, t.pid, 97, m, true, &loading), 0,
	       "loading: captured at its exec");
	is_int(loading, 1, "loading: ld.so had not mapped its libraries: 1 capture in a row");
	usyms_maps_free(m);
	/* Let it run: once it answers, ld.so is done. */
	ptrace(PTRACE_DETACH, t.pid, NULL, NULL);
	fprintf(t.to, "libc.so.6 getpid\n");
	fflush(t.to);
	if (target_read_addr(&t, &addr) || target_read_addr(&t, &addr) || !addr) {
		bail_out("the target did not answer");
	}
	m = usyms_maps_read(t.pid);
	is_int(usyms_precapture_maps(us, t.pid, 97, m, true, &loading), 0,
	       "loading: read again for the same notice");
	is_int(loading, 0, "loading: ld.so done");
	usyms_maps_free(m);
	target_end(&t);
	is_int(usyms_recapture(us, t.pid, 97), 0,
	       "loading: the capture taken over, the child gone");
	usyms_lookup(us, t.pid, addr, &s);
	ok(s.module && strstr(s.module, "libc.so"), "loading: its libc named (%s in %s)",
	   s.symbol ? s.symbol : "?", s.module ? s.module : "no module");
	usyms_forget(us, t.pid);
}

/* An exec told after a capture was read keeps it (it is the new image's); before, drops it. */
static void test_forget_image(struct usyms *us)
{
	pid_t pid = fork_stopped();
	struct timespec ts;
	uint64_t before;
	struct usym s;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	before = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	is_int(usyms_capture(us, pid), 0, "exec: captured");
	kill_reap(pid);
	usyms_forget_image(us, pid, before);
	is_int(usyms_lookup(us, pid, test_func_addr() + 1, &s), 0,
	       "exec: an exec before the capture was read keeps it");
	ok(s.symbol && !strcmp(s.symbol, "usyms_test_func"), "exec: still named (%s)",
	   s.symbol ? s.symbol : "?");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	usyms_forget_image(us, pid, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
	is_int(usyms_lookup(us, pid, test_func_addr() + 1, &s), -ESRCH,
	       "exec: an exec after the capture drops it");
}

/* @unlink_first: delete the binary before the capture, so maps say "(deleted)". */
static void test_deleted_binary(struct usyms *us, bool unlink_first)
{
	const char *when = unlink_first ? "deleted before capture" : "deleted after exit";
	char copy[PATH_MAX], deleted[PATH_MAX + 16];
	struct target t;
	uint64_t addr;
	struct usym s;

	if (copy_self(copy, sizeof(copy))) {
		skip("cannot copy the test binary");
		skip("cannot copy the test binary");
		skip("cannot copy the test binary");
		return;
	}
	if (target_start(&t, copy, &addr)) {
		unlink(copy);
		skip("cannot run the copy of the test binary");
		skip("cannot run the copy of the test binary");
		skip("cannot run the copy of the test binary");
		return;
	}
	if (unlink_first) {
		unlink(copy);
	}
	is_int(usyms_capture(us, t.pid), 0, "%s: captured", when);
	target_end(&t);
	if (!unlink_first) {
		unlink(copy);
	}
	usyms_lookup(us, t.pid, addr + 2, &s);
	ok(s.symbol && !strcmp(s.symbol, "usyms_target_func") && s.offset == 2,
	   "%s, process gone: usyms_target_func+2 (got %s+%" PRIu64 ")", when,
	   s.symbol ? s.symbol : "(null)", s.offset);
	snprintf(deleted, sizeof(deleted), "%s%s", copy, unlink_first ? " (deleted)" : "");
	is_str(s.module, deleted, "%s: module as /proc/PID/maps named it", when);
	usyms_forget(us, t.pid);
}

/*
 * A library loaded after the capture is found on the next miss. In a target process: this one
 * maps the ELF files of the processes it captures, itself included, which muddles its own maps.
 */
static const char *const dlopen_libs[][2] = {
	{ "libm.so.6", "cbrt" },
	/* Not libresolv or libanl: glibc 2.34 moved their functions into libc. */
	{ "libcrypt.so.1", "crypt" },
	{ "libffi.so.8", "ffi_call" },
};

/*
 * Has the target dlopen the next library of dlopen_libs from *@i on that it can: its name and
 * the address of its function. Returns 0 when none could be.
 */
static uint64_t target_dlopen(struct target *t, size_t *i, const char **lib)
{
	uint64_t fn = 0;

	for (; *i < sizeof(dlopen_libs) / sizeof(dlopen_libs[0]) && !fn; (*i)++) {
		*lib = dlopen_libs[*i][0];
		fprintf(t->to, "%s %s\n", *lib, dlopen_libs[*i][1]);
		fflush(t->to);
		if (target_read_addr(t, &fn)) {
			return 0;
		}
	}
	return fn;
}

static void test_dlopen(struct usyms *us)
{
	uint64_t addr, fn = 0, fn2 = 0;
	const char *lib = NULL, *lib2 = NULL;
	struct target t;
	struct usym s;
	size_t i = 0;

	if (target_start(&t, self_path, &addr)) {
		bail_out("cannot run %s --target", self_path);
	}
	is_int(usyms_capture(us, t.pid), 0, "dlopen: target captured");
	fn = target_dlopen(&t, &i, &lib);
	if (!fn) {
		skip("the target could not dlopen any library");
		goto out;
	}
	/* Past the minimum interval between two reads of the maps. */
	usleep(150 * 1000);
	usyms_lookup(us, t.pid, fn, &s);
	ok(s.module && strstr(s.module, lib), "dlopen after capture: %s found (module %s)", lib,
	   s.module ? s.module : "(null)");
	usyms_lookup(us, t.pid, addr, &s);
	is_str(s.symbol, "usyms_target_func", "dlopen: what was there before is still found");

	/*
	 * A library mapped right after a read of the maps (as the loader maps libc right after an
	 * exec's outlier was decoded), the process gone before the miss: only a recapture while it
	 * lived finds it.
	 */
	fn2 = target_dlopen(&t, &i, &lib2);
	if (!fn2) {
		skip("the target could not dlopen a second library");
		goto out;
	}
	is_int(usyms_recapture(us, t.pid, 0), 0, "recapture of a cached pid returns 0");
	target_end(&t);
	usyms_lookup(us, t.pid, fn2, &s);
	ok(s.module && strstr(s.module, lib2), "recapture: %s found after the process exited (%s)",
	   lib2, s.module ? s.module : "(null)");
	usyms_lookup(us, t.pid, fn, &s);
	ok(s.module && strstr(s.module, lib), "recapture: %s still found", lib);
	usyms_forget(us, t.pid);
	is_int(usyms_recapture(us, t.pid, 0), -ESRCH, "recapture of a pid gone and not cached: -ESRCH");
	return;
out:
	target_end(&t);
	usyms_forget(us, t.pid);
}

static void test_eviction(struct usyms *us)
{
	pid_t first = fork_stopped(), kids[NR_CHILDREN];
	struct usym s, kept;
	int i, fails = 0;

	/*
	 * Fork them all before capturing any: a child forked later would inherit this process's
	 * mappings of the files of every process captured so far.
	 */
	for (i = 0; i < NR_CHILDREN; i++) {
		kids[i] = fork_stopped();
	}
	usyms_capture(us, first);
	kill_reap(first);
	is_int(usyms_lookup(us, first, test_func_addr(), &kept), 0, "eviction: still cached");
	for (i = 0; i < NR_CHILDREN; i++) {
		fails += usyms_capture(us, kids[i]) != 0;
	}
	is_int(fails, 0, "eviction: %d more processes captured", NR_CHILDREN);
	is_int(usyms_lookup(us, first, test_func_addr(), &s), -ESRCH,
	       "eviction: the least recently used (gone) process was dropped");
	/* Under valgrind, this would be a read of freed memory if the strings died with the pid. */
	is_str(kept.symbol, "usyms_test_func", "eviction: strings outlive the evicted process");
	ok(kept.module && !strcmp(kept.module, self_path), "eviction: module string too");
	for (i = 0; i < NR_CHILDREN; i++) {
		kill_reap(kids[i]);
	}
	usyms_lookup(us, kids[NR_CHILDREN - 1], test_func_addr(), &s);
	is_str(s.symbol, "usyms_test_func", "eviction: the newest one is still there");
}

int main(int argc, char **argv)
{
	struct usyms *us;

	if (argc > 1 && !strcmp(argv[1], "--target")) {
		run_target();
	}
	read_self_path();
	us = usyms_new();
	if (!ok(us, "usyms_new")) {
		return tap_done();
	}
	test_self(us);
	test_bad_pids(us);
	test_exited_child(us);
	test_precapture(us);
	test_reader_wait(us);
	test_reader_held(us);
	test_precapture_loading(us);
	test_forget_image(us);
	test_deleted_binary(us, false);
	if (geteuid() == 0) {
		test_deleted_binary(us, true);
	} else {
		skip("/proc/PID/map_files needs root");
		skip("/proc/PID/map_files needs root");
		skip("/proc/PID/map_files needs root");
	}
	test_dlopen(us);
	test_eviction(us);
	usyms_free(us);
	usyms_free(NULL);
	ok(1, "usyms_free");
	return tap_done();
}
