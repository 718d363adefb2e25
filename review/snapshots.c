// SPDX-License-Identifier: GPL-2.0
/*
 * snapshots.c - read the snapshots of a directory: OUTDIR/<id>/summary.json, each read and
 * checked by lib/summary.c. A snapshot whose summary is missing is incomplete, one whose summary
 * the reader refuses is corrupt (with the first thing wrong in it), and the other snapshots are
 * still read.
 *
 * A wait reported while it still waited (record --hang) is in the summaries more than once;
 * snapshots_waits() gives report and flame each wait once, by the report of it that counts.
 *
 * A directory may also be an lttng-relayd output tree: HOST/SESSION/ID/ holding LTTng's trace
 * (trace-DATE-TIME-SEQ/) and latsnap's own (latsnap-DATE-TIME-SEQ/), or, as latsnap recorded it
 * before, HOST/SESSION-DATE-TIME/SNAPSHOT-DATE-TIME-SEQ/, the trace itself. There a snapshot is
 * the trace, and its summary is the latsnap:summary events the recorder put into it just before
 * recording it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "trace/ctf.h"
#include "trace/lsevents.h"
#include "classify/frames.h"
#include "lib/outlier.h"
#include "lib/summary.h"
#include "lib/util.h"
#include "review/snapshots.h"

/* How deep below the directory given a snapshot may be: lttng-relayd's HOST/SESSION/SNAPSHOT. */
#define RELAY_DEPTH 2
/* More parts than this is not a summary the recorder wrote. */
#define SUMMARY_PARTS_MAX 65536

/**
 * snapshots_is_glue_frame() - whether a kernel frame is BPF tracing glue, not the thread's own
 *
 * bpf_get_task_stack() from the sched_switch program returns the trampoline and tracepoint
 * frames on top of some stacks (PLATFORM.md): they say where latsnap looked, not where the
 * thread waited, and would split one wait into several stacks in a flame graph.
 */
bool snapshots_is_glue_frame(const struct outlier_frame *frame)
{
	return frames_is_tracing_glue(frame->symbol, frame->module);
}

/**
 * snapshots_kernel_skip() - how many innermost frames of a kernel stack are BPF glue
 * @frames: a kernel stack, innermost first
 */
size_t snapshots_kernel_skip(const struct outlier_frames *frames)
{
	size_t i;

	for (i = 0; i < frames->nr && snapshots_is_glue_frame(&frames->v[i]); i++) {
	}
	/* A stack that is nothing but glue keeps its frames: better than none. */
	return i == frames->nr ? 0 : i;
}

/* Reads @path whole (a regular file, not through a symlink, at most the summary limit). */
static int read_file(const char *path, char **text, size_t *len, char *why, size_t whylen)
{
	struct stat st;
	char *buf = NULL;
	size_t done = 0;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = -EBADMSG;
		snprintf(why, whylen, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > SUMMARY_MAX) {
		ret = -EBADMSG;
		snprintf(why, whylen, "%s: larger than %u MiB", path, SUMMARY_MAX >> 20);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(why, whylen, "%s: %s", path, strerror(ENOMEM));
		goto out;
	}
	while (done < (size_t)st.st_size) {
		n = read(fd, buf + done, (size_t)st.st_size - done);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ret = -errno;
			snprintf(why, whylen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0) {
			break;
		}
		done += (size_t)n;
	}
	buf[done] = '\0';
	*text = buf;
	*len = done;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0) {
		close(fd);
	}
	return ret;
}

/* Does @path hold a CTF trace as lttng-relayd writes one (ust/ or kernel/ in it)? */
static bool is_relay_trace(const char *path)
{
	char sub[4200];
	struct stat st;

	snprintf(sub, sizeof(sub), "%s/ust", path);
	if (!lstat(sub, &st) && S_ISDIR(st.st_mode)) {
		return true;
	}
	snprintf(sub, sizeof(sub), "%s/kernel", path);
	return !lstat(sub, &st) && S_ISDIR(st.st_mode);
}

/*
 * Does @path hold a snapshot as latsnap sends it to lttng-relayd: LTTng's trace as a
 * directory trace-DATE-TIME-SEQ (and latsnap's own beside it)?
 */
