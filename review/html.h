/* SPDX-License-Identifier: GPL-2.0 */
/*
 * html.h - self-contained HTML pages of snapshots and reports: the page's data as JSON, drawn
 * by a script inlined with its style sheet (no network, nothing fetched).
 */
#ifndef LATSNAP_HTML_H
#define LATSNAP_HTML_H

#include <stdio.h>

struct json_object;

int html_write_page(FILE *out, const char *title, struct json_object *data,
		    const char *trusted_html);
int html_write_file(const char *path, const char *title, struct json_object *data,
		    const char *trusted_html);

#endif /* LATSNAP_HTML_H */
