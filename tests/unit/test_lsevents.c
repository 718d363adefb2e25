// SPDX-License-Identifier: GPL-2.0
/*
 * test_lsevents.c - trace/lsevents.c: each of latsnap's events decoded from a hand-built struct
 * ctf_event (fields as events/events-tp.h and kernel-tp.h write them, with the vpid, vtid and
 * procname context of the latsnap process that emitted them), the rule for an event's time and
 * the one for its threads, and the name -> handler table. And the reader against the schema
 * (events/schema.h, which the providers and the timeline writer are made from): every event it
 * names is one of latsnap's to the reader, and every field it gives an event the reader reads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "events/schema.h"
#include "tap.h"

/* The context of the latsnap process that wrote the events. */
#define CONTEXT "\"vpid\": 900, \"vtid\": 901, \"procname\": \"latsnap\""
/* The CTF timestamp of each event: when latsnap wrote it, after it happened. */
#define CTF_TS 5000

struct held {
	struct ctf_event ev;
	struct json_object *fields;
};

/* Event @name with the fields of JSON text @json (CONTEXT added when @context), decoded. */
static void decode(struct held *h, struct lsev *d, const char *name, const char *json, bool context)
{
	char text[2048];

	snprintf(text, sizeof(text), "{%s%s%s}", json, *json && context ? ", " : "",
		 context ? CONTEXT : "");
	h->fields = json_tokener_parse(text);
	if (!h->fields) {
		bail_out("bad test JSON: %s", text);
	}
	h->ev = (struct ctf_event){ .name = name, .ts_ns = CTF_TS, .fields = h->fields };
	lsev_decode(&h->ev, d);
}

static void release(struct held *h)
{
	json_object_put(h->fields);
}

/* @t is thread @tid of @pid named @comm (NULL: none said). */
static void is_thread(const struct lsev_thread *t, int64_t tid, int64_t pid, const char *comm,
		      const char *what)
{
	ok(t->known, "%s: known", what);
	is_int(t->tid, tid, "%s: tid", what);
	is_int(t->pid, pid, "%s: pid", what);
	if (comm) {
		is_str(t->comm, comm, "%s: comm", what);
	} else {
		ok(!t->comm, "%s: no comm", what);
	}
}

static void test_switch(void)
{
	struct held h;
	struct lsev d;
	uint64_t ips[4];

	decode(&h, &d, LSEV_NAME_SCHED_SWITCH,
	       "\"ts_ns\": 1000, \"cpu\": 3, \"prev_tid\": 10, \"prev_pid\": 11, "
	       "\"prev_comm\": \"a\", \"prev_state\": 1, \"preempted\": 0, "
	       "\"prev_syscall\": \"read\", \"next_tid\": 20, \"next_pid\": 21, "
	       "\"next_comm\": \"b\", \"_prev_stack_length\": 2, \"prev_stack\": [1, 2]",
	       true);
	is_int(d.kind, LSEV_SCHED_SWITCH, "switch: kind");
	is_u64(d.ts_ns, 1000, "switch: its payload's ts_ns, not the CTF timestamp");
	is_thread(&d.thread, 10, 11, "a", "switch: about prev");
	is_thread(&d.other, 20, 21, "b", "switch: the other is next");
	ok(d.u.sw.cpu == 3 && d.u.sw.prev_state == 1 && !d.u.sw.preempted, "switch: cpu, state");
	is_str(d.u.sw.prev_syscall, "read", "switch: prev's syscall");
	is_int(lsev_ips(d.u.sw.prev_stack, ips, 4), 2, "switch: its stack");
	ok(ips[0] == 1 && ips[1] == 2, "switch: the stack's addresses");
	is_int(lsev_ips(d.u.sw.prev_stack, ips, 1), 0, "a stack longer than room: none of it");
	ok(lsev_thread_of(&d, 20) == &d.other && lsev_thread_of(&d, 10) == &d.thread &&
		   !lsev_thread_of(&d, 901),
	   "lsev_thread_of: prev and next, not the emitter");
	release(&h);

	decode(&h, &d, LSEV_NAME_SCHED_SWITCH, "\"next_tid\": 20", true);
	ok(!d.thread.known && d.other.known,
	   "a switch without prev_tid: prev unknown, not latsnap");
	is_u64(d.ts_ns, CTF_TS, "a kernel event without ts_ns: the CTF timestamp");
	is_int(lsev_ips(d.u.sw.prev_stack, ips, 4), 0, "no stack field: no addresses");
	release(&h);
}

