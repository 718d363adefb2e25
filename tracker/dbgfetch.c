// SPDX-License-Identifier: GPL-2.0
/*
 * dbgfetch.c - debug info from debuginfod, fetched by a thread of its own (see dbgfetch.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "tracker/dbgfetch.h"

#define ID_MAX 64

enum state { QUEUED, FETCHING, FOUND, MISSING };

struct item {
	uint8_t id[ID_MAX];
	size_t len;
	enum state state;
	char *path; /* in libdebuginfod's cache, once FOUND */
	bool waited; /* someone waited for it already */
	struct item *next;
};

struct dbgfetch {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	pthread_t thread;
	bool started;
	bool stop;
	bool slow; /* a wait ran out, and no fetch ended since */
	uint64_t done; /* fetches ended */
	struct item *items; /* newest first */
	debuginfod_client *client;
};

/* libdebuginfod calls this while it transfers: a nonzero return ends the transfer. */
static int progress(debuginfod_client *c, long a, long b)
{
	struct dbgfetch *df = debuginfod_get_user_data(c);

	(void)a;
	(void)b;
	/* Read without the lock: a stale false costs one more call, about a second. */
	return __atomic_load_n(&df->stop, __ATOMIC_RELAXED);
}

static struct item *next_queued(struct dbgfetch *df)
{
	struct item *it, *oldest = NULL;

	for (it = df->items; it; it = it->next) {
		if (it->state == QUEUED) {
			oldest = it;
		}
	}
	return oldest;
}

static void *worker(void *arg)
{
	struct dbgfetch *df = arg;
	uint8_t id[ID_MAX];
	struct item *it;
	char *path;
	size_t len;
	int fd;

	pthread_mutex_lock(&df->lock);
	while (!df->stop) {
		it = next_queued(df);
		if (!it) {
			pthread_cond_wait(&df->cond, &df->lock);
			continue;
		}
		it->state = FETCHING;
		memcpy(id, it->id, it->len);
		len = it->len;
		pthread_mutex_unlock(&df->lock);
		path = NULL;
		fd = debuginfod_find_debuginfo(df->client, id, (int)len, &path);
		if (fd >= 0) {
			close(fd);
		}
		pthread_mutex_lock(&df->lock);
		it->state = fd >= 0 && path ? FOUND : MISSING;
		it->path = fd >= 0 ? path : NULL;
		if (fd < 0) {
			free(path);
		}
		df->done++;
		df->slow = false;
		pthread_cond_broadcast(&df->cond);
	}
	pthread_mutex_unlock(&df->lock);
	return NULL;
}

/**
 * dbgfetch_new() - a fetcher, when DEBUGINFOD_URLS names a server
 *
 * The thread starts with the first request.
 *
 * Return: the fetcher, or NULL when DEBUGINFOD_URLS is unset or empty (or out of memory).
 */
struct dbgfetch *dbgfetch_new(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct dbgfetch *df = NULL;
	pthread_condattr_t attr;

	if (!urls || !urls[strspn(urls, " ")]) {
		goto out;
	}
	df = calloc(1, sizeof(*df));
	if (!df) {
		goto out;
	}
	df->client = debuginfod_begin();
	if (!df->client) {
		free(df);
		df = NULL;
		goto out;
	}
	debuginfod_set_user_data(df->client, df);
	debuginfod_set_progressfn(df->client, progress);
	pthread_mutex_init(&df->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&df->cond, &attr);
	pthread_condattr_destroy(&attr);
out:
	return df;
}

/**
 * dbgfetch_free() - stop the thread (a transfer under way is ended) and forget everything
 * @df: the fetcher, or NULL
 */
void dbgfetch_free(struct dbgfetch *df)
{
	struct item *it, *next;

	if (!df) {
		return;
	}
	pthread_mutex_lock(&df->lock);
	__atomic_store_n(&df->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&df->cond);
	pthread_mutex_unlock(&df->lock);
	if (df->started) {
		pthread_join(df->thread, NULL);
	}
	for (it = df->items; it; it = next) {
		next = it->next;
		free(it->path);
		free(it);
	}
	debuginfod_end(df->client);
	pthread_cond_destroy(&df->cond);
	pthread_mutex_destroy(&df->lock);
	free(df);
}

static struct item *find_item(struct dbgfetch *df, const uint8_t *id, size_t len)
{
	struct item *it;

	for (it = df->items; it; it = it->next) {
		if (it->len == len && !memcmp(it->id, id, len)) {
			return it;
		}
	}
	return NULL;
}

/**
 * dbgfetch_get() - the separate debug file of build-id @id, from a debuginfod server
 * @df: the fetcher
 * @id: the build-id
 * @len: its length, in bytes
 * @path: out, on success: the file's path in libdebuginfod's cache, malloc()ed
 *
 * The first request of a build-id starts its fetch and waits for it (see dbgfetch.h).
 *
 * Return: a read-only descriptor of the file; -EAGAIN while it is being fetched; -ENOENT when
 * no server has it (or it could not be fetched); -ENOMEM.
 */
int dbgfetch_get(struct dbgfetch *df, const uint8_t *id, size_t len, char **path)
{
	struct timespec deadline;
	struct item *it;
	int ret = -EAGAIN;

	if (!len || len > ID_MAX) {
		return -ENOENT;
	}
	pthread_mutex_lock(&df->lock);
	it = find_item(df, id, len);
	if (!it) {
		it = calloc(1, sizeof(*it));
		if (!it) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(it->id, id, len);
		it->len = len;
		it->next = df->items;
		df->items = it;
		if (!df->started) {
			df->started = !pthread_create(&df->thread, NULL, worker, df);
		}
		pthread_cond_broadcast(&df->cond);
	}
	if (!df->started) {
		ret = -ENOENT;
		goto out;
	}
	if (!it->waited && !df->slow) {
		it->waited = true;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += (long)(DBGFETCH_WAIT_NS % 1000000000ULL);
		deadline.tv_sec +=
			(time_t)(DBGFETCH_WAIT_NS / 1000000000ULL) + deadline.tv_nsec / 1000000000L;
		deadline.tv_nsec %= 1000000000L;
		while (it->state == QUEUED || it->state == FETCHING) {
			if (pthread_cond_timedwait(&df->cond, &df->lock, &deadline) == ETIMEDOUT) {
				df->slow = it->state == QUEUED || it->state == FETCHING;
				break;
			}
		}
	}
	if (it->state == MISSING) {
		ret = -ENOENT;
	} else if (it->state == FOUND) {
		/* The cache is latsnap's own (root's), not the traced program's. */
		ret = open(it->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		ret = ret < 0 ? -ENOENT : ret;
		*path = ret >= 0 ? strdup(it->path) : NULL;
	}
out:
	pthread_mutex_unlock(&df->lock);
	return ret;
}

/**
 * dbgfetch_done() - how many fetches have ended: when it changed, what was pending may be there
 */
uint64_t dbgfetch_done(struct dbgfetch *df)
{
	uint64_t n;

	pthread_mutex_lock(&df->lock);
	n = df->done;
	pthread_mutex_unlock(&df->lock);
	return n;
}
