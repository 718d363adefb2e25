// SPDX-License-Identifier: GPL-2.0
/*
 * tracker.c - the BPF object's life: load the tracker's programs, configured for this kernel and
 * this run, attach them, poll their ring buffer, count what they saw and lost, and close; and the
 * maps reader, the thread that reads each process's mappings as the BPF side notices it.
 * What they send is handled by the files that tracker-int.h names, one job each.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/decode.h"
#include "tracker/goroutines.h"
#include "tracker/kernel.h"
#include "tracker/ksyms.h"
#include "tracker/libbpf-log.h"
#include "classify/syscalls.h"
#include "tracker/tracker-int.h"
#include "latsnap.skel.h"
#include "tracker/pyframes.h"
#include "tracker/usyms.h"
#include "lib/duration.h"
#include "lib/util.h"

/*
 * The waits for descriptors a child's exit may end as latency (Node's execSync in epoll_wait):
 * names that do not exist on this architecture are left out.
 */
static void set_fd_wait_syscalls(__u8 *bitmap)
{
	static const char *const names[] = { "poll",	   "ppoll",	  "select",	 "pselect6",
					     "epoll_wait", "epoll_pwait", "epoll_pwait2" };
	size_t i;
	int nr;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		nr = syscall_number(names[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			/* 1: a wait for descriptors; 3: an epoll_wait (latsnap.bpf.c, FD_WAIT*) */
			bitmap[nr] = strncmp(names[i], "epoll", 5) ? 1 : 3;
		}
	}
}

/*
 * Outliers one poll, and one drain before a snapshot, hand over at most. In a storm the ring
 * fills faster than outliers are decoded, and libbpf would consume it without ever returning:
 * no snapshot would be taken. What is left waits in the ring (or is counted lost there).
 */
#define POLL_BUDGET 512
#define DRAIN_BUDGET 4096

/**
 * tracker_shares_dropped - the processes and users whose outliers the BPF side dropped over
 * their share (record --max-rate), the most dropped first
 * @out: filled with up to @max of them
 *
 * A share the kernel's LRU map has let go of is no longer counted here (tracker_totals() still
 * counts its drops).
 *
 * Return: how many were filled.
 */
size_t tracker_shares_dropped(struct tracker *tr, struct tracker_share *out, size_t max)
{
	int fd = bpf_map__fd(tr->skel->maps.shares);
	__u64 key, next, *prev = NULL;
	struct ls_share sh;
	size_t n = 0, i;

	while (n < max && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &sh) || !sh.dropped) {
			continue;
		}
		out[n].user = key >> 32 == LS_SHARE_USER;
		out[n].id = (uint32_t)key;
		out[n].dropped = sh.dropped;
		/* Insertion, most dropped first: a handful of entries at most. */
		for (i = n++; i > 0 && out[i - 1].dropped < out[i].dropped; i--) {
			struct tracker_share t = out[i];

			out[i] = out[i - 1];
			out[i - 1] = t;
		}
	}
	return n;
}

/*
 * Once at start: how threads coming back from an off-CPU sleep get their unwound stacks on this
 * kernel, and what is lost where it has no way to signal them (said without -v too).
 */
static void say_switch_end(enum kernel_switch_end hook)
{
	struct utsname uts;

	if (uname(&uts)) {
		snprintf(uts.release, sizeof(uts.release), "?");
	}
	switch (hook) {
	case KERNEL_SWITCH_END_TP:
		break;
	case KERNEL_SWITCH_END_FEXIT:
		ls_verbose("tracker: this kernel (%s) lacks the sched_exit_tp tracepoint (Linux "
			   "6.15): threads back from a sleep are signalled on their return from "
			   "schedule() (fexit)",
			   uts.release);
		break;
	case KERNEL_SWITCH_END_NONE:
		ls_err("tracker: this kernel (%s) lacks the sched_exit_tp tracepoint (Linux 6.15) "
		       "and fexit on schedule() (ftrace): a sleep outside a syscall gets a "
		       "frame-pointer user stack only, flagged kernel-no-switch-signal",
		       uts.release);
		break;
	}
}

/*
 * The syscalls that carry a unit of work in and out, when they are on a socket (work_note() in
 * latsnap.bpf.c): the file descriptor first, and what they return a count of bytes or messages.
 */
