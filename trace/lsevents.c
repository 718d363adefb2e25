// SPDX-License-Identifier: GPL-2.0
/*
 * lsevents.c - latsnap's own trace events decoded from what the trace reader hands over (struct
 * ctf_event): one place that knows their names, their fields, when each happened and which
 * threads it is about (the rules are in lsevents.h).
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"

/* What decodes the payload of one kind, besides its time and threads. */
typedef void (*decode_fn)(struct json_object *f, struct lsev *out);

static int64_t field_i64(struct json_object *f, const char *name)
{
	return (int64_t)ctf_field_u64(f, name, NULL);
}

static struct json_object *field_array(struct json_object *f, const char *name)
{
	struct json_object *v;

	if (json_object_object_get_ex(f, name, &v) && json_object_is_type(v, json_type_array)) {
		return v;
	}
	return NULL;
}

/* The thread of fields @pre "tid", "pid", "comm" of @f ("prev_": prev_tid, ...). */
static struct lsev_thread field_thread(struct json_object *f, const char *pre)
{
	char tid[64], pid[64], comm[64];
	struct lsev_thread t = { 0 };
	bool found;

	snprintf(tid, sizeof(tid), "%stid", pre);
	snprintf(pid, sizeof(pid), "%spid", pre);
	snprintf(comm, sizeof(comm), "%scomm", pre);
	t.tid = (int64_t)ctf_field_u64(f, tid, &found);
	if (found) {
		t.known = true;
		t.pid = field_i64(f, pid);
		t.comm = ctf_field_str(f, comm, NULL);
	}
	return t;
}

/* The thread that emitted the event: its context fields. */
static struct lsev_thread emitter(struct json_object *f)
{
	struct lsev_thread t = { 0 };
	bool found;

	t.tid = (int64_t)ctf_field_u64(f, "vtid", &found);
	if (found) {
		t.known = true;
		t.context = true;
		t.pid = field_i64(f, "vpid");
		t.comm = ctf_field_str(f, "procname", NULL);
	}
	return t;
}

static void decode_switch(struct json_object *f, struct lsev *out)
{
	out->thread = field_thread(f, "prev_");
	out->other = field_thread(f, "next_");
	out->u.sw.cpu = (uint32_t)ctf_field_u64(f, "cpu", NULL);
	out->u.sw.prev_state = field_i64(f, "prev_state");
	out->u.sw.preempted = ctf_field_u64(f, "preempted", NULL) != 0;
	out->u.sw.prev_syscall = ctf_field_str(f, "prev_syscall", "");
	out->u.sw.prev_stack = field_array(f, "prev_stack");
}

static void decode_wakeup(struct json_object *f, struct lsev *out)
{
	out->thread = field_thread(f, "");
	out->other = field_thread(f, "waker_");
	out->u.wakeup.cpu = (uint32_t)ctf_field_u64(f, "cpu", NULL);
	out->u.wakeup.in_irq = ctf_field_u64(f, "in_irq", NULL) != 0;
	out->u.wakeup.waker_stack = field_array(f, "waker_stack");
}

static void decode_syscall(struct json_object *f, struct lsev *out)
{
	out->thread = field_thread(f, "");
	out->u.syscall.nr = field_i64(f, "nr");
	out->u.syscall.name = ctf_field_str(f, "name", "");
	out->u.syscall.start_ns = ctf_field_u64(f, "start_ns", NULL);
	out->u.syscall.duration_ns = ctf_field_u64(f, "duration_ns", NULL);
	out->u.syscall.ret = field_i64(f, "ret");
}

/* process_fork, process_exec, process_exit: a thread and the other one. */
static void decode_task(struct json_object *f, struct lsev *out)
{
	out->thread = field_thread(f, "");
	out->other = field_thread(f, "other_");
}

static void decode_interest(struct json_object *f, struct lsev *out)
{
	decode_task(f, out);
	out->u.interest.reason = ctf_field_str(f, "reason", "");
}

