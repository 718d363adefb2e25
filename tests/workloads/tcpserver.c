// SPDX-License-Identifier: GPL-2.0
/*
 * tcpserver [MS=100] [SLEEP=0]
 *
 * A one-byte request/response server on loopback TCP, named "srvhog": for each request byte it
 * computes for MS ms on the CPU in compute_reply() (SLEEP=0) or sleeps MS ms in nanosleep in
 * sleep_before_reply() (SLEEP=1), then answers one byte. It serves connections one after the
 * other until killed. Known cause, seen from a client (tcpclient): each read of the reply waits
 * ~MS for srvhog, which ran on CPU (compute) or slept in nanosleep (sleep) meanwhile.
 * WL_LOG lines: "pid P", "port N" (once listening), "served TID START END" per request.
 */
#include "wl_common.h"
#include <netinet/in.h>
#include <sys/socket.h>

static volatile uint64_t sink;

static __attribute__((noinline)) void compute_reply(long ms)
{
	uint64_t end = wl_now_ns() + (uint64_t)ms * 1000000, x = 1;

	while (wl_now_ns() < end) {
		for (int i = 0; i < 1000; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		}
	}
	sink = x;
}

static __attribute__((noinline)) void sleep_before_reply(long ms)
{
	wl_nanosleep_ms(ms);
}

static void serve(int conn, long ms, long sleep)
{
	char c;
	uint64_t t0;

	while (read(conn, &c, 1) == 1) {
		t0 = wl_now_ns();
		if (sleep) {
			sleep_before_reply(ms);
		} else {
			compute_reply(ms);
		}
		wl_log_span("served", t0, wl_now_ns());
		if (write(conn, &c, 1) != 1) {
			break;
		}
	}
	close(conn);
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	long ms, sleep;
	int fd, conn, one = 1;

	wl_init_knobs("tcpserver", argc, argv, WL_MS("MS", ms, 100),
		      WL_KNOB("SLEEP", sleep, 0, 0, 1));
	wl_set_comm("srvhog");
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		wl_die("socket", errno);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&addr, &len)) {
		wl_die("bind/listen", errno);
	}
	wl_log("port %d", ntohs(addr.sin_port));
	for (;;) {
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			wl_die("accept", errno);
		}
		setsockopt(conn, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
		serve(conn, ms, sleep);
	}
}
