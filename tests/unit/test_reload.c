// SPDX-License-Identifier: GPL-2.0
/*
 * test_reload.c - what a reload of `latsnap record` changes (recorder/reload-diff.c), on settings
 * read from config files by recorder/record-opts.c: the targets' sets compared whatever their
 * order, the changes said, what needs a restart said and kept.
 */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "recorder/record-opts.h"
#include "recorder/reload-diff.h"
#include "tracker/tracker.h"

#define LIVE_ALL (TRACKER_TARGET_PIDS | TRACKER_TARGET_CGROUPS | TRACKER_TARGET_COMMS)

static void test_sets(void)
{
	const int a[] = { 1, 2, 3 }, b[] = { 3, 1, 2 }, c[] = { 1, 2, 4 }, d[] = { 1, 1, 2, 3 };
	const uint64_t ids[] = { 10, 20 }, ids_reversed[] = { 20, 10 };
	struct ls_comm web = { .name = "web" }, db = { .name = "db" };
	struct ls_comm comms[] = { web, db }, others[] = { db, web }, one[] = { web };
	int x = 3, y = 4;

	ok(reload_set_has(a, 3, sizeof(a[0]), &x), "3 is in {1, 2, 3}");
	ok(!reload_set_has(a, 3, sizeof(a[0]), &y), "4 is not in {1, 2, 3}");
	ok(!reload_set_has(a, 0, sizeof(a[0]), &x), "nothing is in the empty set");
	ok(reload_same_set(a, 3, b, 3, sizeof(a[0])), "{1, 2, 3} is {3, 1, 2}");
	ok(!reload_same_set(a, 3, c, 3, sizeof(a[0])), "{1, 2, 3} is not {1, 2, 4}");
	ok(!reload_same_set(a, 2, a, 3, sizeof(a[0])), "{1, 2} is not {1, 2, 3}");
	ok(!reload_same_set(a, 3, a, 2, sizeof(a[0])), "{1, 2, 3} is not {1, 2}");
	ok(reload_same_set(a, 3, d, 4, sizeof(a[0])), "a repeated element changes nothing");
	ok(reload_same_set(a, 0, b, 0, sizeof(a[0])), "two empty sets are the same");
	ok(reload_same_set(ids, 2, ids_reversed, 2, sizeof(ids[0])), "cgroup ids in any order");
	ok(!reload_same_set(ids, 2, ids, 1, sizeof(ids[0])), "one cgroup fewer");
	ok(reload_same_set(comms, 2, others, 2, sizeof(comms[0])), "names in any order");
	ok(!reload_same_set(comms, 2, one, 1, sizeof(comms[0])), "one name fewer");
}

/* Settings as record reads them: @config as the file given with -c, then @extra arguments. */
static int load(struct record_opts *opts, const char *config, const char *extra)
{
	char *path = tap_write_temp(config, strlen(config));
	char *argv[] = { "record", "-c", path, (char *)extra, NULL };
	int err;

	err = record_opts_load(opts, extra ? 4 : 3, argv, true);
	tap_remove_temp(path);
	return err;
}

static void test_load(void)
{
	struct record_opts opts;
	struct tap_capture cap;
	int bad_value, bad_key;
	char err[1024];

	if (!is_int(load(&opts, "threshold = 20ms\ncomm = web\ncomm = db\n", NULL), 0,
		    "a config file loads")) {
		record_opts_free(&opts);
		return;
	}
	is_u64(opts.threshold_ns, 20000000, "its threshold");
	is_u64(opts.sleep_threshold_ns, 20000000, "the sleep threshold follows it");
	is_u64(opts.hang_ns, 1000000000, "--hang: 10 x the threshold, at least 1s");
	is_int(opts.nr_comms, 2, "its two names");
	is_str(opts.comms[1].name, "db", "in their order");
	record_opts_free(&opts);
	is_int(load(&opts, "threshold = 20ms\n", "--threshold=30ms"), 0, "and a command line");
	is_u64(opts.threshold_ns, 30000000, "which wins");
	record_opts_free(&opts);
	tap_capture_begin(&cap, STDERR_FILENO);
	bad_value = load(&opts, "threshold = 20 parsecs\n", NULL);
	record_opts_free(&opts);
	bad_key = load(&opts, "colour = blue\n", NULL);
	record_opts_free(&opts);
	tap_capture_end(&cap, err, sizeof(err));
	ok(bad_value < 0, "a bad value is a usage error");
	ok(bad_key < 0, "so is an unknown key");
	ok(strstr(err, ":1: bad threshold '20 parsecs': expected a number with a unit") &&
		   strstr(err, ":1: unknown key 'colour'\n"),
	   "each said with its file and line: %s", err);
}

