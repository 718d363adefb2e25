// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c - the ring buffer's records, each to its handler: the record's kind (its first byte,
 * enum ls_kind) says which struct it is, and its size is checked against that struct's. Outliers
 * are decoded here and handed to the consumer (or parked for their stacks, or kept as parts of a
 * request); the notices about processes are acted on here.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "tracker/decode.h"
#include "tracker/goroutines.h"
#include "tracker/tracker-int.h"
#include "tracker/usyms.h"
#include "lib/outlier.h"
#include "lib/util.h"

static void flag_new_loss(struct outlier *o, const char *what, uint64_t now, uint64_t *seen)
{
	if (now <= *seen) {
		return;
	}
	outlier_add_flag(o, "lost-before: %" PRIu64 " %s since the previous outlier", now - *seen,
			 what);
	*seen = now;
}

/* Losses that happened since the previous outlier (counted at @now), as flags for @o. */
static void flag_losses(struct tracker *tr, const struct tracker_totals *now, struct outlier *o)
{
	flag_new_loss(o, "outliers (ring buffer full)", now->ringbuf_lost,
		      &tr->records.reported.ringbuf_lost);
	flag_new_loss(o, "outliers lost their stacks (accumulator map full)", now->accum_full,
		      &tr->records.reported.accum_full);
	flag_new_loss(o, "threads untimed (task storage full)", now->storage_failed,
		      &tr->records.reported.storage_failed);
	flag_new_loss(o, "BPF program runs skipped by the kernel", now->runs_skipped,
		      &tr->records.reported.runs_skipped);
}

/* The command name of @pid for messages, "?" once it is gone. */
static const char *comm_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, buf, size - 1) : -1;
	if (fd >= 0) {
		close(fd);
	}
	if (len <= 0) {
		snprintf(buf, size, "?");
		return buf;
	}
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* A process exited: its mappings go, or wait for tracker_release_exited() (the oldest first). */
static void on_exit_notice(struct tracker *tr, pid_t pid)
{
	if (!tr->records.keep_exited) {
		/* Outliers before this notice were decoded already: the ring is in order. */
		usyms_forget(tr->usyms, pid);
		return;
	}
	if (tr->records.nr_exited == sizeof(tr->records.exited) / sizeof(tr->records.exited[0])) {
		usyms_forget(tr->usyms, tr->records.exited[0]);
		memmove(tr->records.exited, tr->records.exited + 1,
			(tr->records.nr_exited - 1) * sizeof(tr->records.exited[0]));
		tr->records.nr_exited--;
	}
	tr->records.exited[tr->records.nr_exited++] = pid;
}

/*
 * A capture taken while ld.so still mapped libraries is taken again at the process's next blocking
 * wait, this many times at most (a process whose libraries are named otherwise than they are
 * needed would look busy forever).
 */
#define MAPS_RETELLS_MAX 8

/* Asks the BPF side for another LS_NOTICE_MAPS of @pid at its next blocking wait. */
static void retell_maps(struct tracker *tr, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 retell = LS_MAPS_RETELL;

	/* BPF_EXIST: an exec or exit since the notice removed the entry, and said so. */
	if (!tr->maps_reader.retell_gen ||
	    bpf_map_update_elem(tr->maps_reader.noticed_fd, &key, &retell, BPF_EXIST)) {
		return;
	}
	__atomic_add_fetch(tr->maps_reader.retell_gen, 1, __ATOMIC_RELEASE);
	ls_verbose("tracker: pid %d waited while ld.so mapped its libraries: its mappings are read "
		   "again at its next wait",
		   (int)pid);
}

/* What the BPF side tells of a process: its mappings, its end, its registration. */
static void on_notice(struct tracker *tr, const struct ls_notice *notice)
{
	unsigned int loading;
	uint64_t now;
	char comm[32];
	int err;

	switch (notice->kind) {
	case LS_NOTICE_MAPS:
		/* Its image is loaded: a Go program's goroutines are followed. */
		goroutines_follow(tr->go, notice->pid, NULL);
		/*
		 * It blocks in its own code: a capture taken while it loaded lacks libraries. The
		 * maps reader's capture, taken as the notice was written, if it has one.
		 */
		err = usyms_recapture(tr->usyms, notice->pid, notice->arg);
		if (err) {
			/* Its stacks will be addresses: gone before the notice was read? */
			ls_verbose("tracker: pid %u: maps not read at its first wait: %s",
				   notice->pid, strerror(-err));
		}
		loading = usyms_loading(tr->usyms, notice->pid);
		if (loading && loading <= MAPS_RETELLS_MAX) {
			retell_maps(tr, notice->pid);
		}
		break;
	case LS_NOTICE_EXEC:
		/* Its image is new: a Go program's goroutines are followed. */
		goroutines_follow(tr->go, notice->pid, NULL);
		/*
		 * Outliers before this notice were decoded already: the ring is in order. The
		 * time is the low half of CLOCK_MONOTONIC: the latest such time before now.
		 */
		now = ls_now_ns();
		usyms_forget_image(tr->usyms, notice->pid,
				   now - (uint32_t)((uint32_t)now - notice->arg));
		break;
	case LS_NOTICE_EXIT:
		goroutines_forget(tr->go, notice->pid);
		on_exit_notice(tr, notice->pid);
		break;
	case LS_NOTICE_REGISTERED:
		ls_verbose("tracker: pid %u (%s) registered through the preload library, signal %u",
			   notice->pid, comm_of(notice->pid, comm, sizeof(comm)), notice->arg);
		break;
	case LS_NOTICE_REFUSED:
		/* Anyone may call the prctl: a refusal is a bug or an attempt, worth a line. */
		ls_err("tracker: pid %u (%s, uid %u) refused: its registration names a signal or "
		       "handler it has not installed (further attempts of this process not logged)",
		       notice->pid, comm_of(notice->pid, comm, sizeof(comm)), notice->arg);
		break;
	case LS_NOTICE_DISPLACED:
		ls_err("tracker: pid %u (%s) installed its own handler for signal %u: no more "
		       "unwound user stacks for it, frame pointers only",
		       notice->pid, comm_of(notice->pid, comm, sizeof(comm)), notice->arg);
		break;
	}
}

