// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/config.h"
#include "lib/util.h"

/* ls_is_blank - a blank of a settings or rules line (not a newline: lines come without). */
bool ls_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* ls_trim - @s without leading and trailing blanks, in place. */
char *ls_trim(char *s)
{
	char *end;

	while (ls_is_blank(*s)) {
		s++;
	}
	end = s + strlen(s);
	while (end > s && ls_is_blank(end[-1])) {
		end--;
	}
	*end = '\0';
	return s;
}

static bool valid_key(const char *key)
{
	const char *p;

	if (!*key) {
		return false;
	}
	for (p = key; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) {
			return false;
		}
	}
	return true;
}

/*
 * "#" starts a comment only at the start of the line or after a blank, so that values such as
 * "a#b" survive.
 */
void ls_strip_comment(char *s)
{
	char *p;

	for (p = s; *p; p++) {
		if (*p == '#' && (p == s || ls_is_blank(p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

/*
 * Parse one line in place. Returns 0 and sets *key and *value, or returns -EINVAL with the
 * reason in @why; a blank or comment line leaves *key NULL.
 */
static int parse_line(char *line, char **key, char **value, char *why, size_t whylen)
{
	char *eq, *k, *v;

	*key = NULL;
	*value = NULL;
	ls_strip_comment(line);
	line = ls_trim(line);
	if (!*line) {
		return 0;
	}
	eq = strchr(line, '=');
	if (!eq) {
		snprintf(why, whylen, "expected 'key = value', got '%.64s'", line);
		return -EINVAL;
	}
	*eq = '\0';
	k = ls_trim(line);
	v = ls_trim(eq + 1);
	if (!*k) {
		snprintf(why, whylen, "missing key before '='");
		return -EINVAL;
	}
	if (!valid_key(k)) {
		snprintf(why, whylen, "invalid key '%.64s' (allowed: a-z, 0-9, '-')", k);
		return -EINVAL;
	}
	if (!*v) {
		snprintf(why, whylen, "missing value for '%.64s'", k);
		return -EINVAL;
	}
	*key = k;
	*value = v;
	return 0;
}

/**
 * ls_config_load() - read a "key = value" settings file
 * @path: the file
 * @cb: called for each setting, in file order
 * @ctx: passed to @cb
 *
 * Blank lines and "#" comments (at line start or after a blank) are skipped, and whitespace
 * around key and value is trimmed. Keys are [a-z0-9-]+, values are non-empty and may contain
 * "=". A malformed line prints one "latsnap: FILE:LINE: why" line on stderr.
 *
 * Return: 0 on success; -errno, printing nothing, when @path cannot be opened or read; -EINVAL
 * on a malformed line; otherwise the first nonzero value @cb returned.
 */
int ls_config_load(const char *path, ls_config_cb cb, void *ctx)
{
	char *buf = NULL, *key, *value;
	char why[160];
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int lineno = 0;
	int ret = 0;

	if (!path || !cb) {
		return -EINVAL;
	}
	f = fopen(path, "re");
	if (!f) {
		return -errno;
	}

	for (;;) {
		errno = 0;
		n = getline(&buf, &cap, f);
		if (n < 0) {
			if (ferror(f)) {
				ret = errno ? -errno : -EIO;
			}
			goto out;
		}
		lineno++;
		if (n > 0 && buf[n - 1] == '\n') {
			buf[--n] = '\0';
		}
		/* getline() counts bytes past an embedded NUL; string functions stop there. */
		if (strlen(buf) != (size_t)n) {
			snprintf(why, sizeof(why), "NUL byte in line");
			ret = -EINVAL;
		} else if (n > LS_CONFIG_MAX_LINE) {
			snprintf(why, sizeof(why), "line too long (over %d characters)",
				 LS_CONFIG_MAX_LINE);
			ret = -EINVAL;
		} else {
			ret = parse_line(buf, &key, &value, why, sizeof(why));
		}
		if (ret) {
			ls_err("%s:%d: %s", path, lineno, why);
			goto out;
		}
		if (!key) {
			continue;
		}
		ret = cb(key, value, path, lineno, ctx);
		if (ret) {
			goto out;
		}
	}

out:
	free(buf);
	fclose(f);
	return ret;
}

/**
 * ls_parse_bool() - parse a boolean setting
 * @value: true/false, yes/no, on/off or 1/0, in any letter case
 * @out: receives the value on success, untouched on failure
 *
 * Return: 0 or -EINVAL.
 */
int ls_parse_bool(const char *value, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	if (!value) {
		return -EINVAL;
	}
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(value, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(value, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}
