// SPDX-License-Identifier: GPL-2.0
/* --request START[,END]: the probe forms latsnap reads, and what it refuses with a reason. */
#include <errno.h>
#include <string.h>
#include <linux/types.h>

#include "include/latsnap.h"
#include "tracker/request.h"
#include "tap.h"

static void parses(const char *text, enum request_probe_kind start, const char *path,
		   const char *provider, const char *name, enum request_probe_kind end,
		   const char *end_name)
{
	struct request_spec spec;
	char why[256] = "";

	if (!is_int(request_parse(text, &spec, why, sizeof(why)), 0, "'%s' reads (%s)", text,
		    why)) {
		return;
	}
	ok(spec.start.kind == start && !strcmp(spec.start.path, path) &&
		   (provider ? spec.start.provider && !strcmp(spec.start.provider, provider) :
			       !spec.start.provider) &&
		   !strcmp(spec.start.name, name),
	   "  its start: %s %s %s", spec.start.path, spec.start.provider ? spec.start.provider : "-",
	   spec.start.name);
	ok(spec.end.kind == end && !strcmp(spec.end.name, end_name), "  its end: %s",
	   spec.end.name);
	is_str(spec.text, text, "  kept as given");
	request_spec_free(&spec);
}

/* A keyed pair: each probe's name and key (LS_REQ_KEY_*, or an argument's number). */
static void keyed(const char *text, const char *start, unsigned int start_key, const char *end,
		  unsigned int end_key)
{
	struct request_spec spec;
	char why[256] = "";

	if (!is_int(request_parse(text, &spec, why, sizeof(why)), 0, "'%s' reads (%s)", text,
		    why)) {
		return;
	}
	ok(!strcmp(spec.start.name, start) && spec.start.key == start_key,
	   "  its start: %s, key %u", spec.start.name, spec.start.key);
	ok(!strcmp(spec.end.name, end) && spec.end.key == end_key, "  its end: %s, key %u",
	   spec.end.name, spec.end.key);
	request_spec_free(&spec);
}

static void refuses(const char *text, const char *why_has)
{
	struct request_spec spec;
	char why[256] = "";

	is_int(request_parse(text, &spec, why, sizeof(why)), -EINVAL, "'%s' is refused", text);
	ok(strstr(why, why_has) != NULL, "  saying why: %s", why);
}

int main(void)
{
	parses("usdt:/usr/lib/postgresql/15/bin/postgres:postgresql:query__start,"
	       "usdt:/usr/lib/postgresql/15/bin/postgres:postgresql:query__done",
	       REQUEST_USDT, "/usr/lib/postgresql/15/bin/postgres", "postgresql", "query__start",
	       REQUEST_USDT, "query__done");
	parses("uprobe:/srv/app:handle_request", REQUEST_UPROBE, "/srv/app", NULL, "handle_request",
	       REQUEST_URETPROBE, "handle_request");
	parses("uprobe:/srv/app:begin,uretprobe:/srv/app:finish", REQUEST_UPROBE, "/srv/app", NULL,
	       "begin", REQUEST_URETPROBE, "finish");
	/* A path with a colon: the fields after it are taken from the end. */
	parses("uprobe:/opt/a:b/app:run", REQUEST_UPROBE, "/opt/a:b/app", NULL, "run",
	       REQUEST_URETPROBE, "run");

	keyed("uretprobe:/usr/sbin/haproxy:stream_new=ret,uprobe:/usr/sbin/haproxy:stream_free=arg1",
	      "stream_new", LS_REQ_KEY_RET, "stream_free", 1);
	keyed("usdt:/x:p:begin=arg12,usdt:/x:p:end=arg2", "begin", 12, "end", 2);
	keyed("uprobe:/x:begin=tid,uprobe:/x:end", "begin", LS_REQ_KEY_THREAD, "end",
	      LS_REQ_KEY_THREAD);
	keyed("uprobe:/x:begin=arg5,uprobe:/x:end=arg1", "begin", 5, "end", 1);

	refuses("uprobe:/x:begin=arg6,uprobe:/x:end=arg1", "unknown key '=arg6'");
	refuses("usdt:/x:p:begin=arg13,usdt:/x:p:end=arg1", "unknown key '=arg13'");
	refuses("uprobe:/x:begin=arg0,uprobe:/x:end=arg1", "unknown key '=arg0'");
	refuses("uprobe:/x:begin=ret,uprobe:/x:end=arg1", "only a uretprobe");
	refuses("uprobe:/x:begin=arg1,uretprobe:/x:end=arg1", "arguments are gone");
	refuses("uprobe:/x:begin=arg1,uprobe:/x:end", "both probes name a key");
	refuses("uprobe:/x:begin=arg1", "both probes name a key");
	refuses("uprobe:/x:=arg1,uprobe:/x:end=arg1", "names no SYMBOL");
	refuses("bogus", "not KIND:PATH");
	refuses("kprobe:/x:y", "unknown probe kind");
	refuses("usdt:/x:query__start", "usdt:PATH:PROVIDER:NAME");
	refuses("uprobe:/srv/app:", "names no SYMBOL");
	refuses("uprobe::run", "names no PATH");
	refuses("usdt:/x:p:n", "START alone must be uprobe");
	refuses("uretprobe:/x:f", "START alone must be uprobe");
	refuses("uprobe:/x:f,nope", "not KIND:PATH");
	return tap_done();
}
