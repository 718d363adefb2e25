// SPDX-License-Identifier: GPL-2.0
/*
 * report_analyse(): what `latsnap report` says, checked in struct report itself rather than in
 * one of its renderings. One snapshot holds a wait (x) held up by a thread of its wait chain (y)
 * that slept meanwhile, y's own sleep, and a deadlock of three threads listed out of their
 * waiting order (a waits for c, c for b, b for a).
 */
#include <math.h>
#include <sys/stat.h>

#include "lib/outlier.h"
#include "review/report-analysis.h"
#include "review/snapshots.h"
#include "tap.h"

#define SEC 1000000000ULL
#define DEADLOCK "Deadlock: pthread mutex cycle a[31] -> c[33] -> b[32] -> a[31]"

static char tmpdir[64];

/* One OUTLIER; @holder and @chain: JSON ("null", "[]" for none). */
static char *outlier(const char *comm, int pid, int tid, uint64_t start, uint64_t dur,
		     const char *cause, const char *holder, const char *chain)
{
	char *s;

	if (asprintf(&s,
		     "{\"kind\":\"syscall\",\"pid\":%d,\"tid\":%d,\"comm\":\"%s\","
		     "\"syscall\":\"futex\",\"syscall_nr\":202,\"start_ns\":%" PRIu64
		     ",\"end_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"on_cpu_ns\":0,"
		     "\"blocked_ns\":%" PRIu64 ",\"runqueue_ns\":0,\"switches\":1,"
		     "\"cause\":\"%s\",\"kernel_stacks\":[],"
		     "\"user_stack\":{\"source\":\"none\",\"frames\":[]},"
		     "\"waker\":null,\"holder\":%s,\"wait_chain\":%s,\"flags\":[]}",
		     pid, tid, comm, start, start + dur, dur, dur, cause, holder, chain) < 0) {
		bail_out("out of memory");
	}
	return s;
}

static char *holder(const char *comm, int pid, int tid)
{
	char *s;

	if (asprintf(&s,
		     "{\"pid\":%d,\"tid\":%d,\"comm\":\"%s\",\"what\":\"pthread mutex\","
		     "\"state\":\"blocked in futex\",\"frames\":[],\"kernel_frames\":[]}",
		     pid, tid, comm) < 0) {
		bail_out("out of memory");
	}
	return s;
}

static void write_set(const char *dir)
{
	const char *chain = "[{\"depth\":1,\"pid\":20,\"tid\":21,\"comm\":\"y\","
			    "\"from_ns\":10000000000,\"to_ns\":11000000000,"
			    "\"on_cpu_ns\":100000000,\"blocked_ns\":900000000,\"runqueue_ns\":0,"
			    "\"syscall\":\"nanosleep\",\"frames\":[]}]";
	char *ha = holder("c", 30, 33), *hb = holder("a", 30, 31), *hc = holder("b", 30, 32);
	char *o[5], *text;

	o[0] = outlier("x", 10, 11, 10 * SEC, SEC, "Reading", "null", chain);
	o[1] = outlier("y", 20, 21, 9 * SEC, 2 * SEC + SEC / 2, "Sleeping", "null", "[]");
	o[2] = outlier("a", 30, 31, 5 * SEC, 3 * SEC, DEADLOCK, ha, "[]");
	o[3] = outlier("b", 30, 32, 5 * SEC, 3 * SEC, DEADLOCK, hb, "[]");
	o[4] = outlier("c", 30, 33, 5 * SEC, 3 * SEC, DEADLOCK, hc, "[]");
	if (asprintf(&text,
		     "{\"version\":1,\"id\":\"s1\",\"host\":\"h\",\"created\":\"2026-01-01T00:00:00Z\","
		     "\"trace\":\"trace\",\"skipped\":2,\"flags\":[],"
		     "\"outliers\":[%s,%s,%s,%s,%s]}",
		     o[0], o[1], o[2], o[3], o[4]) < 0) {
		bail_out("out of memory");
	}
	tap_write_snapshot(dir, "20260101T000000.000Z-0001", text);
	free(text);
	for (size_t i = 0; i < 5; i++) {
		free(o[i]);
	}
	free(ha);
	free(hb);
	free(hc);
}

static int32_t stall_tid(const struct report_stall *st)
{
	return st ? st->w->o->tid : -1;
}