static void test_wakeup(void)
{
	struct held h;
	struct lsev d;

	decode(&h, &d, LSEV_NAME_SCHED_WAKEUP,
	       "\"ts_ns\": 1100, \"cpu\": 1, \"tid\": 10, \"pid\": 11, \"comm\": \"a\", "
	       "\"waker_tid\": 30, \"waker_pid\": 31, \"waker_comm\": \"w\", \"in_irq\": 1, "
	       "\"waker_stack\": [7]",
	       true);
	is_int(d.kind, LSEV_SCHED_WAKEUP, "wakeup: kind");
	is_u64(d.ts_ns, 1100, "wakeup: payload time");
	is_thread(&d.thread, 10, 11, "a", "wakeup: about the woken");
	is_thread(&d.other, 30, 31, "w", "wakeup: the other is the waker");
	ok(d.u.wakeup.in_irq && d.u.wakeup.cpu == 1 && d.u.wakeup.waker_stack, "wakeup: in_irq");
	release(&h);
}

static void test_syscall(void)
{
	struct held h;
	struct lsev d;

	decode(&h, &d, LSEV_NAME_SYSCALL,
	       "\"ts_ns\": 1200, \"tid\": 10, \"pid\": 11, \"comm\": \"a\", \"nr\": 0, "
	       "\"name\": \"read\", \"start_ns\": 700, \"duration_ns\": 500, \"ret\": -4",
	       true);
	is_int(d.kind, LSEV_SYSCALL, "syscall: kind");
	is_u64(d.ts_ns, 1200, "syscall: its end");
	is_thread(&d.thread, 10, 11, "a", "syscall: its thread");
	ok(!d.other.known, "syscall: no other thread");
	ok(d.u.syscall.start_ns == 700 && d.u.syscall.duration_ns == 500 && d.u.syscall.ret == -4,
	   "syscall: start, duration, ret");
	is_str(d.u.syscall.name, "read", "syscall: name");
	release(&h);
}

static void test_tasks(void)
{
	static const struct {
		const char *name;
		enum lsev_kind kind;
	} tasks[] = {
		{ LSEV_NAME_PROCESS_FORK, LSEV_PROCESS_FORK },
		{ LSEV_NAME_PROCESS_EXEC, LSEV_PROCESS_EXEC },
		{ LSEV_NAME_PROCESS_EXIT, LSEV_PROCESS_EXIT },
		{ LSEV_NAME_INTEREST, LSEV_INTEREST },
	};
	struct held h;
	struct lsev d;
	size_t i;

	for (i = 0; i < sizeof(tasks) / sizeof(*tasks); i++) {
		decode(&h, &d, tasks[i].name,
		       "\"ts_ns\": 1300, \"tid\": 10, \"pid\": 11, \"comm\": \"a\", "
		       "\"other_tid\": 12, \"other_pid\": 11, \"other_comm\": \"c\", "
		       "\"reason\": \"waker\"",
		       true);
		is_int(d.kind, tasks[i].kind, "%s: kind", tasks[i].name);
		is_u64(d.ts_ns, 1300, "%s: payload time", tasks[i].name);
		is_thread(&d.thread, 10, 11, "a", tasks[i].name);
		is_thread(&d.other, 12, 11, "c", tasks[i].name);
		if (d.kind == LSEV_INTEREST) {
			is_str(d.u.interest.reason, "waker", "interest: reason");
		}
		release(&h);
	}
}

static void test_block(void)
{
	struct held h;
	struct lsev d;

	decode(&h, &d, LSEV_NAME_BLOCK_RQ_ISSUE,
	       "\"ts_ns\": 1400, \"tid\": 10, \"pid\": 11, \"comm\": \"a\", \"dev\": 8388609, "
	       "\"sector\": 64, \"bytes\": 4096, \"op\": 1",
	       true);
	is_int(d.kind, LSEV_BLOCK_RQ_ISSUE, "block_rq_issue: kind");
	is_thread(&d.thread, 10, 11, "a", "block_rq_issue");
	ok(d.u.block.dev == 8388609 && d.u.block.sector == 64 && d.u.block.bytes == 4096 &&
		   d.u.block.op == 1,
	   "block_rq_issue: dev, sector, bytes, op");
	release(&h);
	decode(&h, &d, LSEV_NAME_BLOCK_RQ_COMPLETE,
	       "\"ts_ns\": 1500, \"tid\": 10, \"pid\": 11, \"dev\": 1, \"sector\": 64, "
	       "\"issue_ns\": 1400, \"error\": -5",
	       true);
	is_int(d.kind, LSEV_BLOCK_RQ_COMPLETE, "block_rq_complete: kind");
	is_u64(d.ts_ns, 1500, "block_rq_complete: payload time");
	is_thread(&d.thread, 10, 11, NULL, "block_rq_complete");
	ok(d.u.block.issue_ns == 1400 && d.u.block.error == -5, "block_rq_complete: issue, error");
	release(&h);
}

