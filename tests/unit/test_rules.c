// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "classify/rules.h"
#include "lib/outlier.h"
#include "tap.h"

/* rules_load(@path) into @rules, with what it prints on stderr in @err. */
static int load_caught(const char *path, struct rules **rules, char *err, size_t len)
{
	struct tap_capture c;
	int ret;

	tap_capture_begin(&c, STDERR_FILENO);
	ret = rules_load(path, rules);
	tap_capture_end(&c, err, len);
	return ret;
}

/* Parses @text, which must give @count rules and print nothing; returns them. */
static struct rules *parses(const char *name, const char *text, size_t count)
{
	struct rules *rules = (struct rules *)1;
	struct tap_capture c;
	char err[1024];
	int ret;

	tap_capture_begin(&c, STDERR_FILENO);
	ret = rules_parse(text, "test.rules", &rules);
	tap_capture_end(&c, err, sizeof(err));
	is_int(ret, 0, "%s: parses", name);
	is_int(rules_count(rules), count, "%s: %zu rules", name, count);
	is_str(err, "", "%s: nothing on stderr", name);
	return ret ? NULL : rules;
}

/*
 * rules_parse() of @text, or rules_load() of @path when @path is given, must fail with -EINVAL,
 * printing exactly "latsnap: FILE:@line: @why", FILE "test.rules" or @path.
 */
static void refused(const char *name, const char *text, const char *path, int line, const char *why)
{
	struct rules *rules = (struct rules *)1;
	char err[2048], expected[2048];
	struct tap_capture c;
	int ret;

	if (path) {
		ret = load_caught(path, &rules, err, sizeof(err));
	} else {
		tap_capture_begin(&c, STDERR_FILENO);
		ret = rules_parse(text, "test.rules", &rules);
		tap_capture_end(&c, err, sizeof(err));
	}
	snprintf(expected, sizeof(expected), "latsnap: %s:%d: %s\n", path ? path : "test.rules",
		 line, why);
	is_int(ret, -EINVAL, "%s: -EINVAL", name);
	ok(!rules, "%s: no rules", name);
	is_str(err, expected, "%s: one line naming %s:%d", name, path ? "FILE" : "test.rules",
	       line);
}

/* What rules_parse() says of a line that is no rule, of a bad priority, of an unknown matcher. */
#define NOT_A_RULE "expected 'PRIORITY MATCHER... = CAUSE', got '%s'"
#define BAD_PRIORITY "bad priority '%s' (expected an integer from 1 to 1000)"
#define BAD_MATCHER                                                                        \
	"unknown matcher '%s' (expected kernel:GLOB, syscall:GLOB, user:GLOB, comm:GLOB, " \
	"cpu:GLOB, flag:GLOB, futex:lock or futex:wait)"
#define BAD_FUTEX "bad futex matcher '%s' (expected futex:lock or futex:wait)"
#define CPU_IDLE "cpu: matcher in an idle rule (idle rules judge waits)"

/* @text must be refused on @line, with the message @fmt makes. */
static __attribute__((format(printf, 4, 5))) void bad(const char *name, const char *text, int line,
						      const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	refused(name, text, NULL, line, why);
}

/* rules_load() of @len bytes of @data in a temporary file must fail as @why on @line. */
static void bad_file(const char *name, const char *data, size_t len, int line, const char *why)
{
	char *path = tap_write_temp(data, len);

	refused(name, NULL, path, line, why);
	tap_remove_temp(path);
}

/* The whole string literal @text, NUL bytes included. */
#define BAD_FILE(name, text, line, why) bad_file(name, text, sizeof(text) - 1, line, why)

static void parser_good(void)
{
	struct rules *rules;
	char *path, *line;

	rules_free(parses("empty text", "", 0));
	rules_free(parses("comments and blanks", "# a comment\n\n   \n\t# indented\n", 0));
	rules_free(parses("one rule", "10 kernel:foo = Foo\n", 1));
	rules_free(parses("no final newline", "10 kernel:foo = Foo", 1));
	rules_free(parses("CRLF", "10 kernel:foo = Foo\r\n20 syscall:read = Read\r\n", 2));
	rules_free(
		parses("several matchers", "5 kernel:a kernel:b syscall:read user:main = X\n", 1));
	rules_free(parses("tabs and extra blanks", "\t 7\tkernel:a \t syscall:x\t=\t Y \t\n", 1));
	rules_free(parses("bounds of the priority", "1 kernel:a = A\n1000 kernel:b = B\n", 2));
	rules_free(parses("leading zeros", "0010 kernel:a = A\n", 1));
	rules_free(parses("no blank after =", "10 kernel:a =A\n", 1));
	rules_free(parses("= inside a glob is not the separator", "10 kernel:a=b = A\n", 1));
	rules_free(parses("comment after the cause", "10 kernel:a = A # why\n", 1));
	rules_free(parses("hash inside the cause", "10 kernel:a = lock#3\n", 1));
	rules_free(parses("syscall:-", "10 syscall:- = Sleep\n", 1));
	rules_free(parses("alternatives", "10 user:ProcSleep|WaitOnLock = Lock\n", 1));
	rules_free(parses("alternatives in every kind",
			  "10 kernel:a|b* syscall:read|-|pread* user:x|y cpu:z|w = X\n", 1));
	rules_free(parses("cpu: alone", "10 cpu:* = On CPU\n", 1));
	rules_free(parses("comm: and futex:",
			  "10 comm:bio_*|redis-server syscall:futex futex:lock = L\n"
			  "10 comm:x futex:wait = W\n",
			  2));
	rules_free(parses("idle rules count as rules",
			  "10 comm:a = idle\n20 comm:b = !idle # a comment\n30 kernel:c = C\n", 3));
	rules_free(parses("a cause that only starts with idle may have cpu:",
			  "10 cpu:* = idle time\n10 cpu:x = Idle\n", 2));
	rules_free(parses("line numbers count comments",
			  "# x\n\n10 kernel:a = A\n# y\n20 kernel:b = B\n", 2));

	line = malloc(RULES_MAX_LINE + 2);
	if (!line) {
		bail_out("out of memory");
	}
	/* Exactly the longest line: a long glob. */
	tap_fill_line(line, RULES_MAX_LINE - 4, "1 kernel:", 'g', " = C");
	rules_free(parses("a line of the longest length", line, 1));
	free(line);

	/* The longest cause. */
	line = malloc(RULES_MAX_CAUSE + 32);
	if (!line) {
		bail_out("out of memory");
	}
	tap_fill_line(line, 13 + RULES_MAX_CAUSE, "1 kernel:a = ", 'c', "");
	rules_free(parses("a cause of the longest length", line, 1));
	free(line);

	/* A regular file loads, printing nothing. */
	path = tap_write_temp("10 kernel:a = A\n20 kernel:b = B\n", 32);
	rules = (struct rules *)1;
	is_int(rules_load(path, &rules), 0, "a rules file loads");
	is_int(rules_count(rules), 2, "with its two rules");
	rules_free(rules);
	tap_remove_temp(path);
}