static bool is_relay_snapshot(const char *path)
{
	bool found = false;
	struct dirent *de;
	char sub[4200];
	DIR *d;

	d = opendir(path);
	if (!d) {
		return false;
	}
	while (!found && (de = readdir(d))) {
		if (strncmp(de->d_name, "trace-", strlen("trace-"))) {
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		found = is_relay_trace(sub);
	}
	closedir(d);
	return found;
}

/* The latsnap:summary events of one snapshot id found in a trace. */
struct relay_summary {
	char *id;
	uint32_t parts, got;
	char **text;
	size_t *len;
};

struct relay_read {
	struct relay_summary *sums;
	size_t nr;
	int err;
};

static int on_summary(const struct ctf_event *ev, void *ctx)
{
	struct relay_read *rr = ctx;
	struct relay_summary *sum = NULL, *grown;
	struct lsev decoded;
	const struct lsev_summary *part_ev = &decoded.u.summary;
	const char *id;
	uint32_t part, parts;
	size_t i;

	lsev_decode(ev, &decoded);
	id = part_ev->id;
	part = part_ev->part;
	parts = part_ev->parts;
	if (decoded.kind != LSEV_SUMMARY || !*id || !*part_ev->json || parts < 1 ||
	    parts > SUMMARY_PARTS_MAX || part >= parts) {
		return 0;
	}
	for (i = 0; i < rr->nr; i++) {
		if (!strcmp(rr->sums[i].id, id) && rr->sums[i].parts == (uint32_t)parts) {
			sum = &rr->sums[i];
			break;
		}
	}
	if (!sum) {
		grown = realloc(rr->sums, (rr->nr + 1) * sizeof(*grown));
		if (!grown) {
			rr->err = -ENOMEM;
			return rr->err;
		}
		rr->sums = grown;
		sum = &rr->sums[rr->nr];
		memset(sum, 0, sizeof(*sum));
		sum->id = strdup(id);
		sum->parts = (uint32_t)parts;
		sum->text = calloc((size_t)parts, sizeof(*sum->text));
		sum->len = calloc((size_t)parts, sizeof(*sum->len));
		rr->nr++;
		if (!sum->id || !sum->text || !sum->len) {
			rr->err = -ENOMEM;
			return rr->err;
		}
	}
	if (!sum->text[part]) {
		sum->len[part] = strlen(part_ev->json);
		sum->text[part] = malloc(sum->len[part] + 1);
		if (!sum->text[part]) {
			rr->err = -ENOMEM;
			return rr->err;
		}
		memcpy(sum->text[part], part_ev->json, sum->len[part] + 1);
		sum->got++;
	}
	return 0;
}

/**
 * snapshots_parse_summary() - summary_parse() of a snapshot's summary: the contract, strictly
 *
 * Return: 0, -EBADMSG or -ENOMEM, as summary_parse().
 */
int snapshots_parse_summary(const char *text, size_t len, const char *name, struct summary **out,
			    char *why, size_t whylen)
{
	return summary_parse(text, len, name, SUMMARY_STRICT, out, why, whylen);
}

/*
 * settle_summary - parse the summary text of @snap (read from @file) and set its state: complete,
 * or corrupt with why. Returns -ENOMEM only; a bad summary is a state, not an error.
 */
static int settle_summary(struct snapshot *snap, const char *text, size_t len, const char *file)
{
	int err = snapshots_parse_summary(text, len, file, &snap->summary, snap->why,
					  sizeof(snap->why));

	if (err == -ENOMEM) {
		return err;
	}
	snap->state = err ? SNAPSHOT_CORRUPT : SNAPSHOT_COMPLETE;
	if (!err) {
		snap->why[0] = '\0';
	}
	return 0;
}

/*
 * The summary of the relay snapshot @snap from its trace's latsnap:summary events. A trace holds
 * the summaries of earlier snapshots too (the ring buffer is not emptied): the one whose relay
 * name begins the directory's name is its own, else the last one complete.
 */
static int load_relay_summary(struct snapshot *snap)
{
	struct relay_read rr = { 0 };
	struct relay_summary *own = NULL;
	char name[128], file[4200], *text = NULL;
	size_t i, j, len = 0, nlen;
	int ret = 0, err;

	err = ctf_read(snap->trace, LSEV_NAME_SUMMARY, on_summary, &rr);
	if (rr.err == -ENOMEM || err == -ENOMEM) {
		ret = -ENOMEM;
		goto out;
	}
	if (err) {
		snap->state = SNAPSHOT_CORRUPT;
		snprintf(snap->why, sizeof(snap->why), "%s: the trace cannot be read: %s",
			 snap->trace, strerror(-err));
		goto out;
	}
	for (i = 0; i < rr.nr; i++) {
		ls_relay_name(rr.sums[i].id, name, sizeof(name));
		nlen = strlen(name);
		if (!strncmp(snap->id, name, nlen) && (snap->id[nlen] == '-' || !snap->id[nlen])) {
			own = &rr.sums[i];
		}
	}
	for (i = rr.nr; !own && i-- > 0;) {
		if (rr.sums[i].got == rr.sums[i].parts) {
			own = &rr.sums[i];
		}
	}
	if (!own) {
		snap->state = SNAPSHOT_INCOMPLETE;
		snprintf(snap->why, sizeof(snap->why),
			 "%s: no summary.json and no latsnap:summary event in the trace",
			 snap->path);
		goto out;
	}
	if (own->got < own->parts) {
		snap->state = SNAPSHOT_INCOMPLETE;
		snprintf(
			snap->why, sizeof(snap->why),
			"%s: latsnap:summary of %s: %u of its %u parts in the trace (the ring buffer "
			"overwrote the rest)",
			snap->path, own->id, own->got, own->parts);
		goto out;
	}
	for (j = 0; j < own->parts; j++) {
		len += own->len[j];
	}
	text = malloc(len + 1);
	if (!text) {
		ret = -ENOMEM;
		goto out;
	}
	for (j = 0, len = 0; j < own->parts; j++) {
		memcpy(text + len, own->text[j], own->len[j]);
		len += own->len[j];
	}
	text[len] = '\0';
	snprintf(file, sizeof(file), "%s (latsnap:summary of %s)", snap->path, own->id);
	ret = settle_summary(snap, text, len, file);
out:
	free(text);
	for (i = 0; i < rr.nr; i++) {
		for (j = 0; rr.sums[i].text && j < rr.sums[i].parts; j++) {
			free(rr.sums[i].text[j]);
		}
		free(rr.sums[i].text);
		free(rr.sums[i].len);
		free(rr.sums[i].id);
	}
	free(rr.sums);
	return ret;
}

/* The trace the summary of @snap names in the snapshot: summary.json sends us nowhere else. */
static int summary_trace(struct snapshot *snap)
{
	char dir[4096];

	if (strchr(snap->summary->trace, '/')) {
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/%s", snap->path, snap->summary->trace);
	return outlier_set_str(&snap->trace, dir);
}

/* The host directory lttng-relayd filed @path under: HOST/SESSION/SNAPSHOT. */
static char *relay_host_of(const char *path)
{
	char copy[4096], *slash;
	int up;

	snprintf(copy, sizeof(copy), "%s", path);
	for (up = 0; up < 2; up++) {
		slash = strrchr(copy, '/');
		if (!slash) {
			return NULL;
		}
		*slash = '\0';
	}
	slash = strrchr(copy, '/');
	return strdup(slash ? slash + 1 : copy);
}

/**
 * snapshot_load() - read one snapshot directory
 * @path: OUTDIR/<id>
 * @snap: filled; snapshot_free() it whatever the result
 *
 * An incomplete or corrupt snapshot is not an error of this function: @snap->state and
 * @snap->why say what it is.
 *
 * Return: 0, or -ENOMEM.
 */
int snapshot_load(const char *path, struct snapshot *snap)
{
	char file[4096];
	const char *base;
	char *text = NULL;
	size_t len = 0;
	int ret = 0, err;

	memset(snap, 0, sizeof(*snap));
	/* "DIR/ID/" names ID: drop trailing slashes. */
	snap->path = strdup(path);
	if (!snap->path) {
		ret = -ENOMEM;
		goto out;
	}
	while (strlen(snap->path) > 1 && snap->path[strlen(snap->path) - 1] == '/') {
		snap->path[strlen(snap->path) - 1] = '\0';
	}
	base = strrchr(snap->path, '/');
	snap->id = strdup(base ? base + 1 : snap->path);
	if (!snap->id) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(file, sizeof(file), "%s/summary.json", snap->path);
	if (access(file, F_OK) && (is_relay_trace(snap->path) || is_relay_snapshot(snap->path))) {
		snap->relay = true;
		snap->trace = strdup(snap->path);
		if (!snap->trace) {
			ret = -ENOMEM;
			goto out;
		}
		ret = load_relay_summary(snap);
		goto out;
	}
	snprintf(file, sizeof(file), "%s/trace", snap->path);
	snap->trace = strdup(file);
	if (!snap->trace) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(file, sizeof(file), "%s/summary.json", snap->path);
	err = read_file(file, &text, &len, snap->why, sizeof(snap->why));
	if (err == -ENOENT) {
		snap->state = SNAPSHOT_INCOMPLETE;
		snprintf(snap->why, sizeof(snap->why), "%s: missing: the snapshot is incomplete",
			 file);
		goto out;
	}
	if (err == -ENOMEM) {
		ret = err;
		goto out;
	}
	if (err) {
		snap->state = SNAPSHOT_CORRUPT;
		goto out;
	}
	ret = settle_summary(snap, text, len, file);
	if (!ret && snap->summary && snap->summary->trace) {
		ret = summary_trace(snap);
	}
out:
	free(text);
	if (!ret && snap->summary) {
		snap->host = strdup(snap->summary->host);
	} else if (!ret && snap->relay) {
		snap->host = relay_host_of(snap->path);
	}
	return ret;
}

/**
 * snapshot_free() - release what snapshot_load() filled in
 */
void snapshot_free(struct snapshot *snap)
{
	if (!snap) {
		return;
	}
	free(snap->id);
	free(snap->path);
	free(snap->trace);
	free(snap->host);
	summary_free(snap->summary);
	memset(snap, 0, sizeof(*snap));
}

static int cmp_snap(const void *a, const void *b)
{
	return strcmp(((const struct snapshot *)a)->id, ((const struct snapshot *)b)->id);
}

/*
 * Is @path a directory of snapshots rather than one: lttng-relayd's HOST or SESSION directory?
 * It holds none of a snapshot's own names, and at least one directory.
 */
static bool is_container(const char *path)
{
	static const char *const own[] = { "summary.json", "summary.txt", "trace", ".lttng" };
	bool ret = false;
	struct dirent *de;
	char sub[4200];
	struct stat st;
	size_t i;
	DIR *d;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, own[i]);
		if (!lstat(sub, &st)) {
			return false;
		}
	}
	if (is_relay_trace(path) || is_relay_snapshot(path)) {
		return false;
	}
	d = opendir(path);
	if (!d) {
		return false;
	}
	while (!ret && (de = readdir(d))) {
		ret = de->d_name[0] != '.' &&
		      !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		      S_ISDIR(st.st_mode);
	}
	closedir(d);
	return ret;
}

