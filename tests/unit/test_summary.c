// SPDX-License-Identifier: GPL-2.0
/*
 * summary.json's one module (lib/summary.c): what summary_format() writes, summary_parse() reads
 * back the same and writes again byte for byte; the strict reader says which member of an
 * outlier is of the wrong type in the words outlier_from_json_at() refuses it with (the one
 * check of a member's type); and the lenient reader of record's retention takes an earlier
 * run's summary the strict one refuses, as far as the policy needs it.
 */
#include <json-c/json.h>

#include "lib/outlier.h"
#include "lib/summary.h"
#include "tap.h"

/* An outlier as the contract has it, with a holder, a state and a deadlock. */
static const char outlier_text[] =
	"{\"kind\":\"syscall\",\"pid\":10,\"tid\":11,\"comm\":\"w\",\"syscall\":\"futex\","
	"\"syscall_nr\":202,\"start_ns\":100,\"end_ns\":300,\"duration_ns\":200,\"on_cpu_ns\":10,"
	"\"blocked_ns\":180,\"runqueue_ns\":10,\"switches\":1,\"cause\":\"Lock\","
	"\"kernel_stacks\":[],\"user_stack\":{\"source\":\"none\",\"frames\":[]},\"waker\":null,"
	"\"holder\":{\"pid\":10,\"tid\":12,\"comm\":\"h\",\"what\":null,\"state\":null,"
	"\"frames\":[{\"addr\":\"0x1\",\"symbol\":null,\"offset\":0,\"module\":null}],"
	"\"kernel_frames\":[]},"
	"\"wait_chain\":[],\"signalled\":false,\"state\":\"still-blocked\","
	"\"deadlock\":{\"threads\":[{\"pid\":10,\"tid\":11,\"comm\":\"w\"}]},\"flags\":[\"f\"]}";

static char *summary_with(const char *outlier)
{
	char *text;

	if (asprintf(&text,
		     "{\"version\":1,\"id\":\"A\",\"host\":\"h\",\"created\":\"2026-01-01T00:00:00Z\","
		     "\"trace\":\"trace\",\"outliers\":[%s],\"skipped\":0,\"flags\":[]}",
		     outlier) < 0) {
		bail_out("out of memory");
	}
	return text;
}

/* The writer's text, read back and written again, is the same text. */
static void test_round_trip(void)
{
	struct json_object *obj = json_tokener_parse(outlier_text);
	struct summary_idle idle = { 1, 2, (char *)"c", (char *)"read in main", 3, 4 };
	char *flags[] = { (char *)"trace-lost: 1", (char *)"a/b" };
	struct outlier *o = NULL;
	struct summary written = {
		.id = (char *)"20260101T000000.000Z-0001",
		.host = (char *)"h",
		.created = (char *)"2026-01-01T00:00:00Z",
		.trace = (char *)"trace",
		.skipped = 5,
		.flags = flags,
		.nr_flags = 2,
		.idle = &idle,
		.nr_idle = 1,
	};
	struct summary *s = NULL;
	char why[512] = "", *text, *again;

	if (!obj || outlier_from_json(obj, &o)) {
		bail_out("the test outlier does not read");
	}
	written.outliers = &o;
	written.nr_outliers = 1;
	text = summary_format(&written);
	ok(text && !strncmp(text, "{\n  \"version\":1,\n  \"id\":", 24),
	   "summary_format(): version first, then id");
	ok(text && strstr(text, "\"flags\":[\n    \"trace-lost: 1\",\n    \"a/b\"\n  ]"),
	   "the flags, a slash not escaped");
	is_int(summary_parse(text, strlen(text), "S", SUMMARY_STRICT, &s, why, sizeof(why)), 0,
	       "what it writes reads strictly");
	ok(s && s->nr_outliers == 1 && s->skipped == 5 && s->nr_flags == 2 && s->nr_idle == 1 &&
		   !strcmp(s->idle[0].site, "read in main") && s->idle[0].total_ns == 4,
	   "  with its outlier, skipped, flags and idle entry");
	ok(s && s->nr_outliers == 1 && s->outliers[0]->state == OUTLIER_STILL_BLOCKED &&
		   s->outliers[0]->deadlock && s->outliers[0]->holder,
	   "  the outlier's state, deadlock and holder typed");
	again = s ? summary_format(s) : NULL;
	is_str(again, text, "written again, the same text");
	free(again);
	free(text);
	summary_free(s);
	outlier_free(o);
	json_object_put(obj);
}

