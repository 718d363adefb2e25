// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/config.h"
#include "lib/util.h"
#include "tap.h"

/* What the callback saw: "key=value@line" entries joined by ';'. */
struct seen {
	char log[8192];
	int calls;
	int stop_at; /* call number whose callback fails, 0 for never */
	int stop_with;
	char file[256];
};

static int record_cb(const char *key, const char *value, const char *file, int line, void *ctx)
{
	struct seen *s = ctx;
	size_t used = strlen(s->log);

	s->calls++;
	snprintf(s->log + used, sizeof(s->log) - used, "%s%s=%s@%d", used ? ";" : "", key, value,
		 line);
	snprintf(s->file, sizeof(s->file), "%s", file);
	if (s->stop_at && s->calls == s->stop_at) {
		return s->stop_with;
	}
	return 0;
}

/*
 * Loads @text with stderr captured into @err; returns ls_config_load()'s value. @len < 0 means
 * strlen(text).
 */
static int load_text(const char *text, long len, struct seen *s, char *err, size_t errlen,
		     char **pathp)
{
	char *path = tap_write_temp(text, len < 0 ? strlen(text) : (size_t)len);
	struct tap_capture c;
	int ret;

	/* The caller sets stop_at and stop_with; the rest is per load. */
	s->log[0] = '\0';
	s->file[0] = '\0';
	s->calls = 0;
	tap_capture_begin(&c, STDERR_FILENO);
	ret = ls_config_load(path, record_cb, s);
	tap_capture_end(&c, err, errlen);
	if (pathp) {
		*pathp = path;
	} else {
		tap_remove_temp(path);
	}
	return ret;
}

/* A file that must load and produce exactly @expected from the callback, printing nothing. */
static void loads(const char *name, const char *text, const char *expected)
{
	struct seen s = { 0 };
	char err[1024];
	int ret = load_text(text, -1, &s, err, sizeof(err), NULL);

	is_int(ret, 0, "%s: loads", name);
	is_str(s.log, expected, "%s: settings", name);
	is_str(err, "", "%s: nothing on stderr", name);
}

/* A file that must fail with -EINVAL and print exactly "latsnap: FILE:@line: @why\n". */
static void fails(const char *name, const char *text, long len, int line, const char *why)
{
	struct seen s = { 0 };
	char err[1024], expected[1024];
	char *path;
	int ret = load_text(text, len, &s, err, sizeof(err), &path);

	snprintf(expected, sizeof(expected), "latsnap: %s:%d: %s\n", path, line, why);
	is_int(ret, -EINVAL, "%s: fails with EINVAL", name);
	is_str(err, expected, "%s: one error line naming FILE:%d", name, line);
	tap_remove_temp(path);
}

/*
 * A file without read permission gives -EACCES; as root, check it as uid 65534 in a child. The
 * child reports through a pipe, not its exit status, which valgrind and sanitizers may replace.
 */
struct unreadable_ctx {
	const char *path;
	struct seen *seen;
};

/* 'y' as expected, 'n' readable or another error. */
static char load_unreadable(void *arg)
{
	struct unreadable_ctx *ctx = arg;

	return ls_config_load(ctx->path, record_cb, ctx->seen) == -EACCES ? 'y' : 'n';
}

static void unreadable(struct seen *s)
{
	char *p = tap_write_temp("a = 1\n", 6);
	struct unreadable_ctx ctx = { .path = p, .seen = s };
	char verdict;

	chmod(p, 0);
	if (geteuid() != 0) {
		is_int(ls_config_load(p, record_cb, s), -EACCES, "unreadable gives -EACCES");
		goto out;
	}
	verdict = tap_as_nobody(load_unreadable, &ctx);
	if (verdict == 'u') {
		skip("cannot drop to uid 65534");
	} else {
		ok(verdict == 'y', "unreadable gives -EACCES");
	}
out:
	tap_remove_temp(p);
}

