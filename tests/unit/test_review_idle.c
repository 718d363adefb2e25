// SPDX-License-Identifier: GPL-2.0
/*
 * Idle waits (issue 18) as report and show read them: each summary.json may hold an "idle" list
 * of the waits the recorder's idle policy judged waiting for work, ended since the previous
 * snapshot of the run. The list must be read into the typed summary, summed over the snapshots
 * by thread and place, shown apart from the latency tables, and never cost the outliers: a
 * summary without it reads as always, and a damaged one has its bad entries skipped with one
 * warning naming the file.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <sys/stat.h>

#include "lib/outlier.h"
#include "review/report.h"
#include "review/show.h"
#include "review/snapshots.h"
#include "tap.h"

#define SNAP_A "20260101T000000.000Z-0001"
#define SNAP_B "20260101T000010.000Z-0002"
#define SNAP_C "20260101T000020.000Z-0003"
#define SNAP_D "20260101T000030.000Z-0004"
#define OUT_MAX (1 << 20)
#define SEC 1000000000ULL

#define BIO "pthread_cond_wait in bioProcessBackgroundJobs"
#define AE "epoll_wait in aeMain"
#define RQ "read in readQueryFromClient"

static char tmpdir[64];
static char *out_buf;
static char err_buf[8192];

static const char outlier[] =
	"{\"kind\":\"syscall\",\"pid\":10,\"tid\":11,\"comm\":\"srv\",\"syscall\":\"read\","
	"\"syscall_nr\":0,\"start_ns\":100,\"end_ns\":300000100,\"duration_ns\":300000000,"
	"\"on_cpu_ns\":0,\"blocked_ns\":300000000,\"runqueue_ns\":0,\"switches\":1,"
	"\"cause\":\"Reading from a pipe\",\"kernel_stacks\":[],"
	"\"user_stack\":{\"source\":\"none\",\"frames\":[]},\"waker\":null,\"wait_chain\":[],"
	"\"flags\":[]}";

/* What the last run() printed, after a failed check. */
static void diag_output(void)
{
	diag("stdout: %s", out_buf);
	diag("stderr: %s", err_buf);
}

/* An idle entry; "%s" members are written as given, so a test can put any JSON there. */
static char *entry(const char *pid, int tid, const char *comm, const char *count, uint64_t total_ns,
		   const char *site)
{
	char *s;

	if (asprintf(&s,
		     "{\"pid\":%s,\"tid\":%d,\"comm\":\"%s\",\"count\":%s,\"total_ns\":%" PRIu64
		     ",\"site\":\"%s\"}",
		     pid, tid, comm, count, total_ns, site) < 0) {
		bail_out("out of memory");
	}
	return s;
}

/* A summary of host @host with one outlier and, unless @idle is NULL, "idle": @idle. */
static char *summary(const char *id, const char *host, const char *idle)
{
	char *s;

	if (asprintf(&s,
		     "{\"version\":1,\"id\":\"%s\",\"host\":\"%s\",\"created\":\"2026-01-01T00:00:00Z\","
		     "\"trace\":\"trace\",\"skipped\":0,\"flags\":[],\"outliers\":[%s]%s%s}",
		     id, host, outlier, idle ? ",\"idle\":" : "", idle ? idle : "") < 0) {
		bail_out("out of memory");
	}
	return s;
}

/* summary() of an idle list made by list() (freed). */
static char *summary_with(const char *id, const char *host, char *idle)
{
	char *s = summary(id, host, idle);

	free(idle);
	return s;
}

/* "[e0,e1,...]" of the @n entries @e (freed). */
static char *list(char **e, size_t n)
{
	char *all = strdup("["), *grown;
	size_t i;

	for (i = 0; all && i < n; i++) {
		if (asprintf(&grown, "%s%s%s", all, i ? "," : "", e[i]) < 0) {
			bail_out("out of memory");
		}
		free(all);
		free(e[i]);
		all = grown;
	}
	if (!all || asprintf(&grown, "%s]", all) < 0) {
		bail_out("out of memory");
	}
	free(all);
	return grown;
}