static void decode_block(struct json_object *f, struct lsev *out)
{
	out->thread = field_thread(f, "");
	out->u.block.dev = ctf_field_u64(f, "dev", NULL);
	out->u.block.sector = ctf_field_u64(f, "sector", NULL);
	out->u.block.bytes = ctf_field_u64(f, "bytes", NULL);
	out->u.block.op = (uint32_t)ctf_field_u64(f, "op", NULL);
	out->u.block.issue_ns = ctf_field_u64(f, "issue_ns", NULL);
	out->u.block.error = (int32_t)field_i64(f, "error");
}

static void decode_outlier(struct json_object *f, struct lsev *out)
{
	struct lsev_outlier *o = &out->u.outlier;

	out->thread = field_thread(f, "");
	out->other = field_thread(f, "waker_");
	o->kind = ctf_field_str(f, "kind", "");
	o->syscall = ctf_field_str(f, "syscall", "");
	o->syscall_nr = field_i64(f, "syscall_nr");
	o->start_ns = ctf_field_u64(f, "start_ns", NULL);
	o->end_ns = ctf_field_u64(f, "end_ns", NULL);
	o->duration_ns = ctf_field_u64(f, "duration_ns", NULL);
	o->on_cpu_ns = ctf_field_u64(f, "on_cpu_ns", NULL);
	o->blocked_ns = ctf_field_u64(f, "blocked_ns", NULL);
	o->runqueue_ns = ctf_field_u64(f, "runqueue_ns", NULL);
	o->switches = (uint32_t)ctf_field_u64(f, "switches", NULL);
	o->cause = ctf_field_str(f, "cause", "");
	o->signalled = ctf_field_u64(f, "signalled", NULL) != 0;
	o->flags = ctf_field_str(f, "flags", "");
}

static void decode_kernel_stack(struct json_object *f, struct lsev *out)
{
	struct lsev_kernel_stack *k = &out->u.kstack;

	out->thread = field_thread(f, "");
	k->end_ns = ctf_field_u64(f, "end_ns", NULL);
	k->role = ctf_field_str(f, "role", "");
	k->index = (uint32_t)ctf_field_u64(f, "index", NULL);
	k->weight_ns = ctf_field_u64(f, "weight_ns", NULL);
	k->ips = field_array(f, "ips");
	k->symbols = ctf_field_str(f, "symbols", "");
}

static void decode_user_stack(struct json_object *f, struct lsev *out)
{
	struct lsev_user_stack *u = &out->u.ustack;

	out->thread = field_thread(f, "");
	u->end_ns = ctf_field_u64(f, "end_ns", &u->has_end_ns);
	u->depth = (uint32_t)ctf_field_u64(f, "depth", NULL);
	u->truncated = ctf_field_u64(f, "truncated", NULL) != 0;
	u->status = (uint8_t)ctf_field_u64(f, "status", NULL);
	u->unwind_ns = ctf_field_u64(f, "unwind_ns", NULL);
	u->ips = field_array(f, "ips");
}

static void decode_bin_info(struct json_object *f, struct lsev *out)
{
	struct lsev_bin_info *b = &out->u.bin;

	b->pid = (int64_t)ctf_field_u64(f, "pid", &b->has_pid);
	b->baddr = ctf_field_u64(f, "baddr", &b->has_baddr);
	b->memsz = ctf_field_u64(f, "memsz", NULL);
	b->path = ctf_field_str(f, "path", NULL);
	b->build_id = field_array(f, "build_id");
}

static void decode_summary(struct json_object *f, struct lsev *out)
{
	out->u.summary.id = ctf_field_str(f, "id", "");
	out->u.summary.part = (uint32_t)ctf_field_u64(f, "part", NULL);
	out->u.summary.parts = (uint32_t)ctf_field_u64(f, "parts", NULL);
	out->u.summary.json = ctf_field_str(f, "json", "");
}

