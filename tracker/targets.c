// SPDX-License-Identifier: GPL-2.0
/*
 * targets.c - what is tracked: the processes of -p and COMMAND in the tracked map, the cgroups
 * and names of --cgroup and --comm in theirs, at load and live (a reload), and the processes that
 * registered through the preload library before latsnap started.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/preloaded.h"
#include "tracker/tracker-int.h"
#include "latsnap.skel.h"
#include "lib/util.h"

/**
 * targets_want() - what the run tracks, kept for tracker_live_targets() and the stall scans; and
 *                  the wanted cgroups and names of record --cgroup and --comm, into their maps
 *                  before attach
 *
 * Return: 0, or a negative errno after saying why.
 */
int targets_want(struct tracker *tr, const struct tracker_opts *opts)
{
	int cg_fd = bpf_map__fd(tr->skel->maps.want_cgroups);
	int comm_fd = bpf_map__fd(tr->skel->maps.want_comms);
	unsigned int i;
	__u8 one = 1;
	int err;

	tr->targets.track_registered = opts->track_registered;
	tr->targets.track_all = opts->track_all;
	tr->targets.track_unlisted = opts->nr_cgroups || opts->nr_comms;
	tr->targets.track_cgroups = opts->nr_cgroups > 0;
	tr->targets.track_comms = opts->nr_comms > 0;
	for (i = 0; i < opts->nr_cgroups && i < LS_MAX_CGROUPS; i++) {
		if (bpf_map_update_elem(cg_fd, &opts->cgroup_ids[i], &one, BPF_ANY)) {
			err = -errno;
			ls_err("tracker: cannot track cgroup %" PRIu64 ": %s", opts->cgroup_ids[i],
			       strerror(-err));
			return err;
		}
	}
	for (i = 0; i < opts->nr_comms && i < LS_MAX_COMMS; i++) {
		if (bpf_map_update_elem(comm_fd, &opts->comms[i], &one, BPF_ANY)) {
			err = -errno;
			ls_err("tracker: cannot track processes named '%.*s': %s", LS_TASK_COMM_LEN,
			       opts->comms[i].name, strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * mark_target - @pid's entry of the tracked map gains (@on) or loses the reason LS_TRACK_TARGET.
 * The other reasons stay: a target that was a tracked process's child goes back to being one.
 */
static int mark_target(struct tracker *tr, pid_t pid, bool on)
{
	int fd = bpf_map__fd(tr->skel->maps.tracked);
	__u32 key = pid, reason = 0;
	int err = 0;

	if (bpf_map_lookup_elem(fd, &key, &reason) && errno != ENOENT) {
		err = -errno;
		goto out;
	}
	if (on) {
		reason |= LS_TRACK_TARGET;
		err = bpf_map_update_elem(fd, &key, &reason, BPF_ANY) ? -errno : 0;
	} else if (reason & LS_TRACK_TARGET) {
		reason &= ~(__u32)LS_TRACK_TARGET;
		if (reason) {
			err = bpf_map_update_elem(fd, &key, &reason, BPF_EXIST) ? -errno : 0;
		} else {
			err = bpf_map_delete_elem(fd, &key) ? -errno : 0;
		}
		/* It exited meanwhile: its entry went with it. */
		if (err == -ENOENT) {
			err = 0;
		}
	}
out:
	if (err) {
		ls_err("tracker: cannot %s pid %d: %s", on ? "track" : "stop tracking", pid,
		       strerror(-err));
	}
	return err;
}

/**
 * tracker_track_pid - track process @pid, all its threads, and its future children.
 *
 * For COMMAND: it stays a target until it exits, whatever tracker_set_targets() says later.
 */
int tracker_track_pid(struct tracker *tr, pid_t pid)
{
	int err;

	err = mark_target(tr, pid, true);
	if (err) {
		goto out;
	}
	/* Threads of @pid that already decided "untracked" must decide again. */
	__atomic_add_fetch(&tr->skel->data->tracking_gen, 1, __ATOMIC_SEQ_CST);
out:
	return err;
}

/**
 * tracker_live_targets - the kinds of target tracker_set_targets() can change in this run.
 *
 * None with -a (rodata: every thread already) or with no target at all (the processes that
 * register are tracked, a mode fixed at load); --cgroup and --comm only if the run started with
 * some: without, the verifier left their checks out of the programs (and --cgroup's hook of
 * cgroup moves was not loaded).
 *
 * Return: a mask of enum tracker_target_kind.
 */
unsigned int tracker_live_targets(struct tracker *tr)
{
	unsigned int kinds = 0;

	if (tr->targets.track_all || tr->targets.track_registered) {
		goto out;
	}
	kinds = TRACKER_TARGET_PIDS;
	if (tr->targets.track_cgroups) {
		kinds |= TRACKER_TARGET_CGROUPS;
	}
	if (tr->targets.track_comms) {
		kinds |= TRACKER_TARGET_COMMS;
	}
out:
	return kinds;
}

static bool has_key(const void *keys, unsigned int nr, size_t size, const void *key)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!memcmp((const char *)keys + i * size, key, size)) {
			return true;
		}
	}
	return false;
}

/*
 * want_exactly - make the keys of the hash map @map exactly the @nr keys at @keys (each the
 * map's key size), with the value 1. Those to drop are read first, all of them: a key deleted
 * while the keys are walked would send the walk back to the start.
 */
static int want_exactly(struct bpf_map *map, const void *keys, unsigned int nr, const char *what)
{
	size_t size = bpf_map__key_size(map);
	unsigned int max = bpf_map__max_entries(map), nr_old = 0, i, j;
	int fd = bpf_map__fd(map), err = 0;
	unsigned char *old;
	__u8 one = 1;

	old = calloc(max, size);
	if (!old) {
		err = -ENOMEM;
		goto out;
	}
	while (nr_old < max && !bpf_map_get_next_key(fd, nr_old ? old + (nr_old - 1) * size : NULL,
						     old + nr_old * size)) {
		nr_old++;
	}
	for (i = 0; i < nr_old; i++) {
		if (has_key(keys, nr, size, old + i * size)) {
			continue;
		}
		if (bpf_map_delete_elem(fd, old + i * size) && errno != ENOENT) {
			err = -errno;
			ls_err("tracker: cannot stop tracking a %s: %s", what, strerror(-err));
			goto out;
		}
	}
	for (j = 0; j < nr; j++) {
		if (bpf_map_update_elem(fd, (const char *)keys + j * size, &one, BPF_ANY)) {
			err = -errno;
			ls_err("tracker: cannot track a %s: %s", what, strerror(-err));
			goto out;
		}
	}
out:
	free(old);
	return err;
}

static bool has_pid(const pid_t *pids, unsigned int nr, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (pids[i] == pid) {
			return true;
		}
	}
	return false;
}