/* DIR/ID/summary.json holding @text (freed), and an empty DIR/ID/trace/. */
static void write_snapshot(const char *dir, const char *id, char *text)
{
	tap_write_snapshot(dir, id, text);
	free(text);
}

/* Run @fn with argv @args (NULL-terminated), its output into out_buf and err_buf; its status. */
static int run(int (*fn)(int, char **), const char **args)
{
	return tap_run(fn, args, out_buf, OUT_MAX, err_buf, sizeof(err_buf));
}

static bool has(const char *text)
{
	return strstr(out_buf, text) != NULL;
}

static size_t count_in(const char *buf, const char *text)
{
	size_t n = 0;
	const char *p;

	for (p = strstr(buf, text); p; p = strstr(p + 1, text)) {
		n++;
	}
	return n;
}

static int parse(const char *text, struct summary **s, char *why, size_t len)
{
	return snapshots_parse_summary(text, strlen(text), "S", s, why, len);
}

/* A summary with an idle list: every member of every entry typed, in the summary's order. */
static void test_read(void)
{
	char *e[2], *idle, *text, why[512] = "";
	struct summary *s = NULL;

	e[0] = entry("4242", 4250, "bio_lazy_free", "12", 12 * SEC, BIO);
	e[1] = entry("4242", 4242, "redis-server", "5", 9 * SEC, AE);
	idle = list(e, 2);
	text = summary("A", "h", idle);
	if (!is_int(parse(text, &s, why, sizeof(why)), 0, "a summary with an idle list is read")) {
		diag("%s", why);
		goto out;
	}
	is_int((int)s->nr_outliers, 1, "  its outlier too");
	if (is_int((int)s->nr_idle, 2, "  two idle entries")) {
		ok(s->idle[0].pid == 4242 && s->idle[0].tid == 4250,
		   "  the first: pid 4242 tid 4250");
		is_str(s->idle[0].comm, "bio_lazy_free", "  its comm");
		is_str(s->idle[0].site, BIO, "  its site");
		ok(s->idle[0].count == 12 && s->idle[0].total_ns == 12 * SEC,
		   "  12 waits, 12 s in all");
		ok(s->idle[1].tid == 4242 && s->idle[1].count == 5 &&
			   s->idle[1].total_ns == 9 * SEC,
		   "  the second: tid 4242, 5 waits, 9 s");
		is_str(s->idle[1].site, AE, "  its site");
	}
	ok(!s->idle_why, "  nothing to warn about");
out:
	summary_free(s);
	free(text);
	free(idle);
}

/* Summaries from before issue 18 have no "idle": nothing to read, nothing to warn about. */
static void test_absent(void)
{
	struct summary *s = NULL;
	char *text, why[512] = "";

	text = summary("A", "h", NULL);
	is_int(parse(text, &s, why, sizeof(why)), 0, "a summary without \"idle\" is read");
	ok(s && s->nr_outliers == 1 && s->nr_idle == 0 && !s->idle_why,
	   "  its outlier, no idle entries, no warning");
	summary_free(s);
	s = NULL;
	free(text);

	text = summary("A", "h", "null");
	is_int(parse(text, &s, why, sizeof(why)), 0, "\"idle\": null is read");
	ok(s && s->nr_idle == 0 && !s->idle_why, "  as no idle entries, no warning");
	summary_free(s);
	s = NULL;
	free(text);

	text = summary("A", "h", "[]");
	is_int(parse(text, &s, why, sizeof(why)), 0, "\"idle\": [] is read");
	ok(s && s->nr_idle == 0 && !s->idle_why, "  as no idle entries, no warning");
	summary_free(s);
	free(text);
}

