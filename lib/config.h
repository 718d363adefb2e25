/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_CONFIG_H
#define LATSNAP_CONFIG_H

#include <stdbool.h>

/* Longest accepted line, not counting the newline. */
#define LS_CONFIG_MAX_LINE 4095

/*
 * Called once per "key = value" line, in file order. @key and @value are trimmed and only valid
 * during the call. Return 0 to go on; any other value stops ls_config_load(), which returns it.
 * The callback prints its own error, naming @file and @line.
 */
typedef int (*ls_config_cb)(const char *key, const char *value, const char *file, int line,
			    void *ctx);

int ls_config_load(const char *path, ls_config_cb cb, void *ctx);
int ls_parse_bool(const char *value, bool *out);

/* Line helpers shared by the settings and the cause rules parsers. */
bool ls_is_blank(char c);
char *ls_trim(char *s);
void ls_strip_comment(char *s);

#endif /* LATSNAP_CONFIG_H */
