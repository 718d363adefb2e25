// SPDX-License-Identifier: GPL-2.0
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker/ksyms.h"
#include "lib/array.h"

/*
 * While loading, names live in a growing arena that realloc() may move, so entries hold offsets;
 * pointers are only made once the arena is final.
 */
struct ksym_raw {
	uint64_t addr;
	uint32_t name;
	uint32_t module; /* 0 = vmlinux; arena offset 0 is never a module name */
	char type;
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *arena;
};

struct ksyms_loader {
	struct ksym_raw *raw;
	size_t nr, cap;
	char *arena;
	size_t arena_len, arena_cap;
	/* kallsyms lists a module's symbols together; remember the last one to share its name. */
	uint32_t last_module;
	bool any_symbol;
	bool nonzero_addr;
};

/* Returns the arena offset of a copy of @s, or 0 on allocation failure (offset 0 is reserved). */
static uint32_t arena_add(struct ksyms_loader *ld, const char *s, size_t len)
{
	size_t off = ld->arena_len;

	if (off + len + 1 > UINT32_MAX ||
	    array_reserve((void **)&ld->arena, &ld->arena_cap, off + len + 1, 1)) {
		return 0;
	}
	memcpy(ld->arena + off, s, len);
	ld->arena[off + len] = '\0';
	ld->arena_len = off + len + 1;
	return (uint32_t)off;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/*
 * One line: "ffffffff821f8be0 T schedule" or "ffffffffc0201000 t name\t[module]". Lines that do
 * not look like that are skipped rather than failing the load: a symbol table with one odd line
 * is still far more useful than none.
 */
static int parse_kallsyms_line(struct ksyms_loader *ld, char *line)
{
	struct ksym_raw *r;
	uint64_t addr = 0;
	char *p = line, *name, *mod;
	size_t name_len, mod_len;
	char type;
	int digits = 0, v;

	while ((v = hexval(*p)) >= 0) {
		if (++digits > 16) {
			return 0;
		}
		addr = addr << 4 | (uint64_t)v;
		p++;
	}
	if (!digits || p[0] != ' ' || !p[1] || p[2] != ' ') {
		return 0;
	}
	type = p[1];
	name = p + 3;
	name_len = strcspn(name, " \t\n");
	if (!name_len) {
		return 0;
	}
	ld->any_symbol = true;
	if (addr) {
		ld->nonzero_addr = true;
	}
	if (!is_text_type(type)) {
		return 0;
	}

	mod = name + name_len;
	mod += strspn(mod, " \t");
	mod_len = 0;
	if (*mod == '[') {
		mod++;
		mod_len = strcspn(mod, "]\n");
		if (mod[mod_len] != ']') {
			mod_len = 0;
		}
	}

	if (array_reserve((void **)&ld->raw, &ld->cap, ld->nr + 1, sizeof(*ld->raw))) {
		return -ENOMEM;
	}
	r = &ld->raw[ld->nr];
	r->addr = addr;
	r->type = type;
	r->module = 0;
	if (mod_len) {
		if (ld->last_module && !strncmp(ld->arena + ld->last_module, mod, mod_len) &&
		    ld->arena[ld->last_module + mod_len] == '\0') {
			r->module = ld->last_module;
		} else {
			r->module = arena_add(ld, mod, mod_len);
			if (!r->module) {
				return -ENOMEM;
			}
			ld->last_module = r->module;
		}
	}
	r->name = arena_add(ld, name, name_len);
	if (!r->name) {
		return -ENOMEM;
	}
	ld->nr++;
	return 0;
}

/* Lower is better: global before local before weak, like perf picks among aliases. */
static int type_rank(char t)
{
	switch (t) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
		return 2;
	default:
		return 3;
	}
}

/*
 * By address; among symbols at one address the one to report comes first: better binding, then
 * fewer leading underscores (schedule over __schedule_alias), then the longer name, then by name
 * so the choice never depends on qsort's order.
 */
static int raw_cmp(const void *a, const void *b, void *arena)
{
	const struct ksym_raw *x = a, *y = b;
	const char *xn = (const char *)arena + x->name, *yn = (const char *)arena + y->name;
	size_t xu, yu, xl, yl;

	if (x->addr != y->addr) {
		return x->addr < y->addr ? -1 : 1;
	}
	if (type_rank(x->type) != type_rank(y->type)) {
		return type_rank(x->type) - type_rank(y->type);
	}
	xu = strspn(xn, "_");
	yu = strspn(yn, "_");
	if (xu != yu) {
		return xu < yu ? -1 : 1;
	}
	xl = strlen(xn);
	yl = strlen(yn);
	if (xl != yl) {
		return xl > yl ? -1 : 1;
	}
	return strcmp(xn, yn);
}

