// SPDX-License-Identifier: GPL-2.0
/*
 * Request outliers (record --request): the span of one thread between two probes, with its waits
 * and its CPU profile. Their causes (the built-in rules and a rules file of user: and cpu:
 * rules), and how report --by request, report --by cause, flame and show read them from an
 * output directory of crafted summaries.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "classify/rules.h"
#include "lib/outlier.h"
#include "review/flame.h"
#include "review/report.h"
#include "review/show.h"
#include "tap.h"

#define MS ((uint64_t)1000000)
#define SEC ((uint64_t)1000000000)
#define SNAP_A "20260101T000000.000Z-0001"
#define OUT_MAX (1 << 20)
#define PG "/usr/lib/postgresql/16/bin/postgres"
#define PROBE "usdt:" PG ":postgresql:query__start,usdt:" PG ":postgresql:query__done"
#define LOCK "Lock wait (PostgreSQL heavyweight lock)"

static char tmpdir[64];
static char *out_buf;
static char err_buf[4096];

/* printf into a new string. */
static __attribute__((format(printf, 1, 2))) char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	if (n < 0) {
		bail_out("out of memory");
	}
	return s;
}

/* @a and @b (both freed) joined by ",". */
static char *join(char *a, char *b)
{
	char *s = fmt("%s%s%s", a, *a && *b ? "," : "", b);

	free(a);
	free(b);
	return s;
}

/*
 * FRAMEs of the words of @syms ("a b c", innermost first; "" for none): kernel frames at kernel
 * addresses when @kernel, else user frames of postgres.
 */
static char *frames(const char *syms, bool kernel)
{
	char *copy = strdup(syms), *save, *w, *all = strdup("");
	unsigned int i = 0;

	if (!copy || !all) {
		bail_out("out of memory");
	}
	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save), i++) {
		all = join(all, kernel ? fmt("{\"addr\":\"0xffffffff8100%04x\",\"symbol\":\"%s\","
					     "\"offset\":4,\"module\":\"kernel\"}",
					     i * 16, w) :
					 fmt("{\"addr\":\"0x5%05x\",\"symbol\":\"%s\",\"offset\":8,"
					     "\"module\":\"" PG "\"}",
					     i * 16, w));
	}
	free(copy);
	return all;
}

/* A wait (a syscall outlier, NULL @syscall a sleep) of postgres 500, @dur all blocked. */
static char *wait_json(const char *syscall, uint64_t start, uint64_t dur, const char *cause,
		       const char *kframes, const char *uframes)
{
	char *k = frames(kframes, true), *u = frames(uframes, false), *s;

	s = fmt("{\"kind\":\"%s\",\"pid\":500,\"tid\":500,\"comm\":\"postgres\","
		"\"syscall\":%s%s%s,\"syscall_nr\":0,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"duration_ns\":%" PRIu64 ",\"on_cpu_ns\":0,\"blocked_ns\":%" PRIu64
		",\"runqueue_ns\":0,\"switches\":1,\"cause\":\"%s\","
		"\"kernel_stacks\":[{\"weight_ns\":%" PRIu64 ",\"frames\":[%s]}],"
		"\"user_stack\":{\"source\":\"unwind\",\"frames\":[%s]},\"waker\":null,"
		"\"wait_chain\":[],\"flags\":[]}",
		syscall ? "syscall" : "sleep", syscall ? "\"" : "", syscall ? syscall : "null",
		syscall ? "\"" : "", start, start + dur, dur, dur, cause, dur, k, u);
	free(k);
	free(u);
	return s;
}

/* A sampled on-CPU stack: its kernel frames, then its user frames, innermost first. */
static char *sample_json(uint64_t weight, const char *kframes, const char *uframes)
{
	char *k = frames(kframes, true), *u = frames(uframes, false), *s;

	s = fmt("{\"weight_ns\":%" PRIu64 ",\"frames\":[%s%s%s]}", weight, k, *k && *u ? "," : "",
		u);
	free(k);
	free(u);
	return s;
}

/*
 * A request of postgres @pid between the query probes, @arg its query (JSON-escaped, or NULL),
 * with the waits @waits and the samples @profile (joined OUTLIERs and stacks, freed), and no
 * stacks of its own.
 */