/* Each of latsnap's events: its name, its kind, its decoder. */
static const struct {
	const char *name;
	enum lsev_kind kind;
	decode_fn decode;
} lsev_kinds[] = {
	{ LSEV_NAME_OUTLIER, LSEV_OUTLIER, decode_outlier },
	{ LSEV_NAME_KERNEL_STACK, LSEV_KERNEL_STACK, decode_kernel_stack },
	{ LSEV_NAME_USER_STACK, LSEV_USER_STACK, decode_user_stack },
	{ LSEV_NAME_BIN_INFO, LSEV_BIN_INFO, decode_bin_info },
	{ LSEV_NAME_SUMMARY, LSEV_SUMMARY, decode_summary },
	{ LSEV_NAME_SCHED_SWITCH, LSEV_SCHED_SWITCH, decode_switch },
	{ LSEV_NAME_SCHED_WAKEUP, LSEV_SCHED_WAKEUP, decode_wakeup },
	{ LSEV_NAME_SYSCALL, LSEV_SYSCALL, decode_syscall },
	{ LSEV_NAME_PROCESS_FORK, LSEV_PROCESS_FORK, decode_task },
	{ LSEV_NAME_PROCESS_EXEC, LSEV_PROCESS_EXEC, decode_task },
	{ LSEV_NAME_PROCESS_EXIT, LSEV_PROCESS_EXIT, decode_task },
	{ LSEV_NAME_INTEREST, LSEV_INTEREST, decode_interest },
	{ LSEV_NAME_BLOCK_RQ_ISSUE, LSEV_BLOCK_RQ_ISSUE, decode_block },
	{ LSEV_NAME_BLOCK_RQ_COMPLETE, LSEV_BLOCK_RQ_COMPLETE, decode_block },
};

/* Is @name a tid field: "tid" or "*_tid"? */
static bool tid_field(const char *name)
{
	size_t len = strlen(name);

	return !strcmp(name, "tid") || (len > 4 && !strcmp(name + len - 4, "_tid"));
}

/*
 * The thread an event not latsnap's is about: its payload's tid, else its first *_tid field (the
 * pid and comm of the same prefix with it).
 */
static struct lsev_thread foreign_thread(struct json_object *f)
{
	struct lsev_thread t = field_thread(f, "");
	char pre[64];

	if (!json_object_is_type(f, json_type_object)) {
		return t;
	}
	json_object_object_foreach(f, key, val)
	{
		if (t.known) {
			break;
		}
		if (json_object_is_type(val, json_type_int) && tid_field(key)) {
			snprintf(pre, sizeof(pre), "%.*s", (int)(strlen(key) - 3), key);
			t = field_thread(f, pre);
		}
	}
	return t;
}

/* When @out happened (the rule in lsevents.h). */
static uint64_t event_time(const struct ctf_event *ev, const struct lsev *out)
{
	uint64_t when;
	bool found;

	if (out->kind == LSEV_USER_STACK && out->u.ustack.has_end_ns) {
		return out->u.ustack.end_ns + out->u.ustack.unwind_ns;
	}
	if (!strncmp(ev->name, LSEV_KERNEL_PROVIDER, strlen(LSEV_KERNEL_PROVIDER))) {
		when = ctf_field_u64(ev->fields, "ts_ns", &found);
		return found ? when : ev->ts_ns;
	}
	return ev->ts_ns;
}

/**
 * lsev_decode() - decode event @ev of a trace into @out
 * @ev: the event as the trace reader gives it (or made up: name, time, fields)
 * @out: set to it, decoded; LSEV_FOREIGN with its threads only when it is not latsnap's
 *
 * Missing fields decode as 0, "" (strings) and NULL (arrays); a thread field missing leaves that
 * thread unknown. One of latsnap's events written by another process is @forged, its threads
 * unknown (the rule in lsevents.h).
 */
