// SPDX-License-Identifier: GPL-2.0
/* test_proc - lib/proc.c's reader of /proc/PID/stat and lib/array.c's growing arrays. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/proc.h"
#include "tap.h"

/* A comm that ends early if the fields are looked for after its first ')'. */
#define ODD_COMM "a) S 1 (b"

static void test_proc_stat(void)
{
	unsigned long long self_start = 0, start = 0;
	struct proc_stat st = { 0 };
	int fds[2], status, i;
	siginfo_t info;
	char c = 0;
	pid_t child;

	is_int(proc_stat_read(getpid(), (pid_t)syscall(SYS_gettid), &st), 0, "this thread: read");
	ok(st.state == 'R', "this thread: running (got %c)", st.state);
	is_int(proc_start_time(getpid(), &self_start), 0, "this process: start time read");
	ok(self_start > 0, "this process: a start time since boot");

	if (pipe(fds)) {
		bail_out("pipe: %s", strerror(errno));
	}
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, ODD_COMM);
		close(fds[0]);
		if (write(fds[1], "x", 1) != 1) {
			_exit(1);
		}
		pause();
		_exit(0);
	}
	close(fds[1]);
	ok(read(fds[0], &c, 1) == 1, "child named \"%s\"", ODD_COMM);
	/* Written, it goes to pause(): give it (at most 5 s) to get there. */
	for (i = 0; i < 500 && !proc_stat_read(child, 0, &st) && st.state != 'S'; i++) {
		usleep(10 * 1000);
	}
	st.state = 0;
	is_int(proc_stat_read(child, 0, &st), 0, "child: read despite its comm");
	ok(st.state == 'S', "child: sleeping in pause() (got %c)", st.state);
	ok(st.start_time >= self_start, "child: started after its parent (%llu >= %llu)",
	   st.start_time, self_start);
	is_int(st.ppid, getpid(), "child: its parent is this process");
	/* Forked, not exec'd: the same objects at the same addresses as its parent. */
	ok(proc_code_hash(child) && proc_code_hash(child) == proc_code_hash(getpid()),
	   "child: the same code hash as its parent (forked)");
	kill(child, SIGKILL);
	/* Until reaped it is a zombie: read, and said so. */
	waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT);
	is_int(proc_stat_read(child, 0, &st), 0, "killed child: still read");
	ok(st.state == 'Z', "killed child: a zombie (got %c)", st.state);
	waitpid(child, &status, 0);
	is_int(proc_start_time(child, &start), -ESRCH, "reaped child: gone (-ESRCH)");
	close(fds[0]);
}

static void test_array(void)
{
	size_t cap = 0, nr = 0, i;
	uint32_t *v = NULL, *e;
	bool kept = true;

	is_int(array_reserve((void **)&v, &cap, 100, sizeof(*v)), 0, "reserve 100: done");
	ok(v && cap >= 100, "reserve 100: room for 100 (cap %zu)", cap);
	for (i = 0; i < 100; i++) {
		v[i] = (uint32_t)i;
	}
	is_int(array_reserve((void **)&v, &cap, 1000, sizeof(*v)), 0, "reserve 1000: done");
	ok(cap >= 1000 && cap < 2000, "reserve 1000: doubled to fit (cap %zu)", cap);
	for (i = 0; i < 100; i++) {
		kept = kept && v[i] == i;
	}
	ok(kept, "reserve 1000: the first 100 kept");
	e = v;
	is_int(array_reserve((void **)&v, &cap, SIZE_MAX / 2, sizeof(*v)), -ENOMEM,
	       "reserve beyond memory: -ENOMEM");
	ok(v == e && cap >= 1000 && cap < 2000, "reserve beyond memory: the array untouched");
	free(v);

	v = NULL;
	for (i = 0; i < 3; i++) {
		e = array_append((void **)&v, &nr, sizeof(*v));
		ok(e && *e == 0 && e == &v[i], "append %zu: a zeroed element at the end", i);
		if (e) {
			*e = 7;
		}
	}
	is_int(nr, 3, "append: three counted");
	free(v);
}

int main(void)
{
	test_proc_stat();
	test_array();
	return tap_done();
}
