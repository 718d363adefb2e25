// SPDX-License-Identifier: GPL-2.0
/*
 * status.c - `latsnap status`, and what `latsnap record` writes for it: status.json in the
 * output directory (every 10 s and at each snapshot), and the same numbers as one health line
 * on stderr (the journal's, every 10 minutes).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/duration.h"
#include "lib/options.h"
#include "lib/proc.h"
#include "lib/text.h"
#include "lib/util.h"
#include "recorder/status.h"

#define DEFAULT_STATUS_DIR "/var/lib/latsnap"
/* status.json is small; anything larger is not one latsnap wrote. */
#define STATUS_MAX_BYTES (64 * 1024)

/* Exit statuses of `latsnap status`, beyond 0 (running) and 2 (usage). */
#define STATUS_EXIT_NO_FILE 1
#define STATUS_EXIT_NOT_RUNNING 3

/* --json has no short option. */
#define OPT_JSON 256

/* The options, in --help's order: getopt_long()'s tables and --help are made from them. */
static const struct ls_option status_options[] = {
	{ "output", 'o', required_argument, 0, NULL, "DIR",
	  "record's output directory (default " DEFAULT_STATUS_DIR ", the\n"
	  "service's)" },
	{ "json", OPT_JSON, no_argument, 0, NULL, NULL,
	  "the status as JSON, \"running\" as checked now" },
	{ "help", 'h', no_argument, 0, NULL, NULL, "show this help" },
};

#define NR_STATUS_OPTIONS (sizeof(status_options) / sizeof(status_options[0]))

static const char status_usage_head[] =
	"Usage: latsnap status [-o DIR] [--json]\n"
	"\n"
	"What a running `latsnap record` is doing, from the status.json it keeps in its output\n"
	"directory: its pid, targets, threshold, outliers, snapshots and disk use.\n"
	"\n";

static const char status_usage_tail[] =
	"\n"
	"Exit status: 0 running, 3 not running (its last status is shown), 1 no status file.\n";

static void status_help(void)
{
	fputs(status_usage_head, stdout);
	ls_options_usage(stdout, status_options, NR_STATUS_OPTIONS, 21);
	fputs(status_usage_tail, stdout);
}

/**
 * status_self() - latsnap's own share of @si: pid, start time, CPU time (getrusage) and RSS
 * (/proc/self/statm)
 *
 * Return: 0; the fields it could not read are left as they were.
 */
int status_self(struct status_info *si)
{
	unsigned long long size, resident;
	struct rusage self;
	FILE *f;

	si->pid = (int)getpid();
	if (!si->proc_start) {
		proc_start_time(si->pid, &si->proc_start);
	}
	if (getrusage(RUSAGE_SELF, &self) == 0) {
		si->cpu_user_s = self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6;
		si->cpu_system_s = self.ru_stime.tv_sec + self.ru_stime.tv_usec / 1e6;
	}
	f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%llu %llu", &size, &resident) == 2) {
			si->rss_bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
		}
		fclose(f);
	}
	return 0;
}

/* @ns of CLOCK_REALTIME as RFC 3339 UTC, to the second. */
static void format_time(uint64_t ns, char *buf, size_t size)
{
	time_t secs = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!ns || !gmtime_r(&secs, &tm)) {
		snprintf(buf, size, "-");
		return;
	}
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void json_add_u64(struct json_object *obj, const char *key, uint64_t value)
{
	json_object_object_add(obj, key, json_object_new_uint64(value));
}

/**
 * status_to_json() - status.json's text for @si
 *
 * Return: the text, to free(), or NULL when memory ran out.
 */