static void test_limits(void)
{
	struct record_opts cur, next;
	char changes[256] = "";

	load(&cur, "threshold = 50ms\nmax-size = 1M\n", NULL);
	load(&next, "threshold = 20ms\nhang = 3s\nmax-size = 2M\n", NULL);
	reload_diff_limits(changes, sizeof(changes), &cur, &next);
	is_str(changes,
	       "threshold 50ms -> 20ms, sleep threshold 50ms -> 20ms, hang 1s -> 3s, "
	       "max-size 2097152, max-snapshots 0",
	       "the durations and limits that changed, said");
	changes[0] = '\0';
	reload_diff_limits(changes, sizeof(changes), &cur, &cur);
	is_str(changes, "", "nothing said when nothing changed");
	record_opts_free(&cur);
	record_opts_free(&next);
}

static void test_fixed(void)
{
	struct record_opts cur, next;
	struct tap_capture cap;
	char err[1024];

	load(&cur, "buffer-size = 4M\n", NULL);
	load(&next, "buffer-size = 8M\ncontext = sched\n", NULL);
	tap_capture_begin(&cap, STDERR_FILENO);
	reload_diff_fixed("/etc/x.conf", &cur, &next);
	reload_diff_fixed("/etc/x.conf", &cur, &cur);
	tap_capture_end(&cap, err, sizeof(err));
	is_str(err,
	       "latsnap: record: /etc/x.conf: buffer-size changed: needs a restart (the value in "
	       "use stays)\n"
	       "latsnap: record: /etc/x.conf: context changed: needs a restart (the value in use "
	       "stays)\n",
	       "each setting a reload cannot change is said, once");
	record_opts_free(&cur);
	record_opts_free(&next);
}

/* The targets of @cur_config changed to those of @next_config, with @live targets. */
static void diff_targets(const char *cur_config, const char *next_config, unsigned int live,
			 char *said, size_t size, char *err, size_t err_size)
{
	struct record_opts cur, next;
	struct tap_capture cap;

	load(&cur, cur_config, NULL);
	load(&next, next_config, NULL);
	tap_capture_begin(&cap, STDERR_FILENO);
	reload_diff_targets("x.conf", &cur, &next, live, said, size);
	tap_capture_end(&cap, err, err_size);
	record_opts_free(&cur);
	record_opts_free(&next);
}

/* A pid that has just ended: no such process (unless reused at once). */
static int gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return pid;
}

static void test_targets(void)
{
	char said[256], err[1024], cur[128], next[128];

	diff_targets("comm = web\ncomm = db\n", "comm = db\ncomm = web\n", LIVE_ALL, said,
		     sizeof(said), err, sizeof(err));
	is_str(said, "", "the same names reordered: no change");
	diff_targets("comm = web\ncomm = db\n", "comm = web\ncomm = api\n", LIVE_ALL, said,
		     sizeof(said), err, sizeof(err));
	is_str(said, "comm -db +api", "a name out, one in");
	is_str(err, "", "nothing needs a restart");
	diff_targets("comm = web\n", "comm = web\ncomm = api\n", TRACKER_TARGET_PIDS, said,
		     sizeof(said), err, sizeof(err));
	is_str(said, "", "names without room for them in the run: no change");
	is_str(err,
	       "latsnap: record: x.conf: comm (none at the start) changed: needs a restart (the "
	       "value in use stays)\n",
	       "and that is said");
	diff_targets("", "comm = web\n", 0, said, sizeof(said), err, sizeof(err));
	is_str(said, "", "no target at the start: no change");
	is_str(err,
	       "latsnap: record: x.conf: the targets (none in use: the processes with the preload "
	       "library) changed: needs a restart (the value in use stays)\n",
	       "and that is said");
	snprintf(cur, sizeof(cur), "pid = %d\n", (int)getpid());
	snprintf(next, sizeof(next), "pid = %d\npid = %d\n", (int)getpid(), (int)getppid());
	diff_targets(cur, next, LIVE_ALL, said, sizeof(said), err, sizeof(err));
	snprintf(cur, sizeof(cur), "pid %d -> pid %d, %d", (int)getpid(), (int)getpid(),
		 (int)getppid());
	is_str(said, cur, "a pid added");
	snprintf(next, sizeof(next), "pid = %d\npid = %d\n", (int)getpid(), gone_pid());
	snprintf(cur, sizeof(cur), "pid = %d\n", (int)getpid());
	diff_targets(cur, next, LIVE_ALL, said, sizeof(said), err, sizeof(err));
	is_str(said, "", "a new pid that does not exist: no change");
	ok(strstr(err, ": no such process, not tracked\n") != NULL, "and that is said: %s", err);
}

int main(void)
{
	test_sets();
	test_load();
	test_limits();
	test_fixed();
	test_targets();
	return tap_done();
}
