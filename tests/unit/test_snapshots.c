// SPDX-License-Identifier: GPL-2.0
/*
 * The readers of latsnap report/show/flame without a trace: snapshots_parse_summary() on good
 * and broken summaries and the typed summary it gives, the summary written back for show --json
 * (members this latsnap does not know passed through), snapshots_load() on a directory with
 * complete, incomplete and corrupt snapshots (and things that are not snapshots), the folded
 * stacks and the SVG of a known summary, and C++ demangling.
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <sys/stat.h>

#include "lib/outlier.h"
#include "lib/demangle.h"
#include "review/flame.h"
#include "review/snapshots.h"
#include "tap.h"

/*
 * One outlier with BPF glue on top of its kernel stack (a JIT-ed program: bpf_prog_ and its
 * 16-hex-digit tag, as classify/frames.c has it), a mangled user frame and a ';'.
 */
static const char good[] =
	"{\"version\":1,\"id\":\"A\",\"host\":\"h\",\"created\":\"2026-01-01T00:00:00Z\","
	"\"trace\":\"trace\",\"skipped\":2,\"flags\":[],\"outliers\":["
	"{\"kind\":\"syscall\",\"pid\":10,\"tid\":11,\"comm\":\"w;x\",\"syscall\":\"read\","
	"\"syscall_nr\":0,\"start_ns\":100,\"end_ns\":300,\"duration_ns\":200,\"on_cpu_ns\":10,"
	"\"blocked_ns\":180,\"runqueue_ns\":10,\"switches\":1,\"cause\":\"Reading from a pipe\","
	"\"kernel_stacks\":["
	"{\"weight_ns\":150,\"frames\":["
	"{\"addr\":\"0xffffffff81000000\","
	"\"symbol\":\"bpf_prog_6deef7357e7b4530_ls_sched_switch\",\"offset\":1,"
	"\"module\":\"kernel\"},"
	"{\"addr\":\"0xffffffff81000010\",\"symbol\":\"pipe_read\",\"offset\":2,"
	"\"module\":\"kernel\"},"
	"{\"addr\":\"0xffffffff81000020\",\"symbol\":\"vfs_read\",\"offset\":3,"
	"\"module\":\"kernel\"}]},"
	"{\"weight_ns\":30,\"frames\":["
	"{\"addr\":\"0xffffffff81000030\",\"symbol\":\"schedule\",\"offset\":4,"
	"\"module\":\"kernel\"}]},"
	"{\"weight_ns\":0,\"frames\":["
	"{\"addr\":\"0xffffffff81000040\",\"symbol\":\"never\",\"offset\":4,"
	"\"module\":\"kernel\"}]}],"
	"\"user_stack\":{\"source\":\"unwind\",\"frames\":["
	"{\"addr\":\"0x401000\",\"symbol\":\"_ZN3foo3barEv\",\"offset\":5,\"module\":\"/bin/w\"},"
	"{\"addr\":\"0x401100\",\"symbol\":null,\"offset\":0,\"module\":\"/bin/w\"},"
	"{\"addr\":\"0x401200\",\"symbol\":\"main\",\"offset\":6,\"module\":\"/bin/w\"}]},"
	"\"waker\":null,\"wait_chain\":[],\"flags\":[]}]}";

static char tmpdir[64];

static int parse(const char *text, struct summary **out, char *why, size_t len)
{
	return snapshots_parse_summary(text, strlen(text), "S", out, why, len);
}

/* @base with its first @from replaced by @to. */
static char *substitute(const char *base, const char *from, const char *to)
{
	const char *at = strstr(base, from);
	char *s;

	if (!at) {
		bail_out("test bug: '%s' not in the summary", from);
	}
	if (asprintf(&s, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from)) < 0) {
		bail_out("out of memory");
	}
	return s;
}

/* @good with its first @from replaced by @to. */
static char *variant(const char *from, const char *to)
{
	return substitute(good, from, to);
}

