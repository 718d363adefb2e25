// SPDX-License-Identifier: GPL-2.0
/*
 * Stalls (record --hang) as report, flame and show read them: a wait reported while it still
 * waited is in the summaries again when it ends or when the run ends. An output directory of two
 * snapshots holds one wait reported still-blocked in the first and ended in the second, and a
 * deadlock of two threads (still-blocked with their holders in the first, unfinished in the
 * second), beside an ordinary outlier. Each wait must be counted once, by its latest report,
 * the Stalls section must name the deadlock's threads and holders, show must say STILL BLOCKED
 * and UNFINISHED and print the holder, and flame must weigh each wait once.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <sys/stat.h>

#include "lib/outlier.h"
#include "review/flame.h"
#include "review/report.h"
#include "review/show.h"
#include "review/snapshots.h"
#include "tap.h"

#define SNAP_A "20260101T000000.000Z-0001"
#define SNAP_B "20260101T000010.000Z-0002"
#define OUT_MAX (1 << 20)

static char tmpdir[64];
static char *out_buf;
static char err_buf[4096];

/* What the last run() printed, after a failed check. */
static void diag_output(void)
{
	diag("stdout: %s", out_buf);
	diag("stderr: %s", err_buf);
}

/* One OUTLIER: @flag NULL for none, @holder (freed) a JSON object or "null". */
static char *outlier(const char *comm, int pid, int tid, const char *syscall, uint64_t start,
		     uint64_t dur, const char *cause, const char *flag, char *holder,
		     const char *kframe)
{
	char *s;

	if (asprintf(&s,
		     "{\"kind\":\"syscall\",\"pid\":%d,\"tid\":%d,\"comm\":\"%s\","
		     "\"syscall\":\"%s\",\"syscall_nr\":0,\"start_ns\":%" PRIu64
		     ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"on_cpu_ns\":0,"
		     "\"blocked_ns\":%" PRIu64 ",\"runqueue_ns\":0,\"switches\":1,"
		     "\"cause\":\"%s\",\"kernel_stacks\":[{\"weight_ns\":%" PRIu64 ",\"frames\":["
		     "{\"addr\":\"0xffffffff81000010\",\"symbol\":\"%s\",\"offset\":1,"
		     "\"module\":\"kernel\"}]}],"
		     "\"user_stack\":{\"source\":\"frame-pointer\",\"frames\":["
		     "{\"addr\":\"0x401000\",\"symbol\":\"main\",\"offset\":1,\"module\":\"/bin/%s\"}]},"
		     "\"waker\":null,\"holder\":%s,\"wait_chain\":[],\"flags\":[%s%s%s]}",
		     pid, tid, comm, syscall, start, start + dur, dur, dur, cause, dur, kframe,
		     comm, holder, flag ? "\"" : "", flag ? flag : "", flag ? "\"" : "") < 0) {
		bail_out("out of memory");
	}
	free(holder);
	return s;
}

static char *no_holder(void)
{
	char *s = strdup("null");

	if (!s) {
		bail_out("out of memory");
	}
	return s;
}

static char *holder(const char *comm, int pid, int tid, const char *what, const char *state,
		    const char *ufunc, const char *kfunc)
{
	char *s;

	if (asprintf(&s,
		     "{\"pid\":%d,\"tid\":%d,\"comm\":\"%s\",\"what\":\"%s\",\"state\":\"%s\","
		     "\"frames\":[{\"addr\":\"0x401200\",\"symbol\":\"%s\",\"offset\":4,"
		     "\"module\":\"/bin/%s\"},{\"addr\":\"0x401000\",\"symbol\":\"main\","
		     "\"offset\":1,\"module\":\"/bin/%s\"}],"
		     "\"kernel_frames\":[{\"addr\":\"0xffffffff81000100\",\"symbol\":\"%s\","
		     "\"offset\":2,\"module\":\"kernel\"}]}",
		     pid, tid, comm, what, state, ufunc, comm, comm, kfunc) < 0) {
		bail_out("out of memory");
	}
	return s;
}