static void test_outlier(void)
{
	struct held h;
	struct lsev d;

	decode(&h, &d, LSEV_NAME_OUTLIER,
	       "\"kind\": \"syscall\", \"pid\": 11, \"tid\": 10, \"comm\": \"a\", "
	       "\"syscall\": \"read\", \"syscall_nr\": 0, \"start_ns\": 100, \"end_ns\": 900, "
	       "\"duration_ns\": 800, \"on_cpu_ns\": 1, \"blocked_ns\": 790, \"runqueue_ns\": 9, "
	       "\"switches\": 2, \"cause\": \"pipe\", \"waker_pid\": 31, \"waker_tid\": 30, "
	       "\"waker_comm\": \"w\", \"signalled\": 1, \"flags\": \"x; y\"",
	       true);
	is_int(d.kind, LSEV_OUTLIER, "outlier: kind");
	is_u64(d.ts_ns, CTF_TS, "outlier: the CTF timestamp (no ts_ns)");
	is_thread(&d.thread, 10, 11, "a", "outlier: its thread");
	is_thread(&d.other, 30, 31, "w", "outlier: the other is its waker");
	ok(d.u.outlier.start_ns == 100 && d.u.outlier.end_ns == 900 &&
		   d.u.outlier.duration_ns == 800 && d.u.outlier.blocked_ns == 790 &&
		   d.u.outlier.runqueue_ns == 9 && d.u.outlier.on_cpu_ns == 1 &&
		   d.u.outlier.switches == 2 && d.u.outlier.signalled,
	   "outlier: times and split");
	ok(!strcmp(d.u.outlier.kind, "syscall") && !strcmp(d.u.outlier.syscall, "read") &&
		   !strcmp(d.u.outlier.cause, "pipe") && !strcmp(d.u.outlier.flags, "x; y"),
	   "outlier: kind, syscall, cause, flags");
	release(&h);
}

static void test_stacks(void)
{
	struct held h;
	struct lsev d;

	decode(&h, &d, LSEV_NAME_KERNEL_STACK,
	       "\"tid\": 10, \"end_ns\": 900, \"role\": \"wait\", \"index\": 1, "
	       "\"weight_ns\": 50, \"ips\": [1, 2, 3], \"symbols\": \"f+0x1;g+0x2\"",
	       true);
	is_int(d.kind, LSEV_KERNEL_STACK, "kernel_stack: kind");
	is_u64(d.ts_ns, CTF_TS, "kernel_stack: the CTF timestamp");
	is_thread(&d.thread, 10, 0, NULL, "kernel_stack: its outlier's thread");
	ok(d.u.kstack.end_ns == 900 && d.u.kstack.index == 1 && d.u.kstack.weight_ns == 50 &&
		   json_object_array_length(d.u.kstack.ips) == 3,
	   "kernel_stack: end, index, weight, ips");
	ok(!strcmp(d.u.kstack.role, "wait") && !strcmp(d.u.kstack.symbols, "f+0x1;g+0x2"),
	   "kernel_stack: role, symbols");
	release(&h);

	decode(&h, &d, LSEV_NAME_USER_STACK,
	       "\"tid\": 10, \"depth\": 2, \"truncated\": 0, \"status\": 1, \"unwind_ns\": 40, "
	       "\"pid\": 11, \"end_ns\": 900, \"ips\": [4, 5]",
	       true);
	is_int(d.kind, LSEV_USER_STACK, "user_stack: kind");
	is_u64(d.ts_ns, 940, "user_stack: placed at end_ns + unwind_ns");
	is_thread(&d.thread, 10, 11, NULL, "user_stack: its outlier's thread");
	ok(d.u.ustack.has_end_ns && d.u.ustack.depth == 2 && d.u.ustack.status == 1 &&
		   !d.u.ustack.truncated && json_object_array_length(d.u.ustack.ips) == 2,
	   "user_stack: end, depth, status, ips");
	release(&h);

	decode(&h, &d, LSEV_NAME_USER_STACK, "\"tid\": 10, \"unwind_ns\": 40, \"ips\": [4]", true);
	ok(!d.u.ustack.has_end_ns, "an older user_stack: no end_ns");
	is_u64(d.ts_ns, CTF_TS, "an older user_stack: the CTF timestamp");
	release(&h);
}

