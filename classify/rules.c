// SPDX-License-Identifier: GPL-2.0
/*
 * rules.c - cause rules in the spirit of LatencyTOP's latencytop.trans: lines of
 * "PRIORITY MATCHER... = CAUSE" that name why an outlier waited, from the functions of its kernel
 * stacks, its syscall, its user stack, its thread's name and its futex operation. Idle rules
 * ("= idle", "= !idle") use the same matchers to say whether a wait is idle.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/config.h"
#include "classify/frames.h"
#include "classify/rules.h"
#include "lib/outlier.h"
#include "classify/syscalls.h"
#include "lib/util.h"
#include "include/futex.h"


enum matcher_kind {
	MATCH_KERNEL,
	MATCH_SYSCALL,
	MATCH_USER,
	MATCH_CPU,
	MATCH_COMM,
	MATCH_FUTEX,
	MATCH_FLAG,
};

/* What a futex syscall waits for, by its operation; FUTEX_NONE for anything else. */
enum futex_kind {
	FUTEX_NONE,
	FUTEX_KIND_LOCK,
	FUTEX_KIND_WAIT,
};

/*
 * @glob: one glob, or alternatives separated by '|' ("ProcSleep|WaitOnLock"); a futex: matcher
 * has none, only @futex.
 */
struct matcher {
	enum matcher_kind kind;
	const char *glob; /* points into rules->text */
	enum futex_kind futex;
};

/* @idle: RULES_IDLE_DEFAULT for a cause rule; an idle rule's verdict (it has no cause). */
struct rule {
	int priority;
	const char *cause; /* points into rules->text */
	size_t group; /* index of the first rule with the same cause text */
	size_t first; /* its matchers are rules->matcher[first .. first + nr) */
	size_t nr;
	bool kernel; /* has a kernel: matcher, so it cannot match an outlier without stacks */
	bool cpu; /* has a cpu: matcher: it names sampled on-CPU stacks, and only those */
	enum rules_idle idle;
};

/*
 * @order: the cause rules, @idle_order the idle rules, each by priority, highest first, then in
 * file order: idle rules never name a cause, and cause rules never judge idleness.
 */
struct rules {
	char *text; /* the parsed copy of the file, cut into strings in place */
	struct rule *rule;
	size_t nr_rules;
	size_t cap_rules;
	struct matcher *matcher;
	size_t nr_matchers;
	size_t cap_matchers;
	const struct rule **order;
	size_t nr_order;
	const struct rule **idle_order;
	size_t nr_idle;
	bool builtin;
};

/*
 * The separator is the first "=" that starts a word: a glob may hold "=" (it then simply never
 * matches a symbol), the cause text may too.
 */
static char *find_separator(char *s)
{
	char *p;

	for (p = s; *p; p++) {
		if (*p == '=' && (p == s || ls_is_blank(p[-1]))) {
			return p;
		}
	}
	return NULL;
}

/* Cuts the next blank-separated word out of *@s in place; NULL at the end. */
static char *next_word(char **s)
{
	char *p = *s, *word;

	while (ls_is_blank(*p)) {
		p++;
	}
	if (!*p) {
		*s = p;
		return NULL;
	}
	word = p;
	while (*p && !ls_is_blank(*p)) {
		p++;
	}
	if (*p) {
		*p++ = '\0';
	}
	*s = p;
	return word;
}

/* Plain decimal digits only: no sign, no spaces, no 0x, as ls_parse_pid(). */
static int parse_priority(const char *word, int *priority)
{
	const char *p;
	int v = 0;

	for (p = word; *p; p++) {
		if (*p < '0' || *p > '9' || v > RULES_PRIORITY_MAX) {
			return -EINVAL;
		}
		v = v * 10 + (*p - '0');
	}
	if (p == word || v < RULES_PRIORITY_MIN || v > RULES_PRIORITY_MAX) {
		return -EINVAL;
	}
	*priority = v;
	return 0;
}

static int add_matcher(struct rules *rules, enum matcher_kind kind, const char *glob,
		       enum futex_kind futex)
{
	struct matcher *m;
	size_t cap;

	if (rules->nr_matchers == rules->cap_matchers) {
		cap = rules->cap_matchers ? rules->cap_matchers * 2 : 64;
		m = realloc(rules->matcher, cap * sizeof(*m));
		if (!m) {
			return -ENOMEM;
		}
		rules->matcher = m;
		rules->cap_matchers = cap;
	}
	rules->matcher[rules->nr_matchers].kind = kind;
	rules->matcher[rules->nr_matchers].glob = glob;
	rules->matcher[rules->nr_matchers].futex = futex;
	rules->nr_matchers++;
	return 0;
}

static struct rule *add_rule(struct rules *rules)
{
	struct rule *r;
	size_t cap;

	if (rules->nr_rules == rules->cap_rules) {
		cap = rules->cap_rules ? rules->cap_rules * 2 : 32;
		r = realloc(rules->rule, cap * sizeof(*r));
		if (!r) {
			return NULL;
		}
		rules->rule = r;
		rules->cap_rules = cap;
	}
	r = &rules->rule[rules->nr_rules++];
	memset(r, 0, sizeof(*r));
	return r;
}