static void parser_bad(void)
{
	char text[4096];

	bad("no =", "10 kernel:foo Foo\n", 1, NOT_A_RULE, "10 kernel:foo Foo");
	bad("= only inside a word", "10 kernel:foo=Foo\n", 1, NOT_A_RULE, "10 kernel:foo=Foo");
	bad("the line number", "# ok\n10 kernel:a = A\n\nbogus\n", 4, NOT_A_RULE, "bogus");
	bad("missing priority", "= Foo\n", 1, "missing priority before '='");
	bad("priority 0", "0 kernel:a = A\n", 1, BAD_PRIORITY, "0");
	bad("priority 1001", "1001 kernel:a = A\n", 1, BAD_PRIORITY, "1001");
	bad("negative priority", "-5 kernel:a = A\n", 1, BAD_PRIORITY, "-5");
	bad("priority with a sign", "+5 kernel:a = A\n", 1, BAD_PRIORITY, "+5");
	bad("priority not a number", "high kernel:a = A\n", 1, BAD_PRIORITY, "high");
	bad("priority with junk", "10x kernel:a = A\n", 1, BAD_PRIORITY, "10x");
	bad("huge priority", "99999999999999999999 kernel:a = A\n", 1, BAD_PRIORITY,
	    "99999999999999999999");
	bad("missing priority, matcher first", "kernel:a = A\n", 1, BAD_PRIORITY, "kernel:a");
	bad("no matcher", "10 = A\n", 1, "no matcher before '='");
	bad("unknown matcher kind", "10 module:ext4 = A\n", 1, BAD_MATCHER, "module:ext4");
	bad("matcher kind is case-sensitive", "10 Kernel:a = A\n", 1, BAD_MATCHER, "Kernel:a");
	bad("a bare word", "10 foo = A\n", 1, BAD_MATCHER, "foo");
	bad("empty kernel glob", "10 kernel: = A\n", 1, "empty glob in 'kernel:'");
	bad("empty syscall glob", "10 kernel:a syscall: = A\n", 1, "empty glob in 'syscall:'");
	bad("empty user glob", "10 user: = A\n", 1, "empty glob in 'user:'");
	bad("empty cpu glob", "10 cpu: = A\n", 1, "empty glob in 'cpu:'");
	bad("empty alternative in the middle", "# x\n10 user:ProcSleep||WaitOnLock = A\n", 2,
	    "empty alternative in 'user:ProcSleep||WaitOnLock'");
	bad("empty first alternative", "10 user:|WaitOnLock = A\n", 1,
	    "empty alternative in 'user:|WaitOnLock'");
	bad("empty last alternative", "10 user:ProcSleep| = A\n", 1,
	    "empty alternative in 'user:ProcSleep|'");
	bad("a lone bar", "10 kernel:| = A\n", 1, "empty alternative in 'kernel:|'");
	bad("empty syscall alternative", "10 syscall:read|| = A\n", 1,
	    "empty alternative in 'syscall:read||'");
	bad("users: is no matcher", "10 users:ProcSleep = A\n", 1, BAD_MATCHER, "users:ProcSleep");
	bad("futex: is not a glob", "10 syscall:futex futex:* = A\n", 1, BAD_FUTEX, "futex:*");
	bad("futex: another word", "# x\n10 futex:mutex = A\n", 2, BAD_FUTEX, "futex:mutex");
	bad("futex: empty", "10 futex: = A\n", 1, BAD_FUTEX, "futex:");
	bad("futex: no alternatives", "10 futex:lock|wait = A\n", 1, BAD_FUTEX, "futex:lock|wait");
	bad("futex: case-sensitive", "10 futex:Lock = A\n", 1, BAD_FUTEX, "futex:Lock");
	bad("empty comm glob", "10 comm: = A\n", 1, "empty glob in 'comm:'");
	bad("empty comm alternative", "10 comm:a| = A\n", 1, "empty alternative in 'comm:a|'");
	bad("cpu: in an idle rule", "10 comm:a = idle\n20 cpu:* comm:b = idle\n", 2, CPU_IDLE);
	bad("cpu: in a !idle rule", "20 cpu:foo = !idle # never\n", 1, CPU_IDLE);
	bad("empty cause", "10 kernel:a =\n", 1, "missing cause after '='");
	bad("blank cause", "10 kernel:a =   \t\n", 1, "missing cause after '='");
	bad("cause only a comment", "10 kernel:a = # none\n", 1, "missing cause after '='");
	bad("control character in the cause", "10 kernel:a = A\x1b[31mred\n", 1,
	    "control character in cause");
	bad("the first bad line stops", "10 kernel:a = A\n0 kernel:b = B\nbogus\n", 2, BAD_PRIORITY,
	    "0");

	snprintf(text, sizeof(text), "1 kernel:a = %0*d\n", RULES_MAX_CAUSE + 1, 0);
	bad("cause too long", text, 1, "cause too long (121 characters, at most 120)");

	tap_fill_line(text, RULES_MAX_LINE - 3, "1 kernel:", 'g', " = C");
	bad("line too long", text, 1, "line too long (over 1024 characters)");
	/* The limit is on the line: a long comment is too long as well. */
	tap_fill_line(text, RULES_MAX_LINE + 1, "#", ' ', "\n10 kernel:a = A\n");
	bad("long comment", text, 1, "line too long (over 1024 characters)");

	BAD_FILE("NUL byte", "10 kernel:a = A\n20 kernel:\0b = B\n", 2, "NUL byte in line");
	BAD_FILE("bad line in a file", "10 kernel:a = A\n\n10 kernel:b\n", 3,
		 "expected 'PRIORITY MATCHER... = CAUSE', got '10 kernel:b'");
	BAD_FILE("bad user: alternative in a file",
		 "460 user:ProcSleep|WaitOnLock = Lock wait\n470 user:LWLockAcquire| = LWLock\n", 2,
		 "empty alternative in 'user:LWLockAcquire|'");
}

/* Files that are not rules files: -errno or -EINVAL, with one line that names them. */
static void load_errors(void)
{
	char dir[] = "/tmp/latsnap-test-rules-dir.XXXXXX", fifo[256], err[1024], *big;
	struct rules *rules = (struct rules *)1;
	char *path;
	int ret;

	ret = load_caught("/nonexistent/latsnap.rules", &rules, err, sizeof(err));
	is_int(ret, -ENOENT, "missing file: -ENOENT");
	ok(!rules, "missing file: no rules");
	is_str(err, "latsnap: /nonexistent/latsnap.rules: No such file or directory\n",
	       "missing file: one line naming it");

	if (!mkdtemp(dir)) {
		bail_out("mkdtemp: %s", strerror(errno));
	}
	ret = load_caught(dir, &rules, err, sizeof(err));
	is_int(ret, -EINVAL, "a directory: -EINVAL");
	ok(strstr(err, ": not a regular file\n") && strstr(err, dir),
	   "a directory: not a regular file");

	/* A FIFO with no writer would block a plain open(). */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	if (mkfifo(fifo, 0600)) {
		bail_out("mkfifo: %s", strerror(errno));
	}
	ret = load_caught(fifo, &rules, err, sizeof(err));
	is_int(ret, -EINVAL, "a FIFO: -EINVAL, without hanging");
	ok(strstr(err, ": not a regular file\n") != NULL, "a FIFO: not a regular file");
	unlink(fifo);
	rmdir(dir);

	ret = load_caught("/dev/null", &rules, err, sizeof(err));
	is_int(ret, -EINVAL, "/dev/null: -EINVAL");
	is_str(err, "latsnap: /dev/null: not a regular file\n", "/dev/null: not a regular file");

	big = malloc(RULES_MAX_FILE + 2);
	if (!big) {
		bail_out("out of memory");
	}
	memset(big, '\n', RULES_MAX_FILE + 1);
	path = tap_write_temp(big, RULES_MAX_FILE + 1);
	ret = load_caught(path, &rules, err, sizeof(err));
	is_int(ret, -EINVAL, "a file over the size limit: -EINVAL");
	ok(strstr(err, ": too large for a rules file") != NULL,
	   "a file over the size limit: says so");
	tap_remove_temp(path);
	free(big);

	is_int(rules_parse(NULL, "x", &rules), -EINVAL, "NULL text: -EINVAL");
	ok(!rules, "NULL text: no rules");
	is_int(rules_load(NULL, &rules), -EINVAL, "NULL path: -EINVAL");
	rules_free(NULL);
	ok(1, "rules_free(NULL) is fine");
}

static struct json_object *parse_json(const char *text)
{
	struct json_object *obj = json_tokener_parse(text);

	if (!obj) {
		bail_out("bad test JSON: %s", text);
	}
	return obj;
}

/* Kernel or user frames from "sym sym ...", innermost first; "-" is a frame without symbol. */
static struct json_object *make_frames(const char *symbols)
{
	struct json_object *frames = json_object_new_array(), *frame;
	char *copy = strdup(symbols), *save, *sym;

	if (!copy) {
		bail_out("out of memory");
	}
	for (sym = strtok_r(copy, " ", &save); sym; sym = strtok_r(NULL, " ", &save)) {
		frame = json_object_new_object();
		json_object_object_add(frame, "addr", json_object_new_string("0xffffffff81000000"));
		json_object_object_add(frame, "symbol",
				       strcmp(sym, "-") ? json_object_new_string(sym) : NULL);
		json_object_object_add(frame, "offset", json_object_new_int(0));
		json_object_array_add(frames, frame);
	}
	free(copy);
	return frames;
}

/*
 * An OUTLIER of 1 ms, all of it blocked. @syscall: its name, NULL for a sleep. @stacks: NULL for
 * no kernel_stacks member, else "WEIGHT sym sym ..." stacks joined by "|". @user: the user
 * frames, or NULL for no user_stack member.
 */
static struct json_object *make_outlier(const char *syscall, const char *stacks, const char *user)
{
	struct json_object *outlier = json_object_new_object(), *array, *stack, *ustack;
	char *copy, *save, *one, *rest;

	json_object_object_add(outlier, "kind",
			       json_object_new_string(syscall ? "syscall" : "sleep"));
	json_object_object_add(outlier, "syscall",
			       syscall ? json_object_new_string(syscall) : NULL);
	json_object_object_add(outlier, "duration_ns", json_object_new_int64(1000000));
	json_object_object_add(outlier, "blocked_ns", json_object_new_int64(1000000));
	json_object_object_add(outlier, "runqueue_ns", json_object_new_int64(0));
	if (stacks) {
		array = json_object_new_array();
		copy = strdup(stacks);
		if (!copy) {
			bail_out("out of memory");
		}
		for (one = strtok_r(copy, "|", &save); one; one = strtok_r(NULL, "|", &save)) {
			stack = json_object_new_object();
			json_object_object_add(stack, "weight_ns",
					       json_object_new_int64(strtoll(one, &rest, 10)));
			json_object_object_add(stack, "frames", make_frames(rest));
			json_object_array_add(array, stack);
		}
		free(copy);
		json_object_object_add(outlier, "kernel_stacks", array);
	}
	if (user) {
		ustack = json_object_new_object();
		json_object_object_add(ustack, "source", json_object_new_string("unwind"));
		json_object_object_add(ustack, "frames", make_frames(user));
		json_object_object_add(outlier, "user_stack", ustack);
	}
	return outlier;
}