static void test_bin_info_summary(void)
{
	struct held h;
	struct lsev d;

	decode(&h, &d, LSEV_NAME_BIN_INFO,
	       "\"pid\": 11, \"baddr\": 4096, \"memsz\": 8192, \"path\": \"/bin/a\", "
	       "\"_build_id_length\": 2, \"build_id\": [171, 205]",
	       true);
	is_int(d.kind, LSEV_BIN_INFO, "bin_info: kind");
	ok(d.u.bin.has_pid && d.u.bin.pid == 11 && d.u.bin.has_baddr && d.u.bin.baddr == 4096 &&
		   d.u.bin.memsz == 8192 && json_object_array_length(d.u.bin.build_id) == 2,
	   "bin_info: pid, baddr, memsz, build_id");
	is_str(d.u.bin.path, "/bin/a", "bin_info: path");
	is_thread(&d.thread, 901, 900, "latsnap", "bin_info names no thread: the emitter");
	ok(d.thread.context, "bin_info: the thread is the context's");
	release(&h);

	decode(&h, &d, LSEV_NAME_SUMMARY,
	       "\"id\": \"s1\", \"part\": 0, \"parts\": 2, \"_json_length\": 2, \"json\": \"{}\"",
	       true);
	is_int(d.kind, LSEV_SUMMARY, "summary: kind");
	ok(!strcmp(d.u.summary.id, "s1") && d.u.summary.part == 0 && d.u.summary.parts == 2 &&
		   !strcmp(d.u.summary.json, "{}"),
	   "summary: id, part, parts, json");
	ok(d.thread.known && d.thread.context && d.thread.tid == 901, "summary: the emitter");
	release(&h);
}

/* An application's events: its payload's tid, else its first *_tid, else the emitter. */
static void test_foreign(void)
{
	int64_t tids[LSEV_MAX_THREADS];
	struct held h;
	struct lsev d;
	size_t n;

	decode(&h, &d, "app:op", "\"ts_ns\": 3, \"owner_tid\": 40, \"tid\": 41, \"pid\": 4", true);
	is_int(d.kind, LSEV_FOREIGN, "app event: foreign");
	is_u64(d.ts_ns, CTF_TS, "app event: the CTF timestamp, whatever its ts_ns field");
	is_thread(&d.thread, 41, 4, NULL, "app event with tid: its tid");
	ok(!d.thread.context, "app event with tid: not the context's");
	n = lsev_threads(&d, tids, LSEV_MAX_THREADS);
	ok(n == 2 && tids[0] == 41 && tids[1] == 40, "app event: its tid, then its *_tid fields");
	release(&h);

	decode(&h, &d, "app:handoff",
	       "\"from_tid\": 50, \"from_pid\": 5, \"from_comm\": \"f\", \"to_tid\": 51", true);
	is_thread(&d.thread, 50, 5, "f", "app event without tid: its first *_tid");
	n = lsev_threads(&d, tids, LSEV_MAX_THREADS);
	ok(n == 2 && tids[0] == 50 && tids[1] == 51, "app event: both *_tid threads, once each");
	release(&h);

	decode(&h, &d, "app:tick", "\"count\": 1", true);
	is_thread(&d.thread, 901, 900, "latsnap", "app event without tid fields: the emitter");
	n = lsev_threads(&d, tids, LSEV_MAX_THREADS);
	ok(n == 1 && tids[0] == 901, "app event: the emitter only");
	release(&h);

	decode(&h, &d, "app:bare", "", false);
	ok(!d.thread.known, "no tid field, no context: no thread");
	is_int(lsev_threads(&d, tids, LSEV_MAX_THREADS), 0, "no thread at all");
	release(&h);

	decode(&h, &d, LSEV_NAME_SCHED_WAKEUP, "\"tid\": 10, \"waker_tid\": 30", true);
	n = lsev_threads(&d, tids, LSEV_MAX_THREADS);
	ok(n == 2 && tids[0] == 10 && tids[1] == 30, "a wakeup: the woken, then the waker");
	is_int(lsev_threads(&d, tids, 1), 1, "lsev_threads: no more than room");
	release(&h);
}

struct calls {
	int switches, defaults;
	const char *last;
};

