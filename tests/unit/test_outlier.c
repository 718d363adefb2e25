// SPDX-License-Identifier: GPL-2.0
/*
 * The typed outlier at its JSON edges (lib/outlier.c): outlier_from_json() of an OUTLIER with
 * every member, then outlier_to_json(), gives the same JSON text back; a member of the wrong type
 * is refused with -EINVAL; a missing one reads as zero; and outlier_print_head() is where
 * outlier_print_text() begins.
 */
#include <json-c/json.h>

#include "lib/outlier.h"
#include "tap.h"

/*
 * Every member, in the order outlier_to_json() writes them: a symbol that is null, a path in a
 * module, a waker, a wait chain whose first link has unknown_ns (written only when not 0) and
 * whose second has no syscall, a user stack with the preload library's unwind_ns and status (a
 * negative one) and truncated and in_trace, two Python frames in it (one whose code object was
 * not read) and a native frame with its source line (a goroutine's), and flags.
 */
static const char full[] =
	"{\"kind\":\"syscall\",\"pid\":3713,\"tid\":3716,\"comm\":\"rebuilder\","
	"\"syscall\":\"clock_nanosleep\",\"syscall_nr\":230,\"start_ns\":4900760613963,"
	"\"end_ns\":4900880807806,\"duration_ns\":120193843,\"on_cpu_ns\":6677,"
	"\"blocked_ns\":120112000,\"runqueue_ns\":75166,\"switches\":3,"
	"\"cause\":\"Requested sleep (nanosleep)\","
	"\"kernel_stacks\":[{\"weight_ns\":120112000,\"frames\":["
	"{\"addr\":\"0xffffffff81417ecc\",\"symbol\":\"hrtimer_nanosleep\",\"offset\":116,"
	"\"module\":\"kernel\"},"
	"{\"addr\":\"0xffffffffc0a01000\",\"symbol\":null,\"offset\":0,\"module\":\"nvme\"}]},"
	"{\"weight_ns\":81,\"frames\":[]}],"
	"\"user_stack\":{\"source\":\"unwind\",\"unwind_ns\":70726,\"status\":-2,\"frames\":["
	"{\"addr\":\"0x7fe3a9a73545\",\"symbol\":\"clock_nanosleep@GLIBC_2.2.5\",\"offset\":101,"
	"\"module\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\"},"
	"{\"addr\":\"0x7fe3a93ec750\",\"symbol\":\"Pool.wait_for_lock\",\"offset\":0,"
	"\"module\":\"/srv/app/pool.py\",\"line\":12},"
	"{\"addr\":\"0x7fe3a93ec800\",\"symbol\":null,\"offset\":0,\"module\":null,\"line\":0},"
	"{\"addr\":\"0x485c45\",\"symbol\":\"main.nap\",\"offset\":37,"
	"\"module\":\"/usr/bin/gowaits\",\"file\":\"/src/waits.go\",\"line\":68},"
	"{\"addr\":\"0x55667c683363\",\"symbol\":null,\"offset\":0,"
	"\"module\":\"/usr/bin/latsnap-demo\"}],\"truncated\":true,\"in_trace\":true},"
	"\"waker\":{\"pid\":3713,\"tid\":3714,\"comm\":\"writer\",\"frames\":["
	"{\"addr\":\"0xffffffff8142a3a4\",\"symbol\":\"try_to_wake_up\",\"offset\":932,"
	"\"module\":\"kernel\"}]},"
	"\"holder\":{\"pid\":3713,\"tid\":3715,\"comm\":\"compute\","
	"\"what\":\"pthread mutex 0x55667c6a4040\",\"state\":\"running\",\"frames\":["
	"{\"addr\":\"0x55667c683400\",\"symbol\":\"crunch\",\"offset\":16,"
	"\"module\":\"/usr/bin/latsnap-demo\"}],\"kernel_frames\":[]},"
	"\"wait_chain\":[{\"depth\":1,\"pid\":3713,\"tid\":3714,\"comm\":\"writer\","
	"\"from_ns\":4900760613963,\"to_ns\":4900880807806,\"on_cpu_ns\":100,"
	"\"blocked_ns\":120000000,\"runqueue_ns\":193743,\"unknown_ns\":7,"
	"\"syscall\":\"write\",\"frames\":["
	"{\"addr\":\"0x7fe3a9a12345\",\"symbol\":\"write\",\"offset\":20,"
	"\"module\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\"}]},"
	"{\"depth\":2,\"pid\":1,\"tid\":1,\"comm\":\"init\",\"from_ns\":4900760613963,"
	"\"to_ns\":4900880807806,\"on_cpu_ns\":0,\"blocked_ns\":0,\"runqueue_ns\":120193843,"
	"\"syscall\":null,\"frames\":[]}],"
	"\"signalled\":true,\"state\":\"unfinished\","
	"\"deadlock\":{\"threads\":[{\"pid\":3713,\"tid\":3713,\"comm\":\"rebuilder\"},"
	"{\"pid\":3713,\"tid\":3715,\"comm\":\"compute\"}]},"
	"\"flags\":[\"waker-in-interrupt: no\",\"user-stack-truncated: at 5 frames\"]}";

