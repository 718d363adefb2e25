// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_args.c - libFuzzer harness of `latsnap record`'s command line and of the argument
 * parsers behind it: durations (ls_parse_duration(), and ls_format_duration() of what it
 * accepts), pids (ls_parse_pid()), signals, stack-log modes and syscall lists.
 *
 * Input: NUL-separated arguments after "record". Each argument is also given to each value
 * parser on its own, and an accepted duration must format into LS_DURATION_BUFSZ bytes. The
 * harness never reads a file: -c/--config arguments are dropped.
 */
#include "recorder/record-opts.c"

#include "fuzz_common.h"

#define MAX_ARGS 32

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stderr();
	/* --help prints the usage on stdout. */
	if (!freopen("/dev/null", "w", stdout)) {
		abort();
	}
	return 0;
}

static void parse_alone(const char *arg)
{
	char buf[LS_DURATION_BUFSZ + 8], bad[64];
	unsigned char idle[LS_MAX_SYSCALLS];
	enum stacklog_mode mode;
	uint64_t ns;
	int pid = -1;

	memset(buf, 'X', sizeof(buf));
	if (!ls_parse_duration(arg, &ns)) {
		ls_format_duration(ns, buf, LS_DURATION_BUFSZ);
		if (memchr(buf, '\0', LS_DURATION_BUFSZ) == NULL || buf[LS_DURATION_BUFSZ] != 'X') {
			abort();
		}
	}
	if (!ls_parse_pid(arg, &pid) && pid < 1) {
		abort();
	}
	(void)ls_parse_signal(arg);
	(void)stacklog_parse_mode(arg, &mode);
	memset(idle, 0, sizeof(idle));
	(void)syscall_parse_list(arg, idle, LS_MAX_SYSCALLS, bad, sizeof(bad));
	(void)parse_size(arg, &ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = fuzz_strndup(data, size), *argv[MAX_ARGS + 2], *p = copy;
	struct record_opts opts;
	int argc = 0, i;

	argv[argc++] = "record";
	while (p <= copy + size && argc < MAX_ARGS + 1) {
		parse_alone(p);
		if (strncmp(p, "-c", 2) && strncmp(p, "--c", 3)) {
			argv[argc++] = p;
		}
		p += strlen(p) + 1;
	}
	argv[argc] = NULL;

	set_defaults(&opts);
	(void)parse_args(&opts, argc, argv);
	if (opts.nr_pids < 0 || opts.nr_pids > RECORD_MAX_PIDS) {
		abort();
	}
	for (i = 0; i < opts.nr_owned; i++) {
		free(opts.owned[i]);
	}
	free(copy);
	return 0;
}
