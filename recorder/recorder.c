// SPDX-License-Identifier: GPL-2.0
/*
 * recorder.c - around each outlier, save LTTng's in-memory ring buffers to OUTDIR/<id>/trace
 * and write the summary beside them.
 *
 * Outliers wait in a batch for the post-trigger window (so the snapshot holds what followed);
 * those arriving meanwhile join it. Limits (count, size, minimum interval) decide what is kept:
 * a batch that brings no new cause and no new worst case is skipped once the limits are
 * reached, and the oldest snapshot without a first or worst case makes room for one that does.
 * What they leave out is counted, never dropped silently.
 *
 * With a relay daemon (-o net://...), each snapshot is taken locally first, since its summary is
 * read back from it, then its summary goes into the ring buffer as latsnap:summary events and
 * the snapshot is recorded again, to the relay: the trace there carries its own summary. The
 * local copy stays only with --keep-local.
 *
 * The output tree is reached through a directory descriptor opened without following symlinks,
 * and every name in it is created with *at() calls that refuse them.
 */
#include <dirent.h>
#include <errno.h>
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

#include "recorder/chain.h"
#include "trace/ctf.h"
#include "recorder/emit.h"
#include "lib/ojson.h"
#include "recorder/recorder.h"
#include "recorder/session.h"
#include "tracker/tracker.h"
#include "lib/util.h"

#define MAX_KEPT 4096
/*
 * Outliers one snapshot holds. Each costs tens of kB as JSON (its frames), so a storm of
 * thousands a second would otherwise grow latsnap by hundreds of MB before its snapshot.
 */
#define MAX_BATCH 1024
/* A latsnap:summary event carries at most this much of the summary (and half a sub-buffer). */
#define SUMMARY_PART_MAX 65536
/*
 * The kernel context a snapshot takes: from this long before its oldest outlier's start (what
 * show's timeline puts before it, and the state each thread of a wait chain was in as the wait
 * began) to now.
 */
#define CTX_MARGIN_NS (50 * 1000000ull)

/* What a kept snapshot holds of one cause: its longest outlier, and whether it was the first. */
struct kept_cause {
	char *cause;
	uint64_t worst_ns;
	bool first;
};

struct kept {
	char id[64];
	uint64_t bytes;
	struct kept_cause *causes;
	unsigned int nr_causes;
};

/* The first and the worst (longest) outlier persisted for one cause. */
struct cause_seen {
	char *cause;
	uint64_t worst_ns;
};

struct recorder {
	struct recorder_opts opts;
	struct session *session;
	struct emit *emit; /* NULL when liblatsnap-events.so could not be loaded: */
	char emit_why[256]; /* why */
	struct tracker *tracker;
	int out_fd;
	char out_path[PATH_MAX];
	bool staging; /* out_path is latsnap's own, removed at the end (relay without a local copy) */
	struct json_object *batch; /* outliers waiting for the post window */
	uint64_t batch_first_ns; /* monotonic time the first of them arrived */
	uint64_t last_snapshot_ns;
	uint64_t skipped_since; /* outliers no snapshot covers, since the previous snapshot */
	uint64_t batch_over; /* of those, outliers that came when the batch held MAX_BATCH */
	uint64_t lost_packets;
	bool streaming; /* the BPF side streams the kernel context into the session */
	bool session_gone; /* the session daemon died: outliers are printed, not persisted */
	uid_t owner_uid; /* who gets what latsnap writes (sudo's caller), or -1 */
	gid_t owner_gid;
	unsigned int seq;
	struct kept kept[MAX_KEPT];
	unsigned int nr_kept;
	uint64_t kept_bytes;
	struct cause_seen *causes;
	unsigned int nr_causes;
	struct recorder_totals totals;
};


/*
 * The output directory: created 0700 when missing, never through a symlink. An existing one is
 * used as it is, provided it is a directory and not a link to one.
 */