static void test_parse(void)
{
	static const struct {
		const char *from, *to, *why;
	} bad[] = {
		{ "\"version\":1", "\"version\":2", "S: version 2, this latsnap reads version 1" },
		{ "\"version\":1,", "", "S: no version" },
		{ "\"duration_ns\":200", "\"duration_ns\":-1",
		  "S: outlier 0: duration_ns is not a non-negative integer" },
		{ "\"duration_ns\":200", "\"duration_ns\":\"200\"",
		  "S: outlier 0: duration_ns is not a non-negative integer" },
		{ "\"cause\":\"Reading from a pipe\",", "",
		  "S: outlier 0: kind, comm or cause is not a string" },
		{ "\"weight_ns\":30", "\"weight_ns\":null",
		  "S: outlier 0: kernel stack 1: weight_ns is not a non-negative integer" },
		{ "\"symbol\":\"main\"", "\"symbol\":7",
		  "S: outlier 0: user_stack: frame 2: symbol or module is not a string or null" },
		{ "\"module\":\"/bin/w\"}]}", "\"module\":[]}]}",
		  "S: outlier 0: user_stack: frame 2: symbol or module is not a string or null" },
		{ "{\"addr\":\"0x401200\",", "{", "S: outlier 0: user_stack: frame 2 has no addr" },
		{ "\"addr\":\"0x401200\"", "\"addr\":4198912",
		  "S: outlier 0: user_stack: frame 2 has no addr" },
		{ "\"wait_chain\":[]", "\"wait_chain\":[{\"depth\":1}]",
		  "S: outlier 0: wait_chain link 0: tid, pid or comm missing" },
		{ "\"outliers\":[", "\"outliers\":{\"a\":[", NULL },
		/* Members only the typed outlier reads: checked after the contract's. */
		{ "\"switches\":1", "\"switches\":\"1\"",
		  "S: outlier 0: switches is not an integer" },
		{ "\"syscall_nr\":0", "\"syscall_nr\":1.5",
		  "S: outlier 0: syscall_nr is not an integer" },
		{ "\"source\":\"unwind\",", "\"source\":\"unwind\",\"in_trace\":1,",
		  "S: outlier 0: user_stack: in_trace is not a boolean" },
		{ "\"wait_chain\":[]",
		  "\"wait_chain\":[{\"depth\":1,\"pid\":1,\"tid\":1,\"comm\":\"c\",\"to_ns\":\"9\"}]",
		  "S: outlier 0: wait_chain link 0: to_ns is not an integer" },
		{ "\"flags\":[]}]}", "\"flags\":[],\"signalled\":0}]}",
		  "S: outlier 0: signalled is not a boolean" },
	};
	struct summary *s = NULL;
	char why[512], *text, cut[sizeof(good)];
	size_t i;

	is_int(parse(good, &s, why, sizeof(why)), 0, "the good summary is accepted");
	ok(s && s->skipped == 2, "and read (skipped 2)");
	summary_free(s);
	s = NULL;

	is_int(parse("", &s, why, sizeof(why)), -EBADMSG, "an empty file is refused");
	is_str(why, "S: empty", "and said to be empty, naming the file");

	memcpy(cut, good, sizeof(good) / 2);
	cut[sizeof(good) / 2] = '\0';
	is_int(parse(cut, &s, why, sizeof(why)), -EBADMSG, "a summary cut in half is refused");
	is_str(why, "S: not JSON: it ends in the middle (truncated?)", "and said to be truncated");

	if (asprintf(&text, "%s\n}garbage", good) < 0) {
		bail_out("out of memory");
	}
	is_int(parse(text, &s, why, sizeof(why)), -EBADMSG, "trailing bytes are refused");
	ok(!strncmp(why, "S: not JSON: ", 13), "as not JSON, naming the file: %s", why);
	free(text);
	if (asprintf(&text, "%s\n\n", good) < 0) {
		bail_out("out of memory");
	}
	is_int(parse(text, &s, why, sizeof(why)), 0, "trailing white space is fine");
	summary_free(s);
	s = NULL;
	free(text);

	is_int(parse("[1,2]", &s, why, sizeof(why)), -EBADMSG, "an array is refused");
	is_str(why, "S: not a JSON object", "as not an object");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		text = variant(bad[i].from, bad[i].to);
		why[0] = '\0';
		if (bad[i].why && !strncmp(bad[i].why, "S: outlier ", 11)) {
			char *expect;

			/* A bad outlier costs only itself: left out, said once. */
			is_int(parse(text, &s, why, sizeof(why)), 0,
			       "'%s' -> '%s': the summary is read", bad[i].from, bad[i].to);
			ok(s && s->nr_outliers == 0, "  without its one outlier");
			if (asprintf(&expect, "%s (1 of 1 outliers skipped)", bad[i].why) < 0) {
				bail_out("out of memory");
			}
			is_str(s ? s->outliers_why : NULL, expect, "  and says why");
			free(expect);
			summary_free(s);
			s = NULL;
			free(text);
			continue;
		}
		is_int(parse(text, &s, why, sizeof(why)), -EBADMSG, "'%s' -> '%s' is refused",
		       bad[i].from, bad[i].to);
		ok(!s, "  and nothing is returned");
		if (bad[i].why) {
			is_str(why, bad[i].why, "  with the reason");
		} else {
			ok(!strncmp(why, "S: ", 3), "  with a reason naming the file: %s", why);
		}
		free(text);
	}
}