/* DIR/ID/summary.json holding the outliers @o[0..@n) (freed), and an empty DIR/ID/trace/. */
static void write_snapshot(const char *dir, const char *id, char **o, size_t n)
{
	char *text, *all = strdup(""), *grown;
	size_t i;

	for (i = 0; all && i < n; i++) {
		if (asprintf(&grown, "%s%s%s", all, i ? "," : "", o[i]) < 0) {
			bail_out("out of memory");
		}
		free(all);
		free(o[i]);
		all = grown;
	}
	if (!all || asprintf(&text,
			     "{\"version\":1,\"id\":\"%s\",\"host\":\"h\","
			     "\"created\":\"2026-01-01T00:00:00Z\",\"trace\":\"trace\","
			     "\"skipped\":0,\"flags\":[],\"outliers\":[%s]}",
			     id, all) < 0) {
		bail_out("out of memory");
	}
	tap_write_snapshot(dir, id, text);
	free(text);
	free(all);
}

#define SEC 1000000000ULL
#define DEADLOCK "Deadlock: pthread mutex cycle a[201] -> b[202] -> a[201]"

/*
 * DIR/SNAP_A: srv still-blocked (held by writer), a and b deadlocked, still-blocked; other, an
 * ordinary outlier. DIR/SNAP_B: srv ended (longer, no holder), a and b unfinished.
 */