static int open_output(const char *path, char *abs, size_t abs_size, uid_t uid, gid_t gid)
{
	bool created = true;
	struct stat st;
	int fd;

	if (mkdir(path, 0700)) {
		if (errno != EEXIST) {
			ls_err("record: %s: %s", path, strerror(errno));
			return -errno;
		}
		created = false;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		ls_err("record: %s: %s", path,
		       err == ELOOP || err == ENOTDIR ? "not a directory (a symlink is refused)" :
							strerror(err));
		return -err;
	}
	/*
	 * The session daemon writes into it by path: a directory someone else may rename entries
	 * of would let them swap a snapshot directory for a symlink under it.
	 */
	if (fstat(fd, &st) == 0 && ((st.st_uid != geteuid() && st.st_uid != uid) ||
				    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))) {
		ls_err("record: %s: %s: another user could swap a snapshot directory for a symlink "
		       "(use a directory of your own)",
		       path,
		       st.st_uid != geteuid() && st.st_uid != uid ? "owned by another user" :
								      "writable by others");
		close(fd);
		return -EPERM;
	}
	/* Only what latsnap made is given away: never a directory the user named that existed. */
	if (created && uid != (uid_t)-1 && fchown(fd, uid, gid)) {
		ls_verbose("record: %s: chown to %d:%d: %s", path, (int)uid, (int)gid,
			   strerror(errno));
	}
	if (!realpath(path, abs)) {
		snprintf(abs, abs_size, "%s", path);
	}
	return fd;
}

/*
 * sudo_owner - the user who ran latsnap through sudo (SUDO_UID, SUDO_GID), when latsnap runs as
 * root: the files it writes are theirs. Otherwise -1 (the files are the caller's anyway).
 */
static void sudo_owner(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	unsigned long n, m;
	char *end;

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (getuid() != 0 || !u || !g || !*u || !*g) {
		return;
	}
	errno = 0;
	n = strtoul(u, &end, 10);
	if (errno || *end || n == 0 || n >= (uid_t)-1) {
		return;
	}
	m = strtoul(g, &end, 10);
	if (errno || *end || m >= (gid_t)-1) {
		return;
	}
	*uid = (uid_t)n;
	*gid = (gid_t)m;
}

/* An event of the BPF side's kernel context stream, read before a snapshot: into the trace. */
static void on_context(const struct ls_ctx_event *e, void *ctx)
{
	struct recorder *rec = ctx;

	emit_kernel_event(rec->emit, e);
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
	rec->batch = json_object_new_array();
	sudo_owner(&rec->owner_uid, &rec->owner_gid);
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
		rec->out_fd = open_output(stage, rec->out_path, sizeof(rec->out_path),
					  rec->owner_uid, rec->owner_gid);
	} else {
		rec->out_fd = open_output(opts->output, rec->out_path, sizeof(rec->out_path),
					  rec->owner_uid, rec->owner_gid);
	}
	if (rec->out_fd < 0) {
		err = rec->out_fd;
		goto out;
	}
	sopts.buffer_size = opts->buffer_size;
	sopts.ust_events[sopts.nr_ust_events++] = "latsnap:*";
	sopts.ust_events[sopts.nr_ust_events++] = "latsnap_kernel:*";
	sopts.ust_events[sopts.nr_ust_events++] = "lttng_ust_statedump:*";
	for (i = 0; i < opts->nr_ust_events && sopts.nr_ust_events < SESSION_MAX_EVENTS; i++) {
		sopts.ust_events[sopts.nr_ust_events++] = opts->ust_events[i];
	}
	err = session_open(&rec->session, &sopts);
	if (err) {
		goto out;
	}
	if (emit_open(&rec->emit, rec->emit_why, sizeof(rec->emit_why))) {
		ls_err("record: latsnap's own events: %s; the snapshots go on without them",
		       rec->emit_why);
	}
	if (session_has_kernel(rec->session)) {
		ls_verbose(
			"record: the LTTng kernel channel gives the kernel's view: no BPF context "
			"stream");
	} else if (rec->emit && opts->context_level != LS_CTX_NONE) {
		tracker_set_context(tr, (enum ls_ctx_level)opts->context_level, on_context, rec);
		rec->streaming = true;
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
 * recorder_add - an outlier for the next snapshot. Takes a reference.
 */
void recorder_add(struct recorder *rec, struct json_object *outlier)
{
	size_t n = json_object_array_length(rec->batch);

	rec->totals.outliers++;
	emit_outlier(rec->emit, outlier);
	if (n >= MAX_BATCH) {
		rec->skipped_since++;
		rec->totals.skipped++;
		rec->batch_over++;
		return;
	}
	if (n == 0) {
		rec->batch_first_ns = ls_now_ns();
	}
	json_object_array_add(rec->batch, json_object_get(outlier));
}

static struct cause_seen *cause_find(struct recorder *rec, const char *cause)
{
	unsigned int i;

	for (i = 0; i < rec->nr_causes; i++) {
		if (!strcmp(rec->causes[i].cause, cause)) {
			return &rec->causes[i];
		}
	}
	return NULL;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) :
		       "";
}

