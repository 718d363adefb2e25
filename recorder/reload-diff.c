// SPDX-License-Identifier: GPL-2.0
/*
 * reload-diff.c - what a reload of `latsnap record` changes: the settings in use compared with
 * those read again from the config file and the command line, and said in words; what cannot
 * change without a restart is said and kept. The targets (-p, --cgroup, --comm) are sets,
 * compared whatever their order by one helper. reload.c applies the result.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "recorder/reload-diff.h"
#include "tracker/tracker.h"

/**
 * reload_set_has() - is @x one of the @nr elements of @size bytes at @set?
 */
bool reload_set_has(const void *set, int nr, size_t size, const void *x)
{
	const char *elem = set;
	int i;

	for (i = 0; i < nr; i++, elem += size) {
		if (!memcmp(elem, x, size)) {
			return true;
		}
	}
	return false;
}

/* Is each element of @a in @b? */
static bool set_within(const void *a, int nr_a, const void *b, int nr_b, size_t size)
{
	const char *elem = a;
	int i;

	for (i = 0; i < nr_a; i++, elem += size) {
		if (!reload_set_has(b, nr_b, size, elem)) {
			return false;
		}
	}
	return true;
}

/**
 * reload_same_set() - the same elements in @a and @b, in whatever order.
 */
bool reload_same_set(const void *a, int nr_a, const void *b, int nr_b, size_t size)
{
	return set_within(a, nr_a, b, nr_b, size) && set_within(b, nr_b, a, nr_a, size);
}

static bool same_pids(const struct record_opts *a, const struct record_opts *b)
{
	return reload_same_set(a->pids, a->nr_pids, b->pids, b->nr_pids, sizeof(a->pids[0]));
}

static bool same_cgroups(const struct record_opts *a, const struct record_opts *b)
{
	return reload_same_set(a->cgroup_ids, a->nr_cgroups, b->cgroup_ids, b->nr_cgroups,
			       sizeof(a->cgroup_ids[0]));
}

