// SPDX-License-Identifier: GPL-2.0
/*
 * rowclient PORT [HOLD_MS=700] [SLEEP_MS=300] [IDLE_MS=1200]
 *
 * Two sessions of rowlock on loopback PORT, as two database clients: A sends "LOCK HOLD_MS";
 * 100 ms later B sends "UPDATE", which waits in the server for A's row lock (~HOLD_MS - 100);
 * then A sends "SLEEP SLEEP_MS"; both stay connected and quiet for IDLE_MS, then send "QUIT".
 * WL_LOG lines: "pid P", "reply A|B START END" per statement.
 */
#include <netinet/in.h>
#include <sys/socket.h>

#include "wl_common.h"

static int connect_to(long port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		wl_die("socket", errno);
	}
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)port);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		wl_die("connect", errno);
	}
	return fd;
}

static void send_line(int fd, const char *line)
{
	size_t len = strlen(line);

	if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len) {
		wl_die("send", errno);
	}
}

static void wait_reply(int fd, const char *who, uint64_t t0)
{
	char buf[3];
	size_t n = 0;
	ssize_t r;

	while (n < sizeof(buf)) {
		r = recv(fd, buf + n, sizeof(buf) - n, 0);
		if (r <= 0) {
			wl_die("recv", r ? errno : EPIPE);
		}
		n += (size_t)r;
	}
	wl_log("reply %s %llu %llu", who, (unsigned long long)t0, (unsigned long long)wl_now_ns());
}

int main(int argc, char **argv)
{
	long port, hold, nap, idle;
	char line[64];
	uint64_t ta, tb;
	int a, b;

	wl_init("rowclient", "PORT [HOLD_MS=700] [SLEEP_MS=300] [IDLE_MS=1200]", argc, argv);
	port = wl_arg(1, 0, 1, 65535);
	hold = wl_arg(2, 700, 200, 60000);
	nap = wl_arg(3, 300, 0, 60000);
	idle = wl_arg(4, 1200, 0, 600000);
	a = connect_to(port);
	b = connect_to(port);
	wl_nanosleep_ms(100);
	snprintf(line, sizeof(line), "LOCK %ld\n", hold);
	ta = wl_now_ns();
	send_line(a, line);
	wl_nanosleep_ms(100);
	tb = wl_now_ns();
	send_line(b, "UPDATE\n");
	wait_reply(a, "A", ta);
	wait_reply(b, "B", tb);
	snprintf(line, sizeof(line), "SLEEP %ld\n", nap);
	ta = wl_now_ns();
	send_line(a, line);
	wait_reply(a, "A", ta);
	wl_nanosleep_ms(idle);
	send_line(a, "QUIT\n");
	send_line(b, "QUIT\n");
	close(a);
	close(b);
	return 0;
}
