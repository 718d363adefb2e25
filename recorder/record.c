// SPDX-License-Identifier: GPL-2.0
/*
 * record.c - `latsnap record`'s run: the rules and the tracker set up, COMMAND started under
 * tracking, the loop that consumes outliers and takes snapshots until the run stops, and its
 * end (COMMAND ended, the last snapshot, the totals). Its settings are record-opts.c's, SIGHUP
 * reload.c's, the outlier policy policy.c's, and what it tells of itself record-status.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "classify/idle.h"
#include "lib/util.h"
#include "recorder/command.h"
#include "recorder/policy.h"
#include "recorder/record-opts.h"
#include "recorder/record-status.h"
#include "recorder/record.h"
#include "recorder/recorder.h"
#include "recorder/reload.h"
#include "recorder/stall.h"
#include "tracker/tracker.h"

/* The last SIGINT or SIGTERM, and how many came: a second one while COMMAND ends lets it be. */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_count;
static volatile sig_atomic_t reload_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
	stop_count++;
}

static void on_reload_signal(int sig)
{
	(void)sig;
	reload_signal = 1;
}

/*
 * prepare_command - COMMAND's environment, the files to exec and the rest, made now, before
 * fork: the library first in LD_PRELOAD, keeping what was there.
 */
static int prepare_command(const struct record_opts *opts, struct command *cmd)
{
	const char *lib = NULL;
	char path[4200];

	if (!opts->no_preload) {
		lib = ls_find_library("liblatsnap.so", path, sizeof(path));
		if (!lib) {
			ls_err("record: liblatsnap.so: not found next to latsnap nor in " LS_LIBDIR
			       " (reinstall, or use --no-preload)");
			return -ENOENT;
		}
	}
	cmd->stdout_to_stderr = opts->json;
	return command_prepare(cmd, opts->command, lib, opts->signal);
}

/*
 * drain_all - at the end, every outlier the ring still holds: each drain hands over a bounded
 * number. Bounded too, for a -p or -a target that keeps producing them while latsnap stops.
 */
static void drain_all(struct tracker *tr)
{
	int i;

	for (i = 0; i < 64 && tracker_drain(tr) > 0; i++) {
	}
}

static int exit_status_of(int status)
{
	if (WIFEXITED(status)) {
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status)) {
		return 128 + WTERMSIG(status);
	}
	return 1;
}

static bool targets_alive(const struct record_opts *opts)
{
	int i;

	for (i = 0; i < opts->nr_pids; i++) {
		if (kill(opts->pids[i], 0) == 0 || errno != ESRCH) {
			return true;
		}
	}
	return false;
}

/* Who was over a share at the source (record --max-rate), the most dropped first. */
static void print_shares(struct tracker *tr)
{
	struct tracker_share shares[8];
	size_t n = tracker_shares_dropped(tr, shares, 8), i;

	for (i = 0; i < n; i++) {
		fprintf(stderr, "latsnap:   dropped at the source: %s %u, %" PRIu64 " outliers%s\n",
			shares[i].user ? "user" : "pid", shares[i].id, shares[i].dropped,
			shares[i].user ? " (its processes')" : "");
	}
}