static void set_work_syscalls(__u8 *work)
{
	static const char *const input[] = { "read", "readv", "recvfrom", "recvmsg", "recvmmsg" };
	static const char *const output[] = { "write", "writev", "sendto", "sendmsg", "sendmmsg",
					      "sendfile" };
	static const char *const accepts[] = { "accept", "accept4" };
	size_t i;
	int nr;

	for (i = 0; i < sizeof(input) / sizeof(input[0]); i++) {
		nr = syscall_number(input[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			/* read and readv take any file; the others, sockets only. */
			work[nr] = LS_WORK_INPUT | (i >= 2 ? LS_WORK_SOCKET_ONLY : 0);
		}
	}
	for (i = 0; i < sizeof(output) / sizeof(output[0]); i++) {
		nr = syscall_number(output[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			/* write, writev and sendfile take any file; send*, sockets only. */
			work[nr] = LS_WORK_OUTPUT | (i >= 2 && i <= 4 ? LS_WORK_SOCKET_ONLY : 0);
		}
	}
	nr = syscall_number("close");
	if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
		work[nr] = LS_WORK_CLOSE;
	}
	for (i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
		nr = syscall_number(accepts[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			work[nr] = LS_WORK_ACCEPT;
		}
	}
}

/*
 * The syscalls whose entry reads the clock in a tracked thread (sc_clocked in latsnap.bpf.c):
 * those that wait by nature, so that their outliers start exactly where they began; the idle
 * list's are added by the caller. Any other that leaves the CPU joins them at its first wait.
 */
static void set_clocked_syscalls(__u8 *clocked, const unsigned char *idle)
{
	static const char *const waits[] = { "nanosleep",	"clock_nanosleep", "futex",
					     "futex_waitv",	"read",		   "readv",
					     "wait4",		"waitid",	   "pause",
					     "rt_sigsuspend",	"rt_sigtimedwait", "accept",
					     "accept4",		"connect",	   "flock",
					     "fsync",		"fdatasync",	   "msgrcv",
					     "semop",		"semtimedop",	   "io_getevents",
					     "epoll_wait",	"epoll_pwait",	   "poll",
					     "ppoll",		"select",	   "pselect6" };
	size_t i;
	int nr;

	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		nr = syscall_number(waits[i]);
		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			clocked[nr] = 1;
		}
	}
	for (i = 0; i < LS_MAX_SYSCALLS; i++) {
		clocked[i] |= idle[i] != 0;
	}
}

/* The length of a tick: the resolution of the coarse clock, 10 ms if it cannot be asked. */
static uint64_t tick_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec || !res.tv_nsec) {
		return 10000000;
	}
	return (uint64_t)res.tv_nsec;
}

/*
 * Tests only: LATSNAP_TEST_CLOCK_SKEW_NS (a duration, e.g. 100ms) puts the clock of odd-numbered
 * CPUs that far behind in the programs, so that a test can force the race of two CPUs' clocks
 * that an emulated kernel showed (issue 33). Said on stderr whenever it is set.
 */
static int set_test_clock_skew(struct tracker *tr)
{
	const char *text = getenv("LATSNAP_TEST_CLOCK_SKEW_NS");
	uint64_t skew;

	if (!text || !*text) {
		return 0;
	}
	if (ls_parse_duration(text, &skew)) {
		ls_err("tracker: LATSNAP_TEST_CLOCK_SKEW_NS: bad duration '%s'", text);
		return -EINVAL;
	}
	tr->skel->rodata->test_clock_skew_ns = skew;
	ls_err("tracker: test mode: the clock of odd-numbered CPUs reads %" PRIu64
	       " ns behind (LATSNAP_TEST_CLOCK_SKEW_NS)", skew);
	return 0;
}

/*
 * The run's options, into the programs' variables before the load; what the run tracks is kept
 * by targets_want() after it, the rings' sizes by context_size().
 */
