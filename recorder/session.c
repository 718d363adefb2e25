// SPDX-License-Identifier: GPL-2.0
/*
 * session.c - the LTTng snapshot session behind `latsnap record`, driven through liblttng-ctl.
 *
 * One session per latsnap instance, in snapshot mode: UST channels in overwrite mode with per-UID
 * buffers, so that an application that exits before the snapshot is still in it. A kernel channel
 * is added only where lttng-modules answer; on a kernel without them (no loadable modules) the
 * session is user space only, which -v says once. With a relay, two replay sessions more, which
 * latsnap-replay records latsnap's own events into (recorder/replay.c, open_replay()).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "recorder/session.h"
#include "lib/util.h"

#define CHANNEL_NAME "latsnap"
#define KERNEL_CHANNEL_NAME "latsnap-kernel"
/* The wait ends at the daemon's signal: this only bounds one that never gives it. */
#define SESSIOND_START_TIMEOUT_MS 30000
/* How long the daemon latsnap starts waits on a relay daemon that does not answer. */
#define RELAYD_TIMEOUT_MS "5000"

/*
 * liblttng-ctl prints its own "Error: ..." lines on stderr unless this (exported, not in its
 * headers) is set; weak, so that a library without it only makes latsnap more talkative.
 */
extern int lttng_opt_quiet __attribute__((weak));

struct session {
	char name[64];
	/*
	 * With a relay, the sessions latsnap-replay records into (recorder/replay.c): per-PID, each
	 * tracking only the process latsnap names (session_replay_track()).
	 */
	char replay_name[SESSION_MAX_REPLAY][80];
	int nr_replay;
	struct lttng_handle *ust;
	struct lttng_handle *kernel; /* NULL: no kernel tracer here */
	pid_t sessiond; /* the daemon latsnap started (its child, never reaped elsewhere), or 0 */
	uint64_t subbuf_size; /* of the UST channel */
	bool started;
	bool lost; /* the daemon went away: see session_set_lost() */
};

static volatile sig_atomic_t sessiond_ready;

static void on_sessiond_ready(int sig)
{
	(void)sig;
	sessiond_ready = 1;
}

/*
 * Is an lttng-modules kernel tracer loaded, or installed for this kernel? Otherwise a session
 * daemon started without --no-kernel runs modprobe for each of its modules in vain, which takes
 * seconds on a slow machine (Debian's kernels have modules, and rarely lttng-modules).
 */
static bool kernel_tracer_possible(void)
{
	char path[512], line[512];
	struct utsname uts;
	bool found = false;
	FILE *dep;

	if (access("/sys/module/lttng_tracer", F_OK) == 0) {
		return true;
	}
	if (access("/proc/modules", F_OK) || uname(&uts)) {
		return false;
	}
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", uts.release);
	dep = fopen(path, "re");
	if (!dep) {
		return false;
	}
	while (!found && fgets(line, sizeof(line), dep)) {
		found = strstr(line, "/lttng-tracer.ko") != NULL;
	}
	fclose(dep);
	return found;
}

/* The loaded lttng-modules' version, for -v; "?" when the module does not say. */
static const char *lttng_modules_version(char *buf, size_t size)
{
	FILE *f = fopen("/sys/module/lttng_tracer/version", "re");

	snprintf(buf, size, "?");
	if (f) {
		if (fgets(buf, (int)size, f)) {
			buf[strcspn(buf, "\n")] = '\0';
		}
		fclose(f);
	}
	return buf;
}

/*
 * start_sessiond - run a session daemon of our own, as `lttng create` does: --sig-parent makes
 * it send SIGUSR1 once it accepts clients, so latsnap knows when to go on.
 */
