// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_report.c - libFuzzer harness of `latsnap report` over an output directory of two
 * snapshots whose summary.json files are the input: the reader, then the grouping by cause,
 * process or syscall, the histograms and both outputs (text and --json) over whatever the reader
 * accepts.
 *
 * Input: the first summary.json, optionally a line "%%" and the second. The first byte picks
 * --json (bit 0) and the grouping (bits 1-2).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "review/report.h"

#define SEPARATOR "\n%%\n"

static char out_dir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/latsnap-fuzz-report-XXXXXX", snap[128];
	int i;

	(void)argc;
	(void)argv;
	fuzz_quiet_stderr();
	if (!freopen("/dev/null", "w", stdout)) {
		abort();
	}
	fuzz_mkdtemp(dir);
	snprintf(out_dir, sizeof(out_dir), "%s", dir);
	for (i = 1; i <= 2; i++) {
		snprintf(snap, sizeof(snap), "%s/20260101T000000.000Z-000%d", out_dir, i);
		if (mkdir(snap, 0700)) {
			abort();
		}
	}
	return 0;
}

static void write_summary(int i, const char *text, size_t len)
{
	char file[160];
	int fd;

	snprintf(file, sizeof(file), "%s/20260101T000000.000Z-000%d/summary.json", out_dir, i);
	if (!text) {
		unlink(file);
		return;
	}
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		abort();
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const by[] = { "cause", "process", "syscall", "cause" };
	const char *text = (const char *)data, *sep;
	char *argv[6];
	int argc = 0, ret;

	sep = memmem(text, size, SEPARATOR, strlen(SEPARATOR));
	write_summary(1, text, sep ? (size_t)(sep - text) : size);
	if (sep) {
		write_summary(2, sep + strlen(SEPARATOR),
			      size - (size_t)(sep - text) - strlen(SEPARATOR));
	} else {
		write_summary(2, NULL, 0);
	}
	argv[argc++] = "report";
	if (size && (data[0] & 1)) {
		argv[argc++] = "--json";
	}
	argv[argc++] = "--by";
	argv[argc++] = (char *)by[size ? (data[0] >> 1) & 3 : 0];
	argv[argc++] = out_dir;
	argv[argc] = NULL;
	ret = report_main(argc, argv);
	/* A bad summary is reported, never a usage error. */
	if (ret != 0 && ret != 1) {
		abort();
	}
	return 0;
}
