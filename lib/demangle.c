// SPDX-License-Identifier: GPL-2.0
/*
 * demangle.c - C++ (Itanium ABI) and Rust (legacy and v0) names demangled, with libstdc++'s and
 * libiberty's demanglers, for whatever latsnap prints for people: record's text, summary.txt,
 * report, show, flame, the HTML pages.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libiberty's (GCC's and binutils') demanglers: Debian's libiberty-dev, linked statically. */
#include <libiberty/demangle.h>

#include "lib/demangle.h"
#include "lib/text.h"

/* libstdc++'s demangler (the C++ ABI's, callable from C); latsnap links libstdc++. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * The longest demangled Rust name kept; a longer one is printed mangled. A v0 name's
 * back-references let a few hundred bytes stand for gigabytes of text, which libiberty would
 * print in full (minutes of work): the demangling stops at this size instead.
 */
#define RUST_DEMANGLED_MAX 4096

struct rust_out {
	char buf[RUST_DEMANGLED_MAX];
	size_t len;
	bool full;
	const char *mangled; /* what is being demangled, and its end */
	const char *mangled_end;
	jmp_buf stop;
};

/*
 * libiberty's output, piece by piece. Past the bound the demangling is abandoned, by a jump out
 * of libiberty, which holds no lock and no memory then but for a Unicode (punycode) name, which
 * it prints from a buffer of its own and frees right after: the jump is taken at a piece that
 * is not that buffer, one of the mangled name or of libiberty's own strings (every level of a
 * name's nesting prints some: "::", "<", ", ", "(" ...).
 */
static void rust_put(const char *s, size_t n, void *opaque)
{
	struct rust_out *o = opaque;
	Dl_info info;

	/* An empty identifier comes as (NULL, 0). */
	if (!n) {
		return;
	}
	if (o->full) {
		if ((s >= o->mangled && s < o->mangled_end) || dladdr(s, &info)) {
			longjmp(o->stop, 1);
		}
		return;
	}
	if (n >= sizeof(o->buf) - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/*
 * A Rust name demangled: legacy ("_ZN...17h<hash>E", the hash left out as rustc's own printing
 * does) or v0 ("_R..."). NULL when @mangled is neither, or too long once demangled; *@rust is
 * set when libiberty took it for a Rust name (a legacy one is checked whole before it prints).
 */
static char *rust_demangled(const char *mangled, bool *rust)
{
	struct rust_out *o = calloc(1, sizeof(*o));
	char *ret = NULL;

	*rust = false;
	if (!o) {
		return NULL;
	}
	o->mangled = mangled;
	o->mangled_end = mangled + strlen(mangled);
	/* An empty name ("_RC0": a crate with no name) is no name to print. */
	if (!setjmp(o->stop) && rust_demangle_callback(mangled, 0, rust_put, o) && !o->full &&
	    o->len) {
		ret = strndup(o->buf, o->len);
	}
	*rust = o->len || o->full;
	free(o);
	return ret;
}

/* Whether @name starts as a mangled name does: C++ and legacy Rust "_Z", Rust v0 "_R". */
static bool is_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/**
 * ls_demangle() - the demangled form of a C++ or Rust symbol, or NULL
 * @name: a symbol; C++ "_Z...", Rust "_ZN...E" (legacy, its hash dropped) and "_R..." (v0)
 * names are demangled, a "@VERSION" suffix is kept as it is
 *
 * Return: a malloc()ed string the caller frees, or NULL when @name is not a mangled name (a C
 * name, an invalid one), too long a Rust one, or memory ran out: print @name itself then.
 */
char *ls_demangle(const char *name)
{
	char *mangled = NULL, *out = NULL, *ret = NULL;
	const char *at;
	int status = -1;
	bool rust;

	if (!name || !is_mangled(name)) {
		goto out;
	}
	at = strchr(name, '@');
	mangled = at ? strndup(name, (size_t)(at - name)) : strdup(name);
	if (!mangled) {
		goto out;
	}
	/* Rust first: a legacy Rust name is a valid C++ one, which would keep its hash. */
	out = rust_demangled(mangled, &rust);
	if (!out && !rust && name[1] == 'Z') {
		out = __cxa_demangle(mangled, NULL, NULL, &status);
		if (status) {
			free(out);
			out = NULL;
		}
	}
	if (!out) {
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
 * A word starts a name when it starts with "_Z" or "_R" after anything but a name's character;
 * one that does not demangle is left as it is.
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
		if (!is_mangled(p) || (p > text && is_symbol_char(p[-1]))) {
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
 * ls_put_symbol() - print a symbol as people read it: demangled when it is a C++ or Rust name, and
 * escaped (ls_put_text()): a binary's symbols are its author's choice
 */
void ls_put_symbol(FILE *out, const char *name)
{
	char *d = ls_demangle(name);

	ls_put_text(out, d ? d : name);
	free(d);
}