/*
 * A summary whose first outlier is bad (a split written wrong: issue 33's underflow) and whose
 * second is good: the good one is read, at its own place in the file, and the bad one said.
 */
static void test_one_bad_outlier(void)
{
	const char *first = strstr(good, "{\"kind\""), *end = strstr(good, "\"flags\":[]}]}");
	struct json_object *obj;
	struct summary *s = NULL;
	char why[512], *bad, *text;

	/* The one outlier of @good ends with its flags; "]}" closes the outliers and the summary. */
	if (end) {
		end += strlen("\"flags\":[]}");
	}
	if (!first || !end || asprintf(&text, "%.*s", (int)(end - first), first) < 0) {
		bail_out("test bug: no outlier in the good summary");
	}
	bad = substitute(text, "\"blocked_ns\":180", "\"blocked_ns\":-54000");
	free(text);
	if (asprintf(&text, "%.*s%s,%.*s]}", (int)(first - good), good, bad, (int)(end - first),
		     first) < 0) {
		bail_out("out of memory");
	}
	is_int(parse(text, &s, why, sizeof(why)), 0, "a summary with one bad outlier of two is read");
	ok(s && s->nr_outliers == 1, "with its good outlier");
	is_str(s ? s->outliers_why : NULL,
	       "S: outlier 0: blocked_ns is not a non-negative integer (1 of 2 outliers skipped)",
	       "the bad one is named, and counted");
	obj = s ? summary_outlier_to_json(s, 0) : NULL;
	is_int(obj ? json_object_get_int64(json_object_object_get(obj, "blocked_ns")) : -1, 180,
	       "the good one is read from its own place in the file");
	json_object_put(obj);
	summary_free(s);
	free(bad);
	free(text);
}

/*
 * A frame of JIT code, anonymous memory or a stripped object: its address alone, symbol and
 * module null or absent. record writes such frames; its reader must take them.
 */
static void test_unknown_frames(void)
{
	struct summary *s = NULL;
	const struct outlier_frames *fr;
	char why[512], *a, *b;

	a = variant("{\"addr\":\"0x401100\",\"symbol\":null,\"offset\":0,\"module\":\"/bin/w\"}",
		    "{\"addr\":\"0x7f27310a27a0\",\"symbol\":null,\"offset\":0,\"module\":null}");
	b = substitute(
		a, "{\"addr\":\"0x401200\",\"symbol\":\"main\",\"offset\":6,\"module\":\"/bin/w\"}",
		"{\"addr\":\"0x7f2731000010\"}");
	if (!is_int(parse(b, &s, why, sizeof(why)), 0,
		    "a frame with module and symbol null, and one with its address alone, are read")) {
		diag("why: %s", why);
		goto out;
	}
	fr = &s->outliers[0]->user_stack.frames;
	ok(fr->nr == 3 && fr->v[1].addr == 0x7f27310a27a0 && !fr->v[1].symbol && !fr->v[1].module,
	   "  the null one: its address, no symbol, no module");
	ok(fr->v[2].addr == 0x7f2731000010 && !fr->v[2].symbol && !fr->v[2].module,
	   "  the bare one: its address, no symbol, no module");
out:
	summary_free(s);
	free(a);
	free(b);
}

