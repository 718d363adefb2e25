// SPDX-License-Identifier: GPL-2.0
/*
 * test_holder.c - holder_find() on real blocked threads: children of this test that block on a
 * pthread mutex, a condition variable, a pipe, a unix socket, and hold what they block on in
 * another thread or process. Each blocked thread is described to holder_find() as the hang check
 * would: its syscall and arguments from /proc/PID/task/TID/syscall, with or without frames.
 *
 * The children die with the test (PR_SET_PDEATHSIG) and are killed at its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "tracker/holder.h"
#include "tracker/usyms.h"
#include "tap.h"

/* This machine's numbers, as /proc/PID/task/TID/syscall gives them. */
#define NR_FUTEX SYS_futex
#define NR_READ SYS_read
#define WAIT_MS 10000 /* for a child to block: generous, the machine may be loaded */

/* What the children tell the test, in a shared mapping: written once, then read. */
struct shared {
	pid_t holder, waiter; /* the mutex child's threads */
	uint64_t mutex; /* the address of its mutex */
	pid_t condwait, relock, signaller; /* the condition variable child's */
	pid_t other; /* a reader child's other process, holding the other end */
};

static struct shared *sh;

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pi_mutex; /* PTHREAD_PRIO_INHERIT: waited for with FUTEX_LOCK_PI */
static pthread_mutex_t *child_mutex = &mutex; /* the one the mutex child's threads take */
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t relock_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t signalled = PTHREAD_COND_INITIALIZER;
static int relock_waiting;

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static __attribute__((noreturn)) void sleep_forever(void)
{
	for (;;) {
		sleep_ms(3600000);
	}
}

/* In a child: die with the test; -1 when it is already gone. */
static int die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent) {
		return -1;
	}
	return 0;
}

static pid_t fork_child(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		bail_out("fork: %s", strerror(errno));
	}
	return pid;
}

static void kill_reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
		}
	}
}

/* Waits for *@v, written by a child, to be set; 0 after WAIT_MS. */
static pid_t wait_for(volatile pid_t *v)
{
	int i;

	for (i = 0; i < WAIT_MS / 10 && !*v; i++) {
		sleep_ms(10);
	}
	return *v;
}

/*
 * Waits for thread @tid of @pid to sleep in syscall @nr (-1: any), on @arg0 unless 0, and describes it as
 * the hang check would: its syscall and arguments from /proc/PID/task/TID/syscall ("nr a1..a6 sp
 * pc"). Returns 0, or -1 when it did not block in time; *@pc receives the pc.
 */
static int blocked_query(pid_t pid, pid_t tid, long nr, uint64_t arg0, struct holder_query *q,
			 uint64_t *pc)
{
	char path[64], buf[512], stat[512];
	unsigned long long a[6], sp, ip;
	const char *p;
	FILE *f;
	int i, n;
	long got;

	memset(q, 0, sizeof(*q));
	q->pid = pid;
	q->tid = tid;
	for (i = 0; i < WAIT_MS / 10; i++, sleep_ms(10)) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
		f = fopen(path, "re");
		if (!f) {
			return -1;
		}
		n = fgets(stat, sizeof(stat), f) != NULL;
		fclose(f);
		p = n ? strrchr(stat, ')') : NULL;
		if (!p || p[2] != 'S') {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
		f = fopen(path, "re");
		if (!f) {
			return -1;
		}
		n = 0;
		if (fgets(buf, sizeof(buf), f)) {
			n = sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &got, &a[0],
				   &a[1], &a[2], &a[3], &a[4], &a[5], &sp, &ip);
		}
		fclose(f);
		if (n == 9 && (got == nr || nr < 0) && (!arg0 || a[0] == arg0)) {
			q->syscall_nr = got;
			for (n = 0; n < 6; n++) {
				q->args[n] = a[n];
			}
			if (pc) {
				*pc = ip;
			}
			return 0;
		}
	}
	return -1;
}

/* Frames made of the names given, innermost first, NULL-terminated. */
static struct outlier_frames frames_of(const char *const *names)
{
	struct outlier_frames f = { 0 };
	size_t n = 0;

