// SPDX-License-Identifier: GPL-2.0
/*
 * reload.c - SIGHUP in `latsnap record`: the config file and the command line read again, the
 * difference found (reload-diff.c) and applied to the run: the tracker's thresholds and targets,
 * the stall check's limits, the recorder's retention limits, the rules. One line says what
 * changed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "classify/rules.h"
#include "lib/util.h"
#include "recorder/policy.h"
#include "recorder/record-status.h"
#include "recorder/recorder.h"
#include "recorder/reload-diff.h"
#include "recorder/reload.h"
#include "recorder/stall.h"
#include "tracker/tracker.h"

/*
 * reload_targets - the targets of @next (-p, --cgroup, --comm) become those of the run, live
 * (tracker_set_targets()), and the change is said in @changes. What the programs were loaded
 * for cannot change without a restart, and keeps its value (reload_diff_targets()).
 */
static void reload_targets(const char *path, struct record_opts *cur, struct record_opts *next,
			   struct tracker *tr, char *changes, size_t size)
{
	char said[512];
	int i, err;

	reload_diff_targets(path, cur, next, tracker_live_targets(tr), said, sizeof(said));
	if (!*said) {
		return;
	}
	err = tracker_set_targets(tr, next->pids, next->nr_pids, next->cgroup_ids, next->nr_cgroups,
				  next->comms, next->nr_comms);
	if (err) {
		/* The tracker said what failed; the next reload starts from what it did. */
		ls_err("record: reload of %s: the targets could not all change (%s): the run "
		       "goes on with part of them",
		       path, strerror(-err));
	}
	/* A new pid that registered through the preload library before: its stacks unwound. */
	for (i = 0; i < next->nr_pids; i++) {
		if (!reload_set_has(cur->pids, cur->nr_pids, sizeof(cur->pids[0]),
				    &next->pids[i])) {
			tracker_adopt_preloaded(tr, next->pids[i]);
		}
	}
	record_appendf(changes, size, "%stargets: %s", *changes ? ", " : "", said);
	memcpy(cur->pids, next->pids, sizeof(cur->pids));
	cur->nr_pids = next->nr_pids;
	memcpy(cur->cgroup_ids, next->cgroup_ids, sizeof(cur->cgroup_ids));
	cur->nr_cgroups = next->nr_cgroups;
	memcpy(cur->comms, next->comms, sizeof(cur->comms));
	cur->nr_comms = next->nr_comms;
}

/*
 * load_rules - the rules @next names (or the built-in set) into @rules and their file into
 * @rules_path; what changed said in @changes. Return: 0, or -1 after saying why.
 */
static int load_rules(const char *path, const struct record_opts *cur,
		      const struct record_opts *next, struct rules **rules, char **rules_path,
		      char *changes, size_t size)
{
	if (next->rules) {
		*rules_path = strdup(next->rules);
		if (!*rules_path || rules_load(next->rules, rules)) {
			ls_err("record: reload of %s failed: rules %s: the settings in use stay",
			       path, next->rules);
			return -1;
		}
		snprintf(changes, size, "rules %s", next->rules);
		return 0;
	}
	*rules = rules_builtin();
	if (!*rules) {
		return -1;
	}
	if (cur->rules) {
		snprintf(changes, size, "built-in rules");
	}
	return 0;
}

/* The limits a reload changes live: the tracker's thresholds, --hang, retention, --post. */
static void apply_limits(struct record_state *st, struct tracker *tr,
			 const struct record_opts *next)
{
	struct record_opts *cur = st->opts;

	tracker_set_thresholds(tr, next->threshold_ns, next->sleep_threshold_ns);
	cur->threshold_ns = next->threshold_ns;
	cur->sleep_threshold_ns = next->sleep_threshold_ns;
	if (st->stalls) {
		stall_set_limits(st->stalls, next->hang_ns,
				 next->threshold_ns < next->sleep_threshold_ns ?
					 next->threshold_ns :
					 next->sleep_threshold_ns);
	}
	cur->hang_ns = next->hang_ns;
	cur->rec.max_age_ns = next->rec.max_age_ns;
	cur->rec.max_size = next->rec.max_size;
	cur->rec.max_snapshots = next->rec.max_snapshots;
	cur->rec.post_ns = next->rec.post_ns;
	cur->rec.min_interval_ns = next->rec.min_interval_ns;
	cur->rec.guard = next->rec.guard;
	if (st->recorder) {
		recorder_set_limits(st->recorder, &cur->rec);
	}
}

/**
 * record_reload() - SIGHUP: read the settings again and apply what can change live. A bad file
 * leaves every setting as it was; the run goes on either way.
 */
void record_reload(struct record_state *st, struct tracker *tr)
{
	struct record_opts *cur = st->opts, next;
	const char *path = cur->config ? cur->config : RECORD_DEFAULT_CONFIG;
	struct rules *rules = NULL;
	char changes[1024] = "", *rules_path = NULL;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, ls_now_ns() / 1000);
	if (record_opts_load(&next, st->argc, st->argv, true)) {
		ls_err("record: reload of %s failed: the settings in use stay", path);
		goto out;
	}
	if (load_rules(path, cur, &next, &rules, &rules_path, changes, sizeof(changes))) {
		goto out;
	}
	reload_diff_fixed(path, cur, &next);
	reload_diff_limits(changes, sizeof(changes), cur, &next);
	reload_targets(path, cur, &next, tr, changes, sizeof(changes));
	apply_limits(st, tr, &next);
	policy_set_rules(st, rules, rules_path);
	rules = NULL;
	rules_path = NULL;
	cur->verbose = next.verbose;
	ls_verbose_enabled = next.verbose;
	fprintf(stderr, "latsnap: record: reloaded %s: %s\n", path,
		*changes ? changes : "no change");
out:
	rules_free(rules);
	free(rules_path);
	record_opts_free(&next);
	record_status_notify_ready(cur);
}
