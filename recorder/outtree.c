// SPDX-License-Identifier: GPL-2.0
/*
 * outtree.c - the output tree: opened without following symlinks, given to sudo's caller, walked,
 * its snapshots evicted by age or size and an earlier run's adopted, files written in it
 * atomically.
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
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "recorder/recorder-int.h"
#include "lib/summary.h"
#include "lib/util.h"

/*
 * The output directory: created 0700 when missing, never through a symlink. An existing one is
 * used as it is, provided it is a directory and not a link to one.
 */
int outtree_open_output(const char *path, char *abs, size_t abs_size, uid_t uid, gid_t gid)
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
void outtree_sudo_owner(uid_t *uid, gid_t *gid)
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
uint64_t outtree_tree_bytes(int fd)
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
void outtree_give_tree(struct recorder *rec, int snap_fd)
{
	if (rec->owner_uid != (uid_t)-1) {
		chown_tree(snap_fd, rec->owner_uid, rec->owner_gid);
	}
}

/* Remove @name under @fd, depth first, never following a symlink. */
int outtree_remove_tree(int fd, const char *name)
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
			outtree_remove_tree(dirfd(dir), de->d_name);
		} else {
			unlinkat(dirfd(dir), de->d_name, 0);
		}
	}
	closedir(dir);
	return unlinkat(fd, name, AT_REMOVEDIR) ? -errno : 0;
}

/* Room for a new cause or worst case: @k goes, files and all. */
void outtree_evict_snapshot(const struct retention_kept *k, void *ctx)
{
	struct recorder *rec = ctx;

	ls_verbose("record: removing snapshot %s to make room for a new cause or worst case",
		   k->id);
	outtree_remove_tree(rec->out_fd, k->id);
	rec->totals.evicted++;
}

/*
 * Wall-clock time, for what people read (status.json): ids and ages use it too, since the ages
 * of earlier runs' snapshots (their summary's "created") are on it.
 */
uint64_t outtree_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * expire_old - remove the snapshots older than --max-age that hold no first or worst case any
 * more, oldest first. The staging directory of a relay keeps none to remove.
 */
void outtree_expire_old(struct recorder *rec)
{
	uint64_t now = outtree_realtime_ns();
	int i;

	rec->next_age_check_ns = ls_now_ns() + AGE_CHECK_NS;
	while ((i = retention_expired(&rec->retention, now)) >= 0) {
		ls_verbose("record: removing snapshot %s: older than --max-age",
			   rec->retention.kept[i].id);
		outtree_remove_tree(rec->out_fd, rec->retention.kept[i].id);
		retention_drop(&rec->retention, (unsigned int)i);
		rec->totals.expired++;
	}
}

/*
 * Names latsnap writes in a snapshot directory: an incomplete one holding anything else is not
 * plainly ours, and stays.
 */
static const char *const snapshot_entries[] = {
	".lttng", "trace", "summary.txt", ".summary.txt.tmp", ".summary.json.tmp",
};

/* Does the snapshot directory @snap_fd hold nothing but what latsnap writes in one? */
static bool only_ours(int snap_fd)
{
	bool ours = true;
	struct dirent *de;
	size_t i;
	DIR *dir;
	int fd;

	fd = dup(snap_fd);
	if (fd < 0) {
		return false;
	}
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return false;
	}
	while (ours && (de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
			continue;
		}
		for (i = 0; i < sizeof(snapshot_entries) / sizeof(snapshot_entries[0]); i++) {
			if (!strcmp(de->d_name, snapshot_entries[i])) {
				break;
			}
		}
		ours = i < sizeof(snapshot_entries) / sizeof(snapshot_entries[0]);
	}
	closedir(dir);
	return ours;
}

/*
 * read_summary - the summary.json of the snapshot directory @snap_fd, as the retention policy
 * sees it.
 * Return: 0; -ENOENT when it has none (incomplete); -ELOOP when summary.json is no regular
 * file (a link, a FIFO: not ours); -EFBIG, -EINVAL, -EIO...: it cannot be read.
 */
static int read_summary(int snap_fd, struct retention_summary *sum)
{
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	ssize_t got;
	int fd, err = 0;

	memset(sum, 0, sizeof(*sum));
	/* O_NONBLOCK: a FIFO planted under that name would hold the open. */
	fd = openat(snap_fd, "summary.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ELOOP;
		goto out;
	}
	/* Larger than the reader takes: its snapshot counts as holding no cause. */
	if ((uint64_t)st.st_size > SUMMARY_MAX) {
		err = -EFBIG;
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		err = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		got = read(fd, text + len, (size_t)st.st_size - len);
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got <= 0) {
			err = got < 0 ? -errno : -EIO;
			goto out;
		}
		len += (size_t)got;
	}
	err = retention_summary_parse(sum, text, len);
out:
	free(text);
	if (fd >= 0) {
		close(fd);
	}
	return err;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* What adopt_one() found in the directory, for the lines outtree_adopt_earlier() logs. */
