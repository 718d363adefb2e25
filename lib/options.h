/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.h - a command's options as one table, from which its getopt_long() table, its short
 * options and its --help are made (and record's config keys).
 */
#ifndef LATSNAP_OPTIONS_H
#define LATSNAP_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* Not a key of record's config file (--config, --help). */
#define LS_OPT_NO_KEY 0x1

struct ls_option {
	const char *name; /* the long option */
	int id; /* the short option's letter, or a value past 255 for none */
	int has_arg; /* no_argument or required_argument */
	unsigned int flags; /* LS_OPT_* */
	const char *heading; /* a line of --help before this option's, or NULL */
	const char *arg; /* the value's name in --help, or NULL */
	const char *help; /* --help's text, its lines split by '\n' */
};

/**
 * ls_options_getopt() - getopt_long()'s tables from @opts.
 * @opts: the table, @n entries
 * @n: how many
 * @lead: what the short options start with ("+", "+:", ":" or "")
 * @longopts: @n + 1 entries, filled, the last all zero
 * @shortopts: at least strlen(@lead) + 2 * @n + 1 bytes, filled
 */
void ls_options_getopt(const struct ls_option *opts, size_t n, const char *lead,
		       struct option *longopts, char *shortopts);

/**
 * ls_options_usage() - the options part of --help: "  -x, --name ARG" or "      --name ARG",
 * then the help text from @column (two spaces after a name too long for it), its later lines
 * indented to @column.
 */
void ls_options_usage(FILE *out, const struct ls_option *opts, size_t n, int column);

/**
 * ls_options_find() - the entry of @opts whose id is @id, or NULL.
 */
const struct ls_option *ls_options_find(const struct ls_option *opts, size_t n, int id);

#endif /* LATSNAP_OPTIONS_H */