static int start_sessiond(pid_t *pidp)
{
	struct sigaction sa = { .sa_handler = on_sessiond_ready }, old;
	sigset_t block, saved;
	struct timespec ts = { 0, 10 * 1000000 };
	int waited_ms, status, err = 0, devnull;
	pid_t pid;

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &saved);
	sigaction(SIGUSR1, &sa, &old);
	sessiond_ready = 0;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		ls_err("record: cannot start lttng-sessiond: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &saved, NULL);
		setsid();
		/*
		 * Quiet, and holding none of latsnap's pipes: the daemon can outlive latsnap
		 * (stop_sessiond()), and a reader of latsnap's output would wait for it.
		 */
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
			dup2(devnull, STDERR_FILENO);
		}
		/*
		 * Without a timeout a snapshot to a relay that drops packets blocks in connect()
		 * for minutes, and outliers wait behind it.
		 */
		setenv("LTTNG_NETWORK_SOCKET_TIMEOUT", RELAYD_TIMEOUT_MS, 0);
		if (kernel_tracer_possible()) {
			execlp("lttng-sessiond", "lttng-sessiond", "--sig-parent", "--quiet", NULL);
		} else {
			execlp("lttng-sessiond", "lttng-sessiond", "--sig-parent", "--quiet",
			       "--no-kernel", NULL);
		}
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &saved, NULL);
	for (waited_ms = 0; !sessiond_ready && waited_ms < SESSIOND_START_TIMEOUT_MS;
	     waited_ms += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			ls_err("record: lttng-sessiond exited at start-up (%s %d); is lttng-tools "
			       "installed?",
			       WIFEXITED(status) ? "status" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			err = -ECHILD;
			goto out;
		}
		nanosleep(&ts, NULL);
	}
	if (!sessiond_ready && lttng_session_daemon_alive() != 1) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		ls_err("record: lttng-sessiond did not come up within %d ms",
		       SESSIOND_START_TIMEOUT_MS);
		err = -ETIMEDOUT;
		goto out;
	}
	*pidp = pid;
	ls_verbose("record: started lttng-sessiond (pid %d)", pid);
out:
	sigaction(SIGUSR1, &old, NULL);
	return err;
}

static int ctl_err(int ret, const char *what)
{
	if (ret < 0) {
		ls_err("record: LTTng: %s: %s", what, lttng_strerror(ret));
		return -EIO;
	}
	return 0;
}

static int add_contexts(struct lttng_handle *handle, const char *channel)
{
	static const enum lttng_event_context_type types[] = {
		LTTNG_EVENT_CONTEXT_VPID,
		LTTNG_EVENT_CONTEXT_VTID,
		LTTNG_EVENT_CONTEXT_PROCNAME,
	};
	struct lttng_event_context ctx;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.ctx = types[i];
		ret = lttng_add_context(handle, &ctx, NULL, channel);
		if (ret < 0) {
			return ctl_err(ret, "add context");
		}
	}
	return 0;
}

/*
 * latsnap's own providers (events/events-tp.h, events/kernel-tp.h), as event names begin. Their
 * events are recorded from latsnap's own processes only: with per-UID buffers every process of
 * any user that hits a tracepoint writes into every session that enables it, and any process can
 * load liblatsnap-events.so (or declare a provider of the same name) and claim another pid's
 * outliers, stacks and mappings; a second latsnap's would land in this one's snapshots too.
 */
static const char *const own_providers[] = { "latsnap:", "latsnap_kernel:" };
/* The same as exclusions from an application's pattern (LTTng's globbing: a trailing star). */
static const char *const own_exclusions[] = { "latsnap:*", "latsnap_kernel:*" };

#define NR_OWN_PROVIDERS (sizeof(own_providers) / sizeof(*own_providers))

/* Does @pattern name only events of latsnap's providers? */
static bool own_provider(const char *pattern)
{
	size_t i;

	for (i = 0; i < NR_OWN_PROVIDERS; i++) {
		if (!strncmp(pattern, own_providers[i], strlen(own_providers[i]))) {
			return true;
		}
	}
	return false;
}

/*
 * Can LTTng's glob @pattern (only '*' is special) match a name that begins with @prefix? It can
 * unless a character before its first star, within @prefix, differs, or it ends first.
 */
static bool may_match_prefix(const char *pattern, const char *prefix)
{
	for (; *pattern != '*' && *prefix; pattern++, prefix++) {
		if (*pattern != *prefix) {
			return false;
		}
	}
	return true;
}

static bool may_match_own(const char *pattern)
{
	size_t i;

	for (i = 0; i < NR_OWN_PROVIDERS; i++) {
		if (may_match_prefix(pattern, own_providers[i])) {
			return true;
		}
	}
	return false;
}

