// SPDX-License-Identifier: GPL-2.0
/* --request START[,END]: the probe forms latsnap reads, and what it refuses with a reason. */
#include <errno.h>
#include <string.h>

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
