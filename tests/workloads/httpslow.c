// SPDX-License-Identifier: GPL-2.0
/*
 * httpslow serve PORT [SLOW_MS]             (default SLOW_MS 300)
 * httpslow client PORT [N [SLOW_EVERY [GAP_MS]]]   (default 60 6 5)
 *
 * An HTTP upstream that is slow for some requests, and a client that sends it overlapping
 * requests through a proxy (haproxy, nginx) in front of it, for `latsnap record --request` on
 * the proxy's event loop.
 *
 * serve: listens on 127.0.0.1:PORT; each connection is served by a thread of its own, "upstream",
 * which reads one request ("GET /slow/ID" or "GET /fast/ID"), sleeps SLOW_MS in one nanosleep
 * (glibc: clock_nanosleep) for /slow/, and answers 200 with "ok\n", then closes. Runs until
 * killed. Logs "upstream ID TID" per request.
 * client: N requests, each on its own connection from a thread of its own ("client"), GAP_MS
 * apart; request ID (from 0) asks for /slow/ID when ID % SLOW_EVERY == 0, else /fast/ID; each
 * reads its answer to the end. Logs "client ID START_NS END_NS CODE" per request (CODE the HTTP
 * status, 0 when none came). Exit status 0 when every answer was 200, 1 otherwise.
 *
 * Known cause of each slow request: its upstream thread's sleep of SLOW_MS (clock_nanosleep).
 */
#include "wl_common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define MAX_CLIENTS 1024

static long slow_ms, port, nr_reqs, slow_every;
static int failed;

static void *upstream(void *arg)
{
	static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
				     "Connection: close\r\n\r\nok\n";
	int fd = (int)(intptr_t)arg;
	char buf[2048], kind[8] = "";
	long id = -1;
	ssize_t n;

	wl_set_comm("upstream");
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		sscanf(buf, "GET /%4[a-z]/%ld", kind, &id);
	}
	wl_log("upstream %ld %d", id, (int)wl_gettid());
	if (!strcmp(kind, "slow")) {
		wl_nanosleep_ms(slow_ms);
	}
	if (write(fd, answer, sizeof(answer) - 1) < 0) {
		/* the proxy gave up: nothing to tell */
	}
	close(fd);
	return NULL;
}

static int serve(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, lfd, fd;
	pthread_t t;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 512)) {
		wl_die("listen", errno);
	}
	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			wl_die("accept", errno);
		}
		wl_spawn(&t, upstream, (void *)(intptr_t)fd, "upstream thread");
		pthread_detach(t);
	}
	return 0;
}

static void *one_request(void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	long id = (long)(intptr_t)arg;
	char buf[2048];
	uint64_t t0 = wl_now_ns();
	size_t got = 0;
	int fd, n, code = 0;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		wl_die("client connect", errno);
	}
	n = snprintf(buf, sizeof(buf),
		     "GET /%s/%ld HTTP/1.1\r\nHost: localhost\r\n"
		     "Connection: close\r\n\r\n",
		     id % slow_every ? "fast" : "slow", id);
	if (write(fd, buf, (size_t)n) != n) {
		wl_die("client write", errno);
	}
	while (got < sizeof(buf) - 1 && (n = (int)read(fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
	}
	buf[got] = '\0';
	sscanf(buf, "HTTP/1.%*d %d", &code);
	wl_log("client %ld %llu %llu %d", id, (unsigned long long)t0,
	       (unsigned long long)wl_now_ns(), code);
	if (code != 200) {
		failed = 1;
	}
	close(fd);
	return NULL;
}

static int client(void)
{
	static pthread_t th[MAX_CLIENTS];
	long i;

	wl_set_comm("client");
	for (i = 0; i < nr_reqs; i++) {
		wl_spawn(&th[i], one_request, (void *)(intptr_t)i, "client thread");
		wl_nanosleep_ms(wl_arg(5, 5, 0, 10000));
	}
	for (i = 0; i < nr_reqs; i++) {
		pthread_join(th[i], NULL);
	}
	return failed;
}

int main(int argc, char **argv)
{
	wl_init("httpslow", "serve PORT [SLOW_MS] | client PORT [N [SLOW_EVERY [GAP_MS]]]", argc,
		argv);
	if (wl_argc < 3) {
		fprintf(stderr, "usage: httpslow serve PORT [SLOW_MS] | client PORT [N [SLOW_EVERY "
				"[GAP_MS]]]\n");
		return 2;
	}
	port = wl_arg(2, 0, 1, 65535);
	if (!strcmp(wl_argv[1], "serve")) {
		slow_ms = wl_arg(3, 300, 0, 60000);
		return serve();
	}
	nr_reqs = wl_arg(3, 60, 1, MAX_CLIENTS);
	slow_every = wl_arg(4, 6, 1, MAX_CLIENTS);
	return client();
}