/* A sleep: no syscall, no waker, no chain, no user stack; unwind_ns and status not written. */
static const char sleep_outlier[] =
	"{\"kind\":\"sleep\",\"pid\":7,\"tid\":8,\"comm\":\"s\",\"syscall\":null,"
	"\"syscall_nr\":null,\"start_ns\":1,\"end_ns\":2,\"duration_ns\":1,\"on_cpu_ns\":0,"
	"\"blocked_ns\":1,\"runqueue_ns\":0,\"switches\":0,\"cause\":\"\",\"kernel_stacks\":[],"
	"\"user_stack\":{\"source\":\"none\",\"frames\":[]},\"waker\":null,\"holder\":null,"
	"\"wait_chain\":[],\"signalled\":false,\"state\":\"ended\",\"deadlock\":null,\"flags\":[]}";

/* A request: its probe and argument, one wait (a sleep outlier of its own), a CPU profile. */
#define SLEEP_WAIT                                                                                 \
	"{\"kind\":\"sleep\",\"pid\":7,\"tid\":8,\"comm\":\"s\",\"syscall\":null,"                  \
	"\"syscall_nr\":null,\"start_ns\":2,\"end_ns\":3,\"duration_ns\":1,\"on_cpu_ns\":0,"         \
	"\"blocked_ns\":1,\"runqueue_ns\":0,\"switches\":0,\"cause\":\"\",\"kernel_stacks\":[],"      \
	"\"user_stack\":{\"source\":\"none\",\"frames\":[]},\"waker\":null,\"holder\":null,"         \
	"\"wait_chain\":[],\"signalled\":false,\"state\":\"ended\",\"deadlock\":null,\"flags\":[]}"
static const char request_outlier[] =
	"{\"kind\":\"request\",\"pid\":7,\"tid\":8,\"comm\":\"postgres\",\"syscall\":null,"
	"\"syscall_nr\":null,\"start_ns\":1,\"end_ns\":401,\"duration_ns\":400,\"on_cpu_ns\":100,"
	"\"blocked_ns\":300,\"runqueue_ns\":0,\"switches\":4,\"cause\":\"lock wait\","
	"\"kernel_stacks\":[],\"user_stack\":{\"source\":\"none\",\"frames\":[]},\"waker\":null,"
	"\"holder\":null,\"request\":{\"probe\":\"usdt:/usr/bin/postgres:postgresql:query__start,"
	"usdt:/usr/bin/postgres:postgresql:query__done\",\"arg\":\"update t set v = 1\"},"
	"\"waits\":[" SLEEP_WAIT "],\"cpu_profile\":[{\"weight_ns\":100,\"frames\":["
	"{\"addr\":\"0x55667c683400\",\"symbol\":\"ExecScan\",\"offset\":16,"
	"\"module\":\"/usr/bin/postgres\"}]}],"
	"\"wait_chain\":[],\"signalled\":false,\"state\":\"ended\",\"deadlock\":null,\"flags\":[]}";

/* A keyed request (issue 52): its object, the others its loop began, its upstream. */
static const char keyed_outlier[] =
	"{\"kind\":\"request\",\"pid\":7,\"tid\":7,\"comm\":\"haproxy\",\"syscall\":null,"
	"\"syscall_nr\":null,\"start_ns\":1,\"end_ns\":301,\"duration_ns\":300,\"on_cpu_ns\":0,"
	"\"blocked_ns\":300,\"runqueue_ns\":0,\"switches\":0,\"cause\":\"upstream\","
	"\"kernel_stacks\":[],\"user_stack\":{\"source\":\"none\",\"frames\":[]},\"waker\":null,"
	"\"holder\":null,\"request\":{\"probe\":\"uretprobe:/h:stream_new=ret,"
	"uprobe:/h:stream_free=arg1\",\"arg\":null,\"key\":\"0x7f00\",\"others\":3,"
	"\"upstream\":{\"pid\":9,\"tid\":10,\"comm\":\"backend\",\"at_ns\":299}},"
	"\"waits\":[],\"cpu_profile\":[],"
	"\"wait_chain\":[],\"signalled\":false,\"state\":\"ended\",\"deadlock\":null,\"flags\":[]}";