static int set_options(struct tracker *tr, const struct tracker_opts *opts)
{
	int err = set_test_clock_skew(tr);

	if (err) {
		return err;
	}
	tr->skel->data->threshold_ns = opts->threshold_ns;
	tr->skel->data->sleep_threshold_ns = opts->sleep_threshold_ns;
	tr->skel->rodata->track_all = opts->track_all;
	tr->skel->rodata->self_tgid = (__u32)getpid();
	if (opts->max_rate) {
		/* N a second on average, 2N at once: a pool released together is one incident. */
		tr->skel->rodata->share_interval_ns = 1000000000ULL / opts->max_rate;
		tr->skel->rodata->share_burst_ns = (2ULL * opts->max_rate - 1) *
						   tr->skel->rodata->share_interval_ns;
	}
	tr->skel->rodata->include_idle = opts->include_idle;
	tr->skel->rodata->exact_start = opts->exact_start;
	tr->skel->rodata->track_registered = opts->track_registered;
	tr->skel->rodata->track_cgroups = opts->nr_cgroups > 0;
	tr->skel->rodata->track_comms = opts->nr_comms > 0;
	tr->skel->rodata->prctl_nr = SYS_prctl;
	tr->skel->rodata->futex_nr = SYS_futex;
	if (opts->ctx_floor_ns) {
		tr->skel->rodata->ctx_floor_ns = opts->ctx_floor_ns;
	}
	tr->skel->rodata->tick_ns = tick_ns();
	tr->skel->rodata->preempt_from_rq = kernel_preempt_from_rq();
	memcpy((void *)tr->skel->rodata->idle_syscalls, opts->idle_syscalls,
	       sizeof(opts->idle_syscalls));
	set_fd_wait_syscalls((__u8 *)tr->skel->rodata->fd_wait_syscalls);
	set_work_syscalls((__u8 *)tr->skel->rodata->work_syscalls);
	set_clocked_syscalls(tr->skel->bss->sc_clocked, opts->idle_syscalls);
	return context_size(tr);
}

/*
 * The programs this kernel and this run load, and those attached later one by one rather than
 * by the skeleton.
 *
 * Return: 0, or a negative errno after saying why.
 */
static int choose_programs(struct tracker *tr, const struct tracker_opts *opts)
{
	enum kernel_switch_end switch_end;
	bool old_block, old_switch;
	int err = 0;

	/* It runs at every switch of the machine, for the preload library's signals only. */
	switch_end = opts->no_preload ? KERNEL_SWITCH_END_NONE : kernel_switch_end();
	bpf_program__set_autoload(tr->skel->progs.ls_sched_exit,
				  switch_end == KERNEL_SWITCH_END_TP);
	bpf_program__set_autoload(tr->skel->progs.ls_schedule_exit,
				  switch_end == KERNEL_SWITCH_END_FEXIT);
	tr->skel->rodata->switch_end_hook = switch_end != KERNEL_SWITCH_END_NONE;
	if (!opts->no_preload) {
		say_switch_end(switch_end);
	}
	/*
	 * Older kernels: task storage's stand-in, a hash map by thread id (before 5.12);
	 * sched_switch without prev_state (before 5.18); block_rq_issue with the request's queue
	 * first (before 5.11).
	 */
	if (!kernel_has_task_storage()) {
		tr->skel->rodata->has_task_storage = false;
		err = kernel_task_storage_standin(tr->skel->maps.states);
		if (!err) {
			err = kernel_task_storage_standin(tr->skel->maps.reqs);
		}
		if (err) {
			ls_err("tracker: cannot set up the per-thread state maps: %s",
			       strerror(-err));
			goto out;
		}
		ls_verbose("tracker: no BPF task storage for tracing programs (Linux 5.12): "
			   "per-thread state in hash maps");
	}
	old_switch = kernel_tp_args("sched_switch") == 3;
	bpf_program__set_autoload(tr->skel->progs.ls_sched_switch, !old_switch);
	bpf_program__set_autoload(tr->skel->progs.ls_sched_switch_3, old_switch);
	old_block = kernel_tp_args("block_rq_issue") == 2;
	bpf_program__set_autoload(tr->skel->progs.ls_block_rq_issue, !old_block);
	bpf_program__set_autoload(tr->skel->progs.ls_block_rq_issue_q, old_block);
	tr->has_attach_cookie = kernel_has_attach_cookie();
	/* Only --cgroup needs to hear of moves between cgroups. */
	bpf_program__set_autoload(tr->skel->progs.ls_cgroup_attach, opts->nr_cgroups > 0);
	/*
	 * Attached to each --request probe by tracker_add_request(), with its cookie; loaded,
	 * and so through the verifier, only for a run that has requests (a reload that changes
	 * them restarts).
	 */
	bpf_program__set_autoattach(tr->skel->progs.ls_req_uprobe, false);
	bpf_program__set_autoattach(tr->skel->progs.ls_req_usdt, false);
	bpf_program__set_autoattach(tr->skel->progs.ls_req_sample, false);
	bpf_program__set_autoload(tr->skel->progs.ls_req_uprobe, opts->requests);
	bpf_program__set_autoload(tr->skel->progs.ls_req_usdt, opts->requests);
	bpf_program__set_autoload(tr->skel->progs.ls_req_sample, opts->requests);
	/* Keyed requests' upstreams: attached with the first keyed pair (requests.c). */
	bpf_program__set_autoattach(tr->skel->progs.ls_kreq_connect, false);
	bpf_program__set_autoattach(tr->skel->progs.ls_kreq_sk_ready, false);
	bpf_program__set_autoload(tr->skel->progs.ls_kreq_connect, opts->requests);
	bpf_program__set_autoload(tr->skel->progs.ls_kreq_sk_ready,
				  opts->requests && kernel_tp_args("sk_data_ready") >= 0);
	/* Attached to each Go binary a tracked process runs (goroutines_follow()): --go-waits. */
	bpf_program__set_autoattach(tr->skel->progs.ls_go_park, false);
	bpf_program__set_autoattach(tr->skel->progs.ls_go_ready, false);
	bpf_program__set_autoload(tr->skel->progs.ls_go_park, opts->go_waits);
	bpf_program__set_autoload(tr->skel->progs.ls_go_ready, opts->go_waits);
out:
	return err;
}

