// SPDX-License-Identifier: GPL-2.0
/*
 * frames.c - the one list of BPF tracing glue frames: the tracker leaves them out of the stacks
 * it decodes, review out of older snapshots that still have them, and the tests check that no
 * stack holds one (tests/integration/lib.sh reads glue_patterns[] below, so keep its one entry
 * per line form).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "classify/frames.h"
#include "lib/outlier.h"

enum glue_match {
	GLUE_EXACT, /* the whole name */
	GLUE_PREFIX, /* any name that starts with it */
	GLUE_HEX16, /* the prefix and then 16 hex digits: a JIT-ed program's tag */
	GLUE_DIGITS, /* the prefix and then a number */
};

struct glue_pattern {
	const char *text;
	enum glue_match match;
};

/*
 * JIT-ed programs and trampolines are matched by the names the kernel gives them
 * (bpf_prog_<16 hex tag>_..., bpf_trampoline_<number>) so that ordinary kernel functions such as
 * bpf_prog_realloc or bpf_trampoline_link_prog are never hidden.
 */
static const struct glue_pattern glue_patterns[] = {
	{ "trace_call_bpf", GLUE_EXACT }, /* kprobe and perf event programs */
	{ "bpf_prog_", GLUE_HEX16 }, /* JIT-ed programs */
	{ "bpf_trampoline_", GLUE_DIGITS }, /* fentry and tp_btf trampolines */
	{ "bpf_trace_run", GLUE_PREFIX }, /* bpf_trace_run1..12: raw tracepoint to BPF */
	{ "__bpf_trace_", GLUE_PREFIX }, /* per-tracepoint BPF stubs */
	{ "__traceiter_", GLUE_PREFIX }, /* tracepoint iterators calling every probe */
	{ "perf_trace_", GLUE_PREFIX }, /* perf tracepoint handlers and their helpers */
	{ "bpf_get_stack", GLUE_PREFIX }, /* the stack-capture helpers themselves */
	{ "bpf_get_task_stack", GLUE_PREFIX }, /* ... for another task */
	{ "__bpf_get_stack", GLUE_PREFIX }, /* ... and their common body */
	{ "__bpf_get_task_stack", GLUE_PREFIX }, /* ... and its own, on newer kernels */
	{ "bpf_dispatcher_", GLUE_PREFIX }, /* BPF dispatcher images */
	{ "__bpf_prog_enter", GLUE_PREFIX }, /* trampoline entry into fentry/tp_btf programs */
	{ "__bpf_prog_exit", GLUE_PREFIX }, /* ... and exit from them */
};

static bool glue_matches(const struct glue_pattern *p, const char *symbol)
{
	size_t len = strlen(p->text);
	bool ret = false;

	switch (p->match) {
	case GLUE_EXACT:
		ret = !strcmp(symbol, p->text);
		break;
	case GLUE_PREFIX:
		ret = !strncmp(symbol, p->text, len);
		break;
	case GLUE_HEX16:
		ret = !strncmp(symbol, p->text, len) &&
		      strspn(symbol + len, "0123456789abcdef") >= 16;
		break;
	case GLUE_DIGITS:
		ret = !strncmp(symbol, p->text, len) && strspn(symbol + len, "0123456789") >= 1;
		break;
	}
	return ret;
}

/**
 * frames_is_tracing_glue() - is this frame latsnap's own instrumentation rather than the
 *                            traced thread's work?
 * @symbol: the frame's symbol, or NULL when it has none
 * @module: its module (a kernel module name, "kernel", or NULL); everything in module "bpf"
 *	(JIT-ed code) is glue, whatever its name
 *
 * Covers BPF programs and trampolines, the tracepoint and perf plumbing that calls them, and the
 * stack-capture helpers: bpf_get_task_stack() from a sched_switch program returns them on top of
 * some stacks (PLATFORM.md). They say where latsnap looked, not where the thread waited.
 */
bool frames_is_tracing_glue(const char *symbol, const char *module)
{
	size_t i;

	if (module && !strcmp(module, "bpf")) {
		return true;
	}
	if (!symbol) {
		return false;
	}
	for (i = 0; i < sizeof(glue_patterns) / sizeof(glue_patterns[0]); i++) {
		if (glue_matches(&glue_patterns[i], symbol)) {
			return true;
		}
	}
	return false;
}

/**
 * frames_is_kernel() - is this frame the kernel's (or a kernel module's)?
 * @frame: a frame of a stack that may hold both, such as a request's sampled on-CPU stacks
 *
 * Module "kernel" is the kernel's, a path a user object's; any other module (a kernel module's
 * name, "[vdso]", none) is told by its address: the kernel's are in the upper half.
 */
bool frames_is_kernel(const struct outlier_frame *frame)
{
	if (frame->module && !strcmp(frame->module, "kernel")) {
		return true;
	}
	if (frame->module && frame->module[0] == '/') {
		return false;
	}
	return frame->addr >> 63;
}

/**
 * frames_split_sample() - the kernel part and the user part of a sampled on-CPU stack
 * @sample: its frames, kernel frames innermost first and then user frames innermost first (a
 *	    request's cpu_profile stack)
 * @kernel: receives the leading kernel frames (pointing into @sample)
 * @user: receives the rest (pointing into @sample)
 */
void frames_split_sample(const struct outlier_frames *sample, struct outlier_frames *kernel,
			 struct outlier_frames *user)
{
	size_t k;

	for (k = 0; k < sample->nr && frames_is_kernel(&sample->v[k]); k++) {
	}
	kernel->v = k ? sample->v : NULL;
	kernel->nr = k;
	user->v = k < sample->nr ? sample->v + k : NULL;
	user->nr = sample->nr - k;
}