static void print_totals(struct tracker *tr, const struct record_state *st)
{
	struct rusage self;
	struct tracker_totals t;

	struct recorder_totals r = { 0 };

	tracker_totals(tr, &t);
	if (st->recorder) {
		recorder_totals(st->recorder, &r);
	}
	/*
	 * "N outliers, N snapshots, N skipped, N lost (...), ... N idle" as scripts read it: the
	 * outliers dropped at the source over a share are lost (they never reached user space),
	 * the flood guard's are skipped, said apart before the idle count.
	 */
	fprintf(stderr,
		"latsnap: %" PRIu64 " outliers, %" PRIu64 " snapshots, %" PRIu64
		" skipped, %" PRIu64 " lost "
		"(over a share %" PRIu64 ", ring buffer %" PRIu64 ", stacks unreadable %" PRIu64
		", stacks beyond the kept %" PRIu64 ", accumulator full %" PRIu64
		", runs skipped %" PRIu64 "), held back %" PRIu64 " (%" PRIu64 " repeats, %" PRIu64
		" over a user's budget, %" PRIu64 " over the budget), %" PRIu64 " idle\n",
		st->outliers, r.snapshots, r.skipped,
		t.throttled + t.ringbuf_lost + t.accum_full + t.storage_failed + t.runs_skipped,
		t.throttled, t.ringbuf_lost, t.stack_failed, t.stacks_dropped, t.accum_full,
		t.runs_skipped,
		r.guard.held[GUARD_REPEAT] + r.guard.held[GUARD_USER_BUDGET] +
			r.guard.held[GUARD_BUDGET],
		r.guard.held[GUARD_REPEAT], r.guard.held[GUARD_USER_BUDGET],
		r.guard.held[GUARD_BUDGET], idle_count(st->idle));
	print_shares(tr);
	policy_print_idle(st);
	ls_verbose("record: signals to the preload library: %" PRIu64 " sent, %" PRIu64
		   " not sent (blocked or pending), %" PRIu64
		   " refused by the kernel (busy), %" PRIu64
		   " refused otherwise (when sent, or owed at a switch); %" PRIu64
		   " stacks reported back, %" PRIu64
		   " reports refused (not signalled)",
		   t.signals, t.signal_skipped, t.signal_busy, t.signal_refused, t.unwound,
		   t.unwound_refused);
	ls_verbose("record: user stacks walked at a switch-out from user code: %" PRIu64
		   "; at the end of the switch back in, for a long interval: %" PRIu64,
		   t.user_walks, t.user_walks_deferred);
	ls_verbose("record: kernel stacks walked: %" PRIu64 " for long waits of tracked threads, %" PRIu64
		   " for the context stream",
		   t.wait_stacks, t.ctx_stacks);
	ls_verbose("record: %" PRIu64 " outliers and stalls of LTTng's and latsnap's own processes "
		   "not reported (latsnap(1), WHAT IS NEVER TRACKED)",
		   t.ours_dropped);
	if (st->stalls) {
		struct stall_totals s;

		stall_totals(st->stalls, &s);
		ls_verbose("record: stall checks: %" PRIu64 " scans, %.1f us each on average, "
			   "%.1f us at most, %" PRIu64 " threads handed over (%" PRIu64
			   " not followed); %" PRIu64 " still blocked, %" PRIu64
			   " unfinished, %" PRIu64 " deadlocks",
			   s.scans, s.scans ? s.scan_ns / 1e3 / (double)s.scans : 0.0,
			   s.max_scan_ns / 1e3, s.records, s.dropped, s.still_blocked, s.unfinished,
			   s.deadlocks);
	}
	if (t.ctx_events || t.ctx_lost) {
		ls_verbose("record: kernel context stream: %" PRIu64 " events, %" PRIu64
			   " lost (no slot in its ring)",
			   t.ctx_events, t.ctx_lost);
	}
	if (ls_verbose_enabled && getrusage(RUSAGE_SELF, &self) == 0) {
		/* latsnap's own threads only: COMMAND is a child, counted apart by the kernel. */
		ls_verbose("record: latsnap's own CPU time: %.3f s user, %.3f s system",
			   self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6,
			   self.ru_stime.tv_sec + self.ru_stime.tv_usec / 1e6);
	}
}

/* The run of COMMAND, when there is one: the child, its status, the pipes that start it. */
struct record_child {
	struct command cmd;
	pid_t pid;
	int gate_fd;
	int exec_fd;
	int status;
	bool done;
};

/* The rules, the stack log, and COMMAND's environment: what record needs before the tracker. */
static int record_prepare(struct record_opts *opts, struct record_state *st,
			  struct record_child *ch)
{
	int ret;

	opts->rec.output = opts->relay ? opts->keep_local : opts->output;
	opts->rec.relay = opts->relay;
	ret = policy_open(st);
	if (ret) {
		return ret;
	}
	/* Before the tracker, which changes latsnap's own environment (DEBUGINFOD_URLS). */
	if (opts->command && prepare_command(opts, &ch->cmd)) {
		return 1;
	}
	return 0;
}