/* The snapshots under @dir into @set, descending into lttng-relayd's HOST/SESSION levels. */
static int load_dir(struct snapshot_set *set, const char *dir, int depth, size_t *cap)
{
	struct snapshot *grown;
	struct dirent *de;
	struct stat st;
	char path[4096];
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		ret = -errno;
		ls_err("%s: %s", dir, strerror(errno));
		goto out;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.') {
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode)) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (depth < RELAY_DEPTH && is_container(path)) {
			ret = load_dir(set, path, depth + 1, cap);
			if (ret) {
				goto out;
			}
			continue;
		}
		if (set->nr == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			grown = realloc(set->snaps, *cap * sizeof(*set->snaps));
			if (!grown) {
				ret = -ENOMEM;
				ls_err("%s: %s", dir, strerror(ENOMEM));
				goto out;
			}
			set->snaps = grown;
		}
		ret = snapshot_load(path, &set->snaps[set->nr]);
		set->nr++;
		if (ret) {
			ls_err("%s: %s", path, strerror(-ret));
			goto out;
		}
	}
out:
	if (d) {
		closedir(d);
	}
	return ret;
}

/**
 * snapshots_filter_host() - keep only the snapshots recorded on @host (NULL: all)
 */
void snapshots_filter_host(struct snapshot_set *set, const char *host)
{
	size_t i, kept = 0;

	if (!host) {
		return;
	}
	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].host && !strcmp(set->snaps[i].host, host)) {
			set->snaps[kept++] = set->snaps[i];
		} else {
			snapshot_free(&set->snaps[i]);
		}
	}
	set->nr = kept;
}