static int parse_matcher(struct rules *rules, struct rule *rule, char *word, char *why,
			 size_t whylen)
{
	static const struct {
		const char *prefix;
		enum matcher_kind kind;
	} kinds[] = {
		{ "kernel:", MATCH_KERNEL }, { "syscall:", MATCH_SYSCALL }, { "user:", MATCH_USER },
		{ "cpu:", MATCH_CPU },	     { "comm:", MATCH_COMM },	    { "flag:", MATCH_FLAG },
	};
	const char *glob, *bar;
	size_t i, len;

	/* Not a glob: two words only, so that a typo is an error and not a rule that never fires. */
	if (!strncmp(word, "futex:", 6)) {
		rule->nr++;
		if (!strcmp(word + 6, "lock")) {
			return add_matcher(rules, MATCH_FUTEX, NULL, FUTEX_KIND_LOCK);
		}
		if (!strcmp(word + 6, "wait")) {
			return add_matcher(rules, MATCH_FUTEX, NULL, FUTEX_KIND_WAIT);
		}
		snprintf(why, whylen,
			 "bad futex matcher '%.64s' (expected futex:lock or futex:wait)", word);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		len = strlen(kinds[i].prefix);
		if (strncmp(word, kinds[i].prefix, len)) {
			continue;
		}
		if (!word[len]) {
			snprintf(why, whylen, "empty glob in '%s'", word);
			return -EINVAL;
		}
		/* GLOB|GLOB...: each alternative a glob of its own, none empty. */
		for (glob = word + len; (bar = strchr(glob, '|')); glob = bar + 1) {
			if (bar == glob || !bar[1]) {
				snprintf(why, whylen, "empty alternative in '%.64s'", word);
				return -EINVAL;
			}
		}
		if (kinds[i].kind == MATCH_KERNEL) {
			rule->kernel = true;
		}
		if (kinds[i].kind == MATCH_CPU) {
			rule->cpu = true;
		}
		rule->nr++;
		return add_matcher(rules, kinds[i].kind, word + len, FUTEX_NONE);
	}
	snprintf(why, whylen,
		 "unknown matcher '%.64s' (expected kernel:GLOB, syscall:GLOB, user:GLOB, "
		 "comm:GLOB, cpu:GLOB, flag:GLOB, futex:lock or futex:wait)",
		 word);
	return -EINVAL;
}

/*
 * Parses one line, cut in place; a blank or comment line adds nothing. Returns 0, -ENOMEM, or
 * -EINVAL with the reason in @why.
 */
static int parse_line(struct rules *rules, char *line, char *why, size_t whylen)
{
	char *sep, *cause, *word, *rest;
	struct rule *rule;
	size_t len;
	int priority, ret;
	const char *p;

	ls_strip_comment(line);
	line = ls_trim(line);
	if (!*line) {
		return 0;
	}
	sep = find_separator(line);
	if (!sep) {
		snprintf(why, whylen, "expected 'PRIORITY MATCHER... = CAUSE', got '%.64s'", line);
		return -EINVAL;
	}
	*sep = '\0';
	cause = ls_trim(sep + 1);
	rest = line;

	word = next_word(&rest);
	if (!word) {
		snprintf(why, whylen, "missing priority before '='");
		return -EINVAL;
	}
	if (parse_priority(word, &priority)) {
		snprintf(why, whylen, "bad priority '%.32s' (expected an integer from %d to %d)",
			 word, RULES_PRIORITY_MIN, RULES_PRIORITY_MAX);
		return -EINVAL;
	}

	rule = add_rule(rules);
	if (!rule) {
		return -ENOMEM;
	}
	rule->priority = priority;
	rule->first = rules->nr_matchers;
	while ((word = next_word(&rest))) {
		ret = parse_matcher(rules, rule, word, why, whylen);
		if (ret) {
			return ret;
		}
	}
	if (!rule->nr) {
		snprintf(why, whylen, "no matcher before '='");
		return -EINVAL;
	}

	len = strlen(cause);
	if (!len) {
		snprintf(why, whylen, "missing cause after '='");
		return -EINVAL;
	}
	if (len > RULES_MAX_CAUSE) {
		snprintf(why, whylen, "cause too long (%zu characters, at most %d)", len,
			 RULES_MAX_CAUSE);
		return -EINVAL;
	}
	/* The cause lands in summary.txt and on terminals: no escape sequences. */
	for (p = cause; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			snprintf(why, whylen, "control character in cause");
			return -EINVAL;
		}
	}
	if (!strcmp(cause, RULES_IDLE) || !strcmp(cause, RULES_NOT_IDLE)) {
		/* Idleness is about waits: a rule on on-CPU samples could never apply. */
		if (rule->cpu) {
			snprintf(why, whylen,
				 "cpu: matcher in an idle rule (idle rules judge waits)");
			return -EINVAL;
		}
		rule->idle = cause[0] == '!' ? RULES_IDLE_COUNT : RULES_IDLE_IDLE;
	}
	rule->cause = cause;
	return 0;
}

