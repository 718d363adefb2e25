// SPDX-License-Identifier: GPL-2.0
/*
 * record.c - `latsnap record`: options, the target, and the loop that reports outliers.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <systemd/sd-daemon.h>

#include "recorder/command.h"
#include "lib/cgroup.h"
#include "lib/config.h"
#include "lib/demangle.h"
#include "lib/duration.h"
#include "lib/outlier.h"
#include "recorder/record.h"
#include "recorder/recorder.h"
#include "classify/idle.h"
#include "classify/rules.h"
#include "recorder/session.h"
#include "lib/signame.h"
#include "recorder/stacklog.h"
#include "recorder/stall.h"
#include "recorder/status.h"
#include "classify/syscalls.h"
#include "tracker/request.h"
#include "tracker/tracker.h"
#include "lib/util.h"

#define DEFAULT_CONFIG "/etc/latsnap.conf"
#define MAX_PIDS 64
/* status.json is rewritten this often (and at each snapshot); the health line, this often. */
#define STATUS_PERIOD_NS (10 * 1000000000ull)
#define HEALTH_PERIOD_NS (600 * 1000000000ull)

struct record_opts {
	uint64_t threshold_ns;
	uint64_t sleep_threshold_ns;
	bool sleep_threshold_set;
	const char *output;
	const char *relay; /* -o net://...: the lttng-relayd that gets the snapshots */
	const char *keep_local; /* --keep-local DIR: and a local copy there */
	bool no_snapshot;
	bool json;
	bool include_idle;
	bool go_waits; /* --go-waits: goroutine waits, through uprobes in Go programs */
	uint64_t duration_ns;
	uint64_t hang_ns; /* 0: the default, from the threshold */
	struct request_spec requests[LS_MAX_REQUESTS];
	int nr_requests;
	bool requests_from_cli;
	bool no_hang;
	const char *config;
	const char *rules;
	bool verbose;
	bool all;
	int pids[MAX_PIDS];
	int nr_pids;
	bool pids_from_cli;
	uint64_t cgroup_ids[LS_MAX_CGROUPS]; /* --cgroup, resolved */
	int nr_cgroups;
	bool cgroups_from_cli;
	struct ls_comm comms[LS_MAX_COMMS]; /* --comm */
	int nr_comms;
	bool comms_from_cli;
	unsigned char idle[LS_MAX_SYSCALLS];
	char **command;
	int signal; /* asked of the preload library in COMMAND */
	const char *signal_name;
	bool no_preload;
	enum stacklog_mode log_stacks;
	uint64_t context_floor_ns;
	const char *stack_log; /* NULL: stderr */
	struct recorder_opts rec;
	/* Config values are only valid during the callback: keep copies. */
	char *owned[16];
	int nr_owned;
};

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
};

static const struct option long_options[] = {
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "sleep-threshold", required_argument, NULL, OPT_SLEEP },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "keep-local", required_argument, NULL, OPT_KEEP_LOCAL },
	{ "no-snapshot", no_argument, NULL, OPT_NO_SNAPSHOT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "include-idle", no_argument, NULL, OPT_INCLUDE_IDLE },
	{ "go-waits", no_argument, NULL, OPT_GO_WAITS },
	{ "idle-syscalls", required_argument, NULL, OPT_IDLE_SYSCALLS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "hang", required_argument, NULL, OPT_HANG },
	{ "request", required_argument, NULL, OPT_REQUEST },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "log-stacks", required_argument, NULL, OPT_LOG_STACKS },
	{ "context", required_argument, NULL, OPT_CONTEXT },
	{ "context-floor", required_argument, NULL, OPT_CONTEXT_FLOOR },
	{ "stack-log", required_argument, NULL, OPT_STACK_LOG },
	{ "signal", required_argument, NULL, OPT_SIGNAL },
	{ "no-preload", no_argument, NULL, OPT_NO_PRELOAD },
	{ "post", required_argument, NULL, OPT_POST },
	{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
	{ "ust-events", required_argument, NULL, OPT_UST_EVENTS },
	{ "max-snapshots", required_argument, NULL, OPT_MAX_SNAPSHOTS },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "max-age", required_argument, NULL, OPT_MAX_AGE },
	{ "min-interval", required_argument, NULL, OPT_MIN_INTERVAL },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static const char short_options[] = "+t:s:o:d:c:p:avh";

