// SPDX-License-Identifier: GPL-2.0
/*
 * top.c - `latsnap top`: a live LatencyTOP screen (ncurses), or plain text or JSON refreshes,
 * of every wait on the machine: system-wide causes, then one process's or thread's.
 *
 * bpf/top.bpf.c aggregates the waits in the kernel; each refresh reads and empties its map, so
 * each screen shows the last interval. Causes come from the recorder's rules, applied to the
 * symbolized kernel stack and the syscall of each aggregate and cached per (stack, syscall); the
 * recorder's idle policy leaves out the threads waiting for work, counted apart. top/top-int.h
 * says which file does what.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "classify/rules.h"
#include "lib/util.h"
#include "top/top-int.h"

volatile sig_atomic_t top_stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	top_stop_requested = 1;
}

/* --batch N: N refreshes printed, one each interval. */
static int run_batch(struct top *t)
{
	struct timespec ts;
	uint64_t end, now;
	long i;
	int ret = 0;

	for (i = 0; i < t->opts.batch && !top_stop_requested; i++) {
		end = ls_now_ns() + t->opts.interval_ns;
		while (!top_stop_requested && (now = ls_now_ns()) < end) {
			ts.tv_sec = (time_t)((end - now) / 1000000000ull);
			ts.tv_nsec = (long)((end - now) % 1000000000ull);
			nanosleep(&ts, NULL);
		}
		if (top_stop_requested) {
			break;
		}
		ret = top_drain(t);
		if (ret) {
			break;
		}
		if (t->opts.json) {
			top_print_json(t, stdout);
		} else {
			top_print_text(t, stdout);
		}
		if (ferror(stdout)) {
			ls_err("top: writing to stdout: %s", strerror(errno));
			ret = -EIO;
			break;
		}
	}
	return ret;
}

/* The built-in rules, or --rules FILE's. Return: 0, or the exit status of the failure. */
static int load_rules(struct top *t)
{
	if (t->opts.rules_path) {
		if (rules_load(t->opts.rules_path, &t->own_rules)) {
			return 2;
		}
		t->rules = t->own_rules;
		return 0;
	}
	t->rules = rules_builtin();
	return t->rules ? 0 : 1;
}

static void top_close(struct top *t)
{
	top_drain_free(t);
	top_unload(t);
	top_idle_close(t);
	rules_free(t->own_rules);
	top_causes_free(t);
}

/**
 * top_main() - `latsnap top`: the live LatencyTOP screen, or --batch refreshes
 * @argc: argument count, the command name included
 * @argv: "top", then the options
 *
 * Return: the exit status: 0, 1 on a runtime failure, 2 on a usage error.
 */
int top_main(int argc, char **argv)
{
	struct top t = { .view = TOP_VIEW_CAUSE, .sort = TOP_SORT_TOTAL };
	struct sigaction sa = { .sa_handler = on_stop };
	int ret;

	ret = top_parse_args(&t.opts, argc, argv);
	if (ret) {
		return ret < 0 ? 0 : ret;
	}
	ret = load_rules(&t);
	if (ret) {
		return ret;
	}
	if (top_idle_open(&t)) {
		top_close(&t);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = top_load(&t);
	if (!ret) {
		ret = t.opts.batch ? run_batch(&t) : top_screen_run(&t);
	}
	top_close(&t);
	return ret ? 1 : 0;
}
