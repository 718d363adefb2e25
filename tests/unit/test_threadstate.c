// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include <json-c/json.h>

#include "review/threadstate.h"
#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "tap.h"

#define SW "latsnap_kernel:sched_switch"
#define WK "latsnap_kernel:sched_wakeup"

/* Event @name at @ts with the fields of JSON text @json into @ts; its result. */
static int feed(struct threadstate *ts, const char *name, uint64_t at, const char *json)
{
	struct json_object *f = json_tokener_parse(json);
	struct ctf_event ev = { .name = name, .ts_ns = at, .fields = f };
	struct lsev decoded;
	int ret;

	if (!f) {
		bail_out("bad test JSON: %s", json);
	}
	lsev_decode(&ev, &decoded);
	ret = threadstate_add(ts, &decoded);
	json_object_put(f);
	return ret;
}

static void out_(struct threadstate *ts, uint64_t at, int prev, int state, int preempted, int next)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "{\"ts_ns\": %" PRIu64 ", \"prev_tid\": %d, \"prev_pid\": %d, \"prev_state\": %d, "
		 "\"preempted\": %d, \"next_tid\": %d, \"next_pid\": %d}",
		 at, prev, prev, state, preempted, next, next);
	if (feed(ts, SW, at, buf)) {
		bail_out("sched_switch refused");
	}
}

static void wake_(struct threadstate *ts, uint64_t at, int tid, int waker, int in_irq)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "{\"ts_ns\": %" PRIu64 ", \"tid\": %d, \"pid\": %d, \"waker_tid\": %d, "
		 "\"in_irq\": %d, \"comm\": \"x\"}",
		 at, tid, tid, waker, in_irq);
	if (feed(ts, WK, at, buf)) {
		bail_out("sched_wakeup refused");
	}
}

/*
 * The spans of @tid in [@from, @to] as text, "state@from-to state@from-to ...", into @buf; and
 * whether they are contiguous, cover [@from, @to] and never repeat a state.
 */
static bool spans_text(const struct threadstate *ts, int64_t tid, uint64_t from, uint64_t to,
		       char *buf, size_t len)
{
	struct threadstate_span *v;
	size_t i, nr, off = 0;
	bool good = true;

	buf[0] = '\0';
	if (threadstate_spans(ts, tid, from, to, &v, &nr)) {
		snprintf(buf, len, "ENOMEM");
		return false;
	}
	for (i = 0; i < nr; i++) {
		off += snprintf(buf + off, len - off, "%s%s@%" PRIu64 "-%" PRIu64, i ? " " : "",
				threadstate_name(v[i].state), v[i].from_ns, v[i].to_ns);
		good = good && v[i].tid == tid && v[i].from_ns < v[i].to_ns;
		good = good && v[i].from_ns == (i ? v[i - 1].to_ns : from);
		good = good && (!i || v[i].state != v[i - 1].state);
		if (off >= len) {
			break;
		}
	}
	good = good && (nr ? v[nr - 1].to_ns == to : to <= from);
	free(v);
	return good;
}

static void check(const struct threadstate *ts, int64_t tid, uint64_t from, uint64_t to,
		  const char *want, const char *what)
{
	char buf[1024];
	bool good = spans_text(ts, tid, from, to, buf, sizeof(buf));

	is_str(buf, want, "%s", what);
	ok(good, "%s: contiguous over [%" PRIu64 ", %" PRIu64 "], neighbours differ", what, from,
	   to);
}

