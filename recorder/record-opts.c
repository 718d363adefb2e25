// SPDX-License-Identifier: GPL-2.0
/*
 * record-opts.c - `latsnap record`'s settings: the command line and the config file (the same
 * keys, the same parsers, one error line each) read into struct record_opts, --help, and the
 * few words that say the settings again.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/syscalls.h"
#include "lib/cgroup.h"
#include "lib/config.h"
#include "lib/duration.h"
#include "lib/options.h"
#include "lib/signame.h"
#include "lib/util.h"
#include "recorder/record-opts.h"
#include "recorder/session.h"

enum opt_id {
	OPT_THRESHOLD = 't',
	OPT_SLEEP = 's',
	OPT_OUTPUT = 'o',
	OPT_DURATION = 'd',
	OPT_CONFIG = 'c',
	OPT_PID = 'p',
	OPT_ALL = 'a',
	OPT_VERBOSE = 'v',
	OPT_HELP = 'h',
	OPT_NO_SNAPSHOT = 256,
	OPT_JSON,
	OPT_INCLUDE_IDLE,
	OPT_EXACT_START,
	OPT_RULES,
	OPT_IDLE_SYSCALLS,
	OPT_SIGNAL,
	OPT_NO_PRELOAD,
	OPT_POST,
	OPT_BUFFER_SIZE,
	OPT_UST_EVENTS,
	OPT_MAX_SNAPSHOTS,
	OPT_MAX_SIZE,
	OPT_MIN_INTERVAL,
	OPT_LOG_STACKS,
	OPT_STACK_LOG,
	OPT_CONTEXT,
	OPT_CONTEXT_FLOOR,
	OPT_KEEP_LOCAL,
	OPT_HANG,
	OPT_REQUEST,
	OPT_CGROUP,
	OPT_COMM,
	OPT_MAX_AGE,
	OPT_GO_WAITS,
	OPT_MAX_PER_MINUTE,
	OPT_MAX_USER_PER_MINUTE,
	OPT_REPEAT_INTERVAL,
	OPT_MAX_RATE,
	OPT_NO_FLOOD_GUARD,
};

/*
 * The one list of record's options: getopt_long()'s table, the short options, --help and the
 * config file's keys are all made from it, so that a new option is one entry here (and its
 * case in apply_option()). In --help's order.
 */
