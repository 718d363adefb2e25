// SPDX-License-Identifier: GPL-2.0
/*
 * summary.c - summary.json: written once (summary_format(), for record), read and checked once
 * (summary_parse(), for review and for record's retention).
 *
 * A summary is checked whole, then read into a struct summary whose outliers are struct outlier
 * (lib/outlier.h, which reads and writes OUTLIER and refuses a member of the wrong type): report,
 * show and flame read typed fields. A file written by another version, cut short by a full disk,
 * or edited by hand is named as corrupt with the first thing wrong in it; a bad outlier or idle
 * entry costs only itself.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/outlier.h"
#include "lib/summary.h"
#include "lib/text.h"

/* A summary nests 6 levels (outliers, outlier, kernel_stacks, stack, frames, frame); leave room. */
#define SUMMARY_DEPTH 16

/* The members of summary.json around its outliers, spelled once for the writer and the reader. */
#define KEY_VERSION "version"
#define KEY_ID "id"
#define KEY_HOST "host"
#define KEY_CREATED "created"
#define KEY_TRACE "trace"
#define KEY_OUTLIERS "outliers"
#define KEY_SKIPPED "skipped"
#define KEY_FLAGS "flags"
#define KEY_IDLE "idle"
#define KEY_HELD "held_back"
#define KEY_DROPPED "dropped_at_source"
/* An idle entry's. */
#define KEY_PID "pid"
#define KEY_TID "tid"
#define KEY_COMM "comm"
#define KEY_COUNT "count"
#define KEY_TOTAL_NS "total_ns"
#define KEY_SITE "site"
/* An outlier's that the retention policy reads in an earlier run's summary. */
#define KEY_CAUSE "cause"
#define KEY_DURATION_NS "duration_ns"

/*
 * The members of a summary as read, for the checks below: once checked, a summary is read
 * through its typed struct summary, never through these.
 */
static int64_t get_i64(struct json_object *obj, const char *key)
{
	struct json_object *v;
	int64_t ret = 0;

	if (obj && json_object_object_get_ex(obj, key, &v) &&
	    json_object_is_type(v, json_type_int)) {
		ret = json_object_get_int64(v);
	}
	return ret;
}

static const char *get_str(struct json_object *obj, const char *key, const char *fallback)
{
	struct json_object *v;
	const char *ret = fallback;

	if (obj && json_object_object_get_ex(obj, key, &v) &&
	    json_object_is_type(v, json_type_string)) {
		ret = json_object_get_string(v);
	}
	return ret;
}

static struct json_object *get_arr(struct json_object *obj, const char *key)
{
	struct json_object *v;
	struct json_object *ret = NULL;

	if (obj && json_object_object_get_ex(obj, key, &v) &&
	    json_object_is_type(v, json_type_array)) {
		ret = v;
	}
	return ret;
}

static bool is_type(struct json_object *obj, const char *key, json_type type, bool nullable)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v)) {
		return false;
	}
	if (!v) {
		return nullable;
	}
	return json_object_is_type(v, type);
}

/* @key absent, null, or of @type. */
static bool is_optional(struct json_object *obj, const char *key, json_type type)
{
	return !json_object_object_get_ex(obj, key, NULL) || is_type(obj, key, type, true);
}

static bool is_count(struct json_object *obj, const char *key)
{
	return is_type(obj, key, json_type_int, false) && get_i64(obj, key) >= 0;
}

