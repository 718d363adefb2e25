/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rules.h - cause rules: LatencyTOP-style "PRIORITY MATCHER... = CAUSE" lines that name why an
 * outlier waited, from its kernel stacks, its syscall and its user stack (and where a request's
 * CPU time went, from its sampled stacks). Idle rules, whose CAUSE is `idle` or `!idle`, name
 * no cause: they say whether a wait is idle (classify/idle.h).
 */
#ifndef LATSNAP_RULES_H
#define LATSNAP_RULES_H

#include <stdbool.h>
#include <stddef.h>

#define RULES_PRIORITY_MIN 1
#define RULES_PRIORITY_MAX 1000
/* Longest cause text, in bytes; it is one column of a report line. */
#define RULES_MAX_CAUSE 120
/* Longest rule line, not counting the newline. */
#define RULES_MAX_LINE 1024
/* Largest rules file read; a real one is a few kilobytes. */
#define RULES_MAX_FILE (1024 * 1024)

/* The CAUSE of an idle rule: a wait it matches is idle, or (RULES_NOT_IDLE) always counts. */
#define RULES_IDLE "idle"
#define RULES_NOT_IDLE "!idle"

/* The cause of an outlier that was runnable more than half of its duration. */
#define RULES_CAUSE_CPU "waiting for CPU"
/* The fallback cause of a sleep outlier (off CPU outside any syscall) that no rule names. */
#define RULES_CAUSE_SLEEP "off-CPU outside a syscall"
/* The cause of a request on CPU half of its duration or more when no cpu: rule names it. */
#define RULES_CAUSE_COMPUTING "Computing (on CPU)"
/* The fallback cause of a request mostly off CPU without waits that a rule names. */
#define RULES_CAUSE_REQUEST_BLOCKED "blocked (no wait recorded)"
/* A keyed request whose loop waited for the upstream at the other end of the socket it connected. */
#define RULES_CAUSE_REQUEST_UPSTREAM "Waiting for its upstream (socket peer)"

struct rules;

/*
 * The verdict of the idle rules on a wait: no idle rule matches it (the idle policy decides),
 * the best one says `idle`, or it says `!idle` (the wait counts, whatever the policy thinks).
 */
enum rules_idle {
	RULES_IDLE_DEFAULT = 0,
	RULES_IDLE_IDLE,
	RULES_IDLE_COUNT,
};

/**
 * struct rules_match - the verdict of rules_classify()
 * @cause: the cause text
 * @priority: the priority of the rule that named it; 0 when no rule did (the runqueue verdict
 *	      and the fallbacks)
 * @categorized: false when no rule matched and @cause is only the fallback (the syscall name,
 *		 or RULES_CAUSE_SLEEP): such stacks are the ones worth a new rule
 */
struct rules_match {
	const char *cause;
	int priority;
	bool categorized;
};

int rules_load(const char *path, struct rules **rulesp);
int rules_parse(const char *text, const char *name, struct rules **rulesp);
struct rules *rules_builtin(void);
const char *rules_builtin_text(void);
void rules_free(struct rules *rules);
size_t rules_count(const struct rules *rules);
bool rules_glob_match(const char *glob, const char *symbol);
struct outlier;

void rules_classify(const struct rules *rules, const struct outlier *outlier,
		    struct rules_match *match);
int rules_classify_waits(const struct rules *rules, struct outlier *outlier);
enum rules_idle rules_idle_verdict(const struct rules *rules, const struct outlier *outlier);
int rules_main(int argc, char **argv);

#endif /* LATSNAP_RULES_H */