static int by_priority(const void *a, const void *b)
{
	const struct rule *ra = *(const struct rule *const *)a;
	const struct rule *rb = *(const struct rule *const *)b;

	if (ra->priority != rb->priority) {
		return ra->priority > rb->priority ? -1 : 1;
	}
	/* The rules sit in one array in file order: the earlier rule wins a tie. */
	return ra < rb ? -1 : ra > rb;
}

/*
 * Groups the cause rules by cause text and orders them for rules_classify(), and the idle rules
 * for rules_idle_verdict(). An idle rule is in no group: "idle" is no cause.
 */
static int finish(struct rules *rules)
{
	size_t i, j, n = rules->nr_rules ? rules->nr_rules : 1;
	struct rule *r;

	for (i = 0; i < rules->nr_rules; i++) {
		r = &rules->rule[i];
		r->group = i;
		for (j = 0; j < i && !r->idle; j++) {
			if (!rules->rule[j].idle && !strcmp(rules->rule[j].cause, r->cause)) {
				r->group = rules->rule[j].group;
				break;
			}
		}
	}
	rules->order = calloc(n, sizeof(*rules->order));
	rules->idle_order = calloc(n, sizeof(*rules->idle_order));
	if (!rules->order || !rules->idle_order) {
		return -ENOMEM;
	}
	for (i = 0; i < rules->nr_rules; i++) {
		r = &rules->rule[i];
		if (r->idle) {
			rules->idle_order[rules->nr_idle++] = r;
		} else {
			rules->order[rules->nr_order++] = r;
		}
	}
	ls_sort(rules->order, rules->nr_order, sizeof(*rules->order), by_priority);
	ls_sort(rules->idle_order, rules->nr_idle, sizeof(*rules->idle_order), by_priority);
	return 0;
}

/* Parses @len bytes of @buf, which may hold NUL bytes (a file's), naming @name in errors. */
static int parse_buffer(const char *buf, size_t len, const char *name, struct rules **rulesp)
{
	struct rules *rules;
	char *p, *end, *eol;
	char why[192];
	int lineno = 0;
	int ret = -ENOMEM;

	rules = calloc(1, sizeof(*rules));
	if (!rules) {
		goto out;
	}
	rules->text = malloc(len + 1);
	if (!rules->text) {
		goto out;
	}
	memcpy(rules->text, buf, len);
	rules->text[len] = '\0';

	ret = 0;
	end = rules->text + len;
	for (p = rules->text; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol) {
			eol = end;
		}
		*eol = '\0';
		lineno++;
		if ((size_t)(eol - p) > RULES_MAX_LINE) {
			snprintf(why, sizeof(why), "line too long (over %d characters)",
				 RULES_MAX_LINE);
			ret = -EINVAL;
		} else if (strlen(p) != (size_t)(eol - p)) {
			snprintf(why, sizeof(why), "NUL byte in line");
			ret = -EINVAL;
		} else {
			ret = parse_line(rules, p, why, sizeof(why));
		}
		if (ret) {
			goto out;
		}
	}
	ret = finish(rules);

out:
	if (ret == -EINVAL) {
		ls_err("%s:%d: %s", name, lineno, why);
	} else if (ret) {
		ls_err("%s: %s", name, strerror(-ret));
	}
	if (ret) {
		rules_free(rules);
		rules = NULL;
	}
	*rulesp = rules;
	return ret;
}

/**
 * rules_parse() - parse cause rules from a string
 * @text: the rules, in the format of a rules file
 * @name: what to call @text in error messages, in place of a file name
 * @rulesp: receives the rules on success, NULL on failure; free them with rules_free()
 *
 * Return: 0; -EINVAL after printing "latsnap: NAME:LINE: why" for a bad line; -ENOMEM.
 */
int rules_parse(const char *text, const char *name, struct rules **rulesp)
{
	if (!rulesp) {
		return -EINVAL;
	}
	if (!text || !name) {
		*rulesp = NULL;
		return -EINVAL;
	}
	return parse_buffer(text, strlen(text), name, rulesp);
}