	while (names[n]) {
		n++;
	}
	if (outlier_frames_alloc(&f, n)) {
		bail_out("out of memory");
	}
	for (n = 0; n < f.nr; n++) {
		if (outlier_frame_set(&f.v[n], 0x1000 + n, names[n], 0, "libc.so.6")) {
			bail_out("out of memory");
		}
	}
	return f;
}

/* The symbol of @pc in @pid, as the hang check's symbolizer gives it; NULL when unknown. */
static const char *symbol_at(struct usyms *us, pid_t pid, uint64_t pc)
{
	struct usym sym;

	if (!us || usyms_capture(us, pid) || usyms_lookup(us, pid, pc, &sym)) {
		return NULL;
	}
	return sym.symbol;
}

static bool is_sleep_state(const char *state)
{
	return !strcmp(state, "blocked in clock_nanosleep") ||
	       !strcmp(state, "blocked in nanosleep");
}

/* The mutex child: "holder" holds the mutex and sleeps, "waiter" blocks on it. */
static void *holder_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "holder");
	pthread_mutex_lock(child_mutex);
	sh->holder = gettid_();
	sleep_forever();
}

static void *waiter_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "waiter");
	while (!sh->holder) {
		sleep_ms(1);
	}
	sh->waiter = gettid_();
	pthread_mutex_lock(child_mutex);
	_exit(3);
}

/*
 * The condition variable child: "condwait" waits on a condition nobody signals; "relock" waits
 * on one that "signaller" signals while holding its mutex, so that "relock", woken, blocks on
 * taking the mutex back (inside pthread_cond_wait).
 */
static void *condwait_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "condwait");
	pthread_mutex_lock(&cond_mutex);
	sh->condwait = gettid_();
	while (!pthread_cond_wait(&never, &cond_mutex)) {
	}
	return NULL;
}

static void *relock_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "relock");
	pthread_mutex_lock(&relock_mutex);
	relock_waiting = 1;
	sh->relock = gettid_();
	pthread_cond_wait(&signalled, &relock_mutex);
	_exit(3);
}

static void *signaller_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "signaller");
	/* Set under the mutex, the flag says "relock" is in pthread_cond_wait once we hold it. */
	pthread_mutex_lock(&relock_mutex);
	while (!relock_waiting) {
		pthread_mutex_unlock(&relock_mutex);
		sleep_ms(1);
		pthread_mutex_lock(&relock_mutex);
	}
	pthread_cond_signal(&signalled);
	sh->signaller = gettid_();
	sleep_forever();
}

static pid_t start_threads(void *(*const *fns)(void *))
{
	pid_t parent = getpid(), pid = fork_child();
	pthread_t t;

	if (pid) {
		return pid;
	}
	if (die_with_parent(parent)) {
		_exit(0);
	}
	for (; *fns; fns++) {
		if (pthread_create(&t, NULL, *fns, NULL)) {
			_exit(2);
		}
	}
	sleep_forever();
}

static void check_holder_of(const struct holder_query *q, pid_t pid, const char *how,
			    const char *label)
{
	struct holder_found h;
	char what[64];
	int ret;

	ret = holder_find(q, &h);
	if (!is_int(ret, 0, "mutex %s: found", how)) {
		return;
	}
	is_int(h.kind, HOLDER_MUTEX, "mutex %s: a mutex", how);
	is_int(h.pid, pid, "mutex %s: the holder's process", how);
	is_int(h.tid, sh->holder, "mutex %s: the holder thread", how);
	is_str(h.comm, "holder", "mutex %s: its comm", how);
	snprintf(what, sizeof(what), "%s 0x%" PRIx64, label, sh->mutex);
	is_str(h.what, what, "mutex %s: what it holds", how);
	ok(is_sleep_state(h.state), "mutex %s: its state says it sleeps ('%s')", how, h.state);
	is_int(h.nr_others, 0, "mutex %s: nobody else", how);
}

static void check_mutex_holder(const struct holder_query *q, pid_t pid, const char *how)
{
	check_holder_of(q, pid, how, "pthread mutex");
}

