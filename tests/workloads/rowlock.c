// SPDX-License-Identifier: GPL-2.0
/*
 * rowlock [CONNS=2]
 *
 * A database server's shape, for the idle policy's work context: it serves CONNS connections on
 * loopback TCP (its port in WL_LOG), a thread "rl_conn" each, then exits. A connection sends
 * lines; each is a statement, answered "ok":
 *   LOCK MS   takes the row lock, holds it MS ms (in sql_sleep(), a timed condition wait that
 *             runs to its timeout, as a SLEEP() does), releases it;
 *   UPDATE    takes the row lock: waits in row_lock_wait() (a condition variable, as InnoDB's
 *             lock wait) while another statement holds it;
 *   SLEEP MS  sql_sleep(MS);
 *   QUIT      ends the connection.
 * Every statement hands a task to the pool thread "rl_pool", which waits for tasks on a
 * condition variable in wait_for_task(). A thread "rl_timer" wakes every 300 ms from a timed
 * condition wait in wait_for_tick(), as a server's housekeeping does. The main thread waits in
 * accept() for connections, then for the connection threads in pthread_join().
 * Known kinds: inside a statement (work) the row-lock wait and both sleeps are latency ("lock",
 * "nap" spans); a connection waiting for its next statement (read), the pool waiting for a task,
 * the timer between ticks, the main thread in accept() and join are waiting for work ("idle").
 * WL_LOG lines: "pid P", "port N", "tid ROLE T", "lock|nap|idle TID START END".
 * The client: rowclient.
 */
#include <netinet/in.h>
#include <sys/socket.h>

#include "wl_common.h"

static pthread_mutex_t row_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t row_cond = PTHREAD_COND_INITIALIZER;
static int row_locked;

static pthread_mutex_t task_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t task_cond = PTHREAD_COND_INITIALIZER;
static long tasks, tasks_done;
static volatile int stopping;

static uint64_t deadline_ts(long ms, struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
	return 0;
}

/* A SLEEP(): a timed wait nobody ends. */
static __attribute__((noinline)) void sql_sleep(long ms)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	uint64_t t0 = wl_now_ns();
	struct timespec ts;

	deadline_ts(ms, &ts);
	pthread_mutex_lock(&m);
	while (pthread_cond_timedwait(&c, &m, &ts) != ETIMEDOUT) {
	}
	pthread_mutex_unlock(&m);
	wl_log_span("nap", t0, wl_now_ns());
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void row_lock_wait(void)
{
	uint64_t t0 = wl_now_ns();
	int waited = 0;

	pthread_mutex_lock(&row_mutex);
	while (row_locked) {
		waited = 1;
		pthread_cond_wait(&row_cond, &row_mutex);
	}
	row_locked = 1;
	pthread_mutex_unlock(&row_mutex);
	if (waited) {
		wl_log_span("lock", t0, wl_now_ns());
	}
	__asm__ volatile("" ::: "memory");
}

static void row_unlock(void)
{
	pthread_mutex_lock(&row_mutex);
	row_locked = 0;
	pthread_cond_broadcast(&row_cond);
	pthread_mutex_unlock(&row_mutex);
}

static void post_task(void)
{
	pthread_mutex_lock(&task_mutex);
	tasks++;
	pthread_cond_signal(&task_cond);
	pthread_mutex_unlock(&task_mutex);
}

static __attribute__((noinline)) int wait_for_task(void)
{
	uint64_t t0 = wl_now_ns();
	int got;

	pthread_mutex_lock(&task_mutex);
	while (tasks == tasks_done && !stopping) {
		pthread_cond_wait(&task_cond, &task_mutex);
	}
	got = tasks > tasks_done;
	if (got) {
		tasks_done++;
	}
	pthread_mutex_unlock(&task_mutex);
	wl_log_span("idle", t0, wl_now_ns());
	__asm__ volatile("" ::: "memory");
	return got;
}