static const char usage_text[] =
	"Usage: latsnap record [OPTIONS] [-- COMMAND [ARG...]]\n"
	"\n"
	"Report every syscall and off-CPU sleep of the tracked threads that lasts longer than a\n"
	"threshold, with its split into on-CPU, blocked and runqueue time, the kernel stacks where\n"
	"it waited and the thread that woke it.\n"
	"\n"
	"Which threads: COMMAND and its descendants, -p PID..., --cgroup PATH..., --comm NAME...\n"
	"(any of them matching); or -a, every thread; or, with none of these, every process that\n"
	"loaded the preload library (liblatsnap.so).\n"
	"\n"
	"  -t, --threshold DUR        a syscall this slow or slower is an outlier (default 50ms)\n"
	"  -s, --sleep-threshold DUR  an off-CPU interval outside syscalls this long is an outlier\n"
	"                             (default: the threshold)\n"
	"  -o, --output DIR|URL       where snapshots go (default ./latsnap-out); a URL\n"
	"                             net://HOST[:CTRL_PORT[:DATA_PORT]] (or net6://, tcp://,\n"
	"                             tcp6://) sends them to the lttng-relayd on HOST\n"
	"      --keep-local DIR       with -o URL: keep a local copy of each snapshot in DIR\n"
	"      --no-snapshot          detect and report outliers only; no LTTng session\n"
	"      --post DUR             keep tracing this long after an outlier before the snapshot\n"
	"                             (default 100ms)\n"
	"      --buffer-size BYTES    LTTng ring buffer per CPU, e.g. 4M (default 4M)\n"
	"      --ust-events PATTERN   the applications' tracepoints to record (default *)\n"
	"      --max-snapshots N      keep at most N snapshots in the output directory, earlier\n"
	"                             runs' included (default no limit)\n"
	"      --max-size BYTES       keep at most BYTES of them on disk (default no limit)\n"
	"      --max-age DUR          remove snapshots older than DUR, but the first and worst\n"
	"                             of each cause (default no limit)\n"
	"      --min-interval DUR     at least DUR between two snapshots (default 0)\n"
	"      --context LEVEL        the kernel's view in each snapshot: none, sched\n"
	"                             (switches, wakeups, processes) or full (and syscalls,\n"
	"                             block I/O, stacks; the wait chain needs it) (default full)\n"
	"      --context-floor DUR    syscalls shorter than DUR stay out of it (default 1ms)\n"
	"      --json                 one JSON object per outlier per line on stdout\n"
	"      --include-idle         report waits for work too: the idle list and policy off\n"
	"      --idle-syscalls LIST   the idle list, comma-separated syscall names\n"
	"      --go-waits             time Go programs' goroutine waits (uprobes: costly)\n"
	"  -d, --duration DUR         stop after DUR (COMMAND then gets SIGTERM)\n"
	"      --request START[,END]  operations between two probes of the target are requests;\n"
	"                             a slow one is an outlier of kind request, with its waits\n"
	"                             (repeatable; usdt:PATH:PROVIDER:NAME, uprobe:PATH:SYMBOL,\n"
	"                             uretprobe:PATH:SYMBOL; uprobe:PATH:SYMBOL alone: the\n"
	"                             function, from entry to return)\n"
	"      --hang DUR|off         a thread waiting this long is reported while it still\n"
	"                             waits, with who holds what it waits for; deadlocks named\n"
	"                             (default 10 x the threshold, at least 1s)\n"
	"  -p, --pid PID              track this process too (repeatable)\n"
	"      --cgroup PATH          track the processes of this cgroup v2 directory and of its\n"
	"                             descendants, moved in later too (repeatable, up to 8; PATH\n"
	"                             absolute, or relative to the cgroup2 mount)\n"
	"      --comm NAME            track the processes named NAME (at most 15 characters),\n"
	"                             started or exec'd later too (repeatable, up to 8)\n"
	"  -a, --all                  track every user thread on the machine\n"
	"      --signal SIG           the signal COMMAND's preload library unwinds on: a number\n"
	"                             or RTMIN+N, RTMAX-N, USR1, USR2 (default " LS_DEFAULT_SIGNAL_NAME
	")\n"
	"      --no-preload           start COMMAND without liblatsnap.so (frame-pointer stacks)\n"
	"  -c, --config FILE          settings file of `key = value` lines (default " DEFAULT_CONFIG
	")\n"
	"      --rules FILE           cause rules, replacing the built-in set\n"
	"      --log-stacks WHICH     log each distinct kernel stack the rules left\n"
	"                             uncategorized, categorized, all, or none (default none)\n"
	"      --stack-log FILE       append that log to FILE (default stderr)\n"
	"  -v, --verbose              say more on stderr (libbpf diagnostics included)\n"
	"  -h, --help                 show this help\n"
	"\n"
	"DUR is a number with a unit ns, us, ms or s (250us, 20ms, 1.5s); a bare number is ms.\n"
	"See latsnap(1).\n";

/* The last SIGINT or SIGTERM, and how many came: a second one while COMMAND ends lets it be. */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_count;
static volatile sig_atomic_t reload_signal;
/* A reload re-reads the options: a --pid that has exited since is no error then. */
static bool reloading;

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

