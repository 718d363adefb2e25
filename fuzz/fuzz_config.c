// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_config.c - libFuzzer harness of the settings file as `latsnap record -c FILE` reads it:
 * ls_config_load() with record's own callback, so every value parser behind a key (durations,
 * sizes, pids, signals, syscall lists, stack-log modes, booleans) sees the fuzzed values too.
 *
 * record-opts.c is included for its static option table and callback; the harness calls nothing
 * that starts tracing.
 */
#include "recorder/record-opts.c"

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stderr();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record_opts opts;
	int ret, i;

	set_defaults(&opts);
	ret = ls_config_load(fuzz_input_path(data, size), config_line, &opts);
	if (ret > 0) {
		abort();
	}
	if (!ret) {
		/* What was accepted holds together: the checks record makes after loading. */
		if (!opts.threshold_ns || opts.nr_pids < 0 || opts.nr_pids > RECORD_MAX_PIDS ||
		    opts.nr_owned > (int)(sizeof(opts.owned) / sizeof(opts.owned[0]))) {
			abort();
		}
		for (i = 0; i < opts.nr_pids; i++) {
			if (opts.pids[i] < 1) {
				abort();
			}
		}
		if (!opts.output || !*opts.output) {
			abort();
		}
	}
	for (i = 0; i < opts.nr_owned; i++) {
		free(opts.owned[i]);
	}
	return 0;
}