static void check_match(const char *name, const struct rules_match *m, const char *cause,
			int priority, bool categorized)
{
	is_str(m->cause, cause, "%s: cause", name);
	is_int(m->priority, priority, "%s: priority", name);
	is_int(m->categorized, categorized, "%s: %s", name,
	       categorized ? "categorized" : "uncategorized");
}

/* The outlier of an OUTLIER object, as the recorder and review hold it. */
static struct outlier *to_outlier(struct json_object *obj)
{
	struct outlier *outlier = NULL;

	if (outlier_from_json(obj, &outlier)) {
		tap_bail_("outlier_from_json() refused a test outlier");
	}
	return outlier;
}

/* Classifies make_outlier(@syscall, @stacks, @user) and checks the verdict. */
static void classifies(const char *name, const struct rules *rules, const char *syscall,
		       const char *stacks, const char *user, const char *cause, int priority,
		       bool categorized)
{
	struct json_object *obj = make_outlier(syscall, stacks, user);
	struct outlier *outlier = to_outlier(obj);
	struct rules_match m = { NULL, -1, !categorized };

	rules_classify(rules, outlier, &m);
	check_match(name, &m, cause, priority, categorized);
	outlier_free(outlier);
	json_object_put(obj);
}

/* The same, for an OUTLIER written out in JSON. */
static void classifies_json(const char *name, const struct rules *rules, const char *json,
			    const char *cause, int priority, bool categorized)
{
	struct json_object *obj = parse_json(json);
	struct outlier *outlier = to_outlier(obj);
	struct rules_match m = { NULL, -1, !categorized };

	rules_classify(rules, outlier, &m);
	check_match(name, &m, cause, priority, categorized);
	outlier_free(outlier);
	json_object_put(obj);
}

/* @count stacks: the first @split of them "@w1 @sym1", the others "@w2 @sym2". */
static char *many_stacks(int count, int split, int w1, const char *sym1, int w2, const char *sym2)
{
	size_t len = (size_t)count * 64, used = 0;
	char *text = malloc(len);
	int i;

	if (!text) {
		bail_out("out of memory");
	}
	text[0] = '\0';
	for (i = 0; i < count; i++) {
		used += (size_t)snprintf(text + used, len - used, "%s%d %s", i ? "|" : "",
					 i < split ? w1 : w2, i < split ? sym1 : sym2);
	}
	return text;
}

static void classify_policy(void)
{
	struct outlier *outlier = NULL;
	struct json_object *obj;
	struct rules_match m;
	struct rules *rules;
	char *stacks;

	rules = parses("policy rules",
		       "10 kernel:low = Low\n"
		       "20 kernel:high = High\n"
		       "30 kernel:tie_a = Tie A\n"
		       "30 kernel:tie_b = Tie B\n"
		       "50 kernel:heavy_a = A\n"
		       "10 kernel:heavy_b = B\n"
		       "50 kernel:x = X\n"
		       "40 kernel:y1 = Y\n"
		       "30 kernel:y2 = Y\n"
		       "15 kernel:eq_a = EqA\n"
		       "25 kernel:eq_b = EqB\n"
		       "15 kernel:same_1 = Same1\n"
		       "15 kernel:same_2 = Same2\n",
		       13);
	if (!rules) {
		return;
	}
	classifies("priority wins", rules, "read", "100 low high", NULL, "High", 20, true);
	classifies("a tie goes to the rule written first", rules, "read", "100 tie_b tie_a", NULL,
		   "Tie A", 30, true);
	classifies("weight beats priority across stacks", rules, "read",
		   "100 heavy_a | 300 heavy_b", NULL, "B", 10, true);
	classifies("the same cause text adds up", rules, "read", "300 x | 200 y1 | 200 y2", NULL,
		   "Y", 40, true);
	classifies("one cause alone can be outweighed", rules, "read", "300 x | 200 y1", NULL, "X",
		   50, true);
	classifies("equal weight: the higher priority", rules, "read", "100 eq_a | 100 eq_b", NULL,
		   "EqB", 25, true);
	classifies("equal weight and priority: the rule written first", rules, "read",
		   "100 same_2 | 100 same_1", NULL, "Same1", 15, true);
	classifies("stacks no rule names do not weigh", rules, "read", "900 nothing | 1 low", NULL,
		   "Low", 10, true);
	classifies("frames without a symbol are skipped", rules, "read", "1 - low -", NULL, "Low",
		   10, true);
	classifies("no rule: the syscall's name", rules, "read", "100 nothing", NULL, "read", 0,
		   false);
	classifies("no rule: an unknown syscall's name", rules, "frobnicate", "100 nothing", NULL,
		   "frobnicate", 0, false);
	classifies("no rule, no stack", rules, "write", "", NULL, "write", 0, false);
	classifies("no rule for a sleep", rules, NULL, "100 nothing", NULL, RULES_CAUSE_SLEEP, 0,
		   false);
	classifies_json("runqueue over half: waiting for CPU", rules,
			"{\"kind\":\"syscall\",\"syscall\":\"read\",\"duration_ns\":1000,"
			"\"runqueue_ns\":501,\"kernel_stacks\":[{\"weight_ns\":499,"
			"\"frames\":[{\"symbol\":\"high\"}]}]}",
			RULES_CAUSE_CPU, 0, true);
	classifies_json("runqueue exactly half: the stacks decide", rules,
			"{\"kind\":\"syscall\",\"syscall\":\"read\",\"duration_ns\":1000,"
			"\"runqueue_ns\":500,\"kernel_stacks\":[{\"weight_ns\":500,"
			"\"frames\":[{\"symbol\":\"high\"}]}]}",
			"High", 20, true);
	classifies_json(
		"runqueue over half of a sleep", rules,
		"{\"kind\":\"sleep\",\"syscall\":null,\"duration_ns\":10,\"runqueue_ns\":9}",
		RULES_CAUSE_CPU, 0, true);
	classifies_json("a bare object", rules, "{}", RULES_CAUSE_SLEEP, 0, false);
	/* Members of the wrong type never reach the rules: outlier_from_json() refuses them. */
	obj = parse_json("{\"kind\":1,\"syscall\":2}");
	ok(outlier_from_json(obj, &outlier) == -EINVAL && !outlier,
	   "an outlier with members of the wrong type is refused before the rules");
	json_object_put(obj);

	/* The fallback name outlives the outlier: it is latsnap's own copy of it. */
	obj = make_outlier("read", "100 nothing", NULL);
	outlier = to_outlier(obj);
	rules_classify(rules, outlier, &m);
	outlier_free(outlier);
	json_object_put(obj);
	is_str(m.cause, "read", "the fallback name outlives the outlier");

	/* More stacks than classification caches: the last ones count all the same. */
	stacks = many_stacks(70, 69, 10, "high", 1000, "low");
	classifies("70 stacks: 69 light ones lose to one heavy one", rules, "read", stacks, NULL,
		   "Low", 10, true);
	free(stacks);
	stacks = many_stacks(70, 65, 10, "x", 300, "y2");
	classifies("70 stacks: the weights past the 64th add up", rules, "read", stacks, NULL, "Y",
		   30, true);
	free(stacks);
	rules_free(rules);

	classifies("no rules at all: the fallback", NULL, "read", "1 low", NULL, "read", 0, false);
}

