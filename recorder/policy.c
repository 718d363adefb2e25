// SPDX-License-Identifier: GPL-2.0
/*
 * policy.c - `latsnap record`'s outlier policy: each outlier gets its cause from the rules, then
 * is judged: a wait for work (the idle policy) is counted apart and listed at the end; latency
 * is counted, logged (--log-stacks), printed (text or --json) and handed to the recorder for its
 * snapshot.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "classify/idle.h"
#include "classify/rules.h"
#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/text.h"
#include "lib/util.h"
#include "recorder/policy.h"
#include "recorder/recorder.h"
#include "recorder/stacklog.h"
#include "tracker/tracker.h"

/**
 * policy_open() - the rules, the idle policy and the stack log: what judges outliers.
 */
int policy_open(struct record_state *st)
{
	struct record_opts *opts = st->opts;

	if (opts->rules) {
		if (rules_load(opts->rules, &st->rules)) {
			return 2;
		}
	} else {
		st->rules = rules_builtin();
	}
	if (idle_open(&st->idle, st->rules, !opts->include_idle)) {
		ls_err("record: out of memory");
		return 1;
	}
	opts->rec.idle = st->idle;
	if (stacklog_open(&st->stacklog, opts->log_stacks, opts->stack_log)) {
		return 1;
	}
	return 0;
}

/**
 * policy_close() - the stack log, the idle policy and the rules freed.
 */
void policy_close(struct record_state *st)
{
	stacklog_close(st->stacklog);
	idle_close(st->idle);
	rules_free(st->rules);
	free(st->rules_path);
}

/**
 * policy_set_rules() - the rules of a reload replace those in use.
 */
void policy_set_rules(struct record_state *st, struct rules *rules, char *rules_path)
{
	/* The idle policy reads the rules: it gets the new ones before the old are freed. */
	idle_set_rules(st->idle, rules);
	rules_free(st->rules);
	st->rules = rules;
	free(st->rules_path);
	st->rules_path = rules_path;
	st->opts->rules = st->rules_path;
}

/* The printed form of @outlier: NDJSON with --json (the edge where it becomes JSON), or text. */
static void print_outlier(const struct record_opts *opts, const struct outlier *outlier)
{
	struct json_object *obj;
	char *text;

	if (opts->json) {
		obj = outlier_to_json(outlier);
		text = obj ? ls_json_text(obj, JSON_C_TO_STRING_PLAIN) : NULL;
		if (text) {
			fputs(text, stdout);
			fputc('\n', stdout);
		}
		free(text);
		json_object_put(obj);
	} else {
		outlier_print_text(stdout, outlier);
	}
	fflush(stdout);
}

/*
 * Which report of its wait @outlier is, for -v: a wait past --hang is reported while it lasts,
 * then again when it ends, and the two lines must not read alike. The contract's state names.
 */
static const char *wait_report(const struct outlier *outlier)
{
	switch (outlier->state) {
	case OUTLIER_STILL_BLOCKED:
		return "so far (still-blocked: still waiting)";
	case OUTLIER_UNFINISHED:
		return "so far (unfinished: still waiting when the run ended)";
	default:
		return "(ended)";
	}
}

/**
 * policy_take_outlier() - an outlier the tracker found, or the stall check (@cause: a
 * deadlock, or NULL).
 */
int policy_take_outlier(struct outlier *outlier, const char *cause, void *ctx)
{
	struct record_state *st = ctx;
	struct rules_match match;
	const char *why;

	rules_classify(st->rules, outlier, &match);
	outlier_set_cause(outlier, cause ? cause : match.cause);
	if (!cause && idle_judge(st->idle, outlier, &why)) {
		ls_verbose("record: idle, not latency: %s[%d] %s %.1f ms %s: %s", outlier->comm,
			   outlier->tid, outlier->syscall ? outlier->syscall : "off-CPU",
			   (double)outlier->duration_ns / 1e6, wait_report(outlier), why);
		outlier_free(outlier);
		return 0;
	}
	if (!cause && outlier->in_work) {
		ls_verbose("record: latency: %s[%d] %s %.1f ms %s: inside a unit of work",
			   outlier->comm, outlier->tid,
			   outlier->syscall ? outlier->syscall : "off-CPU",
			   (double)outlier->duration_ns / 1e6, wait_report(outlier));
	}
	st->outliers++;
	/* A request's waits (record --request) each get their own cause too. */
	rules_classify_waits(st->rules, outlier);
	stacklog_outlier(st->stacklog, outlier, &match);
	/* Printed before the recorder takes it: a snapshot adds to it later (chain, flags). */
	print_outlier(st->opts, outlier);
	if (st->recorder) {
		recorder_add(st->recorder, outlier);
	} else {
		outlier_free(outlier);
	}
	return 0;
}