/* A damaged idle list: the bad entries skipped, the summary and its outliers still read. */
static void test_malformed(void)
{
	static const struct {
		const char *idle, *why;
		size_t kept;
	} bad[] = {
		{ "{\"pid\":1}", "S: idle is not an array (no idle waits read)", 0 },
		{ "\"x\"", "S: idle is not an array (no idle waits read)", 0 },
		{ "[7]", "S: idle entry 0 is not an object (no idle waits read)", 0 },
		{ "[null]", "S: idle entry 0 is not an object (no idle waits read)", 0 },
		{ "[{\"pid\":1,\"tid\":2,\"comm\":\"c\",\"count\":1,\"total_ns\":5}]",
		  "S: idle entry 0: site is not a string (no idle waits read)", 0 },
		{ "[{\"pid\":1,\"tid\":2,\"comm\":\"c\",\"count\":\"1\",\"total_ns\":5,"
		  "\"site\":\"s\"}]",
		  "S: idle entry 0: count is not a non-negative integer (no idle waits read)", 0 },
		{ "[{\"pid\":1,\"tid\":2,\"comm\":\"c\",\"count\":1,\"total_ns\":-5,\"site\":\"s\"}]",
		  "S: idle entry 0: total_ns is not a non-negative integer (no idle waits read)",
		  0 },
		{ "[{\"pid\":1,\"tid\":2,\"comm\":3,\"count\":1,\"total_ns\":5,\"site\":\"s\"}]",
		  "S: idle entry 0: comm is not a string (no idle waits read)", 0 },
		{ "[{\"pid\":4294967296,\"tid\":2,\"comm\":\"c\",\"count\":1,\"total_ns\":5,"
		  "\"site\":\"s\"}]",
		  "S: idle entry 0: pid or tid is out of range (no idle waits read)", 0 },
		/* Good, bad, good, bad: both good ones kept, the first fault named. */
		{ "[{\"pid\":1,\"tid\":2,\"comm\":\"c\",\"count\":1,\"total_ns\":5,\"site\":\"s\"},"
		  "{\"pid\":1,\"comm\":\"c\",\"count\":1,\"total_ns\":5,\"site\":\"s\"},"
		  "{\"pid\":1,\"tid\":3,\"comm\":\"d\",\"count\":2,\"total_ns\":6,\"site\":\"t\"},"
		  "{\"pid\":1,\"tid\":4,\"comm\":\"e\",\"count\":2.5,\"total_ns\":6,\"site\":\"t\"}]",
		  "S: idle entry 1: tid is not a non-negative integer (2 of 4 idle entries skipped)",
		  2 },
	};
	struct summary *s = NULL;
	char *text, why[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		text = summary("A", "h", bad[i].idle);
		why[0] = '\0';
		if (!is_int(parse(text, &s, why, sizeof(why)), 0,
			    "\"idle\": %s is no corrupt summary", bad[i].idle)) {
			diag("%s", why);
			free(text);
			continue;
		}
		ok(s->nr_outliers == 1, "  its outlier is read");
		is_int((int)s->nr_idle, (int)bad[i].kept, "  %zu idle entries kept", bad[i].kept);
		is_str(s->idle_why ? s->idle_why : "(none)", bad[i].why,
		       "  one warning, naming the file and the first fault");
		summary_free(s);
		s = NULL;
		free(text);
	}
	text = summary("A", "h", bad[sizeof(bad) / sizeof(bad[0]) - 1].idle);
	if (!parse(text, &s, why, sizeof(why)) && s->nr_idle == 2) {
		ok(s->idle[0].tid == 2 && s->idle[1].tid == 3 && !strcmp(s->idle[1].comm, "d") &&
			   s->idle[1].count == 2,
		   "  the good entries around the bad ones are the ones kept, in order");
	} else {
		ok(0, "  the good entries around the bad ones are the ones kept, in order");
	}
	summary_free(s);
	free(text);
}

/*
 * DIR: A (host h): bio 12 waits 12 s, ae 5 waits 9 s, and the main thread's other place, 2
 * waits 0.5 s (a thread may wait for work at more than one place). B (h): bio 10 waits 10.2 s (renamed), and
 * a damaged entry. C (h): no "idle" at all (an older recorder). D (host g): bio's pid and tid
 * on another host, 1 wait of 1 s.
 */
