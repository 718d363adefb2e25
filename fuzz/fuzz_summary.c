// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_summary.c - libFuzzer harness of the summary.json reader (lib/summary.c's
 * summary_parse(), strict as review reads and lenient as record's retention does).
 *
 * Whatever the bytes, the reader must return 0 with a summary or an error with a reason that
 * names the file, and a summary it accepts must be typed whole: every outlier read into its
 * struct outlier, safe to walk as report, show and flame do, and written back by
 * summary_outlier_to_json() into an OUTLIER that outlier_from_json() reads again. A summary
 * the lenient reader accepts has a cause (possibly none) and a duration for each outlier.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/outlier.h"
#include "lib/summary.h"
#include "review/snapshots.h"

static void walk_frames(const struct outlier_frames *frames)
{
	size_t i;

	for (i = 0; i < frames->nr; i++) {
		/* Symbol and module may both be null: JIT code, a freed Python code object. */
		(void)snapshots_is_glue_frame(&frames->v[i]);
	}
	if (snapshots_kernel_skip(frames) > frames->nr) {
		abort();
	}
}

static void walk_outlier(const struct summary *s, size_t idx)
{
	const struct outlier *o = s->outliers[idx];
	struct json_object *obj;
	struct outlier *back;
	size_t j;

	if (!o || !o->comm || !o->cause || (int64_t)o->duration_ns < 0) {
		abort();
	}
	for (j = 0; j < o->nr_kernel_stacks; j++) {
		walk_frames(&o->kernel_stacks[j].frames);
	}
	walk_frames(&o->user_stack.frames);
	if (o->waker) {
		walk_frames(&o->waker->frames);
	}
	for (j = 0; j < o->nr_links; j++) {
		walk_frames(&o->wait_chain[j].frames);
	}
	/* What show --json writes of it reads back. */
	obj = summary_outlier_to_json(s, idx);
	if (!obj || outlier_from_json(obj, &back)) {
		abort();
	}
	outlier_free(back);
	json_object_put(obj);
}

/* What retention reads of an earlier run's summary: each outlier, a cause or none. */
static void read_lenient(const uint8_t *data, size_t size)
{
	struct summary *summary = NULL;
	char why[512] = "";
	size_t i;

	if (summary_parse((const char *)data, size, "F", SUMMARY_LENIENT, &summary, why,
			  sizeof(why))) {
		if (summary || strncmp(why, "F: ", 3)) {
			abort();
		}
		return;
	}
	for (i = 0; i < summary->nr_outliers; i++) {
		if (!summary->outliers[i] || (int64_t)summary->outliers[i]->duration_ns < 0) {
			abort();
		}
	}
	summary_free(summary);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct summary *summary = NULL;
	struct json_object *obj;
	char why[512] = "";
	size_t i;
	int ret;

	read_lenient(data, size);
	ret = summary_parse((const char *)data, size, "F", SUMMARY_STRICT, &summary, why,
			    sizeof(why));
	if (ret) {
		/* An error always says which file and why. */
		if (summary || strncmp(why, "F: ", 3) || strlen(why) < 4) {
			abort();
		}
		return 0;
	}
	if (!summary->id || !summary->host) {
		abort();
	}
	for (i = 0; i < summary->nr_outliers; i++) {
		walk_outlier(summary, i);
	}
	for (i = 0; i < summary->nr_flags; i++) {
		if (!summary->flags[i]) {
			abort();
		}
	}
	obj = summary_to_json(summary, NULL);
	if (!obj) {
		abort();
	}
	json_object_put(obj);
	summary_free(summary);
	return 0;
}
