// SPDX-License-Identifier: GPL-2.0
/*
 * evloop [N [SLOW_MS [GAP_MS]]]   (default: 20 300 10)
 *
 * An event-driven server, its backend and its client, for `latsnap record --request` keyed by an
 * object: one thread, "evloop", serves N overlapping requests through epoll, each a struct req
 * that begins at req_begin(req) and ends at req_end(req) (noinline: probe them with
 * uprobe:PATH:req_begin=arg1 and uprobe:PATH:req_end=arg1).
 *
 * The client (a child process, "evclient") opens N connections to the loop, GAP_MS apart, and
 * sends "ID\n" on each (IDs count from 0); then reads every answer. For each, the loop begins a
 * request, connects to the backend (its connect() right after req_begin), sends "ID DELAY\n",
 * and when the backend answers, answers the client and ends the request. The backend (a child
 * process, "evbackend") serves each connection in a thread of its own, "evbk", which sleeps
 * DELAY ms in one nanosleep (glibc: clock_nanosleep) and then answers: DELAY is SLOW_MS for the
 * even IDs, 1 ms for the odd ones. The loop itself never blocks for one request: it waits in
 * epoll_wait for any of them.
 *
 * Known cause of each slow request: its own backend thread's sleep of SLOW_MS. With
 * `-t 100ms`, latsnap should report one request outlier per even ID (N/2 rounded up), each
 * naming its own evbk thread (the one logged with its ID) and that thread's clock_nanosleep, and
 * no outlier of the loop's thread.
 *
 * WL_LOG lines: "pid P" (each process), "tid evloop T", "backend_pid P", "client_pid P",
 * "req ID 0xKEY START_NS END_NS" per request (KEY: its struct req, never reused; times read
 * before req_begin() and after req_end()), "backend ID TID" per request (the evbk thread that
 * served it), "fn req_begin 0xADDR", "fn req_end 0xADDR". Exit status 0; 1 when a set-up
 * failed or a child did not exit 0.
 */
#include "wl_common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define MAX_REQS 256

struct req {
	long id;
	int cfd; /* the client's connection */
	int bfd; /* the backend's */
	uint64_t start_ns;
	char buf[64];
};

static long nr_reqs, slow_ms, gap_ms;

/* The request probes' targets: the loop calls them at each request's start and end. */
__attribute__((noinline)) void req_begin(struct req *r)
{
	__asm__ volatile("" : : "r"(r) : "memory");
}

__attribute__((noinline)) void req_end(struct req *r)
{
	__asm__ volatile("" : : "r"(r) : "memory");
}

static int listen_any(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, MAX_REQS) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		wl_die("listen", errno);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_to(uint16_t port, int flags)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);

	if (fd < 0) {
		wl_die("socket", errno);
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) {
		wl_die("connect", errno);
	}
	return fd;
}

/* A backend thread: one request, "ID DELAY\n", answered after DELAY ms. */
static void *backend_serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[64];
	long id = -1, delay = 0;
	ssize_t n;

	wl_set_comm("evbk");
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		sscanf(buf, "%ld %ld", &id, &delay);
	}
	wl_log("backend %ld %d", id, (int)wl_gettid());
	wl_nanosleep_ms(delay);
	n = snprintf(buf, sizeof(buf), "ok %ld\n", id);
	if (write(fd, buf, (size_t)n) != n) {
		wl_die("backend write", errno);
	}
	close(fd);
	return NULL;
}

static void backend(int lfd)
{
	pthread_t t;
	long i;
	int fd;

	wl_set_comm("evbackend");
	for (i = 0; i < nr_reqs; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			wl_die("backend accept", errno);
		}
		wl_spawn(&t, backend_serve, (void *)(intptr_t)fd, "backend thread");
		pthread_detach(t);
	}
	/* The last threads answer before the process goes. */
	wl_nanosleep_ms(slow_ms + 200);
	_exit(0);
}

static void client(uint16_t port)
{
	int fds[MAX_REQS];
	char buf[64];
	long i;
	int n;

	wl_set_comm("evclient");
	for (i = 0; i < nr_reqs; i++) {
		fds[i] = connect_to(port, 0);
		n = snprintf(buf, sizeof(buf), "%ld\n", i);
		if (write(fds[i], buf, (size_t)n) != n) {
			wl_die("client write", errno);
		}
		wl_nanosleep_ms(gap_ms);
	}
	for (i = 0; i < nr_reqs; i++) {
		if (read(fds[i], buf, sizeof(buf)) <= 0) {
			wl_die("client read", EPROTO);
		}
		close(fds[i]);
	}
	_exit(0);
}