static void test_mutex(struct usyms *us)
{
	static void *(*const fns[])(void *) = { holder_thread, waiter_thread, NULL };
	static const char *const lock_frames[] = { "__lll_lock_wait", "___pthread_mutex_lock",
						   "take_lock", "main", NULL };
	static const char *const versioned[] = { "pthread_mutex_lock@@GLIBC_2.2.5", "main", NULL };
	struct outlier_frames frames;
	struct holder_found h;
	struct holder_query q;
	const char *sym;
	uint64_t pc = 0;
	pid_t pid;

	sh->mutex = (uint64_t)(uintptr_t)&mutex;
	pid = start_threads(fns);
	if (!wait_for(&sh->holder) || !wait_for(&sh->waiter) ||
	    blocked_query(pid, sh->waiter, NR_FUTEX, 0, &q, &pc)) {
		ok(0, "mutex: the waiter blocks in futex");
		kill_reap(pid);
		return;
	}
	is_u64(q.args[0], sh->mutex, "mutex: the waiter's futex is the mutex");
	check_mutex_holder(&q, pid, "without frames");

	/*
	 * Frames are believed over the futex's value: with them, a query without the value the
	 * waiter waits for (2, for a normal mutex) still finds the owner; without, it does not.
	 */
	q.args[2] = 0;
	is_int(holder_find(&q, &h), -ENOENT, "mutex: without frames, the futex value must match");

	frames = frames_of(lock_frames);
	q.user = &frames;
	check_mutex_holder(&q, pid, "with lock frames");
	outlier_frames_free(&frames);

	frames = frames_of(versioned);
	check_mutex_holder(&q, pid, "with a versioned symbol");
	outlier_frames_free(&frames);

	/*
	 * The innermost frame of a thread blocked in pthread_mutex_lock, as glibc's symbols name
	 * it (the futex value still withheld: the name alone must tell).
	 */
	sym = symbol_at(us, pid, pc);
	if (sym) {
		const char *names[] = { sym, NULL };

		diag("the waiter's pc is in %s", sym);
		frames = frames_of(names);
		q.user = &frames;
		check_mutex_holder(&q, pid, "with the waiter's real pc");
		outlier_frames_free(&frames);
	} else {
		skip("the waiter's pc has no symbol (glibc without symbols, or valgrind's own code)");
	}
	kill_reap(pid);
}

/* A priority-inheritance mutex: the futex word holds the owner's tid. */
static void test_pi_mutex(void)
{
	static void *(*const fns[])(void *) = { holder_thread, waiter_thread, NULL };
	static const char *const lock_frames[] = { "__futex_lock_pi64", "__pthread_mutex_lock_full",
						   "main", NULL };
	struct outlier_frames frames;
	pthread_mutexattr_t attr;
	struct holder_query q;
	pid_t pid;

	pthread_mutexattr_init(&attr);
	if (pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) ||
	    pthread_mutex_init(&pi_mutex, &attr)) {
		bail_out("cannot make a PI mutex");
	}
	child_mutex = &pi_mutex;
	sh->mutex = (uint64_t)(uintptr_t)&pi_mutex;
	sh->holder = sh->waiter = 0;
	pid = start_threads(fns);
	child_mutex = &mutex;
	if (!wait_for(&sh->holder) || !wait_for(&sh->waiter) ||
	    blocked_query(pid, sh->waiter, NR_FUTEX, sh->mutex, &q, NULL)) {
		ok(0, "PI mutex: the waiter blocks in futex");
		kill_reap(pid);
		return;
	}
	is_u64(q.args[1] & FUTEX_CMD_MASK, FUTEX_LOCK_PI,
	       "PI mutex: waited for with FUTEX_LOCK_PI");
	check_holder_of(&q, pid, "PI without frames", "PI futex");
	frames = frames_of(lock_frames);
	q.user = &frames;
	check_holder_of(&q, pid, "PI with lock frames", "pthread mutex");
	outlier_frames_free(&frames);
	kill_reap(pid);
}

