// SPDX-License-Identifier: GPL-2.0
/*
 * decode.c - turn a kernel-side ls_event into a struct outlier.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker/decode.h"
#include "tracker/gostack.h"
#include "tracker/ksyms.h"
#include "classify/syscalls.h"
#include "tracker/usyms.h"
#include "lib/outlier.h"

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

/**
 * decode_kernel_frames() - symbolize a kernel stack, innermost first, without the tracing glue
 * @frames: an empty stack, filled
 *
 * Stacks read from a BPF program start inside the program and the tracepoint plumbing that ran
 * it; those frames say nothing about the thread, so the leading ones are dropped.
 *
 * Return: 0 or -ENOMEM.
 */
int decode_kernel_frames(const struct ksyms *ks, const __u64 *ips, unsigned int nr,
			 struct outlier_frames *frames)
{
	const struct ksym *sym;
	unsigned int i, first = 0, n;
	int ret;

	if (nr > LS_MAX_DEPTH) {
		nr = LS_MAX_DEPTH;
	}
	for (n = 0; n < nr && ips[n]; n++) {
	}
	for (first = 0; first < n && ksyms_is_glue(lookup(ks, ips[first])); first++) {
	}
	ret = outlier_frames_alloc(frames, n - first);
	for (i = first; !ret && i < n; i++) {
		sym = lookup(ks, ips[i]);
		ret = outlier_frame_set(&frames->v[i - first], ips[i], sym ? sym->name : NULL,
					sym ? ips[i] - sym->addr : 0, "kernel");
	}
	return ret;
}

static bool same_frames(const struct outlier_frames *a, const struct outlier_frames *b)
{
	size_t i;

	if (a->nr != b->nr) {
		return false;
	}
	for (i = 0; i < a->nr; i++) {
		if (a->v[i].addr != b->v[i].addr) {
			return false;
		}
	}
	return true;
}

/*
 * merge_same_kstacks - stacks the BPF side told apart only by their scheduler glue (a switch-out
 * through schedule() or through a preemption point), which decode_kernel_frames() drops, are one
 * stack: their weights add up, so that no stack is printed twice ("1 of 2", "2 of 2").
 */