/* What report, show and flame read: the typed summary and outliers. */
static void test_typed(void)
{
	const struct outlier *o;
	struct summary *s = NULL;
	char why[512];

	if (!is_int(parse(good, &s, why, sizeof(why)), 0, "typed: the good summary is read")) {
		return;
	}
	is_str(s->id, "A", "  its id");
	is_str(s->host, "h", "  its host");
	is_str(s->created ? s->created : "(null)", "2026-01-01T00:00:00Z", "  when it was created");
	is_str(s->trace ? s->trace : "(null)", "trace", "  its trace");
	ok(s->nr_flags == 0 && s->nr_outliers == 1, "  no flags, one outlier");
	o = s->outliers[0];
	ok(o->kind == OUTLIER_SYSCALL && o->pid == 10 && o->tid == 11 && o->duration_ns == 200,
	   "  the outlier: a syscall of pid 10 tid 11, 200 ns");
	is_str(o->comm, "w;x", "  its comm");
	is_str(o->syscall ? o->syscall : "(null)", "read", "  its syscall");
	is_str(o->cause, "Reading from a pipe", "  its cause");
	ok(o->nr_kernel_stacks == 3 && o->kernel_stacks[0].weight_ns == 150 &&
		   o->kernel_stacks[0].frames.nr == 3,
	   "  three kernel stacks, the first of 150 ns and 3 frames");
	is_int((int)snapshots_kernel_skip(&o->kernel_stacks[0].frames), 1,
	       "  its innermost frame (bpf_prog_<tag>_ls_sched_switch) is BPF glue");
	ok(snapshots_is_glue_frame(&o->kernel_stacks[0].frames.v[0]) &&
		   !snapshots_is_glue_frame(&o->kernel_stacks[0].frames.v[1]),
	   "  and pipe_read is not");
	is_int((int)snapshots_kernel_skip(&o->kernel_stacks[1].frames), 0,
	       "  a stack without glue skips nothing");
	ok(o->user_stack.source == OUTLIER_USTACK_UNWIND && o->user_stack.frames.nr == 3 &&
		   !o->user_stack.frames.v[1].symbol && o->user_stack.frames.v[1].addr == 0x401100,
	   "  the user stack: unwound, 3 frames, the second without a symbol at 0x401100");
	ok(!o->waker && !o->nr_links && !o->nr_flags, "  no waker, no wait chain, no flags");
	summary_free(s);
}

/* show --json writes the summary back: what this latsnap does not know passes through. */
static void test_pass_through(void)
{
	struct json_object *outliers, *obj, *o, *v;
	struct summary *s = NULL;
	char why[512], *text, *later;

	later = variant("\"trace\":\"trace\",", "\"trace\":\"trace\",\"later\":[1],");
	text = substitute(later, "\"waker\":null,", "\"waker\":null,\"holder\":{\"pid\":3},");
	free(later);
	if (!is_int(parse(text, &s, why, sizeof(why)), 0,
		    "a summary with unknown members is read")) {
		free(text);
		return;
	}
	o = summary_outlier_to_json(s, 0);
	ok(o && json_object_object_get_ex(o, "holder", &v) &&
		   json_object_get_int(json_object_object_get(v, "pid")) == 3,
	   "  summary_outlier_to_json(): the outlier's unknown member passes through");
	ok(o && json_object_object_get_ex(o, "signalled", NULL) &&
		   json_object_object_get_ex(o, "wait_chain", NULL),
	   "  with the members outlier_to_json() writes");
	outliers = json_object_new_array();
	json_object_array_add(outliers, o);
	obj = summary_to_json(s, outliers);
	ok(obj && json_object_object_get(obj, "outliers") == outliers,
	   "  summary_to_json(): the outliers given take the summary's place");
	ok(obj && json_object_object_get_ex(obj, "later", &v) &&
		   json_object_is_type(v, json_type_array),
	   "  the summary's unknown member passes through");
	json_object_put(obj);
	json_object_put(outliers);
	outliers = json_object_new_array();
	obj = summary_to_json(s, outliers);
	is_str(obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN) : "",
	       "{\"version\":1,\"id\":\"A\",\"host\":\"h\",\"created\":\"2026-01-01T00:00:00Z\","
	       "\"trace\":\"trace\",\"later\":[1],\"skipped\":2,\"flags\":[],\"outliers\":[]}",
	       "  in the summary's order");
	json_object_put(obj);
	json_object_put(outliers);
	summary_free(s);
	free(text);
}