/* Checks a FRAME; on failure @why says what, after @where. */
static bool check_frames(struct json_object *frames, const char *where, char *why, size_t len)
{
	struct json_object *f;
	bool ok = false;
	size_t i, n;

	if (!frames || !json_object_is_type(frames, json_type_array)) {
		snprintf(why, len, "%s: frames is not an array", where);
		goto out;
	}
	n = json_object_array_length(frames);
	for (i = 0; i < n; i++) {
		f = json_object_array_get_idx(frames, i);
		if (!f || !json_object_is_type(f, json_type_object) ||
		    !is_type(f, "addr", json_type_string, false)) {
			snprintf(why, len, "%s: frame %zu has no addr", where, i);
			goto out;
		}
		/*
		 * Only the address is certain: JIT code, anonymous memory and stripped objects
		 * have no symbol, and code outside any mapped file no module (null or absent).
		 */
		if (!is_optional(f, "symbol", json_type_string) ||
		    !is_optional(f, "module", json_type_string)) {
			snprintf(why, len,
				 "%s: frame %zu: symbol or module is not a string or null", where,
				 i);
			goto out;
		}
		if (json_object_object_get_ex(f, "offset", NULL) && !is_count(f, "offset")) {
			snprintf(why, len, "%s: frame %zu: offset is not a count", where, i);
			goto out;
		}
		/* An interpreter's frame (CPython) says its line; 0 when it is not known. */
		if (json_object_object_get_ex(f, "line", NULL) &&
		    (!is_count(f, "line") || get_i64(f, "line") > UINT32_MAX)) {
			snprintf(why, len, "%s: frame %zu: line is not a count", where, i);
			goto out;
		}
	}
	ok = true;
out:
	return ok;
}

static bool check_kernel_stacks(struct json_object *o, size_t idx, char *why, size_t len)
{
	struct json_object *stacks = get_arr(o, "kernel_stacks"), *s;
	char where[96];
	size_t i, n;

	if (!stacks) {
		snprintf(why, len, "outlier %zu: kernel_stacks is not an array", idx);
		return false;
	}
	n = json_object_array_length(stacks);
	for (i = 0; i < n; i++) {
		s = json_object_array_get_idx(stacks, i);
		snprintf(where, sizeof(where), "outlier %zu: kernel stack %zu", idx, i);
		if (!s || !json_object_is_type(s, json_type_object) || !is_count(s, "weight_ns")) {
			snprintf(why, len, "%s: weight_ns is not a non-negative integer", where);
			return false;
		}
		if (!check_frames(get_arr(s, "frames"), where, why, len)) {
			return false;
		}
	}
	return true;
}

/* The user stack, and the waker (null or absent: nobody known). */
static bool check_user_and_waker(struct json_object *o, size_t idx, char *why, size_t len)
{
	struct json_object *v;
	char where[96];

	snprintf(where, sizeof(where), "outlier %zu: user_stack", idx);
	if (!json_object_object_get_ex(o, "user_stack", &v) || !v ||
	    !json_object_is_type(v, json_type_object) ||
	    !is_type(v, "source", json_type_string, false) ||
	    !check_frames(get_arr(v, "frames"), where, why, len)) {
		if (!*why) {
			snprintf(why, len, "%s is not an object with a source and frames", where);
		}
		return false;
	}
	snprintf(where, sizeof(where), "outlier %zu: waker", idx);
	if (json_object_object_get_ex(o, "waker", &v) && v &&
	    (!json_object_is_type(v, json_type_object) || !is_count(v, "tid") ||
	     !is_count(v, "pid") || !is_type(v, "comm", json_type_string, false) ||
	     !check_frames(get_arr(v, "frames"), where, why, len))) {
		if (!*why) {
			snprintf(why, len, "%s is neither null nor a thread with frames", where);
		}
		return false;
	}
	return true;
}

/* Absent from older summaries; when there, every link must be readable. */
static bool check_wait_chain(struct json_object *o, size_t idx, char *why, size_t len)
{
	struct json_object *chain, *v;
	char where[96];
	size_t i, n;

	if (!json_object_object_get_ex(o, "wait_chain", &chain) || !chain) {
		return true;
	}
	if (!json_object_is_type(chain, json_type_array)) {
		snprintf(why, len, "outlier %zu: wait_chain is not an array", idx);
		return false;
	}
	n = json_object_array_length(chain);
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(chain, i);
		snprintf(where, sizeof(where), "outlier %zu: wait_chain link %zu", idx, i);
		if (!v || !json_object_is_type(v, json_type_object) || !is_count(v, "tid") ||
		    !is_count(v, "pid") || !is_type(v, "comm", json_type_string, false)) {
			snprintf(why, len, "%s: tid, pid or comm missing", where);
			return false;
		}
		if (json_object_object_get_ex(v, "frames", NULL) &&
		    !check_frames(get_arr(v, "frames"), where, why, len)) {
			return false;
		}
	}
	return true;
}