static void tracker_opts_of(const struct record_opts *opts, struct tracker_opts *topts)
{
	topts->threshold_ns = opts->threshold_ns;
	topts->sleep_threshold_ns = opts->sleep_threshold_ns;
	topts->track_all = opts->all;
	topts->track_registered = !opts->all && !opts->nr_pids && !opts->command &&
				  !opts->nr_cgroups && !opts->nr_comms;
	topts->include_idle = opts->include_idle;
	topts->exact_start = opts->exact_start;
	topts->go_waits = opts->go_waits;
	topts->requests = opts->nr_requests > 0;
	topts->max_rate = opts->max_rate;
	topts->ctx_floor_ns = opts->context_floor_ns;
	topts->no_preload = opts->no_preload && opts->command && !opts->nr_pids && !opts->all &&
			    !opts->nr_cgroups && !opts->nr_comms;
	memcpy(topts->cgroup_ids, opts->cgroup_ids, sizeof(topts->cgroup_ids));
	topts->nr_cgroups = (unsigned int)opts->nr_cgroups;
	memcpy(topts->comms, opts->comms, sizeof(topts->comms));
	topts->nr_comms = (unsigned int)opts->nr_comms;
	memcpy(topts->idle_syscalls, opts->idle, sizeof(topts->idle_syscalls));
}

/*
 * start_command - fork COMMAND, track it, then let it exec: tracking is live before its first
 * instruction. Return: 0, 1 on failure, 127 when it could not be run.
 */
static int start_command(const struct record_opts *opts, struct tracker *tr,
			 struct record_child *ch)
{
	int exec_err = 0;
	size_t i;

	ch->pid = command_start(&ch->cmd, &ch->gate_fd, &ch->exec_fd);
	if (ch->pid < 0 || tracker_track_pid(tr, ch->pid)) {
		return 1;
	}
	/* What it will exec (execvp's first runnable file): a Go program is followed at once. */
	for (i = 0; ch->cmd.paths && ch->cmd.paths[i]; i++) {
		if (!access(ch->cmd.paths[i], X_OK)) {
			tracker_follow_goroutines(tr, ch->pid, ch->cmd.paths[i]);
			break;
		}
	}
	if (write(ch->gate_fd, "g", 1) != 1) {
		ls_err("record: cannot start '%s': %s", opts->command[0], strerror(errno));
		return 1;
	}
	close(ch->gate_fd);
	ch->gate_fd = -1;
	if (read(ch->exec_fd, &exec_err, sizeof(exec_err)) == sizeof(exec_err)) {
		ls_err("record: cannot run '%s': %s", opts->command[0], strerror(exec_err));
		waitpid(ch->pid, &ch->status, 0);
		ch->pid = -1;
		return 127;
	}
	return 0;
}

/* After attach: the processes that loaded the preload library before, and what is tracked. */
static void adopt_and_say(const struct record_opts *opts, const struct tracker_opts *topts,
			  struct tracker *tr)
{
	char what[512];
	size_t len;
	int i, n;

	if (topts->track_registered) {
		n = tracker_adopt_preloaded(tr, 0);
		fprintf(stderr,
			"latsnap: tracking every process that loads liblatsnap.so (%d running now); "
			"Ctrl-C to stop\n",
			n > 0 ? n : 0);
	}
	for (i = 0; i < opts->nr_pids; i++) {
		tracker_adopt_preloaded(tr, opts->pids[i]);
	}
	what[0] = '\0';
	if (opts->all) {
		snprintf(what, sizeof(what), "every thread");
	} else if (topts->track_registered) {
		snprintf(what, sizeof(what), "processes with the preload library");
	}
	if (opts->command) {
		snprintf(what, sizeof(what), "%s", opts->command[0]);
	}
	if (opts->nr_pids) {
		len = strlen(what);
		snprintf(what + len, sizeof(what) - len, "%s%d pids", len ? ", " : "",
			 opts->nr_pids);
	}
	if (opts->nr_cgroups) {
		len = strlen(what);
		snprintf(what + len, sizeof(what) - len, "%s%d cgroups", len ? ", " : "",
			 opts->nr_cgroups);
	}
	if (opts->nr_comms) {
		len = strlen(what);
		snprintf(what + len, sizeof(what) - len, "%s%d names", len ? ", " : "",
			 opts->nr_comms);
	}
	ls_verbose("record: tracking %s; threshold %" PRIu64 " ns, sleep threshold %" PRIu64 " ns",
		   what, opts->threshold_ns, opts->sleep_threshold_ns);
}