/**
 * tracker_set_targets - make the targets of -p, --cgroup and --comm exactly these, live: the
 *                       programs stay loaded and attached, the rings keep what they hold
 * @pids: the processes tracked as targets, with their threads and the children they fork from
 *        then on (tracker_track_pid()'s, COMMAND, is not among them: it stays)
 * @cgroup_ids: the cgroup v2 directories (inode numbers) whose processes are tracked
 * @comms: the process names (NUL-padded) that are tracked
 *
 * A pid that was a target already is left as it is: one that exited since is not put back, as
 * the pid may name another process by now. A pid dropped loses its own entry only. Its children
 * (LS_TRACK_CHILD) stay tracked: the map keeps no parent, and the family a dropped pid had is
 * only known from /proc, where a child whose parent exited was handed to another; a child
 * forked after the drop is not tracked (ls_sched_process_fork looks for its parent's entry).
 * Then one new tracking generation: every thread decides again, at its next hook, whether it is
 * tracked, those that stop being tracked as well as those that start (redecide() in the
 * programs).
 *
 * Return: 0; -EOPNOTSUPP, nothing changed, for a kind of target this run cannot change
 * (tracker_live_targets()); -E2BIG for more cgroups or names than LS_MAX_CGROUPS, LS_MAX_COMMS;
 * or a negative errno, said, the targets then partly changed (and the change in effect).
 */