static void classify_matchers(void)
{
	struct rules *rules;

	rules = parses("matcher rules",
		       "90 syscall:- = Outside\n"
		       "85 kernel:k_one kernel:k_two = Both\n"
		       "80 syscall:write kernel:k_write = Kernel and syscall\n"
		       "70 syscall:re* = Read-ish\n"
		       "60 user:clock_nanosleep user:main = Nap from main\n"
		       "55 user:ProcSleep|WaitOnLock = Lock wait\n"
		       "55 syscall:preadv2|preadv = Positional read\n"
		       "54 syscall:-|nanosleep = Nap or sleep\n"
		       "45 kernel:alt_one|alt_two* = Alt\n"
		       "200 cpu:* = Never on a wait\n"
		       "50 kernel:do_pselect = Select\n"
		       "50 kernel:[ab]x_wait = Bracket\n"
		       "40 kernel:folio_wait_bit* = Folio\n"
		       "30 kernel:exact.constprop.* = Exact suffix\n"
		       "20 kernel:never syscall:* = Never\n",
		       15);
	if (!rules) {
		return;
	}
	classifies("syscall:- matches a sleep", rules, NULL, "1 x", NULL, "Outside", 90, true);
	classifies("syscall:- matches a sleep without stacks", rules, NULL, NULL, NULL, "Outside",
		   90, true);
	classifies("syscall:- does not match a syscall", rules, "ioctl", "1 x", NULL, "ioctl", 0,
		   false);
	classifies("syscall glob", rules, "readv", "1 x", NULL, "Read-ish", 70, true);
	classifies("syscall glob, no stacks", rules, "recvfrom", NULL, NULL, "Read-ish", 70, true);
	classifies("syscall glob, empty stacks", rules, "recvfrom", "", NULL, "Read-ish", 70, true);
	classifies("a syscall glob matches the whole name", rules, "pread64", "1 x", NULL,
		   "pread64", 0, false);
	classifies("all matchers must match (AND)", rules, "write", "1 k_write", NULL,
		   "Kernel and syscall", 80, true);
	classifies("AND: the syscall does not match", rules, "send", "1 k_write", NULL, "send", 0,
		   false);
	classifies("a kernel: rule cannot match without stacks", rules, "write", NULL, NULL,
		   "write", 0, false);
	classifies("two kernel: matchers on one stack", rules, "ioctl", "5 k_two k_one", NULL,
		   "Both", 85, true);
	classifies("two kernel: matchers on two stacks do not match", rules, "ioctl",
		   "5 k_one | 1 k_two", NULL, "ioctl", 0, false);
	classifies("a kernel glob matches the whole name", rules, "write", "5 k_write_not", NULL,
		   "write", 0, false);
	classifies("a compiler suffix is ignored", rules, "pselect6", "1 do_pselect.constprop.0",
		   NULL, "Select", 50, true);
	classifies("a longer name is another function", rules, "pselect6", "1 do_pselectx", NULL,
		   "pselect6", 0, false);
	classifies("a glob may name the suffix", rules, "ioctl", "1 exact.constprop.3", NULL,
		   "Exact suffix", 30, true);
	classifies("bracket glob", rules, "ioctl", "1 bx_wait", NULL, "Bracket", 50, true);
	classifies("bracket glob, no match", rules, "ioctl", "1 cx_wait", NULL, "ioctl", 0, false);
	classifies("star glob", rules, "ioctl", "1 folio_wait_bit_common", NULL, "Folio", 40, true);
	classifies("any frame of the stack", rules, "ioctl", "1 a b folio_wait_bit c", NULL,
		   "Folio", 40, true);
	classifies("user: matchers, a symbol version ignored", rules, "clock_nanosleep",
		   "10 hrtimer_nanosleep", "clock_nanosleep@GLIBC_2.2.5 - main", "Nap from main",
		   60, true);
	classifies("user: matchers without kernel stacks", rules, "clock_nanosleep", NULL,
		   "clock_nanosleep main", "Nap from main", 60, true);
	classifies("user: all user matchers must match", rules, "clock_nanosleep", NULL,
		   "clock_nanosleep worker", "clock_nanosleep", 0, false);
	classifies("user: an empty user stack", rules, "clock_nanosleep", NULL, "",
		   "clock_nanosleep", 0, false);
	classifies("user: alternatives, the first", rules, "epoll_wait", "10 do_epoll_wait",
		   "epoll_wait WaitEventSetWait ProcSleep WaitOnLock main", "Lock wait", 55, true);
	classifies("user: alternatives, the second", rules, "semop", NULL,
		   "semop PGSemaphoreLock WaitOnLock.isra.0 main", "Lock wait", 55, true);
	classifies("user: alternatives, neither", rules, "semop", NULL, "semop ProcSleeping main",
		   "semop", 0, false);
	classifies("syscall: alternatives", rules, "preadv", "1 x", NULL, "Positional read", 55,
		   true);
	classifies("syscall: alternatives with -", rules, NULL, "1 x", NULL, "Outside", 90, true);
	classifies("syscall: alternatives, another", rules, "nanosleep", "1 x", NULL,
		   "Nap or sleep", 54, true);
	classifies("kernel: alternatives", rules, "ioctl", "1 alt_two_x", NULL, "Alt", 45, true);
	classifies("a cpu: rule never names a wait", rules, "ioctl", "1 zzz", NULL, "ioctl", 0,
		   false);
	ok(rules_glob_match("a|b*", "bcd") && rules_glob_match("a|b*", "a.isra.0") &&
		   !rules_glob_match("a|b*", "cb"),
	   "rules_glob_match(): alternatives");
	rules_free(rules);
}

/*
 * A wait of the thread @comm (NULL: no "comm" member) with make_outlier()'s @syscall, @stacks
 * and @user; with @has_args, the arguments (uaddr, @op, @val, 0, 0, 0), a futex's.
 */
struct waiter {
	const char *comm;
	const char *syscall;
	const char *stacks;
	const char *user;
	bool has_args;
	uint64_t op;
	uint64_t val;
	const char *flag; /* one flag, "name: text" */
};

/* glibc's pthread_mutex_lock, contended: FUTEX_WAIT_PRIVATE for 2 (lll_lock_wait). */
#define MUTEX_ARGS .has_args = true, .op = 128, .val = 2
/* glibc's pthread_cond_wait: FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME, 0. */
#define CONDVAR_ARGS .has_args = true, .op = 393, .val = 0
/* A priority-inheritance mutex: FUTEX_LOCK_PI_PRIVATE (val unused). */
#define LOCK_PI_ARGS .has_args = true, .op = 134, .val = 0
#define FUTEX_STACK "150 futex_do_wait __futex_wait futex_wait do_futex __x64_sys_futex" ENTRY
#define ENTRY " do_syscall_64 entry_SYSCALL_64_after_hwframe"

static struct json_object *make_waiter(const struct waiter *w)
{
	struct json_object *obj = make_outlier(w->syscall, w->stacks, w->user), *args;
	int i;

	if (w->comm) {
		json_object_object_add(obj, "comm", json_object_new_string(w->comm));
	}
	if (w->flag) {
		struct json_object *flags = json_object_new_array();

		json_object_array_add(flags, json_object_new_string(w->flag));
		json_object_object_add(obj, "flags", flags);
	}
	if (w->has_args) {
		args = json_object_new_array();
		for (i = 0; i < 6; i++) {
			json_object_array_add(args,
					      json_object_new_int64((int64_t)(i == 1 ? w->op :
									      i == 2 ? w->val :
										       0)));
		}
		json_object_object_add(obj, "args", args);
	}
	return obj;
}

static void classifies_waiter(const char *name, const struct rules *rules, struct waiter w,
			      const char *cause, int priority, bool categorized)
{
	struct json_object *obj = make_waiter(&w);
	struct outlier *outlier = to_outlier(obj);
	struct rules_match m = { NULL, -1, !categorized };

	rules_classify(rules, outlier, &m);
	check_match(name, &m, cause, priority, categorized);
	outlier_free(outlier);
	json_object_put(obj);
}

static const char *verdict_name(enum rules_idle v)
{
	return v == RULES_IDLE_DEFAULT ? "default" :
	       v == RULES_IDLE_IDLE    ? "idle" :
	       v == RULES_IDLE_COUNT   ? "!idle" :
					 "bogus";
}

static void idle_is(const char *name, const struct rules *rules, struct waiter w,
		    enum rules_idle verdict)
{
	struct json_object *obj = make_waiter(&w);
	struct outlier *outlier = to_outlier(obj);

	is_str(verdict_name(rules_idle_verdict(rules, outlier)), verdict_name(verdict),
	       "idle verdict: %s", name);
	outlier_free(outlier);
	json_object_put(obj);
}

/* flag: matches a flag's name, the text before its colon, never the rest of it. */
static void classify_flag(void)
{
	struct rules *rules;

	rules = parses("flag rules",
		       "90 flag:ruby-gvl = GVL\n"
		       "80 flag:ruby-timed syscall:futex = Sleep\n"
		       "70 flag:go-wait|ruby-m* = Other\n"
		       "90 flag:ruby-gvl = !idle\n",
		       4);
	if (!rules) {
		return;
	}
	classifies_waiter("flag: its name", rules,
			  (struct waiter){ .syscall = "futex", .flag = "ruby-gvl: waiting" }, "GVL",
			  90, true);
	classifies_waiter("flag: and syscall:", rules,
			  (struct waiter){ .syscall = "futex", .flag = "ruby-timed: x" }, "Sleep",
			  80, true);
	classifies_waiter("flag: and syscall: not matched", rules,
			  (struct waiter){ .syscall = "read", .flag = "ruby-timed: x" }, "read", 0,
			  false);
	classifies_waiter("flag: alternatives and globs", rules,
			  (struct waiter){ .syscall = "futex", .flag = "ruby-mutex: x" }, "Other",
			  70, true);
	classifies_waiter("flag: not the text after the colon", rules,
			  (struct waiter){ .syscall = "futex", .flag = "other: ruby-gvl" }, "futex",
			  0, false);
	classifies_waiter("flag: no flag, no match", rules, (struct waiter){ .syscall = "futex" },
			  "futex", 0, false);
	idle_is("flag: in an idle rule", rules,
		(struct waiter){ .syscall = "futex", .flag = "ruby-gvl: waiting" },
		RULES_IDLE_COUNT);
	rules_free(rules);
}