/**
 * ksyms_load() - load a kallsyms-format symbol table
 * @path: the file; NULL means /proc/kallsyms
 *
 * Keeps the text symbols (types t, T, w, W), one per address: among aliases at one address it
 * prefers global, then fewer leading underscores, then the longer name.
 *
 * Return: the table, or NULL with errno set: EPERM when every address reads as 0 (kallsyms
 * hides addresses from unprivileged readers and under kptr_restrict), ENODATA when the file holds
 * no symbol at all, ENOMEM, or whatever opening or reading the file failed with.
 */
struct ksyms *ksyms_load(const char *path)
{
	struct ksyms_loader ld = { 0 };
	struct ksyms *ks = NULL;
	char *line = NULL;
	size_t line_cap = 0, i, out;
	ssize_t n;
	FILE *f;
	int err = 0;

	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f) {
		return NULL;
	}
	/* Fewer, bigger reads: /proc/kallsyms produces a few megabytes. */
	setvbuf(f, NULL, _IOFBF, 1 << 18);

	/* Offset 0 stands for "no module", so no real string may start there. */
	if (array_reserve((void **)&ld.arena, &ld.arena_cap, 1, 1)) {
		err = ENOMEM;
		goto out;
	}
	ld.arena[0] = '\0';
	ld.arena_len = 1;

	for (;;) {
		errno = 0;
		n = getline(&line, &line_cap, f);
		if (n < 0) {
			if (ferror(f)) {
				err = errno ? errno : EIO;
			}
			break;
		}
		if (parse_kallsyms_line(&ld, line)) {
			err = ENOMEM;
			goto out;
		}
	}
	if (err) {
		goto out;
	}
	if (!ld.nonzero_addr) {
		err = ld.any_symbol ? EPERM : ENODATA;
		goto out;
	}

	if (ld.nr) {
		qsort_r(ld.raw, ld.nr, sizeof(*ld.raw), raw_cmp, ld.arena);
	}

	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = ENOMEM;
		goto out;
	}
	ks->syms = malloc((ld.nr ? ld.nr : 1) * sizeof(*ks->syms));
	if (!ks->syms) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0, out = 0; i < ld.nr; i++) {
		if (out && ks->syms[out - 1].addr == ld.raw[i].addr) {
			continue;
		}
		ks->syms[out].addr = ld.raw[i].addr;
		ks->syms[out].name = ld.arena + ld.raw[i].name;
		ks->syms[out].module = ld.raw[i].module ? ld.arena + ld.raw[i].module : NULL;
		out++;
	}
	ks->nr = out;
	ks->arena = ld.arena;
	ld.arena = NULL;

out:
	if (err && ks) {
		free(ks->syms);
		free(ks);
		ks = NULL;
	}
	free(ld.raw);
	free(ld.arena);
	free(line);
	fclose(f);
	if (err) {
		errno = err;
	}
	return ks;
}

/**
 * ksyms_lookup() - find the text symbol an address falls in
 * @ks: the table
 * @addr: a kernel text address
 *
 * Return: the symbol with the greatest address <= @addr, or NULL when @addr is below all of
 * them. kallsyms has no sizes, so an address past the end of the last function still maps to it.
 */
const struct ksym *ksyms_lookup(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi, mid;

	if (!ks || !ks->nr || addr < ks->syms[0].addr) {
		return NULL;
	}
	/* Invariant: syms[lo].addr <= addr, and every index >= hi is above addr. */
	hi = ks->nr;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (ks->syms[mid].addr <= addr) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	return &ks->syms[lo];
}

/**
 * ksyms_count() - number of distinct text symbol addresses in the table
 * @ks: the table, or NULL
 */
size_t ksyms_count(const struct ksyms *ks)
{
	return ks ? ks->nr : 0;
}

/**
 * ksyms_free() - free a table from ksyms_load()
 * @ks: the table, or NULL
 */
void ksyms_free(struct ksyms *ks)
{
	if (!ks) {
		return;
	}
	free(ks->syms);
	free(ks->arena);
	free(ks);
}