/* Reads all of @fd; -EFBIG past RULES_MAX_FILE bytes. */
static int read_all(int fd, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *bigger;
	ssize_t n;
	int ret = 0;

	if (!buf) {
		return -ENOMEM;
	}
	for (;;) {
		if (len > RULES_MAX_FILE) {
			ret = -EFBIG;
			goto out;
		}
		if (len == cap) {
			bigger = realloc(buf, cap * 2);
			if (!bigger) {
				ret = -ENOMEM;
				goto out;
			}
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}

out:
	if (ret) {
		free(buf);
		buf = NULL;
		len = 0;
	}
	*bufp = buf;
	*lenp = len;
	return ret;
}

/**
 * rules_load() - read a cause rules file
 * @path: the file; it must be a regular file
 * @rulesp: receives the rules on success, NULL on failure; free them with rules_free()
 *
 * Each line is "PRIORITY MATCHER [MATCHER...] = CAUSE"; blank lines and "#" comments (at the
 * start of a line or after a blank) are skipped. See the header of rules_builtin_text().
 *
 * Return: 0; -EINVAL after printing "latsnap: FILE:LINE: why" for a bad line, or
 * "latsnap: FILE: why" for a file that is not a regular one or is too large; -errno after
 * printing "latsnap: FILE: strerror" when it cannot be opened or read.
 */
int rules_load(const char *path, struct rules **rulesp)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	if (!rulesp) {
		return -EINVAL;
	}
	*rulesp = NULL;
	if (!path) {
		return -EINVAL;
	}
	/* O_NONBLOCK: opening a FIFO must not hang before fstat() says it is not a file. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		ls_err("%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		ls_err("%s: %s", path, strerror(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ls_err("%s: not a regular file", path);
		ret = -EINVAL;
		goto out;
	}
	ret = read_all(fd, &buf, &len);
	if (ret == -EFBIG) {
		ls_err("%s: too large for a rules file (over %d bytes)", path, RULES_MAX_FILE);
		ret = -EINVAL;
		goto out;
	}
	if (ret) {
		ls_err("%s: %s", path, strerror(-ret));
		goto out;
	}
	ret = parse_buffer(buf, len, path, rulesp);

out:
	free(buf);
	close(fd);
	return ret;
}

/**
 * rules_free() - free rules from rules_load() or rules_parse()
 * @rules: the rules; NULL and the built-in set are left alone
 */
void rules_free(struct rules *rules)
{
	if (!rules || rules->builtin) {
		return;
	}
	free(rules->order);
	free(rules->idle_order);
	free(rules->matcher);
	free(rules->rule);
	free(rules->text);
	free(rules);
}

/**
 * rules_count() - the number of rules
 * @rules: the rules, or NULL
 *
 * Return: how many rules there are, cause rules and idle rules alike (the lines that are
 * rules); 0 for NULL.
 */
size_t rules_count(const struct rules *rules)
{
	return rules ? rules->nr_rules : 0;
}

static struct rules *builtin_rules;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_init(void)
{
	if (rules_parse(rules_builtin_text(), "built-in rules", &builtin_rules)) {
		return;
	}
	builtin_rules->builtin = true;
}

/**
 * rules_builtin() - the built-in rules, parsed on the first call
 *
 * The result is shared and lives as long as the program; rules_free() leaves it alone.
 *
 * Return: the rules, or NULL when memory ran out (the message is printed).
 */
struct rules *rules_builtin(void)
{
	pthread_once(&builtin_once, builtin_init);
	return builtin_rules;
}

/* One glob: the symbol as it is, or without its compiler or version suffix. */
static bool glob_match_one(const char *glob, const char *symbol)
{
	char base[512];
	size_t len;

	if (!symbol) {
		return false;
	}
	if (!fnmatch(glob, symbol, 0)) {
		return true;
	}
	len = strcspn(symbol, ".@");
	if (!symbol[len] || !len || len >= sizeof(base)) {
		return false;
	}
	memcpy(base, symbol, len);
	base[len] = '\0';
	return !fnmatch(glob, base, 0);
}

/* The syscall: matcher's glob: "-" stands for "no syscall" and matches nothing else. */
static bool syscall_match_one(const char *glob, const char *syscall)
{
	if (!syscall) {
		return !strcmp(glob, "-");
	}
	return !fnmatch(glob, syscall, 0);
}

/* The comm: matcher's glob: the thread's name as it is (no suffix to leave out). */
static bool comm_match_one(const char *glob, const char *comm)
{
	return comm && !fnmatch(glob, comm, 0);
}

/* Does @subject match any of the '|'-separated alternatives of @glob, by @one? */
static bool any_alternative(const char *glob, const char *subject,
			    bool (*one)(const char *glob, const char *subject))
{
	char alt[RULES_MAX_LINE + 1];
	const char *bar;
	size_t len;

	while ((bar = strchr(glob, '|'))) {
		len = (size_t)(bar - glob);
		if (len < sizeof(alt)) {
			memcpy(alt, glob, len);
			alt[len] = '\0';
			if (one(alt, subject)) {
				return true;
			}
		}
		glob = bar + 1;
	}
	return one(glob, subject);
}

/**
 * rules_glob_match() - whether a symbol matches the glob of a kernel:, user: or cpu: matcher
 * @glob: an fnmatch(3) pattern, or several separated by '|' (ProcSleep|WaitOnLock): then the
 *	  symbol matches when it matches any of them
 * @symbol: a function name as symbolized
 *
 * The symbol matches as it is, or without what follows its first "." or "@": the suffixes of
 * compiler clones (".constprop.0", ".isra.0", ".part.0", ".cold") and of symbol versions
 * ("@GLIBC_2.2.5") change with the build and the compiler, while a rule names a function.
 *
 * Return: true on a match.
 */
bool rules_glob_match(const char *glob, const char *symbol)
{
	if (!glob || !symbol) {
		return false;
	}
	return any_alternative(glob, symbol, glob_match_one);
}

/*
 * What the syscall:, user:, cpu:, comm: and futex: matchers look at: the same for every kernel
 * stack of a wait; for a sampled on-CPU stack, its own user frames and the whole stack (and the
 * request's thread name).
 */
struct outlier_view {
	const char *syscall; /* NULL outside any syscall (and on CPU) */
	const struct outlier_frames *user_frames;
	const struct outlier_frames *cpu_frames; /* the sampled stack; NULL for a wait */
	const char *comm; /* NULL when not known */
	enum futex_kind futex;
	/* The outlier's flags ("name: text"), whose names flag: matches; none for a sample. */
	char *const *flags;
	size_t nr_flags;
};

/*
 * What a futex syscall waits for, from its arguments (uaddr, op, val, ...): a lock, or an event
 * (a condition variable, a semaphore, a thread's exit...). FUTEX_NONE without its arguments (an
 * older summary), outside futex, and for the operations that do not wait (FUTEX_WAKE,
 * FUTEX_UNLOCK_PI, the requeues...). futex_waitv waits on several words at once: for an event.
 */
static enum futex_kind futex_kind_of(const struct outlier *outlier)
{
	uint32_t cmd, val;

	if (!outlier->has_args || !outlier->syscall) {
		return FUTEX_NONE;
	}
	if (!strcmp(outlier->syscall, "futex_waitv")) {
		return FUTEX_KIND_WAIT;
	}
	if (strcmp(outlier->syscall, "futex")) {
		return FUTEX_NONE;
	}
	/* op and val are ints to the kernel: the upper half of the register is not theirs. */
	cmd = (uint32_t)outlier->args[1];
	val = (uint32_t)outlier->args[2];
	if (ls_futex_waits_for_lock(cmd, val)) {
		return FUTEX_KIND_LOCK;
	}
	switch (cmd & LS_FUTEX_CMD_MASK) {
	case LS_FUTEX_WAIT:
	case LS_FUTEX_WAIT_BITSET:
	case LS_FUTEX_WAIT_REQUEUE_PI:
		return FUTEX_KIND_WAIT;
	default:
		return FUTEX_NONE;
	}
}

/* The view of a wait (or of a request, by its own stacks). */
static void view_of(const struct outlier *outlier, struct outlier_view *view)
{
	memset(view, 0, sizeof(*view));
	view->syscall = outlier->syscall;
	view->user_frames = &outlier->user_stack.frames;
	view->comm = outlier->comm;
	view->futex = futex_kind_of(outlier);
	view->flags = outlier->flags;
	view->nr_flags = outlier->nr_flags;
}

/* Whether a flag of @view is named by @glob: the flag's text before its ':'. */
static bool flags_match(const struct outlier_view *view, const char *glob)
{
	char name[64];
	size_t i, len;

	for (i = 0; i < view->nr_flags; i++) {
		if (!view->flags[i]) {
			continue;
		}
		len = strcspn(view->flags[i], ":");
		if (len >= sizeof(name)) {
			continue;
		}
		memcpy(name, view->flags[i], len);
		name[len] = '\0';
		if (any_alternative(glob, name, glob_match_one)) {
			return true;
		}
	}
	return false;
}

static bool frames_match(const struct outlier_frames *frames, const char *glob)
{
	size_t i;

	for (i = 0; frames && i < frames->nr; i++) {
		if (frames->v[i].symbol && rules_glob_match(glob, frames->v[i].symbol)) {
			return true;
		}
	}
	return false;
}

/*
 * @kframes: the frames of one kernel stack, or NULL for an outlier without stacks. A rule with
 * a cpu: matcher matches only sampled on-CPU stacks, the others only waits.
 */
static bool rule_matches(const struct rules *rules, const struct rule *rule,
			 const struct outlier_view *view, const struct outlier_frames *kframes)
{
	const struct matcher *m;
	size_t i;

	if (rule->cpu != (view->cpu_frames != NULL)) {
		return false;
	}
	if (rule->kernel && !kframes) {
		return false;
	}
	for (i = 0; i < rule->nr; i++) {
		m = &rules->matcher[rule->first + i];
		switch (m->kind) {
		case MATCH_KERNEL:
			if (!frames_match(kframes, m->glob)) {
				return false;
			}
			break;
		case MATCH_SYSCALL:
			if (!any_alternative(m->glob, view->syscall, syscall_match_one)) {
				return false;
			}
			break;
		case MATCH_USER:
			if (!frames_match(view->user_frames, m->glob)) {
				return false;
			}
			break;
		case MATCH_CPU:
			if (!frames_match(view->cpu_frames, m->glob)) {
				return false;
			}
			break;
		case MATCH_COMM:
			if (!any_alternative(m->glob, view->comm, comm_match_one)) {
				return false;
			}
			break;
		case MATCH_FUTEX:
			if (view->futex != m->futex) {
				return false;
			}
			break;
		case MATCH_FLAG:
			if (!flags_match(view, m->glob)) {
				return false;
			}
			break;
		}
	}
	return true;
}

/*
 * The highest-priority cause rule that matches, the first in the file on a tie; NULL for none.
 */
static const struct rule *best_rule(const struct rules *rules, const struct outlier_view *view,
				    const struct outlier_frames *kframes)
{
	size_t i;

	for (i = 0; rules && i < rules->nr_order; i++) {
		if (rule_matches(rules, rules->order[i], view, kframes)) {
			return rules->order[i];
		}
	}
	return NULL;
}

/* The contract's stacks come from LS_MAX_STACKS (8); more are only hand-made, and recomputed. */
#define STACK_CACHE 64

/*
 * @stacks: the kernel stacks of a wait, or (@cpu) the sampled on-CPU stacks of a request, each
 * its kernel frames then its user frames.
 */
struct classify_ctx {
	const struct rules *rules;
	struct outlier_view view;
	const struct outlier_kstack *stacks;
	size_t n;
	bool cpu;
	const struct rule *cache[STACK_CACHE];
};

static const struct rule *stack_rule_uncached(struct classify_ctx *ctx, size_t i)
{
	struct outlier_frames kernel, user;
	struct outlier_view view = { 0 };

	if (!ctx->cpu) {
		/* A stack without frames still exists: its syscall: and user: rules can match. */
		return best_rule(ctx->rules, &ctx->view, &ctx->stacks[i].frames);
	}
	frames_split_sample(&ctx->stacks[i].frames, &kernel, &user);
	view.user_frames = &user;
	view.cpu_frames = &ctx->stacks[i].frames;
	view.comm = ctx->view.comm;
	return best_rule(ctx->rules, &view, &kernel);
}

static const struct rule *stack_rule(struct classify_ctx *ctx, size_t i)
{
	return i < STACK_CACHE ? ctx->cache[i] : stack_rule_uncached(ctx, i);
}

static uint64_t stack_weight(struct classify_ctx *ctx, size_t i)
{
	return ctx->stacks[i].weight_ns;
}

/*
 * Weighs the cause of stack @i (the sum of the weights of the stacks with the same cause) unless
 * an earlier stack has that cause; returns false then, or when no rule names stack @i.
 * @rep: the first rule in the file among those that named these stacks.
 */
static bool weigh_cause(struct classify_ctx *ctx, size_t i, size_t n, const struct rule **rep,
			uint64_t *weight, int *priority)
{
	const struct rule *r = stack_rule(ctx, i), *rj;
	size_t j;

	if (!r) {
		return false;
	}
	for (j = 0; j < i; j++) {
		rj = stack_rule(ctx, j);
		if (rj && rj->group == r->group) {
			return false;
		}
	}
	*rep = r;
	*weight = 0;
	*priority = 0;
	for (j = i; j < n; j++) {
		rj = stack_rule(ctx, j);
		if (!rj || rj->group != r->group) {
			continue;
		}
		*weight += stack_weight(ctx, j);
		if (rj->priority > *priority) {
			*priority = rj->priority;
		}
		if (rj < *rep) {
			*rep = rj;
		}
	}
	return true;
}

/*
 * The heaviest cause of the stacks of @ctx, NULL when no rule names any: the stacks of each
 * cause text add their weights up; on equal weight the higher priority, then the rule written
 * first. *@unnamed: the weight of the stacks no rule names.
 */
static const struct rule *heaviest_cause(struct classify_ctx *ctx, uint64_t *best_weight,
					 int *best_priority, uint64_t *unnamed)
{
	const struct rule *best = NULL, *rep;
	uint64_t weight;
	int priority;
	size_t i, n = ctx->n;

	*best_weight = 0;
	*best_priority = 0;
	*unnamed = 0;
	for (i = 0; i < n && i < STACK_CACHE; i++) {
		ctx->cache[i] = stack_rule_uncached(ctx, i);
	}
	for (i = 0; i < n; i++) {
		if (!stack_rule(ctx, i)) {
			*unnamed += stack_weight(ctx, i);
			continue;
		}
		if (!weigh_cause(ctx, i, n, &rep, &weight, &priority)) {
			continue;
		}
		if (!best || weight > *best_weight ||
		    (weight == *best_weight && priority > *best_priority) ||
		    (weight == *best_weight && priority == *best_priority && rep < best)) {
			best = rep;
			*best_weight = weight;
			*best_priority = priority;
		}
	}
	return best;
}

/* The cause when no rule names one: the syscall's name, which outlives the outlier if known. */
static const char *fallback_cause(const char *syscall, const struct outlier *outlier)
{
	const char *name;
	int nr;

	if (!syscall) {
		return outlier->kind == OUTLIER_SYSCALL ? "unknown syscall" :
		       outlier->kind == OUTLIER_REQUEST ? RULES_CAUSE_REQUEST_BLOCKED :
							  RULES_CAUSE_SLEEP;
	}
	nr = syscall_number(syscall);
	name = nr >= 0 ? syscall_name(nr) : NULL;
	return name && !strcmp(name, syscall) ? name : syscall;
}

static void set_match(struct rules_match *match, const char *cause, int priority, bool categorized)
{
	match->cause = cause;
	match->priority = priority;
	match->categorized = categorized;
}

/* A wait (a syscall or sleep outlier, or a request without waits): by its kernel stacks. */
static void classify_wait(const struct rules *rules, const struct outlier *outlier,
			  struct rules_match *match)
{
	struct classify_ctx ctx = {
		.rules = rules,
		.stacks = outlier->kernel_stacks,
		.n = outlier->nr_kernel_stacks,
	};
	const struct rule *best = NULL;
	uint64_t weight, unnamed;
	int priority = 0;

	view_of(outlier, &ctx.view);
	if (!ctx.n) {
		best = best_rule(rules, &ctx.view, NULL);
		priority = best ? best->priority : 0;
	} else {
		best = heaviest_cause(&ctx, &weight, &priority, &unnamed);
	}
	if (best) {
		set_match(match, best->cause, priority, true);
	} else {
		set_match(match, fallback_cause(ctx.view.syscall, outlier), 0, false);
	}
}

/*
 * A request mostly on CPU: the cause of its sampled stacks that weigh the most, unless the
 * samples no cpu: rule names weigh more; then, and without samples, RULES_CAUSE_COMPUTING.
 */
static void classify_cpu(const struct rules *rules, const struct outlier *outlier,
			 struct rules_match *match)
{
	struct classify_ctx ctx = {
		.rules = rules,
		.stacks = outlier->cpu_profile,
		.n = outlier->nr_cpu_profile,
		.cpu = true,
		.view.comm = outlier->comm,
	};
	const struct rule *best;
	uint64_t weight, unnamed;
	int priority;

	best = heaviest_cause(&ctx, &weight, &priority, &unnamed);
	if (best && weight >= unnamed) {
		set_match(match, best->cause, priority, true);
	} else {
		set_match(match, RULES_CAUSE_COMPUTING, 0, true);
	}
}

/*
 * A request mostly off CPU: the cause of its waits, each classified as the syscall or sleep
 * outlier it is; the waits of each cause text add their blocked time up and the heaviest cause
 * wins (on equal time the higher priority, then the earlier wait).
 */
static void classify_waits(const struct rules *rules, const struct outlier *outlier,
			   struct rules_match *match)
{
	size_t i, j, n = outlier->nr_waits, best = 0;
	struct rules_match *m = calloc(n, sizeof(*m));
	uint64_t weight, best_weight = 0;
	int priority, best_priority = -1;
	bool categorized, best_categorized = false;

	if (!m) {
		/* Without memory to weigh the causes: the wait blocked the longest names it. */
		for (i = 1; i < n; i++) {
			if (outlier->waits[i]->blocked_ns > outlier->waits[best]->blocked_ns) {
				best = i;
			}
		}
		rules_classify(rules, outlier->waits[best], match);
		return;
	}
	for (i = 0; i < n; i++) {
		rules_classify(rules, outlier->waits[i], &m[i]);
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(m[j].cause, m[i].cause); j++) {
		}
		if (j < i) {
			continue; /* weighed with the earlier wait of its cause */
		}
		weight = 0;
		priority = 0;
		categorized = false;
		for (j = i; j < n; j++) {
			if (strcmp(m[j].cause, m[i].cause)) {
				continue;
			}
			if (__builtin_add_overflow(weight, outlier->waits[j]->blocked_ns,
						   &weight)) {
				weight = UINT64_MAX;
			}
			priority = m[j].priority > priority ? m[j].priority : priority;
			categorized = categorized || m[j].categorized;
		}
		if (best_priority < 0 || weight > best_weight ||
		    (weight == best_weight && priority > best_priority)) {
			best = i;
			best_weight = weight;
			best_priority = priority;
			best_categorized = categorized;
		}
	}
	set_match(match, m[best].cause, best_priority, best_categorized);
	free(m);
}

