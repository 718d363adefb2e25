// SPDX-License-Identifier: GPL-2.0
/*
 * test_idle.c - the idle policy (classify/idle.c) on outliers made by hand: which waits are a
 * thread waiting for work, how they are counted and named, and what overrides it.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tap.h"
#include "classify/idle.h"
#include "classify/rules.h"
#include "lib/outlier.h"

/*
 * The process the outliers are of: this test's own, which serves nothing (no socket), so that
 * a sleep's verdict does not hang on what some process of the machine with a made-up pid does.
 */
static int32_t test_pid;
#define PID test_pid
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define APP "/srv/app"
#define MS 1000000ULL

/* A futex wait of @tid: a condition variable's (val 0) or a mutex's (val 2). */
static struct outlier *futex_wait(int tid, bool lock, uint64_t ip)
{
	struct outlier *o = outlier_new();
	struct outlier_kstack *k;

	if (!o) {
		bail_out("out of memory");
	}
	o->kind = OUTLIER_SYSCALL;
	o->pid = PID;
	o->tid = tid;
	outlier_set_str(&o->comm, tid == PID ? "app" : "worker");
	outlier_set_str(&o->syscall, "futex");
	o->syscall_nr = 202;
	o->has_args = true;
	o->args[1] = lock ? 128 : 393;
	o->args[2] = lock ? 2 : 0;
	o->duration_ns = 300 * MS;
	o->switches = 1;
	o->nvcsw = 40;
	k = outlier_add_kstack(o, o->duration_ns);
	if (!k || outlier_frames_alloc(&k->frames, 2) ||
	    outlier_frame_set(&k->frames.v[0], 0xffffffff81000000ULL, "futex_do_wait", 0x46, NULL) ||
	    outlier_frame_set(&k->frames.v[1], 0xffffffff81000100ULL, "__x64_sys_futex", 0x12d,
			      NULL)) {
		bail_out("out of memory");
	}
	if (outlier_frames_alloc(&o->user_stack.frames, 3) ||
	    outlier_frame_set(&o->user_stack.frames.v[0], ip, "__futex_abstimed_wait_common", 0xc6,
			      LIBC) ||
	    outlier_frame_set(&o->user_stack.frames.v[1], ip + 0x100,
			      lock ? "__pthread_mutex_lock@GLIBC_2.2.5" : "pthread_cond_wait@@GLIBC_2.3.2",
			      0x20, LIBC) ||
	    outlier_frame_set(&o->user_stack.frames.v[2], 0x401000, lock ? "take" : "next_job.constprop.0",
			      0x10, APP)) {
		bail_out("out of memory");
	}
	return o;
}

/*
 * A goroutine's wait as the tracker makes it (tracker/goroutines.c): kind sleep on the M @tid, no
 * kernel stack, its frames from runtime.gopark out to @fn (called from @caller), flags goroutine
 * and go-wait.
 */
static struct outlier *goroutine_wait(int tid, const char *reason, const char *fn,
				      const char *caller)
{
	static const char *const inner[] = { "runtime.gopark", "runtime.chanrecv" };
	struct outlier *o = outlier_new();
	size_t i;

	if (!o || outlier_set_str(&o->comm, "goserver") ||
	    outlier_frames_alloc(&o->user_stack.frames, 4)) {
		bail_out("out of memory");
	}
	o->kind = OUTLIER_SLEEP;
	o->pid = PID;
	o->tid = tid;
	o->syscall_nr = -1;
	o->duration_ns = o->blocked_ns = 300 * MS;
	for (i = 0; i < 2; i++) {
		if (outlier_frame_set(&o->user_stack.frames.v[i], 0x430000 + i * 0x100, inner[i], 8,
				      APP)) {
			bail_out("out of memory");
		}
	}
	if (outlier_frame_set(&o->user_stack.frames.v[2], 0x480000, fn, 8, APP) ||
	    outlier_frame_set(&o->user_stack.frames.v[3], 0x490000, caller, 8, APP) ||
	    outlier_add_flag(o, "goroutine") || outlier_add_flag(o, "goroutine 42") ||
	    outlier_add_flag(o, "go-wait: %s", reason)) {
		bail_out("out of memory");
	}
	return o;
}

/* A wait of @tid in io_uring_enter as Linux 6.1 shows it: io_cqring_wait() inlined. */
static struct outlier *io_uring_wait(int tid)
{
	struct outlier *o = futex_wait(tid, false, 0x7f0000010000);

	if (outlier_set_str(&o->syscall, "io_uring_enter") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "__do_sys_io_uring_enter") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[1].symbol, "do_syscall_64")) {
		bail_out("out of memory");
	}
	o->syscall_nr = 426;
	o->has_args = false;
	outlier_frames_free(&o->user_stack.frames);
	return o;
}