/**
 * snapshots_load() - read every snapshot of a directory
 * @dir: an OUTDIR (its subdirectories are the snapshots), an lttng-relayd output tree (or one
 *	host's or one session's part of it), or one snapshot directory itself (one that holds
 *	summary.json or trace/, or a relay snapshot's trace)
 * @set: filled, sorted by id; snapshots_free() it whatever the result
 *
 * Hidden entries, files and symbolic links in @dir are not snapshots and are passed over. An
 * empty set is not an error here: the caller says so.
 *
 * Return: 0, or a negative errno after one "latsnap: DIR: why" line.
 */
int snapshots_load(const char *dir, struct snapshot_set *set)
{
	struct stat st;
	char path[4096];
	size_t cap = 0;
	int ret = 0;

	memset(set, 0, sizeof(*set));
	set->dir = strdup(dir);
	if (!set->dir) {
		ret = -ENOMEM;
		ls_err("%s: %s", dir, strerror(ENOMEM));
		goto out;
	}
	if (stat(dir, &st)) {
		ret = -errno;
		ls_err("%s: %s", dir, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = -ENOTDIR;
		ls_err("%s: not a directory", dir);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	if (!access(path, F_OK) || is_relay_trace(dir) ||
	    (snprintf(path, sizeof(path), "%s/trace", dir) > 0 && !access(path, F_OK))) {
		/* One snapshot given directly. */
		set->snaps = calloc(1, sizeof(*set->snaps));
		if (!set->snaps) {
			ret = -ENOMEM;
			ls_err("%s: %s", dir, strerror(ENOMEM));
			goto out;
		}
		set->nr = 1;
		ret = snapshot_load(dir, &set->snaps[0]);
		if (ret) {
			ls_err("%s: %s", dir, strerror(-ret));
		}
		goto out;
	}
	ret = load_dir(set, dir, 0, &cap);
	if (ret) {
		goto out;
	}
	if (set->nr > 1) {
		ls_sort(set->snaps, set->nr, sizeof(*set->snaps), cmp_snap);
	}
out:
	return ret;
}

/**
 * snapshots_free() - release a set filled by snapshots_load()
 */
void snapshots_free(struct snapshot_set *set)
{
	size_t i;

	if (!set) {
		return;
	}
	for (i = 0; i < set->nr; i++) {
		snapshot_free(&set->snaps[i]);
	}
	free(set->snaps);
	free(set->dir);
	memset(set, 0, sizeof(*set));
}

/* --- one wait, counted once ---------------------------------------------------------------- */

/**
 * snapshots_is_deadlock() - is @o's thread in a deadlock? Its "deadlock" (an older summary's
 * cause beginning "Deadlock" reads as one): a rule's cause that begins so is not one.
 */
bool snapshots_is_deadlock(const struct outlier *o)
{
	return o->deadlock != NULL;
}

/* One report read, and where: @pos orders the reports as the summaries do. */
struct wait_report {
	const struct snapshot *snap;
	const char *host;
	const struct outlier *o;
	size_t pos;
	enum outlier_state state;
	bool repeat; /* another report of the same wait counts instead */
	const struct outlier_holder *holder;
	unsigned int reports;
	bool stalled;
};

static int cmp_wait_key(const struct wait_report *x, const struct wait_report *y)
{
	int c = strcmp(x->host, y->host);

	if (c) {
		return c;
	}
	if (x->o->pid != y->o->pid) {
		return x->o->pid < y->o->pid ? -1 : 1;
	}
	if (x->o->tid != y->o->tid) {
		return x->o->tid < y->o->tid ? -1 : 1;
	}
	if (x->o->start_ns != y->o->start_ns) {
		return x->o->start_ns < y->o->start_ns ? -1 : 1;
	}
	/* A request is never a report of a wait of its thread that started with it. */
	if ((x->o->kind == OUTLIER_REQUEST) != (y->o->kind == OUTLIER_REQUEST)) {
		return x->o->kind == OUTLIER_REQUEST ? 1 : -1;
	}
	return 0;
}

/* By wait, each wait's reports in the summaries' order. */
static int cmp_wait_report(const void *a, const void *b)
{
	const struct wait_report *x = *(const struct wait_report *const *)a;
	const struct wait_report *y = *(const struct wait_report *const *)b;
	int c = cmp_wait_key(x, y);

	return c ? c : x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Does report @x count rather than @y, of the same wait? */
static bool counts_before(const struct wait_report *x, const struct wait_report *y)
{
	static const int rank[] = {
		[OUTLIER_ENDED] = 2,
		[OUTLIER_UNFINISHED] = 1,
		[OUTLIER_STILL_BLOCKED] = 0,
	};

	if (rank[x->state] != rank[y->state]) {
		return rank[x->state] > rank[y->state];
	}
	if (x->o->duration_ns != y->o->duration_ns) {
		return x->o->duration_ns > y->o->duration_ns;
	}
	if (x->o->end_ns != y->o->end_ns) {
		return x->o->end_ns > y->o->end_ns;
	}
	return x->pos > y->pos;
}

/*
 * The reports @v[@from..@to) of one wait: the one that counts gets what the others say of it,
 * the others are repeats. Only a wait with a stall report among them is one reported more than
 * once: any other outliers that happen to share a thread and start are left as they were.
 */
static void settle_wait(struct wait_report **v, size_t from, size_t to)
{
	struct wait_report *best = v[from];
	bool stall = false;
	size_t k;

	for (k = from; k < to; k++) {
		stall = stall || v[k]->state != OUTLIER_ENDED;
	}
	if (!stall || to - from < 2) {
		return;
	}
	for (k = from + 1; k < to; k++) {
		if (counts_before(v[k], best)) {
			best = v[k];
		}
	}
	best->stalled = true;
	best->reports = (unsigned int)(to - from);
	/* The reports are in the summaries' order: the last one naming a holder is the latest. */
	for (k = from; k < to; k++) {
		if (v[k] != best) {
			v[k]->repeat = true;
			if (!best->o->holder && v[k]->o->holder) {
				best->holder = v[k]->o->holder;
			}
		}
	}
}

/* The waits of the reports @r (@nr of them, in the summaries' order) into *@waits. */
static int collect_waits(struct wait_report *r, size_t nr, struct snapshot_wait **waits,
			 size_t *nr_waits)
{
	struct wait_report **by_wait = NULL;
	struct snapshot_wait *w = NULL;
	size_t i, from, n = 0;
	bool any_stall = false;
	int ret = -ENOMEM;

	for (i = 0; i < nr; i++) {
		r[i].pos = i;
		r[i].state = r[i].o->state;
		r[i].holder = r[i].o->holder;
		r[i].reports = 1;
		r[i].stalled = r[i].state != OUTLIER_ENDED || snapshots_is_deadlock(r[i].o);
		any_stall = any_stall || r[i].state != OUTLIER_ENDED;
	}
	if (any_stall) {
		by_wait = malloc(nr * sizeof(*by_wait));
		if (!by_wait) {
			goto out;
		}
		for (i = 0; i < nr; i++) {
			by_wait[i] = &r[i];
		}
		ls_sort(by_wait, nr, sizeof(*by_wait), cmp_wait_report);
		for (from = 0, i = 1; i <= nr; i++) {
			if (i == nr || cmp_wait_key(by_wait[from], by_wait[i])) {
				settle_wait(by_wait, from, i);
				from = i;
			}
		}
	}
	w = calloc(nr ? nr : 1, sizeof(*w));
	if (!w) {
		goto out;
	}
	for (i = 0; i < nr; i++) {
		if (r[i].repeat) {
			continue;
		}
		w[n++] = (struct snapshot_wait){
			.snap = r[i].snap,
			.o = r[i].o,
			.holder = r[i].holder,
			.reports = r[i].reports,
			.stalled = r[i].stalled,
		};
	}
	*waits = w;
	*nr_waits = n;
	w = NULL;
	ret = 0;
out:
	free(w);
	free(by_wait);
	return ret;
}

/**
 * snapshots_waits() - the waits of the complete snapshots of a set, each counted once
 * @set: the snapshots
 * @waits: receives the waits (free() it; they point into @set), in the summaries' order (a wait
 *	reported more than once where the report that counts is)
 * @nr: receives their number
 *
 * A wait reported more than once (see struct snapshot_wait) is one wait: what report and flame
 * count. Any other outlier is a wait of its own, as it always was.
 *
 * Return: 0 or -ENOMEM.
 */
int snapshots_waits(const struct snapshot_set *set, struct snapshot_wait **waits, size_t *nr)
{
	struct wait_report *r;
	size_t i, j, n = 0;
	const struct summary *s;
	int ret;

	*waits = NULL;
	*nr = 0;
	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state == SNAPSHOT_COMPLETE) {
			n += set->snaps[i].summary->nr_outliers;
		}
	}
	r = calloc(n ? n : 1, sizeof(*r));
	if (!r) {
		return -ENOMEM;
	}
	for (i = 0, n = 0; i < set->nr; i++) {
		if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
			continue;
		}
		s = set->snaps[i].summary;
		for (j = 0; j < s->nr_outliers; j++, n++) {
			r[n].snap = &set->snaps[i];
			r[n].host = set->snaps[i].host ? set->snaps[i].host : "";
			r[n].o = s->outliers[j];
		}
	}
	ret = collect_waits(r, n, waits, nr);
	free(r);
	return ret;
}