char *status_to_json(const struct status_info *si)
{
	struct json_object *obj = json_object_new_object(), *last;
	char when[64];
	char *text = NULL;

	if (!obj) {
		goto out;
	}
	json_object_object_add(obj, "format", json_object_new_int(1));
	json_object_object_add(obj, "latsnap_version", json_object_new_string(LATSNAP_VERSION));
	json_object_object_add(obj, "pid", json_object_new_int(si->pid));
	json_add_u64(obj, "proc_start", si->proc_start);
	json_object_object_add(obj, "running", json_object_new_boolean(si->running));
	format_time(si->start_realtime_ns, when, sizeof(when));
	json_object_object_add(obj, "started", json_object_new_string(when));
	format_time(si->now_realtime_ns, when, sizeof(when));
	json_object_object_add(obj, "updated", json_object_new_string(when));
	json_add_u64(obj, "updated_ns", si->now_realtime_ns);
	json_object_object_add(obj, "output", json_object_new_string(si->output ? si->output : ""));
	json_object_object_add(obj, "targets",
			       json_object_new_string(si->targets ? si->targets : ""));
	json_add_u64(obj, "threshold_ns", si->threshold_ns);
	json_add_u64(obj, "sleep_threshold_ns", si->sleep_threshold_ns);
	json_add_u64(obj, "max_age_ns", si->max_age_ns);
	json_add_u64(obj, "outliers", si->outliers);
	json_add_u64(obj, "idle_waits", si->idle);
	json_add_u64(obj, "snapshots", si->snapshots);
	json_add_u64(obj, "skipped", si->skipped);
	json_add_u64(obj, "held_repeats", si->held_repeats);
	json_add_u64(obj, "held_over_user_budget", si->held_user_budget);
	json_add_u64(obj, "held_over_budget", si->held_budget);
	json_add_u64(obj, "dropped_at_source", si->dropped_at_source);
	json_add_u64(obj, "lost", si->lost);
	json_add_u64(obj, "failed", si->failed);
	json_add_u64(obj, "evicted", si->evicted);
	json_add_u64(obj, "expired", si->expired);
	json_add_u64(obj, "snapshots_on_disk", si->kept);
	json_add_u64(obj, "disk_bytes", si->disk_bytes);
	json_object_object_add(obj, "cpu_user_s", json_object_new_double(si->cpu_user_s));
	json_object_object_add(obj, "cpu_system_s", json_object_new_double(si->cpu_system_s));
	json_add_u64(obj, "rss_bytes", si->rss_bytes);
	last = NULL;
	if (*si->last_id) {
		last = json_object_new_object();
		json_object_object_add(last, "id", json_object_new_string(si->last_id));
		format_time(si->last_realtime_ns, when, sizeof(when));
		json_object_object_add(last, "time", json_object_new_string(when));
	}
	json_object_object_add(obj, "last_snapshot", last);
	text = ls_json_text(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
out:
	json_object_put(obj);
	return text;
}

/**
 * status_health_line() - the numbers of @si as the one line record logs every 10 minutes
 */
void status_health_line(const struct status_info *si, char *buf, size_t size)
{
	char disk[32], rss[32];

	ls_format_bytes(si->disk_bytes, disk, sizeof(disk));
	ls_format_bytes(si->rss_bytes, rss, sizeof(rss));
	snprintf(buf, size,
		 "health: %" PRIu64 " outliers, %" PRIu64 " idle, %" PRIu64 " snapshots (%" PRIu64
		 " skipped, %" PRIu64 " lost, %" PRIu64 " failed), %" PRIu64 " on disk, %s; "
		 "CPU %.2f s, RSS %s; last snapshot %s",
		 si->outliers, si->idle, si->snapshots, si->skipped, si->lost, si->failed, si->kept,
		 disk, si->cpu_user_s + si->cpu_system_s, rss, *si->last_id ? si->last_id : "none");
}

/*
 * read_status - DIR/status.json, parsed. Never through a symlink: a file someone else could
 * point elsewhere is not read as record's.
 */
static int read_status(const char *dir, struct json_object **objp)
{
	char buf[STATUS_MAX_BYTES + 1];
	int dfd = -1, fd = -1, err = 0;
	ssize_t n;

	*objp = NULL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = -errno;
		goto out;
	}
	fd = openat(dfd, STATUS_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		err = -errno;
		goto out;
	}
	if (n > STATUS_MAX_BYTES) {
		err = -EFBIG;
		goto out;
	}
	buf[n] = '\0';
	*objp = json_tokener_parse(buf);
	if (!*objp || !json_object_is_type(*objp, json_type_object)) {
		json_object_put(*objp);
		*objp = NULL;
		err = -EBADMSG;
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	if (dfd >= 0) {
		close(dfd);
	}
	return err;
}

static uint64_t get_u64(struct json_object *obj, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(obj, key, &v) ? json_object_get_uint64(v) : 0;
}

static const char *get_str(struct json_object *obj, const char *key)
{
	struct json_object *v;
	const char *s = NULL;

	if (json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
	}
	return s ? s : "-";
}

/*
 * still_running - is the record of @obj alive: it did not say it ended, its pid exists, and that
 * pid is the same process (its start time), not a later one that reused the number.
 */
static bool still_running(struct json_object *obj)
{
	unsigned long long start;
	struct json_object *v;
	int pid = (int)get_u64(obj, "pid");

	if (json_object_object_get_ex(obj, "running", &v) && !json_object_get_boolean(v)) {
		return false;
	}
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		return false;
	}
	if (proc_start_time(pid, &start) == 0 && get_u64(obj, "proc_start") &&
	    start != get_u64(obj, "proc_start")) {
		return false;
	}
	return true;
}

static void print_duration_line(const char *label, uint64_t ns)
{
	char d[LS_DURATION_BUFSZ];

	ls_format_duration(ns, d, sizeof(d));
	printf("%s%s", label, d);
}

