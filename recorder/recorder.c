// SPDX-License-Identifier: GPL-2.0
/*
 * recorder.c - around each outlier, save LTTng's in-memory ring buffers to OUTDIR/<id>/trace
 * and write the summary beside them.
 *
 * Outliers wait in a batch for the post-trigger window (so the snapshot holds what followed);
 * those arriving meanwhile join it. Limits (count, size, minimum interval) decide what is kept:
 * a batch that brings no new cause and no new worst case is skipped once the limits are
 * reached, and the oldest snapshot without a first or worst case makes room for one that does.
 * What they leave out is counted, never dropped silently. The limits are those of the output
 * directory: the snapshots earlier runs left there are adopted at the start and count as this
 * run's do (outtree_adopt_earlier()).
 *
 * With a relay daemon (-o net://...), each snapshot is taken locally first, since its summary is
 * read back from it, then its summary goes into the ring buffer as latsnap:summary events and
 * the snapshot is recorded again, to the relay, as HOST/SESSION/ID/trace-*: the trace there
 * carries its own summary. latsnap's own events of the snapshot, which a local snapshot has in
 * a trace of its own that latsnap writes, go beside it as HOST/SESSION/ID/latsnap-*: a relay
 * receives LTTng's snapshots only, and latsnap-replay records them into a session of their
 * own, each at its time (recorder/replay.c). The local copy stays only with --keep-local.
 *
 * The output tree is reached through a directory descriptor opened without following symlinks,
 * and every name in it is created with *at() calls that refuse them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "recorder/chain.h"
#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "recorder/emit.h"
#include "recorder/replay.h"
#include "lib/demangle.h"
#include "lib/outlier.h"
#include "lib/summary.h"
#include "lib/text.h"
#include "recorder/retention.h"
#include "recorder/recorder.h"
#include "classify/idle.h"
#include "recorder/session.h"
#include "recorder/timeline.h"
#include "trace/ctf-writer.h"
#include "tracker/tracker.h"
#include "lib/util.h"
#include "recorder/recorder-int.h"

static void replay_next(struct recorder *rec, unsigned int k);
static void send_replay(struct recorder *rec, const char *id, const char *path);

/* An event of the BPF side's kernel context stream, read before a snapshot: into the trace. */
static void on_context(const struct ls_ctx_event *e, void *ctx)
{
	struct recorder *rec = ctx;

	if (rec->timeline) {
		timeline_kernel_event(rec->timeline, e);
	}
	emit_kernel_event(rec->replay_emit, e);
}

/**
 * recorder_open - the output directory and the LTTng session; call before the target starts so
 * that its tracepoints are enabled from its first instruction.
 */
int recorder_open(struct recorder **recp, const struct recorder_opts *opts, struct tracker *tr)
{
	struct session_opts sopts = { 0 };
	struct recorder *rec;
	int err = 0, i;

	*recp = NULL;
	rec = calloc(1, sizeof(*rec));
	if (!rec) {
		return -ENOMEM;
	}
	rec->opts = *opts;
	rec->tracker = tr;
	tracker_keep_exited(tr, true);
	rec->out_fd = -1;
	rec->batch = calloc(MAX_BATCH, sizeof(*rec->batch));
	if (!rec->batch) {
		err = -ENOMEM;
		goto out;
	}
	err = guard_open(&rec->guard, &opts->guard);
	if (err) {
		goto out;
	}
	rec->retention.max_snapshots = opts->max_snapshots;
	rec->retention.max_size = opts->max_size;
	rec->retention.max_age_ns = opts->max_age_ns;
	outtree_sudo_owner(&rec->owner_uid, &rec->owner_gid);
	if (!opts->output) {
		char stage[PATH_MAX];
		const char *tmp = getenv("TMPDIR");

		snprintf(stage, sizeof(stage), "%s/latsnap-stage.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(stage)) {
			err = -errno;
			ls_err("record: %s: %s", stage, strerror(errno));
			goto out;
		}
		rec->staging = true;
		rec->out_fd = outtree_open_output(stage, rec->out_path, sizeof(rec->out_path),
						  rec->owner_uid, rec->owner_gid);
	} else {
		rec->out_fd = outtree_open_output(opts->output, rec->out_path,
						  sizeof(rec->out_path), rec->owner_uid,
						  rec->owner_gid);
	}
	if (rec->out_fd < 0) {
		err = rec->out_fd;
		goto out;
	}
	if (!rec->staging) {
		outtree_adopt_earlier(rec);
	}
	sopts.buffer_size = opts->buffer_size;
	/*
	 * What latsnap writes right before a snapshot (the mappings; latsnap:summary goes only to
	 * a relay); its outliers and the kernel context go into a trace of their own, each at its
	 * time (write_timeline()), and for a relay into the replay sessions too.
	 */
	sopts.ust_events[sopts.nr_ust_events++] = LSEV_NAME_BIN_INFO;
	if (opts->relay) {
		for (i = 0; i < SESSION_MAX_REPLAY; i++) {
			rec->replay[i] = replay_new();
			if (!rec->replay[i]) {
				err = -ENOMEM;
				goto out;
			}
		}
		err = emit_open_ops(&rec->replay_emit, replay_ops(rec->replay[0]));
		if (err) {
			goto out;
		}
		sopts.ust_events[sopts.nr_ust_events++] = LSEV_NAME_SUMMARY;
		sopts.nr_replay = SESSION_MAX_REPLAY;
		sopts.replay_exclude = REPLAY_HELPER_NAME;
		sopts.replay_events[sopts.nr_replay_events++] = LSEV_NAME_OUTLIER;
		sopts.replay_events[sopts.nr_replay_events++] = LSEV_NAME_KERNEL_STACK;
		sopts.replay_events[sopts.nr_replay_events++] = LSEV_NAME_USER_STACK;
		sopts.replay_events[sopts.nr_replay_events++] = "latsnap_kernel:*";
	}
	sopts.ust_events[sopts.nr_ust_events++] = "lttng_ust_statedump:*";
	for (i = 0; i < opts->nr_ust_events && sopts.nr_ust_events < SESSION_MAX_EVENTS; i++) {
		sopts.ust_events[sopts.nr_ust_events++] = opts->ust_events[i];
	}
	err = session_open(&rec->session, &sopts);
	if (err) {
		goto out;
	}
	for (i = 0; rec->replay_emit && i < SESSION_MAX_REPLAY; i++) {
		replay_next(rec, (unsigned int)i);
	}
	if (emit_open(&rec->emit, rec->emit_why, sizeof(rec->emit_why))) {
		ls_err("record: latsnap's own events: %s; the snapshots go on without them",
		       rec->emit_why);
	} else if (!emit_wait_ready(rec->emit, EMIT_READY_TIMEOUT_MS)) {
		ls_err("record: latsnap's own events are not enabled after %d s (lttng-sessiond "
		       "slow to answer?): snapshots taken before they are will lack them",
		       EMIT_READY_TIMEOUT_MS / 1000);
	}
	/*
	 * The BPF context stream goes into the snapshots with or without LTTng's kernel channel:
	 * the wait chains (recorder/chain.c) and show's thread states are read from its events,
	 * which carry what LTTng's do not (the stack a thread blocked in, its waker's, the syscall
	 * it blocked in, the threads a wait depends on). The kernel channel adds the kernel's own
	 * events, recorded as they happen, for the CTF tools.
	 */
	if (rec->emit && opts->context_level != LS_CTX_NONE) {
		tracker_set_context(tr, (enum ls_ctx_level)opts->context_level, on_context, rec);
		rec->streaming = true;
	}
	if (session_has_kernel(rec->session)) {
		ls_verbose("record: kernel tracer: LTTng kernel channel (lttng-modules: sched, block, "
			   "syscalls) and the BPF side (causes, wait chains: %s)",
			   rec->streaming ? "its context stream" : "no context stream");
	} else {
		ls_verbose("record: kernel tracer: the BPF side only (no LTTng kernel channel); wait "
			   "chains from %s",
			   rec->streaming ? "its context stream" : "nothing: no context stream");
	}
out:
	if (err) {
		recorder_close(rec);
		return err;
	}
	*recp = rec;
	return 0;
}

