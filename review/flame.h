/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flame.h - `latsnap flame`: the snapshots' stacks folded (comm;user...;-;kernel... WEIGHT_NS),
 * and a flame graph of them drawn as a self-contained SVG.
 */
#ifndef LATSNAP_FLAME_H
#define LATSNAP_FLAME_H

#include <regex.h>
#include <stdint.h>
#include <stdio.h>

struct summary;

/**
 * struct flame_stack - one folded stack
 * @line: "comm;outermost user frame;...;-;outermost kernel frame;...;innermost kernel frame"
 * @weight_ns: the time waited in it, summed over the outliers that share it
 */
struct flame_stack {
	char *line;
	uint64_t weight_ns;
};

/**
 * struct flame - folded stacks; flame_finish() sorts them and merges equal ones
 * @grep: when set, only outliers with a user frame whose symbol matches it are added
 */
struct flame {
	struct flame_stack *stacks;
	size_t nr, cap;
	const regex_t *grep;
};

int flame_add_summary(struct flame *f, const struct summary *summary);
void flame_finish(struct flame *f);
int flame_write_folded(FILE *out, const struct flame *f);
int flame_write_svg(FILE *out, const struct flame *f, const char *title);
void flame_free(struct flame *f);
int flame_main(int argc, char **argv);

#endif /* LATSNAP_FLAME_H */