static void write_two_runs(const char *dir)
{
	char *e[3];

	e[0] = entry("4242", 4250, "bio_lazy_free", "12", 12 * SEC, BIO);
	e[1] = entry("4242", 4242, "redis-server", "5", 9 * SEC, AE);
	e[2] = entry("4242", 4242, "redis-server", "2", SEC / 2, RQ);
	write_snapshot(dir, SNAP_A, summary_with(SNAP_A, "h", list(e, 3)));
	e[0] = entry("4242", 4250, "bio_close_file", "10", 10 * SEC + SEC / 5, BIO);
	e[1] = entry("\"4242\"", 4242, "redis-server", "5", 9 * SEC, AE);
	write_snapshot(dir, SNAP_B, summary_with(SNAP_B, "h", list(e, 2)));
	write_snapshot(dir, SNAP_C, summary(SNAP_C, "h", NULL));
	e[0] = entry("4242", 4250, "bio_lazy_free", "1", SEC, BIO);
	write_snapshot(dir, SNAP_D, summary_with(SNAP_D, "g", list(e, 1)));
}

static void test_sum(const char *dir)
{
	struct snapshot_set set;
	struct snapshot_idle *v = NULL;
	size_t nr = 0;

	if (!is_int(snapshots_load(dir, &set), 0, "the directory of four snapshots loads")) {
		return;
	}
	is_int((int)set.nr, 4, "  4 snapshots");
	ok(set.nr == 4 && set.snaps[1].state == SNAPSHOT_COMPLETE && set.snaps[1].summary->idle_why,
	   "  the one with a damaged idle entry is complete, with a warning");
	ok(set.nr == 4 && set.snaps[2].state == SNAPSHOT_COMPLETE &&
		   !set.snaps[2].summary->nr_idle && !set.snaps[2].summary->idle_why,
	   "  the one without \"idle\" is complete, without a warning");
	if (!ok(!snapshots_idle(&set, &v, &nr), "snapshots_idle()") ||
	    !is_int((int)nr, 4, "  4 rows: bio on h, ae on h, bio on g, rq on h")) {
		goto out;
	}
	is_str(v[0].host, "h", "  the largest first: bio on h");
	ok(v[0].pid == 4242 && v[0].tid == 4250 && !strcmp(v[0].site, BIO),
	   "  pid 4242 tid 4250 at " BIO);
	is_u64(v[0].count, 22, "  its waits summed over A and B: 12 + 10");
	is_u64(v[0].total_ns, 22 * SEC + SEC / 5, "  its time summed: 12 s + 10.2 s");
	is_str(v[0].comm, "bio_close_file", "  named as in the latest snapshot");
	ok(v[1].tid == 4242 && v[1].count == 5 && v[1].total_ns == 9 * SEC,
	   "  then ae: only A's entry (B's is damaged)");
	ok(!strcmp(v[2].host, "g") && v[2].tid == 4250 && v[2].count == 1,
	   "  then bio on g, apart from h's: pids are per host");
	ok(v[3].tid == 4242 && !strcmp(v[3].site, RQ) && v[3].count == 2,
	   "  then the main thread's other place, apart from its first");
out:
	free(v);
	snapshots_free(&set);
}