/* The status for people. */
static void print_status(struct json_object *obj, const char *dir, bool running)
{
	char disk[32], rss[32];
	struct json_object *last, *v;

	if (running) {
		printf("latsnap record, pid %d: running since %s\n", (int)get_u64(obj, "pid"),
		       get_str(obj, "started"));
	} else {
		printf("latsnap record, pid %d: not running (its last status, of %s)\n",
		       (int)get_u64(obj, "pid"), get_str(obj, "updated"));
	}
	printf("  version %s, output %s, tracking %s\n", get_str(obj, "latsnap_version"),
	       get_str(obj, "output"), get_str(obj, "targets"));
	print_duration_line("  threshold ", get_u64(obj, "threshold_ns"));
	print_duration_line(", sleep threshold ", get_u64(obj, "sleep_threshold_ns"));
	if (get_u64(obj, "max_age_ns")) {
		print_duration_line(", max-age ", get_u64(obj, "max_age_ns"));
	}
	printf("\n");
	printf("  outliers %" PRIu64 ", idle waits %" PRIu64 "\n", get_u64(obj, "outliers"),
	       get_u64(obj, "idle_waits"));
	printf("  snapshots %" PRIu64 " written, %" PRIu64 " skipped, %" PRIu64 " lost, %" PRIu64
	       " failed, %" PRIu64 " evicted, %" PRIu64 " expired\n",
	       get_u64(obj, "snapshots"), get_u64(obj, "skipped"), get_u64(obj, "lost"),
	       get_u64(obj, "failed"), get_u64(obj, "evicted"), get_u64(obj, "expired"));
	printf("  flood guard: %" PRIu64 " repeats, %" PRIu64 " over a user's budget, %" PRIu64
	       " over the budget held back; %" PRIu64 " dropped at the source (over a share)\n",
	       get_u64(obj, "held_repeats"), get_u64(obj, "held_over_user_budget"),
	       get_u64(obj, "held_over_budget"), get_u64(obj, "dropped_at_source"));
	ls_format_bytes(get_u64(obj, "disk_bytes"), disk, sizeof(disk));
	printf("  on disk: %" PRIu64 " snapshots, %s in %s\n", get_u64(obj, "snapshots_on_disk"),
	       disk, dir);
	if (json_object_object_get_ex(obj, "last_snapshot", &last) && last) {
		printf("  last snapshot: %s at %s\n", get_str(last, "id"), get_str(last, "time"));
	} else {
		printf("  last snapshot: none\n");
	}
	ls_format_bytes(get_u64(obj, "rss_bytes"), rss, sizeof(rss));
	printf("  latsnap's own use: CPU %.2f s user, %.2f s system, RSS %s\n",
	       json_object_object_get_ex(obj, "cpu_user_s", &v) ? json_object_get_double(v) : 0.0,
	       json_object_object_get_ex(obj, "cpu_system_s", &v) ? json_object_get_double(v) : 0.0,
	       rss);
	printf("  updated %s\n", get_str(obj, "updated"));
}

/**
 * status_main() - `latsnap status [-o DIR] [--json]`
 *
 * Return: 0 when the record is running, 3 when it is not (its last status is printed), 1 when
 * there is no status file to read, 2 on a usage error.
 */
int status_main(int argc, char **argv)
{
	struct option options[NR_STATUS_OPTIONS + 1];
	char shortopts[sizeof("+") + 2 * NR_STATUS_OPTIONS];
	const char *dir = DEFAULT_STATUS_DIR;
	struct json_object *obj = NULL;
	bool json = false, running;
	int id, err, ret = 2;
	char *text = NULL;

	optind = 0;
	opterr = 0;
	ls_options_getopt(status_options, NR_STATUS_OPTIONS, "+", options, shortopts);
	while ((id = getopt_long(argc, argv, shortopts, options, NULL)) != -1) {
		switch (id) {
		case 'o':
			dir = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			status_help();
			ret = 0;
			goto out;
		case ':':
			ls_err("status: option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			ls_err("status: unknown option '%s' (see latsnap status --help)",
			       argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		ls_err("status: unexpected argument '%s' (see latsnap status --help)",
		       argv[optind]);
		goto out;
	}
	err = read_status(dir, &obj);
	if (err == -ENOENT) {
		ls_err("status: %s/%s: no status file: no latsnap record has written to %s (not "
		       "running, or use -o with its output directory)",
		       dir, STATUS_FILE, dir);
		ret = STATUS_EXIT_NO_FILE;
		goto out;
	}
	if (err) {
		ls_err("status: %s/%s: %s", dir, STATUS_FILE,
		       err == -EBADMSG ? "not a status file latsnap wrote (bad JSON)" :
		       err == -ELOOP   ? "a symlink (refused)" :
		       err == -EFBIG   ? "too large for a status file" :
					 strerror(-err));
		ret = STATUS_EXIT_NO_FILE;
		goto out;
	}
	running = still_running(obj);
	if (json) {
		/* The file as written, but whether it runs is what is true now. */
		json_object_object_add(obj, "running", json_object_new_boolean(running));
		text = ls_json_text(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
		if (!text) {
			ls_err("status: %s", strerror(ENOMEM));
			ret = STATUS_EXIT_NO_FILE;
			goto out;
		}
		printf("%s\n", text);
	} else {
		print_status(obj, dir, running);
	}
	ret = running ? 0 : STATUS_EXIT_NOT_RUNNING;
out:
	free(text);
	json_object_put(obj);
	return ret;
}