/*
 * "holder" (record --hang): absent or null, or a thread whose stacks are [FRAME, ...] as the
 * contract has them (outlier_from_json_at() reads the rest of it, and refuses what it cannot).
 */
static bool check_holder(struct json_object *o, size_t idx, char *why, size_t len)
{
	static const char *const stacks[] = { "frames", "kernel_frames" };
	struct json_object *h, *v;
	char where[96];
	size_t i;

	if (!json_object_object_get_ex(o, "holder", &h) ||
	    !json_object_is_type(h, json_type_object)) {
		return true;
	}
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		snprintf(where, sizeof(where), "outlier %zu: holder's %s", idx, stacks[i]);
		if (json_object_object_get_ex(h, stacks[i], &v) && v &&
		    !check_frames(v, where, why, len)) {
			return false;
		}
	}
	return true;
}

/* Checks outlier @idx against the contract; on failure @why says what is wrong first. */
static bool check_outlier(struct json_object *o, size_t idx, char *why, size_t len)
{
	static const char *const ids[] = { "pid", "tid" };
	const char *key;
	size_t i;

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(why, len, "outlier %zu is not an object", idx);
		return false;
	}
	/* Its pid and tid, then its times (lib/outlier.c's keys). */
	for (i = 0; (key = i < 2 ? ids[i] : outlier_time_key(i - 2)); i++) {
		if (!is_count(o, key)) {
			snprintf(why, len, "outlier %zu: %s is not a non-negative integer", idx,
				 key);
			return false;
		}
	}
	if (!is_type(o, "kind", json_type_string, false) ||
	    !is_type(o, "comm", json_type_string, false) ||
	    !is_type(o, "cause", json_type_string, false)) {
		snprintf(why, len, "outlier %zu: kind, comm or cause is not a string", idx);
		return false;
	}
	if (json_object_object_get_ex(o, "syscall", NULL) &&
	    !is_type(o, "syscall", json_type_string, true)) {
		snprintf(why, len, "outlier %zu: syscall is neither a string nor null", idx);
		return false;
	}
	return check_kernel_stacks(o, idx, why, len) && check_user_and_waker(o, idx, why, len) &&
	       check_wait_chain(o, idx, why, len) && check_holder(o, idx, why, len);
}

/* Is @c white space that may follow the object? The lenient reader takes any, as it always did. */
static bool is_trailing_space(char c, enum summary_mode mode)
{
	return mode == SUMMARY_LENIENT ? isspace((unsigned char)c) : c && strchr(" \t\r\n", c);
}

/* The text of a summary.json into JSON (the caller's reference); @what says why not. */
static int parse_json(const char *text, size_t len, enum summary_mode mode,
		      struct json_object **out, char *what, size_t whylen)
{
	struct json_object *obj = NULL;
	enum json_tokener_error jerr;
	json_tokener *tok = NULL;
	int ret = -EBADMSG;
	size_t i, end;