static void bools(void)
{
	static const char *const yes[] = {
		"true", "TRUE", "True", "yes", "YES", "on", "On", "1",
	};
	static const char *const no[] = {
		"false", "FALSE", "no", "No", "off", "OFF", "0",
	};
	static const char *const bad[] = {
		"", "2", "y", "n", "t", "f", "enable", "yes ", " no", "01", "truee", "-1", "o",
	};
	size_t i;
	bool b;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = false;
		is_int(ls_parse_bool(yes[i], &b), 0, "bool '%s' parses", yes[i]);
		ok(b, "bool '%s' is true", yes[i]);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		b = true;
		is_int(ls_parse_bool(no[i], &b), 0, "bool '%s' parses", no[i]);
		ok(!b, "bool '%s' is false", no[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = true;
		is_int(ls_parse_bool(bad[i], &b), -EINVAL, "bool '%s' is rejected", bad[i]);
		ok(b, "bool '%s' leaves the output alone", bad[i]);
	}
	is_int(ls_parse_bool(NULL, &b), -EINVAL, "bool NULL is rejected");
}

static void pids(void)
{
	static const char *const bad[] = {
		"",
		"0",
		"-1",
		"+1",
		" 1",
		"1 ",
		"1x",
		"0x10",
		"1.0",
		"2147483648",
		"99999999999999999999",
		"1e3",
		"00",
	};
	size_t i;
	int pid;

	pid = 0;
	is_int(ls_parse_pid("1", &pid), 0, "pid 1 parses");
	is_int(pid, 1, "pid 1 value");
	is_int(ls_parse_pid("4194304", &pid), 0, "pid 4194304 parses");
	is_int(pid, 4194304, "pid 4194304 value");
	is_int(ls_parse_pid("2147483647", &pid), 0, "pid INT_MAX parses");
	is_int(pid, 2147483647, "pid INT_MAX value");
	is_int(ls_parse_pid("0042", &pid), 0, "leading zeros are decimal, not octal");
	is_int(pid, 42, "pid 0042 value");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pid = 77;
		is_int(ls_parse_pid(bad[i], &pid), -EINVAL, "pid '%s' is rejected", bad[i]);
		is_int(pid, 77, "pid '%s' leaves the output alone", bad[i]);
	}
	is_int(ls_parse_pid(NULL, &pid), -EINVAL, "pid NULL is rejected");
}

/* ls_err() and ls_verbose() write exactly "latsnap: MSG\n" to stderr, and keep errno. */
static void messages(void)
{
	struct tap_capture c;
	char out[4096], *big;
	size_t n;

	big = malloc(2001);
	if (!big) {
		bail_out("setup: %s", strerror(errno));
	}
	memset(big, 'z', 2000);
	big[2000] = '\0';

	tap_capture_begin(&c, STDERR_FILENO);
	errno = ENOSPC;
	ls_err("open %s: %s", "x.conf", "No such file");
	is_int(errno, ENOSPC, "ls_err keeps errno");
	ls_verbose_enabled = false;
	ls_verbose("hidden %d", 1);
	ls_verbose_enabled = true;
	ls_verbose("shown %d", 2);
	ls_verbose_enabled = false;
	ls_err("%s", big);
	n = tap_capture_end(&c, out, sizeof(out));
	ok(!strncmp(out, "latsnap: open x.conf: No such file\nlatsnap: shown 2\nlatsnap: ", 61),
	   "ls_err and ls_verbose lines, verbose only when enabled");
	ok(n == 61 + 2000 + 1 && !strncmp(out + 61, big, 2000) && out[n - 1] == '\n',
	   "a message longer than the internal buffer is printed whole");
	free(big);
}