static bool same_comms(const struct record_opts *a, const struct record_opts *b)
{
	return reload_same_set(a->comms, a->nr_comms, b->comms, b->nr_comms, sizeof(a->comms[0]));
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Say that @what changed in the config file but keeps its value until a restart. */
static void needs_restart(const char *path, const char *what)
{
	fprintf(stderr,
		"latsnap: record: %s: %s changed: needs a restart (the value in use stays)\n", path,
		what);
}

static bool same_ust_events(const struct record_opts *cur, const struct record_opts *next)
{
	bool same = cur->rec.nr_ust_events == next->rec.nr_ust_events;
	int i;

	for (i = 0; same && i < cur->rec.nr_ust_events; i++) {
		same = !strcmp(cur->rec.ust_events[i], next->rec.ust_events[i]);
	}
	return same;
}

static bool same_requests(const struct record_opts *cur, const struct record_opts *next)
{
	bool same = cur->nr_requests == next->nr_requests;
	int i;

	for (i = 0; same && i < cur->nr_requests; i++) {
		same = !strcmp(cur->requests[i].text, next->requests[i].text);
	}
	return same;
}

/**
 * reload_diff_fixed() - the settings a reload cannot change (they shaped the BPF programs, the
 * LTTng session or the targets): each one that differs is said, and left as it is.
 */
void reload_diff_fixed(const char *path, const struct record_opts *cur,
		       const struct record_opts *next)
{
	if (!same_text(cur->output, next->output) || !same_text(cur->relay, next->relay) ||
	    !same_text(cur->keep_local, next->keep_local)) {
		needs_restart(path, "output (-o, --keep-local)");
	}
	if (cur->rec.buffer_size != next->rec.buffer_size) {
		needs_restart(path, "buffer-size");
	}
	if (cur->rec.context_level != next->rec.context_level) {
		needs_restart(path, "context");
	}
	if (cur->context_floor_ns != next->context_floor_ns) {
		needs_restart(path, "context-floor");
	}
	if (!same_ust_events(cur, next)) {
		needs_restart(path, "ust-events");
	}
	if (!same_requests(cur, next)) {
		needs_restart(path, "request");
	}
	if (cur->exact_start != next->exact_start) {
		needs_restart(path, "exact-start");
	}
	if (cur->include_idle != next->include_idle ||
	    memcmp(cur->idle, next->idle, sizeof(cur->idle))) {
		needs_restart(path, "include-idle, idle-syscalls");
	}
	if (cur->no_snapshot != next->no_snapshot || cur->json != next->json ||
	    cur->duration_ns != next->duration_ns || cur->no_hang != next->no_hang) {
		needs_restart(path, "no-snapshot, json, duration or hang off");
	}
	if (cur->signal != next->signal || cur->no_preload != next->no_preload ||
	    cur->go_waits != next->go_waits || cur->max_rate != next->max_rate) {
		needs_restart(path, "signal, no-preload, go-waits, max-rate");
	}
	if (cur->log_stacks != next->log_stacks || !same_text(cur->stack_log, next->stack_log)) {
		needs_restart(path, "log-stacks, stack-log");
	}
}

/* "threshold 50ms -> 20ms" for each duration that changed, appended to @buf. */
static void say_change(char *buf, size_t size, const char *what, uint64_t from, uint64_t to)
{
	char a[32], b[32];
	size_t used = strlen(buf);

	if (from == to || used >= size) {
		return;
	}
	record_opts_format_duration(from, a, sizeof(a));
	record_opts_format_duration(to, b, sizeof(b));
	snprintf(buf + used, size - used, "%s%s %s -> %s", used ? ", " : "", what, from ? a : "off",
		 to ? b : "off");
}

/**
 * reload_diff_limits() - the thresholds, --hang and the retention limits that changed, said.
 */
void reload_diff_limits(char *changes, size_t size, const struct record_opts *cur,
			const struct record_opts *next)
{
	say_change(changes, size, "threshold", cur->threshold_ns, next->threshold_ns);
	say_change(changes, size, "sleep threshold", cur->sleep_threshold_ns,
		   next->sleep_threshold_ns);
	say_change(changes, size, "hang", cur->hang_ns, next->hang_ns);
	say_change(changes, size, "max-age", cur->rec.max_age_ns, next->rec.max_age_ns);
	say_change(changes, size, "repeat-interval", cur->rec.guard.repeat_ns,
		   next->rec.guard.repeat_ns);
	if (cur->rec.guard.per_minute != next->rec.guard.per_minute ||
	    cur->rec.guard.user_per_minute != next->rec.guard.user_per_minute) {
		snprintf(changes + strlen(changes), size - strlen(changes),
			 "%smax-per-minute %u, max-user-per-minute %u", *changes ? ", " : "",
			 next->rec.guard.per_minute, next->rec.guard.user_per_minute);
	}
	if (cur->rec.max_size != next->rec.max_size ||
	    cur->rec.max_snapshots != next->rec.max_snapshots) {
		snprintf(changes + strlen(changes), size - strlen(changes),
			 "%smax-size %" PRIu64 ", max-snapshots %u", *changes ? ", " : "",
			 next->rec.max_size, next->rec.max_snapshots);
	}
}

/* "pid 12, 34", or "no pid". */
static void say_pids(char *buf, size_t size, const int *pids, int nr)
{
	int i;

	if (!nr) {
		record_appendf(buf, size, "no pid");
	}
	for (i = 0; i < nr; i++) {
		record_appendf(buf, size, "%s%d", i ? ", " : "pid ", pids[i]);
	}
}

static void say_cgroup(char *buf, size_t size, const void *elem)
{
	record_appendf(buf, size, "%" PRIu64, *(const uint64_t *)elem);
}

static void say_comm(char *buf, size_t size, const void *elem)
{
	const struct ls_comm *comm = elem;

	record_appendf(buf, size, "%.*s", LS_TASK_COMM_LEN, comm->name);
}

/*
 * "LABEL -X +Y" for the elements @a has and @b not (-), and those @b has and @a not (+), each
 * said by @say; nothing when the sets are the same.
 */
static void say_set_change(char *buf, size_t size, const char *label, const void *a, int nr_a,
			   const void *b, int nr_b, size_t elem_size,
			   void (*say)(char *buf, size_t size, const void *elem))
{
	const char *sep = label, *elem;
	int i;

	for (i = 0, elem = a; i < nr_a; i++, elem += elem_size) {
		if (!reload_set_has(b, nr_b, elem_size, elem)) {
			record_appendf(buf, size, "%s-", sep);
			say(buf, size, elem);
			sep = " ";
		}
	}
	for (i = 0, elem = b; i < nr_b; i++, elem += elem_size) {
		if (!reload_set_has(a, nr_a, elem_size, elem)) {
			record_appendf(buf, size, "%s+", sep);
			say(buf, size, elem);
			sep = " ";
		}
	}
}

/* A pid new to the run must be there now (as at the start); one that exited since, not. */
static void drop_gone_pids(const char *path, const struct record_opts *cur,
			   struct record_opts *next)
{
	int i;

	for (i = 0; i < next->nr_pids; i++) {
		if (!reload_set_has(cur->pids, cur->nr_pids, sizeof(cur->pids[0]),
				    &next->pids[i]) &&
		    kill(next->pids[i], 0) && errno == ESRCH) {
			ls_err("record: %s: pid %d: no such process, not tracked", path,
			       next->pids[i]);
			next->pids[i--] = next->pids[--next->nr_pids];
		}
	}
}

/* The words of a change of targets that can be made live. */
static void say_targets(const struct record_opts *cur, const struct record_opts *next, char *said,
			size_t size)
{
	if (!same_pids(cur, next)) {
		say_pids(said, size, cur->pids, cur->nr_pids);
		record_appendf(said, size, " -> ");
		say_pids(said, size, next->pids, next->nr_pids);
	}
	if (!same_comms(cur, next)) {
		record_appendf(said, size, "%s", *said ? "; " : "");
		say_set_change(said, size, "comm ", cur->comms, cur->nr_comms, next->comms,
			       next->nr_comms, sizeof(cur->comms[0]), say_comm);
	}
	if (!same_cgroups(cur, next)) {
		record_appendf(said, size, "%s", *said ? "; " : "");
		say_set_change(said, size, "cgroup ", cur->cgroup_ids, cur->nr_cgroups,
			       next->cgroup_ids, next->nr_cgroups, sizeof(cur->cgroup_ids[0]),
			       say_cgroup);
	}
}

/**
 * reload_diff_targets() - the targets of @next against those in use: what can change live, said
 * in @said; the rest said on stderr and kept. COMMAND stays tracked whatever they become.
 */
void reload_diff_targets(const char *path, const struct record_opts *cur, struct record_opts *next,
			 unsigned int live, char *said, size_t size)
{
	*said = '\0';
	if (cur->all == next->all && same_pids(cur, next) && same_cgroups(cur, next) &&
	    same_comms(cur, next)) {
		return;
	}
	if (!live) {
		needs_restart(path, cur->all ? "the targets (--all in use)" :
					       "the targets (none in use: the processes with the "
					       "preload library)");
		return;
	}
	if (!same_cgroups(cur, next) && !(live & TRACKER_TARGET_CGROUPS)) {
		needs_restart(path, "cgroup (none at the start)");
		memcpy(next->cgroup_ids, cur->cgroup_ids, sizeof(next->cgroup_ids));
		next->nr_cgroups = cur->nr_cgroups;
	}
	if (!same_comms(cur, next) && !(live & TRACKER_TARGET_COMMS)) {
		needs_restart(path, "comm (none at the start)");
		memcpy(next->comms, cur->comms, sizeof(next->comms));
		next->nr_comms = cur->nr_comms;
	}
	drop_gone_pids(path, cur, next);
	if (next->all ||
	    (!next->command && !next->nr_pids && !next->nr_cgroups && !next->nr_comms)) {
		needs_restart(path, next->all ? "the targets (--all)" :
						"the targets (none left: the processes with the "
						"preload library)");
		return;
	}
	say_targets(cur, next, said, size);
}