static void test_report(const char *dir)
{
	const char *text[] = { "report", dir, NULL };
	const char *json[] = { "report", "--json", dir, NULL };
	const char *host[] = { "report", "--host", "g", dir, NULL };
	int failed = tap_failed_;
	struct json_object *obj, *idle, *row;
	const char *idle_at, *proc_at;

	is_int(run(report_main, text), 0, "report: exit 0 with a damaged idle entry");
	ok(has(": 4 outliers, 1.200 s in all, 0 skipped by the recorder; 30 idle waits\n\n"),
	   "  the totals line: the outliers as ever, then the idle waits");
	ok(has("\nIdle waits (waiting for work; not latency): 30 waits, 32.700 s\n"
	       "Thread                           Count        Total  Where\n"),
	   "  an idle section: its totals and columns");
	ok(has("\nbio_close_file[4242/4250] on h      22     22.200 s  " BIO "\n") &&
		   has("\nredis-server[4242/4242] on h         5      9.000 s  " AE "\n") &&
		   has("\nbio_lazy_free[4242/4250] on g        1      1.000 s  " BIO "\n") &&
		   has("\nredis-server[4242/4242] on h         2   500.000 ms  " RQ "\n"),
	   "  a row per thread and place, summed over the snapshots, on its host");
	ok(strstr(out_buf, "bio_close_file[") < strstr(out_buf, "redis-server[") &&
		   strstr(out_buf, "redis-server[") < strstr(out_buf, "bio_lazy_free["),
	   "  largest total first");
	idle_at = strstr(out_buf, "\nIdle waits");
	proc_at = strstr(out_buf, "\nProcess srv (10)");
	ok(idle_at && proc_at && proc_at < idle_at, "  after the latency sections");
	ok(idle_at && strstr(out_buf, "bio_") > idle_at &&
		   strstr(out_buf, "redis-server") > idle_at,
	   "  idle waits are in none of the latency tables");
	is_int((int)count_in(err_buf, "warning"), 1, "  one warning on stderr");
	ok(strstr(err_buf, "latsnap: report: warning: ") &&
		   strstr(err_buf, "/" SNAP_B "/summary.json: idle entry 1: pid is not a "
				   "non-negative integer (1 of 2 idle entries skipped)\n"),
	   "  naming the file and what is wrong");
	if (tap_failed_ != failed) {
		diag_output();
	}

	is_int(run(report_main, json), 0, "report --json: exit 0");
	obj = json_tokener_parse(out_buf);
	if (!ok(obj != NULL, "  its output is JSON")) {
		return;
	}
	is_int((int)json_object_get_int64(
		       json_object_object_get(json_object_object_get(obj, "system"), "count")),
	       4, "  system.count: the 4 outliers, no idle wait among them");
	is_int((int)json_object_get_int64(json_object_object_get(obj, "idle_count")), 30,
	       "  idle_count 30");
	is_u64((uint64_t)json_object_get_int64(json_object_object_get(obj, "idle_total_ns")),
	       32 * SEC + 7 * SEC / 10, "  idle_total_ns 32.7 s");
	idle = json_object_object_get(obj, "idle");
	if (is_int(idle ? (int)json_object_array_length(idle) : -1, 4, "  4 idle rows")) {
		row = json_object_array_get_idx(idle, 0);
		is_int(json_object_get_int(json_object_object_get(row, "pid")), 4242, "  pid");
		is_int(json_object_get_int(json_object_object_get(row, "tid")), 4250, "  tid");
		is_str(json_object_get_string(json_object_object_get(row, "comm")),
		       "bio_close_file", "  comm");
		is_str(json_object_get_string(json_object_object_get(row, "site")), BIO, "  site");
		is_int((int)json_object_get_int64(json_object_object_get(row, "count")), 22,
		       "  count");
		is_u64((uint64_t)json_object_get_int64(json_object_object_get(row, "total_ns")),
		       22 * SEC + SEC / 5, "  total_ns");
	}
	ok(json_object_object_get_ex(obj, "stalls", NULL) &&
		   json_object_object_get_ex(obj, "processes", NULL) &&
		   json_object_object_get_ex(obj, "snapshots", NULL),
	   "  the keys it always had are still there");
	json_object_put(obj);

	is_int(run(report_main, host), 0, "report --host g: exit 0");
	ok(has("; 1 idle wait\n\n") &&
		   has("\nbio_lazy_free[4242/4250]       1      1.000 s  " BIO) &&
		   !has("redis-server") && !has("bio_close_file"),
	   "  only host g's idle waits");
	if (tap_failed_ != failed) {
		diag_output();
	}
}

/* More threads than the text lists: the first 20, then how many more. */
static void test_many(const char *dir)
{
	const char *text[] = { "report", dir, NULL };
	const char *json[] = { "report", "--json", dir, NULL };
	struct json_object *obj;
	char *e[25], comm[16];
	size_t i;

	for (i = 0; i < 25; i++) {
		snprintf(comm, sizeof(comm), "w%02zu", i);
		e[i] = entry("100", 101 + (int)i, comm, "1", (100 - i) * SEC, "read in main");
	}
	write_snapshot(dir, SNAP_A, summary_with(SNAP_A, "h", list(e, 25)));
	is_int(run(report_main, text), 0, "report of 25 idle threads: exit 0");
	ok(has("\nw19[100/120] ") && !has("\nw20[100/121]"), "  20 rows, the largest");
	ok(has("\n... 5 more (5 waits, 390.000 s)\n"), "  then how many more");
	is_int(run(report_main, json), 0, "report --json: exit 0");
	obj = json_tokener_parse(out_buf);
	is_int(obj ? (int)json_object_array_length(json_object_object_get(obj, "idle")) : -1, 25,
	       "  --json has all 25 rows");
	json_object_put(obj);
}

