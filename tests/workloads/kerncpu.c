// SPDX-License-Identifier: GPL-2.0
/*
 * kerncpu [MB=32] [N=1]
 *
 * N times, one read() of MB megabytes from /dev/urandom into a buffer touched beforehand, in
 * kernel_work(): a syscall that computes in the kernel (ChaCha20) and waits for nothing. Known
 * cause: on-CPU time in the kernel; latsnap should report a read outlier mostly on CPU, with no
 * wait, that most often never left its CPU.
 * WL_LOG lines: "pid P", "read TID START_NS END_NS BYTES" per read.
 */
#include "wl_common.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __attribute__((noinline)) void kernel_work(int fd, char *buf, size_t len)
{
	uint64_t t0 = wl_now_ns(), t1;
	ssize_t n;

	n = read(fd, buf, len);
	t1 = wl_now_ns();
	if (n < 0)
		wl_die("read(/dev/urandom)", errno);
	wl_log("read %d %llu %llu %zd", (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)t1, n);
	wl_say("read %zd bytes in %.3f ms", n, (double)(t1 - t0) / 1e6);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	long mb, n, i;
	size_t len;
	char *buf;
	int fd;

	wl_init_knobs("kerncpu", argc, argv, WL_KNOB("MB", mb, 32, 1, 1024),
		      WL_KNOB("N", n, 1, 1, 1000));
	len = (size_t)mb << 20;
	buf = malloc(len);
	if (!buf)
		wl_die("malloc", ENOMEM);
	/* Touched now: page faults inside the read would be waits of their own. */
	memset(buf, 1, len);
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		wl_die("open(/dev/urandom)", errno);
	for (i = 0; i < n; i++)
		kernel_work(fd, buf, len);
	/* No free(): the munmap of a large buffer takes milliseconds, an outlier of its own. */
	return 0;
}
