// SPDX-License-Identifier: GPL-2.0
/*
 * decode.c - turn a kernel-side ls_event into the contract's OUTLIER JSON object.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracker/decode.h"
#include "tracker/ksyms.h"
#include "classify/syscalls.h"
#include "tracker/usyms.h"

static struct json_object *json_u64(uint64_t value)
{
	/* json-c keeps int64; every value here (ns since boot, counts) fits. */
	return json_object_new_int64((int64_t)value);
}

/*
 * kallsyms has no sizes: an address far beyond the nearest symbol below it (past the end of the
 * kernel text, in memory loaded after the table was read) has no name we can trust.
 */
#define MAX_SYMBOL_SIZE (1u << 20)

static const struct ksym *lookup(const struct ksyms *ks, uint64_t addr)
{
	const struct ksym *sym = ks ? ksyms_lookup(ks, addr) : NULL;

	return sym && addr - sym->addr < MAX_SYMBOL_SIZE ? sym : NULL;
}

static struct json_object *kernel_frame(const struct ksyms *ks, uint64_t addr)
{
	const struct ksym *sym = lookup(ks, addr);
	struct json_object *frame = json_object_new_object();
	char hex[24];

	snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
	json_object_object_add(frame, "addr", json_object_new_string(hex));
	json_object_object_add(frame, "symbol", sym ? json_object_new_string(sym->name) : NULL);
	json_object_object_add(frame, "offset", json_u64(sym ? addr - sym->addr : 0));
	json_object_object_add(frame, "module", json_object_new_string("kernel"));
	return frame;
}

/**
 * decode_kernel_frames - symbolize a kernel stack, innermost first, without the tracing glue.
 *
 * Stacks read from a BPF program start inside the program and the tracepoint plumbing that ran
 * it; those frames say nothing about the thread, so the leading ones are dropped.
 */
struct json_object *decode_kernel_frames(const struct ksyms *ks, const __u64 *ips, unsigned int nr)
{
	struct json_object *frames = json_object_new_array();
	bool leading = true;
	unsigned int i;

	if (nr > LS_MAX_DEPTH) {
		nr = LS_MAX_DEPTH;
	}
	for (i = 0; i < nr && ips[i]; i++) {
		const struct ksym *sym = lookup(ks, ips[i]);

		if (leading && sym && ksyms_is_glue(sym)) {
			continue;
		}
		leading = false;
		json_object_array_add(frames, kernel_frame(ks, ips[i]));
	}
	return frames;
}

static const char *placeholder_cause(const struct ls_event *e, const char *syscall)
{
	uint64_t duration = e->end_ns - e->start_ns;

	/* The rules engine of the recorder names causes from stacks; until then, the split. */
	if (e->runqueue_ns * 2 > duration) {
		return "waiting for CPU";
	}
	if (e->kind == LS_KIND_SLEEP) {
		return e->blocked_ns ? "off-CPU wait outside a syscall" : "preempted";
	}
	return syscall ? syscall : "unknown syscall";
}

