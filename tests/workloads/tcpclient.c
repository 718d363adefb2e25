// SPDX-License-Identifier: GPL-2.0
/*
 * tcpclient PORT [N=3] [GAP_MS=50]
 *
 * Sends N one-byte requests to a tcpserver on loopback port PORT, each answered after the
 * server's work; waits in wait_for_reply() (read) for each reply, GAP_MS ms apart. Known cause:
 * each read is an outlier of about the server's MS, and its wait chain leads to srvhog.
 * WL_LOG lines: "pid P", "reply TID START END" per request.
 */
#include "wl_common.h"
#include <netinet/in.h>
#include <sys/socket.h>

static __attribute__((noinline)) void wait_for_reply(int fd)
{
	uint64_t t0 = wl_now_ns(), t1;
	char c;

	if (read(fd, &c, 1) != 1) {
		wl_die("read", errno ? errno : EPIPE);
	}
	t1 = wl_now_ns();
	wl_log_span("reply", t0, t1);
	wl_say("reply after %.3f ms", (double)(t1 - t0) / 1e6);
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	long port, n, gap, i;
	int fd, one = 1;
	char c = 'q';

	wl_init("tcpclient", "PORT [N=3] [GAP_MS=50]", argc, argv);
	port = wl_arg(1, 0, 1, 65535);
	n = wl_arg(2, 3, 1, 100000);
	gap = wl_arg(3, 50, 0, 3600000);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		wl_die("socket", errno);
	}
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)port);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		wl_die("connect", errno);
	}
	setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	for (i = 0; i < n; i++) {
		if (write(fd, &c, 1) != 1) {
			wl_die("write", errno);
		}
		wait_for_reply(fd);
		wl_nanosleep_ms(gap);
	}
	close(fd);
	return 0;
}
