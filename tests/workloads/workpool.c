// SPDX-License-Identifier: GPL-2.0
/*
 * workpool [WORKERS=2] [JOBS=4] [GAP_MS=250] [LOCK_MS=120]
 *
 * A server's shape: WORKERS threads "wp_worker" wait on a condition variable for jobs in
 * wait_for_job(), and a thread "wp_reader" reads a pipe for input in wait_for_input(). The main
 * thread posts JOBS jobs, one every GAP_MS (paced with poll(), on the idle list), and writes a
 * line to the pipe with each. A job is a pthread mutex the main thread holds for LOCK_MS when it
 * posts it: the worker that takes the job waits for it in take_resource().
 * Known causes: the workers' condition-variable waits and the reader's pipe reads are waiting
 * for work (idle); each job's mutex wait (~LOCK_MS, "Userspace lock contention") is latency.
 * WL_LOG lines: "pid P", "tid wp_worker T", "tid wp_reader T", "lock TID START END" per job,
 * "idle TID START END" per condition-variable wait and per pipe read.
 */
#include "wl_common.h"
#include <poll.h>
#include <pthread.h>

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t resource = PTHREAD_MUTEX_INITIALIZER;
static long pending, done;
static int input[2];

static __attribute__((noinline)) int wait_for_job(void)
{
	uint64_t t0, t1;
	int got;

	pthread_mutex_lock(&queue_lock);
	while (!pending && !done) {
		t0 = wl_now_ns();
		pthread_cond_wait(&queue_cond, &queue_lock);
		t1 = wl_now_ns();
		wl_log_span("idle", t0, t1);
	}
	got = pending > 0;
	if (got) {
		pending--;
	}
	pthread_mutex_unlock(&queue_lock);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
	return got;
}

static __attribute__((noinline)) void take_resource(void)
{
	uint64_t ns = wl_timed_lock(&resource);

	wl_say("waited %.3f ms for the resource", (double)ns / 1e6);
	__asm__ volatile("" ::: "memory");
}

static void *worker_main(void *arg)
{
	(void)arg;
	wl_role("wp_worker");
	while (wait_for_job()) {
		take_resource();
	}
	return NULL;
}

static __attribute__((noinline)) ssize_t wait_for_input(char *buf, size_t size)
{
	uint64_t t0 = wl_now_ns(), t1;
	ssize_t n = read(input[0], buf, size);

	t1 = wl_now_ns();
	wl_log_span("idle", t0, t1);
	__asm__ volatile("" ::: "memory");
	return n;
}

static void *reader_main(void *arg)
{
	char buf[64];

	(void)arg;
	wl_role("wp_reader");
	while (wait_for_input(buf, sizeof(buf)) > 0) {
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long workers, jobs, gap, lock_ms, i;
	pthread_t reader, *pool;

	wl_init_knobs("workpool", argc, argv, WL_COUNT("WORKERS", workers, 2),
		      WL_COUNT("JOBS", jobs, 4), WL_MS("GAP_MS", gap, 250),
		      WL_MS("LOCK_MS", lock_ms, 120));
	if (pipe(input)) {
		wl_die("pipe", errno);
	}
	pool = wl_spawn_all(workers, worker_main);
	wl_spawn(&reader, reader_main, NULL, "pthread_create");
	for (i = 0; i < jobs; i++) {
		poll(NULL, 0, (int)gap);
		pthread_mutex_lock(&resource);
		pthread_mutex_lock(&queue_lock);
		pending++;
		pthread_cond_signal(&queue_cond);
		pthread_mutex_unlock(&queue_lock);
		if (write(input[1], "job\n", 4) != 4) {
			wl_die("write", errno);
		}
		poll(NULL, 0, (int)lock_ms);
		pthread_mutex_unlock(&resource);
	}
	poll(NULL, 0, (int)gap);
	pthread_mutex_lock(&queue_lock);
	done = 1;
	pthread_cond_broadcast(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
	close(input[1]);
	wl_join_all(pool, workers);
	pthread_join(reader, NULL);
	return 0;
}
