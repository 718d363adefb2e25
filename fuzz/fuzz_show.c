// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_show.c - libFuzzer harness of `latsnap show` over what it reads from a snapshot: its
 * summary.json and the events of its trace, as libbabeltrace2 hands them over (struct
 * ctf_event). show.c is included and its ctf_read() call is served from the input, so the
 * statedump bookkeeping, the timelines, the unwound stacks taken from the trace, the
 * resymbolization and both outputs (text and --json) see hostile events; libbabeltrace2 itself
 * is not under test here.
 *
 * Input: summary.json, a line "%%", then one event per line: {"n": NAME, "t": TS_NS, "f":
 * {FIELDS}} (the line format of trace/ctf.c's reading process). Without the "%%" line the trace
 * cannot be read. The first byte's low bit picks --json.
 */
#define ctf_read fuzz_ctf_read
#include "review/show.c"
#undef ctf_read

#include <fcntl.h>
#include <sys/stat.h>

#include "fuzz_common.h"

#define SEPARATOR "\n%%\n"
/* The reading process allows CTF_FIELD_DEPTH, under the line's own levels. */
#define CTF_FIELD_DEPTH_FUZZ 36

static char snap_dir[64];
static const char *events;
static size_t events_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/latsnap-fuzz-show-XXXXXX";

	(void)argc;
	(void)argv;
	fuzz_quiet_stderr();
	if (!freopen("/dev/null", "w", stdout)) {
		abort();
	}
	fuzz_mkdtemp(dir);
	snprintf(snap_dir, sizeof(snap_dir), "%s/snap", dir);
	if (mkdir(snap_dir, 0700)) {
		abort();
	}
	return 0;
}

int fuzz_ctf_read(const char *trace_dir, const char *name_prefix, ctf_event_fn fn, void *ctx)
{
	const char *p = events, *end, *nl;
	struct json_object *obj, *name, *ts, *fields;
	struct ctf_event ev;
	json_tokener *tok;
	int ret = 0;

	(void)trace_dir;
	(void)name_prefix;
	if (!events) {
		return -EIO;
	}
	end = events + events_len;
	tok = json_tokener_new_ex(CTF_FIELD_DEPTH_FUZZ);
	for (; p < end && !ret; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			nl = end;
		}
		json_tokener_reset(tok);
		obj = json_tokener_parse_ex(tok, p, (int)(nl - p));
		if (!json_object_object_get_ex(obj, "n", &name) ||
		    !json_object_object_get_ex(obj, "t", &ts) ||
		    !json_object_object_get_ex(obj, "f", &fields) ||
		    !json_object_is_type(fields, json_type_object)) {
			json_object_put(obj);
			continue;
		}
		/* What the reading process sends: a string name, integer time, an object. */
		ev.name = json_object_get_string(name);
		ev.ts_ns = (uint64_t)json_object_get_int64(ts);
		ev.fields = fields;
		ret = fn(&ev, ctx);
		json_object_put(obj);
	}
	json_tokener_free(tok);
	return ret < 0 ? ret : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size), *sep, file[128];
	char *argv[] = { "show", size && (data[0] & 1) ? "--json" : "-B", "10ms", snap_dir, NULL };
	size_t summary_len = size;
	int fd, argc = 4;

	sep = memmem(text, size, SEPARATOR, strlen(SEPARATOR));
	events = NULL;
	if (sep) {
		summary_len = (size_t)(sep - text);
		events = sep + strlen(SEPARATOR);
		events_len = size - summary_len - strlen(SEPARATOR);
	}
	if (argv[1][1] == '-') {
		argv[2] = snap_dir;
		argv[3] = NULL;
		argc = 3;
	}
	snprintf(file, sizeof(file), "%s/summary.json", snap_dir);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, summary_len) != (ssize_t)summary_len) {
		abort();
	}
	close(fd);
	(void)show_main(argc, argv);
	free(text);
	return 0;
}