int main(void)
{
	struct seen s = { 0 };
	char err[1024], *long_line, *path;
	int ret;

	loads("basic", "threshold = 20ms\njson = yes\n", "threshold=20ms@1;json=yes@2");
	loads("empty file", "", "");
	loads("only comments and blanks", "# hello\n\n   \n\t# indented comment\n", "");
	loads("no spaces", "threshold=20ms", "threshold=20ms@1");
	loads("no final newline", "a = 1\nb = 2", "a=1@1;b=2@2");
	loads("line numbers count blanks and comments", "\n# c\na = 1\n\n\nb = 2\n", "a=1@3;b=2@6");
	loads("whitespace trimmed", "  \t output \t=\t  /tmp/out dir  \t\n",
	      "output=/tmp/out dir@1");
	loads("CRLF line ends", "a = 1\r\nb = 2\r\n", "a=1@1;b=2@2");
	loads("comment after value", "a = 1 # one\nb = 2\t# two\n", "a=1@1;b=2@2");
	loads("hash inside value kept", "rules = /etc/a#b\n", "rules=/etc/a#b@1");
	loads("hash right after equals kept", "a =#x\n", "a=#x@1");
	loads("equals inside value", "a = b=c = d\n", "a=b=c = d@1");
	loads("digits and dashes in keys", "sleep-threshold = 1ms\nx9-y = 2\n",
	      "sleep-threshold=1ms@1;x9-y=2@2");
	loads("duplicate keys both reported", "a = 1\na = 2\n", "a=1@1;a=2@2");
	loads("value with inner spaces", "a = one two  three\n", "a=one two  three@1");

	fails("no equals", "threshold 20ms\n", -1, 1,
	      "expected 'key = value', got 'threshold 20ms'");
	fails("error line number", "a = 1\n\n# x\nbogus\nb = 2\n", -1, 4,
	      "expected 'key = value', got 'bogus'");
	fails("empty key", " = 5\n", -1, 1, "missing key before '='");
	fails("uppercase key", "Threshold = 5\n", -1, 1,
	      "invalid key 'Threshold' (allowed: a-z, 0-9, '-')");
	fails("underscore key", "sleep_threshold = 5\n", -1, 1,
	      "invalid key 'sleep_threshold' (allowed: a-z, 0-9, '-')");
	fails("space inside key", "sleep threshold = 5\n", -1, 1,
	      "invalid key 'sleep threshold' (allowed: a-z, 0-9, '-')");
	fails("empty value", "threshold =\n", -1, 1, "missing value for 'threshold'");
	fails("blank value", "threshold =   \t\n", -1, 1, "missing value for 'threshold'");
	fails("value is only a comment", "threshold = # none\n", -1, 1,
	      "missing value for 'threshold'");
	fails("NUL byte", "a = 1\nb = x\0y\n", 12, 2, "NUL byte in line");
	fails("leading NUL byte", "\0a = 1\n", 7, 1, "NUL byte in line");

	long_line = malloc(LS_CONFIG_MAX_LINE + 16);
	if (!long_line) {
		bail_out("out of memory");
	}
	/* Exactly the limit is fine, one more is not. */
	tap_fill_line(long_line, LS_CONFIG_MAX_LINE, "a = ", 'v', "\n");
	ret = load_text(long_line, -1, &s, err, sizeof(err), NULL);
	is_int(ret, 0, "a %d-character line loads", LS_CONFIG_MAX_LINE);
	is_int(s.calls, 1, "and is passed to the callback");
	tap_fill_line(long_line, LS_CONFIG_MAX_LINE + 1, "a = ", 'v', "\n");
	fails("line over the limit", long_line, -1, 1, "line too long (over 4095 characters)");
	/* A long comment line is still too long: the limit is on the line, not the setting. */
	tap_fill_line(long_line, LS_CONFIG_MAX_LINE + 1, "#", ' ', "");
	fails("long comment without newline", long_line, -1, 1,
	      "line too long (over 4095 characters)");
	free(long_line);

	/* The callback's verdict stops the load and is returned as is, with nothing printed. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	s.stop_with = -ERANGE;
	ret = load_text("a = 1\nb = 2\nc = 3\n", -1, &s, err, sizeof(err), &path);
	is_int(ret, -ERANGE, "callback error is returned");
	is_str(s.log, "a=1@1;b=2@2", "no callback after the failing one");
	is_str(err, "", "ls_config_load prints nothing for a callback error");
	is_str(s.file, path, "callback gets the file name");
	tap_remove_temp(path);

	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	s.stop_with = 7;
	ret = load_text("a = 1\nb = 2\n", -1, &s, err, sizeof(err), NULL);
	is_int(ret, 7, "a positive callback value is returned too");
	is_int(s.calls, 1, "and stops the load");

	/* A malformed line after good ones: the good ones were already delivered, then stop. */
	memset(&s, 0, sizeof(s));
	ret = load_text("a = 1\n!\nb = 2\n", -1, &s, err, sizeof(err), NULL);
	is_int(ret, -EINVAL, "malformed line stops the load");
	is_str(s.log, "a=1@1", "nothing after the malformed line is delivered");

	/* Files that cannot be read: -errno and silence. */
	{
		struct tap_capture c;

		tap_capture_begin(&c, STDERR_FILENO);
		memset(&s, 0, sizeof(s));
		is_int(ls_config_load("/nonexistent/latsnap.conf", record_cb, &s), -ENOENT,
		       "missing file gives -ENOENT");
		is_int(ls_config_load("/tmp", record_cb, &s), -EISDIR, "a directory gives -EISDIR");
		is_int(ls_config_load(NULL, record_cb, &s), -EINVAL, "NULL path gives -EINVAL");
		is_int(s.calls, 0, "no callback calls");
		unreadable(&s);
		is_int(tap_capture_end(&c, err, sizeof(err)), 0,
		       "nothing printed for unreadable files");
	}

	bools();
	pids();
	messages();

	return tap_done();
}