void lsev_decode(const struct ctf_event *ev, struct lsev *out)
{
	size_t i;

	*out = (struct lsev){ .kind = LSEV_FOREIGN, .name = ev->name, .ev = ev };
	if (ev->origin == CTF_ORIGIN_OTHER &&
	    (!strncmp(ev->name, LSEV_PROVIDER, strlen(LSEV_PROVIDER)) ||
	     !strncmp(ev->name, LSEV_KERNEL_PROVIDER, strlen(LSEV_KERNEL_PROVIDER)))) {
		out->forged = true;
		out->ts_ns = ev->ts_ns;
		return;
	}
	for (i = 0; i < sizeof(lsev_kinds) / sizeof(*lsev_kinds); i++) {
		if (!strcmp(ev->name, lsev_kinds[i].name)) {
			out->kind = lsev_kinds[i].kind;
			lsev_kinds[i].decode(ev->fields, out);
			break;
		}
	}
	if (out->kind == LSEV_FOREIGN) {
		out->thread = foreign_thread(ev->fields);
	}
	/* A record of latsnap's without its thread is damaged: latsnap's thread is not it. */
	if (!out->thread.known && (out->kind == LSEV_FOREIGN || out->kind == LSEV_BIN_INFO ||
				   out->kind == LSEV_SUMMARY)) {
		out->thread = emitter(ev->fields);
	}
	out->ts_ns = event_time(ev, out);
}

/**
 * lsev_handle() - hand decoded event @ev to its handler in @table
 * @ev: the event
 * @table: the caller's handlers: the first entry naming the event, or the first with a NULL
 *	name, handles it
 * @nr: entries in @table
 * @ctx: passed to the handler
 *
 * Return: the handler's return; 0 when no entry handles the event, or it is @forged.
 */
int lsev_handle(const struct lsev *ev, const struct lsev_handler *table, size_t nr, void *ctx)
{
	size_t i;

	if (ev->forged) {
		return 0;
	}
	for (i = 0; i < nr; i++) {
		if (!table[i].name || !strcmp(table[i].name, ev->name)) {
			return table[i].fn(ev, ctx);
		}
	}
	return 0;
}

/**
 * lsev_dispatch() - decode @ev and hand it to its handler in @table (as lsev_handle())
 *
 * Return: the handler's return; 0 when no entry handles the event.
 */
int lsev_dispatch(const struct ctf_event *ev, const struct lsev_handler *table, size_t nr,
		  void *ctx)
{
	struct lsev decoded;

	lsev_decode(ev, &decoded);
	return lsev_handle(&decoded, table, nr, ctx);
}

/**
 * lsev_threads() - the threads event @ev is about, at most @max of them, into @tids
 *
 * @thread then @other for latsnap's events; for another's, @thread and then its further tid and
 * *_tid fields, in payload order, each thread once.
 *
 * Return: how many.
 */
size_t lsev_threads(const struct lsev *ev, int64_t *tids, size_t max)
{
	size_t n = 0, i;

	if (ev->thread.known && n < max) {
		tids[n++] = ev->thread.tid;
	}
	if (ev->kind != LSEV_FOREIGN) {
		if (ev->other.known && n < max) {
			tids[n++] = ev->other.tid;
		}
		return n;
	}
	if (!json_object_is_type(ev->ev->fields, json_type_object)) {
		return n;
	}
	json_object_object_foreach(ev->ev->fields, key, val)
	{
		if (n == max || !json_object_is_type(val, json_type_int) || !tid_field(key)) {
			continue;
		}
		for (i = 0; i < n && tids[i] != json_object_get_int64(val); i++) {
		}
		if (i == n) {
			tids[n++] = json_object_get_int64(val);
		}
	}
	return n;
}

/**
 * lsev_thread_of() - what event @ev says of thread @tid: its @thread or its @other, or NULL
 */
const struct lsev_thread *lsev_thread_of(const struct lsev *ev, int64_t tid)
{
	if (ev->thread.known && ev->thread.tid == tid) {
		return &ev->thread;
	}
	if (ev->other.known && ev->other.tid == tid) {
		return &ev->other;
	}
	return NULL;
}

/**
 * lsev_ips() - the addresses of a stack field @arr (an array of integers) into @ips
 * @arr: the array, or NULL
 * @ips: room for @max
 * @max: a longer stack is not one latsnap wrote: none is taken of it
 *
 * Return: how many.
 */
size_t lsev_ips(struct json_object *arr, uint64_t *ips, size_t max)
{
	size_t i, n = arr ? json_object_array_length(arr) : 0;

	if (n > max) {
		return 0;
	}
	for (i = 0; i < n; i++) {
		ips[i] = (uint64_t)json_object_get_int64(json_object_array_get_idx(arr, i));
	}
	return n;
}