static const char *option_name(int id)
{
	const struct option *opt;

	for (opt = long_options; opt->name; opt++) {
		if (opt->val == id) {
			return opt->name;
		}
	}
	return "?";
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
	case OPT_GO_WAITS:
		opts->go_waits = flag;
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
	if (!reloading && kill(pid, 0) && errno == ESRCH) {
		bad_value(where, id, value, "no such process");
		return -EINVAL;
	}
	if (!where->file && !opts->pids_from_cli) {
		opts->pids_from_cli = true;
		opts->nr_pids = 0;
	}
	if (opts->nr_pids >= MAX_PIDS) {
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
	case OPT_GO_WAITS:
	case OPT_ALL:
	case OPT_VERBOSE:
	case OPT_NO_PRELOAD:
		return apply_flag(opts, id, value, where);
	case OPT_POST:
	case OPT_MIN_INTERVAL:
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
	const struct option *opt;

	for (opt = long_options; opt->name; opt++) {
		if (!strcmp(opt->name, key)) {
			break;
		}
	}
	if (!opt->name || opt->val == OPT_HELP || opt->val == OPT_CONFIG) {
		ls_err("%s:%d: unknown key '%s'", file, line, key);
		return -EINVAL;
	}
	return apply_option(ctx, opt->val, value, &where);
}

/* Apply argv to @opts; returns 1 after --help, negative on a usage error. */
static int parse_args(struct record_opts *opts, int argc, char **argv)
{
	static const struct origin cli = { 0 };
	int id, err;

	optind = 0;
	opterr = 0;
	while ((id = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		switch (id) {
		case OPT_HELP:
			fputs(usage_text, stdout);
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

/*
 * load_options - defaults, then the config file, then the command line, which wins.
 * Return: 0 to run, 1 when --help was printed, negative on a usage error (already printed).
 */
static int load_options(struct record_opts *opts, int argc, char **argv)
{
	struct record_opts first;
	const char *config;
	int err;

	/* A first pass finds -c and rejects bad flags before any file is read. */
	set_defaults(&first);
	err = parse_args(&first, argc, argv);
	while (first.nr_requests > 0) {
		request_spec_free(&first.requests[--first.nr_requests]);
	}
	if (err) {
		return err;
	}
	config = first.config;

	set_defaults(opts);
	if (config || access(DEFAULT_CONFIG, F_OK) == 0) {
		const char *path = config ? config : DEFAULT_CONFIG;

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

struct record_state {
	struct record_opts *opts;
	int argc; /* record's arguments, read again at each reload */
	char **argv;
	char *rules_path; /* the rules file in use since a reload, or NULL */
	uint64_t start_realtime_ns;
	unsigned long long proc_start; /* /proc/self/stat's start time: the pid is not reused */
	uint64_t next_status_ns;
	uint64_t next_health_ns;
	uint64_t status_snapshots; /* the snapshot count status.json last said */
	struct rules *rules;
	struct recorder *recorder;
	struct stacklog *stacklog;
	struct stall_check *stalls;
	struct idle_policy *idle;
	uint64_t outliers;
};

/* The printed form of @outlier: NDJSON with --json (the edge where it becomes JSON), or text. */
static void print_outlier(const struct record_opts *opts, const struct outlier *outlier)
{
	struct json_object *obj;

	if (opts->json) {
		obj = outlier_to_json(outlier);
		if (obj) {
			fputs(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN), stdout);
			fputc('\n', stdout);
		}
		json_object_put(obj);
	} else {
		outlier_print_text(stdout, outlier);
	}
	fflush(stdout);
}

/* An outlier the tracker found, or the stall check (@cause: a deadlock, or NULL). */
static int take_outlier(struct outlier *outlier, const char *cause, void *ctx)
{
	struct record_state *st = ctx;
	struct rules_match match;
	const char *why;

	rules_classify(st->rules, outlier, &match);
	outlier_set_cause(outlier, cause ? cause : match.cause);
	if (!cause && idle_judge(st->idle, outlier, &why)) {
		ls_verbose("record: idle, not latency: %s[%d] %s %.1f ms: %s", outlier->comm,
			   outlier->tid, outlier->syscall ? outlier->syscall : "off-CPU",
			   (double)outlier->duration_ns / 1e6, why);
		outlier_free(outlier);
		return 0;
	}
	if (!cause && outlier->in_work) {
		ls_verbose("record: latency: %s[%d] %s %.1f ms: inside a unit of work", outlier->comm,
			   outlier->tid, outlier->syscall ? outlier->syscall : "off-CPU",
			   (double)outlier->duration_ns / 1e6);
	}
	st->outliers++;
	/* A request's waits (record --request) each get their own cause too. */
	rules_classify_waits(st->rules, outlier);
	stacklog_outlier(st->stacklog, outlier, &match);
	/* Printed before the recorder takes it: a snapshot adds to it later (chain, flags). */
	print_outlier(st->opts, outlier);
	if (st->recorder) {
		recorder_add(st->recorder, outlier);
	} else {
		outlier_free(outlier);
	}
	return 0;
}

static int on_outlier(struct outlier *outlier, void *ctx)
{
	return take_outlier(outlier, NULL, ctx);
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

/* How many idle waits the exit-time list shows without -v. */
#define IDLE_SHOWN 10

static int by_idle_total(const void *a, const void *b)
{
	const struct idle_entry *x = *(const struct idle_entry *const *)a;
	const struct idle_entry *y = *(const struct idle_entry *const *)b;

	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

/*
 * The idle waits, per thread and place, the longest in all first: not latency, not dropped
 * either. IDLE_SHOWN of them, unless -v; the rest are counted, and the line says how to see them.
 */
static void print_idle(const struct record_state *st)
{
	const struct idle_entry *entries, **order;
	char total[LS_DURATION_BUFSZ], *site;
	size_t n = idle_entries(st->idle, &entries), i, shown;
	uint64_t rest_count = 0, rest_ns = 0;

	order = n ? malloc(n * sizeof(*order)) : NULL;
	if (!order) {
		return;
	}
	for (i = 0; i < n; i++) {
		order[i] = &entries[i];
	}
	ls_sort(order, n, sizeof(*order), by_idle_total);
	fprintf(stderr, "latsnap: idle waits (waiting for work, not latency):\n");
	shown = ls_verbose_enabled || n <= IDLE_SHOWN ? n : IDLE_SHOWN;
	for (i = 0; i < shown; i++) {
		ls_format_duration(order[i]->total_ns, total, sizeof(total));
		site = ls_demangle_text(order[i]->site);
		fprintf(stderr, "latsnap:   %s[%d] %" PRIu64 " x %s, %s\n", order[i]->comm,
			order[i]->tid, order[i]->count, site ? site : order[i]->site, total);
		free(site);
	}
	for (; i < n; i++) {
		rest_count += order[i]->count;
		rest_ns += order[i]->total_ns;
	}
	if (shown < n) {
		ls_format_duration(rest_ns, total, sizeof(total));
		fprintf(stderr,
			"latsnap:   ... and %zu more threads and places (%" PRIu64
			" waits, %s in all, each shorter in all than those above): -v lists every one%s\n",
			n - shown, rest_count, total,
			st->recorder ? "; each snapshot's summary holds those of its time" : "");
	}
	free(order);
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
	fprintf(stderr,
		"latsnap: %" PRIu64 " outliers, %" PRIu64 " snapshots, %" PRIu64
		" skipped, %" PRIu64 " lost "
		"(ring buffer %" PRIu64 ", stacks unreadable %" PRIu64 ", stacks beyond the "
		"kept %" PRIu64 ", accumulator full %" PRIu64 ", runs skipped %" PRIu64 "), %" PRIu64
		" idle\n",
		st->outliers, r.snapshots, r.skipped,
		t.ringbuf_lost + t.accum_full + t.storage_failed + t.runs_skipped, t.ringbuf_lost,
		t.stack_failed, t.stacks_dropped, t.accum_full, t.runs_skipped, idle_count(st->idle));
	print_idle(st);
	ls_verbose("record: signals to the preload library: %" PRIu64 " sent, %" PRIu64
		   " not sent (blocked or pending), %" PRIu64 " refused by the kernel (busy), %" PRIu64
		   " owed at a switch and refused; %" PRIu64 " stacks reported back, %" PRIu64
		   " reports refused (not signalled)",
		   t.signals, t.signal_skipped, t.signal_busy, t.signal_refused, t.unwound,
		   t.unwound_refused);
	ls_verbose("record: user stacks walked at a switch-out from user code: %" PRIu64,
		   t.user_walks);
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
	opts->rec.output = opts->relay ? opts->keep_local : opts->output;
	opts->rec.relay = opts->relay;
	if (opts->rules) {
		if (rules_load(opts->rules, &st->rules)) {
			return 2;
		}
	} else {
		st->rules = rules_builtin();
	}
	if (idle_open(&st->idle, st->rules, !opts->include_idle)) {
		ls_err("record: out of memory");
		return 1;
	}
	opts->rec.idle = st->idle;
	if (stacklog_open(&st->stacklog, opts->log_stacks, opts->stack_log)) {
		return 1;
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
	topts->go_waits = opts->go_waits;
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

/* Append to the string at @buf (@size bytes), cut short if it does not fit. */
static void __attribute__((format(printf, 3, 4)))
append(char *buf, size_t size, const char *fmt, ...)
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

/* "pid 12, 34", or "no pid". */
static void say_pids(char *buf, size_t size, const int *pids, int nr)
{
	int i;

	if (!nr) {
		append(buf, size, "no pid");
	}
	for (i = 0; i < nr; i++) {
		append(buf, size, "%s%d", i ? ", " : "pid ", pids[i]);
	}
}

/* What is tracked, in a few words, for status.json and the service manager. */
static void describe_targets(const struct record_opts *opts, char *buf, size_t size)
{
	int i;

	buf[0] = '\0';
	if (opts->all) {
		append(buf, size, "every thread");
	}
	if (opts->command) {
		append(buf, size, "%s", opts->command[0]);
	}
	for (i = 0; i < opts->nr_pids; i++) {
		if (!i) {
			append(buf, size, "%spid ", *buf ? ", " : "");
		}
		append(buf, size, "%s%d", i ? "," : "", opts->pids[i]);
	}
	for (i = 0; i < opts->nr_comms; i++) {
		if (!i) {
			append(buf, size, "%scomm ", *buf ? ", " : "");
		}
		append(buf, size, "%s%.*s", i ? "," : "", LS_TASK_COMM_LEN, opts->comms[i].name);
	}
	if (opts->nr_cgroups) {
		append(buf, size, "%s%d cgroup%s", *buf ? ", " : "", opts->nr_cgroups,
		       opts->nr_cgroups > 1 ? "s" : "");
	}
	if (!*buf) {
		append(buf, size, "processes with the preload library");
	}
}

/* A duration as the options write it: the largest unit that keeps it whole (50ms, 1500us). */
static void short_duration(uint64_t ns, char *buf, size_t size)
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

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The numbers of the run so far, as status.json and the health line give them. */
static void gather_status(struct record_state *st, struct tracker *tr, struct status_info *si,
			  char *targets, size_t size)
{
	struct recorder_totals r = { 0 };
	struct tracker_totals t;

	memset(si, 0, sizeof(*si));
	si->proc_start = st->proc_start;
	status_self(si);
	st->proc_start = si->proc_start;
	si->running = !stop_signal;
	si->start_realtime_ns = st->start_realtime_ns;
	si->now_realtime_ns = realtime_ns();
	si->output = st->opts->relay ? st->opts->relay : st->opts->output;
	describe_targets(st->opts, targets, size);
	si->targets = targets;
	si->threshold_ns = st->opts->threshold_ns;
	si->sleep_threshold_ns = st->opts->sleep_threshold_ns;
	si->max_age_ns = st->opts->rec.max_age_ns;
	tracker_totals(tr, &t);
	if (st->recorder) {
		recorder_totals(st->recorder, &r);
	}
	si->outliers = st->outliers;
	si->idle = idle_count(st->idle);
	si->snapshots = r.snapshots;
	si->skipped = r.skipped;
	/* As the totals line counts them: outliers the kernel side could not hand over. */
	si->lost = t.ringbuf_lost + t.accum_full + t.storage_failed + t.runs_skipped;
	si->failed = r.failed;
	si->evicted = r.evicted;
	si->expired = r.expired;
	si->kept = r.kept;
	si->disk_bytes = r.kept_bytes;
	snprintf(si->last_id, sizeof(si->last_id), "%s", r.last_id);
	si->last_realtime_ns = r.last_realtime_ns;
}

/*
 * write_status - status.json in the output directory, for `latsnap status`; none without a
 * local output directory (--no-snapshot, or a relay without --keep-local).
 */
static void write_status(struct record_state *st, struct tracker *tr, bool running)
{
	struct status_info si;
	char targets[256];
	char *text;
	int err;

	if (!st->recorder) {
		return;
	}
	gather_status(st, tr, &si, targets, sizeof(targets));
	si.running = running;
	st->status_snapshots = si.snapshots;
	st->next_status_ns = ls_now_ns() + STATUS_PERIOD_NS;
	text = status_to_json(&si);
	if (!text) {
		return;
	}
	err = recorder_write_file(st->recorder, STATUS_FILE, text, strlen(text));
	if (err && err != -ENOENT) {
		ls_verbose("record: %s: %s", STATUS_FILE, strerror(-err));
	}
	free(text);
}

/* The journal's health line: the numbers of status.json, every HEALTH_PERIOD_NS. */
static void log_health(struct record_state *st, struct tracker *tr)
{
	struct status_info si;
	char targets[256], line[512];

	st->next_health_ns = ls_now_ns() + HEALTH_PERIOD_NS;
	gather_status(st, tr, &si, targets, sizeof(targets));
	status_health_line(&si, line, sizeof(line));
	fprintf(stderr, "latsnap: record: %s\n", line);
}

/* The service manager's view (sd_notify): a no-op without NOTIFY_SOCKET. */
static void notify_ready(const struct record_opts *opts)
{
	char targets[256], threshold[32];

	describe_targets(opts, targets, sizeof(targets));
	short_duration(opts->threshold_ns, threshold, sizeof(threshold));
	sd_notifyf(0, "READY=1\nSTATUS=tracking %s, threshold %s", targets, threshold);
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Say that @what changed in the config file but keeps its value until a restart. */
static void needs_restart(const char *path, const char *what, int *count)
{
	fprintf(stderr,
		"latsnap: record: %s: %s changed: needs a restart (the value in use stays)\n", path,
		what);
	(*count)++;
}

/*
 * check_fixed - the settings a reload cannot change (they shaped the BPF programs, the LTTng
 * session or the targets): each one that differs is said, and left as it is.
 */
static void check_fixed(const char *path, const struct record_opts *cur,
			const struct record_opts *next)
{
	int n = 0, i;
	bool same;

	if (!same_text(cur->output, next->output) || !same_text(cur->relay, next->relay) ||
	    !same_text(cur->keep_local, next->keep_local)) {
		needs_restart(path, "output (-o, --keep-local)", &n);
	}
	if (cur->rec.buffer_size != next->rec.buffer_size) {
		needs_restart(path, "buffer-size", &n);
	}
	if (cur->rec.context_level != next->rec.context_level) {
		needs_restart(path, "context", &n);
	}
	if (cur->context_floor_ns != next->context_floor_ns) {
		needs_restart(path, "context-floor", &n);
	}
	same = cur->rec.nr_ust_events == next->rec.nr_ust_events;
	for (i = 0; same && i < cur->rec.nr_ust_events; i++) {
		same = !strcmp(cur->rec.ust_events[i], next->rec.ust_events[i]);
	}
	if (!same) {
		needs_restart(path, "ust-events", &n);
	}
	same = cur->nr_requests == next->nr_requests;
	for (i = 0; same && i < cur->nr_requests; i++) {
		same = !strcmp(cur->requests[i].text, next->requests[i].text);
	}
	if (!same) {
		needs_restart(path, "request", &n);
	}
	if (cur->include_idle != next->include_idle ||
	    memcmp(cur->idle, next->idle, sizeof(cur->idle))) {
		needs_restart(path, "include-idle, idle-syscalls", &n);
	}
	if (cur->no_snapshot != next->no_snapshot || cur->json != next->json ||
	    cur->duration_ns != next->duration_ns || cur->no_hang != next->no_hang) {
		needs_restart(path, "no-snapshot, json, duration or hang off", &n);
	}
	if (cur->signal != next->signal || cur->no_preload != next->no_preload ||
	    cur->go_waits != next->go_waits) {
		needs_restart(path, "signal, no-preload, go-waits", &n);
	}
	if (cur->log_stacks != next->log_stacks || !same_text(cur->stack_log, next->stack_log)) {
		needs_restart(path, "log-stacks, stack-log", &n);
	}
}

static bool has_int(const int *v, int nr, int x)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (v[i] == x) {
			return true;
		}
	}
	return false;
}

/* The same pids, in whatever order (a config file reordered changes nothing). */
static bool same_pids(const struct record_opts *a, const struct record_opts *b)
{
	int i;

	for (i = 0; i < a->nr_pids; i++) {
		if (!has_int(b->pids, b->nr_pids, a->pids[i])) {
			return false;
		}
	}
	for (i = 0; i < b->nr_pids; i++) {
		if (!has_int(a->pids, a->nr_pids, b->pids[i])) {
			return false;
		}
	}
	return true;
}

static bool has_cgroup(const struct record_opts *opts, uint64_t id)
{
	int i;

	for (i = 0; i < opts->nr_cgroups; i++) {
		if (opts->cgroup_ids[i] == id) {
			return true;
		}
	}
	return false;
}

static bool same_cgroups(const struct record_opts *a, const struct record_opts *b)
{
	int i;

	for (i = 0; i < a->nr_cgroups; i++) {
		if (!has_cgroup(b, a->cgroup_ids[i])) {
			return false;
		}
	}
	for (i = 0; i < b->nr_cgroups; i++) {
		if (!has_cgroup(a, b->cgroup_ids[i])) {
			return false;
		}
	}
	return true;
}

static bool has_comm(const struct record_opts *opts, const struct ls_comm *comm)
{
	int i;

	for (i = 0; i < opts->nr_comms; i++) {
		if (!memcmp(&opts->comms[i], comm, sizeof(*comm))) {
			return true;
		}
	}
	return false;
}

static bool same_comms(const struct record_opts *a, const struct record_opts *b)
{
	int i;

	for (i = 0; i < a->nr_comms; i++) {
		if (!has_comm(b, &a->comms[i])) {
			return false;
		}
	}
	for (i = 0; i < b->nr_comms; i++) {
		if (!has_comm(a, &b->comms[i])) {
			return false;
		}
	}
	return true;
}

/* "cgroup -ID +ID" for the cgroups @a has and @b not (-), and those @b has and @a not (+). */
static void say_cgroups(char *buf, size_t size, const struct record_opts *a,
			const struct record_opts *b)
{
	const char *sep = "cgroup ";
	int i;

	for (i = 0; i < a->nr_cgroups; i++) {
		if (!has_cgroup(b, a->cgroup_ids[i])) {
			append(buf, size, "%s-%" PRIu64, sep, a->cgroup_ids[i]);
			sep = " ";
		}
	}
	for (i = 0; i < b->nr_cgroups; i++) {
		if (!has_cgroup(a, b->cgroup_ids[i])) {
			append(buf, size, "%s+%" PRIu64, sep, b->cgroup_ids[i]);
			sep = " ";
		}
	}
}

/* "comm -NAME +NAME", as say_cgroups(). */
static void say_comms(char *buf, size_t size, const struct record_opts *a,
		      const struct record_opts *b)
{
	const char *sep = "comm ";
	int i;

	for (i = 0; i < a->nr_comms; i++) {
		if (!has_comm(b, &a->comms[i])) {
			append(buf, size, "%s-%.*s", sep, LS_TASK_COMM_LEN, a->comms[i].name);
			sep = " ";
		}
	}
	for (i = 0; i < b->nr_comms; i++) {
		if (!has_comm(a, &b->comms[i])) {
			append(buf, size, "%s+%.*s", sep, LS_TASK_COMM_LEN, b->comms[i].name);
			sep = " ";
		}
	}
}

static void copy_cgroups(struct record_opts *to, const struct record_opts *from)
{
	memcpy(to->cgroup_ids, from->cgroup_ids, sizeof(to->cgroup_ids));
	to->nr_cgroups = from->nr_cgroups;
}

static void copy_comms(struct record_opts *to, const struct record_opts *from)
{
	memcpy(to->comms, from->comms, sizeof(to->comms));
	to->nr_comms = from->nr_comms;
}

/*
 * reload_targets - the targets of @next (-p, --cgroup, --comm) become those of the run, live
 * (tracker_set_targets()), and the change is said in @changes. What the programs were loaded
 * for cannot change without a restart, and keeps its value: -a, no target at all (the
 * processes that register through the preload library), and --cgroup or --comm in a run that
 * started without any. COMMAND stays tracked whatever the targets become.
 */
static void reload_targets(const char *path, struct record_opts *cur, struct record_opts *next,
			   struct tracker *tr, char *changes, size_t size)
{
	unsigned int live = tracker_live_targets(tr);
	char said[512] = "";
	int n = 0, i, err;

	if (cur->all == next->all && same_pids(cur, next) && same_cgroups(cur, next) &&
	    same_comms(cur, next)) {
		goto out;
	}
	if (!live) {
		needs_restart(path,
			      cur->all ? "the targets (--all in use)" :
					 "the targets (none in use: the processes with the "
					 "preload library)",
			      &n);
		goto out;
	}
	if (!same_cgroups(cur, next) && !(live & TRACKER_TARGET_CGROUPS)) {
		needs_restart(path, "cgroup (none at the start)", &n);
		copy_cgroups(next, cur);
	}
	if (!same_comms(cur, next) && !(live & TRACKER_TARGET_COMMS)) {
		needs_restart(path, "comm (none at the start)", &n);
		copy_comms(next, cur);
	}
	/* A pid new to the run must be there now (as at the start); one that exited since, not. */
	for (i = 0; i < next->nr_pids; i++) {
		if (!has_int(cur->pids, cur->nr_pids, next->pids[i]) && kill(next->pids[i], 0) &&
		    errno == ESRCH) {
			ls_err("record: %s: pid %d: no such process, not tracked", path,
			       next->pids[i]);
			next->pids[i--] = next->pids[--next->nr_pids];
		}
	}
	if (next->all ||
	    (!next->command && !next->nr_pids && !next->nr_cgroups && !next->nr_comms)) {
		needs_restart(path,
			      next->all ? "the targets (--all)" :
					  "the targets (none left: the processes with the "
					  "preload library)",
			      &n);
		goto out;
	}
	if (!same_pids(cur, next)) {
		say_pids(said, sizeof(said), cur->pids, cur->nr_pids);
		append(said, sizeof(said), " -> ");
		say_pids(said, sizeof(said), next->pids, next->nr_pids);
	}
	if (!same_comms(cur, next)) {
		append(said, sizeof(said), "%s", *said ? "; " : "");
		say_comms(said, sizeof(said), cur, next);
	}
	if (!same_cgroups(cur, next)) {
		append(said, sizeof(said), "%s", *said ? "; " : "");
		say_cgroups(said, sizeof(said), cur, next);
	}
	if (!*said) {
		goto out;
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
		if (!has_int(cur->pids, cur->nr_pids, next->pids[i])) {
			tracker_adopt_preloaded(tr, next->pids[i]);
		}
	}
	append(changes, size, "%stargets: %s", *changes ? ", " : "", said);
	memcpy(cur->pids, next->pids, sizeof(cur->pids));
	cur->nr_pids = next->nr_pids;
	copy_cgroups(cur, next);
	copy_comms(cur, next);
out:
	return;
}

/* "threshold 50ms -> 20ms" for each duration that changed, appended to @buf. */
static void say_change(char *buf, size_t size, const char *what, uint64_t from, uint64_t to)
{
	char a[32], b[32];
	size_t used = strlen(buf);

	if (from == to || used >= size) {
		return;
	}
	short_duration(from, a, sizeof(a));
	short_duration(to, b, sizeof(b));
	snprintf(buf + used, size - used, "%s%s %s -> %s", used ? ", " : "", what, from ? a : "off",
		 to ? b : "off");
}

static void free_opts(struct record_opts *opts)
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

/*
 * record_reload - SIGHUP: read the config file and the command line again, and apply what can
 * change without a reload of the BPF programs or a new LTTng session (the ring buffer keeps
 * what it holds): the thresholds, the rules, the retention limits, --hang, the targets (-p,
 * --cgroup, --comm: reload_targets()). A bad file leaves
 * every setting as it was; the run goes on either way.
 */
static void record_reload(struct record_state *st, struct tracker *tr)
{
	struct record_opts *cur = st->opts, next;
	const char *path = cur->config ? cur->config : DEFAULT_CONFIG;
	struct rules *rules = NULL;
	char changes[1024] = "", *rules_path = NULL;
	int err;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, ls_now_ns() / 1000);
	reloading = true;
	err = load_options(&next, st->argc, st->argv);
	reloading = false;
	if (err) {
		ls_err("record: reload of %s failed: the settings in use stay", path);
		goto out;
	}
	if (next.rules) {
		rules_path = strdup(next.rules);
		if (!rules_path || rules_load(next.rules, &rules)) {
			ls_err("record: reload of %s failed: rules %s: the settings in use stay",
			       path, next.rules);
			goto out;
		}
		snprintf(changes, sizeof(changes), "rules %s", next.rules);
	} else {
		rules = rules_builtin();
		if (!rules) {
			goto out;
		}
		if (cur->rules) {
			snprintf(changes, sizeof(changes), "built-in rules");
		}
	}
	check_fixed(path, cur, &next);
	say_change(changes, sizeof(changes), "threshold", cur->threshold_ns, next.threshold_ns);
	say_change(changes, sizeof(changes), "sleep threshold", cur->sleep_threshold_ns,
		   next.sleep_threshold_ns);
	say_change(changes, sizeof(changes), "hang", cur->hang_ns, next.hang_ns);
	say_change(changes, sizeof(changes), "max-age", cur->rec.max_age_ns, next.rec.max_age_ns);
	if (cur->rec.max_size != next.rec.max_size ||
	    cur->rec.max_snapshots != next.rec.max_snapshots) {
		snprintf(changes + strlen(changes), sizeof(changes) - strlen(changes),
			 "%smax-size %" PRIu64 ", max-snapshots %u", *changes ? ", " : "",
			 next.rec.max_size, next.rec.max_snapshots);
	}
	reload_targets(path, cur, &next, tr, changes, sizeof(changes));

	tracker_set_thresholds(tr, next.threshold_ns, next.sleep_threshold_ns);
	cur->threshold_ns = next.threshold_ns;
	cur->sleep_threshold_ns = next.sleep_threshold_ns;
	if (st->stalls) {
		stall_set_limits(st->stalls, next.hang_ns,
				 next.threshold_ns < next.sleep_threshold_ns ?
					 next.threshold_ns :
					 next.sleep_threshold_ns);
	}
	cur->hang_ns = next.hang_ns;
	cur->rec.max_age_ns = next.rec.max_age_ns;
	cur->rec.max_size = next.rec.max_size;
	cur->rec.max_snapshots = next.rec.max_snapshots;
	cur->rec.post_ns = next.rec.post_ns;
	cur->rec.min_interval_ns = next.rec.min_interval_ns;
	if (st->recorder) {
		recorder_set_limits(st->recorder, &cur->rec);
	}
	/* The idle policy reads the rules: it gets the new ones before the old are freed. */
	idle_set_rules(st->idle, rules);
	rules_free(st->rules);
	st->rules = rules;
	rules = NULL;
	free(st->rules_path);
	st->rules_path = rules_path;
	rules_path = NULL;
	cur->rules = st->rules_path;
	cur->verbose = next.verbose;
	ls_verbose_enabled = next.verbose;
	fprintf(stderr, "latsnap: record: reloaded %s: %s\n", path,
		*changes ? changes : "no change");
out:
	rules_free(rules);
	free(rules_path);
	free_opts(&next);
	notify_ready(cur);
}

/*
 * record_tend - between two polls: a reload asked for, status.json and the health line due, or
 * a snapshot written since status.json last said.
 */
static void record_tend(struct record_state *st, struct tracker *tr)
{
	struct recorder_totals r = { 0 };
	uint64_t now = ls_now_ns();

	if (reload_signal) {
		reload_signal = 0;
		record_reload(st, tr);
		write_status(st, tr, true);
	}
	if (st->recorder) {
		recorder_totals(st->recorder, &r);
	}
	if (now >= st->next_status_ns || r.snapshots != st->status_snapshots) {
		write_status(st, tr, true);
	}
	if (now >= st->next_health_ns) {
		log_health(st, tr);
	}
}

/*
 * record_loop - consume outliers and take snapshots until a signal, the end of COMMAND or of
 * every tracked pid, or --duration. Return: 0, or 1 when the outliers could not be read.
 */
static int record_loop(const struct record_opts *opts, struct record_state *st,
		       struct tracker *tr, struct record_child *ch)
{
	uint64_t deadline = opts->duration_ns ? ls_now_ns() + opts->duration_ns : 0;
	int wait_ms, due, n;

	st->next_health_ns = ls_now_ns() + HEALTH_PERIOD_NS;
	write_status(st, tr, true);
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

static int seed_idle(const struct ls_stall *w, void *ctx)
{
	struct idle_policy *idle = ctx;

	idle_seed(idle, (int32_t)w->tid, w->in_syscall ? w->syscall_nr : -1,
		  w->regs[LS_NR_UREGS - 1]);
	return 0;
}

/*
 * learn_idle_places - where each tracked thread waits as tracking begins is where it waits for
 * work, for the idle policy: a thread already blocked then is not in the middle of a request
 * latsnap saw start. One scan of the tracked threads (-a: of every thread).
 */
static void learn_idle_places(struct record_state *st, struct tracker *tr)
{
	int err;

	if (st->opts->include_idle) {
		return;
	}
	err = tracker_scan_waiting(tr, seed_idle, st->idle);
	if (err < 0) {
		ls_verbose("record: the idle policy learns no waits of before: %s", strerror(-err));
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
	st.start_realtime_ns = realtime_ns();

	/* First: COMMAND starts with the dispositions and mask latsnap was started with. */
	command_capture_signals(&ch.cmd);
	memset(&opts, 0, sizeof(opts));
	n = load_options(&opts, argc, argv);
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
	if (tracker_open(&tr, &topts, on_outlier, &st)) {
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
	learn_idle_places(&st, tr);
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
		       take_outlier, &st)) {
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
	notify_ready(&opts);
	if (record_loop(&opts, &st, tr, &ch)) {
		goto out;
	}
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: the last snapshot");
	record_finish(&st, tr, &ch);
	write_status(&st, tr, false);
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
	stacklog_close(st.stacklog);
	idle_close(st.idle);
	rules_free(st.rules);
	free(st.rules_path);
	command_free(&ch.cmd);
	for (i = 0; i < opts.nr_owned; i++) {
		free(opts.owned[i]);
	}
	for (i = 0; i < opts.nr_requests; i++) {
		request_spec_free(&opts.requests[i]);
	}
	return ret;
}