/**
 * recorder_add() - an outlier for the next snapshot; the recorder owns it from now on
 */
void recorder_add(struct recorder *rec, struct outlier *outlier)
{
	enum guard_verdict verdict;

	rec->totals.outliers++;
	/*
	 * Live, for any session that enables latsnap:* (a user's own); latsnap's own session
	 * records it only without a trace of its own (recorder_open()).
	 */
	emit_outlier(rec->emit, outlier);
	/* Only an outlier that would start a snapshot is judged: one on its way takes it along. */
	if (rec->nr_batch == 0) {
		verdict = guard_judge(rec->guard, outlier, ls_now_ns());
		if (verdict != GUARD_SNAPSHOT) {
			guard_hold(rec->guard, outlier, verdict);
			rec->skipped_since++;
			rec->totals.skipped++;
			ls_verbose("record: no snapshot for %s[%d] %s %.1f ms (%s): %s", outlier->comm,
				   outlier->tid, outlier->syscall ? outlier->syscall : "off-CPU",
				   (double)outlier->duration_ns / 1e6, outlier->cause,
				   guard_verdict_text(verdict));
			outlier_free(outlier);
			return;
		}
	}
	if (rec->nr_batch >= MAX_BATCH) {
		rec->skipped_since++;
		rec->totals.skipped++;
		rec->batch_over++;
		outlier_free(outlier);
		return;
	}
	if (rec->nr_batch == 0) {
		rec->batch_first_ns = ls_now_ns();
	}
	rec->batch[rec->nr_batch++] = outlier;
}

/* The batch as the retention policy sees it (@items has room for MAX_BATCH). */
/*
 * The batch as the retention policy sees it (@items has room for MAX_BATCH). Under the limits,
 * the first and the worst of each cause are kept per user: a cause of another user than root is
 * "CAUSE (uid N)" (in @user_causes, to free), so that one user's storm, first and worst of its
 * causes, leaves every other user's first of the same cause a first. Root's stay plain, as
 * earlier runs' summaries (adopted by their causes) have them.
 */
static void batch_items(const struct recorder *rec, struct retention_item *items,
			char **user_causes)
{
	const struct outlier *o;
	size_t i;

	for (i = 0; i < rec->nr_batch; i++) {
		o = rec->batch[i];
		items[i].cause = o->cause ? o->cause : "";
		items[i].duration_ns = o->duration_ns;
		user_causes[i] = NULL;
		if (o->has_uid && o->uid &&
		    asprintf(&user_causes[i], "%s (uid %u)", items[i].cause, o->uid) > 0) {
			items[i].cause = user_causes[i];
		}
	}
}

/* A new snapshot id: UTC time to the millisecond and a sequence number, so ids sort by time. */
static void make_id(struct recorder *rec, char *id, size_t size)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(id, size, "%04d%02d%02dT%02d%02d%02d.%03ldZ-%04u", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		 ++rec->seq);
}

/*
 * The idle waits that ended since the last snapshot, summary.json's "idle": an array to free
 * whose strings point into @idle; NULL without memory.
 */
static struct summary_idle *idle_window(const struct idle_policy *idle, size_t *nr)
{
	const struct idle_entry *entries;
	size_t n = idle_entries(idle, &entries), i;
	struct summary_idle *v = calloc(n ? n : 1, sizeof(*v));

	*nr = 0;
	for (i = 0; v && i < n; i++) {
		if (!entries[i].window_count) {
			continue;
		}
		v[(*nr)++] = (struct summary_idle){
			.pid = entries[i].pid,
			.tid = entries[i].tid,
			.comm = (char *)entries[i].comm,
			.site = (char *)entries[i].site,
			.count = entries[i].window_count,
			.total_ns = entries[i].window_ns,
		};
	}
	return v;
}

/*
 * What the flood guard held back since the last snapshot, summary.json's "held_back": an array to
 * free whose strings point into @guard; NULL without memory.
 */