static int on_switch(const struct lsev *ev, void *ctx)
{
	struct calls *c = ctx;

	c->switches++;
	c->last = ev->name;
	return ev->thread.tid == 99 ? -EIO : 0;
}

static int on_any(const struct lsev *ev, void *ctx)
{
	struct calls *c = ctx;

	c->defaults++;
	c->last = ev->name;
	return 0;
}

static void test_dispatch(void)
{
	static const struct lsev_handler table[] = {
		{ LSEV_NAME_SCHED_SWITCH, on_switch },
		{ NULL, on_any },
		{ LSEV_NAME_SYSCALL, on_switch }, /* after the default: never reached */
	};
	struct calls c = { 0 };
	struct held h;
	struct lsev d;

	decode(&h, &d, LSEV_NAME_SCHED_SWITCH, "\"prev_tid\": 1, \"next_tid\": 2", true);
	is_int(lsev_dispatch(&h.ev, table, 3, &c), 0, "dispatch: the handler's return");
	ok(c.switches == 1 && !c.defaults, "dispatch: a switch to its handler");
	release(&h);
	decode(&h, &d, LSEV_NAME_SYSCALL, "\"tid\": 1", true);
	lsev_dispatch(&h.ev, table, 3, &c);
	ok(c.switches == 1 && c.defaults == 1,
	   "dispatch: the first entry that matches, the default");
	release(&h);
	decode(&h, &d, LSEV_NAME_SCHED_SWITCH, "\"prev_tid\": 99, \"next_tid\": 2", true);
	is_int(lsev_dispatch(&h.ev, table, 3, &c), -EIO, "dispatch: an error comes back");
	is_int(lsev_handle(&d, table, 3, &c), -EIO, "handle: the same, decoded already");
	is_int(lsev_dispatch(&h.ev, table + 2, 1, &c), 0, "dispatch: no handler, 0");
	is_int(c.switches, 3, "dispatch: no handler, no call");
	release(&h);
}

/*
 * Issue 51: one of latsnap's events that its trace says another process wrote is forged: no
 * handler sees it; latsnap's own, or of a trace that does not say, are decoded as ever.
 */
static void test_forged(void)
{
	static const struct lsev_handler table[] = {
		{ LSEV_NAME_SCHED_SWITCH, on_switch },
		{ NULL, on_any },
	};
	static const struct {
		const char *name;
		int origin;
		bool forged;
	} cases[] = {
		{ LSEV_NAME_SCHED_SWITCH, CTF_ORIGIN_OTHER, true },
		{ LSEV_NAME_BIN_INFO, CTF_ORIGIN_OTHER, true },
		{ "latsnap:whatever_next", CTF_ORIGIN_OTHER, true },
		{ "myapp:event", CTF_ORIGIN_OTHER, false },
		{ LSEV_NAME_SCHED_SWITCH, CTF_ORIGIN_RECORDER, false },
		{ LSEV_NAME_SCHED_SWITCH, CTF_ORIGIN_LATSNAP, false },
		{ LSEV_NAME_SCHED_SWITCH, CTF_ORIGIN_UNKNOWN, false },
	};
	struct calls c = { 0 };
	struct held h;
	struct lsev d;
	size_t i;
	int seen;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		decode(&h, &d, cases[i].name, "\"prev_tid\": 1, \"next_tid\": 2, \"pid\": 7", true);
		h.ev.origin = cases[i].origin;
		lsev_decode(&h.ev, &d);
		seen = c.switches + c.defaults;
		lsev_dispatch(&h.ev, table, 2, &c);
		ok(d.forged == cases[i].forged, "forged: %s of origin %d: %s", cases[i].name,
		   cases[i].origin, cases[i].forged ? "forged" : "taken");
		is_int(c.switches + c.defaults - seen, cases[i].forged ? 0 : 1,
		       "forged: %s of origin %d: %s", cases[i].name, cases[i].origin,
		       cases[i].forged ? "no handler sees it" : "handled");
		if (cases[i].forged) {
			ok(d.kind == LSEV_FOREIGN && !d.thread.known && !d.other.known,
			   "forged: nothing decoded of it");
		}
		release(&h);
	}
}

/*
 * The reader against the schema. trace/lsevents.c is not made from events/schema.h: it decodes
 * into struct lsev by meaning (a thread from a prefix's tid, pid and comm, the time rule, fields
 * older traces lack), and trace/ may not include events/ (scripts/check-layers.sh). So this
 * checks it: every field lookup of the reader goes through json-c's json_object_object_get_ex()
 * (ctf_field_u64(), ctf_field_str(), field_array()), which this test stands in for to note the
 * names asked while an event of the schema is decoded.
 */
