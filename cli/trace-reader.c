// SPDX-License-Identifier: GPL-2.0
/*
 * trace-reader.c - latsnap-trace-reader, the process in which latsnap reads a CTF trace with
 * libbabeltrace2 (trace/ctf-reader.c), started by trace/ctf.c and by nothing else.
 *
 * Usage: latsnap-trace-reader PARENT_PID FIELDS VERBOSE DIR [PREFIX]
 * (FIELDS, VERBOSE: 0 or 1). The events go to stdout, one JSON line each.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/ctf-reader.h"

int main(int argc, char **argv)
{
	char *end;
	long parent;

	if (argc < 5 || argc > 6) {
		fprintf(stderr, "latsnap-trace-reader: latsnap's own helper, not a command: see "
				"latsnap(1)\n");
		return 2;
	}
	parent = strtol(argv[1], &end, 10);
	if (*end || parent <= 0) {
		return 2;
	}
	ctf_reader_main(argv[4], argc == 6 ? argv[5] : NULL, !strcmp(argv[2], "1"),
			!strcmp(argv[3], "1"), (pid_t)parent, STDOUT_FILENO);
}