/* The inode of latsnap's pid namespace (its helpers share it), 0 when /proc cannot say. */
static unsigned long long own_pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/*
 * The filter that takes an event from this process only. Its pid alone would not do: a process
 * in a pid namespace of its own (unshare -Urp, open to any user) can have this pid as its vpid,
 * and the procname is anyone's to set; in this pid namespace the pid is this process's as long
 * as it lives (and the session with it).
 */
static void own_filter(char *buf, size_t size)
{
	unsigned long long ns = own_pid_ns();

	if (ns) {
		snprintf(buf, size, "$ctx.vpid == %d && $ctx.pid_ns == %llu", (int)getpid(), ns);
	} else {
		snprintf(buf, size, "$ctx.vpid == %d", (int)getpid());
	}
}

/* lttng_enable_event_with_exclusions(), its error said as ctl_err() says it. */
static int enable_rule(struct lttng_handle *handle, struct lttng_event *ev, const char *filter,
		       bool exclude_own)
{
	int ret;

	ret = lttng_enable_event_with_exclusions(handle, ev, CHANNEL_NAME, filter,
						 exclude_own ? (int)NR_OWN_PROVIDERS : 0,
						 exclude_own ? (char **)own_exclusions : NULL);
	return ctl_err(ret, ev->name);
}

/*
 * enable_ust_event - @pattern into the UST channel. latsnap's own providers are taken from this
 * process only (own_filter()); an application's pattern that could match them (`*`) is enabled
 * with them excluded, and once more for this process alone, so that it still records latsnap's
 * own events as it did. With @exclude, the applications' rule takes nothing from a process of
 * that name: latsnap-replay records its events back in time, into sessions of its own.
 */
static int enable_ust_event(struct lttng_handle *handle, const char *pattern, const char *exclude)
{
	struct lttng_event ev;
	char filter[128];
	int err;

	memset(&ev, 0, sizeof(ev));
	ev.type = LTTNG_EVENT_TRACEPOINT;
	ev.loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
	snprintf(ev.name, sizeof(ev.name), "%s", pattern);
	own_filter(filter, sizeof(filter));
	if (own_provider(pattern)) {
		return enable_rule(handle, &ev, filter, false);
	}
	if (exclude) {
		snprintf(filter, sizeof(filter), "$ctx.procname != \"%s\"", exclude);
	}
	/* LTTng takes exclusions only for a pattern with a star; without one it names one event. */
	err = enable_rule(handle, &ev, exclude ? filter : NULL,
			  strchr(pattern, '*') && may_match_own(pattern));
	if (err || !strchr(pattern, '*') || !may_match_own(pattern)) {
		return err;
	}
	own_filter(filter, sizeof(filter));
	return enable_rule(handle, &ev, filter, false);
}

/*
 * The UST channel: overwrite mode (a flight recorder keeps the latest), per-UID buffers
 * (they outlive the applications), @buffer_size bytes per CPU in 4 sub-buffers.
 */
static uint64_t subbuf_size_of(uint64_t buffer_size)
{
	uint64_t subbuf = 4096;

	while (subbuf * 2 * 4 <= buffer_size) {
		subbuf *= 2;
	}
	return subbuf;
}

static int enable_channel(struct lttng_handle *handle, struct lttng_domain *domain,
			  const char *name, uint64_t buffer_size)
{
	struct lttng_channel *chan;
	uint64_t subbuf = subbuf_size_of(buffer_size);
	int err;

	chan = lttng_channel_create(domain);
	if (!chan) {
		return -ENOMEM;
	}
	snprintf(chan->name, sizeof(chan->name), "%s", name);
	chan->attr.overwrite = 1;
	chan->attr.subbuf_size = subbuf;
	chan->attr.num_subbuf = 4;
	chan->attr.output = LTTNG_EVENT_MMAP;
	chan->attr.switch_timer_interval = 0;
	err = ctl_err(lttng_enable_channel(handle, chan), "enable channel");
	lttng_channel_destroy(chan);
	return err;
}