	if (len > SUMMARY_MAX || len > (size_t)INT32_MAX) {
		snprintf(what, whylen, "larger than %u MiB", SUMMARY_MAX >> 20);
		goto out;
	}
	if (len == 0) {
		snprintf(what, whylen, "empty");
		goto out;
	}
	tok = json_tokener_new_ex(mode == SUMMARY_STRICT ? SUMMARY_DEPTH :
							   JSON_TOKENER_DEFAULT_DEPTH);
	if (!tok) {
		ret = -ENOMEM;
		snprintf(what, whylen, "%s", strerror(ENOMEM));
		goto out;
	}
	json_tokener_set_flags(tok, mode == SUMMARY_STRICT ? JSON_TOKENER_STRICT : 0);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue) {
		snprintf(what, whylen, "not JSON: it ends in the middle (truncated?)");
		goto out;
	}
	if (jerr != json_tokener_success) {
		snprintf(what, whylen, "not JSON: %s at byte %zu", json_tokener_error_desc(jerr),
			 end);
		goto out;
	}
	/* Trailing white space is fine; anything else after the object is not. */
	for (i = end; i < len && is_trailing_space(text[i], mode); i++) {
	}
	if (i < len) {
		snprintf(what, whylen, "not JSON: trailing bytes after the object at byte %zu", i);
		goto out;
	}
	*out = obj;
	obj = NULL;
	ret = 0;
out:
	json_object_put(obj);
	if (tok) {
		json_tokener_free(tok);
	}
	return ret;
}

/* The members before the outliers: version, id, host, skipped; @what says what is wrong first. */
static bool check_head(struct json_object *obj, char *what, size_t len)
{
	if (!is_type(obj, KEY_VERSION, json_type_int, false)) {
		snprintf(what, len, "no version");
		return false;
	}
	if (get_i64(obj, KEY_VERSION) != SUMMARY_VERSION) {
		snprintf(what, len, "version %" PRId64 ", this latsnap reads version %d",
			 get_i64(obj, KEY_VERSION), SUMMARY_VERSION);
		return false;
	}
	if (!is_type(obj, KEY_ID, json_type_string, false) ||
	    !is_type(obj, KEY_HOST, json_type_string, false)) {
		snprintf(what, len, "id or host is not a string");
		return false;
	}
	if (json_object_object_get_ex(obj, KEY_SKIPPED, NULL) && !is_count(obj, KEY_SKIPPED)) {
		snprintf(what, len, "skipped is not a count");
		return false;
	}
	return true;
}

/*
 * Checks the summary against the contract (leniently: only that it is an object with outliers);
 * on failure @what says what is wrong first.
 */
static bool check_summary(struct json_object *obj, enum summary_mode mode, char *what, size_t len)
{
	if (!json_object_is_type(obj, json_type_object)) {
		snprintf(what, len, "not a JSON object");
		return false;
	}
	if (mode == SUMMARY_STRICT && !check_head(obj, what, len)) {
		return false;
	}
	if (!get_arr(obj, KEY_OUTLIERS)) {
		snprintf(what, len, "outliers is not an array");
		return false;
	}
	return true;
}

/*
 * The snapshot's own flags. No check reads them (report and flame never do): a flag that is not
 * a string is shown as its JSON text, as show always did, rather than the summary refused.
 */
static int flags_from_json(struct json_object *arr, struct summary *s)
{
	size_t i, n = arr ? json_object_array_length(arr) : 0;
	const char *text;

	s->flags = calloc(n ? n : 1, sizeof(*s->flags));
	if (!s->flags) {
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		text = json_object_get_string(json_object_array_get_idx(arr, i));
		s->flags[i] = strdup(text ? text : "null");
		if (!s->flags[i]) {
			return -ENOMEM;
		}
		s->nr_flags++;
	}
	return 0;
}

/* Is idle entry @idx readable? If not, @what says what is wrong with it first. */
static bool check_idle_entry(struct json_object *e, size_t idx, char *what, size_t len)
{
	static const char *const counts[] = { KEY_PID, KEY_TID, KEY_COUNT, KEY_TOTAL_NS, NULL };
	static const char *const strings[] = { KEY_COMM, KEY_SITE, NULL };
	size_t i;

	if (!json_object_is_type(e, json_type_object)) {
		snprintf(what, len, "idle entry %zu is not an object", idx);
		return false;
	}
	for (i = 0; counts[i]; i++) {
		if (!is_count(e, counts[i])) {
			snprintf(what, len, "idle entry %zu: %s is not a non-negative integer", idx,
				 counts[i]);
			return false;
		}
	}
	/* pid and tid are int32_t, as an outlier's. */
	if (get_i64(e, KEY_PID) > INT32_MAX || get_i64(e, KEY_TID) > INT32_MAX) {
		snprintf(what, len, "idle entry %zu: pid or tid is out of range", idx);
		return false;
	}
	for (i = 0; strings[i]; i++) {
		if (!is_type(e, strings[i], json_type_string, false)) {
			snprintf(what, len, "idle entry %zu: %s is not a string", idx, strings[i]);
			return false;
		}
	}
	return true;
}