/*
 * record_tend - between two polls: a reload asked for, status.json and the health line due, or
 * a snapshot written since status.json last said.
 */
static void record_tend(struct record_state *st, struct tracker *tr)
{
	if (reload_signal) {
		reload_signal = 0;
		record_reload(st, tr);
		record_status_write(st, tr, true);
	}
	record_status_tend(st, tr, !stop_signal);
}

/*
 * record_loop - consume outliers and take snapshots until a signal, the end of COMMAND or of
 * every tracked pid, or --duration. Return: 0, or 1 when the outliers could not be read.
 */
static int record_loop(const struct record_opts *opts, struct record_state *st, struct tracker *tr,
		       struct record_child *ch)
{
	uint64_t deadline = opts->duration_ns ? ls_now_ns() + opts->duration_ns : 0;
	int wait_ms, due, n;

	record_status_begin(st, tr);
	while (!stop_signal) {
		record_tend(st, tr);
		wait_ms = 100;
		if (st->recorder) {
			due = recorder_poll(st->recorder);
			if (due >= 0 && due < wait_ms) {
				wait_ms = due;
			}
		}
		if (st->stalls) {
			due = stall_poll(st->stalls);
			if (due < wait_ms) {
				wait_ms = due;
			}
		}
		n = tracker_poll(tr, wait_ms);
		if (n < 0 && n != -EINTR) {
			ls_err("record: reading outliers: %s", strerror(-n));
			return 1;
		}
		if (ch->pid > 0 && waitpid(ch->pid, &ch->status, WNOHANG) == ch->pid) {
			ch->done = true;
			break;
		}
		/* A cgroup or a name has processes to come: only pids alone run out. */
		if (opts->nr_pids && !opts->command && !opts->nr_cgroups && !opts->nr_comms &&
		    !targets_alive(opts)) {
			ls_verbose("record: every tracked process has exited");
			break;
		}
		if (deadline && ls_now_ns() >= deadline) {
			break;
		}
	}
	return 0;
}

/*
 * end_command - the run stops (--duration, SIGINT, SIGTERM) while COMMAND still runs: send it
 * SIGTERM, as perf record and timeout(1) do, and wait for it, still tracking it, so that what
 * it does on its way out is seen and it is never left running untracked. A COMMAND that
 * ignores SIGTERM is waited for until a second SIGINT or SIGTERM, which leaves it running.
 */
static void end_command(struct tracker *tr, struct record_child *ch)
{
	sig_atomic_t signals = stop_count;
	int n;

	if (waitpid(ch->pid, &ch->status, WNOHANG) == ch->pid) {
		/* It ended on its own meanwhile (a terminal's Ctrl-C reaches it too). */
		ch->done = true;
		return;
	}
	if (stop_signal) {
		fprintf(stderr, "latsnap: record: SIG%s: ending COMMAND (pid %d) with SIGTERM\n",
			sigabbrev_np(stop_signal), (int)ch->pid);
	}
	kill(ch->pid, SIGTERM);
	for (;;) {
		if (waitpid(ch->pid, &ch->status, WNOHANG) == ch->pid) {
			ch->done = true;
			break;
		}
		if (stop_count != signals) {
			fprintf(stderr,
				"latsnap: record: SIG%s again: COMMAND (pid %d) left running, no "
				"longer tracked\n",
				sigabbrev_np(stop_signal), (int)ch->pid);
			break;
		}
		n = tracker_poll(tr, 100);
		if (n < 0 && n != -EINTR) {
			/* Nothing more to read: wait for COMMAND alone. */
			usleep(100 * 1000);
		}
	}
	if (ch->done && stop_signal) {
		if (WIFSIGNALED(ch->status)) {
			fprintf(stderr, "latsnap: record: COMMAND (pid %d) ended by SIG%s\n",
				(int)ch->pid, sigabbrev_np(WTERMSIG(ch->status)));
		} else {
			fprintf(stderr, "latsnap: record: COMMAND (pid %d) exited with status %d\n",
				(int)ch->pid, exit_status_of(ch->status));
		}
	}
	drain_all(tr);
	tracker_settle(tr, 250);
}