static void write_stalls(const char *dir)
{
	char *a[4], *b[3];

	mkdir(dir, 0700);
	a[0] = outlier("srv", 100, 101, "read", 1000, 2 * SEC, "Reading from a pipe",
		       "still-blocked: blocked for 2.000 s so far",
		       holder("writer", 300, 300, "pipe:[1234] write end", "stopped", "emit",
			      "do_signal_stop"),
		       "pipe_read");
	a[1] = outlier("a", 200, 201, "futex", 5000, 2 * SEC, DEADLOCK,
		       "still-blocked: blocked for 2.000 s so far",
		       holder("b", 200, 202, "pthread mutex 0x1000", "blocked in futex", "lock_b",
			      "futex_wait_queue"),
		       "futex_wait_queue");
	a[2] = outlier("b", 200, 202, "futex", 6000, 2 * SEC, DEADLOCK,
		       "still-blocked: blocked for 2.000 s so far",
		       holder("a", 200, 201, "pthread mutex 0x2000", "blocked in futex", "lock_a",
			      "futex_wait_queue"),
		       "futex_wait_queue");
	a[3] = outlier("other", 400, 400, "write", 7000, SEC / 10, "Writing to disk", NULL,
		       no_holder(), "io_schedule");
	write_snapshot(dir, SNAP_A, a, 4);
	b[0] = outlier("srv", 100, 101, "read", 1000, 3 * SEC, "Reading from a pipe", NULL,
		       no_holder(), "pipe_read");
	b[1] = outlier("a", 200, 201, "futex", 5000, 5 * SEC, DEADLOCK,
		       "unfinished: the run ended while it waited",
		       holder("b", 200, 202, "pthread mutex 0x1000", "blocked in futex", "lock_b",
			      "futex_wait_queue"),
		       "futex_wait_queue");
	b[2] = outlier("b", 200, 202, "futex", 6000, 5 * SEC, DEADLOCK,
		       "unfinished: the run ended while it waited",
		       holder("a", 200, 201, "pthread mutex 0x2000", "blocked in futex", "lock_a",
			      "futex_wait_queue"),
		       "futex_wait_queue");
	write_snapshot(dir, SNAP_B, b, 3);
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

static size_t count_of(const char *text)
{
	size_t n = 0;
	const char *p;

	for (p = strstr(out_buf, text); p; p = strstr(p + 1, text)) {
		n++;
	}
	return n;
}

static void test_waits(const char *dir)
{
	struct snapshot_set set;
	struct snapshot_wait *w = NULL;
	size_t nr = 0, i;

	if (!is_int(snapshots_load(dir, &set), 0, "the directory of two snapshots loads")) {
		return;
	}
	ok(!snapshots_waits(&set, &w, &nr), "snapshots_waits()");
	is_int((int)nr, 4, "  4 waits of 7 reports: srv, a, b and other once each");
	for (i = 0; i < nr; i++) {
		const struct outlier *o = w[i].o;

		if (o->tid == 101) {
			is_u64(o->duration_ns, 3 * SEC, "  srv: the ended report counts (3 s)");
			ok(w[i].stalled && w[i].reports == 2, "  srv: a stall reported twice");
			ok(w[i].holder && w[i].holder->tid == 300,
			   "  srv: its holder from the still-blocked report (the ended one has none)");
		} else if (o->tid == 201 || o->tid == 202) {
			is_int(o->state, OUTLIER_UNFINISHED, "  %s: the unfinished report counts",
			       o->comm);
			is_u64(o->duration_ns, 5 * SEC, "  %s: 5 s so far", o->comm);
			ok(w[i].stalled && snapshots_is_deadlock(o), "  %s: a deadlock", o->comm);
		} else {
			ok(!w[i].stalled && w[i].reports == 1, "  other: no stall, reported once");
		}
	}
	free(w);
	snapshots_free(&set);
}

static void test_report(const char *dir)
{
	const char *text[] = { "report", dir, NULL };
	const char *json[] = { "report", "--json", dir, NULL };
	const char *by_sys[] = { "report", "--by", "syscall", dir, NULL };
	int failed = tap_failed_;
	struct json_object *obj, *groups, *g, *stalls, *st;
	char avg[64] = "", max[64] = "";
	const char *line;
	int count = 0;
	size_t i;

	is_int(run(report_main, text), 0, "report: exit 0");
	ok(has(": 4 outliers, 13.100 s in all,"), "report: 4 outliers, 3 + 5 + 5 + 0.1 s");
	ok(has("Reading from a pipe") && has("\nStalls (waits reported while still blocked"),
	   "report: a Stalls section");
	ok(has("  Deadlock of 2 threads: a[200/201] -> b[200/202] -> a[200/201]\n"),
	   "report: the deadlock's cycle on one line");
	ok(has("    a[200/201] futex, 5.000 s so far, unfinished: " DEADLOCK
	       "; held by b[200/202] (pthread mutex 0x1000)\n"),
	   "report: a, unfinished, held by b");
	ok(has("    b[200/202] futex, 5.000 s so far, unfinished: " DEADLOCK
	       "; held by a[200/201] (pthread mutex 0x2000)\n"),
	   "report: b, unfinished, held by a");
	ok(has("  srv[100/101] read, 3.000 s, ended: Reading from a pipe; held by writer[300/300] "
	       "(pipe:[1234] write end)\n"),
	   "report: srv, ended after 3 s, held by writer");
	{
		const char *stalls = strstr(out_buf, "\nStalls (");
		const char *end = stalls ? strstr(stalls + 1, "\n\n") : NULL;
		const char *other = strstr(out_buf, "other[400/400]");

		ok(stalls && end && (!other || other < stalls || other > end),
		   "report: an ordinary outlier is no stall");
	}
	ok(has("\nLongest waits (held up by: the holder, else the thread that woke it):\n") &&
		   has("  srv[100/101] read: Reading from a pipe; held by writer[300/300] "
		       "(pipe:[1234] write end)"),
	   "report: Longest waits, each with its holder");
	if (tap_failed_ != failed) {
		diag_output();
	}

	is_int(run(report_main, by_sys), 0, "report --by syscall: exit 0");
	ok(has("\nread ") && has("\nfutex "), "  read and futex rows");
	/* The read row: 1 wait of 3 s, not 2 (2 s + 3 s). */
	line = strstr(out_buf, "\nread ");
	ok(line && sscanf(line, " read %d %63[0-9.] s %63[0-9.] s", &count, avg, max) == 3 &&
		   count == 1 && !strcmp(avg, "3.000") && !strcmp(max, "3.000"),
	   "  read: count 1, average and maximum 3 s");

	is_int(run(report_main, json), 0, "report --json: exit 0");
	obj = json_tokener_parse(out_buf);
	if (!ok(obj != NULL, "report --json is JSON")) {
		return;
	}
	is_int((int)json_object_get_int64(
		       json_object_object_get(json_object_object_get(obj, "system"), "count")),
	       4, "  system.count 4");
	groups = json_object_object_get(json_object_object_get(obj, "system"), "groups");
	for (i = 0; i < json_object_array_length(groups); i++) {
		g = json_object_array_get_idx(groups, i);
		if (!strcmp(json_object_get_string(json_object_object_get(g, "key")),
			    "Reading from a pipe")) {
			is_int((int)json_object_get_int64(json_object_object_get(g, "count")), 1,
			       "  cause 'Reading from a pipe': count 1");
			is_u64((uint64_t)json_object_get_int64(json_object_object_get(g, "max_ns")),
			       3 * SEC, "  and its maximum the ended 3 s");
			is_u64((uint64_t)json_object_get_int64(
				       json_object_object_get(g, "total_ns")),
			       3 * SEC, "  and its total 3 s");
		}
		if (!strcmp(json_object_get_string(json_object_object_get(g, "key")), DEADLOCK)) {
			is_int((int)json_object_get_int64(json_object_object_get(g, "count")), 2,
			       "  the deadlock's cause: count 2 (a and b once each)");
		}
	}
	stalls = json_object_object_get(obj, "stalls");
	if (is_int(stalls ? (int)json_object_array_length(stalls) : -1, 3, "  3 stalls")) {
		st = json_object_array_get_idx(stalls, 0);
		is_str(json_object_get_string(json_object_object_get(st, "comm")), "a",
		       "  the deadlock first: a");
		is_str(json_object_get_string(json_object_object_get(st, "state")), "unfinished",
		       "  state unfinished");
		ok(json_object_get_boolean(json_object_object_get(st, "deadlock")) &&
			   json_object_get_int(json_object_object_get(st, "cycle")) == 0,
		   "  deadlock true, cycle 0");
		is_str(json_object_get_string(json_object_object_get(
			       json_object_object_get(st, "holder"), "comm")),
		       "b", "  held by b");
		is_str(json_object_get_string(json_object_object_get(
			       json_object_object_get(st, "holder"), "what")),
		       "pthread mutex 0x1000", "  holding pthread mutex 0x1000");
		st = json_object_array_get_idx(stalls, 2);
		is_str(json_object_get_string(json_object_object_get(st, "comm")), "srv",
		       "  then srv");
		is_str(json_object_get_string(json_object_object_get(st, "state")), "ended",
		       "  state ended");
		is_int(json_object_get_int(json_object_object_get(st, "reports")), 2,
		       "  reported twice");
		ok(json_object_object_get(st, "cycle") == NULL &&
			   !json_object_get_boolean(json_object_object_get(st, "deadlock")),
		   "  no deadlock");
		is_str(json_object_get_string(json_object_object_get(st, "snapshot")), SNAP_B,
		       "  from the second snapshot");
	}
	json_object_put(obj);
}

static void test_no_stalls(const char *dir)
{
	const char *text[] = { "report", dir, NULL };
	const char *json[] = { "report", "--json", dir, NULL };
	struct json_object *obj;
	char *o[1];

	mkdir(dir, 0700);
	o[0] = outlier("other", 400, 400, "write", 7000, SEC / 10, "Writing to disk", NULL,
		       no_holder(), "io_schedule");
	write_snapshot(dir, SNAP_A, o, 1);
	is_int(run(report_main, text), 0, "report without stalls: exit 0");
	ok(!has("Stalls") && !has("Deadlock"), "  no Stalls section");
	is_int(run(report_main, json), 0, "report --json without stalls: exit 0");
	obj = json_tokener_parse(out_buf);
	ok(obj && json_object_array_length(json_object_object_get(obj, "stalls")) == 0,
	   "  stalls: []");
	json_object_put(obj);
}

/* @o with @chain (JSON) as its wait chain; @o is freed. */
static char *with_chain(char *o, const char *chain)
{
	const char *at = strstr(o, "\"wait_chain\":[]");
	char *s;

	if (!at || asprintf(&s, "%.*s\"wait_chain\":%s%s", (int)(at - o), o, chain,
			    at + strlen("\"wait_chain\":[]")) < 0) {
		bail_out("out of memory");
	}
	free(o);
	return s;
}

/*
 * Longest waits: a row lock's wait, held up by the thread of its wait chain (its holder, in its
 * own sleep meanwhile): named with that sleep's cause, longest first, in text and --json.
 */
static void test_longest(const char *dir)
{
	const char *text[] = { "report", dir, NULL };
	const char *json[] = { "report", "--json", dir, NULL };
	struct json_object *obj, *first = NULL, *second = NULL, *h = NULL;
	char *o[2], chain[512];

	mkdir(dir, 0700);
	snprintf(chain, sizeof(chain),
		 "[{\"depth\":1,\"pid\":10,\"tid\":12,\"comm\":\"db\",\"from_ns\":%" PRIu64
		 ",\"to_ns\":%" PRIu64 ",\"on_cpu_ns\":0,\"blocked_ns\":%" PRIu64
		 ",\"runqueue_ns\":0,\"syscall\":\"futex\",\"frames\":[]}]",
		 (uint64_t)(SEC + SEC / 10), (uint64_t)(SEC + SEC), (uint64_t)(SEC - SEC / 10));
	o[0] = with_chain(outlier("db", 10, 11, "futex", SEC + SEC / 10, SEC - SEC / 10,
				  "Row lock wait (InnoDB)", NULL, no_holder(), "futex_do_wait"),
			  chain);
	o[1] = outlier("db", 10, 12, "futex", SEC, SEC, "Requested sleep (SQL SLEEP())", NULL,
		       no_holder(), "futex_do_wait");
	write_snapshot(dir, SNAP_A, o, 2);
	is_int(run(report_main, text), 0, "report of a held-up wait: exit 0");
	ok(has("\nLongest waits (held up by: the holder, else the thread that woke it):\n"
	       "       1.000 s  db[10/12] futex: Requested sleep (SQL SLEEP())  [" SNAP_A "]\n"
	       "    900.000 ms  db[10/11] futex: Row lock wait (InnoDB); held up by db[10/12] (in "
	       "futex, blocked 100.0%: Requested sleep (SQL SLEEP()))  [" SNAP_A "]\n"),
	   "  Longest waits: longest first, the row lock held up by db[10/12] in its sleep");
	if (!has("held up by db[10/12]")) {
		diag_output();
	}
	is_int(run(report_main, json), 0, "report --json of a held-up wait: exit 0");
	obj = json_tokener_parse(out_buf);
	if (obj && json_object_array_length(json_object_object_get(obj, "longest")) == 2) {
		first = json_object_array_get_idx(json_object_object_get(obj, "longest"), 0);
		second = json_object_array_get_idx(json_object_object_get(obj, "longest"), 1);
		h = json_object_object_get(second, "held_up_by");
	}
	ok(first &&
		   json_object_is_type(json_object_object_get(first, "held_up_by"), json_type_null),
	   "  longest[0]: the sleep, held up by nobody");
	ok(h && json_object_get_int(json_object_object_get(h, "tid")) == 12 &&
		   !strcmp(json_object_get_string(json_object_object_get(h, "how")),
			   "wait-chain") &&
		   !strcmp(json_object_get_string(json_object_object_get(h, "cause")),
			   "Requested sleep (SQL SLEEP())"),
	   "  longest[1]: held_up_by tid 12, how wait-chain, its cause the sleep");
	json_object_put(obj);
}

/* @o with @member ("\"key\":value") added before its flags; @o is freed. */
static char *with_member(char *o, const char *member)
{
	const char *at = strstr(o, "\"flags\":");
	char *s;

	if (!at || asprintf(&s, "%.*s%s,%s", (int)(at - o), o, member, at) < 0) {
		bail_out("out of memory");
	}
	free(o);
	return s;
}

/*
 * The typed state: a wait still-blocked by its "state" alone (no flag) is a stall; a cause that
 * begins "Deadlock" (a user's rule) with "state" and no "deadlock" is none; a "deadlock" with its
 * threads is one. A summary with a state of another name loses that outlier only.
 */
static void test_typed_state(const char *dir)
{
	const char *json[] = { "report", "--json", dir, NULL };
	struct json_object *obj, *stalls;
	struct snapshot_set set;
	char *o[4];
	size_t i, n = 0;
	bool blocked = false, ruled = false, cycle = false;

	mkdir(dir, 0700);
	o[0] = with_member(outlier("w", 500, 501, "futex", SEC, 2 * SEC, "Lock", NULL, no_holder(),
				   "futex_do_wait"),
			   "\"state\":\"still-blocked\"");
	o[1] = with_member(outlier("r", 500, 502, "read", SEC, SEC, "Deadlock of the night shift",
				   NULL, no_holder(), "pipe_read"),
			   "\"state\":\"ended\",\"deadlock\":null");
	o[2] = with_member(outlier("d", 500, 503, "futex", SEC, 3 * SEC, "Two threads", NULL,
				   no_holder(), "futex_do_wait"),
			   "\"state\":\"unfinished\",\"deadlock\":{\"threads\":[{\"pid\":500,"
			   "\"tid\":503,\"comm\":\"d\"},{\"pid\":500,\"tid\":501,\"comm\":\"w\"}]}");
	o[3] = with_member(outlier("x", 500, 504, "futex", SEC, SEC, "Lock", NULL, no_holder(),
				   "futex_do_wait"),
			   "\"state\":\"paused\"");
	write_snapshot(dir, SNAP_A, o, 4);
	if (is_int(snapshots_load(dir, &set), 0, "typed state: the snapshot loads")) {
		ok(set.snaps[0].summary && set.snaps[0].summary->nr_outliers == 3 &&
			   set.snaps[0].summary->outliers_why &&
			   strstr(set.snaps[0].summary->outliers_why, "state is not ended"),
		   "  the outlier whose state is \"paused\" is skipped, and said (%s)",
		   set.snaps[0].summary ? set.snaps[0].summary->outliers_why : "-");
		for (i = 0; set.snaps[0].summary && i < set.snaps[0].summary->nr_outliers; i++) {
			const struct outlier *x = set.snaps[0].summary->outliers[i];

			blocked |= x->tid == 501 && x->state == OUTLIER_STILL_BLOCKED;
			ruled |= x->tid == 502 && !snapshots_is_deadlock(x);
			cycle |= x->tid == 503 && snapshots_is_deadlock(x) && x->deadlock->nr == 2 &&
				 x->deadlock->threads[1].tid == 501;
		}
		ok(blocked, "  \"state\": \"still-blocked\" without its flag: still-blocked");
		ok(ruled, "  a rule's cause beginning \"Deadlock\", deadlock null: no deadlock");
		ok(cycle, "  \"deadlock\" with its two threads: a deadlock, its cycle read");
		snapshots_free(&set);
	}
	is_int(run(report_main, json), 0, "typed state: report --json exits 0");
	obj = json_tokener_parse(out_buf);
	stalls = obj ? json_object_object_get(obj, "stalls") : NULL;
	n = stalls ? json_object_array_length(stalls) : 0;
	for (i = 0; i < n; i++) {
		ok(json_object_get_int(json_object_object_get(json_object_array_get_idx(stalls, i),
							      "tid")) != 502,
		   "  stall %zu is not the rule's \"Deadlock\"", i);
	}
	is_int((int)n, 2, "  two stalls: the still-blocked wait and the deadlock's member");
	json_object_put(obj);
}

static void test_flame(const char *dir)
{
	const char *args[] = { "flame", dir, NULL };

	is_int(run(flame_main, args), 0, "flame: exit 0");
	is_str(out_buf,
	       "a;main;-;futex_wait_queue 5000000000\n"
	       "b;main;-;futex_wait_queue 5000000000\n"
	       "other;main;-;io_schedule 100000000\n"
	       "srv;main;-;pipe_read 3000000000\n",
	       "flame: each wait weighed once, by its ended or unfinished report");
}

static void test_flame_summary(const char *dir)
{
	static const char want[] = "srv;main;-;pipe_read 3000000000\n";
	struct summary *s = NULL;
	struct flame f = { 0 };
	char path[PATH_MAX], why[256], *text = NULL, *buf = NULL;
	char *o[2];
	size_t len = 0;
	FILE *in, *mem;
	long n;

	/* Both reports in one snapshot: the ended one, written first, still counts. */
	mkdir(dir, 0700);
	o[0] = outlier("srv", 100, 101, "read", 1000, 3 * SEC, "Reading from a pipe", NULL,
		       no_holder(), "pipe_read");
	o[1] = outlier("srv", 100, 101, "read", 1000, 2 * SEC, "Reading from a pipe",
		       "still-blocked: blocked for 2.000 s so far", no_holder(), "pipe_read");
	write_snapshot(dir, SNAP_A, o, 2);
	snprintf(path, sizeof(path), "%s/%s/summary.json", dir, SNAP_A);
	in = fopen(path, "r");
	if (!in || fseek(in, 0, SEEK_END) || (n = ftell(in)) < 0 || fseek(in, 0, SEEK_SET) ||
	    !(text = calloc(1, (size_t)n + 1)) || fread(text, 1, (size_t)n, in) != (size_t)n) {
		bail_out("cannot read %s", path);
	}
	fclose(in);
	if (snapshots_parse_summary(text, (size_t)n, "S", &s, why, sizeof(why))) {
		bail_out("the summary: %s", why);
	}
	ok(!flame_add_summary(&f, s), "flame_add_summary() of one summary with both reports");
	flame_finish(&f);
	mem = open_memstream(&buf, &len);
	ok(mem && !flame_write_folded(mem, &f) && !fclose(mem), "  folded");
	is_str(buf, want, "  the wait weighed once, by its ended report");
	free(buf);
	flame_free(&f);
	summary_free(s);
	free(text);
}

static void test_show(const char *dir)
{
	char a[PATH_MAX], b[PATH_MAX];
	const char *show_a[] = { "show", a, NULL };
	const char *show_b[] = { "show", b, NULL };
	const char *json_a[] = { "show", "--json", a, NULL };
	struct json_object *obj, *o, *h;
	int failed = tap_failed_;

	snprintf(a, sizeof(a), "%s/%s", dir, SNAP_A);
	snprintf(b, sizeof(b), "%s/%s", dir, SNAP_B);
	/* The trace is an empty directory: exit 1 for it, the summary still shown. */
	run(show_main, show_a);
	ok(has("STILL BLOCKED (reported after 2.000 s while waiting)\nsyscall futex  a[pid 200 "
	       "tid 201]"),
	   "show: a's header says STILL BLOCKED, after 2 s");
	is_int((int)count_of("STILL BLOCKED"), 3, "  so does srv's and b's, not other's");
	ok(has("  held by b[pid 200 tid 202], what: pthread mutex 0x1000, state: blocked in "
	       "futex\n"),
	   "  a is held by b: who, what, state");
	ok(has("  -- holder's user stack, outermost first:\n    main+0x1  (b)\n    lock_b+0x4  "
	       "(b)\n"),
	   "  the holder's user frames, outermost first");
	ok(has("  -- holder's kernel stack, outermost first:\n    futex_wait_queue+0x2\n"),
	   "  then its kernel frames");
	ok(has("  held by writer[pid 300 tid 300], what: pipe:[1234] write end, state: stopped\n"),
	   "  srv is held by writer");
	is_int((int)count_of("  held by "), 3, "  each holder printed once");
	if (!ok(!has("held up by"), "  not twice (lib/outlier.c's own holder text is not used)") ||
	    tap_failed_ != failed) {
		diag_output();
	}

	run(show_main, show_b);
	ok(has("UNFINISHED (the run ended while it waited, 5.000 s so far)\nsyscall futex  "
	       "a[pid 200 tid 201]"),
	   "show: a's header in the second snapshot says UNFINISHED");
	is_int((int)count_of("UNFINISHED"), 2, "  so does b's, not srv's (ended)");
	ok(!has("STILL BLOCKED"), "  nothing still blocked there");

	run(show_main, json_a);
	obj = json_tokener_parse(out_buf);
	o = obj ? json_object_array_get_idx(json_object_object_get(obj, "outliers"), 1) : NULL;
	h = o ? json_object_object_get(o, "holder") : NULL;
	if (ok(h != NULL, "show --json: the holder passes through")) {
		is_int(json_object_get_int(json_object_object_get(h, "tid")), 202, "  its tid");
		is_str(json_object_get_string(json_object_object_get(h, "what")),
		       "pthread mutex 0x1000", "  what it holds");
		is_str(json_object_get_string(json_object_object_get(h, "state")),
		       "blocked in futex", "  its state");
		is_str(json_object_get_string(json_object_object_get(
			       json_object_array_get_idx(json_object_object_get(h, "frames"), 0),
			       "symbol")),
		       "lock_b", "  its user frames");
		is_str(json_object_get_string(json_object_object_get(
			       json_object_array_get_idx(json_object_object_get(h, "kernel_frames"),
							 0),
			       "symbol")),
		       "futex_wait_queue", "  its kernel frames");
		is_str(json_object_get_string(
			       json_object_array_get_idx(json_object_object_get(o, "flags"), 0)),
		       "still-blocked: blocked for 2.000 s so far", "  the still-blocked flag");
	}
	json_object_put(obj);
}

static void test_bad_holder(void)
{
	static const char bad[] =
		"{\"version\":1,\"id\":\"A\",\"host\":\"h\",\"outliers\":[{\"kind\":\"syscall\","
		"\"pid\":1,\"tid\":1,\"comm\":\"x\",\"start_ns\":0,\"end_ns\":1,\"duration_ns\":1,"
		"\"on_cpu_ns\":0,\"blocked_ns\":1,\"runqueue_ns\":0,\"cause\":\"c\","
		"\"kernel_stacks\":[],\"user_stack\":{\"source\":\"none\",\"frames\":[]},"
		"\"holder\":{\"pid\":2,\"tid\":2,\"comm\":\"y\",\"frames\":[{\"addr\":1}]}}]}";
	struct summary *s = NULL;
	char why[256] = "";

	ok(snapshots_parse_summary(bad, strlen(bad), "S", &s, why, sizeof(why)) == 0 && s &&
		   s->nr_outliers == 0,
	   "a holder with a bad frame: that outlier is left out, not the summary");
	ok(s && s->outliers_why && strstr(s->outliers_why, "holder's frames") != NULL,
	   "  naming the holder: %s", s && s->outliers_why ? s->outliers_why : "(nothing)");
	summary_free(s);
}

int main(void)
{
	char dir[256], cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/latsnap-test-stalls.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	out_buf = malloc(OUT_MAX);
	if (!out_buf) {
		bail_out("out of memory");
	}
	snprintf(dir, sizeof(dir), "%s/out", tmpdir);
	write_stalls(dir);
	test_waits(dir);
	test_report(dir);
	test_flame(dir);
	test_show(dir);
	snprintf(dir, sizeof(dir), "%s/quiet", tmpdir);
	test_no_stalls(dir);
	snprintf(dir, sizeof(dir), "%s/longest", tmpdir);
	test_longest(dir);
	snprintf(dir, sizeof(dir), "%s/typed", tmpdir);
	test_typed_state(dir);
	snprintf(dir, sizeof(dir), "%s/one", tmpdir);
	test_flame_summary(dir);
	test_bad_holder();
	free(out_buf);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
		diag("could not remove %s", tmpdir);
	}
	return tap_done();
}