static void classify_comm_futex(void)
{
	struct rules *rules;

	rules = parses("comm and futex rules",
		       "90 comm:bio_*|redis-server syscall:read = Bio read\n"
		       "80 syscall:futex futex:lock = Lock\n"
		       "80 syscall:futex futex:wait = Wait\n"
		       "70 futex:lock = Any lock\n"
		       "70 futex:wait = Any wait\n"
		       "60 comm:[ab]x = AB\n",
		       6);
	if (!rules) {
		return;
	}
	classifies_waiter("comm: a glob", rules,
			  (struct waiter){ .comm = "bio_close_file", .syscall = "read" },
			  "Bio read", 90, true);
	classifies_waiter("comm: the second alternative", rules,
			  (struct waiter){ .comm = "redis-server", .syscall = "read" }, "Bio read",
			  90, true);
	classifies_waiter("comm: the whole name", rules,
			  (struct waiter){ .comm = "redis-server2", .syscall = "read" }, "read", 0,
			  false);
	classifies_waiter("comm: and the other matchers", rules,
			  (struct waiter){ .comm = "bio_close_file", .syscall = "write" }, "write",
			  0, false);
	classifies_waiter("comm: bracket glob", rules,
			  (struct waiter){ .comm = "bx", .syscall = "write", .stacks = "1 x" },
			  "AB", 60, true);
	classifies_waiter("comm: no comm, no match", rules,
			  (struct waiter){ .syscall = "read", .stacks = "1 x" }, "read", 0, false);
	classifies_waiter("futex:lock: a glibc mutex", rules,
			  (struct waiter){ .syscall = "futex", MUTEX_ARGS }, "Lock", 80, true);
	classifies_waiter("futex:wait: a glibc condition variable", rules,
			  (struct waiter){ .syscall = "futex", CONDVAR_ARGS }, "Wait", 80, true);
	classifies_waiter("futex:lock: FUTEX_LOCK_PI_PRIVATE", rules,
			  (struct waiter){ .syscall = "futex", LOCK_PI_ARGS }, "Lock", 80, true);
	classifies_waiter("futex:lock: FUTEX_LOCK_PI2", rules,
			  (struct waiter){ .syscall = "futex", .has_args = true, .op = 13 }, "Lock",
			  80, true);
	classifies_waiter("futex:lock: FUTEX_TRYLOCK_PI", rules,
			  (struct waiter){ .syscall = "futex", .has_args = true, .op = 8 }, "Lock",
			  80, true);
	classifies_waiter(
		"futex:lock: FUTEX_WAIT_BITSET for 2", rules,
		(struct waiter){ .syscall = "futex", .has_args = true, .op = 9, .val = 2 }, "Lock",
		80, true);
	classifies_waiter(
		"futex:wait: FUTEX_WAIT for 1", rules,
		(struct waiter){ .syscall = "futex", .has_args = true, .op = 0, .val = 1 }, "Wait",
		80, true);
	classifies_waiter("futex:wait: FUTEX_WAIT_REQUEUE_PI_PRIVATE", rules,
			  (struct waiter){ .syscall = "futex", .has_args = true, .op = 139 },
			  "Wait", 80, true);
	classifies_waiter("futex: only the low 32 bits of op and val count", rules,
			  (struct waiter){ .syscall = "futex",
					   .has_args = true,
					   .op = 0xffffffff00000080ULL,
					   .val = 0x100000002ULL },
			  "Lock", 80, true);
	classifies_waiter(
		"futex: FUTEX_WAKE waits for nothing", rules,
		(struct waiter){ .syscall = "futex", .has_args = true, .op = 129, .val = 2 },
		"futex", 0, false);
	classifies_waiter("futex: FUTEX_UNLOCK_PI waits for nothing", rules,
			  (struct waiter){ .syscall = "futex", .has_args = true, .op = 7 }, "futex",
			  0, false);
	classifies_waiter("futex: without args, neither", rules,
			  (struct waiter){ .syscall = "futex", .stacks = "1 futex_do_wait" },
			  "futex", 0, false);
	classifies_waiter("futex: the args of another syscall", rules,
			  (struct waiter){ .syscall = "read", MUTEX_ARGS }, "read", 0, false);
	classifies_waiter("futex: the args of another syscall, LOCK_PI's op", rules,
			  (struct waiter){ .syscall = "read", LOCK_PI_ARGS }, "read", 0, false);
	classifies_waiter(
		"futex:wait: futex_waitv", rules,
		(struct waiter){ .syscall = "futex_waitv", .has_args = true, .op = 2, .val = 2 },
		"Any wait", 70, true);
	classifies_waiter("futex: a sleep with args", rules,
			  (struct waiter){ .has_args = true, .op = 128, .val = 2 },
			  RULES_CAUSE_SLEEP, 0, false);
	rules_free(rules);
}

/* Built-in: the futex operation names the wait when the user stack does not. */
static void classify_builtin_futex(void)
{
	const struct rules *rules = rules_builtin();
	const char *lock = "Userspace lock contention (futex)";
	const char *event = "Waiting on a condition variable or event (futex)";

	classifies_waiter("builtin: a mutex by its futex op", rules,
			  (struct waiter){ .syscall = "futex", .stacks = FUTEX_STACK, MUTEX_ARGS },
			  lock, 410, true);
	classifies_waiter(
		"builtin: a condition variable by its futex op", rules,
		(struct waiter){ .syscall = "futex", .stacks = FUTEX_STACK, CONDVAR_ARGS }, event,
		410, true);
	classifies_waiter("builtin: a condition variable by its futex op, no stacks", rules,
			  (struct waiter){ .syscall = "futex", CONDVAR_ARGS }, event, 410, true);
	classifies_waiter(
		"builtin: FUTEX_LOCK_PI", rules,
		(struct waiter){ .syscall = "futex",
				 .stacks = "150 futex_lock_pi do_futex __x64_sys_futex" ENTRY,
				 LOCK_PI_ARGS },
		lock, 410, true);
	classifies_waiter("builtin: no args, a futex stack: the older rule", rules,
			  (struct waiter){ .syscall = "futex", .stacks = FUTEX_STACK }, lock, 400,
			  true);
	classifies_waiter("builtin: no args, no stacks: the older rule", rules,
			  (struct waiter){ .syscall = "futex" }, lock, 100, true);
	classifies_waiter("builtin: the user stack beats the futex op", rules,
			  (struct waiter){ .syscall = "futex",
					   .stacks = FUTEX_STACK,
					   .user = "__futex_abstimed_wait_common"
						   " pthread_cond_wait@@GLIBC_2.3.2 consumer",
					   MUTEX_ARGS },
			  "Waiting on a condition variable", 420, true);
	classifies_waiter("builtin: FUTEX_WAKE is no wait", rules,
			  (struct waiter){ .syscall = "futex", .has_args = true, .op = 129 }, lock,
			  100, true);
	ok(strstr(rules_builtin_text(), "#           comm:GLOB") &&
		   strstr(rules_builtin_text(), "#           futex:lock") &&
		   strstr(rules_builtin_text(), "= idle\n") &&
		   strstr(rules_builtin_text(), "= !idle"),
	   "the built-in header documents comm:, futex: and idle rules");
	idle_is("the built-in set has no idle rule", rules,
		(struct waiter){ .syscall = "futex", .stacks = FUTEX_STACK, CONDVAR_ARGS },
		RULES_IDLE_DEFAULT);
}

/*
 * Built-in: a goroutine's wait (a sleep outlier without kernel stacks, its frames the goroutine's
 * from runtime.gopark) named as Go names its wait reason, from where it parked.
 */
static void classify_builtin_goroutines(void)
{
	const struct rules *rules = rules_builtin();

	classifies("builtin: a goroutine's sync.Mutex wait (Go 1.19's semacquire)", rules, NULL,
		   NULL,
		   "runtime.gopark runtime.goparkunlock runtime.semacquire1 "
		   "sync.runtime_SemacquireMutex sync.(*Mutex).lockSlow sync.(*Mutex).Lock "
		   "main.takeResource main.doJob runtime.goexit",
		   "Go: sync.Mutex.Lock", 600, true);
	classifies("builtin: a goroutine's RWMutex.Lock (its writer mutex's lockSlow below)", rules,
		   NULL, NULL,
		   "runtime.gopark runtime.goparkunlock runtime.semacquire1 "
		   "sync.runtime_SemacquireMutex sync.(*Mutex).lockSlow sync.(*Mutex).Lock "
		   "sync.(*RWMutex).Lock main.write",
		   "Go: sync.RWMutex.Lock", 610, true);
	classifies("builtin: a goroutine's WaitGroup.Wait", rules, NULL, NULL,
		   "runtime.gopark runtime.goparkunlock runtime.semacquire1 "
		   "sync.runtime_Semacquire sync.(*WaitGroup).Wait main.main",
		   "Go: sync.WaitGroup.Wait", 600, true);
	classifies("builtin: a goroutine's time.Sleep", rules, NULL, NULL,
		   "runtime.gopark time.Sleep main.nap main.doJob", "Go: sleep", 590, true);
	classifies("builtin: a goroutine's channel receive", rules, NULL, NULL,
		   "runtime.gopark runtime.chanrecv runtime.chanrecv2 main.worker",
		   "Go: chan receive", 590, true);
	classifies("builtin: a goroutine's select", rules, NULL, NULL,
		   "runtime.gopark runtime.selectgo main.loop", "Go: select", 590, true);
	classifies("builtin: any other park", rules, NULL, NULL,
		   "runtime.gopark runtime.gcMarkDone main.x",
		   "Go: a goroutine parked (runtime.gopark)", 500, true);
	classifies("builtin: an M's wait, cut at mcall, is no goroutine's", rules, NULL, NULL,
		   "runtime.futex runtime.futexsleep runtime.notesleep runtime.stopm "
		   "runtime.findRunnable runtime.schedule runtime.park_m runtime.mcall",
		   RULES_CAUSE_SLEEP, 0, false);
}