static struct summary_held *held_window(const struct guard *guard, size_t *nr)
{
	const struct guard_held *held;
	size_t n = guard_window(guard, &held), i;
	struct summary_held *v = calloc(n ? n : 1, sizeof(*v));

	*nr = v ? n : 0;
	for (i = 0; v && i < n; i++) {
		v[i] = (struct summary_held){
			.pid = held[i].pid,
			.uid = held[i].uid == UINT32_MAX ? -1 : (int64_t)held[i].uid,
			.comm = (char *)held[i].comm,
			.repeats = held[i].held[GUARD_REPEAT],
			.over_user_budget = held[i].held[GUARD_USER_BUDGET],
			.over_budget = held[i].held[GUARD_BUDGET],
		};
	}
	return v;
}

/* The processes and users over their share at the source, "dropped_at_source"; NULL: no memory. */
#define DROPPED_LISTED 64
static struct summary_dropped *dropped_at_source(struct tracker *tr, size_t *nr)
{
	struct tracker_share shares[DROPPED_LISTED];
	size_t n = tracker_shares_dropped(tr, shares, DROPPED_LISTED), i;
	struct summary_dropped *v = calloc(n ? n : 1, sizeof(*v));

	*nr = v ? n : 0;
	for (i = 0; v && i < n; i++) {
		v[i] = (struct summary_dropped){ .user = shares[i].user,
						 .id = shares[i].id,
						 .dropped = shares[i].dropped };
	}
	return v;
}

/* The snapshot's own flags, gathered in @flags: an array to free whose strings point into it. */
static char **flag_texts(struct json_object *flags, size_t *nr)
{
	size_t n = json_object_array_length(flags), i;
	char **v = calloc(n ? n : 1, sizeof(*v));

	for (i = 0; v && i < n; i++) {
		v[i] = (char *)json_object_get_string(json_object_array_get_idx(flags, i));
	}
	*nr = v ? n : 0;
	return v;
}

static void idle_print_text(FILE *out, const struct idle_policy *idle)
{
	const struct idle_entry *entries;
	size_t n = idle_entries(idle, &entries), i;
	bool first = true;
	char *site;

	for (i = 0; i < n; i++) {
		if (!entries[i].window_count) {
			continue;
		}
		if (first) {
			fprintf(out, "\nidle waits (waiting for work, not latency):\n");
			first = false;
		}
		site = ls_demangle_text(entries[i].site);
		fprintf(out, "  %s[%d] %" PRIu64 " x %s, %.1f ms\n", LS_TEXT(entries[i].comm),
			entries[i].tid, entries[i].window_count,
			LS_TEXT(site ? site : entries[i].site), (double)entries[i].window_ns / 1e6);
		free(site);
	}
}

/* summary.txt: the summary for people, written first (summary.json says it is complete). */
static int write_summary_txt(struct recorder *rec, int snap_fd, const struct summary *s)
{
	char *text = NULL;
	size_t i, len = 0;
	FILE *mem;
	int err;

	mem = open_memstream(&text, &len);
	if (!mem) {
		return -ENOMEM;
	}
	fprintf(mem, "latsnap snapshot %s on %s, created %s: %zu outlier%s, %" PRIu64 " skipped\n",
		s->id, s->host, s->created, s->nr_outliers, s->nr_outliers == 1 ? "" : "s",
		s->skipped);
	for (i = 0; i < s->nr_flags; i++) {
		fprintf(mem, "flag: %s\n", LS_TEXT(s->flags[i]));
	}
	for (i = 0; i < s->nr_outliers; i++) {
		fputc('\n', mem);
		outlier_print_text(mem, s->outliers[i]);
	}
	idle_print_text(mem, rec->opts.idle);
	fclose(mem);
	err = outtree_write_atomic(snap_fd, "summary.txt", text, len, true);
	free(text);
	return err;
}

/*
 * write_summary - summary.txt, then summary.json (lib/summary.c writes its text) of the batch.
 * @json, when given, receives the summary.json text (the caller frees it).
 */
static int write_summary(struct recorder *rec, int snap_fd, const char *id,
			 struct json_object *flags, char **json)
{
	char host[256] = "", created[32], *text = NULL;
	struct summary s = {
		.id = (char *)id,
		.host = host,
		.created = created,
		.trace = (char *)"trace",
		.outliers = rec->batch,
		.nr_outliers = rec->nr_batch,
		.skipped = rec->skipped_since,
	};
	struct timespec ts;
	struct tm tm;
	int err = -ENOMEM;

