// SPDX-License-Identifier: GPL-2.0
/*
 * outlier-text.c - an outlier for people: its head line and its text block (summary.txt, record's
 * output).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/outlier.h"
#include "lib/text.h"

/* --- for people ---------------------------------------------------------------------------- */

static void print_share(FILE *out, const char *label, uint64_t part, uint64_t whole)
{
	char text[LS_DURATION_BUFSZ];

	ls_format_duration(part, text, sizeof(text));
	fprintf(out, "  %s %s (%.1f%%)", label, text, whole ? 100.0 * (double)part / whole : 0.0);
}

static void print_frames(FILE *out, const struct outlier_frames *frames, const char *indent)
{
	size_t i;

	if (!frames->nr) {
		fprintf(out, "%s(no frames)\n", indent);
		return;
	}
	for (i = 0; i < frames->nr; i++) {
		const struct outlier_frame *f = &frames->v[i];
		const char *module = f->module ? f->module : "?";

		if (f->symbol) {
			fputs(indent, out);
			ls_put_symbol(out, f->symbol);
			fprintf(out, "+0x%" PRIx64, f->offset);
		} else {
			fprintf(out, "%s0x%" PRIx64, indent, f->addr);
		}
		if (strcmp(module, "kernel")) {
			fputs(" (", out);
			ls_put_text(out, module);
			fputc(')', out);
		}
		fputc('\n', out);
	}
}

/*
 * The wait chain as flightbox put it: "read() 101.0 ms: srvhog 2666 ran 89.8 ms on CPU", then
 * each link's split, and on what it was blocked.
 */
static void print_wait_chain(FILE *out, const struct outlier *o)
{
	uint64_t span;
	size_t i;

	if (!o->nr_links) {
		return;
	}
	fputs("  wait chain (who held it up, nearest first):\n", out);
	for (i = 0; i < o->nr_links; i++) {
		const struct outlier_link *l = &o->wait_chain[i];

		span = l->to_ns > l->from_ns ? l->to_ns - l->from_ns : 0;
		fprintf(out, "  %*s%u. %s [pid %d tid %d], over %.1f ms:", (int)(2 * l->depth) - 2,
			"", l->depth, LS_TEXT(l->comm ? l->comm : "?"), l->pid, l->tid, span / 1e6);
		print_share(out, "ran", l->on_cpu_ns, span);
		fputs(" on CPU,", out);
		print_share(out, "blocked", l->blocked_ns, span);
		if (l->syscall) {
			fprintf(out, " in %s()", LS_TEXT(l->syscall));
		}
		fputc(',', out);
		print_share(out, "runqueue", l->runqueue_ns, span);
		if (l->unknown_ns) {
			fputc(',', out);
			print_share(out, "not followed", l->unknown_ns, span);
		}
		fputc('\n', out);
		if (l->frames.nr) {
			print_frames(out, &l->frames, "        ");
		}
	}
}

/**
 * outlier_print_head() - the first lines of outlier_print_text(): what, who, how long, when,
 *                        the split and the cause (show tells the rest its own way)
 */
void outlier_print_head(FILE *out, const struct outlier *o)
{
	char text[LS_DURATION_BUFSZ];

	ls_format_duration(o->duration_ns, text, sizeof(text));
	fprintf(out, "%s %s  %s[pid %d tid %d]  %s  at %" PRIu64 ".%09" PRIu64 "\n",
		outlier_kind_name(o->kind),
		LS_TEXT(o->request && o->request->probe ? o->request->probe :
			o->syscall			? o->syscall :
							  "off-cpu"),
		LS_TEXT(o->comm ? o->comm : "?"), o->pid, o->tid, text, o->start_ns / 1000000000,
		o->start_ns % 1000000000);
	print_share(out, "on-cpu", o->on_cpu_ns, o->duration_ns);
	print_share(out, "blocked", o->blocked_ns, o->duration_ns);
	print_share(out, "runqueue", o->runqueue_ns, o->duration_ns);
	fprintf(out, "  switches %u\n", o->switches);
	fprintf(out, "  cause: %s\n", LS_TEXT(o->cause ? o->cause : "unknown"));
	if (o->request && o->request->arg) {
		fprintf(out, "  argument: %s\n", LS_TEXT(o->request->arg));
	}
	if (o->request && o->request->key) {
		fprintf(out, "  object: %s (its thread began %u other requests meanwhile)\n",
			LS_TEXT(o->request->key), o->request->others);
	}
	if (o->request && o->request->upstream_tid) {
		fprintf(out, "  upstream: %s (pid %d, tid %d), which answered %.1f ms in\n",
			LS_TEXT(o->request->upstream_comm ? o->request->upstream_comm : ""),
			o->request->upstream_pid, o->request->upstream_tid,
			(double)(o->request->upstream_ns - o->start_ns) / 1e6);
	}
}