/**
 * summary_waits() - snapshots_waits() of one summary (the waits' @snap is NULL)
 */
int summary_waits(const struct summary *s, struct snapshot_wait **waits, size_t *nr)
{
	struct wait_report *r;
	size_t j;
	int ret;

	*waits = NULL;
	*nr = 0;
	r = calloc(s->nr_outliers ? s->nr_outliers : 1, sizeof(*r));
	if (!r) {
		return -ENOMEM;
	}
	for (j = 0; j < s->nr_outliers; j++) {
		r[j].host = "";
		r[j].o = s->outliers[j];
	}
	ret = collect_waits(r, s->nr_outliers, waits, nr);
	free(r);
	return ret;
}

/* --- idle waits, summed over the snapshots -------------------------------------------------- */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/* One idle entry read, and where: @pos orders the entries as the snapshots (by time) do. */
struct idle_report {
	const char *host;
	const struct summary_idle *e;
	size_t pos;
};

static int cmp_idle_key(const struct idle_report *x, const struct idle_report *y)
{
	int c = strcmp(x->host, y->host);

	if (c) {
		return c;
	}
	if (x->e->pid != y->e->pid) {
		return x->e->pid < y->e->pid ? -1 : 1;
	}
	if (x->e->tid != y->e->tid) {
		return x->e->tid < y->e->tid ? -1 : 1;
	}
	return strcmp(x->e->site, y->e->site);
}

