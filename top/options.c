// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - the command line of `latsnap top`: its defaults, the options, the usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/duration.h"
#include "lib/options.h"
#include "lib/util.h"
#include "top/top-int.h"

enum {
	OPT_RULES = 0x100,
	OPT_SAMPLE_BELOW,
	OPT_SAMPLE_RATIO,
	OPT_HANG,
	OPT_INCLUDE_IDLE,
};

/* The options, in --help's order: getopt_long()'s tables and --help are made from them. */
static const struct ls_option top_options[] = {
	{ "interval", 'i', required_argument, 0, NULL, "DUR", "refresh period (default 5s)" },
	{ "batch", 'b', required_argument, 0, NULL, "N",
	  "print N refreshes as plain text, then exit" },
	{ "json", 'j', no_argument, 0, NULL, NULL,
	  "with --batch: each refresh as one JSON object per line" },
	{ "pid", 'p', required_argument, 0, NULL, "PID",
	  "list only this process in the process part (repeatable)" },
	{ "kernel-threads", 'k', no_argument, 0, NULL, NULL,
	  "count the waits of kernel threads too" },
	{ "hang", OPT_HANG, required_argument, 0, NULL, "DUR",
	  "list the threads waiting longer than DUR now, stuck ones\n"
	  "included (default 1s; off: no list)" },
	{ "include-idle", OPT_INCLUDE_IDLE, no_argument, 0, NULL, NULL,
	  "show waits for work too: the idle list and policy off" },
	{ "rules", OPT_RULES, required_argument, 0, NULL, "FILE",
	  "cause rules, replacing the built-in set" },
	{ "sample-below", OPT_SAMPLE_BELOW, required_argument, 0, NULL, "DUR",
	  "waits shorter than this are sampled (default 1ms)" },
	{ "sample-ratio", OPT_SAMPLE_RATIO, required_argument, 0, NULL, "N",
	  "... 1 in N, each kept one counted N times (default 100; 1: all)" },
	{ "verbose", 'v', no_argument, 0, NULL, NULL,
	  "say more on stderr (libbpf diagnostics included)" },
	{ "help", 'h', no_argument, 0, NULL, NULL, "this help" },
};

#define NR_TOP_OPTIONS (sizeof(top_options) / sizeof(top_options[0]))

static const char top_usage_head[] =
	"Usage: latsnap top [OPTIONS]\n"
	"\n"
	"A live LatencyTOP screen: which causes make processes wait, system-wide and per process,\n"
	"from every off-CPU wait on the machine (not only outliers), refreshed every interval.\n"
	"\n";

static const char top_usage_tail[] =
	"\n"
	"Keys: < > previous/next process (or thread), t process/thread view, 1 by cause,\n"
	"2 special causes (waiting for CPU, lock contention), 3 by synchronization object,\n"
	"c a m s sort by count, average, maximum, total; q quits.\n";

static void top_help(void)
{
	fputs(top_usage_head, stdout);
	ls_options_usage(stdout, top_options, NR_TOP_OPTIONS, 25);
	fputs(top_usage_tail, stdout);
}

/* A whole decimal number from 1 to 1000000; -EINVAL for anything else. */
static int parse_count(const char *arg, long *n)
{
	char *end;

	errno = 0;
	*n = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *n < 1 || *n > 1000000) {
		return -EINVAL;
	}
	return 0;
}

/*
 * Applies one option from getopt_long(). Return: 0, 2 on a usage error (said on stderr), -1
 * when the run is over (--help).
 */
static int parse_option(struct top_opts *o, int c, char **argv)
{
	long n;

	switch (c) {
	case 'i':
		if (ls_parse_duration(optarg, &o->interval_ns) || o->interval_ns < 100000000ull ||
		    o->interval_ns > 3600000000000ull) {
			ls_err("top: bad interval '%s' (a duration from 100ms to 1h, such as 5s)",
			       optarg);
			return 2;
		}
		break;
	case 'b':
		if (parse_count(optarg, &n)) {
			ls_err("top: bad --batch '%s' (a number of refreshes, 1 or more)", optarg);
			return 2;
		}
		o->batch = n;
		break;
	case 'j':
		o->json = true;
		break;
	case 'k':
		o->kthreads = true;
		break;
	case 'p':
		if (o->nr_pids == MAX_PIDS) {
			ls_err("top: too many --pid (at most %d)", MAX_PIDS);
			return 2;
		}
		if (ls_parse_pid(optarg, &o->pids[o->nr_pids])) {
			ls_err("top: bad pid '%s'", optarg);
			return 2;
		}
		o->nr_pids++;
		break;
	case OPT_INCLUDE_IDLE:
		o->include_idle = true;
		break;
	case OPT_RULES:
		o->rules_path = optarg;
		break;
	case OPT_SAMPLE_BELOW:
		if (ls_parse_duration(optarg, &o->sample_below_ns)) {
			ls_err("top: bad --sample-below '%s' (a duration such as 1ms)", optarg);
			return 2;
		}
		break;
	case OPT_SAMPLE_RATIO:
		if (parse_count(optarg, &n)) {
			ls_err("top: bad --sample-ratio '%s' (1 to 1000000)", optarg);
			return 2;
		}
		o->sample_ratio = (uint32_t)n;
		break;
	case OPT_HANG:
		if (!strcmp(optarg, "off")) {
			o->hang_ns = 0;
		} else if (ls_parse_duration(optarg, &o->hang_ns) || !o->hang_ns) {
			ls_err("top: bad --hang '%s' (a duration such as 1s, or off)", optarg);
			return 2;
		}
		break;
	case 'v':
		ls_verbose_enabled = true;
		break;
	case 'h':
		top_help();
		return -1;
	case ':':
		ls_err("top: option '%s' needs a value (see latsnap top --help)", argv[optind - 1]);
		return 2;
	default:
		ls_err("top: unknown option '%s' (see latsnap top --help)", argv[optind - 1]);
		return 2;
	}
	return 0;
}

/**
 * top_parse_args() - the options of `latsnap top`, over their defaults
 * @o: receives the settings
 * @argc: argument count, the command name included
 * @argv: "top", then the options
 *
 * Return: 0; 2 on a usage error, said on stderr; -1 when the run is over (--help printed).
 */
int top_parse_args(struct top_opts *o, int argc, char **argv)
{
	struct option longopts[NR_TOP_OPTIONS + 1];
	char shortopts[sizeof(":") + 2 * NR_TOP_OPTIONS];
	int c, ret;

	o->interval_ns = 5000000000ull;
	o->sample_below_ns = 1000000;
	o->sample_ratio = 100;
	o->hang_ns = 1000000000ull;
	opterr = 0;
	optind = 1;
	ls_options_getopt(top_options, NR_TOP_OPTIONS, ":", longopts, shortopts);
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = parse_option(o, c, argv);
		if (ret) {
			return ret;
		}
	}
	if (optind < argc) {
		ls_err("top: unexpected argument '%s' (see latsnap top --help)", argv[optind]);
		return 2;
	}
	if (o->json && !o->batch) {
		ls_err("top: --json needs --batch N (the live screen is not JSON)");
		return 2;
	}
	return 0;
}