/*
 * The kernel channel, where lttng-modules answer: the scheduler's view and every syscall, of all
 * processes (a wait chain crosses into processes latsnap does not track), recorded as it happens:
 * what CTF tools read. The BPF side's latsnap_kernel stream stays (recorder/recorder.c): the
 * causes and wait chains are read from it.
 */
static int enable_kernel_channel(struct lttng_handle *handle, struct lttng_domain *domain,
				 uint64_t buffer_size)
{
	static const char *const sched_events[] = {
		"sched_switch",	      "sched_wakeup",	    "sched_waking",
		"sched_wakeup_new",   "sched_process_fork", "sched_process_exec",
		"sched_process_exit", "block_rq_issue",	    "block_rq_complete",
	};
	struct lttng_event ev;
	char filter[96];
	size_t i;
	int err, ret;

	err = enable_channel(handle, domain, KERNEL_CHANNEL_NAME, buffer_size);
	if (err) {
		return err;
	}
	for (i = 0; i < sizeof(sched_events) / sizeof(sched_events[0]); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = LTTNG_EVENT_TRACEPOINT;
		snprintf(ev.name, sizeof(ev.name), "%s", sched_events[i]);
		err = ctl_err(lttng_enable_event(handle, &ev, KERNEL_CHANNEL_NAME), ev.name);
		if (err) {
			return err;
		}
	}
	/*
	 * Every syscall but latsnap's own and its trace reader's: latsnap's work around a snapshot
	 * makes tens of thousands (one 600 ms outlier under QEMU: 62,000 of the snapshot's 74,000
	 * kernel events, lseek and read pairs most), which would overwrite the application's in
	 * the ring buffer. Their switches and wakeups stay: a CPU's timeline needs every one.
	 */
	memset(&ev, 0, sizeof(ev));
	ev.type = LTTNG_EVENT_SYSCALL;
	snprintf(ev.name, sizeof(ev.name), "*");
	snprintf(filter, sizeof(filter), "$ctx.vpid != %d && $ctx.procname != \"latsnap-trace-r*\"",
		 (int)getpid());
	ret = lttng_enable_event_with_filter(handle, &ev, KERNEL_CHANNEL_NAME, filter);
	if (ret < 0) {
		ls_verbose("record: LTTng: syscalls filtered by %s: %s; enabled without it", filter,
			   lttng_strerror(ret));
		ret = lttng_enable_event(handle, &ev, KERNEL_CHANNEL_NAME);
	}
	err = ctl_err(ret, "syscalls");
	if (err) {
		return err;
	}
	return add_contexts(handle, KERNEL_CHANNEL_NAME);
}

/*
 * open_replay - replay session @k: snapshot mode, per-PID buffers (each latsnap-replay's start
 * when it registers, and go with it), latsnap's own events, no process tracked yet.
 */