	gethostname(host, sizeof(host) - 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	s.flags = flag_texts(flags, &s.nr_flags);
	s.idle = idle_window(rec->opts.idle, &s.nr_idle);
	s.held = held_window(rec->guard, &s.nr_held);
	s.dropped = dropped_at_source(rec->tracker, &s.nr_dropped);
	if (!s.flags || !s.idle || !s.held || !s.dropped) {
		goto out;
	}
	err = write_summary_txt(rec, snap_fd, &s);
	if (err) {
		goto out;
	}
	text = summary_format(&s);
	err = text ? outtree_write_atomic(snap_fd, "summary.json", text, strlen(text), true) :
		     -ENOMEM;
	if (!err && json) {
		*json = text;
		text = NULL;
	}
out:
	free(text);
	free(s.flags);
	free(s.idle);
	free(s.held);
	free(s.dropped);
	return err;
}

/*
 * send_to_relay - the summary into the ring buffer (latsnap:summary), then the snapshot to the
 * relay daemon as @id. A failure is said in one line; the caller decides what stays.
 */
static int send_to_relay(struct recorder *rec, const char *id, const char *json)
{
	uint64_t part_max = session_subbuf_size(rec->session) / 2;
	char why[512], name[64], path[160];
	int parts, err;

	if (part_max > SUMMARY_PART_MAX) {
		part_max = SUMMARY_PART_MAX;
	}
	parts = emit_summary(rec->emit, id, json, strlen(json), part_max);
	if (parts < 0) {
		ls_verbose("record: snapshot %s: no latsnap:summary event (%s): the relay's copy "
			   "will have no summary",
			   id, rec->emit ? "the events library predates it" : rec->emit_why);
	}
	ls_relay_name(id, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", session_name(rec->session), name);
	err = session_snapshot_net(rec->session, -1, rec->opts.relay, path, "trace", why,
				   sizeof(why));
	if (!err && rec->replay_emit) {
		send_replay(rec, id, path);
	}
	if (err) {
		rec->totals.relay_failed++;
		if (rec->staging) {
			ls_err("record: snapshot %s to %s: %s; not kept (no --keep-local)", id,
			       rec->opts.relay, why);
		} else {
			ls_err("record: snapshot %s to %s: %s; kept locally in %s/%s", id,
			       rec->opts.relay, why, rec->out_path, id);
		}
	}
	return err;
}

/*
 * What the batch's processes have mapped, into the ring buffer right before it is written: the
 * trace then symbolizes their stacks on its own (latsnap:bin_info).
 */
static void emit_batch_mappings(struct recorder *rec)
{
	size_t i, j;
	int32_t pid;

	for (i = 0; i < rec->nr_batch; i++) {
		pid = rec->batch[i]->pid;
		for (j = 0; j < i && rec->batch[j]->pid != pid; j++) {
		}
		if (j == i) {
			emit_mappings(rec->emit, rec->tracker, (pid_t)pid);
		}
	}
}

static void add_flag(struct json_object *flags, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A snapshot's own flag (summary.json "flags"), formatted. */
static void add_flag(struct json_object *flags, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object_array_add(flags, json_object_new_string(text));
}

/*
 * The kernel context of the batch, kept in the kernel until now, into the trace: what was written
 * from CTX_MARGIN_NS before the oldest outlier's start on, in time order. Half the channel's
 * ring at most, so that the burst never overwrites what latsnap recorded of the outliers before.
 */
static void emit_context(struct recorder *rec, struct json_object *flags)
{
	uint64_t from = UINT64_MAX, max_bytes;
	struct tracker_ctx_read r;
	size_t i;

	for (i = 0; i < rec->nr_batch; i++) {
		if (rec->batch[i]->start_ns < from) {
			from = rec->batch[i]->start_ns;
		}
	}
	from = from > CTX_MARGIN_NS ? from - CTX_MARGIN_NS : 0;
	/* Into a trace of its own: what the kernel's rings hold, up to what latsnap gives them. */
	max_bytes = CTX_OWN_MAX_BYTES;
	if (tracker_read_context(rec->tracker, from, true, max_bytes, &r)) {
		add_flag(flags, "context-lost: no memory to read the kernel context");
		return;
	}
	ls_verbose("record: kernel context: %" PRIu64 " events (%" PRIu64 " bytes) from %.3f, %" PRIu64
		   " left out for room, %" PRIu64 " torn, %" PRIu64 " stacks lost",
		   r.emitted, r.bytes, (double)from / 1e9, r.trimmed, r.torn, r.stacks_lost);
	if (r.trimmed) {
		add_flag(flags,
			 "context-lost: the %" PRIu64 " oldest kernel context events of the window "
			 "did not fit in %s",
			 r.trimmed, "the memory latsnap gives them");
	}
	if (r.stacks_lost) {
		add_flag(flags,
			 "context-lost: %" PRIu64 " stacks of the window's waits and wakeups were no "
			 "longer in their CPU's stack ring",
			 r.stacks_lost);
	}
	if (r.wrapped_ns) {
		add_flag(flags,
			 "context-lost: a CPU's context ring no longer held the first %.1f ms of the "
			 "window",
			 (double)r.wrapped_ns / 1e6);
	}
}

/* One snapshot in the making: where it goes, what it says of itself, and how long it took. */
struct snap {
	char id[64];
	int fd;
	struct json_object *flags;
	struct retention_item items[MAX_BATCH]; /* the batch, as the retention policy sees it */
	char *user_causes[MAX_BATCH]; /* items' causes of other users than root (batch_items()) */
	struct retention_kept pending; /* the causes it holds, for the retention policy */
	char *json; /* the summary.json text, for the relay */
	struct ctf_clock clock; /* of LTTng's trace, which latsnap's own goes with */
	uint64_t t0, t_lttng, t_read, t_relay;
};

/* What one reading of a snapshot's trace collects. */
struct read_back {
	struct recorder *rec;
	struct chain_events chain;
	bool chain_wanted; /* the kernel context is in this reading: collect it */
	int err; /* of the collection (memory), not of the reading */
};

/*
 * A latsnap:user_stack event of the trace just written: latsnap recorded it for the outlier it
 * names (tid, end_ns), whose unwound stack the tracker already put in. Say the trace holds its
 * copy, which `show` then expects to find there.
 */
static void on_user_stack(struct recorder *rec, const struct lsev *ev)
{
	const struct lsev_user_stack *u = &ev->u.ustack;
	struct outlier *o;
	size_t i;

	for (i = 0; ev->thread.known && u->has_end_ns && i < rec->nr_batch; i++) {
		o = rec->batch[i];
		if (o->tid == ev->thread.tid && o->end_ns == u->end_ns &&
		    o->user_stack.source == OUTLIER_USTACK_UNWIND) {
			o->user_stack.in_trace = true;
			break;
		}
	}
}

static int on_trace_event(const struct ctf_event *ev, void *ctx)
{
	struct read_back *rb = ctx;
	struct lsev decoded;

	lsev_decode(ev, &decoded);
	if (decoded.kind == LSEV_USER_STACK) {
		on_user_stack(rb->rec, &decoded);
	} else if (rb->chain_wanted && !rb->err) {
		rb->err = chain_add_lsev(&rb->chain, &decoded);
	}
	return 0;
}

/* The flags the trace's reading gives each outlier. */
static void flag_outliers(struct recorder *rec, const struct ctf_trace_info *info)
{
	struct outlier *o;
	size_t i;

	for (i = 0; i < rec->nr_batch; i++) {
		o = rec->batch[i];
		if (info->events && o->start_ns < info->first_ns) {
			outlier_add_flag(o, "trace-starts-later: the ring buffer no longer held the "
					    "start of this outlier (raise --buffer-size)");
		}
		if (o->signalled && o->user_stack.source != OUTLIER_USTACK_UNWIND &&
		    !outlier_has_flag(o, "no-unwound-stack:")) {
			outlier_add_flag(o, "no-unwound-stack: the preload library was signalled, "
					    "but its latsnap:user_stack event is not in the snapshot");
		}
	}
}

/*
 * snapshot_retake - @sn's trace could not be read back. Seen in slow guests under load: its
 * metadata, as LTTng copied it, declared an event before the stream it belongs to ("Cannot find
 * stream class at this point: id=0"), and no CTF reader takes it. LTTng writes the session's
 * metadata again, whole and in order, and the snapshot is taken again in place of the first.
 */
static int snapshot_retake(struct recorder *rec, struct snap *sn)
{
	char path[PATH_MAX + 128];
	int err;

	if (rec->session_gone || session_regenerate_metadata(rec->session)) {
		return -EIO;
	}
	outtree_remove_tree(sn->fd, "trace");
	if (mkdirat(sn->fd, ".lttng", 0700)) {
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/%s/.lttng", rec->out_path, sn->id);
	err = session_snapshot(rec->session, path);
	if (!err) {
		err = outtree_settle_trace_dir(sn->fd);
	}
	return err;
}

/*
 * read_back - what LTTng's trace says about each outlier (whether it reaches back) and its clock,
 * which latsnap's own trace goes on (write_timeline(), which has the wait chain); read once more
 * if it could not be read and @sn could be taken again (snapshot_retake()).
 */
static void read_back(struct recorder *rec, const char *trace_path, struct snap *sn)
{
	struct read_back rb = { .rec = rec, .chain = { .tr = rec->tracker } };
	struct json_object *flags = sn->flags;
	struct ctf_trace_info info = { 0 };
	bool empty;
	char text[160];
	int err;

	err = ctf_read_info(trace_path, "latsnap", on_trace_event, &rb, &info);
	/*
	 * Empty, though latsnap just recorded its outliers into it: a 6.12 guest under load wrote
	 * such a snapshot (the buffers' streams not yet in it); taken again, it has them. With
	 * latsnap's own events in a trace of their own, LTTng's may hold no event; it still has
	 * the streams of latsnap's own registration, and their clock.
	 */
	empty = !err && !info.events && !info.clock.known;
	if (((err && err != -ENOMEM) || empty) && snapshot_retake(rec, sn) == 0) {
		ls_verbose("record: %s/%s: the trace could not be read (%s): its metadata "
			   "regenerated, the snapshot taken again",
			   rec->out_path, sn->id, err ? strerror(-err) : "no events");
		chain_events_free(&rb.chain);
		memset(&rb, 0, sizeof(rb));
		rb.rec = rec;
		rb.chain.tr = rec->tracker;
		memset(&info, 0, sizeof(info));
		err = ctf_read_info(trace_path, "latsnap", on_trace_event, &rb, &info);
		add_flag(flags, "trace-retaken: the first copy of the trace could not be read, or "
				"was empty; LTTng wrote its metadata again and the snapshot was taken "
				"again");
	}
	if (!err && (info.discarded_events || info.discarded_packets)) {
		snprintf(text, sizeof(text),
			 "trace-lost: the ring buffer discarded %" PRIu64 " events and %" PRIu64
			 " packets",
			 info.discarded_events, info.discarded_packets);
		json_object_array_add(flags, json_object_new_string(text));
	}
	sn->clock = info.clock;
	chain_events_free(&rb.chain);
	flag_outliers(rec, &info);
}

/*
 * write_timeline - latsnap's own events of the snapshot (the kernel context read before it, the
 * batch's outliers) as trace/latsnap/, a trace of their own next to LTTng's, each at the time
 * it happened on LTTng's clock class; then the wait chain, from them. Called after read_back(),
 * which took the clock from LTTng's trace.
 */
static void write_timeline(struct recorder *rec, const char *trace_path, struct snap *sn)
{
	struct read_back rb = { .rec = rec, .chain = { .tr = rec->tracker },
				.chain_wanted = rec->streaming };
	bool in_trace[MAX_BATCH] = { false };
	char dir[PATH_MAX + 200], why[256], host[256];
	uint64_t t0 = ls_now_ns(), t1;
	size_t i;
	int err;

	if (!rec->timeline) {
		err = -ENOMEM;
		snprintf(why, sizeof(why), "%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < rec->nr_batch; i++) {
		in_trace[i] = timeline_outlier(rec->timeline, rec->batch[i]);
	}
	if (!sn->clock.known) {
		err = -ENODATA;
		snprintf(why, sizeof(why), "LTTng's trace gave no clock to put them on");
		goto out;
	}
	if (gethostname(host, sizeof(host))) {
		host[0] = '\0';
	}
	host[sizeof(host) - 1] = '\0';
	snprintf(dir, sizeof(dir), "%s/%s", trace_path, TIMELINE_DIR);
	err = ctf_writer_write(rec->timeline, dir, &sn->clock, host, why, sizeof(why));
	if (err) {
		goto out;
	}
	for (i = 0; i < rec->nr_batch; i++) {
		if (in_trace[i]) {
			rec->batch[i]->user_stack.in_trace = true;
		}
	}
	t1 = ls_now_ns();
	if (!rec->streaming) {
		goto done;
	}
	err = ctf_read(dir, "latsnap", on_trace_event, &rb);
	if (err || rb.err || chain_build(&rb.chain, rec->batch, rec->nr_batch)) {
		add_flag(sn->flags, "no-wait-chain: the kernel context events of the trace could "
				    "not be read");
	}
done:
	ls_verbose("record: %s: %zu events of latsnap's own, each at its time, written in %.1f ms; "
		   "the wait chain read from them in %.1f ms",
		   dir, ctf_writer_count(rec->timeline), (t1 - t0) / 1e6,
		   (ls_now_ns() - t1) / 1e6);
	err = 0;
out:
	if (err) {
		ls_err("record: %s/%s: latsnap's own events (kernel context, outliers) not written: "
		       "%s",
		       rec->out_path, sn->id, why);
		add_flag(sn->flags, "no-latsnap-events: its own events could not be written: %s",
			 why);
		if (rec->streaming) {
			add_flag(sn->flags, "no-wait-chain: the kernel context events of the trace "
					    "could not be read");
		}
	}
	chain_events_free(&rb.chain);
}

/*
 * snapshot_admit - may the batch become a snapshot under the limits? Makes room if it brings
 * a new cause or worst case; otherwise counts it as skipped and says why (-v).
 */
static bool snapshot_admit(struct recorder *rec, struct snap *sn)
{
	size_t n = rec->nr_batch;
	bool notable;

	batch_items(rec, sn->items, sn->user_causes);
	if (retention_admit(&rec->retention, sn->items, n, &sn->pending, outtree_evict_snapshot,
			    rec, &notable)) {
		return true;
	}
	rec->skipped_since += n;
	rec->totals.skipped += n;
	ls_verbose("record: %zu outlier%s skipped: the limits are reached and %s", n,
		   n == 1 ? "" : "s",
		   notable ? "every snapshot kept holds a first or worst case" :
			     "no new cause or worst case is among them");
	return false;
}

/* The snapshot's own flags known before LTTng writes it. */
static void snapshot_start_flags(struct recorder *rec, struct snap *sn)
{
	if (rec->batch_over) {
		add_flag(sn->flags,
			 "batch-full: %" PRIu64 " more outliers came in this snapshot's window than "
			 "the %d it holds: counted in skipped",
			 rec->batch_over, MAX_BATCH);
	}
	if (!rec->emit) {
		add_flag(sn->flags, "no-latsnap-events: %s", rec->emit_why);
	}
}

/*
 * replay_next - replay session @k's latsnap-replay for the next snapshot of its turn: the one
 * that recorded the last one let go (and untracked: its pid may come back as anyone's), a new
 * one started and tracked, its buffers from now on.
 */
static void replay_next(struct recorder *rec, unsigned int k)
{
	struct replay *rp = rec->replay[k];
	pid_t old = replay_pid(rp);
	uint64_t t0 = ls_now_ns();
	char why[512];

	replay_clear(rp);
	if (replay_standby(rp, EMIT_READY_TIMEOUT_MS, rec->opts.buffer_size / 2, why, sizeof(why))) {
		ls_err("record: the relay's copies will lack latsnap's own events: %s", why);
		return;
	}
	if (old && old != replay_pid(rp) &&
	    session_replay_track(rec->session, (int)k, old, false, why, sizeof(why))) {
		ls_verbose("record: %s", why);
	}
	if (replay_pid(rp) != old &&
	    session_replay_track(rec->session, (int)k, replay_pid(rp), true, why, sizeof(why))) {
		ls_err("record: the relay's copies will lack latsnap's own events: %s", why);
		replay_finish(rp);
		return;
	}
	ls_verbose("record: %s %d stands by for replay session %u (%.1f ms to start it)",
		   REPLAY_HELPER_NAME, (int)replay_pid(rp), k, (ls_now_ns() - t0) / 1e6);
}

/*
 * send_replay - latsnap's own events of snapshot @id (its kernel context, collected as it was
 * read, and its outliers) to the relay beside LTTng's snapshot, as @path/latsnap: recorded by
 * this turn's latsnap-replay, which stood by since its session's previous snapshot, then sent;
 * the next turn's session is the other one.
 */
static void send_replay(struct recorder *rec, const char *id, const char *path)
{
	unsigned int k = rec->replay_turn;
	struct replay_result res;
	char why[512];
	size_t i;

	for (i = 0; i < rec->nr_batch; i++) {
		emit_outlier(rec->replay_emit, rec->batch[i]);
	}
	if (replay_start(rec->replay[k], &res, why, sizeof(why)) == 0) {
		ls_verbose("record: snapshot %s: %" PRIu64 " of latsnap's events recorded by %s into "
			   "replay session %u, each at its time (left out: %" PRIu64 " kernel "
			   "context events older than its buffers, %.3f, and %" PRIu64 " for room)",
			   id, res.recorded, REPLAY_HELPER_NAME, k, res.before,
			   (double)res.ready_ns / 1e9, res.room);
		if (session_snapshot_net(rec->session, (int)k, rec->opts.relay, path, "latsnap", why,
					 sizeof(why)) == 0) {
			why[0] = '\0';
		}
	}
	if (why[0]) {
		ls_err("record: snapshot %s to %s: latsnap's own events (kernel context, outliers) "
		       "are not in it: %s",
		       id, rec->opts.relay, why);
	}
	replay_next(rec, k);
	rec->replay_turn = (k + 1) % SESSION_MAX_REPLAY;
}

/*
 * snapshot_write_trace - OUTDIR/<id>/ and LTTng's snapshot of the ring buffer in it, as trace/,
 * with what latsnap keeps in memory (mappings, kernel context) put in the ring buffer first.
 */
static int snapshot_write_trace(struct recorder *rec, struct snap *sn)
{
	char path[PATH_MAX + 128];
	uint64_t lost;
	int err;

	make_id(rec, sn->id, sizeof(sn->id));
	if (mkdirat(rec->out_fd, sn->id, 0700)) {
		err = -errno;
		ls_err("record: %s/%s: %s", rec->out_path, sn->id, strerror(errno));
		return err;
	}
	sn->fd = openat(rec->out_fd, sn->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sn->fd < 0 || mkdirat(sn->fd, ".lttng", 0700)) {
		err = -errno;
		ls_err("record: %s/%s: %s", rec->out_path, sn->id, strerror(errno));
		return err;
	}
	snprintf(path, sizeof(path), "%s/%s/.lttng", rec->out_path, sn->id);
	emit_batch_mappings(rec);
	/* Filled from here on; written once LTTng's trace says what clock it is on. */
	rec->timeline = ctf_writer_new();
	if (rec->timeline) {
		timeline_emitter(rec->timeline);
	}
	if (rec->replay_emit) {
		/* For the relay: the same events, collected for this turn's latsnap-replay. */
		replay_clear(rec->replay[rec->replay_turn]);
		replay_ops(rec->replay[rec->replay_turn]);
	}
	if (rec->streaming) {
		emit_context(rec, sn->flags);
	}
	err = session_snapshot(rec->session, path);
	if (err == -ENOTCONN) {
		rec->session_gone = true;
		session_set_lost(rec->session);
		ls_err("record: lttng-sessiond is gone: no more snapshots; outliers are still "
		       "printed, and counted as skipped");
	}
	if (err) {
		return err;
	}
	sn->t_lttng = ls_now_ns();
	err = outtree_settle_trace_dir(sn->fd);
	if (err) {
		ls_err("record: %s/%s: the snapshot left no trace directory: %s", rec->out_path,
		       sn->id, strerror(-err));
		return err;
	}
	lost = session_lost_packets(rec->session);
	if (lost > rec->lost_packets) {
		add_flag(sn->flags,
			 "lost-packets: LTTng lost %" PRIu64 " packets since the previous snapshot",
			 lost - rec->lost_packets);
		rec->lost_packets = lost;
	}
	return 0;
}

/* The snapshot is complete: count it under the retention policy and say where it is. */
static void snapshot_kept(struct recorder *rec, struct snap *sn, int relay_err)
{
	size_t n = rec->nr_batch;

	outtree_give_tree(rec, sn->fd);
	if (!sn->pending.nr_causes) {
		retention_remember(&rec->retention, sn->items, n, &sn->pending);
	}
	/* Without a local copy the staging directory gives its space back at once. */
	retention_keep(&rec->retention, &sn->pending, sn->id,
		       rec->staging ? 0 : outtree_tree_bytes(sn->fd), outtree_realtime_ns());
	rec->totals.snapshots++;
	guard_taken(rec->guard, rec->batch, n, ls_now_ns());
	snprintf(rec->last_id, sizeof(rec->last_id), "%s", sn->id);
	rec->last_realtime_ns = outtree_realtime_ns();
	rec->skipped_since = 0;
	rec->last_snapshot_ns = ls_now_ns();
	if (rec->staging) {
		outtree_remove_tree(rec->out_fd, sn->id);
		fprintf(stderr, "latsnap: snapshot %s sent to %s: %zu outlier%s\n", sn->id,
			rec->opts.relay, n, n == 1 ? "" : "s");
	} else if (rec->opts.relay && !relay_err) {
		fprintf(stderr, "latsnap: snapshot %s sent to %s, kept in %s/%s: %zu outlier%s\n",
			sn->id, rec->opts.relay, rec->out_path, sn->id, n, n == 1 ? "" : "s");
	} else {
		fprintf(stderr, "latsnap: snapshot %s/%s: %zu outlier%s\n", rec->out_path, sn->id,
			n, n == 1 ? "" : "s");
	}
	ls_verbose("record: snapshot %s took %.1f ms: LTTng %.1f ms, reading it back %.1f ms, "
		   "summary %.1f ms, relay %.1f ms; %" PRIu64 " bytes",
		   sn->id, (ls_now_ns() - sn->t0) / 1e6, (sn->t_lttng - sn->t0) / 1e6,
		   (sn->t_read - sn->t_lttng) / 1e6, (ls_now_ns() - sn->t_read - sn->t_relay) / 1e6,
		   sn->t_relay / 1e6,
		   rec->retention.nr_kept ?
			   rec->retention.kept[rec->retention.nr_kept - 1].bytes :
			   0);
}

/* The snapshot could not be written: count its outliers as skipped, give its space back. */
static void snapshot_failed(struct recorder *rec, struct snap *sn)
{
	size_t n = rec->nr_batch;
	struct statvfs vfs;

	rec->skipped_since += n;
	rec->totals.skipped += n;
	rec->totals.failed++;
	if (sn->fd < 0) {
		return;
	}
	if (fstatvfs(sn->fd, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < (1 << 20)) {
		ls_err("record: %s: the file system is full: snapshot %s not kept, its %zu "
		       "outlier%s counted as skipped",
		       rec->out_path, sn->id, n, n == 1 ? "" : "s");
	}
	close(sn->fd);
	sn->fd = -1;
	/* Half a snapshot is no snapshot. */
	outtree_remove_tree(rec->out_fd, sn->id);
}

/* Empty the batch for the next snapshot. */
static void batch_reset(struct recorder *rec)
{
	size_t i;

	for (i = 0; i < rec->nr_batch; i++) {
		outlier_free(rec->batch[i]);
	}
	rec->nr_batch = 0;
	rec->batch_over = 0;
	tracker_release_exited(rec->tracker);
}

/*
 * recorder_snapshot - persist the batch: snapshot, read back, summary. A failure (disk full,
 * the directory gone) is reported for this snapshot only; earlier ones stay as they are.
 */
int recorder_snapshot(struct recorder *rec)
{
	struct snap sn = { .fd = -1, .t0 = ls_now_ns() };
	char trace[PATH_MAX + 160];
	int err = 0;

	if (!rec->nr_batch) {
		return 0;
	}
	if (rec->session_gone) {
		rec->skipped_since += rec->nr_batch;
		rec->totals.skipped += rec->nr_batch;
		goto out;
	}
	if (rec->streaming) {
		/* Outliers already in the ring buffer join this batch, and their context with it. */
		tracker_drain(rec->tracker);
	}
	if (!snapshot_admit(rec, &sn)) {
		goto out;
	}
	sn.flags = json_object_new_array();
	snapshot_start_flags(rec, &sn);
	err = snapshot_write_trace(rec, &sn);
	if (err) {
		goto failed;
	}
	snprintf(trace, sizeof(trace), "%s/%s/trace", rec->out_path, sn.id);
	read_back(rec, trace, &sn);
	write_timeline(rec, trace, &sn);
	sn.t_read = ls_now_ns();
	err = write_summary(rec, sn.fd, sn.id, sn.flags, rec->opts.relay ? &sn.json : NULL);
	if (err) {
		ls_err("record: %s/%s: summary: %s", rec->out_path, sn.id, strerror(-err));
		goto failed;
	}
	/* Each idle wait is in one summary: the next one lists those after it. */
	idle_window_reset(rec->opts.idle);
	guard_window_reset(rec->guard);
	if (rec->opts.relay) {
		sn.t_relay = ls_now_ns();
		err = send_to_relay(rec, sn.id, sn.json);
		sn.t_relay = ls_now_ns() - sn.t_relay;
		if (err && rec->staging) {
			goto failed;
		}
	}
	snapshot_kept(rec, &sn, err);
	/* As new ones are written, the old ones go. */
	outtree_expire_old(rec);
	err = 0;
	goto out;
failed:
	snapshot_failed(rec, &sn);
out:
	json_object_put(sn.flags);
	ctf_writer_free(rec->timeline);
	rec->timeline = NULL;
	retention_kept_free(&sn.pending);
	for (size_t i = 0; i < rec->nr_batch; i++) {
		free(sn.user_causes[i]);
	}
	free(sn.json);
	if (sn.fd >= 0) {
		close(sn.fd);
	}
	batch_reset(rec);
	return err;
}

/**
 * recorder_poll - take the snapshot whose post-trigger window has passed, unless the minimum
 * interval since the previous one holds it back (its outliers then wait and join it).
 * Return: the milliseconds until it is due, or -1 when nothing waits.
 */
int recorder_poll(struct recorder *rec)
{
	uint64_t now = ls_now_ns(), due;

	/* Without new snapshots too: a quiet service still ages its old ones out. */
	if (rec->retention.max_age_ns && now >= rec->next_age_check_ns) {
		outtree_expire_old(rec);
	}
	if (rec->nr_batch == 0) {
		return -1;
	}
	due = rec->batch_first_ns + rec->opts.post_ns;
	if (rec->last_snapshot_ns && rec->last_snapshot_ns + rec->opts.min_interval_ns > due) {
		due = rec->last_snapshot_ns + rec->opts.min_interval_ns;
	}
	if (now < due) {
		return (int)((due - now) / 1000000) + 1;
	}
	recorder_snapshot(rec);
	return -1;
}

/**
 * recorder_flush - persist what waits now, post window or not (at the end of a run).
 */
void recorder_flush(struct recorder *rec)
{
	recorder_snapshot(rec);
}

/**
 * recorder_totals() - what the recorder did so far, and what it keeps on disk now
 */
void recorder_totals(struct recorder *rec, struct recorder_totals *totals)
{
	*totals = rec->totals;
	guard_totals(rec->guard, &totals->guard);
	totals->kept = rec->retention.nr_kept;
	totals->kept_bytes = rec->retention.kept_bytes;
	snprintf(totals->last_id, sizeof(totals->last_id), "%s", rec->last_id);
	totals->last_realtime_ns = rec->last_realtime_ns;
}

/**
 * recorder_set_limits() - the retention limits and the snapshot timing of @opts, changed while
 * it runs (record's reload); the rest of @opts is not looked at
 *
 * Lower count or size limits apply at the next snapshot, a shorter age at once.
 */
void recorder_set_limits(struct recorder *rec, const struct recorder_opts *opts)
{
	rec->opts.post_ns = opts->post_ns;
	rec->opts.min_interval_ns = opts->min_interval_ns;
	rec->opts.max_snapshots = opts->max_snapshots;
	rec->opts.max_size = opts->max_size;
	rec->opts.max_age_ns = opts->max_age_ns;
	rec->retention.max_snapshots = opts->max_snapshots;
	rec->retention.max_size = opts->max_size;
	rec->retention.max_age_ns = opts->max_age_ns;
	rec->next_age_check_ns = 0;
	rec->opts.guard = opts->guard;
	guard_set_opts(rec->guard, &opts->guard);
}

/**
 * recorder_write_file() - write @name in the output directory, atomically (a temporary file
 * renamed over it, not fsync'd), never through a symlink: record's status.json
 *
 * Return: 0, -ENOENT when there is no output directory of latsnap's user (a relay without a
 * local copy), or -errno.
 */
int recorder_write_file(struct recorder *rec, const char *name, const char *text, size_t len)
{
	char tmp[128];
	int err;

	if (rec->staging || rec->out_fd < 0) {
		err = -ENOENT;
		goto out;
	}
	/* A temporary file a crash left behind would make every later write fail (O_EXCL). */
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	unlinkat(rec->out_fd, tmp, 0);
	/*
	 * Not fsync'd: the loop that calls this must get back to the ring at once. An fsync behind
	 * a busy disk held it 0.2-0.9 s as COMMAND started, and a process that exited meanwhile had
	 * its mappings never read (no latsnap:bin_info, its stacks unsymbolized). A file rewritten
	 * every few seconds loses nothing that matters in a crash.
	 */
	err = outtree_write_atomic(rec->out_fd, name, text, len, false);
	/* Like the snapshots, it belongs to the user who ran latsnap through sudo. */
	if (!err && rec->owner_uid != (uid_t)-1 &&
	    fchownat(rec->out_fd, name, rec->owner_uid, rec->owner_gid, AT_SYMLINK_NOFOLLOW)) {
		ls_verbose("record: %s: chown: %s", name, strerror(errno));
	}
out:
	return err;
}

/**
 * recorder_close - destroy the session (and the daemon latsnap started); safe on a partly
 * opened recorder. Pending outliers are not persisted: recorder_flush() first.
 */
void recorder_close(struct recorder *rec)
{
	unsigned int i;

	if (!rec) {
		return;
	}
	emit_close(rec->emit);
	emit_close(rec->replay_emit);
	for (i = 0; i < SESSION_MAX_REPLAY; i++) {
		replay_free(rec->replay[i]);
	}
	session_close(rec->session);
	if (rec->out_fd >= 0) {
		close(rec->out_fd);
	}
	if (rec->staging) {
		outtree_remove_tree(AT_FDCWD, rec->out_path);
	}
	for (i = 0; rec->batch && i < rec->nr_batch; i++) {
		outlier_free(rec->batch[i]);
	}
	free(rec->batch);
	retention_free(&rec->retention);
	guard_close(rec->guard);
	free(rec);
}