static void merge_same_kstacks(struct outlier *o)
{
	size_t i, j, n = 0;

	for (i = 0; i < o->nr_kernel_stacks; i++) {
		for (j = 0; j < n; j++) {
			if (same_frames(&o->kernel_stacks[j].frames, &o->kernel_stacks[i].frames)) {
				break;
			}
		}
		if (j < n) {
			o->kernel_stacks[j].weight_ns += o->kernel_stacks[i].weight_ns;
			outlier_frames_free(&o->kernel_stacks[i].frames);
			continue;
		}
		if (n != i) {
			o->kernel_stacks[n] = o->kernel_stacks[i];
		}
		n++;
	}
	o->nr_kernel_stacks = n;
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

static int decode_waker(const struct ls_event *e, const struct ksyms *ks, struct outlier *o)
{
	char comm[LS_TASK_COMM_LEN + 1];
	struct outlier_waker *waker;
	enum wake_context ctx;
	unsigned int nr;

	waker = calloc(1, sizeof(*waker));
	if (!waker) {
		return -ENOMEM;
	}
	o->waker = waker;

	nr = decode_wake_context(ks, e->waker.ips, e->waker.nr, &ctx);
	if (ctx == WAKE_TASK) {
		snprintf(comm, sizeof(comm), "%.*s", LS_TASK_COMM_LEN, e->waker.comm);
	} else {
		/* Whoever the interrupt landed on did not wake the thread: do not name it. */
		snprintf(comm, sizeof(comm), ctx == WAKE_HARDIRQ ? "[hardirq]" : "[softirq]");
		outlier_add_flag(o, "waker-in-interrupt: woken from %s context, on top of %.*s (pid %u)",
				 ctx == WAKE_HARDIRQ ? "hard interrupt" : "softirq",
				 LS_TASK_COMM_LEN, e->waker.comm, e->waker.pid);
	}
	waker->pid = ctx == WAKE_TASK ? (int32_t)e->waker.pid : 0;
	waker->tid = ctx == WAKE_TASK ? (int32_t)e->waker.tid : 0;
	if (outlier_set_str(&waker->comm, comm)) {
		return -ENOMEM;
	}
	return decode_kernel_frames(ks, e->waker.ips, nr, &waker->frames);
}

static int user_frame(struct usyms *us, pid_t pid, uint64_t addr, bool caller,
		      struct outlier_frame *frame)
{
	struct usym sym = { 0 };

	/*
	 * A caller's frame holds a return address, which may be the first byte of the next
	 * function: look up the call instruction before it.
	 */
	if (usyms_lookup(us, pid, caller ? addr - 1 : addr, &sym)) {
		memset(&sym, 0, sizeof(sym));
	}
	return outlier_frame_set(frame, addr, sym.symbol, sym.offset + caller, sym.module);
}

/*
 * decode_user_stack - the frame-pointer user stack the kernel walked, symbolized with the
 * mappings of the process, read now: the sooner after the outlier, the likelier it still lives.
 */
/*
 * A goroutine's frames get their source lines: a Go binary keeps its DWARF line table (unless
 * built with -ldflags=-w), and nothing else says where in the program's source a goroutine waits
 * (no lttng-ust statedump for show to symbolize it again). The innermost frame is where the
 * probe hit; each other is a return address, whose call is the byte before.
 */
static int source_lines(struct usyms *us, pid_t pid, struct outlier_frames *frames)
{
	const char *file;
	uint32_t line;
	size_t i;

	for (i = 0; i < frames->nr; i++) {
		struct outlier_frame *f = &frames->v[i];

		if (f->interp || !f->addr ||
		    usyms_source(us, pid, i ? f->addr - 1 : f->addr, &file, &line)) {
			continue;
		}
		if (outlier_set_str(&f->file, file)) {
			return -ENOMEM;
		}
		f->line = line;
	}
	return 0;
}

static int decode_user_stack(const struct ls_event *e, struct usyms *us, struct outlier *o)
{
	unsigned int nr = e->user.nr > LS_MAX_USER_DEPTH ? LS_MAX_USER_DEPTH : e->user.nr;
	int err = nr ? usyms_capture(us, e->pid) : 0, ret;

	ret = decode_user_frames(us, e->pid, (const uint64_t *)e->user.ips, nr,
				 &o->user_stack.frames);
	if (e->flags & LS_EF_GOROUTINE) {
		ret = ret ?: source_lines(us, e->pid, &o->user_stack.frames);
	}
	o->user_stack.source = nr ? OUTLIER_USTACK_FRAME_POINTER : OUTLIER_USTACK_NONE;
	ret = ret ?: gostack_flag(o);
	if (!nr) {
		outlier_add_flag(o, "no-user-stack: %s",
			 !(e->flags & LS_EF_USER_STACK_FAILED) ? "its user stack was empty" :
			 e->kind == LS_KIND_SLEEP ?
				 "its switch-out, where its user ip is kept, went unseen" :
				 "the kernel could not walk its user stack");
	} else if (err) {
		outlier_add_flag(o,
				 "user-stack-unsymbolized: the mappings of pid %u could not be read "
				 "(%s)",
				 e->pid, strerror(-err));
	}
	if (nr == LS_MAX_USER_DEPTH) {
		outlier_add_flag(o, "user-stack-truncated: deeper than %d frames",
				 LS_MAX_USER_DEPTH);
	}
	return ret;
}

/**
 * decode_user_frames() - symbolize @nr user addresses of @pid, innermost first (every address
 *                        after the first is a return address: its call is the byte before)
 * @frames: an empty stack, filled
 *
 * Return: 0 or -ENOMEM.
 */
int decode_user_frames(struct usyms *us, pid_t pid, const uint64_t *ips, unsigned int nr,
		       struct outlier_frames *frames)
{
	unsigned int i, n;
	int ret;

	for (n = 0; n < nr && ips[n]; n++) {
	}
	ret = outlier_frames_alloc(frames, n);
	for (i = 0; !ret && i < n; i++) {
		ret = user_frame(us, pid, ips[i], i > 0, &frames->v[i]);
	}
	/* A Go thread's frames beyond a stack switch may be another goroutine's (gostack.h). */
	gostack_cut(frames);
	return ret;
}

/* What the kernel side said was missing or uncertain about @e's stacks and signal. */
static void decode_flags(const struct ls_event *e, struct outlier *o, uint64_t sampled,
			 unsigned int truncated)
{
	if (e->flags & LS_EF_STACK_FAILED) {
		outlier_add_flag(o, "kernel-stack-unreadable: a wait stack could not be read");
	}
	if (e->flags & LS_EF_STACKS_DROPPED) {
		outlier_add_flag(o, "kernel-stacks-dropped: %u distinct stacks beyond the %d kept",
				 e->stacks_dropped, LS_MAX_STACKS);
	}
	if (e->flags & LS_EF_ACCUM_FULL) {
		outlier_add_flag(o, "kernel-stacks-lost: no room to keep this outlier's stacks and "
				    "waker (too many long waits at once)");
	} else if (e->blocked_ns && !o->nr_kernel_stacks) {
		outlier_add_flag(o, "no-wait-stack: no single wait lasted half the threshold");
	} else if (e->blocked_ns > sampled + 1000000) {
		outlier_add_flag(o,
				 "wait-stacks-partial: %" PRIu64 " of %" PRIu64
				 " blocked ns were sampled",
				 sampled, (uint64_t)e->blocked_ns);
	}
	if (truncated) {
		outlier_add_flag(o,
				 "kernel-stack-truncated: %u wait stack%s reached the %d-frame "
				 "limit; the outermost frames are missing",
				 truncated, truncated == 1 ? "" : "s", LS_MAX_DEPTH);
	}
	if (e->flags & LS_EF_WAKER_STACK_FAILED) {
		outlier_add_flag(o, "waker-stack-unreadable");
	} else if (e->has_waker && e->waker.nr >= LS_MAX_DEPTH) {
		outlier_add_flag(o,
				 "waker-stack-truncated: the waker's stack reached the %d-frame "
				 "limit",
				 LS_MAX_DEPTH);
	}
	if (e->flags & LS_EF_SIGNAL_DISPLACED) {
		outlier_add_flag(o, "signal-displaced: the application handles latsnap's signal "
				    "itself, so the preload library was not asked to unwind");
	}
	if (e->flags & LS_EF_SIGNAL_BLOCKED) {
		outlier_add_flag(o, "signal-blocked: the thread blocked latsnap's signal (or had one "
				    "pending), so the preload library was not asked to unwind");
	}
	if (e->flags & LS_EF_SWITCH_UNSEEN) {
		outlier_add_flag(o, "split-uncertain: its switch back onto the CPU went unseen (no "
				    "sched_switch event reached latsnap); when it ran again is "
				    "estimated from the CPU time the scheduler charged it since");
	}
	if (e->flags & LS_EF_WALK_UNSEEN) {
		outlier_add_flag(o, "user-stack-truncated: only the frame where it left the CPU: "
				    "its walk waited for its switch back in, which went unseen "
				    "(walking every preempted thread at its switch-out costs "
				    "microseconds)");
	}
	if (e->flags & LS_EF_CLOCK_BACK) {
		outlier_add_flag(o, "clock-skew: two CPUs' clocks disagreed while it waited (a time "
				    "read later was earlier); no part of the split is negative, but the "
				    "skew's microseconds may be counted in the next part");
	}
	if (e->flags & LS_EF_SIGNAL_BUSY) {
		outlier_add_flag(o, "signal-busy: the kernel could not send latsnap's signal now");
	}
	if (e->flags & LS_EF_SIGNAL_REFUSED) {
		outlier_add_flag(o, "signal-refused: the kernel refused latsnap's signal, so the "
				    "preload library was not asked to unwind; the user stack is a "
				    "frame-pointer walk");
	}
	if (e->flags & LS_EF_SIGNAL_UNSUPPORTED) {
		outlier_add_flag(o, "kernel-no-switch-signal: this kernel cannot signal a thread as "
				    "it comes back from an off-CPU sleep (it has neither sched_exit_tp "
				    "nor fexit on schedule()), so the preload library was not asked to "
				    "unwind; the user stack is a frame-pointer walk");
	}
}

/*
 * set_who - @o's kind, thread and syscall (its name, or "syscall_NR" for a number this build
 * does not know; *@syscall is the name, or NULL). Return: 0 or -ENOMEM.
 */
static int set_who(struct outlier *o, uint32_t pid, uint32_t tid, const char *comm16,
		   bool in_syscall, int32_t nr, const char **syscall)
{
	char comm[LS_TASK_COMM_LEN + 1], unknown[32];

	o->kind = in_syscall ? OUTLIER_SYSCALL : OUTLIER_SLEEP;
	o->pid = (int32_t)pid;
	o->tid = (int32_t)tid;
	snprintf(comm, sizeof(comm), "%.*s", LS_TASK_COMM_LEN, comm16);
	if (outlier_set_str(&o->comm, comm)) {
		return -ENOMEM;
	}
	*syscall = NULL;
	if (!in_syscall) {
		o->syscall_nr = -1;
		return 0;
	}
	*syscall = syscall_name(nr);
	snprintf(unknown, sizeof(unknown), "syscall_%d", nr);
	o->syscall_nr = nr;
	return outlier_set_str(&o->syscall, *syscall ? *syscall : unknown);
}

/* @o's span, from @start to @end, and its split into on-CPU, blocked and runqueue time. */
static void set_span(struct outlier *o, uint64_t start, uint64_t end, uint64_t on_cpu,
		     uint64_t blocked, uint64_t runq, uint32_t switches)
{
	o->start_ns = start;
	o->end_ns = end;
	o->duration_ns = end - start;
	o->on_cpu_ns = on_cpu;
	o->blocked_ns = blocked;
	o->runqueue_ns = runq;
	o->switches = switches;
}

/**
 * decode_event() - the outlier of @e, its stacks symbolized
 * @outp: the new outlier, on success (the caller frees it)
 *
 * Return: 0 or -ENOMEM.
 */
int decode_event(const struct ls_event *e, const struct ksyms *ks, struct usyms *us,
		 struct outlier **outp)
{
	unsigned int i, nr_stacks, truncated = 0;
	struct outlier_kstack *stack;
	struct outlier *o;
	uint64_t sampled = 0;
	const char *syscall = NULL;
	int ret = -ENOMEM;

	o = outlier_new();
	if (!o) {
		goto out;
	}
	if (set_who(o, e->pid, e->tid, e->comm, e->kind == LS_KIND_SYSCALL, e->syscall_nr,
		    &syscall)) {
		goto out;
	}
	set_span(o, e->start_ns, e->end_ns, e->on_cpu_ns, e->blocked_ns, e->runqueue_ns,
		 e->switches);
	if (e->kind == LS_KIND_SYSCALL) {
		memcpy(o->args, e->args, sizeof(o->args));
		o->has_args = true;
	}
	o->nvcsw = e->nvcsw;
	o->uid = e->uid;
	o->has_uid = true;
	o->ret = e->kind == LS_KIND_SYSCALL ? e->ret : 0;
	o->in_work = e->flags & LS_EF_IN_WORK;
	o->worked = e->flags & LS_EF_WORKED;
	o->got_work = e->flags & LS_EF_GOT_WORK;
	o->answered = e->flags & LS_EF_ANSWERED;
	o->handed = e->flags & LS_EF_HANDED;
	if (outlier_set_cause(o, placeholder_cause(e, syscall))) {
		goto out;
	}

	nr_stacks = e->nr_stacks > LS_MAX_STACKS ? LS_MAX_STACKS : e->nr_stacks;
	for (i = 0; i < nr_stacks; i++) {
		const struct ls_stack *st = &e->stacks[i];

		stack = outlier_add_kstack(o, st->weight_ns);
		if (!stack || decode_kernel_frames(ks, st->ips, st->nr, &stack->frames)) {
			goto out;
		}
		sampled += st->weight_ns;
		if (st->nr >= LS_MAX_DEPTH) {
			truncated++;
		}
	}
	merge_same_kstacks(o);
	if (decode_user_stack(e, us, o) || (e->has_waker && decode_waker(e, ks, o))) {
		goto out;
	}
	decode_flags(e, o, sampled, truncated);
	o->signalled = !!(e->flags & LS_EF_SIGNALLED);
	o->part_of_request = !!(e->flags & LS_EF_IN_REQUEST);
	ret = 0;
out:
	if (ret) {
		outlier_free(o);
		o = NULL;
	}
	*outp = o;
	return ret;
}

/**
 * decode_stall_user() - the user stack of a stalled thread, unwound from outside: from the user
 *                       registers the kernel saved at its last entry, with the CFI of its objects
 *                       and its memory read through /proc/PID/mem (it is not stopped)
 * @frames: an empty stack, filled
 *
 * Return: 0, or a negative errno when no frame could be had.
 */
int decode_stall_user(const struct ls_stall *st, struct usyms *us, struct outlier_frames *frames)
{
	uint64_t ips[LS_MAX_FRAMES];
	int nr;

	if (!st->regs[LS_NR_UREGS - 1]) {
		return -ENODATA;
	}
	nr = usyms_unwind(us, (pid_t)st->pid, (pid_t)st->tid, (const uint64_t *)st->regs, ips,
			  LS_MAX_FRAMES);
	if (nr <= 0) {
		return nr < 0 ? nr : -ENODATA;
	}
	return decode_user_frames(us, (pid_t)st->pid, ips, (unsigned int)nr, frames);
}

/**
 * decode_stall() - the outlier of a wait still under way, as far as it went: its kernel stack
 *                  now (weighted with its blocked time so far) and its user stack unwound from
 *                  outside; the caller says why it is reported (still-blocked, unfinished)
 * @outp: the new outlier, on success (the caller frees it)
 *
 * Return: 0 or -ENOMEM.
 */
int decode_stall(const struct ls_stall *st, const struct ksyms *ks, struct usyms *us,
		 struct outlier **outp)
{
	const uint64_t ip = st->regs[LS_NR_UREGS - 1];
	struct outlier_kstack *stack;
	const char *syscall = NULL;
	struct outlier *o;
	int ret = -ENOMEM, err;

	o = outlier_new();
	if (!o) {
		goto out;
	}
	if (set_who(o, st->pid, st->tid, st->comm, st->in_syscall, st->syscall_nr, &syscall)) {
		goto out;
	}
	set_span(o, st->start_ns, st->now_ns, st->on_cpu_ns, st->blocked_ns, st->runqueue_ns,
		 st->switches);
	if (st->in_syscall) {
		memcpy(o->args, st->args, sizeof(o->args));
		o->has_args = true;
	}
	o->nvcsw = st->voluntary;
	o->in_work = st->flags & LS_STALL_IN_WORK;
	o->worked = st->flags & LS_STALL_WORKED;
	if (outlier_set_cause(o, syscall ? syscall : "off-CPU")) {
		goto out;
	}
	if (st->nr_kips) {
		stack = outlier_add_kstack(o, st->blocked_ns ? st->blocked_ns : o->duration_ns);
		if (!stack ||
		    decode_kernel_frames(ks, st->kips,
					 st->nr_kips > LS_MAX_DEPTH ? LS_MAX_DEPTH : st->nr_kips,
					 &stack->frames)) {
			goto out;
		}
	} else {
		outlier_add_flag(o, "no-wait-stack: its kernel stack could not be read");
	}
	usyms_capture(us, (pid_t)st->pid);
	err = decode_stall_user(st, us, &o->user_stack.frames);
	if (err == -ENOMEM) {
		goto out;
	}
	if (gostack_flag(o)) {
		goto out;
	}
	if (o->user_stack.frames.nr) {
		o->user_stack.source = OUTLIER_USTACK_UNWIND;
		outlier_add_flag(o, "user-stack-remote: unwound from outside, from the registers "
				    "saved at its syscall entry (it was not stopped)");
	} else if (ip && !decode_user_frames(us, (pid_t)st->pid, &ip, 1, &o->user_stack.frames)) {
		/* Where it entered the kernel, at least: the place the idle policy knows it by. */
		o->user_stack.source = OUTLIER_USTACK_FRAME_POINTER;
		outlier_add_flag(o,
				 "user-stack-partial: only its innermost frame, from its saved "
				 "registers: the rest could not be unwound from outside (%s)",
				 strerror(-err));
	} else {
		outlier_add_flag(o,
				 "no-user-stack: its stack could not be unwound from outside (%s)",
				 strerror(-err));
	}
	if (st->flags & LS_STALL_NO_STATE) {
		outlier_add_flag(o, "start-unknown: it has waited since before latsnap tracked it; "
				    "start and duration count from when latsnap first saw it");
	}
	ret = 0;
out:
	if (ret) {
		outlier_free(o);
		o = NULL;
	}
	*outp = o;
	return ret;
}