static uint64_t u64_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

/* Does the batch hold the first outlier of a cause, or one worse than any kept of its cause? */
static bool batch_notable(struct recorder *rec)
{
	size_t i, n = json_object_array_length(rec->batch);
	struct json_object *o;
	struct cause_seen *c;

	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(rec->batch, i);
		c = cause_find(rec, str_of(o, "cause"));
		if (!c || u64_of(o, "duration_ns") > c->worst_ns) {
			return true;
		}
	}
	return false;
}

/* File the batch's causes under @k, and raise the worst seen of each cause. */
static void remember_causes(struct recorder *rec, struct kept *k)
{
	size_t i, n = json_object_array_length(rec->batch);
	struct cause_seen *c, *grown;
	struct kept_cause *kc;
	struct json_object *o;
	const char *cause;
	unsigned int j;
	uint64_t dur;

	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(rec->batch, i);
		dur = u64_of(o, "duration_ns");
		cause = str_of(o, "cause");
		c = cause_find(rec, cause);
		for (j = 0; k && j < k->nr_causes && strcmp(k->causes[j].cause, cause); j++) {
		}
		if (k && j == k->nr_causes) {
			kc = realloc(k->causes, (k->nr_causes + 1) * sizeof(*kc));
			if (kc) {
				k->causes = kc;
				kc[j].cause = strdup(cause);
				kc[j].worst_ns = dur;
				kc[j].first = !c;
				if (kc[j].cause) {
					k->nr_causes++;
				}
			}
		} else if (k && dur > k->causes[j].worst_ns) {
			k->causes[j].worst_ns = dur;
		}
		if (c) {
			if (dur > c->worst_ns) {
				c->worst_ns = dur;
			}
			continue;
		}
		grown = realloc(rec->causes, (rec->nr_causes + 1) * sizeof(*grown));
		if (!grown) {
			continue;
		}
		rec->causes = grown;
		rec->causes[rec->nr_causes].cause = strdup(str_of(o, "cause"));
		rec->causes[rec->nr_causes].worst_ns = dur;
		if (rec->causes[rec->nr_causes].cause) {
			rec->nr_causes++;
		}
	}
}

typedef void (*tree_visit_fn)(int dir_fd, const char *name, const struct stat *st, void *arg);

/*
 * walk_tree - @visit every directory and regular file under @fd, with its lstat, parents first;
 * never follows a symlink (LTTng wrote the tree; a user may have planted links in it since).
 */
static void walk_tree(int fd, tree_visit_fn visit, void *arg)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int sub;

	sub = dup(fd);
	if (sub < 0) {
		return;
	}
	dir = fdopendir(sub);
	if (!dir) {
		close(sub);
		return;
	}
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
			continue;
		}
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			continue;
		}
		visit(dirfd(dir), de->d_name, &st, arg);
		if (S_ISDIR(st.st_mode)) {
			sub = openat(dirfd(dir), de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				walk_tree(sub, visit, arg);
				close(sub);
			}
		}
	}
	closedir(dir);
}

static void add_file_bytes(int dir_fd, const char *name, const struct stat *st, void *arg)
{
	(void)dir_fd;
	(void)name;
	if (S_ISREG(st->st_mode)) {
		*(uint64_t *)arg += (uint64_t)st->st_size;
	}
}

/* Bytes under @fd, not following symlinks. */
static uint64_t tree_bytes(int fd)
{
	uint64_t total = 0;

	walk_tree(fd, add_file_bytes, &total);
	return total;
}

struct owner {
	uid_t uid;
	gid_t gid;
};

/* @fd (of mode @mode) to the owner, and no longer group- or world-writable. */
static void give_fd(int fd, mode_t mode, const struct owner *owner)
{
	if (fchown(fd, owner->uid, owner->gid) == 0 && (mode & 022)) {
		fchmod(fd, mode & 07755);
	}
}

static void give_entry(int dir_fd, const char *name, const struct stat *st, void *arg)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (S_ISDIR(st->st_mode) ? O_DIRECTORY : 0);
	int fd = openat(dir_fd, name, flags);

	if (fd >= 0) {
		give_fd(fd, st->st_mode, arg);
		close(fd);
	}
}