static int open_replay(struct session *s, int k, const struct session_opts *opts)
{
	struct lttng_domain ust = { .type = LTTNG_DOMAIN_UST, .buf_type = LTTNG_BUFFER_PER_PID };
	struct lttng_process_attr_tracker_handle *tracker = NULL;
	struct lttng_session_descriptor *desc = NULL;
	struct lttng_handle *handle = NULL;
	const char *name = s->replay_name[k];
	enum lttng_error_code code;
	char base[sizeof(s->name)], filter[64];
	unsigned long long ns = own_pid_ns();
	struct lttng_event ev;
	int err = 0, i;

	/* Not from s->name straight into s: GCC's -Wrestrict sees the two in one object. */
	memcpy(base, s->name, sizeof(base));
	snprintf(s->replay_name[k], sizeof(s->replay_name[k]), "%s-r%d", base, k);
	desc = lttng_session_descriptor_snapshot_create(name);
	if (!desc) {
		err = -ENOMEM;
		goto out;
	}
	code = lttng_create_session_ext(desc);
	if (code != LTTNG_OK) {
		ls_err("record: LTTng: create session %s: %s", name, lttng_strerror(-code));
		err = -EIO;
		goto out;
	}
	s->nr_replay = k + 1;
	handle = lttng_create_handle(name, &ust);
	if (!handle) {
		err = -ENOMEM;
		goto out;
	}
	err = enable_channel(handle, &ust, CHANNEL_NAME, opts->buffer_size);
	if (!err) {
		err = add_contexts(handle, CHANNEL_NAME);
	}
	snprintf(filter, sizeof(filter), "$ctx.pid_ns == %llu", ns);
	for (i = 0; !err && i < opts->nr_replay_events; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = LTTNG_EVENT_TRACEPOINT;
		ev.loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
		snprintf(ev.name, sizeof(ev.name), "%s", opts->replay_events[i]);
		/*
		 * The tracker below goes by vpid: a process of a pid namespace of its own could
		 * have the helper's; the namespace tells them apart (own_filter()).
		 */
		if (ns) {
			err = ctl_err(lttng_enable_event_with_filter(handle, &ev, CHANNEL_NAME,
								     filter),
				      ev.name);
		} else {
			err = ctl_err(lttng_enable_event(handle, &ev, CHANNEL_NAME), ev.name);
		}
	}
	if (err) {
		goto out;
	}
	code = lttng_session_get_tracker_handle(name, LTTNG_DOMAIN_UST,
						LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID, &tracker);
	if (code != LTTNG_OK ||
	    lttng_process_attr_tracker_handle_set_tracking_policy(
		    tracker, LTTNG_TRACKING_POLICY_INCLUDE_SET) !=
		    LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK) {
		ls_err("record: LTTng: session %s: no process tracker: %s", name,
		       code != LTTNG_OK ? lttng_strerror(-code) : "policy refused");
		err = -EIO;
		goto out;
	}
	err = ctl_err(lttng_start_tracing(name), "start tracing");
out:
	lttng_process_attr_tracker_handle_destroy(tracker);
	if (handle) {
		lttng_destroy_handle(handle);
	}
	lttng_session_descriptor_destroy(desc);
	return err;
}

/**
 * session_replay_track - have replay session @k record from @pid (@on) or no longer (!@on)
 *
 * Return: 0, or a negative errno with why in @why.
 */
int session_replay_track(struct session *s, int k, pid_t pid, bool on, char *why,
			 size_t why_size)
{
	struct lttng_process_attr_tracker_handle *tracker = NULL;
	enum lttng_process_attr_tracker_handle_status status;
	enum lttng_error_code code;
	int err = 0;

	if (k < 0 || k >= s->nr_replay) {
		snprintf(why, why_size, "no replay session %d", k);
		return -EINVAL;
	}
	code = lttng_session_get_tracker_handle(s->replay_name[k], LTTNG_DOMAIN_UST,
						LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID, &tracker);
	if (code != LTTNG_OK) {
		snprintf(why, why_size, "LTTng: %s: tracker: %s", s->replay_name[k],
			 lttng_strerror(-code));
		return -EIO;
	}
	status = on ? lttng_process_attr_virtual_process_id_tracker_handle_add_pid(tracker, pid) :
		      lttng_process_attr_virtual_process_id_tracker_handle_remove_pid(tracker, pid);
	if (status != LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK) {
		snprintf(why, why_size, "LTTng: %s: cannot %s pid %d (status %d)",
			 s->replay_name[k], on ? "track" : "untrack", (int)pid, (int)status);
		err = -EIO;
	}
	lttng_process_attr_tracker_handle_destroy(tracker);
	return err;
}

/**
 * session_open - start a snapshot session for this latsnap instance, and a session daemon if
 * none answers.
 * @opts: buffer size and the applications' event patterns.
 *
 * Return: 0, or a negative errno after printing why.
 */