/*
 * Built-in: MariaDB's waits, as Debian's stripped mariadbd names them (only exported symbols),
 * and with its debug symbols.
 */
static void classify_builtin_mariadb(void)
{
	const struct rules *rules = rules_builtin();
	const char *cond = "__futex_abstimed_wait_common pthread_cond_timedwait@@GLIBC_2.3.2";

	classifies_waiter(
		"builtin: MariaDB, stripped: a row lock wait inside handler::", rules,
		(struct waiter){ .syscall = "futex",
				 .stacks = FUTEX_STACK,
				 .user = "__futex_abstimed_wait_common"
					 " pthread_cond_timedwait@@GLIBC_2.3.2"
					 " _ZN7handler17ha_index_read_mapEPhPKhm17ha_rkey_function"
					 " _Z12mysql_updateP3THD",
				 CONDVAR_ARGS },
		"Storage engine wait (InnoDB: a row lock)", 440, true);
	classifies_waiter(
		"builtin: MariaDB with its symbols: lock_wait()", rules,
		(struct waiter){ .syscall = "futex",
				 .stacks = FUTEX_STACK,
				 .user = "__futex_abstimed_wait_common"
					 " pthread_cond_timedwait@@GLIBC_2.3.2"
					 " _Z9lock_waitP9que_thr_t _Z20row_search_mvccPh"
					 " _ZN7handler17ha_index_read_mapEPhPKhm17ha_rkey_function",
				 CONDVAR_ARGS },
		"Row lock wait (InnoDB)", 450, true);
	classifies_waiter(
		"builtin: SQL SLEEP()", rules,
		(struct waiter){
			.syscall = "futex",
			.stacks = FUTEX_STACK,
			.user = "__futex_abstimed_wait_common"
				" pthread_cond_timedwait@@GLIBC_2.3.2"
				" _ZN18Interruptible_wait4waitEP13st_mysql_condP14st_mysql_mutex"
				" _ZN15Item_func_sleep7val_intEv",
			CONDVAR_ARGS },
		"Requested sleep (SQL SLEEP())", 440, true);
	classifies_waiter(
		"builtin: a condition variable outside handler:: stays one", rules,
		(struct waiter){
			.syscall = "futex", .stacks = FUTEX_STACK, .user = cond, CONDVAR_ARGS },
		"Waiting on a condition variable", 420, true);
	idle_is("builtin: a JIT compiler thread waiting for its next task is idle", rules,
		(struct waiter){ .syscall = "futex",
				 .stacks = FUTEX_STACK,
				 .user = "__futex_abstimed_wait_common"
					 " pthread_cond_timedwait@@GLIBC_2.3.2"
					 " _ZN2os15PlatformMonitor4waitEl _ZN7Monitor4waitEl"
					 " _ZN12CompileQueue3getEv"
					 " _ZN13CompileBroker20compiler_thread_loopEv",
				 CONDVAR_ARGS },
		RULES_IDLE_IDLE);
	classifies_waiter("builtin: a mutex inside handler:: is a mutex", rules,
			  (struct waiter){ .syscall = "futex",
					   .stacks = FUTEX_STACK,
					   .user = "__lll_lock_wait pthread_mutex_lock@@GLIBC_2.2.5"
						   " _ZN7handler11ha_rnd_nextEPh",
					   MUTEX_ARGS },
			  "Userspace lock contention (pthread mutex)", 420, true);
}

/* Built-in: file locks, with the stacks of tests/workloads/filelock under Linux 6.18. */
static void classify_builtin_file_locks(void)
{
	const struct rules *rules = rules_builtin();

	classifies("builtin: flock(LOCK_EX)", rules, "flock",
		   "150 locks_lock_inode_wait __do_sys_flock" ENTRY,
		   "flock lock_file main __libc_start_call_main", "Waiting for a file lock (flock)",
		   420, true);
	classifies("builtin: flock without stacks", rules, "flock", NULL, NULL,
		   "Waiting for a file lock (flock)", 150, true);
	/* F_SETLKW and F_OFD_SETLKW wait alike, in fcntl_setlk. */
	classifies("builtin: fcntl(F_SETLKW)", rules, "fcntl",
		   "150 fcntl_setlk do_fcntl __x64_sys_fcntl" ENTRY,
		   "__libc_fcntl64 lock_file main __libc_start_call_main",
		   "Waiting for a file lock (fcntl)", 420, true);
}

/*
 * Built-in: Ruby's waits. Debian's libruby-3.1 is stripped of its static functions ("-" frames):
 * only rb_mutex_synchronize and rb_thread_io_blocking_region name a wait there (stacks of
 * tests/workloads/rubywaits.rb under Debian's Ruby 3.1.2). The others
 * are the same stacks as Ruby 3.1's sources name their frames (thread.c, thread_pthread.c,
 * thread_sync.c, process.c), as a libruby with its symbols shows them.
 */
#define RB_COND "__futex_abstimed_wait_common pthread_cond_wait@@GLIBC_2.3.2 rb_native_cond_wait"
#define RB_TIMED "__futex_abstimed_wait_common pthread_cond_timedwait@@GLIBC_2.3.2"
#define RB_VM " vm_call_cfunc_with_frame vm_exec_core rb_vm_exec rb_vm_invoke_proc"
static void classify_builtin_ruby(void)
{
	const struct rules *rules = rules_builtin();
	struct waiter sync = { .syscall = "futex",
			       .stacks = FUTEX_STACK,
			       .user = RB_COND
			       " - - - rb_mutex_synchronize - - - rb_vm_exec rb_vm_invoke_proc - - -"
			       " start_thread __clone3",
			       CONDVAR_ARGS };
	struct waiter io = { .syscall = "futex",
			     .stacks = FUTEX_STACK,
			     .user = RB_TIMED
			     " - - - rb_threadptr_execute_interrupts - rb_thread_io_blocking_region"
			     " - - rb_ensure - - - rb_ensure - - - - rb_vm_exec rb_vm_invoke_proc"
			     " - - - start_thread __clone3",
			     .has_args = true,
			     .op = 137 };
	struct waiter lock = { .syscall = "futex",
			       .stacks = FUTEX_STACK,
			       .user = RB_COND " native_cond_sleep native_sleep sleep_forever"
					       " do_mutex_lock" RB_VM,
			       CONDVAR_ARGS };
	struct waiter gvl = { .syscall = "futex",
			      .stacks = FUTEX_STACK,
			      .user = RB_TIMED " native_cond_timedwait do_gvl_timer"
					       " gvl_acquire_common native_sleep sleep_hrtime"
					       " rb_thread_wait_for rb_f_sleep" RB_VM,
			      .has_args = true,
			      .op = 137 };
	struct waiter nap = { .syscall = "futex",
			      .stacks = FUTEX_STACK,
			      .user = RB_TIMED
			      " native_cond_timedwait native_cond_sleep native_sleep"
			      " sleep_hrtime rb_thread_wait_for rb_f_sleep"
			      " rb_yield rb_ensure" RB_VM,
			      .has_args = true,
			      .op = 137 };
	struct waiter poll_nap = { .syscall = "ppoll",
				   .stacks = "150 do_sys_poll __x64_sys_ppoll" ENTRY,
				   .user = "ppoll native_ppoll_sleep native_sleep sleep_hrtime"
					   " rb_f_sleep" RB_VM };
	struct waiter pop = { .syscall = "futex",
			      .stacks = FUTEX_STACK,
			      .user = RB_COND
			      " native_cond_sleep native_sleep sleep_forever"
			      " queue_sleep rb_ensure queue_do_pop rb_queue_pop" RB_VM,
			      CONDVAR_ARGS };
	struct waiter cv = { .syscall = "futex",
			     .stacks = FUTEX_STACK,
			     .user = RB_COND " native_cond_sleep native_sleep sleep_forever"
					     " rb_mutex_sleep do_sleep rb_ensure rb_condvar_wait"
					     " rb_yield rb_ensure" RB_VM,
			     CONDVAR_ARGS };

	classifies_waiter("builtin: Ruby 3.1, stripped: Mutex#synchronize", rules, sync,
			  "Waiting for a Ruby Mutex (Mutex#lock)", 460, true);
	idle_is("builtin: Ruby 3.1, stripped: a Mutex wait is never idle", rules, sync,
		RULES_IDLE_COUNT);
	classifies_waiter("builtin: Ruby 3.1, stripped: the GVL after I/O (File.read)", rules, io,
			  "Waiting for Ruby's global VM lock (GVL)", 480, true);
	idle_is("builtin: Ruby 3.1, stripped: a GVL wait is never idle", rules, io,
		RULES_IDLE_COUNT);
	classifies_waiter("builtin: Ruby: Mutex#lock", rules, lock,
			  "Waiting for a Ruby Mutex (Mutex#lock)", 460, true);
	classifies_waiter("builtin: Ruby: the GVL after a sleep", rules, gvl,
			  "Waiting for Ruby's global VM lock (GVL)", 480, true);
	idle_is("builtin: Ruby: a GVL wait is never idle", rules, gvl, RULES_IDLE_COUNT);
	classifies_waiter("builtin: Ruby: sleep, inside a synchronize block", rules, nap,
			  "Requested sleep (Ruby sleep)", 470, true);
	idle_is("builtin: Ruby: a sleep is left to the idle policy", rules, nap,
		RULES_IDLE_DEFAULT);
	classifies_waiter("builtin: Ruby: sleep in the thread that polls the signal fd", rules,
			  poll_nap, "Requested sleep (Ruby sleep)", 470, true);
	classifies_waiter("builtin: Ruby: Queue#pop", rules, pop, "Waiting on a condition variable",
			  465, true);
	idle_is("builtin: Ruby: Queue#pop is left to the idle policy", rules, pop,
		RULES_IDLE_DEFAULT);
	classifies_waiter("builtin: Ruby: ConditionVariable#wait inside synchronize", rules, cv,
			  "Waiting on a condition variable", 465, true);
}