int main(void)
{
	struct threadstate *ts = threadstate_new();
	struct threadstate_wakeup *w;
	char buf[64];
	size_t nr;

	if (!ts) {
		bail_out("out of memory");
	}
	is_str(threadstate_name(THREADSTATE_ON_CPU), "on-cpu", "names: on-cpu");
	is_str(threadstate_name(THREADSTATE_BLOCKED), "blocked", "names: blocked");
	is_str(threadstate_name(THREADSTATE_RUNQUEUE), "runqueue", "names: runqueue");
	is_str(threadstate_name(THREADSTATE_UNKNOWN), "unknown", "names: unknown");

	/* Thread 10: preempted at 100, back at 150; blocks at 200, woken by 20 at 300, in at 320. */
	out_(ts, 100, 10, 0, 1, 20);
	out_(ts, 150, 20, 1, 0, 10);
	out_(ts, 200, 10, 1, 0, 0);
	wake_(ts, 300, 10, 20, 0);
	out_(ts, 320, 0, 0, 0, 10);
	check(ts, 10, 0, 400,
	      "on-cpu@0-100 runqueue@100-150 on-cpu@150-200 blocked@200-300 runqueue@300-320 "
	      "on-cpu@320-400",
	      "preempted goes to runqueue, blocked until woken, runqueue until switched in");
	/* Thread 20: first seen switched in (runqueue before), blocks at 150, never woken. */
	check(ts, 20, 50, 500, "runqueue@50-100 on-cpu@100-150 blocked@150-500",
	      "several tids: a second thread of the same switches; last state holds");
	check(ts, 10, 120, 310, "runqueue@120-150 on-cpu@150-200 blocked@200-300 runqueue@300-310",
	      "clipped at both ends");
	check(ts, 10, 210, 220, "blocked@210-220", "inside one span");
	check(ts, 10, 500, 600, "on-cpu@500-600", "after the last event its state holds");
	check(ts, 99, 0, 50, "unknown@0-50", "a thread never seen is unknown");
	check(ts, 10, 50, 50, "", "an empty window has no span");

	/* A switch-out with prev_state 0 (a yield) is runnable, not blocked. */
	out_(ts, 1000, 30, 0, 0, 0);
	out_(ts, 1010, 0, 0, 0, 30);
	check(ts, 30, 990, 1020, "on-cpu@990-1000 runqueue@1000-1010 on-cpu@1010-1020",
	      "prev_state 0 without preempted goes to runqueue");

	/* Inference: first seen woken means blocked before; not before from_ns. */
	wake_(ts, 2000, 40, 0, 1);
	out_(ts, 2050, 0, 0, 0, 40);
	check(ts, 40, 1900, 2100, "blocked@1900-2000 runqueue@2000-2050 on-cpu@2050-2100",
	      "first seen woken: blocked before it, back to from_ns only");
	check(ts, 40, 1500, 1600, "blocked@1500-1600",
	      "a window before the first event takes the state that event implies");

	/* Out of order: the event at 2500 fed after the one at 2600 still counts first. */
	out_(ts, 2600, 0, 0, 0, 50);
	wake_(ts, 2500, 50, 40, 0);
	check(ts, 50, 2400, 2700, "blocked@2400-2500 runqueue@2500-2600 on-cpu@2600-2700",
	      "events fed out of time order are put in order");

	/* A wakeup of a thread still on CPU (woken while switching out) changes nothing. */
	out_(ts, 2950, 0, 0, 0, 60);
	wake_(ts, 3000, 60, 10, 0);
	out_(ts, 3010, 60, 0, 0, 0);
	out_(ts, 3020, 0, 0, 0, 60);
	check(ts, 60, 2900, 3030,
	      "runqueue@2900-2950 on-cpu@2950-3010 runqueue@3010-3020 on-cpu@3020-3030",
	      "a wakeup while on CPU changes nothing");

	ok(threadstate_wakeups(ts, 10, 0, 1000, &w, &nr) == 0 && nr == 1, "one wakeup of tid 10");
	if (nr == 1) {
		snprintf(buf, sizeof(buf), "%" PRIu64 " %" PRId64 " %" PRId64 " %d", w[0].ts_ns,
			 w[0].waker_tid, w[0].tid, w[0].in_irq);
		is_str(buf, "300 20 10 0", "its time, waker, wakee, not in irq");
	}
	free(w);
	ok(threadstate_wakeups(ts, 10, 301, 1000, &w, &nr) == 0 && nr == 0 && !w, "none after it");
	free(w);
	ok(threadstate_wakeups(ts, 40, 2000, 2000, &w, &nr) == 0 && nr == 1 && w[0].in_irq,
	   "bounds are inclusive; in_irq kept");
	free(w);

	is_int(feed(ts, "latsnap:outlier", 5, "{\"tid\": 10}"), 0, "other events are ignored");
	is_int(feed(ts, SW, 5, "{\"next_tid\": 10}"), -EINVAL, "a switch without prev_tid: EINVAL");
	is_int(feed(ts, WK, 5, "{\"waker_tid\": 10}"), -EINVAL, "a wakeup without tid: EINVAL");
	check(ts, 10, 0, 100, "on-cpu@0-100", "and they changed nothing");

	threadstate_free(ts);
	threadstate_free(NULL);
	return tap_done();
}