/* Is @part more than half of @whole (@strict), or at least half? Without overflow. */
static bool over_half(uint64_t part, uint64_t whole, bool strict)
{
	if (part > whole) {
		return true;
	}
	return strict ? part > whole - part : part >= whole - part;
}

/**
 * rules_classify() - name the cause of one outlier
 * @rules: the rules; NULL classifies with no rule at all
 * @outlier: the outlier (its kind, syscall, duration_ns, runqueue_ns, kernel_stacks and
 *	     user_stack are read; of a request, also on_cpu_ns, its waits and its cpu_profile)
 * @match: receives the verdict
 *
 * An outlier runnable more than half of its duration is RULES_CAUSE_CPU, whatever its stacks.
 * Otherwise each kernel stack gets the cause of the highest-priority rule that matches it (the
 * first in the file on a tie), syscall:, user:, comm: and futex: matchers looking at the
 * outlier; the stacks
 * of each cause text add their weight_ns up, and the heaviest cause wins; on equal weight the
 * higher priority, then the rule written first. An outlier without stacks is matched by the
 * rules without kernel: matchers. When nothing matches, the cause is the syscall's name, or
 * RULES_CAUSE_SLEEP, and @match->categorized is false. Rules with a cpu: matcher never name a
 * wait. Idle rules (see rules_idle_verdict()) never name anything.
 *
 * A request (record --request) on CPU at least half of its duration is named by its sampled
 * stacks (cpu_profile): each gets the cause of its best rule among those with a cpu: matcher
 * (kernel: and user: matchers looking at the sample's kernel and user frames, syscall:- matching),
 * the causes weigh their samples, and the heaviest wins unless the samples no rule names weigh
 * more; then it is RULES_CAUSE_COMPUTING. Otherwise its cause is that of its waits: each is
 * classified as the syscall or sleep outlier it is, and the cause whose waits were blocked the
 * longest in all wins. A request without waits is classified by its own stacks, falling back to
 * RULES_CAUSE_REQUEST_BLOCKED. A keyed request whose upstream is known (the writer of the socket
 * its loop connected for it) is RULES_CAUSE_REQUEST_UPSTREAM: its chain says whom.
 *
 * @match->cause lives as long as @rules, except the name of a syscall that latsnap's table does
 * not know (an uncategorized outlier from another architecture), which lives in @outlier.
 */