/*
 * chown_tree - @fd and everything under it to @uid:@gid, never following a symlink; and no
 * file group- or world-writable, whatever mode LTTng gave it.
 */
static void chown_tree(int fd, uid_t uid, gid_t gid)
{
	struct owner owner = { .uid = uid, .gid = gid };
	struct stat st;

	if (fstat(fd, &st) == 0) {
		give_fd(fd, st.st_mode, &owner);
	}
	walk_tree(fd, give_entry, &owner);
}

/* A finished snapshot belongs to the user who ran latsnap through sudo, if one did. */
static void give_tree(struct recorder *rec, int snap_fd)
{
	if (rec->owner_uid != (uid_t)-1) {
		chown_tree(snap_fd, rec->owner_uid, rec->owner_gid);
	}
}

/* Remove @name under @fd, depth first, never following a symlink. */
static int remove_tree(int fd, const char *name)
{
	struct dirent *de;
	DIR *dir;
	int sub;

	sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0) {
		return unlinkat(fd, name, 0) ? -errno : 0;
	}
	dir = fdopendir(sub);
	if (!dir) {
		close(sub);
		return -errno;
	}
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
			continue;
		}
		if (de->d_type == DT_DIR) {
			remove_tree(dirfd(dir), de->d_name);
		} else {
			unlinkat(dirfd(dir), de->d_name, 0);
		}
	}
	closedir(dir);
	return unlinkat(fd, name, AT_REMOVEDIR) ? -errno : 0;
}

static void kept_free(struct kept *k)
{
	unsigned int i;

	for (i = 0; i < k->nr_causes; i++) {
		free(k->causes[i].cause);
	}
	free(k->causes);
	k->causes = NULL;
	k->nr_causes = 0;
}

/* Does @k still hold the first outlier of a cause, or the worst one seen of it? */
static bool kept_notable(struct recorder *rec, const struct kept *k)
{
	struct cause_seen *c;
	unsigned int i;

	for (i = 0; i < k->nr_causes; i++) {
		c = cause_find(rec, k->causes[i].cause);
		if (k->causes[i].first || !c || k->causes[i].worst_ns >= c->worst_ns) {
			return true;
		}
	}
	return false;
}

static bool over_limits(struct recorder *rec)
{
	return (rec->opts.max_snapshots && rec->nr_kept + 1 > rec->opts.max_snapshots) ||
	       (rec->opts.max_size && rec->kept_bytes >= rec->opts.max_size) ||
	       rec->nr_kept >= MAX_KEPT;
}

/*
 * make_room - within the limits after adding one snapshot? If not, evict the oldest snapshot
 * that no longer holds a first or a worst case (the worst seen so far already counts the batch).
 * Returns false when nothing can make room.
 */
static bool make_room(struct recorder *rec)
{
	unsigned int i;

	for (;;) {
		if (!over_limits(rec)) {
			return true;
		}
		for (i = 0; i < rec->nr_kept && kept_notable(rec, &rec->kept[i]); i++) {
		}
		if (i == rec->nr_kept) {
			return false;
		}
		ls_verbose(
			"record: removing snapshot %s to make room for a new cause or worst case",
			rec->kept[i].id);
		remove_tree(rec->out_fd, rec->kept[i].id);
		rec->kept_bytes -= rec->kept[i].bytes;
		kept_free(&rec->kept[i]);
		rec->totals.evicted++;
		memmove(&rec->kept[i], &rec->kept[i + 1],
			(rec->nr_kept - i - 1) * sizeof(rec->kept[0]));
		rec->nr_kept--;
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

/* LTTng names the snapshot directory itself: find it under @dir_fd and call it "trace". */
static int settle_trace_dir(int snap_fd)
{
	struct dirent *de;
	int err = -ENOENT, fd;
	DIR *dir;

	fd = openat(snap_fd, ".lttng", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.') {
			continue;
		}
		if (renameat(dirfd(dir), de->d_name, snap_fd, "trace") == 0) {
			err = 0;
		} else {
			err = -errno;
		}
		break;
	}
	closedir(dir);
	unlinkat(snap_fd, ".lttng", AT_REMOVEDIR);
	return err;
}


/*
 * A latsnap:user_stack event of the trace just written: latsnap recorded it for the outlier it
 * names (tid, end_ns), whose unwound stack the tracker already put in. Say the trace holds its
 * copy, which `show` then expects to find there.
 */
static int on_user_stack(const struct ctf_event *ev, void *ctx)
{
	struct json_object *batch = ctx, *tid, *end, *o;
	size_t i, n = json_object_array_length(batch);

	if (!json_object_object_get_ex(ev->fields, "tid", &tid) ||
	    !json_object_object_get_ex(ev->fields, "end_ns", &end)) {
		return 0;
	}
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(batch, i);
		if ((int64_t)u64_of(o, "tid") == json_object_get_int64(tid) &&
		    (int64_t)u64_of(o, "end_ns") == json_object_get_int64(end) &&
		    !strcmp(str_of(json_object_object_get(o, "user_stack"), "source"), "unwind")) {
			json_object_object_add(json_object_object_get(o, "user_stack"), "in_trace",
					       json_object_new_boolean(1));
			break;
		}
	}
	return 0;
}

