// SPDX-License-Identifier: GPL-2.0
/*
 * test_rules_globs - the built-in rule set against this machine's kernel: each kernel: glob names
 * a function of it that a sleeping thread's stack can show (moved out of test_rules.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/rules.h"
#include "tap.h"

/* A function symbol of /proc/kallsyms. */
struct ksym_entry {
	char *name;
	unsigned long long addr;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ksym_entry *)a)->name, ((const struct ksym_entry *)b)->name);
}

/*
 * Reads the function symbols of /proc/kallsyms (sorted by name) and the bounds of the scheduler's
 * text section. Returns the count, 0 when the table or its addresses cannot be read.
 */
static size_t read_kallsyms(struct ksym_entry **symsp, unsigned long long *sched_start,
			    unsigned long long *sched_end)
{
	struct ksym_entry *syms = NULL, *bigger;
	size_t n = 0, cap = 0;
	char line[512], name[256], type;
	unsigned long long addr, nonzero = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	*sched_start = *sched_end = 0;
	if (!f) {
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3) {
			continue;
		}
		nonzero |= addr;
		if (!strcmp(name, "__sched_text_start")) {
			*sched_start = addr;
		} else if (!strcmp(name, "__sched_text_end")) {
			*sched_end = addr;
		}
		/* Text symbols only; __pfx_ symbols are the padding before a function. */
		if (!strchr("tTwW", type) || !strncmp(name, "__pfx_", 6)) {
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			bigger = realloc(syms, cap * sizeof(*syms));
			if (!bigger) {
				bail_out("out of memory");
			}
			syms = bigger;
		}
		syms[n].name = strdup(name);
		syms[n].addr = addr;
		if (!syms[n].name) {
			bail_out("out of memory");
		}
		n++;
	}
	fclose(f);
	if (!nonzero) {
		while (n) {
			free(syms[--n].name);
		}
	}
	qsort(syms, n, sizeof(*syms), by_name);
out:
	*symsp = syms;
	return n;
}

/*
 * Every kernel: glob of the built-in set names a function of this kernel, and one that can show
 * in the stack of a sleeping thread: outside the scheduler's text, which the stack walker skips.
 */
static void builtin_globs_exist(void)
{
	const char *ci = getenv("CI");
	bool under_ci = ci && !strcmp(ci, "true");
	unsigned long long sched_start, sched_end;
	struct ksym_entry *syms;
	char *text, *line, *save, *word, *wsave, *alt;
	size_t n, lo, hi, mid, plen, i, globs = 0;
	bool found, visible;

	n = read_kallsyms(&syms, &sched_start, &sched_end);
	if (!n) {
		if (under_ci) {
			ok(0, "/proc/kallsyms is readable with addresses (needs root)");
		} else {
			skip("/proc/kallsyms unreadable or without addresses (not root?)");
		}
		free(syms);
		return;
	}
	ok(sched_start && sched_end > sched_start, "the scheduler's text section is in kallsyms");

	text = strdup(rules_builtin_text());
	if (!text) {
		bail_out("out of memory");
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#') {
			continue;
		}
		for (word = strtok_r(line, " \t", &wsave); word && strcmp(word, "=");
		     word = strtok_r(NULL, " \t", &wsave)) {
			if (strncmp(word, "kernel:", 7)) {
				continue;
			}
			word += 7;
			/* Each alternative must name a function; one is checked at a time. */
			alt = strchr(word, '|');
			if (alt) {
				*alt = '\0';
			}
next_alternative:
			globs++;
			/* Only names that start with the glob's literal prefix can match it. */
			plen = strcspn(word, "*?[\\");
			lo = 0;
			hi = n;
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if (strncmp(syms[mid].name, word, plen) < 0) {
					lo = mid + 1;
				} else {
					hi = mid;
				}
			}
			found = visible = false;
			for (i = lo; i < n && !strncmp(syms[i].name, word, plen); i++) {
				if (!rules_glob_match(word, syms[i].name)) {
					continue;
				}
				found = true;
				if (syms[i].addr < sched_start || syms[i].addr >= sched_end) {
					visible = true;
					break;
				}
			}
			ok(found, "kernel:%s matches a function of this kernel", word);
			ok(visible, "kernel:%s matches one outside the scheduler's text", word);
			if (alt) {
				word = alt + 1;
				alt = strchr(word, '|');
				if (alt) {
					*alt = '\0';
				}
				goto next_alternative;
			}
		}
	}
	ok(globs >= 100, "the built-in set has %zu kernel: globs", globs);
	free(text);
	for (i = 0; i < n; i++) {
		free(syms[i].name);
	}
	free(syms);
}

int main(void)
{
	builtin_globs_exist();
	return tap_done();
}