static void idle_verdicts(void)
{
	struct rules *rules;

	rules = parses("idle rules",
		       "10 kernel:a = A\n"
		       "500 comm:bio_* user:bioProcessBackgroundJobs = idle\n"
		       "500 comm:myworker = !idle # this thread's waits always count\n"
		       "300 syscall:futex futex:wait = idle\n"
		       "400 comm:keen futex:wait = !idle\n"
		       "200 comm:tie = idle\n"
		       "200 comm:tie|tie2 = !idle\n"
		       "200 comm:tie2 = idle\n"
		       "100 kernel:pipe_read = idle\n"
		       "100 kernel:k1 kernel:k2 = idle\n"
		       "50 syscall:- = !idle\n"
		       "900 kernel:cause_k = Named\n"
		       "5 comm:named = Named\n",
		       13);
	if (!rules) {
		return;
	}
	idle_is("comm: and user:", rules,
		(struct waiter){
			.comm = "bio_close_file",
			.syscall = "futex",
			.user = "pthread_cond_wait bioProcessBackgroundJobs start_thread" },
		RULES_IDLE_IDLE);
	idle_is("comm: and user:, the user frame missing", rules,
		(struct waiter){ .comm = "bio_close_file", .syscall = "read", .user = "read main" },
		RULES_IDLE_DEFAULT);
	idle_is("!idle", rules, (struct waiter){ .comm = "myworker", .syscall = "read" },
		RULES_IDLE_COUNT);
	idle_is("!idle beats a lower idle", rules,
		(struct waiter){ .comm = "myworker", .syscall = "futex", CONDVAR_ARGS },
		RULES_IDLE_COUNT);
	idle_is("futex:wait idle", rules,
		(struct waiter){ .comm = "other", .syscall = "futex", CONDVAR_ARGS },
		RULES_IDLE_IDLE);
	idle_is("futex:wait: not a lock", rules,
		(struct waiter){ .comm = "other", .syscall = "futex", MUTEX_ARGS },
		RULES_IDLE_DEFAULT);
	idle_is("futex:wait: not without args", rules,
		(struct waiter){ .comm = "other", .syscall = "futex" }, RULES_IDLE_DEFAULT);
	idle_is("a higher !idle beats idle", rules,
		(struct waiter){ .comm = "keen", .syscall = "futex", CONDVAR_ARGS },
		RULES_IDLE_COUNT);
	idle_is("a tie: the idle rule written first", rules,
		(struct waiter){ .comm = "tie", .syscall = "read" }, RULES_IDLE_IDLE);
	idle_is("a tie: the !idle rule written first", rules,
		(struct waiter){ .comm = "tie2", .syscall = "read" }, RULES_IDLE_COUNT);
	idle_is("kernel: any of the stacks", rules,
		(struct waiter){ .syscall = "read", .stacks = "5 x y | 5 z pipe_read vfs_read" },
		RULES_IDLE_IDLE);
	idle_is("kernel: no stacks, no match", rules, (struct waiter){ .syscall = "read" },
		RULES_IDLE_DEFAULT);
	idle_is("kernel: two matchers on one stack", rules,
		(struct waiter){ .syscall = "ioctl", .stacks = "5 k2 k1" }, RULES_IDLE_IDLE);
	idle_is("kernel: two matchers on two stacks", rules,
		(struct waiter){ .syscall = "ioctl", .stacks = "5 k1 | 5 k2" }, RULES_IDLE_DEFAULT);
	idle_is("syscall:- on a sleep", rules, (struct waiter){ .stacks = "1 x" },
		RULES_IDLE_COUNT);
	idle_is("a cause rule is no idle verdict", rules,
		(struct waiter){ .syscall = "read", .stacks = "1 cause_k" }, RULES_IDLE_DEFAULT);
	idle_is("a cause rule is no idle verdict, by comm", rules,
		(struct waiter){ .comm = "named", .syscall = "read" }, RULES_IDLE_DEFAULT);
	idle_is("NULL rules", NULL, (struct waiter){ .comm = "myworker", .syscall = "read" },
		RULES_IDLE_DEFAULT);

	classifies_waiter("an idle rule names no cause", rules,
			  (struct waiter){ .comm = "myworker", .syscall = "read", .stacks = "1 a" },
			  "A", 10, true);
	classifies_waiter("an idle rule names no cause, without a cause rule", rules,
			  (struct waiter){ .comm = "tie", .syscall = "read", .stacks = "1 zzz" },
			  "read", 0, false);
	classifies_waiter("an idle rule names no cause, futex", rules,
			  (struct waiter){ .comm = "other", .syscall = "futex", CONDVAR_ARGS },
			  "futex", 0, false);
	classifies_waiter("cause rules of the same text still add up", rules,
			  (struct waiter){ .comm = "named",
					   .syscall = "read",
					   .stacks = "3 cause_k | 2 a | 2 zzz" },
			  "Named", 900, true);
	rules_free(rules);

	rules = parses("only cause rules", "10 comm:x = idle time\n", 1);
	if (rules) {
		idle_is("a cause that starts with idle is a cause", rules,
			(struct waiter){ .comm = "x", .syscall = "read" }, RULES_IDLE_DEFAULT);
		classifies_waiter("a cause that starts with idle names it", rules,
				  (struct waiter){ .comm = "x", .syscall = "read" }, "idle time",
				  10, true);
		rules_free(rules);
	}
}

/*
 * Stacks as latsnap recorded them on this machine (Linux 6.18), innermost first, against the
 * built-in rules.
 */
#define FAULT " __handle_mm_fault handle_mm_fault exc_page_fault asm_exc_page_fault"
#define MMAP_LOCK "mmap_lock contention (the address-space lock)"