static void test_load(void)
{
	struct snapshot_set set;
	char path[PATH_MAX + 64];
	char *text;

	snprintf(path, sizeof(path), "%s/out", tmpdir);
	mkdir(path, 0700);
	is_int(snapshots_load(path, &set), 0, "an empty directory loads");
	is_int((int)set.nr, 0, "  with no snapshot in it");
	snapshots_free(&set);

	/* Created out of order: the set is sorted by id. */
	snprintf(path, sizeof(path), "%s/out/B-corrupt", tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/out/B-corrupt/summary.json", tmpdir);
	tap_write_file(path, good, sizeof(good) / 3);
	snprintf(path, sizeof(path), "%s/out/A-good", tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/out/A-good/summary.json", tmpdir);
	tap_write_file(path, good, strlen(good));
	snprintf(path, sizeof(path), "%s/out/C-incomplete", tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/out/D-badversion", tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/out/D-badversion/summary.json", tmpdir);
	text = variant("\"version\":1", "\"version\":9");
	tap_write_file(path, text, strlen(text));
	free(text);
	/* Not snapshots: a file, a hidden directory, a symlink to a snapshot. */
	snprintf(path, sizeof(path), "%s/out/notes.txt", tmpdir);
	tap_write_file(path, "x", 1);
	snprintf(path, sizeof(path), "%s/out/.hidden", tmpdir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/out/E-link", tmpdir);
	if (symlink("A-good", path)) {
		bail_out("symlink: %s", strerror(errno));
	}

	snprintf(path, sizeof(path), "%s/out", tmpdir);
	if (!is_int(snapshots_load(path, &set), 0, "a directory of snapshots loads") ||
	    !is_int((int)set.nr, 4, "  4 snapshots: files, hidden entries and symlinks left out")) {
		snapshots_free(&set);
		return;
	}
	is_str(set.snaps[0].id, "A-good", "  sorted by id: A-good first");
	is_str(snapshots_state_name(set.snaps[0].state), "complete", "  A-good is complete");
	ok(set.snaps[0].summary != NULL, "  with its summary");
	is_str(snapshots_state_name(set.snaps[1].state), "corrupt", "  B-corrupt is corrupt");
	ok(strstr(set.snaps[1].why, "/out/B-corrupt/summary.json: not JSON") != NULL,
	   "  naming the file and why: %s", set.snaps[1].why);
	is_str(snapshots_state_name(set.snaps[2].state), "incomplete",
	       "  C-incomplete is incomplete");
	ok(strstr(set.snaps[2].why, "/out/C-incomplete/summary.json: missing") != NULL,
	   "  naming the missing file: %s", set.snaps[2].why);
	is_str(snapshots_state_name(set.snaps[3].state), "corrupt", "  D-badversion is corrupt");
	ok(strstr(set.snaps[3].why, "version 9") != NULL, "  for its version: %s",
	   set.snaps[3].why);
	snapshots_free(&set);

	snprintf(path, sizeof(path), "%s/out/A-good", tmpdir);
	is_int(snapshots_load(path, &set), 0, "one snapshot directory given directly loads");
	ok(set.nr == 1 && set.snaps[0].state == SNAPSHOT_COMPLETE, "  as a set of that one");
	snapshots_free(&set);

	snprintf(path, sizeof(path), "%s/nonexistent", tmpdir);
	ok(snapshots_load(path, &set) == -ENOENT, "a missing directory: -ENOENT (and a message)");
	snapshots_free(&set);
}

static void test_flame(void)
{
	static const char want[] = "w:x;main;0x401100;foo::bar();-;schedule 60\n"
				   "w:x;main;0x401100;foo::bar();-;vfs_read;pipe_read 300\n";
	struct summary *s = NULL;
	struct flame f = { 0 };
	char why[256], *buf = NULL, cmd[3 * PATH_MAX], path[PATH_MAX];
	size_t len = 0;
	regex_t re;
	FILE *out;

	if (parse(good, &s, why, sizeof(why))) {
		bail_out("the good summary: %s", why);
	}
	/* Twice: equal stacks merge and their weights add up. */
	ok(!flame_add_summary(&f, s) && !flame_add_summary(&f, s), "folding the summary twice");
	flame_finish(&f);
	out = open_memstream(&buf, &len);
	ok(out && !flame_write_folded(out, &f) && !fclose(out), "writing the folded stacks");
	is_str(buf, want,
	       "folded: comm (';' made ':'), user frames outermost first (address when no symbol, "
	       "demangled), '-', kernel frames outermost first without the BPF glue; equal "
	       "stacks merged, a weight of 0 left out, sorted");
	free(buf);

	snprintf(path, sizeof(path), "%s/flame.svg", tmpdir);
	out = fopen(path, "w");
	ok(out && !flame_write_svg(out, &f, "a <title> & more") && !fclose(out), "writing the SVG");
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	if (system("command -v xmllint >/dev/null 2>&1") == 0) {
		is_int(system(cmd), 0, "xmllint: the SVG is well-formed XML");
	} else {
		skip("xmllint not installed");
	}
	snprintf(cmd, sizeof(cmd),
		 "grep -q '<title>foo::bar() (360 ns, 100.00%%)</title>' %s && "
		 "grep -q '<title>pipe_read (300 ns, 83.33%%)</title>' %s",
		 path, path);
	is_int(system(cmd), 0, "the SVG has a tooltip per frame, with its weight and share");
	flame_free(&f);

	if (regcomp(&re, "^foo::", REG_EXTENDED | REG_NOSUB)) {
		bail_out("regcomp");
	}
	f.grep = &re;
	flame_add_summary(&f, s);
	is_int((int)f.nr, 2, "--grep '^foo::' keeps the stacks through foo::bar()");
	flame_free(&f);
	regfree(&re);
	if (regcomp(&re, "^nothere$", REG_EXTENDED | REG_NOSUB)) {
		bail_out("regcomp");
	}
	f.grep = &re;
	flame_add_summary(&f, s);
	is_int((int)f.nr, 0, "--grep '^nothere$' keeps none");
	flame_free(&f);
	regfree(&re);
	summary_free(s);
}

static void test_demangle(void)
{
	char *d;

	d = ls_demangle("_ZN3foo3barEv");
	is_str(d ? d : "(null)", "foo::bar()", "_ZN3foo3barEv demangles to foo::bar()");
	free(d);
	d = ls_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi@@GLIBCXX_3.4");
	is_str(d ? d : "(null)",
	       "std::vector<int, std::allocator<int> >::push_back(int const&)@@GLIBCXX_3.4",
	       "a versioned C++ name demangles, its version kept");
	free(d);
	ok(ls_demangle("main") == NULL, "a C name is not demangled");
	ok(ls_demangle("_Znotmangled") == NULL, "an invalid mangled name is left alone");
	d = ls_demangle_text("pthread_cond_timedwait in _ZN2os15PlatformMonitor4waitEl (futex)");
	is_str(d ? d : "(null)",
	       "pthread_cond_timedwait in os::PlatformMonitor::wait(long) (futex)",
	       "an idle place's text: the mangled name in it demangled, the rest kept");
	free(d);
	d = ls_demangle_text("x_Z3foov _Znotmangled _Z3foov");
	is_str(d ? d : "(null)", "x_Z3foov _Znotmangled foo()",
	       "  only words that start with _Z, and only those that demangle");
	free(d);
}

int main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/latsnap-test-snapshots.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	test_parse();
	test_one_bad_outlier();
	test_typed();
	test_pass_through();
	test_load();
	test_flame();
	test_demangle();
	test_unknown_frames();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd)) {
		diag("could not remove %s", tmpdir);
	}
	return tap_done();
}
