// SPDX-License-Identifier: GPL-2.0
/*
 * chain [MS=150]
 *
 * A two-link wait chain. Thread "holder" takes a mutex and then blocks in
 * read() on a pipe (hold_and_read()); thread "writer" sleeps MS ms and then
 * writes to the pipe (late_write()); thread "waiter" blocks on the mutex in
 * wait_behind_holder(). Known cause: the waiter's futex outlier of ~MS waits
 * on holder (blocked in read, depth 1), which waits on writer (in nanosleep,
 * depth 2).
 * WL_LOG lines: "pid P", "tid holder T", "tid writer T", "tid waiter T",
 * "lock TID START END".
 */
#include "wl_common.h"
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t ready;
static int fds[2];
static long delay_ms;

static __attribute__((noinline)) void hold_and_read(void)
{
	char c;

	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&ready);
	if (read(fds[0], &c, 1) != 1)
		wl_die("read", errno);
	pthread_mutex_unlock(&lock);
}

static void *holder_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "holder");
	wl_log("tid holder %d", (int)wl_gettid());
	hold_and_read();
	return NULL;
}

static __attribute__((noinline)) void late_write(long ms)
{
	char c = 'x';

	wl_nanosleep_ms(ms);
	if (write(fds[1], &c, 1) != 1)
		wl_die("write", errno);
}

static void *writer_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	wl_log("tid writer %d", (int)wl_gettid());
	pthread_barrier_wait(&ready);
	late_write(delay_ms);
	return NULL;
}

static __attribute__((noinline)) void wait_behind_holder(void)
{
	uint64_t t0 = wl_now_ns(), t1;

	pthread_mutex_lock(&lock);
	t1 = wl_now_ns();
	pthread_mutex_unlock(&lock);
	wl_log("lock %d %llu %llu", (int)wl_gettid(), (unsigned long long)t0,
	       (unsigned long long)t1);
	wl_say("waited %.3f ms behind holder", (double)(t1 - t0) / 1e6);
}

static void *waiter_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	wl_log("tid waiter %d", (int)wl_gettid());
	pthread_barrier_wait(&ready);
	wait_behind_holder();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w, x;
	int err;

	wl_init("chain", "[MS=150]", argc, argv);
	delay_ms = wl_arg(1, 150, 0, 3600000);
	if (pipe(fds) != 0)
		wl_die("pipe", errno);
	pthread_barrier_init(&ready, NULL, 3);
	if ((err = pthread_create(&h, NULL, holder_main, NULL)) ||
	    (err = pthread_create(&x, NULL, writer_main, NULL)) ||
	    (err = pthread_create(&w, NULL, waiter_main, NULL)))
		wl_die("pthread_create", err);
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	pthread_join(x, NULL);
	return 0;
}