static char *request_json(int pid, uint64_t start, uint64_t dur, uint64_t on_cpu, uint64_t blocked,
			  uint64_t runq, const char *cause, const char *arg, char *waits,
			  char *profile)
{
	char *s;

	s = fmt("{\"kind\":\"request\",\"pid\":%d,\"tid\":%d,\"comm\":\"postgres\","
		"\"syscall\":null,\"syscall_nr\":null,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"duration_ns\":%" PRIu64 ",\"on_cpu_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64
		",\"runqueue_ns\":%" PRIu64 ",\"switches\":3,\"cause\":\"%s\","
		"\"request\":{\"probe\":\"" PROBE "\",\"arg\":%s%s%s},"
		"\"waits\":[%s],\"cpu_profile\":[%s],"
		"\"kernel_stacks\":[],\"user_stack\":{\"source\":\"none\",\"frames\":[]},"
		"\"waker\":null,\"wait_chain\":[],\"flags\":[]}",
		pid, pid, start, start + dur, dur, on_cpu, blocked, runq, cause, arg ? "\"" : "",
		arg ? arg : "null", arg ? "\"" : "", waits, profile);
	free(waits);
	free(profile);
	return s;
}

static char *none(void)
{
	char *s = strdup("");

	if (!s) {
		bail_out("out of memory");
	}
	return s;
}

/* The outlier of an OUTLIER in JSON (@json freed). */
static struct outlier *to_outlier(char *json)
{
	struct json_object *obj = json_tokener_parse(json);
	struct outlier *o = NULL;

	if (!obj || outlier_from_json(obj, &o)) {
		bail_out("a test outlier does not read: %s", json);
	}
	json_object_put(obj);
	free(json);
	return o;
}

/* rules_classify() of @o (freed) must say @cause, @priority, @categorized. */
static void classifies(const char *name, const struct rules *rules, struct outlier *o,
		       const char *cause, int priority, bool categorized)
{
	struct rules_match m = { NULL, -1, !categorized };

	rules_classify(rules, o, &m);
	is_str(m.cause, cause, "%s: cause", name);
	is_int(m.priority, priority, "%s: priority", name);
	is_int(m.categorized, categorized, "%s: %s", name,
	       categorized ? "categorized" : "uncategorized");
	outlier_free(o);
}

#define LOCK_STACK                                                    \
	"epoll_wait WaitEventSetWait WaitLatch ProcSleep WaitOnLock " \
	"LockAcquireExtended LockRelationOid exec_simple_query PostgresMain main"
#define SORT_STACK "tuplesort_performsort ExecSort ExecProcNode PortalRun exec_simple_query main"
#define SCAN_STACK "slot_deform_heap_tuple ExecInterpExpr ExecProcNode PortalRun main"