static const struct ls_option record_options[] = {
	{ "threshold", OPT_THRESHOLD, required_argument, 0, NULL, "DUR",
	  "a syscall this slow or slower is an outlier (default 50ms)" },
	{ "sleep-threshold", OPT_SLEEP, required_argument, 0, NULL, "DUR",
	  "an off-CPU interval outside syscalls this long is an outlier\n"
	  "(default: the threshold)" },
	{ "output", OPT_OUTPUT, required_argument, 0, NULL, "DIR|URL",
	  "where snapshots go (default ./latsnap-out); a URL\n"
	  "net://HOST[:CTRL_PORT[:DATA_PORT]] (or net6://, tcp://,\n"
	  "tcp6://) sends them to the lttng-relayd on HOST" },
	{ "keep-local", OPT_KEEP_LOCAL, required_argument, 0, NULL, "DIR",
	  "with -o URL: keep a local copy of each snapshot in DIR" },
	{ "no-snapshot", OPT_NO_SNAPSHOT, no_argument, 0, NULL, NULL,
	  "detect and report outliers only; no LTTng session" },
	{ "post", OPT_POST, required_argument, 0, NULL, "DUR",
	  "keep tracing this long after an outlier before the snapshot\n"
	  "(default 100ms)" },
	{ "buffer-size", OPT_BUFFER_SIZE, required_argument, 0, NULL, "BYTES",
	  "LTTng ring buffer per CPU, e.g. 4M (default 4M)" },
	{ "ust-events", OPT_UST_EVENTS, required_argument, 0, NULL, "PATTERN",
	  "the applications' tracepoints to record, e.g. 'myapp:*' or '*'\n"
	  "(default none: lttng-ust's statedump only); latsnap's own\n"
	  "events are taken from latsnap's processes alone" },
	{ "max-snapshots", OPT_MAX_SNAPSHOTS, required_argument, 0, NULL, "N",
	  "keep at most N snapshots in the output directory, earlier\n"
	  "runs' included (default no limit)" },
	{ "max-size", OPT_MAX_SIZE, required_argument, 0, NULL, "BYTES",
	  "keep at most BYTES of them on disk (default no limit)" },
	{ "max-age", OPT_MAX_AGE, required_argument, 0, NULL, "DUR",
	  "remove snapshots older than DUR, but the first and worst\n"
	  "of each cause (default no limit)" },
	{ "min-interval", OPT_MIN_INTERVAL, required_argument, 0, NULL, "DUR",
	  "at least DUR between two snapshots (default 0)" },
	{ "repeat-interval", OPT_REPEAT_INTERVAL, required_argument, 0,
	  "The flood guard (0 turns each limit off):", "DUR",
	  "the same process, cause and stacks snapshotted once starts\n"
	  "no other snapshot for DUR, unless twice as long (default 600s)" },
	{ "max-per-minute", OPT_MAX_PER_MINUTE, required_argument, 0, NULL, "N",
	  "snapshots in any minute, all users; the first of a cause\n"
	  "in that minute still gets one (default 6)" },
	{ "max-user-per-minute", OPT_MAX_USER_PER_MINUTE, required_argument, 0, NULL, "N",
	  "snapshots in any minute started by one user's outliers\n"
	  "(default 3)" },
	{ "max-rate", OPT_MAX_RATE, required_argument, 0, NULL, "N",
	  "outliers a second each process may send on average, twice\n"
	  "that at once, each user twice both; more are dropped in\n"
	  "the kernel and counted (default 100)" },
	{ "no-flood-guard", OPT_NO_FLOOD_GUARD, no_argument, 0, NULL, NULL,
	  "every outlier may start a snapshot (the three limits above\n"
	  "0; --max-rate stays)" },
	{ "context", OPT_CONTEXT, required_argument, 0, NULL, "LEVEL",
	  "the kernel's view in each snapshot: none, sched\n"
	  "(switches, wakeups, processes) or full (and syscalls,\n"
	  "block I/O, stacks; the wait chain needs it) (default full)" },
	{ "context-floor", OPT_CONTEXT_FLOOR, required_argument, 0, NULL, "DUR",
	  "syscalls shorter than DUR stay out of it (default 1ms)" },
	{ "json", OPT_JSON, no_argument, 0, NULL, NULL,
	  "one JSON object per outlier per line on stdout\n"
	  "(COMMAND's own stdout then goes to stderr)" },
	{ "include-idle", OPT_INCLUDE_IDLE, no_argument, 0, NULL, NULL,
	  "report waits for work too: the idle list and policy off" },
	{ "idle-syscalls", OPT_IDLE_SYSCALLS, required_argument, 0, NULL, "LIST",
	  "the idle list, comma-separated syscall names" },
	{ "go-waits", OPT_GO_WAITS, no_argument, 0, NULL, NULL,
	  "time Go programs' goroutine waits (uprobes: costly)" },
	{ "exact-start", OPT_EXACT_START, no_argument, 0, NULL, NULL,
	  "read the clock at every syscall's entry: exact starts and\n"
	  "on-CPU times for a few tens of ns per syscall (see COST)" },
	{ "duration", OPT_DURATION, required_argument, 0, NULL, "DUR",
	  "stop after DUR (COMMAND then gets SIGTERM)" },
	{ "request", OPT_REQUEST, required_argument, 0, NULL, "START[,END]",
	  "operations between two probes of the target are requests;\n"
	  "a slow one is an outlier of kind request, with its waits\n"
	  "(repeatable; usdt:PATH:PROVIDER:NAME, uprobe:PATH:SYMBOL,\n"
	  "uretprobe:PATH:SYMBOL; uprobe:PATH:SYMBOL alone: the\n"
	  "function, from entry to return); =argN or =ret after\n"
	  "each probe keys a request by an object (an event loop's\n"
	  "stream or connection), not its thread)" },
	{ "hang", OPT_HANG, required_argument, 0, NULL, "DUR|off",
	  "a thread waiting this long is reported while it still\n"
	  "waits, with who holds what it waits for; deadlocks named\n"
	  "(default 10 x the threshold, at least 1s)" },
	{ "pid", OPT_PID, required_argument, 0, NULL, "PID",
	  "track this process too (repeatable); the only way to\n"
	  "track LTTng's daemons or latsnap's helpers, otherwise\n"
	  "never tracked (see latsnap(1), WHAT IS NEVER TRACKED)" },
	{ "cgroup", OPT_CGROUP, required_argument, 0, NULL, "PATH",
	  "track the processes of this cgroup v2 directory and of its\n"
	  "descendants, moved in later too (repeatable, up to 8; PATH\n"
	  "absolute, or relative to the cgroup2 mount)" },
	{ "comm", OPT_COMM, required_argument, 0, NULL, "NAME",
	  "track the processes named NAME (at most 15 characters),\n"
	  "started or exec'd later too (repeatable, up to 8)" },
	{ "all", OPT_ALL, no_argument, 0, NULL, NULL, "track every user thread on the machine" },
	{ "signal", OPT_SIGNAL, required_argument, 0, NULL, "SIG",
	  "the signal COMMAND's preload library unwinds on: a number\n"
	  "or RTMIN+N, RTMAX-N, USR1, USR2 (default " LS_DEFAULT_SIGNAL_NAME ")" },
	{ "no-preload", OPT_NO_PRELOAD, no_argument, 0, NULL, NULL,
	  "start COMMAND without liblatsnap.so (frame-pointer stacks)" },
	{ "config", OPT_CONFIG, required_argument, LS_OPT_NO_KEY, NULL, "FILE",
	  "settings file of `key = value` lines (default " RECORD_DEFAULT_CONFIG ")" },
	{ "rules", OPT_RULES, required_argument, 0, NULL, "FILE",
	  "cause rules, replacing the built-in set" },
	{ "log-stacks", OPT_LOG_STACKS, required_argument, 0, NULL, "WHICH",
	  "log each distinct kernel stack the rules left\n"
	  "uncategorized, categorized, all, or none (default none)" },
	{ "stack-log", OPT_STACK_LOG, required_argument, 0, NULL, "FILE",
	  "append that log to FILE (default stderr)" },
	{ "verbose", OPT_VERBOSE, no_argument, 0, NULL, NULL,
	  "say more on stderr (libbpf diagnostics included)" },
	{ "help", OPT_HELP, no_argument, LS_OPT_NO_KEY, NULL, NULL, "show this help" },
};

