/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report-render.h - the forms of `latsnap report`: text, --json and --html. Each only walks
 * the struct report that report_analyse() made (report-analysis.h).
 */
#ifndef LATSNAP_REPORT_RENDER_H
#define LATSNAP_REPORT_RENDER_H

#include <stdio.h>

struct json_object;
struct report;

void report_print_text(FILE *out, const struct report *r);
struct json_object *report_to_json(const struct report *r);
int report_write_html(const struct report *r, const char *html);

#endif /* LATSNAP_REPORT_RENDER_H */