static void classify_builtin(void)
{
	struct rules *rules = rules_builtin(), *again;

	if (!ok(rules, "the built-in rules parse")) {
		return;
	}
	ok(rules_count(rules) >= 100, "there are many of them (%zu)", rules_count(rules));
	ok(rules_builtin() == rules, "they are parsed once");
	rules_free(rules);
	ok(rules_count(rules_builtin()) == rules_count(rules), "rules_free() leaves them alone");
	again = parses("the built-in text, as a file", rules_builtin_text(), rules_count(rules));
	rules_free(again);

	classifies("builtin: nanosleep", rules, "clock_nanosleep",
		   "50 hrtimer_nanosleep common_nsleep_timens __x64_sys_clock_nanosleep" ENTRY,
		   NULL, "Requested sleep (nanosleep)", 400, true);
	classifies("builtin: nanosleep without stacks", rules, "nanosleep", NULL, NULL,
		   "Requested sleep (nanosleep)", 100, true);
	classifies("builtin: pipe read", rules, "read",
		   "30 anon_pipe_read vfs_read ksys_read" ENTRY, NULL, "Reading from a pipe", 400,
		   true);
	classifies("builtin: FIFO write", rules, "write",
		   "30 anon_pipe_write fifo_pipe_write vfs_write ksys_write" ENTRY, NULL,
		   "Writing to a full pipe", 400, true);
	classifies("builtin: pthread mutex", rules, "futex",
		   "150 futex_do_wait __futex_wait futex_wait do_futex __x64_sys_futex" ENTRY,
		   "__GI___lll_lock_wait waiter_main start_thread",
		   "Userspace lock contention (pthread mutex)", 420, true);
	classifies("builtin: condition variable", rules, "futex",
		   "150 futex_do_wait __futex_wait futex_wait do_futex __x64_sys_futex" ENTRY,
		   "__futex_abstimed_wait_common pthread_cond_wait@@GLIBC_2.3.2 consumer",
		   "Waiting on a condition variable", 420, true);
	classifies("builtin: futex without a user stack", rules, "futex",
		   "150 futex_do_wait __futex_wait futex_wait do_futex __x64_sys_futex" ENTRY, NULL,
		   "Userspace lock contention (futex)", 400, true);
	classifies("builtin: io_uring, its wait inlined (Linux 6.1)", rules, "io_uring_enter",
		   "150 __do_sys_io_uring_enter __x64_sys_io_uring_enter" ENTRY, NULL,
		   "Waiting for io_uring completions", 100, true);
	classifies(
		"builtin: unix socket", rules, "recvfrom",
		"50 unix_stream_read_generic unix_stream_recvmsg sock_recvmsg __sys_recvfrom" ENTRY,
		NULL, "Reading from a Unix socket", 420, true);
	classifies("builtin: TCP socket", rules, "recvfrom",
		   "50 wait_woken sk_wait_data tcp_recvmsg_locked tcp_recvmsg sock_recvmsg" ENTRY,
		   NULL, "Reading from a TCP socket", 420, true);
	classifies("builtin: UDP socket", rules, "recvfrom",
		   "50 __skb_wait_for_more_packets __skb_recv_udp udp_recvmsg sock_recvmsg" ENTRY,
		   NULL, "Reading from a UDP socket", 420, true);
	classifies("builtin: accept", rules, "accept4",
		   "50 inet_csk_accept inet_accept do_accept __sys_accept4" ENTRY, NULL,
		   "Waiting for a connection (accept)", 400, true);
	classifies("builtin: terminal", rules, "read",
		   "50 wait_woken n_tty_read tty_read vfs_read ksys_read" ENTRY, NULL,
		   "Reading from a terminal", 400, true);
	classifies("builtin: poll", rules, "poll",
		   "50 poll_schedule_timeout.constprop.0 do_sys_poll __x64_sys_poll" ENTRY, NULL,
		   "Waiting for events (poll)", 400, true);
	classifies("builtin: pselect", rules, "pselect6",
		   "50 poll_schedule_timeout.constprop.0 do_select core_sys_select"
		   " do_pselect.constprop.0 __x64_sys_pselect6" ENTRY,
		   NULL, "Waiting for events (select)", 400, true);
	classifies("builtin: epoll", rules, "epoll_wait",
		   "50 do_epoll_wait __x64_sys_epoll_wait" ENTRY, NULL,
		   "Waiting for events (epoll_wait)", 400, true);
	classifies("builtin: PostgreSQL's pg_sleep() waits on its latch, in epoll_wait", rules,
		   "epoll_wait", "50 do_epoll_wait __x64_sys_epoll_wait" ENTRY,
		   "epoll_wait WaitEventSetWait WaitLatch pg_sleep ExecInterpExpr",
		   "Requested sleep (SQL pg_sleep())", 440, true);
	classifies("builtin: PostgreSQL's row-lock wait, in epoll_wait", rules, "epoll_wait",
		   "50 do_epoll_wait __x64_sys_epoll_wait" ENTRY,
		   "epoll_wait WaitEventSetWait WaitLatch ProcSleep WaitOnLock LockAcquireExtended",
		   "Lock wait (PostgreSQL heavyweight lock)", 460, true);
	classifies("builtin: wait4", rules, "wait4", "50 do_wait kernel_wait4" ENTRY, NULL,
		   "Waiting for a child process to exit", 400, true);
	classifies("builtin: pause", rules, "pause", "50 __do_sys_pause" ENTRY, NULL,
		   "Waiting for a signal", 400, true);
	classifies("builtin: fsync, four stacks", rules, "fsync",
		   "42 rq_qos_wait wbt_wait __rq_qos_throttle blk_mq_submit_bio __submit_bio"
		   " submit_bio_noacct_nocheck ext4_io_submit ext4_do_writepages ext4_writepages"
		   " do_writepages filemap_fdatawrite_wbc __filemap_fdatawrite_range"
		   " file_write_and_wait_range generic_buffers_fsync_noflush"
		   " ext4_fsync_nojournal.constprop.0 ext4_sync_file do_fsync __x64_sys_fsync" ENTRY
		   " | 46 folio_wait_bit folio_wait_writeback __filemap_fdatawait_range"
		   " file_write_and_wait_range generic_buffers_fsync_noflush"
		   " ext4_fsync_nojournal.constprop.0 ext4_sync_file do_fsync __x64_sys_fsync" ENTRY
		   " | 3 __sync_dirty_buffer ext4_write_inode __writeback_single_inode"
		   " ext4_sync_file do_fsync __x64_sys_fsync" ENTRY
		   " | 2 submit_bio_wait blkdev_issue_flush ext4_sync_file do_fsync" ENTRY,
		   NULL, "fsync: flushing a file to disk", 800, true);
	classifies("builtin: journal commit beats fsync", rules, "fsync",
		   "50 jbd2_log_wait_commit ext4_sync_file do_fsync __x64_sys_fsync" ENTRY, NULL,
		   "Waiting for the ext4 journal commit", 900, true);
	classifies("builtin: dirty throttling", rules, "write",
		   "50 balance_dirty_pages balance_dirty_pages_ratelimited_flags"
		   " generic_perform_write ext4_buffered_write_iter vfs_write ksys_write" ENTRY,
		   NULL, "Dirty page throttling (writing faster than the disk)", 750, true);
	classifies("builtin: mmap_lock in a fault inside read", rules, "read",
		   "50 lock_mm_and_find_vma exc_page_fault asm_exc_page_fault _copy_to_iter"
		   " copy_page_to_iter filemap_read vfs_read ksys_read" ENTRY,
		   NULL, MMAP_LOCK, 660, true);
	classifies("builtin: mmap waiting for mmap_lock", rules, "mmap", "34 vm_mmap_pgoff" ENTRY,
		   NULL, MMAP_LOCK, 300, true);
	classifies("builtin: file position lock", rules, "read", "534 fdget_pos ksys_read" ENTRY,
		   NULL, "File position lock contention (threads sharing a file)", 300, true);
	classifies("builtin: reading a file", rules, "read",
		   "50 folio_wait_bit_common filemap_get_pages filemap_read vfs_read" ENTRY, NULL,
		   "Reading a file from disk", 650, true);
	classifies("builtin: fault on a mapped file", rules, NULL,
		   "50 folio_wait_bit_common filemap_fault __do_fault do_fault" FAULT, NULL,
		   "Page fault reading a mapped file from disk", 690, true);
	classifies("builtin: swap-in", rules, NULL,
		   "50 folio_wait_bit_common __folio_lock_or_retry do_swap_page" FAULT, NULL,
		   "Swap-in (page fault reading from swap)", 700, true);
	classifies("builtin: reclaim in a fault", rules, NULL,
		   "50 shrink_folio_list shrink_lruvec shrink_node try_to_free_pages"
		   " __alloc_pages_slowpath.constprop.0 do_anonymous_page" FAULT,
		   NULL, "Memory reclaim (low on free memory)", 950, true);
	classifies("builtin: another fault", rules, NULL, "50" FAULT, NULL, "Page fault", 500,
		   true);
	classifies("builtin: an unknown sleep", rules, NULL, "50 something_new", NULL,
		   RULES_CAUSE_SLEEP, 0, false);
	classifies("builtin: an unknown syscall wait", rules, "ioctl", "50 some_driver_wait" ENTRY,
		   NULL, "ioctl", 0, false);
}

/* `latsnap rules`: the text on stdout, --help, and a bad argument. */
static void command(void)
{
	static char *plain[] = { "rules", NULL };
	static char *help[] = { "rules", "--help", NULL };
	static char *extra[] = { "rules", "--bogus", NULL };
	static char out[65536], err[1024];
	struct tap_capture co, ce;
	int ret;

	tap_capture_begin(&co, STDOUT_FILENO);
	ret = rules_main(1, plain);
	tap_capture_end(&co, out, sizeof(out));
	is_int(ret, 0, "latsnap rules: exit 0");
	is_str(out, rules_builtin_text(), "latsnap rules: prints the built-in text");

	tap_capture_begin(&co, STDOUT_FILENO);
	ret = rules_main(2, help);
	tap_capture_end(&co, out, sizeof(out));
	is_int(ret, 0, "latsnap rules --help: exit 0");
	ok(!strncmp(out, "Usage: latsnap rules", 20), "latsnap rules --help: a usage");

	tap_capture_begin(&co, STDOUT_FILENO);
	tap_capture_begin(&ce, STDERR_FILENO);
	ret = rules_main(2, extra);
	tap_capture_end(&ce, err, sizeof(err));
	tap_capture_end(&co, out, sizeof(out));
	is_int(ret, 2, "latsnap rules --bogus: exit 2");
	is_str(err, "latsnap: rules: unknown argument '--bogus' (see latsnap rules --help)\n",
	       "latsnap rules --bogus: one line on stderr");
	is_str(out, "", "latsnap rules --bogus: nothing on stdout");
}

int main(void)
{
	parser_good();
	parser_bad();
	load_errors();
	classify_policy();
	classify_matchers();
	classify_builtin();
	classify_comm_futex();
	classify_flag();
	classify_builtin_futex();
	classify_builtin_goroutines();
	classify_builtin_mariadb();
	classify_builtin_file_locks();
	classify_builtin_ruby();
	idle_verdicts();
	command();
	return tap_done();
}