/* The built-in rules on requests: their waits' user frames, their samples, their split. */
static void test_builtin(void)
{
	const struct rules *rules = rules_builtin();
	struct outlier *o;
	size_t i;

	if (!ok(rules != NULL, "the built-in rules parse")) {
		return;
	}
	classifies("a request blocked in a heavyweight lock wait", rules,
		   to_outlier(request_json(
			   500, SEC, 100 * MS, 10 * MS, 90 * MS, 0, "", NULL,
			   join(wait_json("epoll_wait", SEC + 5 * MS, 80 * MS, "", "do_epoll_wait",
					  LOCK_STACK),
				wait_json("pread64", SEC + 90 * MS, 10 * MS, "",
					  "folio_wait_bit_common filemap_get_pages filemap_read",
					  "pread64 FileRead mdread ReadBuffer_common main")),
			   none())),
		   LOCK, 460, true);
	classifies("a request blocked in an LWLock wait (a semaphore)", rules,
		   to_outlier(request_json(
			   500, SEC, 100 * MS, 10 * MS, 90 * MS, 0, "", NULL,
			   wait_json("futex", SEC, 90 * MS, "", "futex_do_wait",
				     "do_futex_wait __new_sem_wait_slow64 PGSemaphoreLock "
				     "LWLockAcquire XLogFlush main"),
			   none())),
		   "LWLock wait (PostgreSQL)", 470, true);
	classifies("the waits of one cause add up: two pipe reads beat one lock wait", rules,
		   to_outlier(request_json(500, SEC, 100 * MS, 10 * MS, 90 * MS, 0, "", NULL,
					   join(join(wait_json("read", SEC, 30 * MS, "",
							       "anon_pipe_read", "read main"),
						     wait_json("epoll_wait", SEC + 30 * MS, 50 * MS,
							       "", "do_epoll_wait", LOCK_STACK)),
						wait_json("read", SEC + 80 * MS, 30 * MS, "",
							  "anon_pipe_read", "read main")),
					   none())),
		   "Reading from a pipe", 400, true);
	classifies("a request on CPU: its samples name it", rules,
		   to_outlier(request_json(500, SEC, 200 * MS, 180 * MS, 20 * MS, 0, "", NULL,
					   none(),
					   join(sample_json(120 * MS, "", SORT_STACK),
						sample_json(60 * MS, "", SCAN_STACK)))),
		   "Computing: sorting (PostgreSQL)", 300, true);
	classifies("a request on CPU whose unnamed samples weigh more", rules,
		   to_outlier(request_json(500, SEC, 200 * MS, 180 * MS, 20 * MS, 0, "", NULL,
					   none(),
					   join(sample_json(50 * MS, "", SORT_STACK),
						sample_json(130 * MS, "", SCAN_STACK)))),
		   RULES_CAUSE_COMPUTING, 0, true);
	classifies("a request on CPU in page faults (kernel frames of a sample)", rules,
		   to_outlier(request_json(
			   500, SEC, 10 * MS, 9 * MS, 1 * MS, 0, "", NULL, none(),
			   sample_json(9 * MS,
				       "clear_page_erms do_anonymous_page handle_mm_fault "
				       "exc_page_fault asm_exc_page_fault",
				       "memset palloc0 main"))),
		   "Computing: page faults (in the kernel)", 490, true);
	classifies("a request on CPU half of its time, without samples", rules,
		   to_outlier(request_json(500, SEC, 10 * MS, 5 * MS, 5 * MS, 0, "", NULL, none(),
					   none())),
		   RULES_CAUSE_COMPUTING, 0, true);
	classifies("a request mostly waiting for a CPU", rules,
		   to_outlier(request_json(500, SEC, 10 * MS, 2 * MS, 2 * MS, 6 * MS, "", NULL,
					   wait_json("epoll_wait", SEC, 2 * MS, "", "do_epoll_wait",
						     LOCK_STACK),
					   none())),
		   RULES_CAUSE_CPU, 0, true);
	classifies("a request blocked without waits", rules,
		   to_outlier(request_json(500, SEC, 10 * MS, 2 * MS, 8 * MS, 0, "", NULL, none(),
					   none())),
		   RULES_CAUSE_REQUEST_BLOCKED, 0, false);

	/* Each wait gets its own cause. */
	o = to_outlier(
		request_json(500, SEC, 100 * MS, 10 * MS, 90 * MS, 0, "", NULL,
			     join(wait_json("epoll_wait", SEC + 5 * MS, 80 * MS, "",
					    "do_epoll_wait", LOCK_STACK),
				  wait_json("pread64", SEC + 90 * MS, 10 * MS, "",
					    "folio_wait_bit_common filemap_get_pages filemap_read",
					    "pread64 FileRead main")),
			     none()));
	is_int(rules_classify_waits(rules, o), 0, "rules_classify_waits()");
	is_str(o->waits[0]->cause, LOCK, "  the lock wait's cause");
	is_str(o->waits[1]->cause, "Reading a file from disk", "  the read's cause");
	for (i = 0; i < o->nr_waits; i++) {
		outlier_free(o->waits[i]);
	}
	o->nr_waits = 0;
	is_int(rules_classify_waits(rules, o), 0, "rules_classify_waits() without waits");
	outlier_free(o);
}

