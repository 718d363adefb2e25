// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_summary.c - libFuzzer harness of the summary.json reader (snapshots_parse_summary()).
 *
 * Whatever the bytes, the reader must return 0 with a summary or an error with a reason that
 * names the file, and a summary it accepts must be safe to walk with the accessors that report,
 * show and flame use without re-checking types.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "review/snapshots.h"

static void walk_frames(struct json_object *frames)
{
	size_t i, n = frames ? json_object_array_length(frames) : 0;
	struct json_object *f;

	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(frames, i);
		if (!snapshots_str(f, "addr", NULL) || !snapshots_str(f, "module", NULL)) {
			abort();
		}
		(void)snapshots_str(f, "symbol", NULL);
		(void)snapshots_is_glue_frame(f);
	}
	if (snapshots_kernel_skip(frames) > n) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *summary = NULL, *outliers, *o, *stacks, *user = NULL;
	char why[512] = "";
	size_t i, j, n;
	int ret;

	ret = snapshots_parse_summary((const char *)data, size, "F", &summary, why, sizeof(why));
	if (ret) {
		/* An error always says which file and why. */
		if (summary || strncmp(why, "F: ", 3) || strlen(why) < 4) {
			abort();
		}
		return 0;
	}
	outliers = snapshots_arr(summary, "outliers");
	if (!outliers || snapshots_i64(summary, "version") != 1) {
		abort();
	}
	n = json_object_array_length(outliers);
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(outliers, i);
		if (snapshots_i64(o, "duration_ns") < 0 || !snapshots_str(o, "cause", NULL)) {
			abort();
		}
		stacks = snapshots_arr(o, "kernel_stacks");
		for (j = 0; stacks && j < json_object_array_length(stacks); j++) {
			walk_frames(snapshots_arr(json_object_array_get_idx(stacks, j), "frames"));
		}
		if (!json_object_object_get_ex(o, "user_stack", &user) || !user) {
			abort();
		}
		walk_frames(snapshots_arr(user, "frames"));
	}
	json_object_put(summary);
	return 0;
}