static bool noting;
static char noted[64][64];
static size_t nr_noted;

json_bool json_object_object_get_ex(const struct json_object *obj, const char *key,
				    struct json_object **value)
{
	static json_bool (*real)(const struct json_object *, const char *, struct json_object **);

	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, "json_object_object_get_ex");
		if (!real) {
			bail_out("json_object_object_get_ex: %s", dlerror());
		}
	}
	if (noting && nr_noted < sizeof(noted) / sizeof(*noted)) {
		snprintf(noted[nr_noted++], sizeof(*noted), "%s", key);
	}
	return real(obj, key, value);
}

/* A field of the schema and the JSON type the trace reader hands it as. */
struct schema_field {
	const char *name;
	json_type type;
};

#define JSON_u json_type_int
#define JSON_s json_type_int
#define JSON_x json_type_int
#define JSON_string json_type_string
#define JSON_text json_type_string
#define JSON_comm json_type_string
#define JSON_textseq json_type_string
#define JSON_hexseq json_type_array
#define JSON_bytes json_type_array
#define SCHEMA_FIELD(kind, name, ...) { #name, JSON_##kind },

#define SCHEMA_KERNEL_EVENT(name, kind) SCHEMA_KERNEL_INSTANCE(name, name, kind)
#define SCHEMA_KERNEL_INSTANCE(cls, name, kind) \
	{ LS_EVENT_NAME(latsnap_kernel, name), { LS_KERNEL_FIELDS_##cls(SCHEMA_FIELD){ NULL } } },
#define SCHEMA_KERNEL_CLASS(cls)
#define SCHEMA_EVENT(name, type, arg) \
	{ LS_EVENT_NAME(latsnap, name), { LS_FIELDS_##name(SCHEMA_FIELD){ NULL } } },

static const struct {
	const char *name;
	struct schema_field fields[32];
} schema[] = { LS_KERNEL_EVENTS(SCHEMA_KERNEL_EVENT, SCHEMA_KERNEL_CLASS, SCHEMA_KERNEL_INSTANCE)
		       LS_EVENTS(SCHEMA_EVENT) };

static bool was_noted(const char *name)
{
	size_t i;

	for (i = 0; i < nr_noted; i++) {
		if (!strcmp(noted[i], name)) {
			return true;
		}
	}
	return false;
}

static void test_schema(void)
{
	bool kinds[LSEV_NR_KINDS] = { false };
	size_t i, k, nr_kinds = 0;

	for (i = 0; i < sizeof(schema) / sizeof(*schema); i++) {
		struct json_object *fields = json_object_new_object();
		const struct schema_field *f;
		struct ctf_event ev;
		struct lsev d;
		bool all = true;

		for (f = schema[i].fields; f->name; f++) {
			struct json_object *v =
				f->type == json_type_int    ? json_object_new_int64(1) :
				f->type == json_type_string ? json_object_new_string("x") :
							      json_object_new_array();

			json_object_object_add(fields, f->name, v);
		}
		ev = (struct ctf_event){ .name = schema[i].name,
					 .ts_ns = CTF_TS,
					 .fields = fields };
		nr_noted = 0;
		noting = true;
		lsev_decode(&ev, &d);
		noting = false;
		ok(d.kind != LSEV_FOREIGN, "schema: %s is one of latsnap's to the reader",
		   schema[i].name);
		if (d.kind != LSEV_FOREIGN && !kinds[d.kind]) {
			kinds[d.kind] = true;
			nr_kinds++;
		}
		for (f = schema[i].fields; f->name; f++) {
			if (!was_noted(f->name)) {
				diag("%s: the reader (trace/lsevents.c) does not read field %s",
				     schema[i].name, f->name);
				all = false;
			}
		}
		ok(all, "schema: the reader reads every field of %s", schema[i].name);
		json_object_put(fields);
	}
	/* And no event the reader knows is missing from the schema. */
	for (k = LSEV_FOREIGN + 1; k < LSEV_NR_KINDS && kinds[k]; k++) {
	}
	is_int(nr_kinds, LSEV_NR_KINDS - 1,
	       "schema: every kind of the reader's is in it (first missing: %zu)", k);
}

int main(void)
{
	test_switch();
	test_wakeup();
	test_syscall();
	test_tasks();
	test_block();
	test_outlier();
	test_stacks();
	test_bin_info_summary();
	test_foreign();
	test_dispatch();
	test_forged();
	test_schema();
	return tap_done();
}