static void *pool_main(void *arg)
{
	(void)arg;
	wl_role("rl_pool");
	while (wait_for_task()) {
		/* the task: a flush of the statement's log, short */
	}
	return NULL;
}

static __attribute__((noinline)) void wait_for_tick(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	uint64_t t0 = wl_now_ns();
	struct timespec ts;

	deadline_ts(300, &ts);
	pthread_mutex_lock(&m);
	while (!stopping && pthread_cond_timedwait(&c, &m, &ts) != ETIMEDOUT) {
	}
	pthread_mutex_unlock(&m);
	wl_log_span("idle", t0, wl_now_ns());
	__asm__ volatile("" ::: "memory");
}

static void *timer_main(void *arg)
{
	(void)arg;
	wl_role("rl_timer");
	while (!stopping) {
		wait_for_tick();
	}
	return NULL;
}

/* The next statement of connection @fd into @line; 0 at its end. */
static __attribute__((noinline)) int wait_for_statement(int fd, char *line, size_t size)
{
	uint64_t t0 = wl_now_ns();
	size_t n = 0;
	ssize_t r;
	char c;

	while (n + 1 < size) {
		r = recv(fd, &c, 1, 0);
		if (r <= 0) {
			return 0;
		}
		if (n == 0) {
			wl_log_span("idle", t0, wl_now_ns());
		}
		if (c == '\n') {
			break;
		}
		line[n++] = c;
	}
	line[n] = '\0';
	__asm__ volatile("" ::: "memory");
	return 1;
}

static void *conn_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char line[64];
	long ms;

	wl_role("rl_conn");
	while (wait_for_statement(fd, line, sizeof(line))) {
		if (sscanf(line, "LOCK %ld", &ms) == 1) {
			row_lock_wait();
			sql_sleep(ms);
			row_unlock();
		} else if (!strcmp(line, "UPDATE")) {
			row_lock_wait();
			row_unlock();
		} else if (sscanf(line, "SLEEP %ld", &ms) == 1) {
			sql_sleep(ms);
		} else if (!strcmp(line, "QUIT")) {
			break;
		}
		post_task();
		if (send(fd, "ok\n", 3, MSG_NOSIGNAL) != 3) {
			break;
		}
	}
	close(fd);
	return NULL;
}

static __attribute__((noinline)) int wait_for_connection(int lfd)
{
	uint64_t t0 = wl_now_ns();
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	wl_log_span("idle", t0, wl_now_ns());
	__asm__ volatile("" ::: "memory");
	return fd;
}

static __attribute__((noinline)) void wait_for_connections(pthread_t *th, long n)
{
	uint64_t t0 = wl_now_ns();
	long i;

	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
	}
	wl_log_span("idle", t0, wl_now_ns());
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	pthread_t pool, timer, *conns;
	long n, i;
	int lfd, fd;

	wl_init("rowlock", "[CONNS=2]", argc, argv);
	n = wl_arg(1, 2, 1, 64);
	conns = calloc((size_t)n, sizeof(*conns));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!conns || lfd < 0) {
		wl_die("socket", errno);
	}
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 16) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &len)) {
		wl_die("listen", errno);
	}
	wl_spawn(&pool, pool_main, NULL, "pthread_create");
	wl_spawn(&timer, timer_main, NULL, "pthread_create");
	wl_log("port %d", ntohs(addr.sin_port));
	for (i = 0; i < n; i++) {
		fd = wait_for_connection(lfd);
		if (fd < 0) {
			wl_die("accept", errno);
		}
		wl_spawn(&conns[i], conn_main, (void *)(intptr_t)fd, "pthread_create");
	}
	wait_for_connections(conns, n);
	pthread_mutex_lock(&task_mutex);
	stopping = 1;
	pthread_cond_broadcast(&task_cond);
	pthread_mutex_unlock(&task_mutex);
	pthread_join(pool, NULL);
	pthread_join(timer, NULL);
	return 0;
}