/*
 * A read of the main thread from a pipe at user @ip (libc's read, called from main), blocked
 * 300 ms; @sleep: instead an off-CPU interval outside any syscall that left user code at the same
 * @ip (preempted on its way into read), made as the decoder makes a sleep: no syscall, and
 * syscall_nr left at 0, which is read's number.
 */
static struct outlier *pipe_read_or_sleep(uint64_t ip, bool sleep)
{
	struct outlier *o = futex_wait(PID, false, ip);

	if (outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "pipe_read") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[1].symbol, "__x64_sys_read") ||
	    outlier_set_str(&o->user_stack.frames.v[0].symbol, "read") ||
	    outlier_set_str(&o->user_stack.frames.v[1].symbol, "wait_for_pipe")) {
		bail_out("out of memory");
	}
	o->has_args = false;
	o->syscall_nr = 0;
	if (sleep) {
		o->kind = OUTLIER_SLEEP;
		free(o->syscall);
		o->syscall = NULL;
		o->runqueue_ns = o->duration_ns;
	} else if (outlier_set_str(&o->syscall, "read")) {
		bail_out("out of memory");
	}
	return o;
}

/*
 * A sleep of thread @tid of process @pid in clock_nanosleep, from usleep in keeper(), that
 * returned @ret (0: it slept its time out).
 */
static struct outlier *usleep_wait(int32_t pid, int32_t tid, int64_t ret)
{
	struct outlier *o = futex_wait(tid, false, 0x7f0000020000);

	o->pid = pid;
	o->ret = ret;
	o->has_args = false;
	o->syscall_nr = 230;
	if (outlier_set_str(&o->syscall, "clock_nanosleep") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "do_nanosleep") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[1].symbol, "__x64_sys_clock_nanosleep") ||
	    outlier_set_str(&o->user_stack.frames.v[0].symbol, "clock_nanosleep@GLIBC_2.2.5") ||
	    outlier_set_str(&o->user_stack.frames.v[1].symbol, "usleep") ||
	    outlier_set_str(&o->user_stack.frames.v[2].symbol, "keeper")) {
		bail_out("out of memory");
	}
	return o;
}

/*
 * A child process that pauses until killed; @listens: with a TCP socket listening on loopback
 * (a server), or without any socket. Return: its pid, once it is so.
 */
static pid_t start_child(bool listens)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	int ready[2], fd;
	char c = 1;
	pid_t pid;

	if (pipe(ready)) {
		bail_out("pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		bail_out("fork: %s", strerror(errno));
	}
	if (!pid) {
		addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (listens) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
			    listen(fd, 1)) {
				_exit(1);
			}
		}
		if (write(ready[1], &c, 1) != 1) {
			_exit(1);
		}
		for (;;) {
			pause();
		}
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		bail_out("child %d did not start", (int)pid);
	}
	close(ready[0]);
	return pid;
}

static void stop_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * Sets @o's waker: thread @tid of process @pid (0: an interrupt), whose kernel stack holds the
 * @nr functions @fns, innermost first.
 */
static void set_waker(struct outlier *o, int32_t pid, int32_t tid, const char *const *fns,
		      size_t nr)
{
	size_t i;

	o->waker = calloc(1, sizeof(*o->waker));
	if (!o->waker || outlier_frames_alloc(&o->waker->frames, nr) ||
	    outlier_set_str(&o->waker->comm, tid ? "waker" : "[hardirq]")) {
		bail_out("out of memory");
	}
	o->waker->pid = pid;
	o->waker->tid = tid;
	for (i = 0; i < nr; i++) {
		if (outlier_frame_set(&o->waker->frames.v[i], 0xffffffff81001000ULL + i * 0x100,
				      fns[i], 0, NULL)) {
			bail_out("out of memory");
		}
	}
}

static const char *const futex_wake_fns[] = { "try_to_wake_up", "wake_up_q", "futex_wake",
					      "do_futex", "__x64_sys_futex" };
/* A child's exit closing its end of a pipe the parent polls. */
static const char *const exit_pipe_fns[] = { "try_to_wake_up",	 "ep_poll_callback",
					     "__wake_up_common", "pipe_release",
					     "__fput",		 "task_work_run",
					     "do_exit",		 "do_group_exit" };
/* A peer's exit closing a socket: no child's. */
static const char *const exit_sock_fns[] = { "try_to_wake_up",	  "sock_def_readable",
					     "unix_release_sock", "__fput",
					     "task_work_run",	  "do_exit",
					     "do_group_exit" };
static const char *const timer_fns[] = { "try_to_wake_up", "hrtimer_wakeup" };

/*
 * A semaphore wait of a new thread @tid (Python's threading.Lock: sem_wait), 3 waits old,
 * woken by thread @waker of its process.
 */
static struct outlier *sem_wait_of_new_thread(int tid, int32_t waker, uint64_t ip)
{
	struct outlier *o = futex_wait(tid, false, ip);

