/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP producer for the C unit tests. Plan-less: results print as they happen and
 * tap_done() prints "1..N" last. Every check returns its verdict, so a test can skip the
 * checks that depend on a failed one.
 *
 *	ok(cond, "fmt", ...);   is_int(got, expected, "fmt", ...);   is_u64(...);   is_str(...);
 *	skip("why");   diag("fmt", ...);   bail_out("fmt", ...);   return tap_done();
 *
 * And what several tests need around their checks: tap_as_nobody() runs a function as uid
 * 65534; tap_capture_begin()/tap_capture_end() catch what the code under test prints;
 * tap_write_temp()/tap_remove_temp() make a file of given contents; tap_fill_line() makes a line
 * of a given length.
 */
#ifndef LATSNAP_TAP_H
#define LATSNAP_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>

static int tap_run_;
static int tap_failed_;

static inline __attribute__((format(printf, 2, 0))) void tap_vline_(const char *prefix,
								    const char *fmt, va_list ap)
{
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/*
 * Test names come from test data, so make them one line of TAP: control characters are escaped
 * and '#' is written as '\#' lest it start a directive.
 */
static inline void tap_print_name_(const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++) {
		if (*p == '\n') {
			fputs("\\n", stdout);
		} else if (*p == '\t') {
			fputs("\\t", stdout);
		} else if (*p < 0x20 || *p == 0x7f) {
			printf("\\x%02x", *p);
		} else if (*p == '#') {
			fputs("\\#", stdout);
		} else {
			fputc(*p, stdout);
		}
	}
}

static inline void tap_print_str_(const char *label, const char *s)
{
	fputs(label, stdout);
	if (s) {
		fputc('\'', stdout);
		tap_print_name_(s);
		fputs("'\n", stdout);
	} else {
		fputs("NULL\n", stdout);
	}
}

static inline __attribute__((format(printf, 4, 0))) bool
tap_vresult_(bool pass, const char *file, int line, const char *fmt, va_list ap)
{
	char name[512];

	vsnprintf(name, sizeof(name), fmt, ap);
	tap_run_++;
	printf("%s %d - ", pass ? "ok" : "not ok", tap_run_);
	tap_print_name_(name);
	fputc('\n', stdout);
	if (!pass) {
		tap_failed_++;
		printf("#   Failed test '");
		tap_print_name_(name);
		printf("'\n#   at %s line %d.\n", file, line);
	}
	/* Flush every result so the output before a crash is not lost in a pipe buffer. */
	fflush(stdout);
	return pass;
}

static inline __attribute__((format(printf, 4, 5))) bool tap_ok_(bool pass, const char *file,
								 int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pass = tap_vresult_(pass, file, line, fmt, ap);
	va_end(ap);
	return pass;
}

/*
 * is_int() and is_u64(): the two values as 64 bits, equal as signed numbers exactly when they are
 * as unsigned ones; @is_signed only says how to print them.
 */
static inline __attribute__((format(printf, 6, 7))) bool tap_is_num_(bool is_signed, uint64_t got,
								     uint64_t expected,
								     const char *file, int line,
								     const char *fmt, ...)
{
	va_list ap;
	bool pass = got == expected;

	va_start(ap, fmt);
	tap_vresult_(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass && is_signed) {
		printf("#          got: %lld\n#     expected: %lld\n", (long long)got,
		       (long long)expected);
	} else if (!pass) {
		printf("#          got: %" PRIu64 "\n#     expected: %" PRIu64 "\n", got, expected);
	}
	fflush(stdout);
	return pass;
}

static inline __attribute__((format(printf, 5, 6))) bool
tap_is_str_(const char *got, const char *expected, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	bool pass;

	/* Two NULLs are equal; NULL never equals a string. */
	if (!got || !expected) {
		pass = got == expected;
	} else {
		pass = !strcmp(got, expected);
	}
	va_start(ap, fmt);
	tap_vresult_(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass) {
		tap_print_str_("#          got: ", got);
		tap_print_str_("#     expected: ", expected);
		fflush(stdout);
	}
	return pass;
}

static inline __attribute__((format(printf, 1, 2))) void tap_diag_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline_("# ", fmt, ap);
	va_end(ap);
}

static inline void tap_skip_(const char *why)
{
	tap_run_++;
	printf("ok %d # SKIP %s\n", tap_run_, why);
	fflush(stdout);
}

static inline __attribute__((format(printf, 1, 2), noreturn)) void tap_bail_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline_("Bail out! ", fmt, ap);
	va_end(ap);
	exit(1);
}

/**
 * tap_done() - end the test: print the plan and compute the exit status
 *
 * Return: 0 when every test passed, 1 otherwise; main() returns it.
 */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_run_);
	if (tap_failed_) {
		printf("# Looks like you failed %d test%s of %d.\n", tap_failed_,
		       tap_failed_ == 1 ? "" : "s", tap_run_);
	}
	fflush(stdout);
	return tap_failed_ ? 1 : 0;
}

/* The checks; each takes a printf-style test name and returns whether it passed. */
#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, expected, ...)                                                               \
	tap_is_num_(true, (uint64_t)(long long)(got), (uint64_t)(long long)(expected), __FILE__, \
		    __LINE__, __VA_ARGS__)