static void add_flag(struct json_object *flags, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_flag(struct json_object *flags, const char *fmt, ...)
{
	char text[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object_array_add(flags, json_object_new_string(text));
}

static bool has_prefix(const char *name, const char *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

/*
 * Where a wakeup ran, read from the waker's stack: the unwinder crosses from the interrupt stack
 * into the interrupted task, so the first interrupt-entry frame, innermost first, says whether
 * the wakeup came from an interrupt, and everything beyond it belongs to a bystander.
 * Returns the number of frames that are the waker's own.
 */
unsigned int decode_wake_context(const struct ksyms *ks, const __u64 *ips, unsigned int nr,
				 enum wake_context *ctx)
{
	static const char *const softirq_entries[] = { "handle_softirqs", "__do_softirq", NULL };
	static const char *const hardirq_prefixes[] = {
		"asm_sysvec_",	    "asm_common_interrupt",
		"asm_exc_nmi",	    "asm_spurious_interrupt",
		"sysvec_",	    "__sysvec_",
		"common_interrupt", "exc_nmi",
		"handle_irq_event", NULL,
	};
	const char *const *entry;
	unsigned int i, softirq_at = 0;

	*ctx = WAKE_TASK;
	for (i = 0; i < nr && i < LS_MAX_DEPTH && ips[i]; i++) {
		const struct ksym *sym = lookup(ks, ips[i]);

		if (!sym) {
			continue;
		}
		for (entry = softirq_entries; !softirq_at && *entry; entry++) {
			if (!strcmp(sym->name, *entry)) {
				softirq_at = i + 1;
			}
		}
		for (entry = hardirq_prefixes; *entry; entry++) {
			if (has_prefix(sym->name, *entry)) {
				*ctx = softirq_at ? WAKE_SOFTIRQ : WAKE_HARDIRQ;
				return softirq_at ? softirq_at : i + 1;
			}
		}
	}
	/*
	 * A softirq with no interrupt below it ran in the task's own context, at the end of its
	 * local_bh_disable() section, mostly on its behalf (a loopback send wakes the receiver so):
	 * the task is the waker.
	 */
	return nr;
}

static struct json_object *decode_waker(const struct ls_event *e, const struct ksyms *ks,
					struct json_object *flags)
{
	struct json_object *waker = json_object_new_object();
	char comm[LS_TASK_COMM_LEN + 1];
	enum wake_context ctx;
	unsigned int nr;

	nr = decode_wake_context(ks, e->waker.ips, e->waker.nr, &ctx);
	if (ctx == WAKE_TASK) {
		snprintf(comm, sizeof(comm), "%.*s", LS_TASK_COMM_LEN, e->waker.comm);
	} else {
		/* Whoever the interrupt landed on did not wake the thread: do not name it. */
		snprintf(comm, sizeof(comm), ctx == WAKE_HARDIRQ ? "[hardirq]" : "[softirq]");
		add_flag(flags, "waker-in-interrupt: woken from %s context, on top of %s (pid %u)",
			 ctx == WAKE_HARDIRQ ? "hard interrupt" : "softirq", e->waker.comm,
			 e->waker.pid);
	}
	json_object_object_add(waker, "pid",
			       json_object_new_int(ctx == WAKE_TASK ? (int)e->waker.pid : 0));
	json_object_object_add(waker, "tid",
			       json_object_new_int(ctx == WAKE_TASK ? (int)e->waker.tid : 0));
	json_object_object_add(waker, "comm", json_object_new_string(comm));
	json_object_object_add(waker, "frames", decode_kernel_frames(ks, e->waker.ips, nr));
	return waker;
}

static struct json_object *user_frame(struct usyms *us, pid_t pid, uint64_t addr, bool caller)
{
	struct json_object *frame = json_object_new_object();
	struct usym sym = { 0 };
	char hex[24];

	/*
	 * A caller's frame holds a return address, which may be the first byte of the next
	 * function: look up the call instruction before it.
	 */
	if (usyms_lookup(us, pid, caller ? addr - 1 : addr, &sym)) {
		memset(&sym, 0, sizeof(sym));
	}
	snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
	json_object_object_add(frame, "addr", json_object_new_string(hex));
	json_object_object_add(frame, "symbol",
			       sym.symbol ? json_object_new_string(sym.symbol) : NULL);
	json_object_object_add(frame, "offset", json_u64(sym.symbol ? sym.offset + caller : 0));
	json_object_object_add(frame, "module",
			       sym.module ? json_object_new_string(sym.module) : NULL);
	return frame;
}

/*
 * decode_user_stack - the frame-pointer user stack the kernel walked, symbolized with the
 * mappings of the process, read now: the sooner after the outlier, the likelier it still lives.
 */
static struct json_object *decode_user_stack(const struct ls_event *e, struct usyms *us,
					     struct json_object *flags)
{
	struct json_object *stack = json_object_new_object(), *frames = json_object_new_array();
	unsigned int i, nr = e->user.nr > LS_MAX_USER_DEPTH ? LS_MAX_USER_DEPTH : e->user.nr;
	int err = nr ? usyms_capture(us, e->pid) : 0;

	for (i = 0; i < nr && e->user.ips[i]; i++) {
		json_object_array_add(frames, user_frame(us, e->pid, e->user.ips[i], i > 0));
	}
	json_object_object_add(stack, "source",
			       json_object_new_string(nr ? "frame-pointer" : "none"));
	json_object_object_add(stack, "frames", frames);
	if (!nr) {
		add_flag(flags, "no-user-stack: %s",
			 !(e->flags & LS_EF_USER_STACK_FAILED) ? "its user stack was empty" :
			 e->kind == LS_KIND_SLEEP ?
				 "its switch-out, where its user ip is kept, went unseen" :
				 "the kernel could not walk its user stack");
	} else if (err) {
		add_flag(flags,
			 "user-stack-unsymbolized: the mappings of pid %u could not be read "
			 "(%s)",
			 e->pid, strerror(-err));
	}
	if (nr == LS_MAX_USER_DEPTH) {
		add_flag(flags, "user-stack-truncated: deeper than %d frames", LS_MAX_USER_DEPTH);
	}
	return stack;
}

/**
 * decode_user_frames - FRAME objects for @nr user addresses of @pid, innermost first (every
 * address after the first is a return address: its call is the byte before).
 */
struct json_object *decode_user_frames(struct usyms *us, pid_t pid, const uint64_t *ips,
				       unsigned int nr)
{
	struct json_object *frames = json_object_new_array();
	unsigned int i;

	for (i = 0; i < nr && ips[i]; i++) {
		json_object_array_add(frames, user_frame(us, pid, ips[i], i > 0));
	}
	return frames;
}

/**
 * decode_event - the OUTLIER object for @e.
 * @lost_before: counters of losses since the previous outlier, already formatted as flags.
 */
struct json_object *decode_event(const struct ls_event *e, const struct ksyms *ks, struct usyms *us,
				 struct json_object *lost_before)
{
	const char *syscall = NULL;
	struct json_object *outlier, *stacks, *flags;
	char comm[LS_TASK_COMM_LEN + 1];
	unsigned int i, nr_stacks, truncated = 0;
	uint64_t sampled = 0;

	outlier = json_object_new_object();
	flags = json_object_new_array();
	if (e->kind == LS_KIND_SYSCALL) {
		syscall = syscall_name(e->syscall_nr);
	}
	snprintf(comm, sizeof(comm), "%.*s", LS_TASK_COMM_LEN, e->comm);

	json_object_object_add(outlier, "kind",
			       json_object_new_string(e->kind == LS_KIND_SYSCALL ? "syscall" :
										   "sleep"));
	json_object_object_add(outlier, "pid", json_object_new_int((int)e->pid));
	json_object_object_add(outlier, "tid", json_object_new_int((int)e->tid));
	json_object_object_add(outlier, "comm", json_object_new_string(comm));
	if (e->kind == LS_KIND_SYSCALL) {
		char unknown[32];

		if (!syscall) {
			snprintf(unknown, sizeof(unknown), "syscall_%d", e->syscall_nr);
		}
		json_object_object_add(outlier, "syscall",
				       json_object_new_string(syscall ? syscall : unknown));
		json_object_object_add(outlier, "syscall_nr", json_object_new_int(e->syscall_nr));
	} else {
		json_object_object_add(outlier, "syscall", NULL);
		json_object_object_add(outlier, "syscall_nr", NULL);
	}
	json_object_object_add(outlier, "start_ns", json_u64(e->start_ns));
	json_object_object_add(outlier, "end_ns", json_u64(e->end_ns));
	json_object_object_add(outlier, "duration_ns", json_u64(e->end_ns - e->start_ns));
	json_object_object_add(outlier, "on_cpu_ns", json_u64(e->on_cpu_ns));
	json_object_object_add(outlier, "blocked_ns", json_u64(e->blocked_ns));
	json_object_object_add(outlier, "runqueue_ns", json_u64(e->runqueue_ns));
	json_object_object_add(outlier, "switches", json_object_new_int((int)e->switches));
	json_object_object_add(outlier, "cause",
			       json_object_new_string(placeholder_cause(e, syscall)));

	stacks = json_object_new_array();
	nr_stacks = e->nr_stacks > LS_MAX_STACKS ? LS_MAX_STACKS : e->nr_stacks;
	for (i = 0; i < nr_stacks; i++) {
		const struct ls_stack *st = &e->stacks[i];
		struct json_object *stack = json_object_new_object();

		json_object_object_add(stack, "weight_ns", json_u64(st->weight_ns));
		json_object_object_add(stack, "frames", decode_kernel_frames(ks, st->ips, st->nr));
		json_object_array_add(stacks, stack);
		sampled += st->weight_ns;
		if (st->nr >= LS_MAX_DEPTH) {
			truncated++;
		}
	}
	json_object_object_add(outlier, "kernel_stacks", stacks);

	json_object_object_add(outlier, "user_stack", decode_user_stack(e, us, flags));

	json_object_object_add(outlier, "waker", e->has_waker ? decode_waker(e, ks, flags) : NULL);
	json_object_object_add(outlier, "wait_chain", json_object_new_array());

	if (e->flags & LS_EF_STACK_FAILED) {
		add_flag(flags, "kernel-stack-unreadable: a wait stack could not be read");
	}
	if (e->flags & LS_EF_STACKS_DROPPED) {
		add_flag(flags, "kernel-stacks-dropped: %u distinct stacks beyond the %d kept",
			 e->stacks_dropped, LS_MAX_STACKS);
	}
	if (e->flags & LS_EF_ACCUM_FULL) {
		add_flag(flags,
			 "kernel-stacks-lost: no room to keep this outlier's stacks and waker "
			 "(too many long waits at once)");
	} else if (e->blocked_ns && !nr_stacks) {
		add_flag(flags, "no-wait-stack: no single wait lasted half the threshold");
	} else if (e->blocked_ns > sampled + 1000000) {
		add_flag(flags,
			 "wait-stacks-partial: %" PRIu64 " of %" PRIu64 " blocked ns were sampled",
			 sampled, (uint64_t)e->blocked_ns);
	}
	if (truncated) {
		add_flag(flags,
			 "kernel-stack-truncated: %u wait stack%s reached the %d-frame limit; "
			 "the outermost frames are missing",
			 truncated, truncated == 1 ? "" : "s", LS_MAX_DEPTH);
	}
	if (e->flags & LS_EF_WAKER_STACK_FAILED) {
		add_flag(flags, "waker-stack-unreadable");
	} else if (e->has_waker && e->waker.nr >= LS_MAX_DEPTH) {
		add_flag(flags,
			 "waker-stack-truncated: the waker's stack reached the %d-frame limit",
			 LS_MAX_DEPTH);
	}
	if (e->flags & LS_EF_SIGNAL_DISPLACED) {
		add_flag(flags,
			 "signal-displaced: the application handles latsnap's signal itself, "
			 "so the preload library was not asked to unwind");
	}
	if (e->flags & LS_EF_SIGNAL_BLOCKED) {
		add_flag(flags, "signal-blocked: the thread blocked latsnap's signal (or had one "
				"pending), so the preload library was not asked to unwind");
	}
	if (e->flags & LS_EF_SWITCH_UNSEEN) {
		add_flag(flags,
			 "split-uncertain: a switch back onto the CPU went unseen (the "
			 "kernel's BPF recursion guard); the time since the wakeup is counted as "
			 "runqueue, though its last part was on CPU");
	}
	if (e->flags & LS_EF_SIGNAL_BUSY) {
		add_flag(flags, "signal-busy: the kernel could not send latsnap's signal now");
	}
	if (lost_before) {
		for (i = 0; i < json_object_array_length(lost_before); i++) {
			json_object_array_add(
				flags, json_object_get(json_object_array_get_idx(lost_before, i)));
		}
	}
	json_object_object_add(outlier, "signalled",
			       json_object_new_boolean(!!(e->flags & LS_EF_SIGNALLED)));
	json_object_object_add(outlier, "flags", flags);
	return outlier;
}
