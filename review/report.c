// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - `latsnap report [--json | --html FILE] [--by cause|process|syscall|host|request]
 * [--host NAME] DIR`: its options, and the report made (report-analysis.c) and written as text,
 * JSON or HTML (report-text.c, report-json.c, report-html.c).
 *
 * Snapshots that cannot be read are listed with the reason and left out.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/options.h"
#include "lib/text.h"
#include "lib/util.h"
#include "review/report-analysis.h"
#include "review/report-render.h"
#include "review/report.h"
#include "review/snapshots.h"

/* --html has no short option. */
#define OPT_HTML 1000

/* The options, in --help's order: getopt_long()'s tables and --help are made from them. */
static const struct ls_option report_options[] = {
	{ "json", 'j', no_argument, 0, NULL, NULL,
	  "the same data as one JSON object (see latsnap(1))" },
	{ "html", OPT_HTML, required_argument, 0, NULL, "FILE",
	  "the same as one self-contained HTML page in FILE (tables, the\n"
	  "distributions as bars), linking to a page per complete snapshot\n"
	  "(latsnap show --html) written into the directory FILE-snapshots/\n"
	  "(FILE without its .html)" },
	{ "by", 'b', required_argument, 0, NULL, "KEY",
	  "group by cause (default), process, syscall or host; or the\n"
	  "requests (record --request) alone by request: probe pair and\n"
	  "query (the first argument of a USDT start probe)" },
	{ "host", 'H', required_argument, 0, NULL, "NAME",
	  "only the snapshots recorded on host NAME" },
	{ "help", 'h', no_argument, 0, NULL, NULL, "this help" },
};

#define NR_REPORT_OPTIONS (sizeof(report_options) / sizeof(report_options[0]))

static const char report_usage_head[] =
	"Usage: latsnap report [--json | --html FILE] [--by cause|process|syscall|host|request]\n"
	"                      [--host NAME] DIR\n"
	"\n"
	"A LatencyTOP-style table of the outliers of every snapshot in DIR (an output directory\n"
	"of latsnap record, or an lttng-relayd output tree of many hosts): count, average, maximum and share of the outlier time of each cause,\n"
	"system-wide and per process, with each group's latency distribution (log2 histogram).\n"
	"Incomplete and corrupt snapshots are listed with the reason; the rest are reported.\n"
	"Idle waits (threads waiting for work, record's idle policy) are listed apart: they are\n"
	"not latency and are in none of the tables.\n"
	"\n";

static void report_help(void)
{
	fputs(report_usage_head, stdout);
	ls_options_usage(stdout, report_options, NR_REPORT_OPTIONS, 21);
}

/* The options into @by, @json, @host and @html: SNAPSHOTS_GO_ON, or the exit status to stop with. */
static int parse_options(int argc, char **argv, enum report_by *by, bool *json, const char **host,
			 const char **html)
{
	struct option opts[NR_REPORT_OPTIONS + 1];
	char shortopts[sizeof("+:") + 2 * NR_REPORT_OPTIONS];
	size_t j;
	int id;

	optind = 0;
	opterr = 0;
	ls_options_getopt(report_options, NR_REPORT_OPTIONS, "+:", opts, shortopts);
	while ((id = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		switch (id) {
		case 'j':
			*json = true;
			break;
		case 'b':
			for (j = 0; j < NR_REPORT_BY && strcmp(optarg, report_by_names[j]); j++) {
			}
			if (j == NR_REPORT_BY) {
				ls_err("report: --by: '%s' is not cause, process, syscall, host or "
				       "request",
				       optarg);
				return 2;
			}
			*by = (enum report_by)j;
			break;
		case 'H':
			*host = optarg;
			break;
		case OPT_HTML:
			*html = optarg;
			break;
		case 'h':
			report_help();
			return 0;
		default:
			snapshots_option_error("report", id, optopt, argv, optind);
			return 2;
		}
	}
	if (*json && *html) {
		ls_err("report: --json and --html: one or the other (see latsnap report --help)");
		return 2;
	}
	if (optind != argc - 1) {
		ls_err("report: %s (see latsnap report --help)",
		       optind == argc ? "DIR missing" : "one DIR only");
		return 2;
	}
	return SNAPSHOTS_GO_ON;
}

/* What makes a snapshot unreadable, or part of it: said once, before the report. */
static void warn_snapshots(const struct snapshot_set *set)
{
	size_t i;

	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state == SNAPSHOT_CORRUPT) {
			ls_err("report: %s", set->snaps[i].why);
		}
		if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
			continue;
		}
		/* Its outliers are reported all the same: a warning, not a corrupt summary. */
		if (set->snaps[i].summary->outliers_why) {
			ls_err("report: warning: %s", set->snaps[i].summary->outliers_why);
		}
		if (set->snaps[i].summary->idle_why) {
			ls_err("report: warning: %s", set->snaps[i].summary->idle_why);
		}
	}
}

/* The report of @r in the form asked for: 0, or 1 after saying what failed. */
static int write_report(const struct report *r, bool json, const char *html)
{
	struct json_object *obj;
	char *text;

	if (html) {
		return report_write_html(r, html);
	}
	if (!json) {
		report_print_text(stdout, r);
		return 0;
	}
	obj = report_to_json(r);
	text = ls_json_text(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(obj);
	if (!text) {
		ls_err("report: %s", strerror(ENOMEM));
		return 1;
	}
	puts(text);
	free(text);
	return 0;
}

/**
 * report_main() - `latsnap report`
 * @argc: argument count, the command name included
 * @argv: "report", options, DIR
 *
 * Return: the exit status: 0; 1 when DIR cannot be read or holds no complete snapshot, or
 * stdout cannot be written; 2 on a usage error.
 */
int report_main(int argc, char **argv)
{
	struct snapshot_set set = { 0 };
	struct report r = { .by = REPORT_BY_CAUSE };
	const char *host = NULL, *html = NULL;
	bool json = false;
	int ret;

	ret = parse_options(argc, argv, &r.by, &json, &host, &html);
	if (ret != SNAPSHOTS_GO_ON) {
		goto out;
	}
	ret = 0;
	if (snapshots_load(argv[optind], &set)) {
		ret = 1;
		goto out;
	}
	snapshots_filter_host(&set, host);
	warn_snapshots(&set);
	if (report_analyse(&r, &set)) {
		ls_err("report: %s", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	if (!set.nr) {
		ls_err("report: %s: no snapshot%s%s in it", set.dir, host ? " of host " : "",
		       host ? host : "");
		ret = 1;
		goto out;
	}
	ret = write_report(&r, json, html);
	if (!r.complete) {
		ls_err("report: %s: no complete snapshot in it", set.dir);
		ret = 1;
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ls_err("report: writing to stdout: %s", strerror(errno));
		ret = 1;
	}
out:
	report_free(&r);
	snapshots_free(&set);
	return ret;
}
