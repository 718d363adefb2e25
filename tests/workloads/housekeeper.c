// SPDX-License-Identifier: GPL-2.0
/*
 * housekeeper [BATCH=0] [NAPS=3]
 *
 * A server's housekeeping threads, which wait to their own timeouts outside any unit of work
 * (issue 46: memcached's LRU maintainer): "hk_sleep" loops in usleep, backing off from 21 ms to
 * 200 ms (x1.5 a round); "hk_cond" waits on a condition variable nobody signals, to its 50 ms
 * timeout (pthread_cond_timedwait); "hk_poll" polls a pipe nobody writes, to its 60 ms timeout,
 * and "hk_epoll" the same in epoll_wait (70 ms).
 *
 * BATCH=0: a TCP server on 127.0.0.1, an ephemeral port (said on stderr and in WL_LOG), whose
 * main thread serves one connection at a time, one byte a request: 'f' is answered at once,
 * 's' after a usleep of 100 ms inside the unit of work (read the request, sleep, write the
 * reply: latency, asked for), 'q' ends it (exit 0).
 * BATCH=1: the same threads, no socket: a program that serves nothing, whose worker
 * "bn_worker" usleeps 100 ms NAPS times, then exits 0. Every sleep of it is latency.
 *
 * WL_LOG lines: "pid P", "tid NAME TID" per thread, "port N", "slow TID START END" per slow
 * request's sleep, "nap TID START END" per batch nap, "round NAME TID" per housekeeping round.
 */
#include "wl_common.h"
#include <stdbool.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

static int quiet_pipe[2];

static void name_thread(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	wl_log("tid %s %d", name, (int)wl_gettid());
}

/* memcached's lru_maintainer_thread: sleep, look around, sleep longer when nothing was to do. */
static void *sleep_keeper(void *arg)
{
	useconds_t us = 21000;

	(void)arg;
	name_thread("hk_sleep");
	for (;;) {
		usleep(us);
		wl_log("round hk_sleep %d", (int)wl_gettid());
		us = us * 3 / 2 > 200000 ? 200000 : us * 3 / 2;
	}
	return NULL;
}

static void *cond_keeper(void *arg)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
	struct timespec ts;

	(void)arg;
	name_thread("hk_cond");
	pthread_mutex_lock(&lock);
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&never, &lock, &ts);
	}
	return NULL;
}

static void *poll_keeper(void *arg)
{
	struct pollfd pfd = { .fd = quiet_pipe[0], .events = POLLIN };

	(void)arg;
	name_thread("hk_poll");
	for (;;) {
		poll(&pfd, 1, 60);
	}
	return NULL;
}

static void *epoll_keeper(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	(void)arg;
	name_thread("hk_epoll");
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, quiet_pipe[0], &ev)) {
		wl_die("epoll", errno);
	}
	for (;;) {
		epoll_wait(ep, &out, 1, 70);
	}
	return NULL;
}

/* The slow request's sleep, inside its unit of work: read, sleep, then the reply. */
static __attribute__((noinline)) void slow_reply(void)
{
	uint64_t t0 = wl_now_ns();

	usleep(100000);
	wl_log_span("slow", t0, wl_now_ns());
}

/* Serves @conn until it closes; false when it asked to quit. */
static bool serve(int conn)
{
	char c;

	while (read(conn, &c, 1) == 1) {
		if (c == 'q') {
			return false;
		}
		if (c == 's') {
			slow_reply();
		}
		if (write(conn, &c, 1) != 1) {
			break;
		}
	}
	return true;
}

static void run_server(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int fd, conn, one = 1;
	bool more = true;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		wl_die("socket", errno);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)&addr, &len)) {
		wl_die("bind/listen", errno);
	}
	fprintf(stderr, "housekeeper: port %d\n", ntohs(addr.sin_port));
	wl_log("port %d", ntohs(addr.sin_port));
	while (more) {
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			wl_die("accept", errno);
		}
		setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		more = serve(conn);
		close(conn);
	}
}

static long naps;

static void *batch_worker(void *arg)
{
	uint64_t t0;
	long i;

	(void)arg;
	name_thread("bn_worker");
	for (i = 0; i < naps; i++) {
		t0 = wl_now_ns();
		usleep(100000);
		wl_log_span("nap", t0, wl_now_ns());
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*keepers[])(void *) = { sleep_keeper, cond_keeper, poll_keeper, epoll_keeper };
	pthread_t t;
	long batch;
	size_t i;

	wl_init_knobs("housekeeper", argc, argv, WL_KNOB("BATCH", batch, 0, 0, 1),
		      WL_COUNT("NAPS", naps, 3));
	if (pipe2(quiet_pipe, O_CLOEXEC)) {
		wl_die("pipe", errno);
	}
	for (i = 0; i < sizeof(keepers) / sizeof(keepers[0]); i++) {
		if (pthread_create(&t, NULL, keepers[i], NULL)) {
			wl_die("pthread_create", 0);
		}
	}
	if (batch) {
		if (pthread_create(&t, NULL, batch_worker, NULL)) {
			wl_die("pthread_create", 0);
		}
		pthread_join(t, NULL);
	} else {
		run_server();
	}
	return 0;
}