int session_open(struct session **sessionp, const struct session_opts *opts)
{
	struct lttng_session_descriptor *desc = NULL;
	struct lttng_domain ust = { .type = LTTNG_DOMAIN_UST, .buf_type = LTTNG_BUFFER_PER_UID };
	struct lttng_domain kernel = { .type = LTTNG_DOMAIN_KERNEL,
				       .buf_type = LTTNG_BUFFER_GLOBAL };
	struct lttng_event *tracepoints = NULL;
	char version[32];
	struct session *s;
	enum lttng_error_code code;
	int err = 0, i;

	*sessionp = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		return -ENOMEM;
	}
	if (lttng_session_daemon_alive() != 1) {
		err = start_sessiond(&s->sessiond);
		if (err) {
			goto out;
		}
	}
	snprintf(s->name, sizeof(s->name), "latsnap-%d-%ld", getpid(), (long)time(NULL));
	desc = lttng_session_descriptor_snapshot_create(s->name);
	if (!desc) {
		err = -ENOMEM;
		goto out;
	}
	code = lttng_create_session_ext(desc);
	if (code != LTTNG_OK) {
		ls_err("record: LTTng: create session %s: %s", s->name, lttng_strerror(-code));
		err = -EIO;
		goto out;
	}
	s->ust = lttng_create_handle(s->name, &ust);
	if (!s->ust) {
		err = -ENOMEM;
		goto out;
	}
	err = enable_channel(s->ust, &ust, CHANNEL_NAME, opts->buffer_size);
	if (err) {
		goto out;
	}
	s->subbuf_size = subbuf_size_of(opts->buffer_size);
	err = add_contexts(s->ust, CHANNEL_NAME);
	if (err) {
		goto out;
	}
	for (i = 0; i < opts->nr_ust_events; i++) {
		err = enable_ust_event(s->ust, opts->ust_events[i],
				       opts->nr_replay ? opts->replay_exclude : NULL);
		if (err) {
			goto out;
		}
	}

	/* The kernel tracer answers only where lttng-modules are loaded. */
	s->kernel = lttng_create_handle(s->name, &kernel);
	if (s->kernel && lttng_list_tracepoints(s->kernel, &tracepoints) < 0) {
		lttng_destroy_handle(s->kernel);
		s->kernel = NULL;
	}
	free(tracepoints);
	if (s->kernel) {
		err = enable_kernel_channel(s->kernel, &kernel, opts->buffer_size);
		if (err) {
			goto out;
		}
		ls_verbose("record: LTTng kernel tracer found (lttng-modules %s): kernel channel %s "
			   "enabled",
			   lttng_modules_version(version, sizeof(version)), KERNEL_CHANNEL_NAME);
	} else if (kernel_tracer_possible()) {
		/* A daemon that was running already, started with --no-kernel or not as root. */
		ls_verbose("record: lttng-modules are here, but the session daemon has no kernel "
			   "tracer (started with --no-kernel, or not as root?): user space only; the "
			   "BPF side still covers the kernel");
	} else {
		ls_verbose("record: no LTTng kernel tracer here (lttng-modules not loaded): "
			   "user space only; the BPF side still covers the kernel");
	}

	err = ctl_err(lttng_start_tracing(s->name), "start tracing");
	if (err) {
		goto out;
	}
	s->started = true;
	for (i = 0; i < opts->nr_replay && i < SESSION_MAX_REPLAY; i++) {
		err = open_replay(s, i, opts);
		if (err) {
			goto out;
		}
	}
	ls_verbose("record: LTTng snapshot session %s started (%llu bytes per CPU buffer)%s", s->name,
		   (unsigned long long)opts->buffer_size,
		   s->nr_replay ? ", and its replay sessions for the relay" : "");
out:
	lttng_session_descriptor_destroy(desc);
	if (err) {
		session_close(s);
		return err;
	}
	*sessionp = s;
	return 0;
}

/**
 * session_snapshot - write what the ring buffers hold into @dir (absolute; created by LTTng as
 * a subdirectory of it), after regenerating the statedump so that every process's mappings and
 * build-ids are in it even when the buffer wrapped.
 *
 * Return: 0, or a negative errno after printing why.
 */
int session_snapshot(struct session *s, const char *dir)
{
	struct lttng_snapshot_output *output;
	int ret, err = 0;

	ret = lttng_regenerate_statedump(s->name);
	if (ret < 0) {
		ls_verbose("record: LTTng: regenerate statedump: %s", lttng_strerror(ret));
	}
	output = lttng_snapshot_output_create();
	if (!output) {
		return -ENOMEM;
	}
	ret = lttng_snapshot_output_set_local_path(dir, output);
	if (ret == 0) {
		ret = lttng_snapshot_output_set_name("trace", output);
	}
	if (ret == 0) {
		ret = lttng_snapshot_record(s->name, output, 1);
	}
	if (ret < 0 && session_lost(s)) {
		/* The caller says so once; no line per snapshot. */
		err = -ENOTCONN;
	} else if (ret < 0) {
		ls_err("record: LTTng: snapshot into %s: %s", dir, lttng_strerror(ret));
		err = -EIO;
	}
	lttng_snapshot_output_destroy(output);
	return err;
}

