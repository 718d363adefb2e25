// SPDX-License-Identifier: GPL-2.0
/*
 * latchwait [N=6] [TICK_MS=80] [GAP_MS=250] [REPLY_MS=20]
 *
 * A helper woken at a latch by a statement, going back to wait for its next round elsewhere
 * before the statement's reply: MariaDB's page cleaner and InnoDB's own futex latches, in small.
 * A connection thread (lw_conn) serves N one-byte requests read from a socket pair: it takes the
 * latch, waits (1 ms naps) until the helper blocks on it, lets it go (waking the helper: its
 * futex wait value is the latch word, not 2, so no lock for all latsnap can tell) and replies
 * REPLY_MS later (20). The helper (lw_cleaner) waits TICK_MS for a tick nobody gives (a timed futex
 * wait that runs to its timeout, in wait_for_tick()), takes and drops the latch, and waits again.
 * Its tick after each hand-over begins inside the statement and outlives its reply (with
 * REPLY_MS above TICK_MS, it ends by its timeout before the reply). A client
 * thread (lw_client) sends each request GAP_MS after the last reply (a timed wait, too).
 * Known cause: the helper's ticks are waits for nothing, idle; none is latency.
 * WL_LOG lines: "pid P", "tid lw_conn T", "tid lw_cleaner T", "tid lw_client T",
 * "tick TID START END" per tick of the helper, "handed TID START" when the statement let the
 * helper have the latch, "reply TID START END" per request as the client saw it.
 */
#include "wl_common.h"
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/socket.h>

#define LATCH_HELD 0x80000000u
#define LATCH_WAITER 1u

static _Atomic uint32_t latch;
static _Atomic uint32_t never; /* the tick nobody gives */
static _Atomic int done;
static long nr_requests, tick_ms, gap_ms, reply_ms;
static int conn_fd, client_fd;

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

/* As InnoDB's srw_mutex: waiters sleep on the latch word with the value they saw (not 2). */
static void latch_lock(void)
{
	uint32_t seen = 0;

	if (atomic_compare_exchange_strong(&latch, &seen, LATCH_HELD)) {
		return;
	}
	for (;;) {
		seen = atomic_load(&latch);
		if (!seen) {
			if (atomic_compare_exchange_strong(&latch, &seen,
							   LATCH_HELD | LATCH_WAITER)) {
				return;
			}
			continue;
		}
		if (!(seen & LATCH_WAITER) &&
		    !atomic_compare_exchange_strong(&latch, &seen, seen | LATCH_WAITER)) {
			continue;
		}
		futex(&latch, FUTEX_WAIT, LATCH_HELD | LATCH_WAITER, NULL);
	}
}

static void latch_unlock(void)
{
	if (atomic_exchange(&latch, 0) & LATCH_WAITER) {
		futex(&latch, FUTEX_WAKE, 1, NULL);
	}
}

static __attribute__((noinline)) void wait_for_tick(void)
{
	struct timespec ts = wl_ms_to_ts(tick_ms);
	uint64_t t0 = wl_now_ns();

	futex(&never, FUTEX_WAIT, 0, &ts);
	wl_log_span("tick", t0, wl_now_ns());
}

static void *cleaner(void *arg)
{
	(void)arg;
	wl_role("lw_cleaner");
	while (!atomic_load(&done)) {
		wait_for_tick();
		latch_lock();
		latch_unlock();
	}
	return NULL;
}

/* One statement: the helper gets the latch from it, and its reply comes reply_ms later. */
static void serve(void)
{
	int naps;

	latch_lock();
	for (naps = 0;
	     naps < 4 * (int)tick_ms && atomic_load(&latch) != (LATCH_HELD | LATCH_WAITER);
	     naps++) {
		wl_nanosleep_ms(1);
	}
	wl_log("handed %d %llu", (int)wl_gettid(), (unsigned long long)wl_now_ns());
	latch_unlock();
	wl_nanosleep_ms(reply_ms);
}

static void *conn(void *arg)
{
	char c;

	(void)arg;
	wl_role("lw_conn");
	while (read(conn_fd, &c, 1) == 1) {
		serve();
		if (write(conn_fd, &c, 1) != 1) {
			wl_die("write", errno);
		}
	}
	return NULL;
}

static void *client(void *arg)
{
	struct timespec gap = wl_ms_to_ts(gap_ms);
	uint64_t t0;
	long i;
	char c = 'r';

	(void)arg;
	wl_role("lw_client");
	for (i = 0; i < nr_requests; i++) {
		futex(&never, FUTEX_WAIT, 0, &gap);
		t0 = wl_now_ns();
		if (write(client_fd, &c, 1) != 1 || read(client_fd, &c, 1) != 1) {
			wl_die("request", errno ? errno : EPIPE);
		}
		wl_log_span("reply", t0, wl_now_ns());
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t conn_th, cleaner_th, client_th;
	int sv[2];

	wl_init("latchwait", "[N] [TICK_MS] [GAP_MS] [REPLY_MS]", argc, argv);
	nr_requests = wl_arg(1, 6, 1, 1000);
	tick_ms = wl_arg(2, 80, 10, 10000);
	gap_ms = wl_arg(3, 250, 0, 10000);
	reply_ms = wl_arg(4, 20, 0, 10000);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		wl_die("socketpair", errno);
	}
	conn_fd = sv[0];
	client_fd = sv[1];
	wl_spawn(&cleaner_th, cleaner, NULL, "pthread_create");
	wl_spawn(&conn_th, conn, NULL, "pthread_create");
	wl_spawn(&client_th, client, NULL, "pthread_create");
	pthread_join(client_th, NULL);
	atomic_store(&done, 1);
	shutdown(client_fd, SHUT_WR);
	pthread_join(conn_th, NULL);
	pthread_join(cleaner_th, NULL);
	return 0;
}