/* A request's waits, one line each, and its CPU profile, heaviest stacks first as recorded. */
static void print_request(FILE *out, const struct outlier *o)
{
	char text[LS_DURATION_BUFSZ];
	size_t i;

	if (o->nr_waits) {
		fprintf(out, "  waits inside it (%zu):\n", o->nr_waits);
	}
	for (i = 0; i < o->nr_waits; i++) {
		const struct outlier *w = o->waits[i];

		ls_format_duration(w->duration_ns, text, sizeof(text));
		fprintf(out, "    +%.3f ms %s %s, %s: %s\n",
			(double)(w->start_ns - o->start_ns) / 1e6,
			LS_TEXT(w->syscall ? w->syscall : "off-cpu"), text,
			LS_TEXT(w->nr_kernel_stacks && w->kernel_stacks[0].frames.nr &&
						w->kernel_stacks[0].frames.v[0].symbol ?
					w->kernel_stacks[0].frames.v[0].symbol :
					"?"),
			LS_TEXT(w->cause ? w->cause : "unknown"));
	}
	for (i = 0; i < o->nr_cpu_profile; i++) {
		const struct outlier_kstack *st = &o->cpu_profile[i];

		ls_format_duration(st->weight_ns, text, sizeof(text));
		fprintf(out, "  on CPU %s (%.1f%%):\n", text,
			o->duration_ns ? 100.0 * (double)st->weight_ns / o->duration_ns : 0.0);
		print_frames(out, &st->frames, "    ");
	}
}

/**
 * outlier_print_text() - one block for @o: what, how long, the split, where it waited, who woke
 *                        it, who held it up, and what is missing
 */
void outlier_print_text(FILE *out, const struct outlier *o)
{
	char text[LS_DURATION_BUFSZ];
	size_t i;

	outlier_print_head(out, o);
	for (i = 0; i < o->nr_kernel_stacks; i++) {
		const struct outlier_kstack *st = &o->kernel_stacks[i];

		ls_format_duration(st->weight_ns, text, sizeof(text));
		fprintf(out, "  kernel stack %zu of %zu, waited %s (%.1f%%):\n", i + 1,
			o->nr_kernel_stacks, text,
			o->duration_ns ? 100.0 * (double)st->weight_ns / o->duration_ns : 0.0);
		print_frames(out, &st->frames, "    ");
	}
	if (o->user_stack.source != OUTLIER_USTACK_NONE) {
		fprintf(out, "  user stack (%s):\n",
			outlier_ustack_source_name(o->user_stack.source));
		print_frames(out, &o->user_stack.frames, "    ");
	}
	if (o->waker) {
		if (o->waker->tid) {
			fprintf(out, "  woken by %s[pid %d tid %d]:\n",
				LS_TEXT(o->waker->comm ? o->waker->comm : "?"), o->waker->pid,
				o->waker->tid);
		} else {
			fprintf(out, "  woken by %s:\n",
				LS_TEXT(o->waker->comm ? o->waker->comm : "?"));
		}
		print_frames(out, &o->waker->frames, "    ");
	}
	if (o->holder) {
		fprintf(out, "  held up by %s[pid %d tid %d]%s%s%s%s:\n",
			LS_TEXT(o->holder->comm ? o->holder->comm : "?"), o->holder->pid,
			o->holder->tid, o->holder->what ? ", holding " : "",
			LS_TEXT(o->holder->what), o->holder->state ? ", " : "",
			LS_TEXT(o->holder->state));
		print_frames(out, &o->holder->frames, "    ");
		if (o->holder->kernel_frames.nr) {
			fprintf(out, "    kernel:\n");
			print_frames(out, &o->holder->kernel_frames, "      ");
		}
	}
	print_request(out, o);
	print_wait_chain(out, o);
	for (i = 0; i < o->nr_flags; i++) {
		fputs("  ! ", out);
		ls_put_text(out, o->flags[i]);
		fputc('\n', out);
	}
	fputc('\n', out);
}