/* The run is over: the last outliers, COMMAND ended if still running, the last snapshot. */
static void record_finish(struct record_state *st, struct tracker *tr, struct record_child *ch)
{
	unsigned int processes, in_flight;

	drain_all(tr);
	/* Outliers still waiting for their unwound stacks: a last chance, then as they are. */
	tracker_settle(tr, 250);
	if (st->stalls) {
		/* Before COMMAND is ended: what still waits now is unfinished, not dropped. */
		stall_finish(st->stalls);
	}
	if (ch->pid > 0 && !ch->done) {
		end_command(tr, ch);
	}
	if (st->recorder) {
		/* The snapshot under way is finished, whatever stopped the run. */
		recorder_flush(st->recorder);
	}
	print_totals(tr, st);
	if (ls_verbose_enabled) {
		tracker_state_left(tr, &processes, &in_flight);
		ls_verbose("record: kernel state left: %u tracked processes, %u outliers in flight",
			   processes, in_flight);
	}
}

/**
 * record_main - `latsnap record`.
 */
int record_main(int argc, char **argv)
{
	struct record_child ch = { .pid = -1, .gate_fd = -1, .exec_fd = -1 };
	struct tracker_opts topts = { 0 };
	struct record_state st = { 0 };
	struct record_opts opts;
	struct tracker *tr = NULL;
	int ret = 1, i, n;

	st.argc = argc;
	st.argv = argv;
	st.start_realtime_ns = record_status_realtime_ns();

	/* First: COMMAND starts with the dispositions and mask latsnap was started with. */
	command_capture_signals(&ch.cmd);
	n = record_opts_load(&opts, argc, argv, false);
	if (n) {
		ret = n > 0 ? 0 : 2;
		goto out;
	}
	ls_verbose_enabled = opts.verbose;
	st.opts = &opts;
	ret = record_prepare(&opts, &st, &ch);
	if (ret) {
		goto out;
	}
	ret = 1;
	tracker_opts_of(&opts, &topts);
	if (tracker_open(&tr, &topts, policy_on_outlier, &st)) {
		goto out;
	}
	signal(SIGINT, on_stop_signal);
	signal(SIGTERM, on_stop_signal);
	signal(SIGHUP, on_reload_signal);
	signal(SIGPIPE, SIG_IGN);
	/* -p: through the call a reload makes, so that it knows the pids to take out later. */
	if (opts.nr_pids && tracker_set_targets(tr, opts.pids, opts.nr_pids, opts.cgroup_ids,
						opts.nr_cgroups, opts.comms, opts.nr_comms)) {
		goto out;
	}
	if (tracker_attach(tr)) {
		goto out;
	}
	policy_learn_idle_places(&st, tr);
	for (i = 0; i < opts.nr_requests; i++) {
		if (tracker_add_request(tr, &opts.requests[i])) {
			goto out;
		}
	}
	if (!opts.no_snapshot && recorder_open(&st.recorder, &opts.rec, tr)) {
		goto out;
	}
	if (!opts.no_hang &&
	    stall_open(&st.stalls, tr, opts.hang_ns,
		       opts.threshold_ns < opts.sleep_threshold_ns ? opts.threshold_ns :
								     opts.sleep_threshold_ns,
		       policy_take_outlier, &st)) {
		goto out;
	}
	if (opts.command) {
		ret = start_command(&opts, tr, &ch);
		if (ret) {
			goto out;
		}
		ret = 1;
	}
	adopt_and_say(&opts, &topts, tr);
	/* Attached, the session ready, COMMAND started: the service is up. */
	record_status_notify_ready(&opts);
	if (record_loop(&opts, &st, tr, &ch)) {
		goto out;
	}
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: the last snapshot");
	record_finish(&st, tr, &ch);
	record_status_write(&st, tr, false);
	/* SIGINT, SIGTERM: 0, whatever became of COMMAND (the contract; its end was said). */
	ret = ch.done && !stop_signal ? exit_status_of(ch.status) : 0;
out:
	if (ch.gate_fd >= 0) {
		close(ch.gate_fd);
	}
	if (ch.exec_fd >= 0) {
		close(ch.exec_fd);
	}
	stall_close(st.stalls);
	recorder_close(st.recorder);
	tracker_close(tr);
	policy_close(&st);
	command_free(&ch.cmd);
	record_opts_free(&opts);
	return ret;
}
