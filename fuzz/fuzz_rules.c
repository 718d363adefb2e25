// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_rules.c - libFuzzer harness of the cause rules: the file parser (rules_load(), as
 * `record --rules FILE` reads it) and rules_classify() on the outliers it is given.
 *
 * Input: the rules file, optionally followed by a NUL byte and one OUTLIER object as JSON; without
 * it the rules classify a fixed outlier. An accepted file must classify any outlier to a cause
 * text of at most RULES_MAX_CAUSE bytes, the built-in rules any fuzzed outlier.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz_common.h"
#include "classify/rules.h"
#include "lib/outlier.h"

static const char fixed_outlier[] =
	"{\"kind\":\"syscall\",\"syscall\":\"read\",\"duration_ns\":100000000,"
	"\"runqueue_ns\":1000,\"kernel_stacks\":[{\"weight_ns\":90000000,\"frames\":["
	"{\"symbol\":\"schedule\"},{\"symbol\":\"pipe_read\"},{\"symbol\":\"vfs_read\"}]},"
	"{\"weight_ns\":10000000,\"frames\":[{\"symbol\":\"schedule\"},"
	"{\"symbol\":\"mutex_lock\"}]}],"
	"\"user_stack\":{\"frames\":[{\"symbol\":\"main\"},{\"symbol\":null}]}}";

static struct rules *builtin;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stderr();
	builtin = rules_builtin();
	if (!builtin) {
		abort();
	}
	return 0;
}

static void check_match(const struct rules *rules, const struct outlier *outlier)
{
	struct rules_match m = { 0 };

	rules_classify(rules, outlier, &m);
	if (!m.cause) {
		abort();
	}
	/* Fallback causes are syscall names, which come from the outlier and are not bounded. */
	if (m.categorized && strlen(m.cause) > RULES_MAX_CAUSE) {
		abort();
	}
	if (m.priority < 0 || m.priority > RULES_PRIORITY_MAX) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t rules_len = nul ? (size_t)(nul - data) : size;
	struct json_object *obj = NULL;
	struct outlier *outlier = NULL;
	struct rules *rules = NULL;
	json_tokener *tok;
	int ret;

	if (nul) {
		tok = json_tokener_new_ex(32);
		obj = json_tokener_parse_ex(tok, (const char *)nul + 1, (int)(size - rules_len - 1));
		json_tokener_free(tok);
	}
	/* An outlier of the wrong shape never reaches the rules: outlier_from_json() refuses it. */
	if (!obj || outlier_from_json(obj, &outlier)) {
		json_object_put(obj);
		obj = json_tokener_parse(fixed_outlier);
		if (outlier_from_json(obj, &outlier)) {
			abort();
		}
	}

	ret = rules_load(fuzz_input_path(data, rules_len), &rules);
	if (ret) {
		if (rules || ret > 0) {
			abort();
		}
	} else {
		if (!rules) {
			abort();
		}
		(void)rules_count(rules);
		check_match(rules, outlier);
		rules_free(rules);
	}
	check_match(builtin, outlier);
	check_match(NULL, outlier);
	outlier_free(outlier);
	json_object_put(obj);
	return 0;
}