#define is_u64(got, expected, ...) \
	tap_is_num_(false, (uint64_t)(got), (uint64_t)(expected), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, expected, ...) tap_is_str_((got), (expected), __FILE__, __LINE__, __VA_ARGS__)
#define diag(...) tap_diag_(__VA_ARGS__)
#define skip(why) tap_skip_(why)
#define bail_out(...) tap_bail_(__VA_ARGS__)

/*
 * tap_as_nobody - run @fn(@arg) in a child as uid/gid 65534 and return the one-byte verdict it
 * gives; 'u' when the child could not drop root, 0 when it said nothing. The verdict travels
 * through a pipe, not the exit status, which valgrind and sanitizers may replace.
 */
static inline char tap_as_nobody(char (*fn)(void *), void *arg)
{
	char verdict = 0;
	int fds[2];
	pid_t pid;

	fflush(stdout);
	if (pipe(fds)) {
		tap_bail_("pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		tap_bail_("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		verdict = (setgid(65534) || setuid(65534)) ? 'u' : fn(arg);
		_exit(write(fds[1], &verdict, 1) == 1 ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &verdict, 1) != 1) {
		verdict = 0;
	}
	close(fds[0]);
	waitpid(pid, NULL, 0);
	return verdict;
}

/* A descriptor sent to a temporary file from tap_capture_begin() to tap_capture_end(). */
struct tap_capture {
	int target;
	int saved;
	int fd;
};

/* What the code under test writes to @target (STDOUT_FILENO, STDERR_FILENO) goes to a file. */
static inline void tap_capture_begin(struct tap_capture *c, int target)
{
	char path[] = "/tmp/latsnap-test-capture.XXXXXX";

	fflush(stdout);
	fflush(stderr);
	c->target = target;
	c->fd = mkstemp(path);
	if (c->fd < 0) {
		tap_bail_("mkstemp: %s", strerror(errno));
	}
	unlink(path);
	c->saved = dup(target);
	dup2(c->fd, target);
}

/*
 * tap_capture_end() - restore the descriptor; @out receives what was written, truncated to
 * @len - 1 bytes and NUL-terminated.
 *
 * Return: how many bytes @out received (more may have been written).
 */
static inline size_t tap_capture_end(struct tap_capture *c, char *out, size_t len)
{
	ssize_t n;

	fflush(stdout);
	fflush(stderr);
	dup2(c->saved, c->target);
	close(c->saved);
	n = pread(c->fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(c->fd);
	return n > 0 ? (size_t)n : 0;
}

/*
 * tap_run() - run @fn, a command's main(), with the NULL-terminated @args as its argv (at most
 * 15), what it writes to stdout into @out and to stderr into @err (each truncated to its size - 1
 * and NUL-terminated).
 *
 * Return: its exit status.
 */
static inline int tap_run(int (*fn)(int, char **), const char **args, char *out, size_t out_len,
			  char *err, size_t err_len)
{
	struct tap_capture out_cap, err_cap;
	char *argv[16];
	int argc = 0, rc;

	while (args[argc] && argc < 15) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	tap_capture_begin(&out_cap, STDOUT_FILENO);
	tap_capture_begin(&err_cap, STDERR_FILENO);
	rc = fn(argc, argv);
	tap_capture_end(&err_cap, err, err_len);
	tap_capture_end(&out_cap, out, out_len);
	return rc;
}

/* The file @path made to hold the @len bytes of @data, or the test bails out. */
static inline void tap_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd)) {
		tap_bail_("cannot write %s: %s", path, strerror(errno));
	}
}

/*
 * tap_write_snapshot() - a snapshot as review reads it: @dir/@id/summary.json holding @summary,
 * and an empty @dir/@id/trace/ (@dir is made when missing).
 */
static inline void tap_write_snapshot(const char *dir, const char *id, const char *summary)
{
	char path[4096];

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/%s", dir, id);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/trace", dir, id);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/summary.json", dir, id);
	tap_write_file(path, summary, strlen(summary));
}

/* A new temporary file that holds the @len bytes of @data; returns its path, to tap_remove_temp(). */
static inline char *tap_write_temp(const void *data, size_t len)
{
	char *path = strdup("/tmp/latsnap-test.XXXXXX");
	int fd;

	if (!path) {
		tap_bail_("out of memory");
	}
	fd = mkstemp(path);
	if (fd < 0) {
		tap_bail_("mkstemp: %s", strerror(errno));
	}
	if (write(fd, data, len) != (ssize_t)len) {
		tap_bail_("write %s: %s", path, strerror(errno));
	}
	close(fd);
	return path;
}

static inline void tap_remove_temp(char *path)
{
	unlink(path);
	free(path);
}

/*
 * tap_fill_line() - a text of a chosen length: @head, then @fill up to @len characters, then
 * @tail. @buf must hold @len + strlen(@tail) + 1 bytes.
 *
 * Return: @buf.
 */
static inline char *tap_fill_line(char *buf, size_t len, const char *head, char fill,
				  const char *tail)
{
	memset(buf, fill, len);
	memcpy(buf, head, strlen(head));
	strcpy(buf + len, tail);
	return buf;
}

#endif /* LATSNAP_TAP_H */