#define NR_RECORD_OPTIONS (sizeof(record_options) / sizeof(record_options[0]))

static const char usage_head[] =
	"Usage: latsnap record [OPTIONS] [-- COMMAND [ARG...]]\n"
	"\n"
	"Report every syscall and off-CPU sleep of the tracked threads that lasts longer than a\n"
	"threshold, with its split into on-CPU, blocked and runqueue time, the kernel stacks where\n"
	"it waited and the thread that woke it.\n"
	"\n"
	"Which threads: COMMAND and its descendants, -p PID..., --cgroup PATH..., --comm NAME...\n"
	"(any of them matching); or -a, every thread; or, with none of these, every process that\n"
	"loaded the preload library (liblatsnap.so).\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"DUR is a number with a unit ns, us, ms or s (250us, 20ms, 1.5s); a bare number is ms.\n"
	"See latsnap(1).\n";

/* --help's column for an option's text. */
#define HELP_COLUMN 29

/* getopt_long()'s table and short options, made from record_options[]. */
static struct option long_options[NR_RECORD_OPTIONS + 1];
/* '+': stop at COMMAND, whose own options are its own. */
static char short_options[2 + 2 * NR_RECORD_OPTIONS];

static void print_usage(FILE *out)
{
	fputs(usage_head, out);
	ls_options_usage(out, record_options, NR_RECORD_OPTIONS, HELP_COLUMN);
	fputs(usage_tail, out);
}

static const char *option_name(int id)
{
	const struct ls_option *opt = ls_options_find(record_options, NR_RECORD_OPTIONS, id);

	return opt ? opt->name : "?";
}

/* Where a bad value came from, for the error line: "record: " or "FILE:LINE: ". */
struct origin {
	const char *file;
	int line;
};

static void bad_value(const struct origin *where, int id, const char *value, const char *why)
{
	if (where->file) {
		ls_err("%s:%d: bad %s '%s': %s", where->file, where->line, option_name(id), value,
		       why);
	} else {
		ls_err("record: bad --%s '%s': %s", option_name(id), value, why);
	}
}

/* Bytes: a number, optionally followed by K, M or G (powers of 1024), "B" or "iB" allowed. */
static int parse_size(const char *text, uint64_t *bytes)
{
	uint64_t mult = 1;
	char *end;
	unsigned long long n;

	if (!text || *text < '0' || *text > '9') {
		return -EINVAL;
	}
	errno = 0;
	n = strtoull(text, &end, 10);
	if (errno) {
		return -EINVAL;
	}
	switch (*end) {
	case 'K':
	case 'k':
		mult = 1ull << 10;
		end++;
		break;
	case 'M':
	case 'm':
		mult = 1ull << 20;
		end++;
		break;
	case 'G':
	case 'g':
		mult = 1ull << 30;
		end++;
		break;
	default:
		break;
	}
	if (mult > 1 && *end == 'i') {
		end++;
	}
	if (*end == 'B') {
		end++;
	}
	if (*end || n > UINT64_MAX / mult) {
		return -EINVAL;
	}
	*bytes = n * mult;
	return 0;
}

static const char duration_why[] = "expected a number with a unit ns, us, ms or s (e.g. 20ms)";

/*
 * Config values are only valid during the callback: keep a copy of one that is stored.
 * Returns 0, or -EINVAL after saying why.
 */