/*
 * After the load: the symbols, the goroutine waits' probes, and the readers of what the
 * programs send (the ring buffer, the context rings).
 *
 * Return: 0, or a negative errno after saying why.
 */
static int open_readers(struct tracker *tr, const struct tracker_opts *opts)
{
	int err;

	/* After the load, so that our own programs are named, and skipped, in stacks. */
	tr->ksyms = ksyms_load(NULL);
	if (!tr->ksyms) {
		err = -errno;
		ls_err("tracker: /proc/kallsyms: %s (kernel stacks need root and readable "
		       "kernel addresses)",
		       strerror(-err));
		return err;
	}

	/* Debug info from debuginfod (DEBUGINFOD_URLS) comes in a thread of its own: dbgfetch.h. */
	tr->usyms = usyms_new();
	tr->pyframes = pyframes_new();
	if (!tr->usyms || !tr->pyframes) {
		return -ENOMEM;
	}
	/* record's COMMAND, forked and tracked, blocks in its exec: that image is latsnap's. */
	usyms_skip_own(tr->usyms);

	/*
	 * Opt-in: each park and wakeup of a goroutine of the binary traps into the kernel (two
	 * uprobes; a channel round trip went from 0.5 us to 40 us in this VM), for every process
	 * that runs it, tracked or not.
	 */
	if (opts->go_waits) {
		tr->go = goroutines_new(tr->skel->progs.ls_go_park, tr->skel->progs.ls_go_ready,
					bpf_map__fd(tr->skel->maps.go_procs));
		if (!tr->go) {
			return -ENOMEM;
		}
	}

	tr->ring = ring_buffer__new(bpf_map__fd(tr->skel->maps.events), ring_record, tr, NULL);
	if (!tr->ring) {
		err = -errno;
		ls_err("tracker: cannot open the ring buffer: %s", strerror(-err));
		return err;
	}
	return context_map(tr);
}

/**
 * tracker_open - open and load the BPF tracker with @opts; nothing is traced until attach.
 * @fn: called with each outlier, from tracker_poll().
 *
 * Return: 0, or a negative errno after printing why.
 */
int tracker_open(struct tracker **trackerp, const struct tracker_opts *opts, tracker_outlier_fn fn,
		 void *ctx)
{
	struct tracker *tr;
	int err;

	*trackerp = NULL;
	libbpf_log_init();
	/* Before any other complaint (no BTF, the verifier's), which would hide an old kernel. */
	err = kernel_check("record", KERNEL_FOR_RECORD);
	if (err) {
		return err;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		ls_err("tracker: /sys/kernel/btf/vmlinux: %s (a kernel built with "
		       "CONFIG_DEBUG_INFO_BTF is needed)",
		       strerror(errno));
		return -ENOTSUP;
	}
	tr = calloc(1, sizeof(*tr));
	if (!tr) {
		return -ENOMEM;
	}
	tr->maps_reader.stop_fd = -1;
	tr->fn = fn;
	tr->ctx = ctx;
	tr->ncpus = libbpf_num_possible_cpus();
	if (tr->ncpus <= 0) {
		err = tr->ncpus ? tr->ncpus : -EINVAL;
		ls_err("tracker: cannot count possible CPUs: %s", strerror(-err));
		goto fail;
	}

	tr->skel = latsnap_bpf__open();
	if (!tr->skel) {
		err = -errno;
		ls_err("tracker: cannot open the BPF program: %s", strerror(errno));
		goto fail;
	}
	err = set_options(tr, opts);
	err = err ?: choose_programs(tr, opts);
	if (err) {
		goto fail;
	}
	err = latsnap_bpf__load(tr->skel);
	if (err) {
		libbpf_log_explain_load("tracker", err);
		goto fail;
	}
	tr->maps_reader.noticed_fd = bpf_map__fd(tr->skel->maps.maps_noticed);
	tr->maps_reader.retell_gen = &tr->skel->bss->maps_retell_gen;
	err = targets_want(tr, opts);
	err = err ?: ours_open(tr);
	err = err ?: open_readers(tr, opts);
	if (err) {
		goto fail;
	}
	*trackerp = tr;
	return 0;

fail:
	tracker_close(tr);
	return err;
}

