// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - getopt_long()'s tables and --help made from a command's one table of options.
 */
#include <string.h>

#include "lib/options.h"

void ls_options_getopt(const struct ls_option *opts, size_t n, const char *lead,
		       struct option *longopts, char *shortopts)
{
	size_t i, len;

	len = strlen(lead);
	memcpy(shortopts, lead, len);
	for (i = 0; i < n; i++) {
		longopts[i] = (struct option){ opts[i].name, opts[i].has_arg, NULL, opts[i].id };
		if (opts[i].id > 0 && opts[i].id < 256) {
			shortopts[len++] = (char)opts[i].id;
			if (opts[i].has_arg == required_argument) {
				shortopts[len++] = ':';
			}
		}
	}
	longopts[n] = (struct option){ 0 };
	shortopts[len] = '\0';
}

void ls_options_usage(FILE *out, const struct ls_option *opts, size_t n, int column)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct ls_option *o = &opts[i];
		const char *line = o->help, *nl;
		int width;

		if (o->heading) {
			fprintf(out, "  %s\n", o->heading);
		}
		if (o->id > 0 && o->id < 256) {
			width = fprintf(out, "  -%c, --%s", o->id, o->name);
		} else {
			width = fprintf(out, "      --%s", o->name);
		}
		if (o->arg) {
			width += fprintf(out, " %s", o->arg);
		}
		fprintf(out, "%*s", width < column ? column - width : 2, "");
		while ((nl = strchr(line, '\n'))) {
			fprintf(out, "%.*s\n%*s", (int)(nl - line), line, column, "");
			line = nl + 1;
		}
		fprintf(out, "%s\n", line);
	}
}

const struct ls_option *ls_options_find(const struct ls_option *opts, size_t n, int id)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (opts[i].id == id) {
			return &opts[i];
		}
	}
	return NULL;
}