void rules_classify(const struct rules *rules, const struct outlier *outlier,
		    struct rules_match *match)
{
	/* Runnable time dominates: no stack explains waiting for a CPU. */
	if (over_half(outlier->runqueue_ns, outlier->duration_ns, true)) {
		set_match(match, RULES_CAUSE_CPU, 0, true);
		return;
	}
	if (outlier->kind != OUTLIER_REQUEST) {
		classify_wait(rules, outlier, match);
	} else if (outlier->request && outlier->request->upstream_tid) {
		/* Its thread's stacks and waits were its loop's, for all its requests. */
		set_match(match, RULES_CAUSE_REQUEST_UPSTREAM, 0, true);
	} else if (over_half(outlier->on_cpu_ns, outlier->duration_ns, false)) {
		classify_cpu(rules, outlier, match);
	} else if (outlier->nr_waits) {
		classify_waits(rules, outlier, match);
	} else {
		classify_wait(rules, outlier, match);
	}
}

/**
 * rules_classify_waits() - name the cause of each wait of a request
 * @rules: the rules, as for rules_classify()
 * @outlier: a request (any other outlier has no waits): each of its waits gets the cause
 *	     rules_classify() gives it, as a syscall or sleep outlier
 *
 * Return: 0 or -ENOMEM (then some waits keep the cause they had).
 */
