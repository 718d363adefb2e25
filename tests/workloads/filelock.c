// SPDX-License-Identifier: GPL-2.0
/*
 * filelock [MS=150] [KIND=0]
 *
 * Two processes and one file lock: process "lockholder" takes an exclusive lock on a temporary
 * file and holds it MS ms (sleeping); process "lockwaiter" asks for the same lock meanwhile and
 * blocks. KIND 0 is flock(LOCK_EX), 1 fcntl(F_SETLKW) (a POSIX record lock), 2 fcntl(F_OFD_SETLKW)
 * (an open file description lock). Known cause: a flock or fcntl outlier of ~MS in "lockwaiter",
 * waiting for a file lock. (The holder's wait for its child is a wait4 of ~MS as well.)
 * WL_LOG lines: "pid P", "tid lockholder T", "tid lockwaiter T".
 */
#include "wl_common.h"
#include <sys/file.h>
#include <sys/wait.h>

static long hold_ms, kind;

/* Takes the whole file's exclusive lock on @fd, waiting for it, the way @kind says. */
static __attribute__((noinline)) void lock_file(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (kind == 0) {
		if (flock(fd, LOCK_EX)) {
			wl_die("flock", errno);
		}
	} else if (fcntl(fd, kind == 1 ? F_SETLKW : F_OFD_SETLKW, &fl)) {
		wl_die("fcntl", errno);
	}
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/filelock.XXXXXX";
	int go[2], fd, status;
	uint64_t t0;
	pid_t child;
	char c = 0;

	wl_init_knobs("filelock", argc, argv, WL_MS("MS", hold_ms, 150),
		      WL_KNOB("KIND", kind, 0, 0, 2));
	fd = mkstemp(path);
	if (fd < 0 || pipe(go)) {
		wl_die("mkstemp or pipe", errno);
	}
	unlink(path);
	wl_role("lockholder");
	lock_file(fd);
	child = fork();
	if (child < 0) {
		wl_die("fork", errno);
	}
	if (!child) {
		/* A lock of its own: flock and OFD locks belong to the open file, POSIX ones to
		 * the process. */
		char self[64];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		fd = open(self, O_RDWR);
		if (fd < 0) {
			wl_die("open", errno);
		}
		wl_role("lockwaiter");
		if (write(go[1], &c, 1) != 1) {
			wl_die("write", errno);
		}
		t0 = wl_now_ns();
		lock_file(fd);
		wl_log_span("lock", t0, wl_now_ns());
		wl_say("waited %.3f ms for the file lock", (double)(wl_now_ns() - t0) / 1e6);
		_exit(0);
	}
	if (read(go[0], &c, 1) != 1) {
		wl_die("read", errno);
	}
	wl_nanosleep_ms(hold_ms);
	if (kind == 0) {
		flock(fd, LOCK_UN);
	} else {
		struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

		fcntl(fd, kind == 1 ? F_SETLK : F_OFD_SETLK, &fl);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		wl_die("the waiter failed", 0);
	}
	return 0;
}