/* A rules file of user: and cpu: rules, and a bad one. */
static void test_rules_file(void)
{
	static const char text[] = "# requests\n"
				   "460 user:ProcSleep|WaitOnLock = Lock wait (custom)\n"
				   "300 cpu:hot_loop|warm_* = Hot loop\n"
				   "100 cpu:* kernel:memcpy* = Copying in the kernel\n"
				   "50 user:main = Anything from main\n";
	static const char bad[] =
		"460 user:ProcSleep|WaitOnLock = Lock\n\n10 user:ProcSleep|| = X\n";
	struct rules *rules = NULL;
	struct tap_capture c;
	char *path, err[1024], want[1200];

	path = tap_write_temp(text, sizeof(text) - 1);
	if (!is_int(rules_load(path, &rules), 0, "a rules file with user: and cpu: rules loads")) {
		tap_remove_temp(path);
		return;
	}
	tap_remove_temp(path);
	classifies(
		"rules file: a user: rule names the dominant wait", rules,
		to_outlier(request_json(
			500, SEC, 100 * MS, 10 * MS, 90 * MS, 0, "", NULL,
			join(wait_json("epoll_wait", SEC, 80 * MS, "", "do_epoll_wait", LOCK_STACK),
			     wait_json("read", SEC + 80 * MS, 10 * MS, "", "x", "read main")),
			none())),
		"Lock wait (custom)", 460, true);
	classifies("rules file: a cpu: rule, by a user frame", rules,
		   to_outlier(request_json(500, SEC, 100 * MS, 90 * MS, 10 * MS, 0, "", NULL,
					   none(),
					   sample_json(90 * MS, "", "warm_up compute main"))),
		   "Hot loop", 300, true);
	classifies("rules file: cpu:* with kernel: looks at the sample's kernel frames", rules,
		   to_outlier(request_json(
			   500, SEC, 100 * MS, 90 * MS, 10 * MS, 0, "", NULL, none(),
			   sample_json(90 * MS, "memcpy_orig _copy_to_iter", "read main"))),
		   "Copying in the kernel", 100, true);
	classifies("rules file: ... and not at its user frames", rules,
		   to_outlier(request_json(500, SEC, 100 * MS, 90 * MS, 10 * MS, 0, "", NULL,
					   none(),
					   sample_json(90 * MS, "", "memcpy_avx copy main"))),
		   RULES_CAUSE_COMPUTING, 0, true);
	classifies("rules file: a user: rule never names a sample", rules,
		   to_outlier(request_json(500, SEC, 100 * MS, 90 * MS, 10 * MS, 0, "", NULL,
					   none(),
					   sample_json(90 * MS, "", "WaitOnLock odd main"))),
		   RULES_CAUSE_COMPUTING, 0, true);
	classifies("rules file: a syscall outlier as ever", rules,
		   to_outlier(wait_json("read", SEC, 10 * MS, "", "x", "read main")),
		   "Anything from main", 50, true);
	rules_free(rules);

	path = tap_write_temp(bad, sizeof(bad) - 1);
	rules = (struct rules *)1;
	tap_capture_begin(&c, STDERR_FILENO);
	is_int(rules_load(path, &rules), -EINVAL, "a bad user: alternative: -EINVAL");
	tap_capture_end(&c, err, sizeof(err));
	ok(!rules, "  no rules");
	snprintf(want, sizeof(want), "latsnap: %s:3: empty alternative in 'user:ProcSleep||'\n",
		 path);
	is_str(err, want, "  FILE:LINE: why");
	tap_remove_temp(path);
}

/* DIR/ID/summary.json holding the outliers @o (joined, freed), and an empty DIR/ID/trace/. */
static void write_snapshot(const char *dir, const char *id, char *o)
{
	char *text;

	text = fmt("{\"version\":1,\"id\":\"%s\",\"host\":\"h\","
		   "\"created\":\"2026-01-01T00:00:00Z\",\"trace\":\"trace\","
		   "\"skipped\":0,\"flags\":[],\"outliers\":[%s]}",
		   id, o);
	free(o);
	tap_write_snapshot(dir, id, text);
	free(text);
}

#define LONG_QUERY                                                                             \
	"SELECT b.kind, count(*) FROM big_table b JOIN other o ON o.id = b.other_id GROUP BY " \
	"b.kind ORDER BY 2 DESC"

/*
 * Three requests of postgres: the same query twice (its text spaced differently), blocked in a
 * lock wait, and a long query on CPU; and an ordinary outlier of another process.
 */