	o->nvcsw = 3;
	o->state = OUTLIER_ENDED;
	if (outlier_set_str(&o->user_stack.frames.v[0].symbol, "__new_sem_wait_slow64") ||
	    outlier_set_str(&o->user_stack.frames.v[1].symbol, "PyThread_acquire_lock_timed")) {
		bail_out("out of memory");
	}
	set_waker(o, PID, waker, futex_wake_fns, 5);
	return o;
}

/* An epoll_wait of thread @tid that returned @ret, its user stack from @caller. */
static struct outlier *epoll_wait_of(int32_t tid, int64_t ret, const char *caller)
{
	struct outlier *o = futex_wait(tid, false, 0x7f0000030000);

	o->has_args = false;
	o->syscall_nr = 232;
	o->ret = ret;
	o->state = OUTLIER_ENDED;
	if (outlier_set_str(&o->syscall, "epoll_wait") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "do_epoll_wait") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[1].symbol, "__x64_sys_epoll_wait") ||
	    outlier_set_str(&o->user_stack.frames.v[0].symbol, "epoll_wait") ||
	    outlier_set_str(&o->user_stack.frames.v[1].symbol, caller) ||
	    outlier_set_str(&o->user_stack.frames.v[2].symbol, "main")) {
		bail_out("out of memory");
	}
	return o;
}

/* judge: idle_judge() of @o, freed after. */
static bool judge(struct idle_policy *p, struct outlier *o, const char **why)
{
	bool idle = idle_judge(p, o, why);

	outlier_free(o);
	return idle;
}