static int keep_value(struct record_opts *opts, const struct origin *where, int id,
		      const char **value)
{
	char *copy;

	if (opts->nr_owned >= (int)(sizeof(opts->owned) / sizeof(opts->owned[0]))) {
		bad_value(where, id, *value, "set too many times");
		return -EINVAL;
	}
	copy = strdup(*value);
	if (!copy) {
		bad_value(where, id, *value, strerror(ENOMEM));
		return -EINVAL;
	}
	opts->owned[opts->nr_owned++] = copy;
	*value = copy;
	return 0;
}

/*
 * apply_option - set one option, from the command line (@value NULL for a flag) or a config
 * file (@value always given, "true"/"false" for flags).
 */
/* The on/off options: a flag on the command line, true or false in a config file. */
static int apply_flag(struct record_opts *opts, int id, const char *value,
		      const struct origin *where)
{
	bool flag = true;

	if (value && ls_parse_bool(value, &flag)) {
		bad_value(where, id, value, "expected true or false");
		return -EINVAL;
	}
	switch (id) {
	case OPT_NO_PRELOAD:
		opts->no_preload = flag;
		break;
	case OPT_NO_SNAPSHOT:
		opts->no_snapshot = flag;
		break;
	case OPT_JSON:
		opts->json = flag;
		break;
	case OPT_INCLUDE_IDLE:
		opts->include_idle = flag;
		break;
	case OPT_EXACT_START:
		opts->exact_start = flag;
		break;
	case OPT_GO_WAITS:
		opts->go_waits = flag;
		break;
	case OPT_NO_FLOOD_GUARD:
		/* Later limits on the command line or in the file still apply. */
		if (flag) {
			opts->rec.guard = (struct guard_opts){ 0 };
		}
		break;
	case OPT_ALL:
		opts->all = flag;
		break;
	default:
		opts->verbose = flag;
		break;
	}
	return 0;
}

/* The durations: the thresholds and the run's (more than zero), the windows (zero allowed). */
static int apply_duration(struct record_opts *opts, int id, const char *value,
			  const struct origin *where)
{
	bool positive = id == OPT_THRESHOLD || id == OPT_SLEEP || id == OPT_DURATION ||
			id == OPT_CONTEXT_FLOOR || id == OPT_HANG || id == OPT_MAX_AGE;
	/* Like every DUR, a repeat interval is a number with a unit; minutes are common here. */
	uint64_t ns;

	if (id == OPT_HANG && !strcmp(value, "off")) {
		opts->no_hang = true;
		return 0;
	}
	if (ls_parse_duration(value, &ns)) {
		bad_value(where, id, value, duration_why);
		return -EINVAL;
	}
	if (positive && !ns) {
		bad_value(where, id, value,
			  id == OPT_CONTEXT_FLOOR ? duration_why : "must be more than zero");
		return -EINVAL;
	}
	switch (id) {
	case OPT_POST:
		opts->rec.post_ns = ns;
		break;
	case OPT_MIN_INTERVAL:
		opts->rec.min_interval_ns = ns;
		break;
	case OPT_REPEAT_INTERVAL:
		opts->rec.guard.repeat_ns = ns;
		break;
	case OPT_CONTEXT_FLOOR:
		opts->context_floor_ns = ns;
		break;
	case OPT_THRESHOLD:
		opts->threshold_ns = ns;
		break;
	case OPT_SLEEP:
		opts->sleep_threshold_ns = ns;
		opts->sleep_threshold_set = true;
		break;
	case OPT_HANG:
		opts->hang_ns = ns;
		opts->no_hang = false;
		break;
	case OPT_MAX_AGE:
		opts->rec.max_age_ns = ns;
		break;
	default:
		opts->duration_ns = ns;
		break;
	}
	return 0;
}

/* The sizes and counts: --buffer-size, --max-size, --max-snapshots. */
static int apply_amount(struct record_opts *opts, int id, const char *value,
			const struct origin *where)
{
	uint64_t bytes;
	char *end;
	long n;

	if (id == OPT_MAX_PER_MINUTE || id == OPT_MAX_USER_PER_MINUTE || id == OPT_MAX_RATE) {
		errno = 0;
		n = strtol(value, &end, 10);
		if (errno || end == value || *end || n < 0 || n > 100000) {
			bad_value(where, id, value, "expected a count from 0 (no limit) to 100000");
			return -EINVAL;
		}
		if (id == OPT_MAX_PER_MINUTE) {
			opts->rec.guard.per_minute = (unsigned int)n;
		} else if (id == OPT_MAX_USER_PER_MINUTE) {
			opts->rec.guard.user_per_minute = (unsigned int)n;
		} else {
			opts->max_rate = (unsigned int)n;
		}
		return 0;
	}
	if (id == OPT_MAX_SNAPSHOTS) {
		errno = 0;
		n = strtol(value, &end, 10);
		if (errno || end == value || *end || n < 1 || n > 100000) {
			bad_value(where, id, value, "expected a count from 1 to 100000");
			return -EINVAL;
		}
		opts->rec.max_snapshots = (unsigned int)n;
		return 0;
	}
	if (parse_size(value, &bytes) || (id == OPT_BUFFER_SIZE && bytes < 16384)) {
		bad_value(where, id, value,
			  "expected bytes, optionally with K, M or G (at least 16K for a buffer)");
		return -EINVAL;
	}
	if (id == OPT_BUFFER_SIZE) {
		opts->rec.buffer_size = bytes;
	} else {
		opts->rec.max_size = bytes;
	}
	return 0;
}