static void write_requests(const char *dir)
{
	char *r1, *r2, *r3, *other;

	/* The waits out of order: show puts them in time order. */
	r1 = request_json(500, SEC, 100 * MS, 10 * MS, 90 * MS, 0, LOCK,
			  "SELECT * FROM accounts\\n   WHERE id = 1 FOR UPDATE",
			  join(wait_json("pread64", SEC + 90 * MS, 10 * MS,
					 "Reading a file from disk", "filemap_read",
					 "pread64 FileRead main"),
			       wait_json("epoll_wait", SEC + 5 * MS, 80 * MS, LOCK, "do_epoll_wait",
					 LOCK_STACK)),
			  join(sample_json(4 * MS, "", SCAN_STACK),
			       sample_json(6 * MS, "clear_page_erms asm_exc_page_fault",
					   "memset palloc0 main")));
	r2 = request_json(500, 2 * SEC, 50 * MS, 5 * MS, 45 * MS, 0, LOCK,
			  "SELECT * FROM accounts WHERE id = 1 FOR UPDATE",
			  wait_json("epoll_wait", 2 * SEC + MS, 45 * MS, LOCK, "do_epoll_wait",
				    LOCK_STACK),
			  none());
	r3 = request_json(501, 3 * SEC, 200 * MS, 180 * MS, 20 * MS, 0,
			  "Computing: sorting (PostgreSQL)", LONG_QUERY, none(),
			  join(sample_json(120 * MS, "", SORT_STACK),
			       sample_json(60 * MS, "", SCAN_STACK)));
	other = fmt("{\"kind\":\"syscall\",\"pid\":600,\"tid\":600,\"comm\":\"cat\","
		    "\"syscall\":\"read\",\"syscall_nr\":0,\"start_ns\":%" PRIu64
		    ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"on_cpu_ns\":0,"
		    "\"blocked_ns\":%" PRIu64 ",\"runqueue_ns\":0,\"switches\":1,"
		    "\"cause\":\"Reading from a pipe\",\"kernel_stacks\":[{\"weight_ns\":%" PRIu64
		    ",\"frames\":[{\"addr\":\"0xffffffff81000010\",\"symbol\":\"anon_pipe_read\","
		    "\"offset\":1,\"module\":\"kernel\"}]}],"
		    "\"user_stack\":{\"source\":\"frame-pointer\",\"frames\":[{\"addr\":"
		    "\"0x401000\",\"symbol\":\"main\",\"offset\":1,\"module\":\"/bin/cat\"}]},"
		    "\"waker\":null,\"wait_chain\":[],\"flags\":[]}",
		    4 * SEC, 4 * SEC + 30 * MS, 30 * MS, 30 * MS, 30 * MS);
	write_snapshot(dir, SNAP_A, join(join(join(r1, r2), r3), other));
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

static void diag_output(int failed)
{
	if (tap_failed_ != failed) {
		diag("stdout: %s", out_buf);
		diag("stderr: %s", err_buf);
	}
}

/* The JSON group of @table whose key is @key, or NULL. */
static struct json_object *group_of(struct json_object *table, const char *key)
{
	struct json_object *groups = json_object_object_get(table, "groups"), *g;
	size_t i;

	for (i = 0; groups && i < json_object_array_length(groups); i++) {
		g = json_object_array_get_idx(groups, i);
		if (!strcmp(json_object_get_string(json_object_object_get(g, "key")), key)) {
			return g;
		}
	}
	return NULL;
}

static int64_t num(struct json_object *obj, const char *key)
{
	return json_object_get_int64(json_object_object_get(obj, key));
}

static const char *str(struct json_object *obj, const char *key)
{
	return json_object_get_string(json_object_object_get(obj, key));
}

static void test_report(const char *dir)
{
	const char *by_request[] = { "report", "--by", "request", dir, NULL };
	const char *json[] = { "report", "--json", "--by", "request", dir, NULL };
	const char *by_cause[] = { "report", "--json", dir, NULL };
	const char *by_syscall[] = { "report", "--by", "syscall", dir, NULL };
	struct json_object *obj, *system, *g, *causes;
	int failed = tap_failed_;
	const char *line, *end;
	char query[64];
	int count = 0;

	is_int(run(report_main, by_request), 0, "report --by request: exit 0");
	ok(has(": 3 outliers, 350.000 ms in all,"), "  the three requests in the tables");
	ok(has("Requests only (record --request): 1 other outlier left out (see --by cause)\n"),
	   "  the other outlier left out, and said so");
	ok(has("\nSystem-wide, by request:\nRequest "), "  a table of requests");
	line = strstr(out_buf, "\nSELECT * FROM accounts WHERE id = 1 FOR UPDATE ");
	ok(line && sscanf(line + 48, "%d", &count) == 1 && count == 2,
	   "  the query on one line, its two requests in one row");
	end = line ? strchr(line + 1, '\n') : NULL;
	ok(end && (size_t)(end - line) > strlen(LOCK) + 2 &&
		   !strncmp(end - strlen(LOCK) - 2, "  " LOCK, strlen(LOCK) + 2),
	   "  with the cause of most of its time");
	snprintf(query, sizeof(query), "\n%.57s...", LONG_QUERY);
	ok(has(query), "  a long query cut at 60 characters");
	ok(has("Computing: sorting (PostgreSQL)\n"), "  its cause");
	ok(has("\nDistribution of each request:\n") &&
		   has("\n  SELECT * FROM accounts WHERE id = 1 FOR UPDATE\n           value  ---") &&
		   has("\n  " LONG_QUERY "\n"),
	   "  the distribution of each request, by its whole text");
	ok(has("\nProcess postgres (500): 150.000 ms in 2 outliers, 1 thread\nRequest "),
	   "  per process, by request too");
	ok(!has("Process cat"), "  no table for a process without requests");
	diag_output(failed);

	failed = tap_failed_;
	is_int(run(report_main, json), 0, "report --json --by request: exit 0");
	obj = json_tokener_parse(out_buf);
	if (!ok(obj != NULL, "  JSON")) {
		return;
	}
	is_str(str(obj, "by"), "request", "  by: request");
	is_int((int)num(obj, "not_requests"), 1, "  not_requests: 1");
	system = json_object_object_get(obj, "system");
	is_int((int)num(system, "count"), 3, "  system.count 3");
	g = group_of(system, "SELECT * FROM accounts WHERE id = 1 FOR UPDATE");
	if (ok(g != NULL, "  a group keyed by the query on one line")) {
		is_int((int)num(g, "count"), 2, "  count 2");
		is_str(str(g, "probe"), PROBE, "  its probe pair");
		is_str(str(g, "arg"), "SELECT * FROM accounts WHERE id = 1 FOR UPDATE",
		       "  its argument");
		causes = json_object_object_get(g, "causes");
		ok(causes && json_object_array_length(causes) == 1 &&
			   !strcmp(str(json_object_array_get_idx(causes, 0), "cause"), LOCK) &&
			   num(json_object_array_get_idx(causes, 0), "total_ns") ==
				   (int64_t)(150 * MS),
		   "  its causes: the lock wait, 150 ms");
	}
	g = group_of(system, LONG_QUERY);
	ok(g && num(g, "max_ns") == (int64_t)(200 * MS), "  the long query whole, 200 ms");
	json_object_put(obj);
	diag_output(failed);

	failed = tap_failed_;
	is_int(run(report_main, by_cause), 0, "report --json (by cause): exit 0");
	obj = json_tokener_parse(out_buf);
	system = obj ? json_object_object_get(obj, "system") : NULL;
	is_int((int)num(system, "count"), 4, "  every outlier, requests too");
	g = group_of(system, LOCK);
	ok(g && num(g, "count") == 2 && num(g, "total_ns") == (int64_t)(150 * MS),
	   "  the requests' lock wait cause: 2, 150 ms");
	ok(g && !json_object_object_get_ex(g, "probe", NULL), "  a cause row has no probe");
	g = group_of(system, "Computing: sorting (PostgreSQL)");
	ok(g && num(g, "count") == 1, "  the computing cause");
	ok(obj && !json_object_object_get_ex(obj, "not_requests", NULL),
	   "  no not_requests but --by request");
	json_object_put(obj);

	is_int(run(report_main, by_syscall), 0, "report --by syscall: exit 0");
	ok(has("\n(request) "), "  requests under (request), not as off-CPU waits");
	diag_output(failed);
}

static void test_flame(const char *dir)
{
	const char *args[] = { "flame", dir, NULL };
	int failed = tap_failed_;

	is_int(run(flame_main, args), 0, "flame: exit 0");
	is_str(out_buf,
	       "cat;main;-;anon_pipe_read 30000000\n"
	       "postgres;main;FileRead;pread64;-;filemap_read 10000000\n"
	       "postgres;main;PortalRun;ExecProcNode;ExecInterpExpr;slot_deform_heap_tuple;- "
	       "64000000\n"
	       "postgres;main;PostgresMain;exec_simple_query;LockRelationOid;LockAcquireExtended;"
	       "WaitOnLock;ProcSleep;WaitLatch;WaitEventSetWait;epoll_wait;-;do_epoll_wait "
	       "125000000\n"
	       "postgres;main;exec_simple_query;PortalRun;ExecProcNode;ExecSort;"
	       "tuplesort_performsort;- 120000000\n"
	       "postgres;main;palloc0;memset;-;asm_exc_page_fault;clear_page_erms 6000000\n",
	       "flame: the waits' stacks by their time, the samples by theirs, user above kernel");
	diag_output(failed);
}

static void test_show(const char *dir)
{
	char path[PATH_MAX];
	const char *args[] = { "show", path, NULL };
	int failed = tap_failed_;
	const char *a, *b;

	snprintf(path, sizeof(path), "%s/%s", dir, SNAP_A);
	/* The trace is an empty directory: exit 1 for it, the summary still shown. */
	run(show_main, args);
	ok(has("request " PROBE "  postgres[pid 500 tid 500]  100.000 ms"),
	   "show: the request's probe pair");
	/* The traced process's text, escaped: its newline does not start a line of show's. */
	ok(has("  argument: SELECT * FROM accounts\\n   WHERE id = 1 FOR UPDATE\n"),
	   "  its argument, on one line");
	ok(has("  on-cpu 10.000 ms (10.0%)  blocked 90.000 ms (90.0%)  runqueue 0 ns (0.0%)"),
	   "  its split");
	ok(!has("user (none)"), "  no empty stack of its own");
	ok(has("  waits inside it, in time order (2):\n"
	       "    +5.000000 ms  epoll_wait, 80.000 ms: " LOCK "\n"
	       "        in do_epoll_wait\n"
	       "        user: epoll_wait < WaitEventSetWait < WaitLatch < ProcSleep < WaitOnLock < "
	       "LockAcquireExtended < LockRelationOid < exec_simple_query < ...\n"
	       "    +90.000000 ms  pread64, 10.000 ms: Reading a file from disk\n"
	       "        in filemap_read\n"
	       "        user: pread64 < FileRead < main\n"),
	   "  its waits in time order: offset, syscall, duration, cause, kernel and user frames");
	a = strstr(out_buf, "  CPU profile, 10.000 ms sampled in 2 stacks, heaviest first:\n"
			    "  -- 60.0% (6.000 ms), outermost first:\n");
	b = strstr(out_buf, "  -- 40.0% (4.000 ms), outermost first:\n");
	ok(a && b && a < b, "  its CPU profile, heaviest first, with shares");
	ok(has("    memset+0x8  (postgres)\n    -- kernel:\n    asm_exc_page_fault+0x4\n"
	       "    clear_page_erms+0x4\n"),
	   "  a sample's user frames above its kernel frames");
	ok(has("request " PROBE "  postgres[pid 501 tid 501]  200.000 ms") &&
		   has("  waits inside it: none recorded\n"),
	   "  a request without waits says so");
	diag_output(failed);
}

int main(void)
{
	char dir[256], cmd[128];

	test_builtin();
	test_rules_file();

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/latsnap-test-requests.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	out_buf = malloc(OUT_MAX);
	if (!out_buf) {
		bail_out("out of memory");
	}
	snprintf(dir, sizeof(dir), "%s/out", tmpdir);
	write_requests(dir);
	test_report(dir);
	test_flame(dir);
	test_show(dir);
	free(out_buf);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
		diag("could not remove %s", tmpdir);
	}
	return tap_done();
}