/**
 * session_regenerate_metadata - have LTTng write the session's metadata again, whole and in order
 * (a snapshot's copy of it is then read from the start), for a snapshot whose trace could not
 * be read back.
 *
 * Return: 0, or -EIO after printing why (verbose).
 */
int session_regenerate_metadata(struct session *s)
{
	int ret = lttng_regenerate_metadata(s->name);

	if (ret < 0) {
		ls_verbose("record: LTTng: regenerate metadata: %s", lttng_strerror(ret));
		return -EIO;
	}
	return 0;
}

/*
 * LTTng's network URL of @url: net:// and net6:// as they are, tcp:// and tcp6:// (which
 * lttng-create(1) takes as the same) renamed, since the snapshot output wants a combined URL.
 * Returns false when @url is of none of these forms.
 */
static bool network_url(const char *url, char *buf, size_t size)
{
	static const struct {
		const char *from, *to;
	} schemes[] = { { "net://", "net://" },
			{ "net6://", "net6://" },
			{ "tcp://", "net://" },
			{ "tcp6://", "net6://" } };
	size_t i, len;

	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		len = strlen(schemes[i].from);
		if (!strncmp(url, schemes[i].from, len)) {
			snprintf(buf, size, "%s%s", schemes[i].to, url + len);
			return true;
		}
	}
	return false;
}

/**
 * session_is_network_url - whether @url names a relay daemon (net://, net6://, tcp://, tcp6://)
 * rather than a directory.
 */
bool session_is_network_url(const char *url)
{
	char buf[8];

	return network_url(url, buf, sizeof(buf));
}

/**
 * session_check_url - whether liblttng-ctl takes @url as a snapshot output; @why says why not.
 */
int session_check_url(const char *url, char *why, size_t why_size)
{
	struct lttng_snapshot_output *output;
	char net[1024];
	int ret;

	if (!network_url(url, net, sizeof(net))) {
		snprintf(why, why_size, "not a net://, net6://, tcp:// or tcp6:// URL");
		return -EINVAL;
	}
	output = lttng_snapshot_output_create();
	if (!output) {
		return -ENOMEM;
	}
	if (&lttng_opt_quiet && !ls_verbose_enabled) {
		lttng_opt_quiet = 1;
	}
	ret = lttng_snapshot_output_set_network_url(net, output);
	lttng_snapshot_output_destroy(output);
	if (ret < 0) {
		snprintf(why, why_size, "%s (expected net://HOST[:CTRL_PORT[:DATA_PORT]])",
			 lttng_strerror(ret));
		return -EINVAL;
	}
	return 0;
}

/**
 * session_snapshot_net - send what the ring buffers of the session (@k -1) or of replay session
 * @k hold to the lttng-relayd of @url, as snapshot @name under @path (lttng-relayd files it
 * under HOST/PATH/NAME-DATE-TIME-SEQ). Each call connects anew, so a relay that comes back
 * after a failure gets the next snapshot.
 *
 * Return: 0, or a negative errno with why in @why (nothing printed).
 */