/* @s->idle_why: "@name: @what", and how many of the @n entries were left out (@bad). */
static int idle_damaged(struct summary *s, const char *name, const char *what, size_t bad, size_t n)
{
	int len;

	if (bad < n) {
		len = asprintf(&s->idle_why, "%s: %s (%zu of %zu idle entries skipped)", name, what,
			       bad, n);
	} else {
		len = asprintf(&s->idle_why, "%s: %s (no idle waits read)", name, what);
	}
	if (len < 0) {
		s->idle_why = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * The "idle" list of @obj (the summary read from @name) into @s: absent (a summary from before
 * issue 18) or null, none. Unlike an outlier, a bad entry does not make the summary corrupt: it
 * is left out, and @s->idle_why says what was wrong first, once for the whole file.
 */
static int idle_from_json(struct json_object *obj, struct summary *s, const char *name)
{
	struct json_object *arr, *e;
	struct summary_idle *d;
	size_t i, n, bad = 0;
	char what[256] = "";

	if (!json_object_object_get_ex(obj, KEY_IDLE, &arr) || !arr) {
		return 0;
	}
	if (!json_object_is_type(arr, json_type_array)) {
		return idle_damaged(s, name, "idle is not an array", 0, 0);
	}
	n = json_object_array_length(arr);
	s->idle = calloc(n ? n : 1, sizeof(*s->idle));
	if (!s->idle) {
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(arr, i);
		if (!check_idle_entry(e, i, bad ? NULL : what, bad ? 0 : sizeof(what))) {
			bad++;
			continue;
		}
		d = &s->idle[s->nr_idle];
		d->pid = (int32_t)get_i64(e, KEY_PID);
		d->tid = (int32_t)get_i64(e, KEY_TID);
		d->count = (uint64_t)get_i64(e, KEY_COUNT);
		d->total_ns = (uint64_t)get_i64(e, KEY_TOTAL_NS);
		if (outlier_set_str(&d->comm, get_str(e, KEY_COMM, NULL)) ||
		    outlier_set_str(&d->site, get_str(e, KEY_SITE, NULL))) {
			free(d->comm);
			free(d->site);
			return -ENOMEM;
		}
		s->nr_idle++;
	}
	return bad ? idle_damaged(s, name, what, bad, n) : 0;
}

/*
 * Outlier @idx as the contract has it: checked, then read (outlier_from_json_at() refuses a
 * member of the wrong type). -EINVAL, @what saying why, for a bad one.
 */
static int strict_outlier(struct json_object *o, size_t idx, struct outlier **out, char *what,
			  size_t len)
{
	char where[32];

	if (!check_outlier(o, idx, what, len)) {
		return -EINVAL;
	}
	snprintf(where, sizeof(where), "outlier %zu", idx);
	return outlier_from_json_at(o, where, out, what, len);
}

/*
 * Outlier @idx of an earlier run's summary as record's retention reads it (SUMMARY_LENIENT): its
 * cause (none unless it is a string) and its duration (a negative one is 0). One that is not an
 * object with an integer duration makes the summary none of ours: -EBADMSG.
 */
static int lenient_outlier(struct json_object *o, size_t idx, struct outlier **out, char *what,
			   size_t len)
{
	struct json_object *v;
	struct outlier *outlier;
	int64_t dur;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, KEY_DURATION_NS, &v) ||
	    !json_object_is_type(v, json_type_int)) {
		snprintf(what, len, "outlier %zu has no integer " KEY_DURATION_NS, idx);
		return -EBADMSG;
	}
	dur = json_object_get_int64(v);
	outlier = outlier_new();
	if (!outlier || outlier_set_cause(outlier, get_str(o, KEY_CAUSE, NULL))) {
		outlier_free(outlier);
		return -ENOMEM;
	}
	outlier->duration_ns = dur > 0 ? (uint64_t)dur : 0;
	*out = outlier;
	return 0;
}

