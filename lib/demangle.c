// SPDX-License-Identifier: GPL-2.0
/*
 * demangle.c - C++ (Itanium ABI) demangling with libstdc++'s demangler, for whatever latsnap
 * prints for people: record's text, summary.txt, report, show, flame, the HTML pages.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/demangle.h"
#include "lib/text.h"

/* libstdc++'s demangler (the C++ ABI's, callable from C); latsnap links libstdc++. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/**
 * ls_demangle() - the demangled form of a C++ symbol, or NULL
 * @name: a symbol; "_Z..." names are demangled, a "@VERSION" suffix is kept as it is
 *
 * Return: a malloc()ed string the caller frees, or NULL when @name is not a mangled name (a C
 * name, an invalid one) or memory ran out: print @name itself then.
 */
char *ls_demangle(const char *name)
{
	char *mangled = NULL, *out = NULL, *ret = NULL;
	const char *at;
	int status = -1;

	if (!name || strncmp(name, "_Z", 2)) {
		goto out;
	}
	at = strchr(name, '@');
	mangled = at ? strndup(name, (size_t)(at - name)) : strdup(name);
	if (!mangled) {
		goto out;
	}
	out = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status || !out) {
		goto out;
	}
	if (at && asprintf(&ret, "%s%s", out, at) < 0) {
		ret = NULL;
		goto out;
	}
	if (!at) {
		ret = out;
		out = NULL;
	}
out:
	free(mangled);
	free(out);
	return ret;
}

/* What a symbol in running text may be made of ("_ZN2os15PlatformMonitor4waitEl@GLIBC.1"). */
static bool is_symbol_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '$' || c == '@';
}

/**
 * ls_demangle_text() - @text with each mangled name in it demangled
 * @text: a line made of names, such as an idle wait's place ("pthread_cond_wait in _ZN2os...")
 *
 * A word starts a name when it starts with "_Z" after anything but a name's character; one
 * that does not demangle is left as it is.
 *
 * Return: a malloc()ed string the caller frees (a copy when there is nothing to demangle), or
 * NULL when memory ran out.
 */
char *ls_demangle_text(const char *text)
{
	char *buf = NULL, *name, *d;
	size_t len = 0, n;
	const char *p = text;
	FILE *mem;

	if (!text) {
		return NULL;
	}
	mem = open_memstream(&buf, &len);
	if (!mem) {
		return NULL;
	}
	while (*p) {
		if (strncmp(p, "_Z", 2) || (p > text && is_symbol_char(p[-1]))) {
			fputc(*p++, mem);
			continue;
		}
		for (n = 0; is_symbol_char(p[n]); n++) {
		}
		name = strndup(p, n);
		d = name ? ls_demangle(name) : NULL;
		if (d) {
			fputs(d, mem);
		} else {
			fwrite(p, 1, n, mem);
		}
		free(d);
		free(name);
		p += n;
	}
	if (fclose(mem)) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/**
 * ls_put_symbol() - print a symbol as people read it: demangled when it is a C++ name, and
 * escaped (ls_put_text()): a binary's symbols are its author's choice
 */
void ls_put_symbol(FILE *out, const char *name)
{
	char *d = ls_demangle(name);

	ls_put_text(out, d ? d : name);
	free(d);
}