int session_snapshot_net(struct session *s, int k, const char *url, const char *path,
			 const char *name, char *why, size_t why_size)
{
	struct lttng_snapshot_output *output;
	char net[1024], full[1400];
	int ret, err = 0;

	if (!network_url(url, net, sizeof(net))) {
		snprintf(why, why_size, "%s: not a network URL", url);
		return -EINVAL;
	}
	if (k >= s->nr_replay) {
		snprintf(why, why_size, "no replay session %d", k);
		return -EINVAL;
	}
	snprintf(full, sizeof(full), "%s%s%s", net,
		 net[0] && net[strlen(net) - 1] == '/' ? "" : "/", path);
	output = lttng_snapshot_output_create();
	if (!output) {
		snprintf(why, why_size, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = lttng_snapshot_output_set_network_url(full, output);
	if (ret == 0) {
		ret = lttng_snapshot_output_set_name(name, output);
	}
	if (ret == 0) {
		ret = lttng_snapshot_record(k < 0 ? s->name : s->replay_name[k], output, 1);
	}
	if (ret < 0) {
		snprintf(why, why_size, "LTTng: %s", lttng_strerror(ret));
		err = -EIO;
	}
	lttng_snapshot_output_destroy(output);
	return err;
}

/**
 * session_name - the session's name (the relay files its snapshots under it)
 */
const char *session_name(const struct session *s)
{
	return s->name;
}

/**
 * session_subbuf_size - bytes of a sub-buffer of the UST channel: no event may be larger.
 */
uint64_t session_subbuf_size(const struct session *s)
{
	return s->subbuf_size;
}

/**
 * session_lost - whether the session daemon holding the session is gone (killed, crashed). A
 * daemon latsnap started and that died is reaped here, so that its pid, free again, is never
 * signalled at close.
 */
bool session_lost(struct session *s)
{
	struct lttng_session *sessions = NULL;
	bool found = false;
	int n, i;

	if (s->sessiond > 0 && waitpid(s->sessiond, NULL, WNOHANG) == s->sessiond) {
		s->sessiond = 0;
		return true;
	}
	if (lttng_session_daemon_alive() != 1) {
		return true;
	}
	/* A daemon answers, but perhaps a new one without our session. */
	n = lttng_list_sessions(&sessions);
	for (i = 0; i < n; i++) {
		if (!strcmp(sessions[i].name, s->name)) {
			found = true;
		}
	}
	free(sessions);
	return n >= 0 && !found;
}

/**
 * session_set_lost - the daemon is gone: close without talking to it.
 */
void session_set_lost(struct session *s)
{
	s->lost = true;
}

/**
 * session_has_kernel - whether the session records the LTTng kernel tracer's channel.
 */
bool session_has_kernel(const struct session *s)
{
	return s && s->kernel;
}

/**
 * session_lost_packets - packets the UST channel lost so far, summed over its buffers.
 */
uint64_t session_lost_packets(struct session *s)
{
	struct lttng_channel *channels = NULL;
	uint64_t total = 0, lost;
	int n, i;

	n = lttng_list_channels(s->ust, &channels);
	for (i = 0; i < n; i++) {
		if (lttng_channel_get_lost_packet_count(&channels[i], &lost) == 0) {
			total += lost;
		}
	}
	free(channels);
	return total;
}

/*
 * stop_sessiond - stop the session daemon latsnap started, unless others use it now: a second
 * `latsnap record`, or a user's `lttng create`, finds it running and puts its session in it, and
 * killing it would end theirs (their snapshots lost). Then it is left running, as `lttng create`
 * leaves the daemon it spawns.
 */
static void stop_sessiond(struct session *s)
{
	struct lttng_session *sessions = NULL;
	int others = 0;

	if (waitpid(s->sessiond, NULL, WNOHANG) == s->sessiond) {
		return;
	}
	if (!s->lost) {
		others = lttng_list_sessions(&sessions);
		free(sessions);
	}
	if (others > 0) {
		ls_verbose("record: lttng-sessiond (pid %d), started by latsnap, left running: "
			   "%d session%s of others in it",
			   s->sessiond, others, others == 1 ? "" : "s");
		return;
	}
	kill(s->sessiond, SIGTERM);
	waitpid(s->sessiond, NULL, 0);
}

/**
 * session_close - destroy the session, and stop the session daemon if latsnap started it.
 * Safe on a partly opened session.
 */
void session_close(struct session *s)
{
	int i;

	if (!s) {
		return;
	}
	if (s->lost) {
		/* Nobody to talk to: liblttng-ctl would only wait for a daemon. */
	} else if (s->ust || s->started) {
		lttng_destroy_session(s->name);
	}
	for (i = 0; !s->lost && i < s->nr_replay; i++) {
		lttng_destroy_session(s->replay_name[i]);
	}
	if (s->ust) {
		lttng_destroy_handle(s->ust);
	}
	if (s->kernel) {
		lttng_destroy_handle(s->kernel);
	}
	if (s->sessiond > 0) {
		stop_sessiond(s);
	}
	free(s);
}
