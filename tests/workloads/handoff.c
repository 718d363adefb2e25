// SPDX-License-Identifier: GPL-2.0
/*
 * handoff reader FIFO
 * handoff waker FIFO [SPIN_MS=150] [SLEEP_MS=4000]
 *
 * A thread of another program hands the CPU to a traced one and then blocks for long. Both
 * run on CPU 0. The reader (run under latsnap) opens FIFO and blocks in read() in
 * wait_for_byte(). The waker (run outside latsnap, before it) opens FIFO, writes one byte
 * (waking the reader: the waker is then of interest to latsnap's context), keeps CPU 0 for
 * SPIN_MS as SCHED_FIFO 10 and then sleeps SLEEP_MS: its switch out is the reader's switch in.
 * Known cause: the reader's read is an outlier of ~SPIN_MS, most of it waiting for CPU; the
 * snapshot, taken before the waker wakes, must hold the switch that put the reader back.
 * WL_LOG lines: "pid P", "reader TID", "read TID START END"; the waker's "waker TID",
 * "spin TID START END".
 */
#include "wl_common.h"
#include <sched.h>

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		wl_die("sched_setaffinity(cpu 0)", errno);
}

static __attribute__((noinline)) void wait_for_byte(int fd)
{
	uint64_t t0 = wl_now_ns(), t1;
	char c;

	if (read(fd, &c, 1) != 1)
		wl_die("read", errno);
	t1 = wl_now_ns();
	wl_log_span("read", t0, t1);
	wl_say("read blocked %.3f ms", (double)(t1 - t0) / 1e6);
}

static __attribute__((noinline)) void hog_cpu_until(uint64_t deadline)
{
	while (wl_now_ns() < deadline)
		__asm__ volatile("" ::: "memory");
}

static int waker_main(const char *path, long spin_ms, long sleep_ms)
{
	struct sched_param sp = { .sched_priority = 10 };
	uint64_t t0;
	char c = 'x';
	int fd;

	wl_set_comm("waker");
	pin_cpu0();
	wl_log("waker %d", (int)wl_gettid());
	fd = open(path, O_WRONLY | O_CLOEXEC); /* until the reader opens it */
	if (fd < 0)
		wl_die(path, errno);
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		wl_die("sched_setscheduler(SCHED_FIFO, 10)", errno);
	/* The reader opened the FIFO: let it reach its read(). */
	wl_nanosleep_ms(100);
	if (write(fd, &c, 1) != 1)
		wl_die("write", errno);
	t0 = wl_now_ns();
	hog_cpu_until(t0 + (uint64_t)spin_ms * 1000000);
	wl_log_span("spin", t0, wl_now_ns());
	wl_nanosleep_ms(sleep_ms);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *role, *path;
	int fd;

	wl_init("handoff", "reader|waker FIFO [SPIN_MS] [SLEEP_MS]", argc, argv);
	if (wl_argc < 3) {
		fprintf(stderr, "usage: handoff reader|waker FIFO [SPIN_MS] [SLEEP_MS]\n");
		return 2;
	}
	role = wl_argv[1];
	path = wl_argv[2];
	if (strcmp(role, "waker") == 0)
		return waker_main(path, wl_arg(3, 150, 1, 10000), wl_arg(4, 4000, 0, 60000));
	if (strcmp(role, "reader") != 0) {
		fprintf(stderr, "handoff: role '%s': want reader or waker\n", role);
		return 2;
	}
	pin_cpu0();
	wl_log("reader %d", (int)wl_gettid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		wl_die(path, errno);
	wait_for_byte(fd);
	close(fd);
	return 0;
}