/**
 * policy_on_outlier() - an outlier the tracker found.
 */
int policy_on_outlier(struct outlier *outlier, void *ctx)
{
	return policy_take_outlier(outlier, NULL, ctx);
}

/* How many idle waits the exit-time list shows without -v. */
#define IDLE_SHOWN 10

static int by_idle_total(const void *a, const void *b)
{
	const struct idle_entry *x = *(const struct idle_entry *const *)a;
	const struct idle_entry *y = *(const struct idle_entry *const *)b;

	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

/**
 * policy_print_idle() - the idle waits, per thread and place, the longest in all first: not
 * latency, not dropped either. IDLE_SHOWN of them, unless -v; the rest are counted, and the line
 * says how to see them.
 */
void policy_print_idle(const struct record_state *st)
{
	const struct idle_entry *entries, **order;
	char total[LS_DURATION_BUFSZ], *site;
	size_t n = idle_entries(st->idle, &entries), i, shown;
	uint64_t rest_count = 0, rest_ns = 0;

	order = n ? malloc(n * sizeof(*order)) : NULL;
	if (!order) {
		return;
	}
	for (i = 0; i < n; i++) {
		order[i] = &entries[i];
	}
	ls_sort(order, n, sizeof(*order), by_idle_total);
	fprintf(stderr, "latsnap: idle waits (waiting for work, not latency):\n");
	shown = ls_verbose_enabled || n <= IDLE_SHOWN ? n : IDLE_SHOWN;
	for (i = 0; i < shown; i++) {
		ls_format_duration(order[i]->total_ns, total, sizeof(total));
		site = ls_demangle_text(order[i]->site);
		fprintf(stderr, "latsnap:   %s[%d] %" PRIu64 " x %s, %s\n", LS_TEXT(order[i]->comm),
			order[i]->tid, order[i]->count, LS_TEXT(site ? site : order[i]->site),
			total);
		free(site);
	}
	for (; i < n; i++) {
		rest_count += order[i]->count;
		rest_ns += order[i]->total_ns;
	}
	if (shown < n) {
		ls_format_duration(rest_ns, total, sizeof(total));
		fprintf(stderr,
			"latsnap:   ... and %zu more threads and places (%" PRIu64
			" waits, %s in all, each shorter in all than those above): -v lists every one%s\n",
			n - shown, rest_count, total,
			st->recorder ? "; each snapshot's summary holds those of its time" : "");
	}
	free(order);
}

static int seed_idle(const struct ls_stall *w, void *ctx)
{
	struct idle_policy *idle = ctx;

	idle_seed(idle, (int32_t)w->tid, w->in_syscall ? w->syscall_nr : -1,
		  w->regs[LS_NR_UREGS - 1]);
	return 0;
}

/**
 * policy_learn_idle_places() - where each tracked thread waits as tracking begins is where it
 * waits for work, for the idle policy: a thread already blocked then is not in the middle of a
 * request latsnap saw start. One scan of the tracked threads (-a: of every thread).
 */
void policy_learn_idle_places(struct record_state *st, struct tracker *tr)
{
	int err;

	if (st->opts->include_idle) {
		return;
	}
	err = tracker_scan_waiting(tr, seed_idle, st->idle);
	if (err < 0) {
		ls_verbose("record: the idle policy learns no waits of before: %s", strerror(-err));
	}
}
