/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.h - `latsnap record`'s outlier policy: which outlier is latency (printed, counted,
 * snapshotted) and which a wait for work (idle: counted apart, listed at the end).
 */
#ifndef LATSNAP_POLICY_H
#define LATSNAP_POLICY_H

#include "lib/outlier.h"
#include "recorder/record.h"

struct rules;
struct tracker;

/**
 * policy_open() - the rules (--rules, or the built-in set), the idle policy and the stack log
 * of a run, in @st.
 * @st: the run; its opts->rec.idle is set too
 *
 * Return: 0; 2 when the rules file is bad, 1 on another failure (each said).
 */
int policy_open(struct record_state *st);

/**
 * policy_close() - free what policy_open() and policy_set_rules() gave @st.
 * @st: the run
 */
void policy_close(struct record_state *st);

/**
 * policy_set_rules() - the rules of a reload replace those in use.
 * @st: the run
 * @rules: the new rules, now @st's
 * @rules_path: their file (NULL: the built-in set), now @st's
 */
void policy_set_rules(struct record_state *st, struct rules *rules, char *rules_path);

/**
 * policy_take_outlier() - name @outlier's cause and judge it: an idle wait is counted and freed;
 * latency is counted, logged (--log-stacks), printed and handed to the recorder.
 * @outlier: now the policy's
 * @cause: the stall check's cause (a deadlock), or NULL for the rules' cause
 * @ctx: the run (struct record_state)
 *
 * Return: 0.
 */
int policy_take_outlier(struct outlier *outlier, const char *cause, void *ctx);

/**
 * policy_on_outlier() - policy_take_outlier() of an outlier the tracker found.
 * @outlier: now the policy's
 * @ctx: the run (struct record_state)
 *
 * Return: 0.
 */
int policy_on_outlier(struct outlier *outlier, void *ctx);

/**
 * policy_learn_idle_places() - where each tracked thread waits as tracking begins is where it
 * waits for work, for the idle policy. Nothing with --include-idle.
 * @st: the run
 * @tr: the tracker, attached
 */
void policy_learn_idle_places(struct record_state *st, struct tracker *tr);

/**
 * policy_print_idle() - at the end, on stderr: the idle waits per thread and place, the longest
 * in all first (the first ten, unless -v).
 * @st: the run
 */
void policy_print_idle(const struct record_state *st);

#endif /* LATSNAP_POLICY_H */
