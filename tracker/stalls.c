// SPDX-License-Identifier: GPL-2.0
/*
 * stalls.c - the stall iterator: a BPF task iterator (ls_stall_scan) walks the tracked threads
 * and writes one struct ls_stall for each that waits, read here from its seq_file; and the
 * outlier of a stalled thread's wait so far, its stacks symbolized (recorder/stall.c, --hang).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/decode.h"
#include "tracker/tracker-int.h"
#include "latsnap.skel.h"
#include "lib/util.h"

/*
 * stall_read - run the stall scan through @link and hand each record to @fn. A record can
 * straddle two reads of the iterator's seq_file: they are put together in @buf.
 */
static int stall_read(struct bpf_link *link, tracker_stall_fn fn, void *ctx)
{
	struct ls_stall rec;
	size_t have = 0;
	ssize_t n;
	int fd, ret = 0, cb = 0;

	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		n = read(fd, (char *)&rec + have, sizeof(rec) - have);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			break;
		}
		have += (size_t)n;
		if (have == sizeof(rec)) {
			have = 0;
			if (!cb) {
				cb = fn(&rec, ctx);
			}
		}
	}
	close(fd);
	if (!ret) {
		ret = cb;
	}
out:
	return ret;
}

/* A stall scan's consumer, behind the filter of latsnap's and LTTng's own processes. */
struct stall_filter {
	struct tracker *tr;
	tracker_stall_fn fn;
	void *ctx;
};

/* A stall of one of latsnap's or LTTng's processes is never reported (ours.c). */
static int stall_filtered(const struct ls_stall *rec, void *ctx)
{
	struct stall_filter *f = ctx;

	return ours_drop(f->tr, (pid_t)rec->pid) ? 0 : f->fn(rec, f->ctx);
}

/* Tracked processes a stall scan walks one by one; with more, it walks every task once. */
#define STALL_SCAN_PER_PROCESS 64

/* The iterator over the threads of process @tgid alone, or (@tgid 0) over every task. */
static struct bpf_link *stall_link(struct tracker *tr, uint32_t tgid)
{
	union bpf_iter_link_info linfo = { .task.pid = tgid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo,
		    .link_info_len = sizeof(linfo));

	return bpf_program__attach_iter(tr->skel->progs.ls_stall_scan, tgid ? &opts : NULL);
}

/**
 * tracker_scan_stalls() - every tracked thread waiting (off CPU, or in one syscall while off
 *                         CPU) for at least @min_ns now, one struct ls_stall each to @fn
 *
 * A walk in the kernel (SEC("iter/task")) over the threads of each tracked process, or over
 * every task of the machine once when every thread is tracked or the processes are many: a
 * visit costs about half a microsecond (see bench section 7). Idle-list syscalls are left out
 * unless --include-idle.
 *
 * Return: 0, a non-zero return of @fn, or a negative errno.
 */
int tracker_scan_stalls(struct tracker *tr, uint64_t min_ns, tracker_stall_fn fn, void *ctx)
{
	struct stall_filter filter = { .tr = tr, .fn = fn, .ctx = ctx };
	int fd = bpf_map__fd(tr->skel->maps.tracked), ret = 0;
	uint32_t tgids[STALL_SCAN_PER_PROCESS + 1];
	/* Processes tracked for their cgroup or name are in no list: only a walk of all finds them. */
	bool every_task = tr->targets.track_all || tr->targets.track_unlisted;
	struct bpf_link *link;
	unsigned int i, n = 0;

	tr->skel->bss->stall_tid = 0;
	tr->skel->bss->stall_min_ns = min_ns;
	while (!every_task && !bpf_map_get_next_key(fd, n ? &tgids[n - 1] : NULL, &tgids[n])) {
		if (++n > STALL_SCAN_PER_PROCESS) {
			every_task = true;
		}
	}
	if (every_task || tr->stalls.iter_whole) {
		return stall_read(tr->skel->links.ls_stall_scan, stall_filtered, &filter);
	}
	for (i = 0; i < n && !ret && !tr->stalls.iter_whole; i++) {
		link = stall_link(tr, tgids[i]);
		if (!link) {
			/*
			 * Gone since: nothing to walk. Any other error is a kernel whose task
			 * iterators take no process (before 6.1: E2BIG for the link info's
			 * fields it does not know): every task is walked then, now and from now on.
			 */
			if (errno != ESRCH && errno != ENOENT) {
				ls_verbose(
					"tracker: a task iterator over one process: %s: the stall "
					"scan walks every task",
					strerror(errno));
				tr->stalls.iter_whole = true;
				return stall_read(tr->skel->links.ls_stall_scan, stall_filtered,
						  &filter);
			}
			continue;
		}
		ret = stall_read(link, stall_filtered, &filter);
		bpf_link__destroy(link);
	}
	return ret;
}

/**
 * tracker_scan_waiting() - hand @fn every tracked thread that waits now, however long, with -a
 * too: where the idle policy learns that threads wait for work, once tracking has begun.
 *
 * Return: 0, a non-zero return of @fn, or a negative errno.
 */
int tracker_scan_waiting(struct tracker *tr, tracker_stall_fn fn, void *ctx)
{
	int ret;

	tr->skel->bss->stall_seed = 1;
	ret = tracker_scan_stalls(tr, 0, fn, ctx);
	tr->skel->bss->stall_seed = 0;
	return ret;
}

static int stall_copy(const struct ls_stall *rec, void *ctx)
{
	memcpy(ctx, rec, sizeof(*rec));
	return 1;
}

/**
 * tracker_stall_thread() - the registers, kernel stack and state of thread @tid, whatever it
 *                          does (a holder of what a stalled thread waits for)
 *
 * Return: 0, -ESRCH when there is no such thread, or a negative errno.
 */
int tracker_stall_thread(struct tracker *tr, pid_t tid, struct ls_stall *out)
{
	union bpf_iter_link_info linfo = { .task.tid = (__u32)tid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo,
		    .link_info_len = sizeof(linfo));
	struct bpf_link *link;
	int ret;

	/* Before 6.1, every task is walked, the program keeping @tid alone (stall_tid). */
	link = NULL;
	if (!tr->stalls.iter_whole) {
		link = bpf_program__attach_iter(tr->skel->progs.ls_stall_scan, &opts);
	}
	if (!link && !tr->stalls.iter_whole && (errno == ESRCH || errno == ENOENT)) {
		return -errno;
	}
	tr->skel->bss->stall_tid = (__u32)tid;
	ret = stall_read(link ? link : tr->skel->links.ls_stall_scan, stall_copy, out);
	tr->skel->bss->stall_tid = 0;
	bpf_link__destroy(link);
	return ret == 1 ? 0 : ret ? ret : -ESRCH;
}

/**
 * tracker_stall_outlier() - the outlier of a stalled thread's wait so far, its stacks
 *                           symbolized: the user stack unwound from outside, from its saved
 *                           registers, without stopping it
 *
 * Return: 0 or a negative errno.
 */
int tracker_stall_outlier(struct tracker *tr, const struct ls_stall *st, struct outlier **outp)
{
	return decode_stall(st, tr->ksyms, tr->usyms, outp);
}

/**
 * tracker_stall_user_frames() - @st's user stack, unwound from its saved registers
 *
 * Return: 0 or a negative errno.
 */
int tracker_stall_user_frames(struct tracker *tr, const struct ls_stall *st,
			      struct outlier_frames *frames)
{
	return decode_stall_user(st, tr->usyms, frames);
}
