// SPDX-License-Identifier: GPL-2.0
/*
 * show.c - `latsnap show [--json] [--before DUR] [--after DUR] [--debug-dir DIR] DIR/<id>`
 *
 * One snapshot for people: each outlier's split and cause, its user and kernel stacks as one
 * story (outermost user frame at the top, down to the kernel function it waited in), who held
 * what it waited for (a stall, record --hang: then its header says STILL BLOCKED or
 * UNFINISHED), who woke it, its wait chain, and a timeline of the trace's events of the threads
 * involved around it. A request (record --request) shows its waits, one by one in time order,
 * and its CPU profile, heaviest stack first. After the outliers, the idle waits (waiting for
 * work, not latency: the summary's "idle" list) that ended in the snapshot's window.
 *
 * The trace is read once with libbabeltrace2 (trace/ctf.c): the statedump events give the
 * mappings and build-ids that symbolize user frames now (review/dwfl-sym.c), every other event
 * of a thread of interest inside an outlier's window goes to that outlier's timeline. Which
 * events those are is not fixed here: whatever latsnap or the application adds to the trace
 * later shows up as long as it carries a vtid context or a tid field.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "classify/frames.h"
#include "classify/rules.h"
#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/options.h"
#include "lib/outlier.h"
#include "lib/text.h"
#include "lib/util.h"
#include "review/dwfl-sym.h"
#include "review/flame.h"
#include "review/html.h"
#include "review/lanes.h"
#include "review/show.h"
#include "review/snapshots.h"
#include "review/show-int.h"

/* The options, in --help's order: getopt_long()'s tables and --help are made from them. */
static const struct ls_option show_options[] = {
	{ "json", 'j', no_argument, 0, NULL, NULL,
	  "the snapshot's summary with timelines and source lines added" },
	{ "html", 'H', required_argument, 0, NULL, "FILE",
	  "write the snapshot as one self-contained HTML page to FILE (- for\n"
	  "stdout): an index of its outliers, each with a timeline of its\n"
	  "threads (on CPU, blocked, runqueue; wakeups as arrows), its stacks,\n"
	  "cause and flags, and the snapshot's flame graph" },
	{ "before", 'B', required_argument, 0, NULL, "DUR",
	  "timeline start before the outlier (default 10ms)" },
	{ "after", 'A', required_argument, 0, NULL, "DUR",
	  "timeline end after the outlier (default 5ms, and the outlier's\n"
	  "own unwound-stack event however late it came)" },
	{ "debug-dir", 'd', required_argument, 0, NULL, "DIR",
	  "look for debug files by build-id in DIR/.build-id first\n"
	  "(then /usr/lib/debug/.build-id)" },
	{ "help", 'h', no_argument, 0, NULL, NULL, "this help" },
};

#define NR_SHOW_OPTIONS (sizeof(show_options) / sizeof(show_options[0]))

static const char show_usage_head[] =
	"Usage: latsnap show [--json | --html FILE] [--before DUR] [--after DUR] [--debug-dir DIR]\n"
	"                    DIR/ID\n"
	"\n"
	"One snapshot for people: for each outlier its split, cause, user and kernel stacks (user\n"
	"above kernel), holder (of what a stalled thread waits for), a request's waits and CPU\n"
	"profile, waker and wait chain, then a\n"
	"timeline of the trace's events of the slow thread, its holder, its waker and the wait\n"
	"chain's threads, from a little before the outlier to its end. User frames are symbolized\n"
	"again from the mappings and build-ids in the trace. Then the idle waits (threads waiting\n"
	"for work: not latency) that ended in the snapshot's window.\n"
	"\n";

static void show_help(void)
{
	fputs(show_usage_head, stdout);
	ls_options_usage(stdout, show_options, NR_SHOW_OPTIONS, 23);
}

static int parse_dur(const char *opt, const char *text, uint64_t *ns)
{
	if (ls_parse_duration(text, ns)) {
		ls_err("show: %s: '%s' is not a duration (e.g. 250us, 20ms, 1.5s)", opt, text);
		return -EINVAL;
	}
	return 0;
}