/* Without idle waits the report is what it always was. */
static void test_none(const char *dir)
{
	const char *text[] = { "report", dir, NULL };
	const char *json[] = { "report", "--json", dir, NULL };
	struct json_object *obj;

	write_snapshot(dir, SNAP_A, summary(SNAP_A, "h", NULL));
	is_int(run(report_main, text), 0, "report without idle lists: exit 0");
	ok(has(": 1 outlier") && has(" 0 skipped by the recorder\n\nSystem-wide"),
	   "  the totals line as it always was");
	/* (The directory's own name has "idle" in it.) */
	ok(!has("Idle") && !has("idle wait"), "  no idle section");
	ok(!err_buf[0], "  nothing on stderr");
	is_int(run(report_main, json), 0, "report --json: exit 0");
	obj = json_tokener_parse(out_buf);
	ok(obj && json_object_array_length(json_object_object_get(obj, "idle")) == 0 &&
		   json_object_get_int64(json_object_object_get(obj, "idle_count")) == 0 &&
		   json_object_get_int64(json_object_object_get(obj, "idle_total_ns")) == 0,
	   "  idle [], idle_count 0, idle_total_ns 0");
	json_object_put(obj);
}

static void test_show(const char *dir)
{
	char a[PATH_MAX + 64], b[PATH_MAX + 64], c[PATH_MAX + 64];
	const char *show_a[] = { "show", a, NULL };
	const char *show_b[] = { "show", b, NULL };
	const char *show_c[] = { "show", c, NULL };
	int failed = tap_failed_;

	snprintf(a, sizeof(a), "%s/%s", dir, SNAP_A);
	snprintf(b, sizeof(b), "%s/%s", dir, SNAP_B);
	snprintf(c, sizeof(c), "%s/%s", dir, SNAP_C);
	/* The trace is an empty directory: exit 1 for it, the summary still shown. */
	run(show_main, show_a);
	ok(has("\nIdle waits in this snapshot's window (waiting for work; not latency): 19 waits, "
	       "21.500 s\n"
	       "  bio_lazy_free[pid 4242 tid 4250] 12 waits, 12.000 s: " BIO "\n"
	       "  redis-server[pid 4242 tid 4242] 5 waits, 9.000 s: " AE "\n"
	       "  redis-server[pid 4242 tid 4242] 2 waits, 500.000 ms: " RQ "\n\n"),
	   "show: the snapshot's idle waits, one line each, largest first");
	ok(strstr(out_buf, "syscall read  srv[") < strstr(out_buf, "Idle waits"),
	   "  after the outliers");
	run(show_main, show_b);
	ok(has("(waiting for work; not latency): 10 waits, 10.200 s\n"
	       "  bio_close_file[pid 4242 tid 4250] 10 waits, 10.200 s: " BIO "\n\n"),
	   "show of the damaged one: its good entry");
	ok(strstr(err_buf, "latsnap: show: warning: ") && strstr(err_buf, "idle entry 1: pid"),
	   "  and a warning naming what is wrong");
	run(show_main, show_c);
	ok(!has("Idle"), "show of a summary without \"idle\": no idle section");
	if (tap_failed_ != failed) {
		diag_output();
	}
}

int main(void)
{
	char cmd[128], dir[PATH_MAX];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/latsnap-test-idle.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	out_buf = calloc(1, OUT_MAX);
	if (!out_buf) {
		bail_out("out of memory");
	}
	test_read();
	test_absent();
	test_malformed();
	snprintf(dir, sizeof(dir), "%s/runs", tmpdir);
	write_two_runs(dir);
	test_sum(dir);
	test_report(dir);
	test_show(dir);
	snprintf(dir, sizeof(dir), "%s/many", tmpdir);
	test_many(dir);
	snprintf(dir, sizeof(dir), "%s/none", tmpdir);
	test_none(dir);
	free(out_buf);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
		diag("could not remove %s", tmpdir);
	}
	return tap_done();
}