/* The choices among names: --context, --log-stacks, --signal, --idle-syscalls. */
static int apply_choice(struct record_opts *opts, int id, const char *value,
			const struct origin *where)
{
	char bad[64], why[128];

	switch (id) {
	case OPT_CONTEXT:
		if (!strcmp(value, "none")) {
			opts->rec.context_level = LS_CTX_NONE;
		} else if (!strcmp(value, "sched")) {
			opts->rec.context_level = LS_CTX_SCHED;
		} else if (!strcmp(value, "full")) {
			opts->rec.context_level = LS_CTX_FULL;
		} else {
			bad_value(where, id, value, "expected none, sched or full");
			return -EINVAL;
		}
		break;
	case OPT_LOG_STACKS:
		if (stacklog_parse_mode(value, &opts->log_stacks)) {
			bad_value(where, id, value,
				  "expected none, uncategorized, categorized or all");
			return -EINVAL;
		}
		break;
	case OPT_SIGNAL:
		opts->signal = ls_parse_signal(value);
		if (opts->signal < 0) {
			bad_value(where, id, value,
				  "expected a signal number or RTMIN+N, RTMAX-N, USR1, USR2 that "
				  "programs can spare");
			return -EINVAL;
		}
		break;
	default:
		memset(opts->idle, 0, sizeof(opts->idle));
		if (syscall_parse_list(value, opts->idle, LS_MAX_SYSCALLS, bad, sizeof(bad))) {
			snprintf(why, sizeof(why), "unknown syscall '%s'", bad);
			bad_value(where, id, value, why);
			return -EINVAL;
		}
		break;
	}
	return 0;
}

/* --pid, repeatable: those on the command line replace those of the config file. */
static int apply_pid(struct record_opts *opts, int id, const char *value,
		     const struct origin *where)
{
	int pid;

	if (ls_parse_pid(value, &pid)) {
		bad_value(where, id, value, "expected a process id");
		return -EINVAL;
	}
	if (!opts->reloading && kill(pid, 0) && errno == ESRCH) {
		bad_value(where, id, value, "no such process");
		return -EINVAL;
	}
	if (!where->file && !opts->pids_from_cli) {
		opts->pids_from_cli = true;
		opts->nr_pids = 0;
	}
	if (opts->nr_pids >= RECORD_MAX_PIDS) {
		bad_value(where, id, value, "too many pids (at most 64)");
		return -EINVAL;
	}
	opts->pids[opts->nr_pids++] = pid;
	return 0;
}

/*
 * --cgroup, repeatable: those on the command line replace those of the config file. Resolved
 * here, to the id BPF compares, so that a missing directory is a usage error naming it.
 */
static int apply_cgroup(struct record_opts *opts, int id, const char *value,
			const struct origin *where)
{
	char root[1024], v1[1024], full[2200], why[3400];
	uint64_t cgid;
	int err;

	err = ls_cgroup2_mount(NULL, root, sizeof(root), v1, sizeof(v1));
	if (err == -ENODEV) {
		if (*v1) {
			snprintf(why, sizeof(why),
				 "--cgroup needs cgroup v2; only cgroup v1 is mounted here (%s)",
				 v1);
		} else {
			snprintf(why, sizeof(why),
				 "--cgroup needs cgroup v2; no cgroup2 hierarchy is mounted here");
		}
		bad_value(where, id, value, why);
		return -EINVAL;
	}
	if (err) {
		snprintf(why, sizeof(why), "/proc/self/mountinfo: %s", strerror(-err));
		bad_value(where, id, value, why);
		return -EINVAL;
	}
	err = *value ? ls_cgroup_resolve(value, root, full, sizeof(full), &cgid) : -ENOENT;
	if (err) {
		if (err == -ENOENT) {
			snprintf(why, sizeof(why), "no such cgroup: %s", full);
		} else if (err == -EXDEV) {
			snprintf(why, sizeof(why),
				 "%s is not a cgroup v2 directory (cgroup2 is mounted at %s)", full,
				 root);
		} else {
			snprintf(why, sizeof(why), "%s: %s", full, strerror(-err));
		}
		bad_value(where, id, value, why);
		return -EINVAL;
	}
	if (!where->file && !opts->cgroups_from_cli) {
		opts->cgroups_from_cli = true;
		opts->nr_cgroups = 0;
	}
	if (opts->nr_cgroups >= LS_MAX_CGROUPS) {
		bad_value(where, id, value, "too many cgroups (at most 8)");
		return -EINVAL;
	}
	opts->cgroup_ids[opts->nr_cgroups++] = cgid;
	return 0;
}