/* The options into @opts: SNAPSHOTS_GO_ON, or the exit status to stop with. */
static int parse_options(int argc, char **argv, struct show_opts *opts)
{
	struct option longopts[NR_SHOW_OPTIONS + 1];
	char shortopts[sizeof("+:") + 2 * NR_SHOW_OPTIONS];
	int id;

	optind = 0;
	opterr = 0;
	ls_options_getopt(show_options, NR_SHOW_OPTIONS, "+:", longopts, shortopts);
	while ((id = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (id) {
		case 'j':
			opts->json = true;
			break;
		case 'H':
			opts->html = optarg;
			break;
		case 'B':
		case 'A':
			if (parse_dur(id == 'B' ? "--before" : "--after", optarg,
				      id == 'B' ? &opts->before : &opts->after)) {
				return 2;
			}
			opts->after_given |= id == 'A';
			break;
		case 'd':
			opts->debug_dir = optarg;
			break;
		case 'h':
			show_help();
			return 0;
		default:
			snapshots_option_error("show", id, optopt, argv, optind);
			return 2;
		}
	}
	if (opts->json && opts->html) {
		ls_err("show: --json and --html: one or the other (see latsnap show --help)");
		return 2;
	}
	if (optind != argc - 1) {
		ls_err("show: %s (see latsnap show --help)",
		       optind == argc ? "DIR/ID missing" : "one DIR/ID only");
		return 2;
	}
	opts->path = argv[optind];
	return SNAPSHOTS_GO_ON;
}

/* What show does once its options are known: the exit status. */
static int show_run(const struct show_opts *opts)
{
	struct snapshot snap = { 0 };
	struct show_ctx sc = { 0 };
	int ret, err;

	ret = show_load_snapshot(opts->path, &snap);
	if (ret) {
		goto out;
	}
	err = show_init_interests(&sc, snap.summary, opts);
	if (err) {
		goto fail;
	}
	ret = show_read_trace(&sc, &snap);
	err = show_settle_outliers(&sc, &snap, &ret);
	if (err) {
		goto fail;
	}
	if (opts->html) {
		ret = show_write_html(&snap, &sc, opts->html) ?: ret;
		goto out;
	}
	if (opts->json) {
		err = show_print_json(&snap, &sc);
		if (err) {
			goto fail;
		}
	} else {
		show_print_text(&snap, &sc);
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ls_err("show: writing to stdout: %s", strerror(errno));
		ret = 1;
	}
	goto out;
fail:
	ls_err("show: %s", strerror(-err));
	ret = 1;
out:
	show_interests_free(&sc);
	snapshot_free(&snap);
	return ret;
}

/**
 * show_main() - `latsnap show`
 * @argc: argument count, the command name included
 * @argv: "show", options, DIR/ID
 *
 * Return: the exit status: 0; 1 when the snapshot is incomplete or corrupt, its trace cannot be
 * read (the summary is still shown), or stdout cannot be written; 2 on a usage error.
 */
int show_main(int argc, char **argv)
{
	struct show_opts opts = { .before = BEFORE_NS_DEFAULT, .after = AFTER_NS_DEFAULT };
	int ret;

	ret = parse_options(argc, argv, &opts);
	if (ret != SNAPSHOTS_GO_ON) {
		return ret;
	}
	return show_run(&opts);
}

/**
 * show_write_page() - `latsnap show --html HTML_PATH SNAPSHOT_PATH`, for report --html
 * @snapshot_path: DIR/ID
 * @html_path: the page to write
 * @debug_dir: where to look for debug files first, or NULL
 *
 * Return: the exit status show would have (what failed is said on stderr).
 */
int show_write_page(const char *snapshot_path, const char *html_path, const char *debug_dir)
{
	struct show_opts opts = { .before = BEFORE_NS_DEFAULT,
				  .after = AFTER_NS_DEFAULT,
				  .html = html_path,
				  .debug_dir = debug_dir,
				  .path = snapshot_path };

	return show_run(&opts);
}