static void test_cond(struct usyms *us)
{
	static void *(*const fns[])(void *) = { condwait_thread, relock_thread, signaller_thread,
						NULL };
	static const char *const relock_frames[] = { "__lll_lock_wait", "__pthread_mutex_cond_lock",
						     "___pthread_cond_wait", "main", NULL };
	const char *names[] = { NULL, "___pthread_cond_wait", "main", NULL };
	struct outlier_frames frames;
	struct holder_found h;
	struct holder_query q;
	uint64_t pc = 0;
	pid_t pid;
	int ret;

	pid = start_threads(fns);
	if (!wait_for(&sh->condwait) || blocked_query(pid, sh->condwait, NR_FUTEX, 0, &q, &pc)) {
		ok(0, "cond: the waiter blocks in futex");
		kill_reap(pid);
		return;
	}
	is_int(holder_find(&q, &h), -ENOENT, "cond: nobody holds a condition (no frames)");
	names[0] = symbol_at(us, pid, pc);
	if (!names[0]) {
		names[0] = "__futex_abstimed_wait_common";
	}
	diag("the condition waiter's pc is in %s", names[0]);
	frames = frames_of(names);
	q.user = &frames;
	is_int(holder_find(&q, &h), -ENOENT, "cond: nobody holds a condition (cond frames)");
	outlier_frames_free(&frames);

	/* Woken, the waiter blocks on the mutex it must take back: that one has a holder. */
	if (!wait_for(&sh->relock) || !wait_for(&sh->signaller) ||
	    blocked_query(pid, sh->relock, NR_FUTEX, (uint64_t)(uintptr_t)&relock_mutex, &q,
			  NULL)) {
		ok(0, "cond: the woken waiter blocks in futex");
		kill_reap(pid);
		return;
	}
	frames = frames_of(relock_frames);
	q.user = &frames;
	q.args[2] = 0; /* the frames must tell */
	ret = holder_find(&q, &h);
	if (is_int(ret, 0, "cond: the woken waiter's mutex has a holder")) {
		is_int(h.kind, HOLDER_MUTEX, "cond: a mutex");
		is_int(h.tid, sh->signaller, "cond: held by the signaller");
		is_str(h.comm, "signaller", "cond: its comm");
	}
	outlier_frames_free(&frames);
	kill_reap(pid);
}

enum end_kind {
	END_PIPE, /* a pipe whose write end another process holds */
	END_OWN_PIPE, /* a pipe whose write end only the reader itself holds */
	END_SOCKET, /* a unix stream socket whose peer another process holds */
};

/*
 * A child that blocks in read() in @kind's way, with its other end held, when it is held
 * elsewhere, by a grandchild that sleeps, named "other" (its pid in sh->other).
 */
static pid_t start_reader(enum end_kind kind, int *read_fd)
{
	pid_t parent = getpid(), pid, reader;
	int fds[2];
	char c;

	sh->other = 0;
	pid = fork_child();
	if (pid) {
		*read_fd = 3;
		return pid;
	}
	if (die_with_parent(parent)) {
		_exit(0);
	}
	prctl(PR_SET_NAME, "reader");
	/* Descriptor 3 for the reader's end: the test knows it. */
	if ((kind == END_SOCKET ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds) : pipe(fds)) ||
	    dup2(fds[0], 3) < 0) {
		_exit(2);
	}
	if (fds[0] != 3) {
		close(fds[0]);
	}
	if (kind != END_OWN_PIPE) {
		reader = getpid();
		if (!fork()) {
			close(3);
			if (die_with_parent(reader)) {
				_exit(0);
			}
			prctl(PR_SET_NAME, "other");
			sh->other = getpid();
			sleep_forever();
		}
		close(fds[1]);
	}
	if (read(3, &c, 1) >= 0) {
		_exit(3);
	}
	_exit(2);
}

/*
 * Kills the reader and its other process. This test is their subreaper (main()): the other
 * process, orphaned, is then reaped here, not left a zombie for init.
 */
static void end_reader(pid_t pid)
{
	if (sh->other > 0) {
		kill(sh->other, SIGKILL);
	}
	kill_reap(pid);
	if (sh->other > 0) {
		waitpid(sh->other, NULL, 0);
	}
}