/* The outliers of @obj (read from @name) into @s: a bad one is left out, and said once. */
static int outliers_from_json(struct json_object *obj, struct summary *s, const char *name,
			      enum summary_mode mode, char *what, size_t len)
{
	struct json_object *outliers = get_arr(obj, KEY_OUTLIERS), *o;
	size_t i, n = json_object_array_length(outliers), bad = 0, wlen;
	char scratch[384], *w;
	int ret;

	s->outliers = calloc(n ? n : 1, sizeof(*s->outliers));
	s->json_idx = calloc(n ? n : 1, sizeof(*s->json_idx));
	if (!s->outliers || !s->json_idx) {
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(outliers, i);
		/* The first bad one's reason is kept: the one a user fixes first. */
		w = bad ? scratch : what;
		wlen = bad ? sizeof(scratch) : len;
		ret = mode == SUMMARY_STRICT ?
			      strict_outlier(o, i, &s->outliers[s->nr_outliers], w, wlen) :
			      lenient_outlier(o, i, &s->outliers[s->nr_outliers], what, len);
		if (ret == -EINVAL) {
			bad++;
			continue;
		}
		if (ret) {
			return ret;
		}
		s->json_idx[s->nr_outliers++] = i;
	}
	if (!bad) {
		return 0;
	}
	if (asprintf(&s->outliers_why, "%s: %s (%zu of %zu outliers skipped)", name, what, bad, n) <
	    0) {
		s->outliers_why = NULL;
		return -ENOMEM;
	}
	what[0] = '\0';
	return 0;
}

/* The typed summary of @obj (read from @name), which check_summary() accepted. */
static int summary_new(struct json_object *obj, const char *name, enum summary_mode mode,
		       struct summary **out, char *what, size_t len)
{
	struct summary *s;
	int ret = -ENOMEM;

	s = calloc(1, sizeof(*s));
	if (!s) {
		goto out;
	}
	s->json = json_object_get(obj);
	s->skipped = (uint64_t)get_i64(obj, KEY_SKIPPED);
	if (outlier_set_str(&s->id, get_str(obj, KEY_ID, NULL)) ||
	    outlier_set_str(&s->host, get_str(obj, KEY_HOST, NULL)) ||
	    outlier_set_str(&s->created, get_str(obj, KEY_CREATED, NULL)) ||
	    outlier_set_str(&s->trace, get_str(obj, KEY_TRACE, NULL)) ||
	    flags_from_json(get_arr(obj, KEY_FLAGS), s)) {
		goto out;
	}
	ret = outliers_from_json(obj, s, name, mode, what, len);
	ret = ret ?: idle_from_json(obj, s, name);
	if (ret) {
		goto out;
	}
	*out = s;
	s = NULL;
out:
	if (ret == -ENOMEM) {
		snprintf(what, len, "%s", strerror(ENOMEM));
	}
	summary_free(s);
	return ret;
}

/**
 * summary_parse() - parse and check the text of a summary.json
 * @text: the file's bytes (need not be NUL-terminated)
 * @len: their number
 * @name: the file's name, for @why
 * @mode: SUMMARY_STRICT (the contract, for review) or SUMMARY_LENIENT (record's retention,
 *	reading an earlier run's: see enum summary_mode)
 * @out: receives the summary on success (free it with summary_free())
 * @why: receives "NAME: what is wrong" on failure
 * @whylen: size of @why
 *
 * Return: 0, or -EBADMSG (not JSON, not version 1, or a member missing or of the wrong type),
 * or -ENOMEM.
 */
