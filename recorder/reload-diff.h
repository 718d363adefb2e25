/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reload-diff.h - what a reload of `latsnap record` changes: the settings in use compared with
 * those read again, said in words. Nothing here touches the run; reload.c applies it.
 */
#ifndef LATSNAP_RELOAD_DIFF_H
#define LATSNAP_RELOAD_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "recorder/record-opts.h"

/**
 * reload_set_has() - is @x one of a set's elements (compared byte for byte)?
 * @set: @nr elements of @size bytes
 * @nr: their number
 * @size: the size of one
 * @x: the element looked for
 *
 * Return: true when it is.
 */
bool reload_set_has(const void *set, int nr, size_t size, const void *x);

/**
 * reload_same_set() - do two sets hold the same elements, in whatever order (a config file
 * reordered changes nothing)?
 * @a: @nr_a elements of @size bytes
 * @nr_a: their number
 * @b: @nr_b elements of @size bytes
 * @nr_b: their number
 * @size: the size of one
 *
 * Return: true when each element of one is in the other.
 */
bool reload_same_set(const void *a, int nr_a, const void *b, int nr_b, size_t size);

/**
 * reload_diff_fixed() - say on stderr each setting that differs in @next but that a reload
 * cannot change (it shaped the BPF programs, the LTTng session or the targets): it keeps its
 * value until a restart.
 * @path: the config file, for the message
 * @cur: the settings in use
 * @next: those read again
 */
void reload_diff_fixed(const char *path, const struct record_opts *cur,
		       const struct record_opts *next);

/**
 * reload_diff_limits() - append to @changes what a reload changes of the thresholds, --hang and
 * the retention limits ("threshold 50ms -> 20ms, max-age off -> 1h").
 * @changes: the string of changes, ", " between two
 * @size: its size
 * @cur: the settings in use
 * @next: those read again
 */
void reload_diff_limits(char *changes, size_t size, const struct record_opts *cur,
			const struct record_opts *next);

/**
 * reload_diff_targets() - the change of the targets (-p, --cgroup, --comm) a reload can make
 * live, said in @said ("pid 12 -> pid 12, 34; comm +web"), or "" when there is none. What
 * cannot change is said on stderr and kept: the targets of a run that has none that can change
 * live (@live 0: -a, or the processes with the preload library), -a or no target asked for, a
 * --cgroup or --comm where @live has no room for them (their old value is copied back into
 * @next). A pid new to the run that does not exist is said and taken out of @next.
 * @path: the config file, for the messages
 * @cur: the settings in use
 * @next: those read again; its targets become what the run should track
 * @live: tracker_live_targets(): which targets can change live (TRACKER_TARGET_*)
 * @said: the change, in words
 * @size: its size
 */
void reload_diff_targets(const char *path, const struct record_opts *cur, struct record_opts *next,
			 unsigned int live, char *said, size_t size);

#endif /* LATSNAP_RELOAD_DIFF_H */
