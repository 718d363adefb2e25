// SPDX-License-Identifier: GPL-2.0
/*
 * report-html.c - `latsnap report --html FILE`: the report's --json data as one self-contained
 * page (review/html.c; review/html/page.js draws it), linking to a page per complete snapshot
 * (`latsnap show --html`) in the directory FILE-snapshots beside it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "lib/util.h"
#include "review/html.h"
#include "review/report-analysis.h"
#include "review/report-render.h"
#include "review/show.h"
#include "review/snapshots.h"

/*
 * The directory of @html's snapshot pages: FILE-snapshots beside FILE (FILE without .html), made
 * if missing. A symlink there is not followed: the pages would go where it points.
 * Return: its path (to free), or NULL after saying why.
 */
static char *pages_dir(const char *html)
{
	size_t len = strlen(html);
	struct stat st;
	char *dir;

	if (len > 5 && !strcmp(html + len - 5, ".html")) {
		len -= 5;
	}
	if (asprintf(&dir, "%.*s-snapshots", (int)len, html) < 0) {
		ls_err("report: %s", strerror(ENOMEM));
		return NULL;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		ls_err("report: %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		ls_err("report: %s: not a directory (a symlink is not followed)", dir);
		goto fail;
	}
	return dir;
fail:
	free(dir);
	return NULL;
}

/*
 * The page of each complete snapshot of @set into @dir, and its link (relative to the report's
 * page: @base, @dir's last component) into @links; a snapshot whose page fails has none.
 */
static void write_pages(const struct snapshot_set *set, const char *dir, const char *base,
			struct json_object *links)
{
	char *page = NULL;
	size_t i;

	for (i = 0; i < set->nr; i++) {
		const struct snapshot *sn = &set->snaps[i];

		free(page);
		page = NULL;
		if (sn->state != SNAPSHOT_COMPLETE || strchr(sn->id, '/') ||
		    asprintf(&page, "%s/%s.html", dir, sn->id) < 0) {
			page = NULL;
			continue;
		}
		if (!show_write_page(sn->path, page, NULL)) {
			free(page);
			if (asprintf(&page, "%s/%s.html", base, sn->id) < 0) {
				page = NULL;
				continue;
			}
			json_object_object_add(links, sn->id, json_object_new_string(page));
		}
	}
	free(page);
}

/**
 * report_write_html() - the report as one HTML page, and a page per complete snapshot beside it
 * @r: the report
 * @html: the page's file; "-": stdout, without the snapshots' pages
 *
 * Return: 0, or 1 after saying what failed (a snapshot whose page fails is listed without a
 * link).
 */
int report_write_html(const struct report *r, const char *html)
{
	struct json_object *obj = report_to_json(r), *links = json_object_new_object();
	char *dir = NULL, title[512];
	const char *base;
	int ret = 1, err;

	if (!obj || !links) {
		ls_err("report: %s", strerror(ENOMEM));
		goto out;
	}
	dir = strcmp(html, "-") ? pages_dir(html) : NULL;
	if (strcmp(html, "-") && !dir) {
		goto out;
	}
	if (dir) {
		base = strrchr(dir, '/');
		base = base ? base + 1 : dir;
		write_pages(r->set, dir, base, links);
	}
	json_object_object_add(obj, "page", json_object_new_string("report"));
	json_object_object_add(obj, "links", json_object_get(links));
	snprintf(title, sizeof(title), "latsnap report of %s", r->set->dir);
	err = html_write_file(html, title, obj, NULL);
	if (err) {
		ls_err("report: %s: %s", html, strerror(-err));
		goto out;
	}
	ret = 0;
out:
	free(dir);
	json_object_put(links);
	json_object_put(obj);
	return ret;
}