int main(void)
{
	const struct idle_entry *e;
	struct idle_policy *p = NULL;
	struct rules *rules = NULL, *builtin = rules_builtin();
	struct outlier *o;
	const char *why;
	pid_t server, quiet;
	size_t n;

	test_pid = (int32_t)getpid();
	ok(!idle_open(&p, builtin, true), "idle_open");

	/*
	 * A worker's condition-variable wait, never in work (no work context): a helper thread
	 * waiting for an event nobody owns, for its next job, wherever it is.
	 */
	ok(judge(p, futex_wait(101, false, 0x7f0000001000), &why),
	   "a helper thread's first condvar wait after 39 other waits: idle");
	ok(why && strstr(why, "helper thread"), "why: a helper thread (%s)", why ? why : "(null)");
	ok(judge(p, futex_wait(101, false, 0x7f0000001000), &why),
	   "the same worker back at the same place: idle");
	ok(why && strstr(why, "came back"), "why: it came back (%s)", why ? why : "(null)");
	ok(judge(p, futex_wait(101, false, 0x7f0000002000), &why),
	   "the same worker at another place: idle too");

	/* A mutex wait is never idle, however often. */
	ok(!judge(p, futex_wait(102, true, 0x7f0000003000), &why), "a mutex wait: latency");
	ok(!judge(p, futex_wait(102, true, 0x7f0000003000), &why),
	   "the same mutex wait again: still latency");

	/* The main thread: only where tracking found it. */
	ok(!judge(p, futex_wait(PID, false, 0x7f0000004000), &why), "main thread, condvar: latency");
	ok(!judge(p, futex_wait(PID, false, 0x7f0000004000), &why),
	   "main thread back at the same place: still latency");
	idle_seed(p, PID, 202, 0x7f0000005000);
	ok(judge(p, futex_wait(PID, false, 0x7f0000005000), &why),
	   "main thread where it was waiting when tracking began: idle");
	ok(why && strstr(why, "tracking began"), "why: tracking began (%s)", why ? why : "(null)");
	idle_seed(p, 103, 202, 0x7f0000006000);
	ok(!judge(p, futex_wait(103, true, 0x7f0000006000), &why),
	   "a mutex wait where tracking found the thread: latency all the same");

	/* A new thread's first wait. */
	o = futex_wait(104, false, 0x7f0000007000);
	o->nvcsw = 3;
	ok(judge(p, o, &why), "a new worker (3 voluntary switches in its life): its first wait is idle");
	o = futex_wait(105, false, 0x7f0000008000);
	o->nvcsw = 0;
	ok(judge(p, o, &why), "switch count unknown (0): a helper thread all the same");
	ok(why && !strstr(why, "new thread"), "why: not taken for a new thread (%s)", why ? why : "");
	o = futex_wait(PID, false, 0x7f0000009000);
	o->nvcsw = 1;
	ok(!judge(p, o, &why), "the main thread's first wait: latency (it does the process's work)");

	/* A wait that ended by its own timeout: nothing came, in any thread. */
	o = futex_wait(PID, false, 0x7f000000d000);
	o->waker = calloc(1, sizeof(*o->waker));
	if (!o->waker || outlier_frames_alloc(&o->waker->frames, 2) ||
	    outlier_frame_set(&o->waker->frames.v[0], 0xffffffff81000200ULL, "try_to_wake_up", 0,
			      NULL) ||
	    outlier_frame_set(&o->waker->frames.v[1], 0xffffffff81000300ULL, "hrtimer_wakeup", 0,
			      NULL)) {
		bail_out("out of memory");
	}
	ok(judge(p, o, &why), "the main thread's condvar wait that timed out: idle");
	ok(why && strstr(why, "timed out"), "why: timed out (%s)", why ? why : "(null)");
	o = futex_wait(PID, true, 0x7f000000e000);
	o->waker = calloc(1, sizeof(*o->waker));
	if (!o->waker || outlier_frames_alloc(&o->waker->frames, 1) ||
	    outlier_frame_set(&o->waker->frames.v[0], 0xffffffff81000300ULL, "hrtimer_wakeup", 0,
			      NULL)) {
		bail_out("out of memory");
	}
	ok(!judge(p, o, &why), "a mutex wait that timed out (timedlock): latency");
	/* Its wakeup unseen (no waker), but the futex said so: timed out all the same. */
	o = futex_wait(PID, false, 0x7f0000010000);
	o->ret = -ETIMEDOUT;
	ok(judge(p, o, &why), "a condvar wait without a waker that returned ETIMEDOUT: idle");
	ok(why && strstr(why, "timed out"), "why: timed out (%s)", why ? why : "(null)");
	o = futex_wait(PID, false, 0x7f0000011000);
	o->ret = 0;
	ok(!judge(p, o, &why), "... the same wait that returned 0 (woken, the waker unseen): latency");

	/* A pipe: its reader is a consumer, the main thread too. */
	o = futex_wait(PID, false, 0x7f000000f000);
	outlier_set_str(&o->syscall, "read");
	o->syscall_nr = 0;
	o->has_args = false;
	outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "anon_pipe_read");
	ok(!judge(p, o, &why), "the main thread's first pipe read: latency");
	o = futex_wait(PID, false, 0x7f000000f000);
	outlier_set_str(&o->syscall, "read");
	o->syscall_nr = 0;
	o->has_args = false;
	outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "anon_pipe_read");
	ok(judge(p, o, &why), "the main thread back at its pipe read: idle");

	/* Without arguments or user frames a futex is nothing in particular: counted. */
	o = futex_wait(106, false, 0x7f000000a000);
	o->has_args = false;
	outlier_frames_free(&o->user_stack.frames);
	o->nvcsw = 1;
	ok(!judge(p, o, &why), "a futex wait with nothing to tell lock from event: latency");

	/* Sleeps and requests. */
	o = futex_wait(107, false, 0x7f000000b000);
	outlier_set_str(&o->syscall, "nanosleep");
	o->syscall_nr = 35;
	o->has_args = false;
	outlier_frames_free(&o->user_stack.frames);
	o->nvcsw = 1;
	ok(!judge(p, o, &why), "a requested sleep, even a new thread's first: latency");
	o = futex_wait(101, false, 0x7f0000001000);
	o->kind = OUTLIER_REQUEST;
	ok(!judge(p, o, &why), "a request is never idle");

	/* A wait reported while it lasts keeps its verdict when it ends. */
	o = futex_wait(108, false, 0x7f000000c000);
	o->start_ns = 7000 * MS;
	outlier_add_flag(o, "still-blocked: still waiting");
	o->state = OUTLIER_STILL_BLOCKED;
	o->in_work = o->worked = true;
	ok(!judge(p, o, &why), "a wait in work, still going: latency");
	o = futex_wait(108, false, 0x7f000000c000);
	o->start_ns = 7000 * MS;
	o->got_work = o->worked = true;
	ok(!judge(p, o, &why), "its end, though work came then: latency still (one wait, one verdict)");
	o = futex_wait(108, false, 0x7f000000c000);
	o->start_ns = 9000 * MS;
	ok(judge(p, o, &why), "the thread's next wait there: idle");

	/* Counted per thread and place; a wait reported while it lasts is not counted. */
	o = futex_wait(101, false, 0x7f0000001000);
	outlier_add_flag(o, "still-blocked: still waiting");
	o->state = OUTLIER_STILL_BLOCKED;
	o->start_ns = 5000 * MS;
	o->duration_ns = 1000 * MS;
	ok(judge(p, o, &why), "still-blocked at its home place: idle");
	is_u64(idle_count(p), 11, "11 idle waits counted, the one still going included");
	o = futex_wait(101, false, 0x7f0000001000);
	o->start_ns = 5000 * MS;
	o->duration_ns = 1500 * MS;
	ok(judge(p, o, &why), "its end: idle");
	is_u64(idle_count(p), 11, "its end is not another wait");
	n = idle_entries(p, &e);
	is_u64(n, 6, "6 threads and places (the main thread's condvar waits at one)");
	is_str(n ? e[0].site : "", "pthread_cond_wait in next_job (futex)",
	       "the place: libc's outermost frame in the caller, no version or clone suffix");
	is_u64(n ? e[0].count : 0, 4, "four waits there (its two places have one text)");
	is_u64(n ? e[0].total_ns : 0, 2400 * MS, "their time: 3 x 300 ms and the long one's 1.5 s");
	idle_window_reset(p);
	n = idle_entries(p, &e);
	is_u64(n == 6 ? e[0].window_count + e[1].window_count + e[2].window_count + e[3].window_count +
			       e[4].window_count + e[5].window_count :
			1,
	       0,
	       "a snapshot's window starts over");
	is_u64(n ? e[0].count : 0, 4, "the run's counts stay");
	idle_close(p);

	/* Rules decide first; --include-idle turns it all off. */
	ok(!rules_parse("500 comm:worker syscall:futex = !idle\n"
			"600 user:take = idle\n",
			"test.rules", &rules),
	   "rules with idle and !idle");
	ok(!idle_open(&p, rules, true), "idle_open with them");
	ok(!judge(p, futex_wait(101, false, 0x7f0000001000), &why), "!idle: counted");
	ok(!judge(p, futex_wait(101, false, 0x7f0000001000), &why), "!idle: counted when back too");
	ok(judge(p, futex_wait(102, true, 0x7f0000003000), &why),
	   "idle (higher priority) for a mutex wait in take(): idle");
	ok(why && strstr(why, "rule"), "why: a rule (%s)", why ? why : "(null)");
	idle_close(p);
	rules_free(rules);

	/*
	 * The work context (latsnap.bpf.c's work_note()) decides before the kind of wait: inside a
	 * unit of work a condition-variable wait is latency, even at a place the thread came back
	 * to; a wait that work ended, or a serving thread's wait between units, is idle, even on
	 * a mutex.
	 */
	ok(!idle_open(&p, builtin, true), "idle_open for the work context");
	/*
	 * An io_uring reaper (MariaDB's) on Linux 6.1, which inlines io_cqring_wait(): the syscall
	 * alone says it waits for completions. A helper never in work: idle; in work: latency.
	 */
	ok(judge(p, io_uring_wait(110), &why), "6.1's io_uring_enter, a helper never in work: idle");
	o = io_uring_wait(111);
	o->in_work = o->worked = true;
	ok(!judge(p, o, &why), "6.1's io_uring_enter inside a unit of work: latency");

	o = futex_wait(201, false, 0x7f0000006000);
	o->in_work = o->worked = true;
	ok(!judge(p, o, &why), "in work: a condition-variable wait is latency");
	o = futex_wait(201, false, 0x7f0000006000);
	o->in_work = o->worked = true;
	ok(!judge(p, o, &why), "in work: ... at the same place again too");
	o = futex_wait(202, true, 0x7f0000007000);
	o->worked = true;
	ok(judge(p, o, &why), "served before, not in work: a mutex wait is idle");
	ok(why && strstr(why, "between units of work"), "why: between units (%s)", why ? why : "");
	o = futex_wait(203, false, 0x7f0000008000);
	o->got_work = o->worked = true;
	ok(judge(p, o, &why), "work came: the wait was for work");
	o = futex_wait(203, false, 0x7f0000008000);
	o->in_work = o->worked = true;
	ok(!judge(p, o, &why), "in work at the place where work came before: latency (a request's body)");
	o = futex_wait(203, true, 0x7f0000009000);
	o->in_work = o->worked = true;
	ok(!judge(p, o, &why), "in work elsewhere: latency");
	/* A timed wait that ran to its timeout is idle, unless a sleep function made it. */
	o = futex_wait(204, false, 0x7f000000a000);
	o->waker = calloc(1, sizeof(*o->waker));
	if (!o->waker || outlier_frames_alloc(&o->waker->frames, 1) ||
	    outlier_frame_set(&o->waker->frames.v[0], 0xffffffff81000200ULL, "hrtimer_wakeup", 0,
			      NULL)) {
		bail_out("out of memory");
	}
	o->nvcsw = 400;
	ok(judge(p, o, &why), "a timed condition wait that timed out: idle");
	o = futex_wait(205, false, 0x7f000000b000);
	o->waker = calloc(1, sizeof(*o->waker));
	if (!o->waker || outlier_frames_alloc(&o->waker->frames, 1) ||
	    outlier_frame_set(&o->waker->frames.v[0], 0xffffffff81000200ULL, "hrtimer_wakeup", 0,
			      NULL) ||
	    outlier_set_str(&o->user_stack.frames.v[2].symbol, "JVM_Sleep")) {
		bail_out("out of memory");
	}
	o->nvcsw = 400;
	ok(!judge(p, o, &why), "... but from JVM_Sleep (Thread.sleep): a sleep, latency");
	/* JavaScript's Atomics.wait: a sleep when it runs to its timeout, a lock wait when woken. */
	o = futex_wait(206, false, 0x7f000000c000);
	o->waker = calloc(1, sizeof(*o->waker));
	if (!o->waker || outlier_frames_alloc(&o->waker->frames, 1) ||
	    outlier_frame_set(&o->waker->frames.v[0], 0xffffffff81000200ULL, "hrtimer_wakeup", 0,
			      NULL) ||
	    outlier_set_str(&o->user_stack.frames.v[2].symbol,
			    "_ZN2v88internal15FutexEmulation8WaitSyncEPNS0_7IsolateENS0_6HandleINS0_"
			    "13JSArrayBufferEEEmiNS0_6HandleINS0_6ObjectEEE")) {
		bail_out("out of memory");
	}
	o->nvcsw = 400;
	ok(!judge(p, o, &why), "Atomics.wait run to its timeout (V8's FutexEmulation::WaitSync): "
			       "a JavaScript sleep, latency");
	o = futex_wait(207, false, 0x7f000000d000);
	if (outlier_set_str(&o->user_stack.frames.v[2].symbol,
			    "_ZN2v88internal19Builtin_AtomicsWaitEiPmPNS0_7IsolateE")) {
		bail_out("out of memory");
	}
	o->nvcsw = 400;
	ok(judge(p, o, &why), "... woken by another thread before its timeout: not a sleep (a "
			      "helper's wait for an event: idle)");
	/* The java launcher's main thread joins the JVM's main thread for the program's life. */
	o = futex_wait(PID, false, 0x7f000000e000);
	if (outlier_set_str(&o->user_stack.frames.v[1].symbol, "__pthread_clockjoin_ex") ||
	    outlier_set_str(&o->user_stack.frames.v[2].symbol, "CallJavaMainInNewThread")) {
		bail_out("out of memory");
	}
	ok(judge(p, o, &why) && !strcmp(why, "an idle rule matches it"),
	   "the java launcher joining the JVM's main thread: idle, by a built-in rule");

	/* Goroutines: judged by their wait reason, whatever their M did before. */
	ok(judge(p, goroutine_wait(300, "chan receive", "main.worker", "runtime.goexit"), &why),
	   "a goroutine parked in chan receive (a worker waiting for its job): idle");
	n = idle_entries(p, &e);
	ok(n > 0 && !strcmp(e[n - 1].site, "chan receive in main.worker (goroutine)"),
	   "listed as 'chan receive in main.worker (goroutine)' (%s)", n ? e[n - 1].site : "none");
	ok(judge(p, goroutine_wait(300, "select", "main.loop", "main.main"), &why),
	   "a goroutine parked in select: idle");
	ok(judge(p, goroutine_wait(300, "sync.Cond.Wait", "sync.(*Cond).Wait", "main.next"), &why),
	   "a goroutine in sync.Cond.Wait: idle");
	ok(!judge(p, goroutine_wait(300, "semacquire", "sync.(*Mutex).lockSlow", "main.take"),
		  &why),
	   "a goroutine waiting for a sync.Mutex (Go 1.19's semacquire): latency");
	ok(!judge(p, goroutine_wait(300, "semacquire", "sync.(*Mutex).lockSlow", "main.take"),
		  &why),
	   "... again at the same place, on the same M: latency still");
	ok(!judge(p, goroutine_wait(301, "sleep", "time.Sleep", "main.nap"), &why),
	   "a goroutine in time.Sleep: latency");
	ok(!judge(p, goroutine_wait(301, "chan send", "main.produce", "main.main"), &why),
	   "a goroutine held up sending on a channel: latency");
	idle_close(p);

	/*
	 * A main thread preempted at libc's read on its way in, then blocked in that read: the two
	 * are not one place (a sleep has no syscall number, whatever the field holds), so the read
	 * is its first wait there, latency (a pipe's reader is idle only where it came back).
	 */
	ok(!idle_open(&p, builtin, true), "idle_open again");
	ok(!judge(p, pipe_read_or_sleep(0x7f0000006000, true), &why),
	   "the main thread waiting for a CPU at libc's read: latency");
	ok(!judge(p, pipe_read_or_sleep(0x7f0000006000, false), &why),
	   "its read from the pipe at the same address next: latency, not a place it came back to");
	ok(judge(p, pipe_read_or_sleep(0x7f0000006000, false), &why),
	   "a second read from the pipe there: idle, it came back");
	idle_close(p);

	ok(!idle_open(&p, builtin, false), "idle_open disabled (--include-idle)");
	idle_seed(p, PID, 202, 0x7f0000005000);
	ok(!judge(p, futex_wait(PID, false, 0x7f0000005000), &why), "disabled: nothing is idle");
	is_u64(idle_count(p), 0, "disabled: nothing counted");
	idle_close(p);

	/*
	 * Issue 46: a server's housekeeping. A thread never in work that sleeps or waits to its own
	 * timeout is idle in a process that serves (it listens, or a thread of it was in work); a
	 * sleep cut short, inside work, of a thread that served, or of a process that serves
	 * nothing stays latency.
	 */
	server = start_child(true);
	quiet = start_child(false);
	ok(!idle_open(&p, builtin, true), "idle_open for housekeeping");
	ok(judge(p, usleep_wait(server, server + 1, 0), &why),
	   "a listening server's thread never in work, usleep run to its end: idle");
	ok(why && !strncmp(why, "a server's housekeeping", 23), "why: a server's housekeeping (%s)",
	   why ? why : "(null)");
	n = idle_entries(p, &e);
	ok(n == 1 && e[0].pid == server && !strcmp(e[0].site, "usleep in keeper (clock_nanosleep)"),
	   "listed as 'usleep in keeper (clock_nanosleep)' (%s)", n ? e[n - 1].site : "none");
	o = usleep_wait(server, server + 1, 0);
	o->state = OUTLIER_UNFINISHED;
	ok(judge(p, o, &why) && why && strstr(why, "still asleep"),
	   "... the same thread's usleep there, still asleep when the run ended: idle (%s)",
	   why ? why : "(null)");
	o = usleep_wait(server, server + 9, 0);
	o->state = OUTLIER_UNFINISHED;
	ok(!judge(p, o, &why), "... another thread's first usleep, still asleep at the end: latency");
	ok(!judge(p, usleep_wait(server, server + 1, -EINTR), &why),
	   "... the same sleep cut short by a signal (-EINTR): latency");
	o = usleep_wait(server, server + 2, 0);
	o->in_work = o->worked = true;
	ok(!judge(p, o, &why), "a sleep inside a unit of work of the server: latency");
	o = usleep_wait(server, server + 2, 0);
	o->worked = true;
	ok(!judge(p, o, &why), "a sleep of a thread that served, between units: latency");
	o = usleep_wait(server, PID, 0);
	o->pid = o->tid = server;
	ok(judge(p, o, &why), "the server's main thread, never in work, sleeping: idle");
	o = futex_wait(server + 3, false, 0x7f0000021000);
	o->pid = server;
	o->ret = -ETIMEDOUT;
	ok(judge(p, o, &why) && why && !strncmp(why, "a server's housekeeping", 23),
	   "the server's timed condition wait to -ETIMEDOUT: housekeeping, idle (%s)",
	   why ? why : "(null)");
	o = futex_wait(server + 5, false, 0x7f0000024000);
	o->pid = server;
	o->has_args = false;
	o->syscall_nr = 232;
	if (outlier_set_str(&o->syscall, "epoll_wait") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "do_epoll_wait") ||
	    outlier_set_str(&o->user_stack.frames.v[1].symbol, "epoll_wait")) {
		bail_out("out of memory");
	}
	/* Its own timer ended it, no sleep function: an event loop free until then (issue 47). */
	ok(judge(p, o, &why) && why && !strncmp(why, "an event loop's", 15),
	   "the server's epoll_wait that returned 0: free until its timer, idle");
	o = futex_wait(server + 4, true, 0x7f0000022000);
	o->pid = server;
	o->ret = -ETIMEDOUT;
	ok(!judge(p, o, &why), "the server's timed mutex wait to -ETIMEDOUT: a lock, latency");
	ok(!judge(p, usleep_wait(PID, PID + 1, 0), &why),
	   "a thread of a program with no socket, usleep run to its end: latency (a batch job)");
	ok(!judge(p, usleep_wait(quiet, quiet + 1, 0), &why),
	   "a process with no socket and no work yet: its sleep is latency");
	o = futex_wait(quiet + 2, false, 0x7f0000023000);
	o->pid = quiet;
	o->worked = o->got_work = true;
	ok(judge(p, o, &why), "... then a thread of it gets work");
	ok(judge(p, usleep_wait(quiet, quiet + 1, 0), &why),
	   "... from then on it serves: its housekeeper's sleep is idle");

	/*
	 * Issue 47, a verdict by what ended the wait. A new thread's first wait in a semaphore
	 * (Python's threading.Lock), ended by another helper thread's release: a lock passed on,
	 * latency (it was "the first wait of a new thread" before). Woken by the main thread, the
	 * same wait is a job handed over: idle. A condition variable's is an event whoever
	 * signals it (MariaDB's tpool workers wake each other): idle.
	 */
	o = sem_wait_of_new_thread(PID + 40, PID + 41, 0x7f0000040000);
	ok(!judge(p, o, &why), "a new thread's semaphore wait a sibling ended: a lock, latency");
	o = sem_wait_of_new_thread(PID + 42, PID, 0x7f0000041000);
	ok(judge(p, o, &why) && why && strstr(why, "first wait of a new thread"),
	   "the same wait the main thread ended: its first job, idle (%s)", why ? why : "(null)");
	o = futex_wait(PID + 43, false, 0x7f0000042000);
	o->nvcsw = 3;
	o->state = OUTLIER_ENDED;
	set_waker(o, PID, PID + 44, futex_wake_fns, 5);
	ok(judge(p, o, &why), "a new thread's condvar wait a sibling ended: an event, idle");
	o = sem_wait_of_new_thread(PID + 45, PID + 46, 0x7f0000043000);
	o->nvcsw = 40;
	ok(!judge(p, o, &why), "a helper's first semaphore wait there a sibling ended: latency");

	/*
	 * A wait for descriptors that a child's exit ended (Node's execSync: epoll_wait, the
	 * child's pipe closing): the caller waits for work it started, latency, in a helper thread
	 * too (it would be "a helper thread ... for its next job"). A socket's peer exiting is no
	 * child: a helper's recv so ended stays idle.
	 */
	o = epoll_wait_of(PID + 50, 1, "uv__io_poll");
	set_waker(o, PID + 900, PID + 900, exit_pipe_fns, 8);
	ok(!judge(p, o, &why), "a helper's epoll_wait a child's exit ended: latency");
	o = epoll_wait_of(PID + 54, -EINTR, "uv__io_poll");
	set_waker(o, PID + 903, PID + 903, exit_pipe_fns, 8);
	ok(judge(p, o, &why), "... one its SIGCHLD cut short (-EINTR, no descriptor): idle");
	o = epoll_wait_of(PID, 1, "uv__io_poll");
	set_waker(o, PID + 901, PID + 901, exit_pipe_fns, 8);
	ok(!judge(p, o, &why), "the main thread's, the same: latency");
	o = epoll_wait_of(PID + 51, 1, "uv__io_poll");
	set_waker(o, PID, PID + 52, futex_wake_fns, 5);
	ok(judge(p, o, &why), "a helper's epoll_wait a thread of its process ended: idle");
	o = futex_wait(PID + 53, false, 0x7f0000044000);
	o->syscall_nr = 45;
	o->has_args = false;
	if (outlier_set_str(&o->syscall, "recvfrom") ||
	    outlier_set_str(&o->kernel_stacks[0].frames.v[0].symbol, "unix_stream_read_generic")) {
		bail_out("out of memory");
	}
	set_waker(o, PID + 902, PID + 902, exit_sock_fns, 7);
	ok(judge(p, o, &why), "a helper's socket read a peer's exit ended: no child's, idle");

	/*
	 * An event loop free until its timer (asyncio.sleep, setTimeout): an epoll_wait that
	 * returned 0, woken by its timer, with no sleep function on the stack, is idle even inside
	 * a unit of work. A sleep function waiting there (PostgreSQL's pg_sleep on its latch) is a
	 * sleep: latency. One that returned data (woken by someone) inside work: latency.
	 */
	o = epoll_wait_of(PID, 0, "BaseEventLoop._run_once");
	o->in_work = true;
	set_waker(o, 0, 0, timer_fns, 2);
	ok(judge(p, o, &why) && why && strstr(why, "event loop"),
	   "an event loop's epoll_wait in work, run to its timer: idle (%s)", why ? why : "(null)");
	o = epoll_wait_of(PID, 0, "pg_sleep");
	o->in_work = true;
	set_waker(o, 0, 0, timer_fns, 2);
	ok(!judge(p, o, &why), "pg_sleep's epoll_wait in work, run to its timer: a sleep, latency");
	o = epoll_wait_of(PID, 1, "WaitEventSetWait");
	o->in_work = true;
	set_waker(o, PID, PID + 60, futex_wake_fns, 5);
	ok(!judge(p, o, &why), "an epoll_wait in work that something ended: latency");
	o = epoll_wait_of(PID, 0, "poll_reply");
	o->in_work = true;
	o->has_args = true;
	o->args[1] = 1;
	o->syscall_nr = 7;
	set_waker(o, 0, 0, timer_fns, 2);
	if (outlier_set_str(&o->syscall, "poll")) {
		bail_out("out of memory");
	}
	ok(!judge(p, o, &why), "a poll of one descriptor in work, run to its timeout: latency");
	o = epoll_wait_of(PID, 0, "poll_loop");
	o->in_work = true;
	o->has_args = true;
	o->args[1] = 3;
	o->syscall_nr = 7;
	set_waker(o, 0, 0, timer_fns, 2);
	if (outlier_set_str(&o->syscall, "poll")) {
		bail_out("out of memory");
	}
	ok(judge(p, o, &why), "a poll of 3 descriptors in work, run to its timeout: idle");
	o = epoll_wait_of(PID, 0, "BaseEventLoop._run_once");
	o->in_work = true;
	o->state = OUTLIER_STILL_BLOCKED;
	ok(!judge(p, o, &why), "the same wait while it lasts (not ended yet), in work: latency");
	o = usleep_wait(server, server + 1, 0);
	ok(!idle_judge_wait(p, o, false, &why),
	   "top's judgement of a stand-in wait reads no process: a sleep, latency");
	outlier_free(o);
	idle_close(p);
	stop_child(quiet);
	ok(!idle_open(&p, builtin, true), "idle_open after the quiet process is gone");
	ok(!judge(p, usleep_wait(quiet, quiet + 1, 0), &why), "a process gone: latency");
	idle_close(p);
	stop_child(server);
	rules_free(builtin);
	return tap_done();
}