int tracker_set_targets(struct tracker *tr, const pid_t *pids, int nr_pids,
			const uint64_t *cgroup_ids, int nr_cgroups, const struct ls_comm *comms,
			int nr_comms)
{
	unsigned int live = tracker_live_targets(tr), nr_kept = 0, i;
	pid_t *kept = NULL;
	int err = 0;

	if ((nr_pids && !(live & TRACKER_TARGET_PIDS)) ||
	    (nr_cgroups && !(live & TRACKER_TARGET_CGROUPS)) ||
	    (nr_comms && !(live & TRACKER_TARGET_COMMS))) {
		return -EOPNOTSUPP;
	}
	if (nr_pids < 0 || nr_cgroups < 0 || nr_comms < 0 || nr_cgroups > LS_MAX_CGROUPS ||
	    nr_comms > LS_MAX_COMMS) {
		return -E2BIG;
	}
	/* What is a target once this is done, whatever fails: the next call starts from it. */
	kept = calloc((size_t)tr->targets.nr_pids + (size_t)nr_pids + 1, sizeof(*kept));
	if (!kept) {
		return -ENOMEM;
	}
	for (i = 0; i < tr->targets.nr_pids; i++) {
		if (has_pid(pids, (unsigned int)nr_pids, tr->targets.pids[i]) ||
		    mark_target(tr, tr->targets.pids[i], false)) {
			kept[nr_kept++] = tr->targets.pids[i];
		} else {
			ours_target(tr, tr->targets.pids[i], false);
		}
	}
	for (i = 0; i < (unsigned int)nr_pids; i++) {
		if (has_pid(kept, nr_kept, pids[i])) {
			continue;
		}
		err = mark_target(tr, pids[i], true);
		if (err) {
			goto out;
		}
		ours_target(tr, pids[i], true);
		kept[nr_kept++] = pids[i];
	}
	if (live & TRACKER_TARGET_CGROUPS) {
		err = want_exactly(tr->skel->maps.want_cgroups, cgroup_ids,
				   (unsigned int)nr_cgroups, "cgroup");
		if (err) {
			goto out;
		}
	}
	if (live & TRACKER_TARGET_COMMS) {
		err = want_exactly(tr->skel->maps.want_comms, comms, (unsigned int)nr_comms,
				   "process name");
		if (err) {
			goto out;
		}
	}
	/* Processes tracked for a cgroup or a name are in no list: stall scans walk every task. */
	tr->targets.track_unlisted = nr_cgroups || nr_comms;
out:
	free(tr->targets.pids);
	tr->targets.pids = kept;
	tr->targets.nr_pids = nr_kept;
	/* Once, for all of it: the threads of a target gone as those of a new one decide again. */
	__atomic_add_fetch(&tr->skel->data->tracking_gen, 1, __ATOMIC_SEQ_CST);
	return err;
}

/**
 * targets_free() - free the -p targets kept; safe on a partly opened tracker
 */
void targets_free(struct tracker *tr)
{
	free(tr->targets.pids);
}

static int adopt(pid_t pid, const struct ls_preload_abi *abi, void *ctx)
{
	struct ls_registration reg = { .handler = abi->handler, .sig = (__u32)abi->sig };
	__u32 key = pid, reason = LS_TRACK_REGISTERED, tid;
	struct tracker *tr = ctx;
	__u8 one = 1;
	__u32 i;

	for (i = 0; i < abi->nr_quiet; i++) {
		tid = abi->quiet_tids[i];
		bpf_map_update_elem(bpf_map__fd(tr->skel->maps.quiet_tids), &tid, &one, BPF_ANY);
	}
	if (bpf_map_update_elem(bpf_map__fd(tr->skel->maps.registered), &key, &reg, BPF_NOEXIST) &&
	    errno != EEXIST) {
		return -errno;
	}
	if (tr->targets.track_registered) {
		bpf_map_update_elem(bpf_map__fd(tr->skel->maps.tracked), &key, &reason,
				    BPF_NOEXIST);
	}
	ls_verbose("tracker: pid %d registered before latsnap started, signal %d", pid, abi->sig);
	return 0;
}

/**
 * tracker_adopt_preloaded - take in processes that registered through the preload library
 * before latsnap started: @pid alone, or every one when @pid is 0. Call after tracker_attach(),
 * so that a process registering meanwhile is not missed.
 *
 * Return: how many were found, or a negative errno.
 */
int tracker_adopt_preloaded(struct tracker *tr, pid_t pid)
{
	struct ls_preload_abi abi;
	int found;

	if (pid) {
		found = preloaded_read(pid, &abi) == 0 && adopt(pid, &abi, tr) == 0;
	} else {
		found = preloaded_scan(adopt, tr);
	}
	if (found > 0) {
		__atomic_add_fetch(&tr->skel->data->tracking_gen, 1, __ATOMIC_SEQ_CST);
	}
	return found;
}