/* What the trace says about each outlier: its unwound stack, and whether it reaches back. */
static void read_back(struct recorder *rec, int snap_fd, const char *trace_path,
		      struct json_object *flags)
{
	struct ctf_trace_info info = { 0 };
	size_t i, n = json_object_array_length(rec->batch);
	struct json_object *o, *v;
	char text[160];

	(void)snap_fd;
	if (ctf_trace_info(trace_path, &info) == 0) {
		if (info.discarded_events || info.discarded_packets) {
			snprintf(text, sizeof(text),
				 "trace-lost: the ring buffer discarded %" PRIu64
				 " events and %" PRIu64 " packets",
				 info.discarded_events, info.discarded_packets);
			json_object_array_add(flags, json_object_new_string(text));
		}
	}
	ctf_read(trace_path, "latsnap:user_stack", on_user_stack, rec->batch);
	if (rec->streaming && chain_build(trace_path, rec->batch, rec->tracker)) {
		json_object_array_add(flags,
				      json_object_new_string(
					      "no-wait-chain: the kernel context events of the "
					      "trace could not be read"));
	}
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(rec->batch, i);
		if (info.events && u64_of(o, "start_ns") < info.first_ns) {
			ojson_add_flag(
				o,
				"trace-starts-later: the ring buffer no longer held the start of "
				"this outlier (raise --buffer-size)");
		}
		if (json_object_object_get_ex(o, "signalled", &v) && json_object_get_boolean(v) &&
		    json_object_object_get_ex(o, "user_stack", &v) &&
		    strcmp(str_of(v, "source"), "unwind") != 0 &&
		    !ojson_has_flag(o, "no-unwound-stack:")) {
			ojson_add_flag(
				o, "no-unwound-stack: the preload library was signalled, but its "
				   "latsnap:user_stack event is not in the snapshot");
		}
	}
}