int summary_parse(const char *text, size_t len, const char *name, enum summary_mode mode,
		  struct summary **out, char *why, size_t whylen)
{
	struct json_object *obj = NULL;
	char what[384] = "";
	int ret;

	*out = NULL;
	ret = parse_json(text, len, mode, &obj, what, sizeof(what));
	if (!ret && !check_summary(obj, mode, what, sizeof(what))) {
		ret = -EBADMSG;
	}
	if (!ret) {
		ret = summary_new(obj, name, mode, out, what, sizeof(what));
	}
	if (ret) {
		snprintf(why, whylen, "%s: %s", name, what);
	}
	json_object_put(obj);
	return ret;
}

/**
 * summary_free() - free @s and all it owns; NULL is a no-op
 */
void summary_free(struct summary *s)
{
	size_t i;

	if (!s) {
		return;
	}
	for (i = 0; i < s->nr_outliers; i++) {
		outlier_free(s->outliers[i]);
	}
	free(s->outliers);
	for (i = 0; i < s->nr_flags; i++) {
		free(s->flags[i]);
	}
	free(s->flags);
	for (i = 0; i < s->nr_idle; i++) {
		free(s->idle[i].comm);
		free(s->idle[i].site);
	}
	free(s->idle);
	free(s->idle_why);
	free(s->outliers_why);
	free(s->json_idx);
	free(s->id);
	free(s->host);
	free(s->created);
	free(s->trace);
	json_object_put(s->json);
	free(s);
}

/**
 * summary_to_json() - the summary as read, its outliers replaced
 * @s: the summary
 * @outliers: the array that takes the place of its outliers (the caller keeps its reference)
 *
 * Every other member is the summary's own, in its order: those this latsnap does not know
 * (written by a later one) pass through.
 *
 * Return: a new object, or NULL without memory.
 */
struct json_object *summary_to_json(const struct summary *s, struct json_object *outliers)
{
	struct json_object_iterator it = json_object_iter_begin(s->json);
	struct json_object_iterator end = json_object_iter_end(s->json);
	struct json_object *obj = json_object_new_object();
	const char *key;

	for (; obj && !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		key = json_object_iter_peek_name(&it);
		json_object_object_add(obj, key,
				       strcmp(key, KEY_OUTLIERS) ?
					       json_object_get(json_object_iter_peek_value(&it)) :
					       json_object_get(outliers));
	}
	return obj;
}

/**
 * summary_outlier_to_json() - outlier @i of @s as outlier_to_json() writes it, followed by the
 *			       members of the summary's that it does not know (they pass through)
 *
 * Return: a new object, or NULL without memory.
 */
struct json_object *summary_outlier_to_json(const struct summary *s, size_t i)
{
	struct json_object *read =
		json_object_array_get_idx(get_arr(s->json, KEY_OUTLIERS), s->json_idx[i]);
	struct json_object_iterator it = json_object_iter_begin(read);
	struct json_object_iterator end = json_object_iter_end(read);
	struct json_object *obj = outlier_to_json(s->outliers[i]);
	const char *key;

	for (; obj && !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		key = json_object_iter_peek_name(&it);
		if (!json_object_object_get_ex(obj, key, NULL)) {
			json_object_object_add(obj, key,
					       json_object_get(json_object_iter_peek_value(&it)));
		}
	}
	return obj;
}

/* --- the writer ---------------------------------------------------------------------------- */

static struct json_object *idle_to_json(const struct summary *s)
{
	struct json_object *arr = json_object_new_array_ext((int)s->nr_idle), *e;
	const struct summary_idle *d;
	size_t i;