/* A member of the wrong type: the outlier is left out, in outlier_from_json_at()'s words. */
static void test_refused(void)
{
	static const struct {
		const char *from, *to, *why;
	} bad[] = {
		{ "\"holder\":{\"pid\":10", "\"holder\":{\"pid\":\"10\"",
		  "outlier 0: holder: pid is not an integer" },
		{ "\"holder\":{", "\"holder\":7,\"x\":{",
		  "outlier 0: holder is neither null nor an object" },
		{ "{\"addr\":\"0x1\",", "{", "outlier 0: holder's frames: frame 0 has no addr" },
		{ "\"still-blocked\"", "\"paused\"",
		  "outlier 0: state is not ended, still-blocked or unfinished" },
		{ "\"still-blocked\"", "2", "outlier 0: state is not a string" },
		{ "\"deadlock\":{", "\"deadlock\":7,\"x\":{",
		  "outlier 0: deadlock is neither null nor {\"threads\": [...]}" },
		/* Without "state" (a summary from before it), "deadlock" is still checked. */
		{ "\"state\":\"still-blocked\",\"deadlock\":{", "\"deadlock\":7,\"x\":{",
		  "outlier 0: deadlock is neither null nor {\"threads\": [...]}" },
		{ "\"threads\":[{", "\"threads\":[7,{",
		  "outlier 0: deadlock thread 0 is not an object" },
		{ "\"threads\":[{\"pid\":10", "\"threads\":[{\"pid\":\"10\"",
		  "outlier 0: deadlock thread 0: pid is not an integer" },
		{ "\"flags\":[\"f\"]", "\"flags\":[1]", "outlier 0: flag 0 is not a string" },
		{ "\"switches\":1,", "\"switches\":1,\"args\":[1],",
		  "outlier 0: args is not six integers" },
		{ "\"signalled\":false", "\"signalled\":0",
		  "outlier 0: signalled is not a boolean" },
	};
	struct summary *s = NULL;
	char why[512], expect[512], *text, *outlier;
	const char *at;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		at = strstr(outlier_text, bad[i].from);
		if (!at || asprintf(&outlier, "%.*s%s%s", (int)(at - outlier_text), outlier_text,
				    bad[i].to, at + strlen(bad[i].from)) < 0) {
			bail_out("test bug: '%s' not in the outlier", bad[i].from);
		}
		text = summary_with(outlier);
		is_int(summary_parse(text, strlen(text), "S", SUMMARY_STRICT, &s, why, sizeof(why)),
		       0, "'%s' -> '%s': the summary reads", bad[i].from, bad[i].to);
		snprintf(expect, sizeof(expect), "S: %s (1 of 1 outliers skipped)", bad[i].why);
		is_str(s ? s->outliers_why : NULL, expect, "  without the outlier, saying why");
		summary_free(s);
		s = NULL;
		free(text);
		free(outlier);
	}
}

/* A summary from before "state": its "deadlock" is checked, but only a cause says deadlock. */
static void test_before_state(void)
{
	static const char from[] = "\"state\":\"still-blocked\",";
	const char *at = strstr(outlier_text, from);
	struct summary *s = NULL;
	char why[512], *outlier, *text;

	if (!at || asprintf(&outlier, "%.*s%s", (int)(at - outlier_text), outlier_text,
			    at + strlen(from)) < 0) {
		bail_out("test bug: no state in the outlier");
	}
	text = summary_with(outlier);
	is_int(summary_parse(text, strlen(text), "S", SUMMARY_STRICT, &s, why, sizeof(why)), 0,
	       "an outlier without state reads");
	ok(s && s->nr_outliers == 1 && !s->outliers[0]->deadlock &&
		   s->outliers[0]->state == OUTLIER_ENDED,
	   "  ended, and no deadlock: its cause is not one");
	summary_free(s);
	free(text);
	free(outlier);
}

/* Retention's reading: no version or host needed, an outlier is its cause and duration. */
static void test_lenient(void)
{
	static const char earlier[] = "{\"created\":\"2024-01-31T23:59:59Z\",\"outliers\":["
				      "{\"cause\":\"X\",\"duration_ns\":7,\"pid\":\"odd\"},"
				      "{\"cause\":null,\"duration_ns\":-1}]}\f";
	static const char *const refused[] = {
		"{\"outliers\":[{\"cause\":\"X\"}]}",
		"{\"outliers\":[3]}",
		"{\"outliers\":{}}",
		"[]",
	};
	struct summary *s = NULL;
	char why[512];
	size_t i;

	is_int(summary_parse(earlier, strlen(earlier), "S", SUMMARY_STRICT, &s, why, sizeof(why)),
	       -EBADMSG, "an earlier run's odd summary is refused strictly");
	is_int(summary_parse(earlier, strlen(earlier), "S", SUMMARY_LENIENT, &s, why, sizeof(why)),
	       0, "and read leniently");
	ok(s && s->nr_outliers == 2 && !strcmp(s->outliers[0]->cause, "X") &&
		   s->outliers[0]->duration_ns == 7 && !s->outliers[0]->pid,
	   "  its first outlier: cause X, 7 ns, nothing else read");
	ok(s && s->nr_outliers == 2 && !s->outliers[1]->cause && !s->outliers[1]->duration_ns,
	   "  its second: no cause, a negative duration read as 0");
	is_str(s ? s->created : NULL, "2024-01-31T23:59:59Z", "  created");
	summary_free(s);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		s = NULL;
		is_int(summary_parse(refused[i], strlen(refused[i]), "S", SUMMARY_LENIENT, &s, why,
				     sizeof(why)),
		       -EBADMSG, "lenient, but no summary: %s", refused[i]);
		ok(!s && !strncmp(why, "S: ", 3), "  nothing returned, the file named: %s", why);
	}
}

int main(void)
{
	test_round_trip();
	test_refused();
	test_before_state();
	test_lenient();
	return tap_done();
}
