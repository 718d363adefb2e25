/* SPDX-License-Identifier: GPL-2.0 */
/*
 * show-int.h - `latsnap show`'s model, shared by show.c (the command), show-model.c (a
 * snapshot and its trace read into an interest per outlier) and show-render.c (the interests
 * as text, JSON and HTML). Not for anyone outside review/show*.c.
 */
#ifndef LATSNAP_SHOW_INT_H
#define LATSNAP_SHOW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "lib/outlier.h"
#include "review/show.h"
#include "review/snapshots.h"

#define BEFORE_NS_DEFAULT (10 * 1000000ULL)
#define AFTER_NS_DEFAULT (5 * 1000000ULL)
/* Beyond this many events an outlier's timeline is cut (and says so). */
#define TIMELINE_MAX 5000
#define FIELDS_TEXT_MAX 200
#define MAX_THREADS 64
/* How long after an outlier's end its unwound stack may come (as the recorder takes it). */
#define UNWIND_SLACK_NS 2000000000ULL
/* A request's wait shows this many user frames at most, its CPU profile this many stacks. */
#define WAIT_USER_FRAMES 8
#define PROFILE_STACKS 10
/* lttng-ust's statedump: the mappings of a process that runs lttng-ust. */
#define STATEDUMP_PROVIDER "lttng_ust_statedump:"

/* What symbolizing a user frame again found, for the text and --json. */
struct frame_note {
	const char *symbolized; /* "build-id", "recorded", "python" (named when recorded), or NULL */
	const char *file; /* its source file, or NULL; lives as long as the symbolizer */
	int line;
};

/* One note per frame of a stack, in the frames' order. */
struct frame_notes {
	struct frame_note *v;
	size_t nr;
};

struct interest {
	struct outlier *outlier;
	uint64_t from_ns, to_ns, start_ns;
	int64_t tids[MAX_THREADS];
	size_t nr_tids;
	struct json_object *timeline;
	bool truncated;
	/*
	 * The preload library's latsnap:user_stack event of the outlier: the first of its thread
	 * after its end, within UNWIND_SLACK_NS and before the thread's next outlier (the
	 * recorder's rule). @unwind_seen: there is one; @ips: its addresses (a reference).
	 */
	uint64_t end_ns, next_start_ns;
	int64_t tid;
	bool unwind_seen;
	struct json_object *ips;
	/*
	 * What resymbolize() found of the user stack's frames, of each link's (@links), and of
	 * the holder's user frames (@holder).
	 */
	struct frame_notes user;
	struct frame_notes *links;
	struct frame_notes holder;
};

struct show_opts {
	bool json;
	const char *html;
	uint64_t before, after;
	/* --after was given: the window is the user's, even for the outlier's own stack. */
	bool after_given;
	const char *debug_dir;
	const char *path;
};

struct show_ctx {
	struct dwfl_sym *ds;
	struct interest *in;
	size_t nr;
	int err;
	bool have_trace;
	/*
	 * The outlier's own latsnap:user_stack event joins its timeline even past the default
	 * window: under load the handler can run more than AFTER_NS_DEFAULT after the wait ended.
	 */
	bool own_stack_beyond;
};

/* show-model.c */
int show_init_interests(struct show_ctx *sc, const struct summary *s, const struct show_opts *opts);
void show_interests_free(struct show_ctx *sc);
int show_load_snapshot(const char *path, struct snapshot *snap);
int show_read_trace(struct show_ctx *sc, const struct snapshot *snap);
int show_settle_outliers(struct show_ctx *sc, const struct snapshot *snap, int *status);

/* show-render.c */
int show_print_json(const struct snapshot *snap, const struct show_ctx *sc);
void show_print_text(const struct snapshot *snap, const struct show_ctx *sc);
int show_write_html(const struct snapshot *snap, const struct show_ctx *sc, const char *path);

#endif /* LATSNAP_SHOW_INT_H */