/* --comm, repeatable: those on the command line replace those of the config file. */
static int apply_comm(struct record_opts *opts, int id, const char *value,
		      const struct origin *where)
{
	size_t n = strlen(value);

	/* A longer name could never match: the kernel keeps the first 15 bytes of a name. */
	if (!n || n >= LS_TASK_COMM_LEN) {
		bad_value(where, id, value,
			  "expected a process name of 1 to 15 characters (the kernel keeps 15)");
		return -EINVAL;
	}
	if (!where->file && !opts->comms_from_cli) {
		opts->comms_from_cli = true;
		opts->nr_comms = 0;
	}
	if (opts->nr_comms >= LS_MAX_COMMS) {
		bad_value(where, id, value, "too many names (at most 8)");
		return -EINVAL;
	}
	memset(&opts->comms[opts->nr_comms], 0, sizeof(opts->comms[0]));
	memcpy(opts->comms[opts->nr_comms].name, value, n);
	opts->nr_comms++;
	return 0;
}

/* --request, repeatable: those on the command line replace those of the config file. */
static int apply_request(struct record_opts *opts, int id, const char *value,
			 const struct origin *where)
{
	char why[256] = "";
	int err;

	if (!where->file && !opts->requests_from_cli) {
		opts->requests_from_cli = true;
		while (opts->nr_requests > 0) {
			request_spec_free(&opts->requests[--opts->nr_requests]);
		}
	}
	if (opts->nr_requests >= LS_MAX_REQUESTS) {
		bad_value(where, id, value, "too many probe pairs (at most 16)");
		return -EINVAL;
	}
	err = request_parse(value, &opts->requests[opts->nr_requests], why, sizeof(why));
	if (err) {
		bad_value(where, id, value, err == -ENOMEM ? strerror(ENOMEM) : why);
		return -EINVAL;
	}
	opts->nr_requests++;
	return 0;
}

/* --ust-events, repeatable: one tracepoint name pattern each. */
static int apply_ust_events(struct record_opts *opts, int id, const char *value,
			    const struct origin *where)
{
	if (!*value || strlen(value) > 200 || strpbrk(value, " \t,")) {
		bad_value(where, id, value, "expected one tracepoint name pattern, e.g. 'myapp:*'");
		return -EINVAL;
	}
	if (opts->rec.nr_ust_events >= RECORDER_MAX_EVENTS) {
		bad_value(where, id, value, "too many patterns (at most 8)");
		return -EINVAL;
	}
	if (where->file && keep_value(opts, where, id, &value)) {
		return -EINVAL;
	}
	opts->rec.ust_events[opts->rec.nr_ust_events++] = value;
	return 0;
}

/* The files: -o (a directory or a relay's URL), --keep-local, --rules, -c, --stack-log. */
static int apply_path(struct record_opts *opts, int id, const char *value,
		      const struct origin *where)
{
	bool url = session_is_network_url(value);
	char why[256];

	if (id != OPT_STACK_LOG && !*value) {
		bad_value(where, id, value, "expected a file name");
		return -EINVAL;
	}
	if (id == OPT_OUTPUT && url && session_check_url(value, why, sizeof(why))) {
		bad_value(where, id, value, why);
		return -EINVAL;
	}
	if (id == OPT_KEEP_LOCAL && url) {
		bad_value(where, id, value, "expected a directory, not a URL");
		return -EINVAL;
	}
	if (where->file && keep_value(opts, where, id, &value)) {
		return -EINVAL;
	}
	switch (id) {
	case OPT_OUTPUT:
		opts->relay = url ? value : NULL;
		if (!url) {
			opts->output = value;
		}
		break;
	case OPT_KEEP_LOCAL:
		opts->keep_local = value;
		break;
	case OPT_RULES:
		opts->rules = value;
		break;
	case OPT_CONFIG:
		opts->config = value;
		break;
	default:
		opts->stack_log = value;
		break;
	}
	return 0;
}