static void test_end(enum end_kind kind, const char *name)
{
	struct holder_found h;
	struct holder_query q;
	pid_t pid;
	int fd, ret;

	pid = start_reader(kind, &fd);
	if ((kind != END_OWN_PIPE && !wait_for(&sh->other)) ||
	    blocked_query(pid, pid, NR_READ, 0, &q, NULL)) {
		ok(0, "%s: the reader blocks in read", name);
		end_reader(pid);
		return;
	}
	is_u64(q.args[0], fd, "%s: reads its descriptor", name);
	ret = holder_find(&q, &h);
	if (!is_int(ret, 0, "%s: found", name)) {
		end_reader(pid);
		return;
	}
	diag("%s: '%s'", name, h.what);
	is_int(h.kind, kind == END_SOCKET ? HOLDER_SOCKET : HOLDER_PIPE, "%s: its kind", name);
	if (kind == END_OWN_PIPE) {
		is_int(h.pid, pid, "%s: held by the reader's process", name);
		ok(strstr(h.what, "write end") &&
			   strstr(h.what, "held by the reader's own process"),
		   "%s: what says so", name);
		is_str(h.state, "blocked in read", "%s: its state", name);
	} else {
		is_int(h.pid, sh->other, "%s: held by the other process", name);
		is_str(h.comm, "other", "%s: its comm", name);
		ok(is_sleep_state(h.state), "%s: its state says it sleeps ('%s')", name, h.state);
		ok(strstr(h.what, kind == END_SOCKET ? "socket:[" : "write end") != NULL,
		   "%s: what names the other end", name);
	}
	is_int(h.tid, h.pid, "%s: tid is the pid", name);
	is_int(h.nr_others, 0, "%s: nobody else", name);
	end_reader(pid);
}

/*
 * The hang workloads (tests/workloads/deadlock.c...), when they are built: each is run with a
 * time limit and WL_LOG, and its stuck threads are looked up as the log names them.
 */
struct workload {
	pid_t pid;
	char log[64];
};

static char workloads_dir[PATH_MAX];

