// SPDX-License-Identifier: GPL-2.0
/*
 * latsnap-demo - a small "service" that is sometimes slow, each time for a different reason:
 * a lock held too long by another thread, a slow producer on a pipe, an fsync of freshly written
 * data, and a sleep. `make demo` runs it under latsnap record.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *cache_rebuilder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "rebuilder");
	pthread_mutex_lock(&cache_lock);
	sleep_ms(120); /* rebuilding the cache under the lock */
	pthread_mutex_unlock(&cache_lock);
	return NULL;
}

static __attribute__((noinline)) void lookup_cache(void)
{
	pthread_t rebuilder;

	pthread_create(&rebuilder, NULL, cache_rebuilder, NULL);
	sleep_ms(10);
	pthread_mutex_lock(&cache_lock); /* waits for the rebuilder */
	pthread_mutex_unlock(&cache_lock);
	pthread_join(rebuilder, NULL);
}

static __attribute__((noinline)) void read_from_producer(void)
{
	int fds[2];
	char byte;
	pid_t pid;

	if (pipe(fds)) {
		perror("latsnap-demo: pipe");
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		sleep_ms(90); /* a slow producer */
		if (write(fds[1], "x", 1) != 1) {
			_exit(1);
		}
		_exit(0);
	}
	if (read(fds[0], &byte, 1) != 1) {
		perror("latsnap-demo: read");
	}
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

static __attribute__((noinline)) void save_state(void)
{
	char path[] = "/tmp/latsnap-demo-XXXXXX";
	static char block[1 << 20];
	int fd = mkstemp(path), i;

	if (fd < 0) {
		perror("latsnap-demo: mkstemp");
		return;
	}
	memset(block, 'x', sizeof(block));
	for (i = 0; i < 64; i++) {
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
			break;
		}
	}
	fsync(fd); /* 64 MiB to disk */
	close(fd);
	unlink(path);
}

static __attribute__((noinline)) void take_a_nap(void)
{
	sleep_ms(80);
}

int main(void)
{
	fprintf(stderr, "latsnap-demo: lock wait, pipe wait, fsync, sleep\n");
	lookup_cache();
	read_from_producer();
	save_state();
	take_a_nap();
	return 0;
}