/* Write @text as @name under @fd atomically: a temporary file, fsync, rename. */
static int write_atomic(int fd, const char *name, const char *text, size_t len)
{
	char tmp[128];
	int file, err = 0;
	ssize_t done;
	size_t off = 0;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	file = openat(fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (file < 0) {
		return -errno;
	}
	while (off < len) {
		done = write(file, text + off, len - off);
		if (done < 0) {
			err = -errno;
			goto out;
		}
		off += (size_t)done;
	}
	if (fsync(file)) {
		err = -errno;
	}
out:
	if (close(file) && !err) {
		err = -errno;
	}
	if (!err && renameat(fd, tmp, fd, name)) {
		err = -errno;
	}
	if (err) {
		unlinkat(fd, tmp, 0);
	}
	return err;
}

/* @json, when given, receives a copy of the summary.json text (the caller frees it). */
static int write_summary(struct recorder *rec, int snap_fd, const char *id,
			 struct json_object *flags, char **json)
{
	struct json_object *summary = json_object_new_object();
	char host[256] = "", created[32], *text = NULL;
	size_t i, n = json_object_array_length(rec->batch), len = 0;
	struct timespec ts;
	struct tm tm;
	FILE *mem;
	int err;

	gethostname(host, sizeof(host) - 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(summary, "version", json_object_new_int(1));
	json_object_object_add(summary, "id", json_object_new_string(id));
	json_object_object_add(summary, "host", json_object_new_string(host));
	json_object_object_add(summary, "created", json_object_new_string(created));
	json_object_object_add(summary, "trace", json_object_new_string("trace"));
	json_object_object_add(summary, "outliers", json_object_get(rec->batch));
	json_object_object_add(summary, "skipped",
			       json_object_new_int64((int64_t)rec->skipped_since));
	json_object_object_add(summary, "flags", json_object_get(flags));

	/* The text one first: summary.json, written last, says the snapshot is complete. */
	mem = open_memstream(&text, &len);
	if (!mem) {
		err = -ENOMEM;
		goto out;
	}
	fprintf(mem, "latsnap snapshot %s on %s, created %s: %zu outlier%s, %" PRIu64 " skipped\n",
		id, host, created, n, n == 1 ? "" : "s", rec->skipped_since);
	for (i = 0; i < json_object_array_length(flags); i++) {
		fprintf(mem, "flag: %s\n",
			json_object_get_string(json_object_array_get_idx(flags, i)));
	}
	for (i = 0; i < n; i++) {
		fputc('\n', mem);
		ojson_print_text(mem, json_object_array_get_idx(rec->batch, i));
	}
	fclose(mem);
	err = write_atomic(snap_fd, "summary.txt", text, len);
	free(text);
	if (err) {
		goto out;
	}
	text = (char *)json_object_to_json_string_ext(
		summary, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	err = write_atomic(snap_fd, "summary.json", text, strlen(text));
	if (!err && json) {
		*json = strdup(text);
		err = *json ? 0 : -ENOMEM;
	}
out:
	json_object_put(summary);
	return err;
}

/*
 * send_to_relay - the summary into the ring buffer (latsnap:summary), then the snapshot to the
 * relay daemon as @id. A failure is said in one line; the caller decides what stays.
 */
static int send_to_relay(struct recorder *rec, const char *id, const char *json)
{
	uint64_t part_max = session_subbuf_size(rec->session) / 2;
	char why[512], name[64];
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
	err = session_snapshot_net(rec->session, rec->opts.relay, name, why, sizeof(why));
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
	size_t i, j, n = json_object_array_length(rec->batch);
	uint64_t pid;

	for (i = 0; i < n; i++) {
		pid = u64_of(json_object_array_get_idx(rec->batch, i), "pid");
		for (j = 0; j < i; j++) {
			if (u64_of(json_object_array_get_idx(rec->batch, j), "pid") == pid) {
				break;
			}
		}
		if (j == i) {
			emit_mappings(rec->emit, rec->tracker, (pid_t)pid);
		}
	}
}

/*
 * The kernel context of the batch, kept in the kernel until now, into the trace: what was written
 * from CTX_MARGIN_NS before the oldest outlier's start on, in time order. Half the channel's
 * ring at most, so that the burst never overwrites what latsnap recorded of the outliers before.
 */
static void emit_context(struct recorder *rec, struct json_object *flags)
{
	size_t i, n = json_object_array_length(rec->batch);
	uint64_t from = UINT64_MAX, start;
	struct tracker_ctx_read r;
	char text[200];

	for (i = 0; i < n; i++) {
		start = u64_of(json_object_array_get_idx(rec->batch, i), "start_ns");
		if (start < from) {
			from = start;
		}
	}
	from = from > CTX_MARGIN_NS ? from - CTX_MARGIN_NS : 0;
	if (tracker_read_context(rec->tracker, from, session_subbuf_size(rec->session) * 2, &r)) {
		json_object_array_add(flags, json_object_new_string(
						     "context-lost: no memory to read the kernel "
						     "context"));
		return;
	}
	ls_verbose("record: kernel context: %" PRIu64 " events (%" PRIu64 " bytes) from %.3f, %" PRIu64
		   " left out for room, %" PRIu64 " torn, %" PRIu64 " stacks lost",
		   r.emitted, r.bytes, (double)from / 1e9, r.trimmed, r.torn, r.stacks_lost);
	if (r.trimmed) {
		snprintf(text, sizeof(text),
			 "context-lost: the %" PRIu64 " oldest kernel context events of the window "
			 "did not fit in half the trace's ring (raise --buffer-size)",
			 r.trimmed);
		json_object_array_add(flags, json_object_new_string(text));
	}
	if (r.stacks_lost) {
		snprintf(text, sizeof(text),
			 "context-lost: %" PRIu64 " stacks of the window's waits and wakeups were no "
			 "longer in their CPU's stack ring",
			 r.stacks_lost);
		json_object_array_add(flags, json_object_new_string(text));
	}
	if (r.wrapped_ns) {
		snprintf(text, sizeof(text),
			 "context-lost: a CPU's context ring no longer held the first %.1f ms of the "
			 "window",
			 (double)r.wrapped_ns / 1e6);
		json_object_array_add(flags, json_object_new_string(text));
	}
}

/*
 * recorder_snapshot - persist the batch: snapshot, read back, summary. A failure (disk full,
 * the directory gone) is reported for this snapshot only; earlier ones stay as they are.
 */
int recorder_snapshot(struct recorder *rec)
{
	size_t n = json_object_array_length(rec->batch);
	struct json_object *flags;
	char id[64], path[PATH_MAX + 128], trace[PATH_MAX + 160];
	uint64_t lost, t0 = ls_now_ns(), t_lttng = 0, t_read = 0, t_relay = 0;
	char *json = NULL;
	struct kept pending = { 0 };
	bool notable;
	int snap_fd = -1, err = 0;

	if (!n) {
		return 0;
	}
	if (rec->session_gone) {
		rec->skipped_since += n;
		rec->totals.skipped += n;
		goto reset;
	}
	if (rec->streaming) {
		/* Outliers already in the ring buffer join this batch, and their context with it. */
		tracker_drain(rec->tracker);
		n = json_object_array_length(rec->batch);
	}
	notable = batch_notable(rec);
	if (over_limits(rec) && (!notable || (remember_causes(rec, &pending), !make_room(rec)))) {
		rec->skipped_since += n;
		rec->totals.skipped += n;
		ls_verbose("record: %zu outlier%s skipped: the limits are reached and %s", n,
			   n == 1 ? "" : "s",
			   notable ? "every snapshot kept holds a first or worst case" :
				     "no new cause or worst case is among them");
		kept_free(&pending);
		goto reset;
	}
	flags = json_object_new_array();
	if (rec->batch_over) {
		char text[160];

		snprintf(text, sizeof(text),
			 "batch-full: %" PRIu64 " more outliers came in this snapshot's window than the "
			 "%d it holds: counted in skipped",
			 rec->batch_over, MAX_BATCH);
		json_object_array_add(flags, json_object_new_string(text));
	}
	if (!rec->emit) {
		char text[320];

		snprintf(text, sizeof(text), "no-latsnap-events: %s", rec->emit_why);
		json_object_array_add(flags, json_object_new_string(text));
	}
	make_id(rec, id, sizeof(id));
	if (mkdirat(rec->out_fd, id, 0700)) {
		err = -errno;
		ls_err("record: %s/%s: %s", rec->out_path, id, strerror(errno));
		goto failed;
	}
	snap_fd = openat(rec->out_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (snap_fd < 0 || mkdirat(snap_fd, ".lttng", 0700)) {
		err = -errno;
		ls_err("record: %s/%s: %s", rec->out_path, id, strerror(errno));
		goto failed;
	}
	snprintf(path, sizeof(path), "%s/%s/.lttng", rec->out_path, id);
	emit_batch_mappings(rec);
	if (rec->streaming) {
		emit_context(rec, flags);
	}
	err = session_snapshot(rec->session, path);
	if (err == -ENOTCONN) {
		rec->session_gone = true;
		session_set_lost(rec->session);
		ls_err("record: lttng-sessiond is gone: no more snapshots; outliers are still "
		       "printed, and counted as skipped");
		goto failed;
	}
	if (err) {
		goto failed;
	}
	t_lttng = ls_now_ns();
	err = settle_trace_dir(snap_fd);
	if (err) {
		ls_err("record: %s/%s: the snapshot left no trace directory: %s", rec->out_path, id,
		       strerror(-err));
		goto failed;
	}
	lost = session_lost_packets(rec->session);
	if (lost > rec->lost_packets) {
		char text[128];

		snprintf(text, sizeof(text),
			 "lost-packets: LTTng lost %" PRIu64 " packets since the previous snapshot",
			 lost - rec->lost_packets);
		json_object_array_add(flags, json_object_new_string(text));
		rec->lost_packets = lost;
	}
	snprintf(trace, sizeof(trace), "%s/%s/trace", rec->out_path, id);
	read_back(rec, snap_fd, trace, flags);
	t_read = ls_now_ns();
	err = write_summary(rec, snap_fd, id, flags, rec->opts.relay ? &json : NULL);
	if (err) {
		ls_err("record: %s/%s: summary: %s", rec->out_path, id, strerror(-err));
		goto failed;
	}
	if (rec->opts.relay) {
		t_relay = ls_now_ns();
		err = send_to_relay(rec, id, json);
		t_relay = ls_now_ns() - t_relay;
		if (err && rec->staging) {
			goto failed;
		}
	}
	json_object_put(flags);
	flags = NULL;
	give_tree(rec, snap_fd);
	if (!pending.nr_causes) {
		remember_causes(rec, &pending);
	}
	if (rec->nr_kept < MAX_KEPT) {
		struct kept *k = &rec->kept[rec->nr_kept++];

		*k = pending;
		pending.causes = NULL;
		pending.nr_causes = 0;
		snprintf(k->id, sizeof(k->id), "%s", id);
		/* Without a local copy the staging directory gives its space back at once. */
		k->bytes = rec->staging ? 0 : tree_bytes(snap_fd);
		rec->kept_bytes += k->bytes;
	}
	kept_free(&pending);
	rec->totals.snapshots++;
	rec->skipped_since = 0;
	rec->last_snapshot_ns = ls_now_ns();
	if (rec->staging) {
		remove_tree(rec->out_fd, id);
		fprintf(stderr, "latsnap: snapshot %s sent to %s: %zu outlier%s\n", id,
			rec->opts.relay, n, n == 1 ? "" : "s");
	} else if (rec->opts.relay && !err) {
		fprintf(stderr, "latsnap: snapshot %s sent to %s, kept in %s/%s: %zu outlier%s\n",
			id, rec->opts.relay, rec->out_path, id, n, n == 1 ? "" : "s");
	} else {
		fprintf(stderr, "latsnap: snapshot %s/%s: %zu outlier%s\n", rec->out_path, id, n,
			n == 1 ? "" : "s");
	}
	ls_verbose("record: snapshot %s took %.1f ms: LTTng %.1f ms, reading it back %.1f ms, "
		   "summary %.1f ms, relay %.1f ms; %" PRIu64 " bytes",
		   id, (ls_now_ns() - t0) / 1e6, (t_lttng - t0) / 1e6, (t_read - t_lttng) / 1e6,
		   (ls_now_ns() - t_read - t_relay) / 1e6, t_relay / 1e6,
		   rec->nr_kept ? rec->kept[rec->nr_kept - 1].bytes : 0);
	err = 0;
	goto reset;

failed:
	json_object_put(flags);
	kept_free(&pending);
	rec->skipped_since += n;
	rec->totals.skipped += n;
	rec->totals.failed++;
	if (snap_fd >= 0) {
		struct statvfs vfs;

		if (fstatvfs(snap_fd, &vfs) == 0 &&
		    (uint64_t)vfs.f_bavail * vfs.f_frsize < (1 << 20)) {
			ls_err("record: %s: the file system is full: snapshot %s not kept, its "
			       "%zu outlier%s counted as skipped",
			       rec->out_path, id, n, n == 1 ? "" : "s");
		}
		close(snap_fd);
		snap_fd = -1;
		/* Half a snapshot is no snapshot: give the space back. */
		remove_tree(rec->out_fd, id);
	}
reset:
	free(json);
	if (snap_fd >= 0) {
		close(snap_fd);
	}
	tracker_release_exited(rec->tracker);
	json_object_put(rec->batch);
	rec->batch = json_object_new_array();
	rec->batch_over = 0;
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

	if (json_object_array_length(rec->batch) == 0) {
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

void recorder_totals(struct recorder *rec, struct recorder_totals *totals)
{
	*totals = rec->totals;
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
	session_close(rec->session);
	if (rec->out_fd >= 0) {
		close(rec->out_fd);
	}
	if (rec->staging) {
		remove_tree(AT_FDCWD, rec->out_path);
	}
	json_object_put(rec->batch);
	for (i = 0; i < rec->nr_causes; i++) {
		free(rec->causes[i].cause);
	}
	free(rec->causes);
	for (i = 0; i < rec->nr_kept; i++) {
		kept_free(&rec->kept[i]);
	}
	free(rec);
}
