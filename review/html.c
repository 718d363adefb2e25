// SPDX-License-Identifier: GPL-2.0
/*
 * html.c - one self-contained HTML page: the style sheet and script of review/html/ inlined, the
 * page's data as a JSON script element the script draws from.
 *
 * Everything in the data came from a snapshot and is hostile (a comm, a symbol, a request's
 * query text): it never becomes markup here. The JSON is written with '<', '>' and '&' as \u
 * escapes, so that no "</script>" or "<!--" can end or bend its element; the script puts text
 * into the page only as text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "lib/demangle.h"
#include "lib/text.h"
#include "lib/util.h"
#include "review/html.h"

/* review/html-assets.S */
extern const char ls_html_page_js[];
extern const char ls_html_page_css[];

/*
 * @data as JSON that cannot leave a <script> element: only strings can hold <, > or &. UTF-8,
 * as the page says it is (what is not is U+FFFD, ls_json_text()).
 */
static int script_json(FILE *out, struct json_object *data)
{
	char *text = ls_json_text(data, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	const char *json = text;

	if (!json) {
		return -ENOMEM;
	}
	for (; *json; json++) {
		switch (*json) {
		case '<':
			fputs("\\u003c", out);
			break;
		case '>':
			fputs("\\u003e", out);
			break;
		case '&':
			fputs("\\u0026", out);
			break;
		default:
			fputc(*json, out);
		}
	}
	free(text);
	return 0;
}

/* @obj's string member @key, with what ls_demangle_text() makes of it; left as it is on failure. */
static void demangle_member(struct json_object *obj, const char *key)
{
	struct json_object *v;
	char *d;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string)) {
		return;
	}
	d = ls_demangle_text(json_object_get_string(v));
	if (d && strcmp(d, json_object_get_string(v))) {
		json_object_object_add(obj, key, json_object_new_string(d));
	}
	free(d);
}

/*
 * The page is for people: C++ names demangled, in each frame's "symbol" (a FRAME has "addr")
 * and each idle wait's "site". The JSON outputs keep the names as the symbol tables have them.
 */
static void demangle_data(struct json_object *v, unsigned int depth)
{
	size_t i, n;

	/* Deeper than any summary or report nests: leave it be rather than recurse on. */
	if (depth > 32) {
		return;
	}
	if (json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		for (i = 0; i < n; i++) {
			demangle_data(json_object_array_get_idx(v, i), depth + 1);
		}
		return;
	}
	if (!json_object_is_type(v, json_type_object)) {
		return;
	}
	if (json_object_object_get_ex(v, "addr", NULL)) {
		demangle_member(v, "symbol");
	}
	demangle_member(v, "site");
	json_object_object_foreach(v, key, val)
	{
		(void)key;
		demangle_data(val, depth + 1);
	}
}

/**
 * html_write_page() - write one page
 * @out: where to
 * @title: the page's title (text)
 * @data: what the page's script draws: a `show --json` summary, or `report --json` with
 *        "page": "report"; its C++ names are demangled in place
 * @trusted_html: markup latsnap made and escaped itself (the flame graph's SVG), placed hidden
 *                for the script to move where it belongs; NULL for none
 *
 * Return: 0, -ENOMEM, or -EIO when @out could not be written.
 */
int html_write_page(FILE *out, const char *title, struct json_object *data,
		    const char *trusted_html)
{
	int err;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"generator\" content=\"latsnap " LATSNAP_VERSION "\">\n<title>",
	      out);
	ls_xml_text(out, title, SIZE_MAX);
	fputs("</title>\n<style>\n", out);
	fputs(ls_html_page_css, out);
	fputs("</style>\n</head>\n<body data-render=\"pending\">\n"
	      "<noscript>This page is drawn by its own inline script: allow scripts for this "
	      "file.</noscript>\n"
	      "<div id=\"latsnap-errors\" class=\"error-box\" hidden></div>\n"
	      "<main id=\"latsnap\"></main>\n",
	      out);
	if (trusted_html) {
		fputs("<div id=\"latsnap-flame\" class=\"flame\" hidden>\n", out);
		fputs(trusted_html, out);
		fputs("</div>\n", out);
	}
	demangle_data(data, 0);
	fputs("<script type=\"application/json\" id=\"latsnap-data\">", out);
	err = script_json(out, data);
	fputs("</script>\n<script>\n", out);
	fputs(ls_html_page_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
	if (!err && (fflush(out) == EOF || ferror(out))) {
		err = -EIO;
	}
	return err;
}

/**
 * html_write_file() - html_write_page() into the file @path, or stdout for "-"
 *
 * The page is written beside @path and renamed over it: a page that could not be written
 * whole leaves the previous one (or none), never half of one.
 *
 * Return: 0, or a negative errno (the caller says what failed, naming @path).
 */
int html_write_file(const char *path, const char *title, struct json_object *data,
		    const char *trusted_html)
{
	char *tmp = NULL;
	FILE *out = NULL;
	int fd = -1, err;

	if (!strcmp(path, "-")) {
		return html_write_page(stdout, title, data, trusted_html);
	}
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* mkostemp's 0600: a page is for whoever may read the directory it goes to. */
	if (fchmod(fd, 0644)) {
		err = -errno;
		goto out;
	}
	out = fdopen(fd, "w");
	if (!out) {
		err = -errno;
		goto out;
	}
	fd = -1;
	err = html_write_page(out, title, data, trusted_html);
	if (fclose(out) && !err) {
		err = -EIO;
	}
	out = NULL;
	if (!err && rename(tmp, path)) {
		err = -errno;
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	if (out) {
		fclose(out);
	}
	if (err && tmp) {
		unlink(tmp);
	}
	free(tmp);
	return err;
}
