/* SPDX-License-Identifier: GPL-2.0 */
/*
 * demangle.h - C++ and Rust names as people read them: the one place latsnap demangles.
 * Summaries and --json keep the linkage (mangled) name, which is exact and what nm and the
 * rules' globs see; everything printed for people shows it demangled.
 */
#ifndef LATSNAP_DEMANGLE_H
#define LATSNAP_DEMANGLE_H

#include <stdio.h>

char *ls_demangle(const char *name);
char *ls_demangle_text(const char *text);
void ls_put_symbol(FILE *out, const char *name);

#endif /* LATSNAP_DEMANGLE_H */