int rules_classify_waits(const struct rules *rules, struct outlier *outlier)
{
	struct rules_match m;
	size_t i;

	for (i = 0; i < outlier->nr_waits; i++) {
		rules_classify(rules, outlier->waits[i], &m);
		if (outlier_set_cause(outlier->waits[i], m.cause)) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* Does idle rule @rule match @outlier: with one of its kernel stacks, if it has kernel: ones? */
static bool idle_rule_matches(const struct rules *rules, const struct rule *rule,
			      const struct outlier *outlier, const struct outlier_view *view)
{
	size_t i;

	if (!rule->kernel) {
		return rule_matches(rules, rule, view, NULL);
	}
	for (i = 0; i < outlier->nr_kernel_stacks; i++) {
		if (rule_matches(rules, rule, view, &outlier->kernel_stacks[i].frames)) {
			return true;
		}
	}
	return false;
}

/**
 * rules_idle_verdict() - what the idle rules say of a wait
 * @rules: the rules; NULL has no idle rule
 * @outlier: the wait, a syscall or sleep outlier (its syscall, args, comm, kernel_stacks and
 *	     user_stack are read; a request is judged by its own, not by its waits')
 *
 * Idle rules are the rules whose CAUSE is `idle` or `!idle`: they name no cause, they say
 * whether a wait is one of a thread waiting for work. Their matchers mean what a cause rule's
 * do: kernel: the frames of a kernel stack (all kernel: matchers of a rule on the same one, any
 * of the outlier's), user: its user stack, syscall:, comm: its thread's name, futex:. Of the
 * idle rules that match, the highest priority decides, the one written first on a tie; cause
 * rules take no part, whatever their priority. The runnable time of the wait does not matter.
 *
 * Return: RULES_IDLE_IDLE when that rule says `idle`, RULES_IDLE_COUNT when it says `!idle`,
 * RULES_IDLE_DEFAULT when no idle rule matches (then the idle policy decides).
 */
enum rules_idle rules_idle_verdict(const struct rules *rules, const struct outlier *outlier)
{
	struct outlier_view view;
	size_t i;

	if (!rules || !outlier || !rules->nr_idle) {
		return RULES_IDLE_DEFAULT;
	}
	view_of(outlier, &view);
	for (i = 0; i < rules->nr_idle; i++) {
		if (idle_rule_matches(rules, rules->idle_order[i], outlier, &view)) {
			return rules->idle_order[i]->idle;
		}
	}
	return RULES_IDLE_DEFAULT;
}

static const char rules_usage[] =
	"Usage: latsnap rules\n"
	"\n"
	"Print the built-in cause rules: a header that explains the format and how an outlier\n"
	"gets its cause, then the rules. Save them to a file, edit it, and use it with\n"
	"`latsnap record --rules FILE`, which then replaces the built-in set.\n"
	"\n"
	"  -h, --help   show this help\n"
	"\n"
	"See latsnap(1).\n";

/**
 * rules_main() - `latsnap rules`: print the built-in rules
 * @argc: argument count, the command name included
 * @argv: "rules", then only -h or --help is accepted
 *
 * Return: the exit status: 0, 1 when stdout cannot be written, 2 for a bad argument.
 */
int rules_main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(rules_usage, stdout);
			return 0;
		}
		ls_err("rules: unknown argument '%s' (see latsnap rules --help)", argv[i]);
		return 2;
	}
	fputs(rules_builtin_text(), stdout);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ls_err("rules: writing to stdout: %s", strerror(errno));
		return 1;
	}
	return 0;
}
