// SPDX-License-Identifier: GPL-2.0
/*
 * gostack.c - cut a Go thread's user stack where the frames stop being its own (see gostack.h).
 *
 * Read from Go 1.19's runtime (asm_amd64.s: mcall, morestack, mstart, systemstack; traceback.go,
 * which stops at SPWRITE functions such as mcall and at TOPFRAME ones such as mstart). The
 * functions are named as the Go linker writes them in .symtab: assembly ones with an ".abi0"
 * suffix (runtime.morestack.abi0), mcall without.
 */
#include <stdlib.h>
#include <string.h>

#include "tracker/gostack.h"
#include "lib/outlier.h"

/* A switch beyond which the frames are not the thread's now. */
struct go_switch {
	const char *name;
	/* Why the goroutine's frames are unknown, for the flag; NULL: nothing of the thread's lost. */
	const char *goroutine;
};

static const struct go_switch switches[] = {
	{ "runtime.mcall", "the goroutine that entered it has left the thread" },
	{ "runtime.morestack", "the goroutine that entered it is being preempted or moved" },
	{ "runtime.mstart", NULL },
};

/* The switch @symbol names, with or without the linker's ".abi0" suffix, or NULL. */
static const struct go_switch *go_switch(const char *symbol)
{
	size_t i, len;

	if (!symbol || strncmp(symbol, "runtime.m", 9)) {
		return NULL;
	}
	for (i = 0; i < sizeof(switches) / sizeof(switches[0]); i++) {
		len = strlen(switches[i].name);
		if (!strncmp(symbol, switches[i].name, len) &&
		    (!symbol[len] || !strcmp(symbol + len, ".abi0"))) {
			return &switches[i];
		}
	}
	return NULL;
}

/*
 * The first caller frame of @frames that is a switch, or NULL. The innermost frame is where the
 * thread is, not a return address: a thread inside a switch function itself has not handed its
 * goroutine over yet (its frames are still as the switch found them), so only a return into a
 * switch, from a function it called on the other stack, marks the crossing.
 */
static const struct go_switch *first_switch(const struct outlier_frames *frames, size_t *at)
{
	const struct go_switch *sw = NULL;
	size_t i;

	for (i = 1; !sw && i < frames->nr; i++) {
		sw = go_switch(frames->v[i].symbol);
		*at = i;
	}
	return sw;
}

/**
 * gostack_cut() - drop the frames of a symbolized user stack, innermost first, beyond the first
 *                 Go stack switch past which they are not the thread's (keeping the switch)
 *
 * Return: whether frames were dropped.
 */
bool gostack_cut(struct outlier_frames *frames)
{
	size_t i, at = 0;

	if (!first_switch(frames, &at) || at + 1 == frames->nr) {
		return false;
	}
	for (i = at + 1; i < frames->nr; i++) {
		free(frames->v[i].symbol);
		free(frames->v[i].module);
		frames->v[i].symbol = NULL;
		frames->v[i].module = NULL;
	}
	frames->nr = at + 1;
	return true;
}

/**
 * gostack_flag() - say so on @o when its user stack ends at a switch that a goroutine left the
 *                  thread by (runtime.mcall, runtime.morestack): the thread is in the scheduler,
 *                  and what that goroutine was doing is not known from its stack
 *
 * Return: 0 or -ENOMEM.
 */
int gostack_flag(struct outlier *o)
{
	const struct go_switch *sw;
	size_t at = 0;

	sw = first_switch(&o->user_stack.frames, &at);
	if (!sw || !sw->goroutine) {
		return 0;
	}
	return outlier_add_flag(
		o,
		"go-stack-cut: the thread is on the Go scheduler's stack, entered at %s: "
		"%s, so its frames beyond are another time's and are not shown",
		sw->name, sw->goroutine);
}
