// SPDX-License-Identifier: GPL-2.0
/*
 * hostile [MS=100] [N=2]
 *
 * Threads whose names would forge latsnap's text output if printed raw (issue 51). The main
 * thread is named HOSTILE_MAIN (an ANSI colour, a newline that would start the line 'IL"}<');
 * a second thread HOSTILE_SECOND (a C1 CSI as UTF-8, a backslash before an 'n' that must not
 * read as an escaped newline, ';' that would split a folded stack, DEL, CR, a tab, a
 * right-to-left override). Both are well-formed UTF-8, which JSON holds exactly; a third thread
 * is named HOSTILE_BROKEN, bytes that are not UTF-8 at all (0xff 0xfe, a lone lead byte, a
 * surrogate, then a well-formed 4-byte sequence), which JSON can only hold as U+FFFD. All three
 * take N naps of MS ms in nap() (outliers: requested sleeps); then the second reads a timer of
 * MS ms N + 1 times in tick() (a stream it comes back to: idle waits) and writes to a pipe the
 * main thread has been reading all along (an outlier woken by the second thread, which is its
 * wait chain).
 * WL_LOG lines: "pid P", "tid main T", "tid second T", "tid broken T", "nap TID START_NS END_NS".
 */
#include "wl_common.h"
#include <sys/timerfd.h>

/* 13 bytes each: a comm holds 15. The test spells them the same way. */
#define HOSTILE_MAIN "\033[31mEV\nIL\"}<"
#define HOSTILE_SECOND "\xc2\x9bJ\\n;\x7f\r\t<\xe2\x80\xae"
/* 13 bytes, 6 ill-formed subparts: FF, FE, C3, ED, A0, 80. */
#define HOSTILE_BROKEN "\xff\xfeU8\xc3(\xed\xa0\x80\xf0\x9f\x98\x80"

static int fds[2];
static long nap_ms, naps;

static __attribute__((noinline)) void nap(long ms)
{
	wl_timed_nap(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

static __attribute__((noinline)) void tick(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) != sizeof(n)) {
		wl_die("read timerfd", errno);
	}
	__asm__ volatile("" ::: "memory");
}

static void *second_main(void *arg)
{
	struct itimerspec its = { .it_interval = wl_ms_to_ts(nap_ms),
				  .it_value = wl_ms_to_ts(nap_ms) };
	char c = 'x';
	long i;
	int fd;

	(void)arg;
	wl_set_comm(HOSTILE_SECOND);
	wl_log("tid second %d", (int)wl_gettid());
	for (i = 0; i < naps; i++) {
		nap(nap_ms);
	}
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) != 0) {
		wl_die("timerfd", errno);
	}
	for (i = 0; i <= naps; i++) {
		tick(fd);
	}
	close(fd);
	if (write(fds[1], &c, 1) != 1) {
		wl_die("write", errno);
	}
	return NULL;
}

static void *broken_main(void *arg)
{
	long i;

	(void)arg;
	wl_set_comm(HOSTILE_BROKEN);
	wl_log("tid broken %d", (int)wl_gettid());
	for (i = 0; i < naps; i++) {
		nap(nap_ms);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t, b;
	long i;
	char c;

	wl_init_knobs("hostile", argc, argv, WL_MS("MS", nap_ms, 100), WL_COUNT("N", naps, 2));
	if (pipe(fds) != 0) {
		wl_die("pipe", errno);
	}
	wl_set_comm(HOSTILE_MAIN);
	wl_log("tid main %d", (int)wl_gettid());
	wl_spawn(&t, second_main, NULL, "pthread_create");
	wl_spawn(&b, broken_main, NULL, "pthread_create");
	for (i = 0; i < naps; i++) {
		nap(nap_ms);
	}
	if (read(fds[0], &c, 1) != 1) {
		wl_die("read", errno);
	}
	pthread_join(t, NULL);
	pthread_join(b, NULL);
	return 0;
}