/**
 * tracker_follow_goroutines() - @pid, tracked, is about to exec @path (record's COMMAND, held
 *                               at its gate): if that is a Go program, its goroutines' waits
 *                               are followed from its first instruction on, not from its first
 *                               wait, which its first goroutines may be parked in already
 *
 * Return: 1 when followed, 0 when not (not a Go program), or a negative errno.
 */
int tracker_follow_goroutines(struct tracker *tr, pid_t pid, const char *path)
{
	return goroutines_follow(tr->go, pid, path);
}

/**
 * tracker_user_modules - hand each object mapped in @pid, as latsnap captured it, to @fn.
 */
int tracker_user_modules(struct tracker *tr, pid_t pid, usyms_module_fn fn, void *ctx)
{
	return usyms_modules(tr->usyms, pid, fn, ctx);
}

static unsigned int map_entries(int fd)
{
	__u32 key, next;
	unsigned int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/**
 * tracker_state_left - processes still tracked, and outliers still in the making, in the kernel.
 *
 * Exited processes and threads must leave nothing behind; this is how that is checked.
 */
void tracker_state_left(struct tracker *tr, unsigned int *processes, unsigned int *in_flight)
{
	*processes = map_entries(bpf_map__fd(tr->skel->maps.tracked));
	*in_flight = map_entries(bpf_map__fd(tr->skel->maps.accum));
}

/*
 * The program the skeleton failed to attach: it attaches in order and stops at the first failure,
 * so that is the first one it would attach that has no link.
 */
static struct bpf_program *first_unattached(const struct bpf_object_skeleton *s)
{
	struct bpf_program *prog;
	int i;

	for (i = 0; i < s->prog_cnt; i++) {
		prog = *s->progs[i].prog;
		if (bpf_program__autoload(prog) && bpf_program__autoattach(prog) &&
		    !*s->progs[i].link) {
			return prog;
		}
	}
	return NULL;
}

/*
 * How soon the maps reader tries again to file the captures it read while the lock was held, or
 * reads again a process ld.so is at work in; that many times at most (a process whose libraries
 * are named otherwise than they are needed would look busy forever).
 */
#define MAPS_RETRY_MS 2
#define MAPS_WATCH_READS 100

/*
 * A process read while ld.so mapped its libraries (its first wait was the loader's): the main
 * loop asks the BPF side to tell it again at its next wait, once it gets to the notice. That is
 * after the snapshot it is writing: a short-lived process had exited, or was past its last wait,
 * and its libraries' frames were bare addresses. This thread reads it again meanwhile.
 */
static void maps_watch_add(struct tracker *tr, const struct ls_notice *notice)
{
	unsigned int i;

	for (i = 0; i < tr->maps_reader.nr_watch; i++) {
		if (tr->maps_reader.watch[i].pid == notice->pid) {
			tr->maps_reader.watch[i].key = notice->arg;
			return;
		}
	}
	if (tr->maps_reader.nr_watch < MAPS_WATCH) {
		tr->maps_reader.watch[tr->maps_reader.nr_watch++] =
			(struct maps_watch){ .pid = notice->pid, .key = notice->arg };
	}
}

/*
 * Reads each watched process again, and files its capture for the same notice (in place of
 * the last): until ld.so is done with it, it is gone (its last read stands), or the main loop
 * took the capture over.
 */
static void maps_watch_read(struct tracker *tr)
{
	struct usyms_maps *m;
	struct maps_watch *w;
	unsigned int i, loading;
	int err;

	for (i = 0; i < tr->maps_reader.nr_watch;) {
		w = &tr->maps_reader.watch[i];
		m = w->reads < MAPS_WATCH_READS ? usyms_maps_read((pid_t)w->pid) : NULL;
		if (m && !usyms_maps_gone(m)) {
			usyms_maps_free(w->maps);
			w->maps = m;
			w->reads++;
		} else {
			usyms_maps_free(m);
			w->reads = MAPS_WATCH_READS;
		}
		err = w->maps ? usyms_precapture_maps(tr->usyms, (pid_t)w->pid, w->key, w->maps,
						      false, &loading) :
				0;
		if (err == -EBUSY) {
			i++;
			continue;
		}
		usyms_maps_free(w->maps);
		w->maps = NULL;
		if (!err && loading && w->reads < MAPS_WATCH_READS) {
			i++;
			continue;
		}
		*w = tr->maps_reader.watch[--tr->maps_reader.nr_watch];
	}
}

/*
 * Files the capture of each process of the batch once, for its last notice: a capture is the
 * process as it is now, which an earlier notice may no longer describe (this thread came late,
 * and the process exec'd in between: its first notice was its old image's). Without @wait, stops
 * at the first the cache's lock is not free for: the rest stay in the batch, in order.
 */
static void maps_batch_read(struct tracker *tr, bool wait)
{
	unsigned int i, j, done, loading;
	uint32_t late;
	int err;

	for (i = 0; i < tr->maps_reader.nr_batch; i++) {
		for (j = i + 1; j < tr->maps_reader.nr_batch; j++) {
			if (tr->maps_reader.batch[j].pid == tr->maps_reader.batch[i].pid) {
				break;
			}
		}
		if (j == tr->maps_reader.nr_batch) {
			err = usyms_precapture_maps(tr->usyms, (pid_t)tr->maps_reader.batch[i].pid,
						    tr->maps_reader.batch[i].arg,
						    tr->maps_reader.read[i], wait, &loading);
			if (err == -EBUSY) {
				break;
			}
			if (loading) {
				maps_watch_add(tr, &tr->maps_reader.batch[i]);
			}
			if (err && err != -ECHILD) {
				/* The key is the low half of the notice's clock: how late it was. */
				late = (uint32_t)ls_now_ns() - tr->maps_reader.batch[i].arg;
				ls_verbose(
					"tracker: maps reader: pid %u not read, %.1f ms after its "
					"first wait: %s",
					tr->maps_reader.batch[i].pid, late / 1e6, strerror(-err));
			}
		}
		usyms_maps_free(tr->maps_reader.read[i]);
		tr->maps_reader.read[i] = NULL;
	}
	done = i;
	memmove(tr->maps_reader.batch, tr->maps_reader.batch + done,
		(tr->maps_reader.nr_batch - done) * sizeof(*tr->maps_reader.batch));
	memmove(tr->maps_reader.read, tr->maps_reader.read + done,
		(tr->maps_reader.nr_batch - done) * sizeof(*tr->maps_reader.read));
	tr->maps_reader.nr_batch -= done;
}

/*
 * A notice of maps_ring: the process waits, so it lives: its mappings are read at once, and its
 * capture filed once drained.
 */
static int maps_notice(void *ctx, void *data, size_t size)
{
	const struct ls_notice *notice = data;
	struct tracker *tr = ctx;

	if (size < sizeof(*notice) || notice->kind != LS_NOTICE_MAPS) {
		return 0;
	}
	if (tr->maps_reader.nr_batch == MAPS_BATCH) {
		maps_batch_read(tr, true);
	}
	tr->maps_reader.read[tr->maps_reader.nr_batch] = usyms_maps_read((pid_t)notice->pid);
	tr->maps_reader.batch[tr->maps_reader.nr_batch++] = *notice;
	return 0;
}

/* The maps reader's nice value: above any load but a real-time one, whose CPUs it leaves. */
#define MAPS_READER_NICE -20

/*
 * The maps reader's thread: the mappings of each process as the BPF side notices it. The main
 * loop reads the same notice in its place among the outliers, later: after a snapshot, say,
 * which holds it for tens of milliseconds, long enough for a short-lived process to be gone
 * (every frame of its stacks a bare address, 5 of 10 such processes here).
 */
static void *maps_reader(void *arg)
{
	struct epoll_event ev[2], stop = { .events = EPOLLIN, .data.u32 = 1 };
	struct tracker *tr = arg;
	int efd, n, i;

	/*
	 * A process that exits soon after its notice cannot be read: this thread must not wait
	 * behind the load (a nice -15 hog on every CPU left it 3% of one, and a 300 ms process was
	 * gone before its maps were read, 2 runs of 10). Linux gives each thread its own nice
	 * value; the rest of latsnap keeps its own.
	 */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), MAPS_READER_NICE)) {
		ls_verbose("tracker: the maps reader keeps its priority (nice %d: %s)",
			   MAPS_READER_NICE, strerror(errno));
	}
	efd = epoll_create1(EPOLL_CLOEXEC);
	if (efd < 0 || epoll_ctl(efd, EPOLL_CTL_ADD, tr->maps_reader.stop_fd, &stop)) {
		goto out;
	}
	stop.data.u32 = 0;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(tr->maps_reader.ring), &stop)) {
		goto out;
	}
	for (;;) {
		/*
		 * Captures the main loop's lock held back, or processes ld.so is at work in: try
		 * again soon, reading new notices.
		 */
		n = epoll_wait(
			efd, ev, 2,
			tr->maps_reader.nr_batch || tr->maps_reader.nr_watch ? MAPS_RETRY_MS : -1);
		if (n < 0 && errno != EINTR) {
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].data.u32) {
				goto out;
			}
		}
		ring_buffer__consume(tr->maps_reader.ring);
		maps_batch_read(tr, false);
		maps_watch_read(tr);
	}