/* An outlier (LS_KIND_SYSCALL, LS_KIND_SLEEP): decoded, flagged with the losses before it. */
static int on_outlier(struct tracker *tr, const struct ls_event *e)
{
	struct tracker_totals now;
	struct outlier *outlier;
	int err;

	tr->records.received++;
	/* Made by latsnap's own snapshots, most likely: never reported (ours.c). */
	if (ours_drop(tr, (pid_t)e->pid)) {
		return 0;
	}
	tracker_totals(tr, &now);
	if (decode_event(e, tr->ksyms, tr->usyms, &outlier)) {
		ls_err("tracker: an outlier could not be decoded: %s", strerror(ENOMEM));
		return 0;
	}
	if (goroutines_decorate(tr->go, e, outlier)) {
		ls_err("tracker: an outlier could not be decoded: %s", strerror(ENOMEM));
		outlier_free(outlier);
		return 0;
	}
	flag_losses(tr, &now, outlier);
	if (e->flags & LS_EF_SIGNALLED) {
		err = park_outlier(tr, outlier, e->signal_seq);
	} else {
		err = deliver_outlier(tr, outlier);
	}
	if (err) {
		return err;
	}
	/* libbpf stops at a negative return, this sample consumed: the rest waits in the ring. */
	if (tr->records.budget && --tr->records.budget == 0) {
		return -EAGAIN;
	}
	return 0;
}

/* The struct each kind of record is: the least a record of that kind may hold. */
static const size_t record_size[] = {
	[LS_KIND_SYSCALL] = sizeof(struct ls_event),
	[LS_KIND_SLEEP] = sizeof(struct ls_event),
	[LS_NOTICE_MAPS] = sizeof(struct ls_notice),
	[LS_NOTICE_EXEC] = sizeof(struct ls_notice),
	[LS_NOTICE_EXIT] = sizeof(struct ls_notice),
	[LS_NOTICE_DISPLACED] = sizeof(struct ls_notice),
	[LS_NOTICE_REGISTERED] = sizeof(struct ls_notice),
	[LS_NOTICE_REFUSED] = sizeof(struct ls_notice),
	[LS_KIND_UNWOUND] = sizeof(struct ls_unwound),
	[LS_KIND_REQUEST] = sizeof(struct ls_request),
	[LS_KIND_SAMPLE] = sizeof(struct ls_sample),
};

/**
 * ring_record() - libbpf's callback for each record of the ring buffer (@ctx is the tracker):
 *                 its kind chooses its handler, after its size is checked for that kind
 *
 * Return: 0, a negative value that stops libbpf's consuming (-EAGAIN once the budget is spent),
 * or the callback's non-zero return.
 */
int ring_record(void *ctx, void *data, size_t size)
{
	unsigned int kind = size ? *(const __u8 *)data : 0;
	struct tracker *tr = ctx;

	if (kind >= sizeof(record_size) / sizeof(record_size[0]) || !record_size[kind]) {
		ls_err("tracker: a record of unknown kind %u (%zu bytes)", kind, size);
		return 0;
	}
	if (size < record_size[kind]) {
		ls_err("tracker: short event (%zu bytes)", size);
		return 0;
	}
	switch (kind) {
	case LS_KIND_SYSCALL:
	case LS_KIND_SLEEP:
		return on_outlier(tr, data);
	case LS_KIND_UNWOUND:
		return park_on_unwound(tr, data);
	case LS_KIND_REQUEST:
		return requests_on_end(tr, data);
	case LS_KIND_SAMPLE:
		requests_keep_sample(tr, data);
		return 0;
	default:
		on_notice(tr, data);
		return 0;
	}
}

/**
 * ring_budget() - outliers the records about to be consumed may hand over (0: any number), before
 *                 ring_record() stops libbpf's consuming with -EAGAIN: tracker.c's poll and drain
 *                 set it, this file spends it
 */
void ring_budget(struct tracker *tr, unsigned int budget)
{
	tr->records.budget = budget;
}

/**
 * tracker_keep_exited - keep the mappings of exited processes until tracker_release_exited().
 */
void tracker_keep_exited(struct tracker *tr, bool keep)
{
	tr->records.keep_exited = keep;
}

/**
 * tracker_release_exited - forget the mappings of the processes that exited so far.
 */
void tracker_release_exited(struct tracker *tr)
{
	while (tr->records.nr_exited > 0) {
		usyms_forget(tr->usyms, tr->records.exited[--tr->records.nr_exited]);
	}
}