/* By thread and place, each one's entries in the snapshots' order. */
static int cmp_idle_report(const void *a, const void *b)
{
	const struct idle_report *x = a, *y = b;
	int c = cmp_idle_key(x, y);

	return c ? c : x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Largest total first; ties in a fixed order, so that the output does not depend on the sort. */
static int cmp_idle_total(const void *a, const void *b)
{
	const struct snapshot_idle *x = a, *y = b;
	int c;

	if (x->total_ns != y->total_ns) {
		return x->total_ns > y->total_ns ? -1 : 1;
	}
	if (x->count != y->count) {
		return x->count > y->count ? -1 : 1;
	}
	c = strcmp(x->host, y->host);
	if (c) {
		return c;
	}
	if (x->pid != y->pid) {
		return x->pid < y->pid ? -1 : 1;
	}
	if (x->tid != y->tid) {
		return x->tid < y->tid ? -1 : 1;
	}
	return strcmp(x->site, y->site);
}

/**
 * snapshots_idle() - the idle waits of the complete snapshots of a set, by thread and place
 * @set: the snapshots (sorted by id, that is by time, as snapshots_load() leaves them)
 * @idle: receives the rows (free() it; their strings point into @set), largest total first
 * @nr: receives their number
 *
 * Each snapshot's "idle" list holds the idle waits that ended since the previous snapshot of
 * its run, so a thread's waits at a place are the sum of its entries over the snapshots. The
 * key is (host, pid, tid, site): pids are per host, and a thread may wait for work at more
 * than one place. A row's comm is the latest (a thread may rename itself).
 *
 * Return: 0 or -ENOMEM.
 */
int snapshots_idle(const struct snapshot_set *set, struct snapshot_idle **idle, size_t *nr)
{
	struct snapshot_idle *v = NULL, *row = NULL;
	struct idle_report *r;
	const struct summary *s;
	size_t i, j, n = 0, k = 0;

	*idle = NULL;
	*nr = 0;
	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state == SNAPSHOT_COMPLETE) {
			n += set->snaps[i].summary->nr_idle;
		}
	}
	r = calloc(n ? n : 1, sizeof(*r));
	v = calloc(n ? n : 1, sizeof(*v));
	if (!r || !v) {
		free(r);
		free(v);
		return -ENOMEM;
	}
	for (i = 0, n = 0; i < set->nr; i++) {
		if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
			continue;
		}
		s = set->snaps[i].summary;
		for (j = 0; j < s->nr_idle; j++, n++) {
			r[n].host = set->snaps[i].host ? set->snaps[i].host : "";
			r[n].e = &s->idle[j];
			r[n].pos = n;
		}
	}
	if (n > 1) {
		ls_sort(r, n, sizeof(*r), cmp_idle_report);
	}
	for (i = 0; i < n; i++) {
		if (!i || cmp_idle_key(&r[i - 1], &r[i])) {
			row = &v[k++];
			row->host = r[i].host;
			row->pid = r[i].e->pid;
			row->tid = r[i].e->tid;
			row->site = r[i].e->site;
		}
		row->comm = r[i].e->comm;
		row->count = sat_add(row->count, r[i].e->count);
		row->total_ns = sat_add(row->total_ns, r[i].e->total_ns);
	}
	free(r);
	if (k > 1) {
		ls_sort(v, k, sizeof(*v), cmp_idle_total);
	}
	*idle = v;
	*nr = k;
	return 0;
}

/**
 * snapshots_state_name() - "complete", "incomplete" or "corrupt"
 */
const char *snapshots_state_name(enum snapshot_state state)
{
	switch (state) {
	case SNAPSHOT_COMPLETE:
		return "complete";
	case SNAPSHOT_INCOMPLETE:
		return "incomplete";
	case SNAPSHOT_CORRUPT:
		return "corrupt";
	}
	return "?";
}

/**
 * snapshots_option_error() - say what getopt_long() found wrong, as record does
 * @cmd: the command's name
 * @id: what getopt_long() returned: '?' (unknown option) or ':' (missing value)
 * @opt: optopt
 * @argv: the command's argv
 * @optind: optind after the call
 */
void snapshots_option_error(const char *cmd, int id, int opt, char **argv, int optind)
{
	if (id == ':') {
		ls_err("%s: option '%s' needs a value", cmd, argv[optind - 1]);
	} else if (opt && opt < 256) {
		ls_err("%s: unknown option '-%c' (see latsnap %s --help)", cmd, opt, cmd);
	} else {
		ls_err("%s: unknown option '%s' (see latsnap %s --help)", cmd, argv[optind - 1],
		       cmd);
	}
}