out:
	if (efd >= 0) {
		close(efd);
	}
	return NULL;
}

/* Starts the maps reader; without it the main loop reads the maps at each notice, as before. */
static void maps_reader_start(struct tracker *tr)
{
	sigset_t all, old;
	int err;

	tr->maps_reader.stop_fd = eventfd(0, EFD_CLOEXEC);
	tr->maps_reader.ring =
		ring_buffer__new(bpf_map__fd(tr->skel->maps.maps_ring), maps_notice, tr, NULL);
	if (tr->maps_reader.stop_fd < 0 || !tr->maps_reader.ring) {
		err = errno;
		goto fail;
	}
	/* Signals are the main loop's: SIGINT or SIGHUP must end its poll, not this thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&tr->maps_reader.thread, NULL, maps_reader, tr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		goto fail;
	}
	tr->maps_reader.thread_on = true;
	usyms_reader(tr->usyms, true);
	return;
fail:
	ls_verbose("tracker: no maps reader (%s): mappings are read by the main loop",
		   strerror(err));
}

static void maps_reader_stop(struct tracker *tr)
{
	uint64_t one = 1;

	if (tr->maps_reader.thread_on &&
	    write(tr->maps_reader.stop_fd, &one, sizeof(one)) == sizeof(one)) {
		pthread_join(tr->maps_reader.thread, NULL);
	}
	if (tr->maps_reader.thread_on) {
		usyms_reader(tr->usyms, false);
	}
	tr->maps_reader.thread_on = false;
	while (tr->maps_reader.nr_batch) {
		usyms_maps_free(tr->maps_reader.read[--tr->maps_reader.nr_batch]);
	}
	while (tr->maps_reader.nr_watch) {
		usyms_maps_free(tr->maps_reader.watch[--tr->maps_reader.nr_watch].maps);
	}
	ring_buffer__free(tr->maps_reader.ring);
	tr->maps_reader.ring = NULL;
	if (tr->maps_reader.stop_fd >= 0) {
		close(tr->maps_reader.stop_fd);
	}
	tr->maps_reader.stop_fd = -1;
}

/**
 * tracker_attach - start tracing: attach every program loaded, naming the hook that is missing.
 */
int tracker_attach(struct tracker *tr)
{
	struct bpf_program *prog;
	int err;

	err = latsnap_bpf__attach(tr->skel);
	if (err) {
		prog = first_unattached(tr->skel->skeleton);
		if (prog) {
			ls_err("tracker: cannot attach %s (%s): %s", bpf_program__name(prog),
			       bpf_program__section_name(prog), strerror(-err));
		} else {
			ls_err("tracker: cannot attach the BPF programs: %s", strerror(-err));
		}
		return err;
	}
	maps_reader_start(tr);
	/*
	 * An fexit program's trampoline exists only once attached, and it is in the stack of
	 * every thread that sleeps in schedule(): read kallsyms again, so that it is named, and
	 * left out as glue, rather than taken for the code below it.
	 */
	if (bpf_program__autoload(tr->skel->progs.ls_schedule_exit)) {
		struct ksyms *ksyms = ksyms_load(NULL);

		if (ksyms) {
			ksyms_free(tr->ksyms);
			tr->ksyms = ksyms;
		}
	}
	return 0;
}

/**
 * tracker_kernel_frames() - symbolize kernel addresses, innermost first, with the BPF and
 *                           tracepoint plumbing at the top left out
 * @frames: an empty stack, filled
 *
 * Return: 0 or -ENOMEM.
 */
int tracker_kernel_frames(struct tracker *tr, const uint64_t *ips, unsigned int nr,
			  struct outlier_frames *frames)
{
	return decode_kernel_frames(tr->ksyms, (const __u64 *)ips, nr, frames);
}

/**
 * tracker_set_thresholds() - change the thresholds of the loaded programs, at run time
 * @threshold_ns: a syscall (or request) this long is an outlier
 * @sleep_threshold_ns: an off-CPU interval outside syscalls this long is an outlier
 *
 * The programs stay loaded and attached, and their rings keep what they hold: a wait that ends
 * after the store is judged by the new values; one that ended before, by the old.
 */
void tracker_set_thresholds(struct tracker *tr, uint64_t threshold_ns, uint64_t sleep_threshold_ns)
{
	/* The .data section is mapped: each store is one aligned 64-bit write the programs see. */
	__atomic_store_n(&tr->skel->data->threshold_ns, threshold_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&tr->skel->data->sleep_threshold_ns, sleep_threshold_ns, __ATOMIC_RELAXED);
}

/**
 * tracker_wake_context - where a wakeup ran, from the waker's kernel stack: 0 in the waker's
 * own context, 1 in a hard interrupt, 2 in a softirq (then the task it names is a bystander).
 * @own gets how many frames are the waker's own.
 */
int tracker_wake_context(struct tracker *tr, const uint64_t *ips, unsigned int nr,
			 unsigned int *own)
{
	enum wake_context wc;

	*own = decode_wake_context(tr->ksyms, (const __u64 *)ips, nr, &wc);
	return wc == WAKE_HARDIRQ ? 1 : wc == WAKE_SOFTIRQ ? 2 : 0;
}

/**
 * tracker_poll - wait up to @timeout_ms for outliers and hand each to the callback.
 *
 * Return: the number handled, or a negative errno (-EINTR when a signal arrived).
 */
int tracker_poll(struct tracker *tr, int timeout_ms)
{
	bool backlog = false;
	int n, err;

	ring_budget(tr, POLL_BUDGET);
	/* Back in time for the nearest parked outlier's deadline. */
	n = ring_buffer__poll(tr->ring, park_due_ms(tr, timeout_ms));
	if (n == -EAGAIN) {
		n = POLL_BUDGET;
		backlog = true;
	}
	ring_budget(tr, 0);
	/* Records left in the ring may hold the stacks the overdue ones wait for. */
	if (!tr->deliver.cb_status && !backlog) {
		park_release_overdue(tr, false);
	}
	err = deliver_take_status(tr);
	return err ?: n;
}

/**
 * tracker_settle - at the end of a run: wait up to @timeout_ms for the unwound stacks of the
 * outliers still waiting for one, then hand every outlier over.
 *
 * Return: 0, or the callback's non-zero return.
 */
int tracker_settle(struct tracker *tr, int timeout_ms)
{
	uint64_t deadline = ls_now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	while (tr->park.nr_parked && ls_now_ns() < deadline) {
		ring_budget(tr, DRAIN_BUDGET);
		ring_buffer__poll(tr->ring, 10);
		ring_budget(tr, 0);
		if (tr->deliver.cb_status) {
			break;
		}
	}
	if (!tr->deliver.cb_status) {
		park_release_overdue(tr, true);
	}
	return deliver_take_status(tr);
}

/**
 * tracker_drain - handle every outlier already in the ring buffer, without waiting.
 */
int tracker_drain(struct tracker *tr)
{
	int n;

	ring_budget(tr, DRAIN_BUDGET);
	n = ring_buffer__consume(tr->ring);
	if (n == -EAGAIN) {
		n = DRAIN_BUDGET;
	}
	ring_budget(tr, 0);
	return n;
}

/**
 * tracker_close - detach and free everything; safe on a partly opened tracker.
 */
void tracker_close(struct tracker *tr)
{
	if (!tr) {
		return;
	}
	/* First, so that every hook of the machine stops paying for latsnap while the rest goes. */
	if (tr->skel) {
		latsnap_bpf__detach(tr->skel);
	}
	maps_reader_stop(tr);
	park_free(tr);
	requests_free(tr);
	deliver_free(tr);
	goroutines_free(tr->go);
	ring_buffer__free(tr->ring);
	context_free(tr);
	targets_free(tr);
	latsnap_bpf__destroy(tr->skel);
	ksyms_free(tr->ksyms);
	usyms_free(tr->usyms);
	pyframes_free(tr->pyframes);
	free(tr);
}
