// SPDX-License-Identifier: GPL-2.0
/*
 * latsnap.c - the entry point: a thin dispatcher to the modules' commands.
 */
#include <stdio.h>
#include <string.h>

#include "review/export.h"
#include "review/flame.h"
#include "recorder/record.h"
#include "review/report.h"
#include "classify/rules.h"
#include "review/show.h"
#include "recorder/status.h"
#include "top/top.h"
#include "lib/util.h"


struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", record_main, "find slow syscalls and sleeps, and say where they waited" },
	{ "rules", rules_main, "print the built-in cause rules, a starting --rules file" },
	{ "report", report_main, "a LatencyTOP-style table of the outliers of saved snapshots" },
	{ "show", show_main, "one snapshot for people: split, cause, stacks, timeline" },
	{ "flame", flame_main, "folded stacks (or an SVG flame graph) of saved snapshots" },
	{ "export", export_main, "a snapshot's events for other tools (Perfetto / Chrome JSON)" },
	{ "top", top_main, "a live LatencyTOP screen of every wait on the machine" },
	{ "status", status_main, "what a running latsnap record is doing (its status.json)" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	const struct command *cmd;

	fputs("Usage: latsnap COMMAND [OPTIONS]\n"
	      "\n"
	      "A latency flight recorder: when a thread blocks too long in a syscall or off CPU,\n"
	      "latsnap says why, with the evidence.\n"
	      "\n"
	      "Commands:\n",
	      out);
	for (cmd = commands; cmd->name; cmd++) {
		fprintf(out, "  %-8s %s\n", cmd->name, cmd->summary);
	}
	fputs("\n"
	      "  latsnap COMMAND --help    options of one command\n"
	      "  latsnap --version         the version\n"
	      "\n"
	      "Example: latsnap record --threshold 20ms -- ./server\n"
	      "See latsnap(1).\n",
	      out);
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("latsnap %s\n", LATSNAP_VERSION);
		return 0;
	}
	for (cmd = commands; cmd->name; cmd++) {
		if (!strcmp(argv[1], cmd->name)) {
			return cmd->main(argc - 1, argv + 1);
		}
	}
	ls_err("unknown command '%s' (see latsnap --help)", argv[1]);
	return 2;
}
