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
	wl_role("holder");
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
	wl_role("writer");
	pthread_barrier_wait(&ready);
	late_write(delay_ms);
	return NULL;
}

static __attribute__((noinline)) void wait_behind_holder(void)
{
	uint64_t ns = wl_timed_lock(&lock);

	wl_say("waited %.3f ms behind holder", (double)ns / 1e6);
}

static void *waiter_main(void *arg)
{
	(void)arg;
	wl_role("waiter");
	pthread_barrier_wait(&ready);
	wait_behind_holder();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w, x;

	wl_init_knobs("chain", argc, argv, WL_MS("MS", delay_ms, 150));
	if (pipe(fds) != 0)
		wl_die("pipe", errno);
	pthread_barrier_init(&ready, NULL, 3);
	wl_spawn(&h, holder_main, NULL, "pthread_create");
	wl_spawn(&x, writer_main, NULL, "pthread_create");
	wl_spawn(&w, waiter_main, NULL, "pthread_create");
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	pthread_join(x, NULL);
	return 0;
}