/* The value after "@key " in the workload's log (decimal, or hex with 0x); -1 if not there. */
static int log_get(const struct workload *w, const char *key, uint64_t *v)
{
	char line[256];
	size_t len = strlen(key);
	int ret = -1;
	FILE *f = fopen(w->log, "re");

	if (!f) {
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, len) && line[len] == ' ') {
			*v = strtoull(line + len + 1, NULL, 0);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int log_wait(const struct workload *w, const char *key, uint64_t *v)
{
	int i;

	for (i = 0; i < WAIT_MS / 10; i++, sleep_ms(10)) {
		if (!log_get(w, key, v)) {
			return 0;
		}
	}
	return -1;
}

/* Starts workload @name for 10 s at most; 0, or -1 when it is not built. */
static int workload_start(struct workload *w, const char *name)
{
	pid_t parent = getpid();
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", workloads_dir, name);
	if (access(path, X_OK)) {
		return -1;
	}
	snprintf(w->log, sizeof(w->log), "/tmp/latsnap-test-holder-wl.XXXXXX");
	fd = mkstemp(w->log);
	if (fd < 0) {
		bail_out("mkstemp: %s", strerror(errno));
	}
	close(fd);
	w->pid = fork_child();
	if (!w->pid) {
		if (die_with_parent(parent)) {
			_exit(0);
		}
		setenv("WL_LOG", w->log, 1);
		execl(path, path, "10", (char *)NULL);
		_exit(127);
	}
	return 0;
}

/* Kills the workload and reaps it, and the child it names "pid writer" (orphaned to us). */
static void workload_end(struct workload *w)
{
	uint64_t child;

	if (!log_get(w, "pid writer", &child)) {
		kill((pid_t)child, SIGKILL);
	}
	kill_reap(w->pid);
	if (!log_get(w, "pid writer", &child)) {
		waitpid((pid_t)child, NULL, 0);
	}
	unlink(w->log);
}

/* "stuck @waiter" waits in futex for the mutex logged as @mutex_key, held by "tid @holder". */
static void check_workload_mutex(const char *name, const struct workload *w, const char *waiter,
				 const char *mutex_key, const char *holder, const char *state)
{
	char key[32], what[64];
	uint64_t tid, holder_tid, mutex;
	struct holder_query q, other;
	struct holder_found h;

	snprintf(key, sizeof(key), "stuck %s", waiter);
	if (log_wait(w, key, &tid) || log_get(w, mutex_key, &mutex) ||
	    blocked_query(w->pid, (pid_t)tid, NR_FUTEX, mutex, &q, NULL)) {
		ok(0, "%s: %s blocks on the %s", name, waiter, mutex_key);
		return;
	}
	snprintf(key, sizeof(key), "tid %s", holder);
	if (log_get(w, key, &holder_tid)) {
		ok(0, "%s: the log names %s", name, holder);
		return;
	}
	/* A holder that blocks too (a deadlock) may not have yet. */
	if (strcmp(state, "running") &&
	    blocked_query(w->pid, (pid_t)holder_tid, -1, 0, &other, NULL)) {
		ok(0, "%s: %s blocks", name, holder);
		return;
	}
	if (!is_int(holder_find(&q, &h), 0, "%s: %s's holder found", name, waiter)) {
		return;
	}
	is_int(h.kind, HOLDER_MUTEX, "%s: %s waits for a mutex", name, waiter);
	is_int(h.pid, w->pid, "%s: held in the process", name);
	is_int(h.tid, holder_tid, "%s: %s holds what %s waits for", name, holder, waiter);
	is_str(h.comm, holder, "%s: the holder's comm", name);
	snprintf(what, sizeof(what), "pthread mutex 0x%" PRIx64, mutex);
	is_str(h.what, what, "%s: what %s holds", name, holder);
	is_str(h.state, state, "%s: %s's state", name, holder);
}

/* The deadlock's main thread joins thread a: held up by a, found from the futex word alone. */
static void check_workload_join(const char *name, const struct workload *w)
{
	struct holder_query q;
	struct holder_found h;
	uint64_t a;

	if (log_get(w, "tid a", &a) || blocked_query(w->pid, w->pid, NR_FUTEX, 0, &q, NULL)) {
		ok(0, "%s: the main thread blocks in pthread_join", name);
		return;
	}
	if (!is_int(holder_find(&q, &h), 0, "%s: the joining main thread's holder found", name)) {
		return;
	}
	is_int(h.kind, HOLDER_THREAD, "%s: it waits for a thread to end", name);
	is_int(h.tid, a, "%s: thread a, which it joins", name);
	ok(strstr(h.what, "joined") != NULL, "%s: what: '%s'", name, h.what);
}

static void test_workloads(void)
{
	static const char *const deadlocks[] = { "deadlock", "deadlock-nofp", NULL };
	const char *const *name;
	uint64_t reader, writer;
	struct holder_query q, other;
	struct holder_found h;
	struct workload w;

	for (name = deadlocks; *name; name++) {
		if (workload_start(&w, *name)) {
			skip("a workload is not built (make build/workloads/deadlock ...)");
			continue;
		}
		check_workload_mutex(*name, &w, "a", "mutex B", "b", "blocked in futex");
		check_workload_mutex(*name, &w, "b", "mutex A", "a", "blocked in futex");
		check_workload_join(*name, &w);
		workload_end(&w);
	}

	if (workload_start(&w, "lockstall")) {
		skip("a workload is not built (make build/workloads/lockstall)");
	} else {
		check_workload_mutex("lockstall", &w, "waiter", "mutex", "holder", "running");
		workload_end(&w);
	}

	if (workload_start(&w, "pipestall")) {
		skip("a workload is not built (make build/workloads/pipestall)");
		return;
	}
	if (log_wait(&w, "stuck reader", &reader) || log_get(&w, "pid writer", &writer) ||
	    blocked_query(w.pid, (pid_t)reader, NR_READ, 0, &q, NULL) ||
	    blocked_query((pid_t)writer, (pid_t)writer, -1, 0, &other, NULL)) {
		ok(0, "pipestall: the reader blocks in read");
	} else if (is_int(holder_find(&q, &h), 0, "pipestall: the reader's holder found")) {
		is_int(h.kind, HOLDER_PIPE, "pipestall: a pipe");
		is_int(h.pid, writer, "pipestall: held by the writer");
		is_str(h.comm, "writer", "pipestall: the writer's comm");
		ok(is_sleep_state(h.state), "pipestall: the writer sleeps ('%s')", h.state);
		ok(strstr(h.what, "write end") != NULL, "pipestall: what: '%s'", h.what);
	}
	workload_end(&w);
}

static void test_bad_input(void)
{
	struct holder_query q = { .pid = getpid(), .tid = gettid_(), .syscall_nr = NR_READ };
	struct holder_found h;
	char path[] = "/tmp/latsnap-test-holder.XXXXXX";
	int fd;
	pid_t pid;

	is_int(holder_find(NULL, &h), -EINVAL, "bad: no query");
	is_int(holder_find(&q, NULL), -EINVAL, "bad: nowhere to answer");

	fd = mkstemp(path);
	if (fd < 0) {
		bail_out("mkstemp: %s", strerror(errno));
	}
	unlink(path);
	q.args[0] = (uint64_t)fd;
	is_int(holder_find(&q, &h), -ENOENT, "bad: nobody holds a regular file");
	close(fd);
	is_int(holder_find(&q, &h), -EBADF, "bad: a descriptor not open");
	q.args[0] = 1ull << 40;
	is_int(holder_find(&q, &h), -EBADF, "bad: a descriptor out of range");

	q.syscall_nr = -1;
	is_int(holder_find(&q, &h), -ENOENT, "bad: no syscall");
	q.syscall_nr = 39; /* getpid */
	is_int(holder_find(&q, &h), -ENOENT, "bad: a syscall nobody holds");
	q.syscall_nr = NR_FUTEX;
	q.args[0] = 8;
	q.args[1] = FUTEX_WAIT_PRIVATE;
	is_int(holder_find(&q, &h), -ENOENT, "bad: a futex at an unmapped address");
	q.args[0] = 6;
	is_int(holder_find(&q, &h), -ENOENT, "bad: a futex not aligned");

	pid = fork_child();
	if (!pid) {
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	q.pid = q.tid = pid;
	q.syscall_nr = NR_READ;
	q.args[0] = 0;
	is_int(holder_find(&q, &h), -ESRCH, "bad: a process gone");
	q.pid = q.tid = 0;
	is_int(holder_find(&q, &h), -EINVAL, "bad: pid 0");
	q.pid = getpid();
	q.tid = pid;
	is_int(holder_find(&q, &h), -ESRCH, "bad: a thread not of the process");
}

static void test_state(void)
{
	char state[64];

	is_int(holder_state(getpid(), gettid_(), state, sizeof(state)), 0, "state: of this thread");
	is_str(state, "running", "state: this thread runs");
	is_str(holder_kind_name(HOLDER_PIPE), "pipe", "kind name");
}

int main(void)
{
	struct usyms *us = usyms_new();
	char *slash;
	ssize_t len;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		bail_out("mmap: %s", strerror(errno));
	}
	len = readlink("/proc/self/exe", workloads_dir, sizeof(workloads_dir) - 32);
	slash = len > 0 ? memrchr(workloads_dir, '/', (size_t)len) : NULL;
	/* build/tests/test_holder.t: the workloads are in build/workloads. */
	snprintf(slash ? slash : workloads_dir, 32, "%s",
		 slash ? "/../workloads" : "build/workloads");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		bail_out("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	}
	if (getuid() != 0) {
		/* /proc/PID/mem and .../syscall of another process need ptrace rights. */
		diag("not root: the children are ours, which is enough unless ptrace is restricted");
	}
	test_mutex(us);
	test_pi_mutex();
	test_cond(us);
	test_end(END_PIPE, "pipe");
	test_end(END_OWN_PIPE, "own pipe");
	test_end(END_SOCKET, "unix socket");
	test_workloads();
	test_bad_input();
	test_state();
	usyms_free(us);
	return tap_done();
}
