/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reload.h - SIGHUP in `latsnap record`: the settings read again, and what can change applied
 * to the run.
 */
#ifndef LATSNAP_RELOAD_H
#define LATSNAP_RELOAD_H

#include "recorder/record.h"

struct tracker;

/**
 * record_reload() - read the config file and the command line again, and apply what can change
 * without a reload of the BPF programs or a new LTTng session: the thresholds, the rules, the
 * retention limits, --hang, the targets (-p, --cgroup, --comm), -v. A bad file leaves every
 * setting as it was; the run goes on either way, and the service manager is told it is ready.
 * @st: the run; st->opts is changed in place
 * @tr: its tracker
 */
void record_reload(struct record_state *st, struct tracker *tr);

#endif /* LATSNAP_RELOAD_H */