/*
 * apply_option - set option @id from @value, given on the command line or in a config file
 * (@where): each kind of value has its parser and its one error line.
 */
static int apply_option(struct record_opts *opts, int id, const char *value,
			const struct origin *where)
{
	switch (id) {
	case OPT_NO_SNAPSHOT:
	case OPT_JSON:
	case OPT_INCLUDE_IDLE:
	case OPT_EXACT_START:
	case OPT_GO_WAITS:
	case OPT_NO_FLOOD_GUARD:
	case OPT_ALL:
	case OPT_VERBOSE:
	case OPT_NO_PRELOAD:
		return apply_flag(opts, id, value, where);
	case OPT_POST:
	case OPT_MIN_INTERVAL:
	case OPT_REPEAT_INTERVAL:
	case OPT_CONTEXT_FLOOR:
	case OPT_THRESHOLD:
	case OPT_SLEEP:
	case OPT_DURATION:
	case OPT_HANG:
	case OPT_MAX_AGE:
		return apply_duration(opts, id, value, where);
	case OPT_BUFFER_SIZE:
	case OPT_MAX_SIZE:
	case OPT_MAX_SNAPSHOTS:
	case OPT_MAX_PER_MINUTE:
	case OPT_MAX_USER_PER_MINUTE:
	case OPT_MAX_RATE:
		return apply_amount(opts, id, value, where);
	case OPT_CONTEXT:
	case OPT_LOG_STACKS:
	case OPT_SIGNAL:
	case OPT_IDLE_SYSCALLS:
		return apply_choice(opts, id, value, where);
	case OPT_PID:
		return apply_pid(opts, id, value, where);
	case OPT_CGROUP:
		return apply_cgroup(opts, id, value, where);
	case OPT_COMM:
		return apply_comm(opts, id, value, where);
	case OPT_UST_EVENTS:
		return apply_ust_events(opts, id, value, where);
	case OPT_REQUEST:
		return apply_request(opts, id, value, where);
	case OPT_OUTPUT:
	case OPT_KEEP_LOCAL:
	case OPT_RULES:
	case OPT_CONFIG:
	case OPT_STACK_LOG:
		return apply_path(opts, id, value, where);
	default:
		return -EINVAL;
	}
}

static int config_line(const char *key, const char *value, const char *file, int line, void *ctx)
{
	struct origin where = { .file = file, .line = line };
	size_t i;

	for (i = 0; i < NR_RECORD_OPTIONS; i++) {
		if (!(record_options[i].flags & LS_OPT_NO_KEY) &&
		    !strcmp(record_options[i].name, key)) {
			return apply_option(ctx, record_options[i].id, value, &where);
		}
	}
	ls_err("%s:%d: unknown key '%s'", file, line, key);
	return -EINVAL;
}