	for (i = 0; arr && i < s->nr_idle; i++) {
		d = &s->idle[i];
		e = json_object_new_object();
		json_object_object_add(e, KEY_PID, json_object_new_int(d->pid));
		json_object_object_add(e, KEY_TID, json_object_new_int(d->tid));
		json_object_object_add(e, KEY_COMM, json_object_new_string(d->comm));
		json_object_object_add(e, KEY_COUNT, json_object_new_int64((int64_t)d->count));
		json_object_object_add(e, KEY_TOTAL_NS,
				       json_object_new_int64((int64_t)d->total_ns));
		json_object_object_add(e, KEY_SITE, json_object_new_string(d->site));
		json_object_array_add(arr, e);
	}
	return arr;
}

static struct json_object *held_to_json(const struct summary *s)
{
	struct json_object *arr = json_object_new_array_ext((int)s->nr_held), *e;
	const struct summary_held *h;
	size_t i;

	for (i = 0; arr && i < s->nr_held; i++) {
		h = &s->held[i];
		e = json_object_new_object();
		json_object_object_add(e, KEY_PID, json_object_new_int(h->pid));
		json_object_object_add(e, "uid", h->uid < 0 ? NULL : json_object_new_int64(h->uid));
		json_object_object_add(e, KEY_COMM, json_object_new_string(h->comm));
		json_object_object_add(e, "repeats", json_object_new_int64((int64_t)h->repeats));
		json_object_object_add(e, "over_user_budget",
				       json_object_new_int64((int64_t)h->over_user_budget));
		json_object_object_add(e, "over_budget",
				       json_object_new_int64((int64_t)h->over_budget));
		json_object_array_add(arr, e);
	}
	return arr;
}

static struct json_object *dropped_to_json(const struct summary *s)
{
	struct json_object *arr = json_object_new_array_ext((int)s->nr_dropped), *e;
	const struct summary_dropped *d;
	size_t i;

	for (i = 0; arr && i < s->nr_dropped; i++) {
		d = &s->dropped[i];
		e = json_object_new_object();
		json_object_object_add(e, d->user ? "uid" : KEY_PID, json_object_new_int64(d->id));
		json_object_object_add(e, "dropped", json_object_new_int64((int64_t)d->dropped));
		json_object_array_add(arr, e);
	}
	return arr;
}

static struct json_object *summary_build(const struct summary *s)
{
	struct json_object *obj = json_object_new_object(), *arr;
	size_t i;

	if (!obj) {
		return NULL;
	}
	json_object_object_add(obj, KEY_VERSION, json_object_new_int(SUMMARY_VERSION));
	json_object_object_add(obj, KEY_ID, json_object_new_string(s->id));
	json_object_object_add(obj, KEY_HOST, json_object_new_string(s->host));
	json_object_object_add(obj, KEY_CREATED, json_object_new_string(s->created));
	json_object_object_add(obj, KEY_TRACE, json_object_new_string(s->trace));
	arr = json_object_new_array_ext((int)s->nr_outliers);
	for (i = 0; arr && i < s->nr_outliers; i++) {
		json_object_array_add(arr, outlier_to_json(s->outliers[i]));
	}
	json_object_object_add(obj, KEY_OUTLIERS, arr);
	json_object_object_add(obj, KEY_SKIPPED, json_object_new_int64((int64_t)s->skipped));
	arr = json_object_new_array_ext((int)s->nr_flags);
	for (i = 0; arr && i < s->nr_flags; i++) {
		json_object_array_add(arr, json_object_new_string(s->flags[i]));
	}
	json_object_object_add(obj, KEY_FLAGS, arr);
	json_object_object_add(obj, KEY_IDLE, idle_to_json(s));
	json_object_object_add(obj, KEY_HELD, held_to_json(s));
	json_object_object_add(obj, KEY_DROPPED, dropped_to_json(s));
	return obj;
}

/**
 * summary_format() - the summary.json text of @s, as record writes it
 * @s: what the summary says: @id to @idle (the members read back are not looked at)
 *
 * Return: the text (free() it), or NULL without memory.
 */
char *summary_format(const struct summary *s)
{
	struct json_object *obj = summary_build(s);
	char *text = NULL;

	if (obj) {
		text = ls_json_text(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	}
	json_object_put(obj);
	return text;
}