static void test_tables(const struct report *r)
{
	const struct report_group *g = r->system.groups;

	is_u64(r->complete, 1, "one complete snapshot");
	is_u64(r->skipped, 2, "its skipped outliers");
	if (!is_int((int)r->system.nr, 3, "three causes")) {
		return;
	}
	is_str(g[0].key, DEADLOCK, "the deadlock first: the largest total");
	is_u64(g[0].count, 3, "  three waits");
	is_u64(g[0].average_ns, 3 * SEC, "  3 s on average");
	ok(fabs(g[0].percent - 9.0 / 12.5 * 100.0) < 1e-9, "  72%% of the time");
	is_u64(g[0].hist[32], 3, "  in the bucket of 2^31 .. 2^32 - 1 ns");
	is_str(g[1].key, "Sleeping", "then y's sleep");
	is_str(g[2].key, "Reading", "then x's read");
	ok(!r->many_hosts && r->hosts.nr == 1, "one host");
	if (is_int((int)r->nr_procs, 3, "three processes")) {
		is_int((int)r->procs[0].pid, 30, "  the deadlocked one first");
		is_int((int)r->procs[0].nr_tids, 3, "  with its three threads");
		is_str(r->procs[0].comm, "a", "  named by its first thread (no main thread)");
	}
}

static void test_stalls(const struct report *r)
{
	const struct report_cycle *c = r->cycles;

	is_int((int)r->nr_stalls, 3, "three stalls: the deadlock's threads");
	if (!is_int((int)r->nr_cycles, 1, "one deadlock") || !is_int((int)c->nr, 3, "  of three")) {
		return;
	}
	ok(stall_tid(c->threads[0].stall) == 31 && stall_tid(c->threads[1].stall) == 33 &&
		   stall_tid(c->threads[2].stall) == 32,
	   "  in their waiting order: a, c, b");
	ok(!c->threads[0].chained && c->threads[1].chained && c->threads[2].chained, "  one chain");
	is_int(stall_tid(c->closed_by), 31, "  closed by a");
}

static void test_longest(const struct report *r)
{
	const struct report_longest *x;

	if (!is_int((int)r->nr_longest, 5, "five longest waits")) {
		return;
	}
	is_u64(r->longest[0].w->o->duration_ns, 3 * SEC, "  the longest first");
	is_int(r->longest[0].how, REPORT_HELD_BY_HOLDER, "  a deadlocked one, held by its holder");
	x = &r->longest[4];
	is_int((int)x->w->o->tid, 11, "  x last");
	is_int(x->how, REPORT_HELD_UP_BY_LINK, "  held up by its wait chain's nearest");
	ok(fabs(x->blocked_percent - 90.0) < 1e-9, "  blocked 90%% of the link");
	ok(x->link_wait && x->link_wait->tid == 21, "  y's own sleep covered the link");
}

static void test_columns(void)
{
	static const char *const members[] = { "count", "total_ns", "average_ns", "max_ns",
					       "percent" };
	size_t i;

	if (!is_int((int)report_nr_columns, 5, "five columns")) {
		return;
	}
	for (i = 0; i < report_nr_columns; i++) {
		is_str(report_columns[i].member, members[i], "  column %zu", i);
	}
	ok(!report_columns[1].title, "  the total is --json's only");
}

static void test_by_process(const char *dir)
{
	struct report r = { .by = REPORT_BY_PROCESS };
	struct snapshot_set set;

	if (snapshots_load(dir, &set)) {
		skip("the set does not load");
		return;
	}
	if (is_int(report_analyse(&r, &set), 0, "--by process: analysed") && r.system.nr == 3) {
		is_str(r.system.groups[0].key, "a (30)", "  its keys named comm (pid)");
	}
	report_free(&r);
	snapshots_free(&set);
}

int main(void)
{
	struct report r = { .by = REPORT_BY_CAUSE };
	struct snapshot_set set;
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/latsnap-report-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	write_set(tmpdir);
	if (snapshots_load(tmpdir, &set)) {
		bail_out("the set does not load");
	}
	if (is_int(report_analyse(&r, &set), 0, "report_analyse()")) {
		test_tables(&r);
		test_stalls(&r);
		test_longest(&r);
	}
	report_free(&r);
	snapshots_free(&set);
	test_columns();
	test_by_process(tmpdir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
		diag("could not remove %s", tmpdir);
	}
	return tap_done();
}