static struct json_object *parse(const char *text)
{
	struct json_object *obj = json_tokener_parse(text);

	if (!obj) {
		bail_out("test bug: not JSON: %s", text);
	}
	return obj;
}

/* @text read into a struct outlier and written back, as text (NULL when it is not read). */
static char *round_trip(const char *text, struct outlier **op)
{
	struct json_object *in = parse(text), *out;
	struct outlier *o = NULL;
	char *back = NULL;

	if (!outlier_from_json(in, &o)) {
		out = outlier_to_json(o);
		back = strdup(json_object_to_json_string_ext(
			out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(out);
	}
	json_object_put(in);
	if (op) {
		*op = o;
	} else {
		outlier_free(o);
	}
	return back;
}

static void test_round_trip(void)
{
	struct outlier *o;
	char *back;

	back = round_trip(full, &o);
	is_str(back ? back : "(not read)", full,
	       "an OUTLIER with every member reads and writes back the same");
	free(back);
	if (!ok(o != NULL, "  read")) {
		return;
	}
	ok(o->kind == OUTLIER_SYSCALL && o->syscall_nr == 230 && o->switches == 3 && o->signalled,
	   "  a syscall (230), 3 switches, signalled");
	ok(o->nr_kernel_stacks == 2 && !o->kernel_stacks[0].frames.v[1].symbol &&
		   o->kernel_stacks[0].frames.v[0].addr == 0xffffffff81417eccULL,
	   "  its kernel stacks: the addresses read from hex, a null symbol kept null");
	ok(o->user_stack.source == OUTLIER_USTACK_UNWIND && o->user_stack.unwound &&
		   o->user_stack.unwind_ns == 70726 && o->user_stack.status == -2 &&
		   o->user_stack.truncated && o->user_stack.in_trace,
	   "  its user stack: unwound in 70726 ns, status -2, truncated, in the trace");
	ok(o->user_stack.frames.nr == 5 && o->user_stack.frames.v[1].interp &&
		   !o->user_stack.frames.v[1].file && !o->user_stack.frames.v[3].interp &&
		   o->user_stack.frames.v[3].file &&
		   !strcmp(o->user_stack.frames.v[3].file, "/src/waits.go") &&
		   o->user_stack.frames.v[3].line == 68,
	   "  a Python frame has a line; a native frame with a file has its line, and is native");
	ok(o->waker && o->waker->tid == 3714 && o->waker->frames.nr == 1, "  its waker");
	ok(o->holder && o->holder->tid == 3715 && o->holder->frames.nr == 1 &&
		   !strcmp(o->holder->what, "pthread mutex 0x55667c6a4040") &&
		   !strcmp(o->holder->state, "running") && !o->holder->kernel_frames.nr,
	   "  its holder: tid, what it holds, its state and user frames");
	ok(o->nr_links == 2 && o->wait_chain[0].unknown_ns == 7 && !o->wait_chain[1].unknown_ns &&
		   !o->wait_chain[1].syscall,
	   "  its wait chain: unknown_ns 7, then a link in no syscall");
	ok(o->nr_flags == 2 && outlier_has_flag(o, "user-stack-truncated"), "  its flags");
	ok(o->state == OUTLIER_UNFINISHED && o->deadlock && o->deadlock->nr == 2 &&
		   o->deadlock->threads[1].tid == 3715 &&
		   !strcmp(o->deadlock->threads[1].comm, "compute"),
	   "  its state, unfinished, and its deadlock's two threads in order");
	outlier_free(o);

	back = round_trip(sleep_outlier, NULL);
	is_str(back ? back : "(not read)", sleep_outlier,
	       "a sleep without syscall, waker, chain or user stack writes back the same");
	free(back);

	back = round_trip(request_outlier, &o);
	is_str(back ? back : "(not read)", request_outlier,
	       "a request with its probe, argument, a wait and a CPU profile writes back the same");
	ok(o && o->kind == OUTLIER_REQUEST && o->request &&
		   !strcmp(o->request->arg, "update t set v = 1") && o->nr_waits == 1 &&
		   o->waits[0]->kind == OUTLIER_SLEEP && o->waits[0]->start_ns == 2 &&
		   o->nr_cpu_profile == 1 && o->cpu_profile[0].weight_ns == 100 &&
		   !strcmp(o->cpu_profile[0].frames.v[0].symbol, "ExecScan"),
	   "  read: kind request, its argument, its wait, its profile");
	outlier_free(o);
	free(back);

	back = round_trip(keyed_outlier, &o);
	is_str(back ? back : "(not read)", keyed_outlier,
	       "a keyed request with its object, others and upstream writes back the same");
	ok(o && o->request && o->request->key && !strcmp(o->request->key, "0x7f00") &&
		   o->request->others == 3 && o->request->upstream_tid == 10 &&
		   o->request->upstream_pid == 9 && o->request->upstream_ns == 299 &&
		   !strcmp(o->request->upstream_comm, "backend"),
	   "  read: its key, others and upstream");
	outlier_free(o);
	free(back);
}

/*
 * A summary written before "state" and "deadlock" said them in prose: the flags still-blocked and
 * unfinished, and a cause that begins "Deadlock". Read so, and written back typed.
 */
static void test_before_state(void)
{
	struct json_object *obj;
	struct outlier *o = NULL;
	const char *text;

	obj = parse("{\"kind\":\"syscall\",\"pid\":1,\"tid\":2,\"comm\":\"a\","
		    "\"syscall\":\"futex\",\"cause\":\"Deadlock: 2 threads wait for each other\","
		    "\"flags\":[\"still-blocked: still waiting when checked\"]}");
	ok(!outlier_from_json(obj, &o) && o, "an OUTLIER from before \"state\" reads");
	json_object_put(obj);
	if (!o) {
		return;
	}
	ok(o->state == OUTLIER_STILL_BLOCKED, "  its still-blocked flag: state still-blocked");
	ok(o->deadlock && !o->deadlock->nr, "  its cause \"Deadlock...\": a deadlock, threads unknown");
	obj = outlier_to_json(o);
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	ok(strstr(text, "\"state\":\"still-blocked\",\"deadlock\":{\"threads\":[]}") != NULL,
	   "  written back typed (%s)", text);
	json_object_put(obj);
	outlier_free(o);
	o = NULL;
	obj = parse("{\"kind\":\"syscall\",\"pid\":1,\"tid\":2,\"comm\":\"a\","
		    "\"cause\":\"Deadlock of the night shift\",\"state\":\"ended\","
		    "\"flags\":[\"unfinished: not a state any more\"]}");
	ok(!outlier_from_json(obj, &o) && o && o->state == OUTLIER_ENDED && !o->deadlock,
	   "with \"state\": the flags and the cause say nothing of it (a rule's \"Deadlock...\")");
	json_object_put(obj);
	outlier_free(o);
}

static void test_wrong_type(void)
{
	static const struct {
		const char *from, *to;
	} bad[] = {
		{ "\"pid\":3713", "\"pid\":\"3713\"" },
		{ "\"kind\":\"syscall\"", "\"kind\":0" },
		{ "\"comm\":\"rebuilder\"", "\"comm\":7" },
		{ "\"switches\":3", "\"switches\":1.5" },
		{ "\"signalled\":true", "\"signalled\":1" },
		{ "\"weight_ns\":81", "\"weight_ns\":\"81\"" },
		{ "\"offset\":116", "\"offset\":\"116\"" },
		{ "\"source\":\"unwind\"", "\"source\":1" },
		{ "\"status\":-2", "\"status\":\"ENOENT\"" },
		{ "\"truncated\":true", "\"truncated\":\"yes\"" },
		{ "\"in_trace\":true", "\"in_trace\":1" },
		{ "\"waker\":{\"pid\":3713", "\"waker\":{\"pid\":true" },
		{ "\"holder\":{\"pid\":3713", "\"holder\":{\"pid\":[]" },
		{ "\"state\":\"running\"", "\"state\":7" },
		{ "\"line\":12", "\"line\":\"12\"" },
		{ "\"line\":12", "\"line\":-1" },
		{ "\"unknown_ns\":7", "\"unknown_ns\":\"7\"" },
		{ "\"syscall\":\"write\"", "\"syscall\":1" },
		{ "\"wait_chain\":[{", "\"wait_chain\":[7,{" },
		{ "\"flags\":[\"waker", "\"flags\":[1,\"waker" },
		{ "\"state\":\"unfinished\"", "\"state\":\"paused\"" },
		{ "\"state\":\"unfinished\"", "\"state\":2" },
		{ "\"deadlock\":{", "\"deadlock\":7,\"x\":{" },
		{ "\"threads\":[{\"pid\":3713", "\"threads\":[{\"pid\":\"3713\"" },
		{ "\"threads\":[{", "\"threads\":[7,{" },
	};
	struct json_object *obj;
	struct outlier *o;
	const char *at;
	char *text;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		at = strstr(full, bad[i].from);
		if (!at) {
			bail_out("test bug: '%s' not in the outlier", bad[i].from);
		}
		if (asprintf(&text, "%.*s%s%s", (int)(at - full), full, bad[i].to,
			     at + strlen(bad[i].from)) < 0) {
			bail_out("out of memory");
		}
		obj = parse(text);
		o = (struct outlier *)1;
		is_int(outlier_from_json(obj, &o), -EINVAL, "'%s' -> '%s': -EINVAL", bad[i].from,
		       bad[i].to);
		ok(!o, "  and no outlier");
		json_object_put(obj);
		free(text);
	}
	obj = parse("[1]");
	is_int(outlier_from_json(obj, &o), -EINVAL, "an array is not an outlier: -EINVAL");
	json_object_put(obj);
	obj = parse("{}");
	o = NULL;
	is_int(outlier_from_json(obj, &o), 0, "an empty object reads: a missing member is zero");
	/* Outside a syscall unless it says "syscall": the rules' fallback for a bare outlier. */
	ok(o && o->kind == OUTLIER_SLEEP && !o->pid && !o->comm && !o->cause && !o->waker &&
		   !o->nr_kernel_stacks && o->user_stack.source == OUTLIER_USTACK_NONE,
	   "  a sleep of pid 0, no comm, no cause, no stacks");
	outlier_free(o);
	json_object_put(obj);
}

static void test_print_head(void)
{
	struct json_object *obj = parse(full);
	char *head = NULL, *text = NULL;
	size_t hlen = 0, tlen = 0;
	struct outlier *o;
	FILE *out;

	if (outlier_from_json(obj, &o)) {
		bail_out("the full outlier is not read");
	}
	out = open_memstream(&head, &hlen);
	outlier_print_head(out, o);
	fclose(out);
	out = open_memstream(&text, &tlen);
	outlier_print_text(out, o);
	fclose(out);
	is_str(head,
	       "syscall clock_nanosleep  rebuilder[pid 3713 tid 3716]  120.194 ms  at "
	       "4900.760613963\n"
	       "  on-cpu 6.677 us (0.0%)  blocked 120.112 ms (99.9%)  runqueue 75.166 us (0.1%)"
	       "  switches 3\n"
	       "  cause: Requested sleep (nanosleep)\n",
	       "outlier_print_head(): what, who, how long, when, the split and the cause");
	ok(tlen > hlen && !strncmp(text, head, hlen),
	   "  outlier_print_text() begins with it, then goes on");
	free(head);
	free(text);
	outlier_free(o);
	json_object_put(obj);
}

/* A Python frame for people: name (file's base name:line); no line, no file, nothing read. */
static void test_interp_name(void)
{
	struct outlier_frame f = { .addr = 0x7f00, .symbol = "Pool.wait", .module = "/srv/pool.py",
				   .interp = true, .line = 12 };
	char buf[LS_INTERP_NAME_LEN];

	outlier_interp_name(&f, buf, sizeof(buf));
	is_str(buf, "Pool.wait (pool.py:12)", "a Python frame: name (file:line)");
	f.line = 0;
	outlier_interp_name(&f, buf, sizeof(buf));
	is_str(buf, "Pool.wait (pool.py)", "line unknown: no line");
	f.module = "<string>";
	outlier_interp_name(&f, buf, sizeof(buf));
	is_str(buf, "Pool.wait (<string>)", "a file with no directory");
	f.symbol = NULL;
	f.module = NULL;
	outlier_interp_name(&f, buf, sizeof(buf));
	is_str(buf, "? (Python code 0x7f00)", "its code object not read: its address");
}

int main(void)
{
	test_round_trip();
	test_before_state();
	test_interp_name();
	test_wrong_type();
	test_print_head();
	return tap_done();
}