struct adopted {
	unsigned int complete, incomplete, unread, untracked;
	uint64_t bytes, incomplete_bytes;
	char unread_id[64];
	int unread_err;
};

/*
 * adopt_one - the id-shaped directory @name of the output directory into the retention policy:
 * a complete snapshot (its summary.json read for its causes; one that cannot be read holds none,
 * and so goes first), or an incomplete one an earlier run left over an hour ago and that holds
 * only what latsnap writes. Anything else is not plainly latsnap's and is left alone.
 */
static void adopt_one(struct recorder *rec, const char *name, uint64_t now, struct adopted *a)
{
	struct retention_summary sum = { 0 };
	uint64_t mtime, bytes;
	struct stat st;
	int fd, err;

	fd = openat(rec->out_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		goto out;
	}
	mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	err = read_summary(fd, &sum);
	if (err == -ELOOP) {
		goto out;
	}
	if (err == -ENOENT) {
		/* Younger, it may be another latsnap's snapshot under way. */
		if (now < mtime + INCOMPLETE_AGE_NS || !only_ours(fd)) {
			goto out;
		}
		bytes = outtree_tree_bytes(fd);
		if (retention_adopt_incomplete(&rec->retention, name, bytes, mtime)) {
			a->untracked++;
			goto out;
		}
		a->incomplete++;
		a->incomplete_bytes += bytes;
		goto out;
	}
	if (err && !a->unread++) {
		snprintf(a->unread_id, sizeof(a->unread_id), "%s", name);
		a->unread_err = err;
	}
	bytes = outtree_tree_bytes(fd);
	if (retention_adopt(&rec->retention, name, bytes, sum.created_ns ? sum.created_ns : mtime,
			    sum.items, sum.nr_items)) {
		a->untracked++;
		goto out;
	}
	a->complete++;
	a->bytes += bytes;
out:
	retention_summary_free(&sum);
	if (fd >= 0) {
		close(fd);
	}
}

/*
 * adopt_earlier - the snapshots earlier runs left in the output directory count under the
 * limits as this run's do: a service restarted daily would otherwise keep every earlier run's
 * for ever. Oldest first (ids sort by time), so that the first of a cause is the oldest
 * snapshot holding it, whichever run wrote it. Only directories named like an id are looked at,
 * never through a symlink.
 */
void outtree_adopt_earlier(struct recorder *rec)
{
	struct adopted a = { 0 };
	char(*names)[64] = NULL, (*grown)[64], size[32], isize[32];
	size_t nr = 0, cap = 0, i;
	uint64_t now = outtree_realtime_ns();
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd;

	fd = dup(rec->out_fd);
	if (fd < 0) {
		return;
	}
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((de = readdir(dir))) {
		if (!retention_id_shaped(de->d_name) || strlen(de->d_name) >= sizeof(*names) ||
		    fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode)) {
			continue;
		}
		if (nr == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown) {
				break;
			}
			names = grown;
		}
		/* Its length was checked above: it fits with its NUL. */
		memcpy(names[nr++], de->d_name, strlen(de->d_name) + 1);
	}
	closedir(dir);
	ls_sort(names, nr, sizeof(*names), cmp_names);
	for (i = 0; i < nr; i++) {
		adopt_one(rec, names[i], now, &a);
	}
	free(names);

	if (a.unread) {
		ls_err("record: %s/%s/summary.json: %s; %u snapshot%s of earlier runs whose "
		       "summary cannot be read count as holding no cause, and go first",
		       rec->out_path, a.unread_id,
		       a.unread_err == -EINVAL ? "not a summary" : strerror(-a.unread_err),
		       a.unread, a.unread == 1 ? "" : "s");
	}
	if (a.untracked) {
		ls_err("record: %s: %u snapshots beyond the %d retention keeps track of: they "
		       "stay, uncounted",
		       rec->out_path, a.untracked, RETENTION_MAX_KEPT);
	}
	if (a.complete) {
		ls_format_bytes(a.bytes, size, sizeof(size));
		ls_verbose(
			"record: %u snapshot%s of earlier runs in %s, %s, adopted into retention",
			a.complete, a.complete == 1 ? "" : "s", rec->out_path, size);
	}
	if (a.incomplete) {
		ls_format_bytes(a.incomplete_bytes, isize, sizeof(isize));
		ls_verbose("record: %u incomplete snapshot%s of earlier runs in %s, %s: counted in "
			   "--max-size, the first to go",
			   a.incomplete, a.incomplete == 1 ? "" : "s", rec->out_path, isize);
	}
}

/* LTTng names the snapshot directory itself: find it under @dir_fd and call it "trace". */
int outtree_settle_trace_dir(int snap_fd)
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
 * Write @text as @name under @fd atomically: a temporary file, fsync when @durable, rename. A
 * reader sees the old file or the new one, never a part; only @durable survives a crash.
 */
int outtree_write_atomic(int fd, const char *name, const char *text, size_t len, bool durable)
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
	if (durable && fsync(file)) {
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
