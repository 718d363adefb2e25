// SPDX-License-Identifier: GPL-2.0
/*
 * stacklog.c - --log-stacks: each distinct kernel stack once, as comment lines of a rules file
 * with, for an uncategorized one, a candidate rule to uncomment. The log is itself a valid rules
 * file, so that `latsnap rules > my.rules; cat stacks.log >> my.rules` is a starting point.
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <inttypes.h>

#include "lib/outlier.h"
#include "lib/text.h"
#include "classify/rules.h"
#include "recorder/stacklog.h"
#include "lib/util.h"

/* Distinct stacks remembered; beyond, the log says so once and stops growing. */
#define STACKLOG_MAX_SEEN 10000

struct stacklog {
	enum stacklog_mode mode;
	FILE *out;
	bool own_out;
	void *seen; /* tsearch(3) tree of the keys already logged */
	unsigned int nr_seen;
	bool full_said;
};

static const char *const mode_names[] = {
	[STACKLOG_NONE] = "none",
	[STACKLOG_UNCATEGORIZED] = "uncategorized",
	[STACKLOG_CATEGORIZED] = "categorized",
	[STACKLOG_ALL] = "all",
};

/**
 * stacklog_parse_mode - none, uncategorized, categorized or all. Returns -EINVAL otherwise.
 */
int stacklog_parse_mode(const char *text, enum stacklog_mode *mode)
{
	unsigned int i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (text && !strcmp(text, mode_names[i])) {
			*mode = (enum stacklog_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

/**
 * stacklog_open - a log of @mode appended to @path (created 0600, never through a symlink), or
 * to stderr when @path is NULL. With STACKLOG_NONE, *@logp is NULL and nothing is opened.
 */
int stacklog_open(struct stacklog **logp, enum stacklog_mode mode, const char *path)
{
	struct stacklog *log = NULL;
	int fd = -1, err = 0;

	*logp = NULL;
	if (mode == STACKLOG_NONE) {
		goto out;
	}
	log = calloc(1, sizeof(*log));
	if (!log) {
		err = -ENOMEM;
		goto out;
	}
	log->mode = mode;
	log->out = stderr;
	if (path) {
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			err = -errno;
			ls_err("record: %s: %s", path,
			       errno == ELOOP ? "a symlink is refused" : strerror(errno));
			goto out;
		}
		log->out = fdopen(fd, "a");
		if (!log->out) {
			err = -errno;
			close(fd);
			ls_err("record: %s: %s", path, strerror(-err));
			goto out;
		}
		log->own_out = true;
	}
	*logp = log;
	log = NULL;
out:
	free(log);
	return err;
}

/* Frame names joined with " < ", innermost first; addresses where no symbol is known. */
static void join_frames(const struct outlier_frames *frames, FILE *out)
{
	size_t i;

	for (i = 0; i < frames->nr; i++) {
		if (frames->v[i].symbol) {
			fprintf(out, "%s%s", i ? " < " : "", LS_TEXT(frames->v[i].symbol));
		} else {
			fprintf(out, "%s0x%" PRIx64, i ? " < " : "", frames->v[i].addr);
		}
	}
}

/* True the first time @key is seen. */
static bool first_time(struct stacklog *log, const char *key)
{
	char *copy, **found;

	if (tfind(key, &log->seen, (int (*)(const void *, const void *))strcmp)) {
		return false;
	}
	if (log->nr_seen >= STACKLOG_MAX_SEEN) {
		if (!log->full_said) {
			fprintf(log->out, "# latsnap: %d distinct stacks logged; no more are\n",
				STACKLOG_MAX_SEEN);
			log->full_said = true;
		}
		return false;
	}
	copy = strdup(key);
	if (!copy) {
		return false;
	}
	found = tsearch(copy, &log->seen, (int (*)(const void *, const void *))strcmp);
	if (!found || *found != copy) {
		free(copy);
		return false;
	}
	log->nr_seen++;
	return true;
}

/* The innermost frame with a name: what a candidate rule matches on. */
static const char *innermost_symbol(const struct outlier_frames *frames)
{
	size_t i;

	for (i = 0; i < frames->nr; i++) {
		if (frames->v[i].symbol) {
			return frames->v[i].symbol;
		}
	}
	return NULL;
}

/**
 * stacklog_outlier - log the kernel stacks of @outlier not logged yet, if @match's category is
 * one the mode asks for.
 */
void stacklog_outlier(struct stacklog *log, const struct outlier *outlier,
		      const struct rules_match *match)
{
	const char *syscall, *category = match->categorized ? "categorized" : "uncategorized";
	const struct outlier_frames *frames;
	char *key = NULL;
	size_t i, key_len = 0;
	FILE *mem;
	const char *sym;

	if (!log || (match->categorized && log->mode == STACKLOG_UNCATEGORIZED) ||
	    (!match->categorized && log->mode == STACKLOG_CATEGORIZED)) {
		return;
	}
	syscall = outlier->syscall;
	for (i = 0; i < outlier->nr_kernel_stacks; i++) {
		frames = &outlier->kernel_stacks[i].frames;
		mem = open_memstream(&key, &key_len);
		if (!mem) {
			return;
		}
		fprintf(mem, "%s %s ", category, syscall ? syscall : "-");
		join_frames(frames, mem);
		fclose(mem);
		if (!first_time(log, key)) {
			free(key);
			key = NULL;
			continue;
		}
		free(key);
		key = NULL;
		fprintf(log->out,
			"# %s: %s, %.1f ms waited here by %s (pid %d, tid %d): cause \"%s\"",
			category, syscall ? syscall : "off CPU outside a syscall",
			(double)outlier->kernel_stacks[i].weight_ns / 1e6,
			LS_TEXT(outlier->comm ? outlier->comm : "?"), outlier->pid, outlier->tid,
			LS_TEXT(match->cause));
		if (match->categorized && match->priority) {
			fprintf(log->out, " (a rule of priority %d)", match->priority);
		}
		fputs("\n#   kernel: ", log->out);
		join_frames(frames, log->out);
		if (outlier->user_stack.frames.nr) {
			fputs("\n#   user: ", log->out);
			join_frames(&outlier->user_stack.frames, log->out);
		}
		fputc('\n', log->out);
		sym = innermost_symbol(frames);
		if (!match->categorized && sym) {
			fprintf(log->out, "#100 kernel:%s syscall:%s = CAUSE\n", sym,
				syscall ? syscall : "-");
		}
		fflush(log->out);
	}
}

static void free_key(void *key)
{
	free(key);
}

/**
 * stacklog_close - flush and close the log.
 */
void stacklog_close(struct stacklog *log)
{
	if (!log) {
		return;
	}
	tdestroy(log->seen, free_key);
	if (log->own_out) {
		fclose(log->out);
	} else {
		fflush(log->out);
	}
	free(log);
}