/* Apply argv to @opts; returns 1 after --help, negative on a usage error. */
static int parse_args(struct record_opts *opts, int argc, char **argv)
{
	static const struct origin cli = { 0 };
	int id, err;

	ls_options_getopt(record_options, NR_RECORD_OPTIONS, "+", long_options, short_options);
	optind = 0;
	opterr = 0;
	while ((id = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		switch (id) {
		case OPT_HELP:
			print_usage(stdout);
			return 1;
		case '?':
			if (optopt && optopt < 256) {
				ls_err("record: unknown option '-%c' (see latsnap record --help)",
				       optopt);
			} else {
				ls_err("record: unknown option '%s' (see latsnap record --help)",
				       argv[optind - 1]);
			}
			return -EINVAL;
		case ':':
			ls_err("record: option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		default:
			err = apply_option(opts, id, optarg, &cli);
			if (err) {
				return err;
			}
		}
	}
	opts->command = optind < argc ? argv + optind : NULL;
	return 0;
}

static void set_defaults(struct record_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->threshold_ns = 50000000;
	opts->output = "./latsnap-out";
	opts->rec.post_ns = 100000000;
	/*
	 * The flood guard's defaults: an idle service writes nothing, a storm of one wait site
	 * writes one snapshot in ten minutes, and an incident's different outliers still get
	 * theirs (each new cause in a minute passes the budget).
	 */
	opts->rec.guard.repeat_ns = 600000000000ULL;
	opts->rec.guard.per_minute = 6;
	opts->rec.guard.user_per_minute = 3;
	opts->max_rate = 100;
	opts->rec.buffer_size = 4 << 20;
	opts->rec.context_level = LS_CTX_FULL;
	opts->context_floor_ns = 1000000;
	for (const char *const *name = syscall_default_idle; *name; name++) {
		int nr = syscall_number(*name);

		if (nr >= 0 && nr < LS_MAX_SYSCALLS) {
			opts->idle[nr] = 1;
		}
	}
}

/**
 * record_opts_load() - defaults, then the config file, then the command line, which wins.
 * Return: 0 to run, 1 when --help was printed, negative on a usage error (already printed).
 */
int record_opts_load(struct record_opts *opts, int argc, char **argv, bool reloading)
{
	struct record_opts first;
	const char *config;
	int err;

	/* Freeable whatever happens below (a reload frees it after a failed first pass too). */
	memset(opts, 0, sizeof(*opts));
	/* A first pass finds -c and rejects bad flags before any file is read. */
	set_defaults(&first);
	first.reloading = reloading;
	err = parse_args(&first, argc, argv);
	while (first.nr_requests > 0) {
		request_spec_free(&first.requests[--first.nr_requests]);
	}
	if (err) {
		return err;
	}
	config = first.config;

	set_defaults(opts);
	opts->reloading = reloading;
	if (config || access(RECORD_DEFAULT_CONFIG, F_OK) == 0) {
		const char *path = config ? config : RECORD_DEFAULT_CONFIG;

		err = ls_config_load(path, config_line, opts);
		if (err == -ENOENT || err == -EACCES || err == -EISDIR || err == -ELOOP) {
			ls_err("record: %s: %s", path, strerror(-err));
			return -EINVAL;
		}
		if (err) {
			return -EINVAL;
		}
	}
	err = parse_args(opts, argc, argv);
	if (err) {
		return err;
	}
	if (!opts->sleep_threshold_set) {
		opts->sleep_threshold_ns = opts->threshold_ns;
	}
	if (!opts->hang_ns) {
		opts->hang_ns = 10 * opts->threshold_ns > 1000000000 ? 10 * opts->threshold_ns :
								       1000000000;
	}
	if (opts->keep_local && !opts->relay) {
		ls_err("record: --keep-local goes with -o net://HOST (a relay daemon); without "
		       "one, -o DIR is the local copy");
		return -EINVAL;
	}
	if (opts->all && (opts->nr_pids || opts->command || opts->nr_cgroups || opts->nr_comms)) {
		ls_err("record: --all tracks every thread: it goes with none of --pid, --cgroup, "
		       "--comm and COMMAND");
		return -EINVAL;
	}
	return 0;
}

/**
 * record_opts_free() - free the copies of config values and the request probes of @opts.
 */
void record_opts_free(struct record_opts *opts)
{
	int i;

	for (i = 0; i < opts->nr_owned; i++) {
		free(opts->owned[i]);
	}
	opts->nr_owned = 0;
	while (opts->nr_requests > 0) {
		request_spec_free(&opts->requests[--opts->nr_requests]);
	}
}

/**
 * record_appendf() - append to the string at @buf (@size bytes), cut short if it does not fit.
 */
void record_appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= size) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

/**
 * record_opts_describe_targets() - what is tracked, in a few words, for status.json and the
 * service manager.
 */
void record_opts_describe_targets(const struct record_opts *opts, char *buf, size_t size)
{
	int i;

	buf[0] = '\0';
	if (opts->all) {
		record_appendf(buf, size, "every thread");
	}
	if (opts->command) {
		record_appendf(buf, size, "%s", opts->command[0]);
	}
	for (i = 0; i < opts->nr_pids; i++) {
		if (!i) {
			record_appendf(buf, size, "%spid ", *buf ? ", " : "");
		}
		record_appendf(buf, size, "%s%d", i ? "," : "", opts->pids[i]);
	}
	for (i = 0; i < opts->nr_comms; i++) {
		if (!i) {
			record_appendf(buf, size, "%scomm ", *buf ? ", " : "");
		}
		record_appendf(buf, size, "%s%.*s", i ? "," : "", LS_TASK_COMM_LEN,
			       opts->comms[i].name);
	}
	if (opts->nr_cgroups) {
		record_appendf(buf, size, "%s%d cgroup%s", *buf ? ", " : "", opts->nr_cgroups,
			       opts->nr_cgroups > 1 ? "s" : "");
	}
	if (!*buf) {
		record_appendf(buf, size, "processes with the preload library");
	}
}

/**
 * record_opts_format_duration() - a duration as the options write it: the largest unit that
 * keeps it whole (50ms, 1500us).
 */
void record_opts_format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns && ns % 1000000000ull == 0) {
		snprintf(buf, size, "%" PRIu64 "s", ns / UINT64_C(1000000000));
	} else if (ns && ns % 1000000ull == 0) {
		snprintf(buf, size, "%" PRIu64 "ms", ns / UINT64_C(1000000));
	} else if (ns && ns % 1000ull == 0) {
		snprintf(buf, size, "%" PRIu64 "us", ns / UINT64_C(1000));
	} else {
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	}
}