static void watch(int ep, int fd, uint32_t events, void *ptr, int op)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	if (epoll_ctl(ep, op, fd, &ev)) {
		wl_die("epoll_ctl", errno);
	}
}

/* A client's request line came on @r's connection: it begins, and goes to the backend. */
static void on_client(int ep, struct req *r, uint16_t bport)
{
	ssize_t n = read(r->cfd, r->buf, sizeof(r->buf) - 1);

	if (n <= 0) {
		wl_die("loop read", n ? errno : EPROTO);
	}
	r->buf[n] = '\0';
	r->id = strtol(r->buf, NULL, 10);
	epoll_ctl(ep, EPOLL_CTL_DEL, r->cfd, NULL);
	r->start_ns = wl_now_ns();
	req_begin(r);
	r->bfd = connect_to(bport, SOCK_NONBLOCK);
	watch(ep, r->bfd, EPOLLOUT, r, EPOLL_CTL_ADD);
}

/* @r's backend connection is ready: to send the request, or with its answer. */
static int on_backend(int ep, struct req *r, uint32_t events)
{
	char buf[64];
	ssize_t n;

	if (events & EPOLLOUT) {
		n = snprintf(buf, sizeof(buf), "%ld %ld\n", r->id, r->id % 2 ? 1 : slow_ms);
		if (write(r->bfd, buf, (size_t)n) != n) {
			wl_die("loop write", errno);
		}
		watch(ep, r->bfd, EPOLLIN, r, EPOLL_CTL_MOD);
		return 0;
	}
	n = read(r->bfd, buf, sizeof(buf));
	if (n <= 0 || write(r->cfd, buf, (size_t)n) != n) {
		wl_die("loop answer", n < 0 ? errno : EPROTO);
	}
	req_end(r);
	wl_log("req %ld %p %llu %llu", r->id, (void *)r, (unsigned long long)r->start_ns,
	       (unsigned long long)wl_now_ns());
	close(r->bfd);
	close(r->cfd);
	return 1;
}

int main(int argc, char **argv)
{
	static struct req lfd_tag, reqs[MAX_REQS];
	struct epoll_event evs[16];
	uint16_t bport, lport;
	int ep, lfd, bfd, i, n, status, failed = 0;
	long accepted = 0, done = 0;
	pid_t bpid, cpid;

	wl_init("evloop", "[N [SLOW_MS [GAP_MS]]]", argc, argv);
	nr_reqs = wl_arg(1, 20, 1, MAX_REQS);
	slow_ms = wl_arg(2, 300, 0, 60000);
	gap_ms = wl_arg(3, 10, 0, 10000);
	wl_log_fn(req_begin);
	wl_log_fn(req_end);
	bfd = listen_any(&bport);
	bpid = fork();
	if (bpid < 0) {
		wl_die("fork", errno);
	}
	if (!bpid) {
		backend(bfd);
	}
	close(bfd);
	wl_log("backend_pid %d", (int)bpid);
	lfd = listen_any(&lport);
	cpid = fork();
	if (cpid < 0) {
		wl_die("fork", errno);
	}
	if (!cpid) {
		client(lport);
	}
	wl_log("client_pid %d", (int)cpid);
	wl_role("evloop");
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		wl_die("epoll_create1", errno);
	}
	watch(ep, lfd, EPOLLIN, &lfd_tag, EPOLL_CTL_ADD);
	while (done < nr_reqs) {
		n = epoll_wait(ep, evs, 16, -1);
		if (n < 0 && errno != EINTR) {
			wl_die("epoll_wait", errno);
		}
		for (i = 0; i < n; i++) {
			struct req *r = evs[i].data.ptr;

			if (r == &lfd_tag) {
				r = &reqs[accepted++ % MAX_REQS];
				r->cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
				if (r->cfd < 0) {
					wl_die("accept", errno);
				}
				watch(ep, r->cfd, EPOLLIN, r, EPOLL_CTL_ADD);
			} else if (r->start_ns) {
				/* Begun: its client's connection is no longer watched. */
				done += on_backend(ep, r, evs[i].events);
			} else {
				on_client(ep, r, bport);
			}
		}
	}
	for (i = 0; i < 2; i++) {
		pid_t pid = wait(&status);

		if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			failed = 1;
		}
	}
	return failed;
}
