// SPDX-License-Identifier: GPL-2.0
/*
 * perfmap.c - JIT code names from /tmp/perf-PID.map (see perfmap.h).
 *
 * perf's own reader (tools/perf/util/symbol.c, dso__load_perf_map) is not a library; the format
 * is three fields a line, so it is parsed here, with the bounds an untrusted file needs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tracker/perfmap.h"
#include "lib/proc.h"
#include "lib/util.h"

/* Read this much at a time; a line longer than PERFMAP_MAX_LINE is skipped. */
#define CHUNK (256U << 10)
/* Entries that start before an address and may still hold it, looked at per lookup. */
#define SCAN 64
/* The bytes before where a read stopped, kept to tell an append from a rewrite. */
#define TAIL 64
#define NR_UIDS 4

struct entry {
	uint64_t start, end;
	uint32_t seq; /* line number: a later line at the same place is newer code */
	uint32_t name; /* offset in names */
};

struct perfmap {
	pid_t pid;
	char relpath[48]; /* "tmp/perf-NSPID.map", under the process's root */
	char module[48]; /* "/tmp/perf-NSPID.map", in its root: perf's name for the object */
	uid_t uids[NR_UIDS]; /* real, effective, saved, filesystem */
	bool who_known;
	/* Its root is latsnap's: once it exited (no /proc/PID/root), its map is read through ours. */
	bool our_root;
	/* When it started (CLOCK_REALTIME seconds; 0 unknown): an older map is another's. */
	int64_t started;
	bool checked;
	uint64_t checked_ns;
	/* What was read: the file, and the offset after its last complete line. */
	dev_t dev;
	ino_t ino;
	off_t done;
	uint8_t tail[TAIL];
	size_t tail_len;
	bool skipping; /* inside a line too long to keep */
	bool full; /* a bound was reached: nothing more is read */
	struct entry *v; /* sorted by start, then line, up to sorted */
	size_t nr, cap, sorted;
	char *names;
	size_t names_len, names_cap;
	uint32_t seq;
};

/* The process's uids and its pid in its own pid namespace, from /proc/PID/status. */
static int read_status(struct perfmap *pm)
{
	char path[32], line[256];
	unsigned long u[NR_UIDS];
	long nspid = pm->pid;
	bool uids = false;
	FILE *f;
	char *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pm->pid);
	f = fopen(path, "re");
	if (!f) {
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4) &&
		    sscanf(line + 4, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == NR_UIDS) {
			uids = true;
		} else if (!strncmp(line, "NSpid:", 6)) {
			/* The last field is the pid in the process's own namespace. */
			p = strrchr(line, '\t');
			nspid = p ? strtol(p + 1, NULL, 10) : nspid;
		}
	}
	fclose(f);
	if (!uids || nspid <= 0) {
		return -EIO;
	}
	for (i = 0; i < NR_UIDS; i++) {
		pm->uids[i] = (uid_t)u[i];
	}
	snprintf(pm->relpath, sizeof(pm->relpath), "tmp/perf-%ld.map", nspid);
	snprintf(pm->module, sizeof(pm->module), "/tmp/perf-%ld.map", nspid);
	pm->who_known = true;
	return 0;
}

/*
 * When @pid started, in CLOCK_REALTIME seconds, from its start time in /proc/PID/stat (clock
 * ticks since boot); 0 when unknown.
 */
static int64_t start_wall(pid_t pid)
{
	unsigned long long ticks;
	struct timespec real, boot;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || proc_start_time(pid, &ticks) || clock_gettime(CLOCK_REALTIME, &real) ||
	    clock_gettime(CLOCK_BOOTTIME, &boot)) {
		return 0;
	}
	return (int64_t)real.tv_sec - ((int64_t)boot.tv_sec - (int64_t)(ticks / (unsigned long)hz));
}

/* A map written by someone else (another user's file squatting the name) names nothing. */
static bool owner_ok(const struct perfmap *pm, const struct stat *st)
{
	int i;

	if (st->st_uid == 0) {
		return true;
	}
	for (i = 0; i < NR_UIDS; i++) {
		if (st->st_uid == pm->uids[i]) {
			return true;
		}
	}
	return false;
}

/*
 * Opens the map for reading, or returns -1. Resolved inside the process's root without
 * following any symlink, first as O_PATH (which opens nothing: no FIFO or device is ever
 * opened), checked, then opened through that descriptor.
 */
static int open_map(const struct perfmap *pm, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int root = -1, pfd = -1, fd = -1;
	struct stat again;
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pm->pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* JITs leave their map behind for perf, which reads it after the process exited. */
	if (root < 0 && pm->our_root) {
		root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (root < 0) {
		goto out;
	}
	pfd = (int)syscall(SYS_openat2, root, pm->relpath, &how, sizeof(how));
	if (pfd < 0 && errno == ENOSYS) {
		/* Before Linux 5.6: the last component at least is no symlink. */
		pfd = openat(root, pm->relpath, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	/*
	 * Runtimes leave their maps behind and pids are reused: a map last written before the
	 * process started (a second of slack for the clocks' rounding) is an earlier process's.
	 */
	if (pfd < 0 || fstat(pfd, st) || !S_ISREG(st->st_mode) || !owner_ok(pm, st) ||
	    (pm->started && st->st_mtim.tv_sec < pm->started - 1)) {
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &again) || again.st_dev != st->st_dev ||
			again.st_ino != st->st_ino || !S_ISREG(again.st_mode))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		*st = again;
	}
out:
	if (pfd >= 0) {
		close(pfd);
	}
	if (root >= 0) {
		close(root);
	}
	return fd;
}

/* The memory all maps hold, against PERFMAP_TOTAL_BYTES: 64 traced processes may each have one. */
static size_t held_total;

/* Grows *@p (@size bytes now) to @want bytes within the budget of all maps; 0 or -ENOMEM. */
static int budget_realloc(void **p, size_t size, size_t want)
{
	void *n;

	if (__atomic_add_fetch(&held_total, want - size, __ATOMIC_RELAXED) > PERFMAP_TOTAL_BYTES) {
		__atomic_sub_fetch(&held_total, want - size, __ATOMIC_RELAXED);
		return -ENOMEM;
	}
	n = realloc(*p, want);
	if (!n) {
		__atomic_sub_fetch(&held_total, want - size, __ATOMIC_RELAXED);
		return -ENOMEM;
	}
	*p = n;
	return 0;
}

static void reset(struct perfmap *pm)
{
	pm->nr = 0;
	pm->sorted = 0;
	pm->names_len = 0;
	pm->done = 0;
	pm->tail_len = 0;
	pm->seq = 0;
	pm->skipping = false;
	pm->full = false;
}

/* Whether the file still holds, before where the last read stopped, what it held then. */
static bool same_prefix(const struct perfmap *pm, int fd, const struct stat *st)
{
	uint8_t buf[TAIL];

	if (st->st_dev != pm->dev || st->st_ino != pm->ino || st->st_size < pm->done) {
		return false;
	}
	return !pm->tail_len || (pread(fd, buf, pm->tail_len, pm->done - (off_t)pm->tail_len) ==
					 (ssize_t)pm->tail_len &&
				 !memcmp(buf, pm->tail, pm->tail_len));
}

static int add_entry(struct perfmap *pm, uint64_t start, uint64_t size, const char *name,
		     size_t len)
{
	struct entry *e;
	size_t i;

	if (pm->nr == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 1024;

		if (budget_realloc((void **)&pm->v, pm->cap * sizeof(*e), cap * sizeof(*e))) {
			return -ENOMEM;
		}
		pm->cap = cap;
	}
	if (pm->names_len + len + 1 > pm->names_cap) {
		size_t cap = pm->names_cap ? pm->names_cap : 64 << 10;

		while (cap < pm->names_len + len + 1) {
			cap *= 2;
		}
		if (budget_realloc((void **)&pm->names, pm->names_cap, cap)) {
			return -ENOMEM;
		}
		pm->names_cap = cap;
	}
	e = &pm->v[pm->nr++];
	e->start = start;
	e->end = start + size;
	e->seq = pm->seq++;
	e->name = (uint32_t)pm->names_len;
	/* Names go to terminals and text files: no control character gets through. */
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		pm->names[pm->names_len++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	pm->names[pm->names_len++] = '\0';
	return 0;
}

/* One line, without its newline: "START SIZE NAME", hex numbers with or without 0x. */
static void parse_line(struct perfmap *pm, char *line, size_t len)
{
	uint64_t start, size;
	char *p, *end;

	line[len] = '\0';
	if (len && line[len - 1] == '\r') {
		line[--len] = '\0';
	}
	errno = 0;
	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno) {
		return;
	}
	p = end + 1;
	size = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || errno || !size || start + size < start) {
		return;
	}
	p = end + 1;
	if (!*p || pm->nr >= PERFMAP_MAX_ENTRIES) {
		pm->full = pm->nr >= PERFMAP_MAX_ENTRIES;
		return;
	}
	if (add_entry(pm, start, size, p, strlen(p))) {
		pm->full = true;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->start != y->start) {
		return x->start < y->start ? -1 : 1;
	}
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sorts the entries read since the last sort and merges them with the others: a JIT appends a
 * few lines at a time to a map of many.
 */
static void sort_new(struct perfmap *pm)
{
	size_t old = pm->sorted, i = 0, j = old, k = 0;
	struct entry *tmp = NULL;

	if (old == pm->nr) {
		goto out;
	}
	ls_sort(pm->v + old, pm->nr - old, sizeof(*pm->v), cmp_entry);
	if (!old) {
		goto out;
	}
	tmp = malloc(pm->nr * sizeof(*tmp));
	if (!tmp) {
		ls_sort(pm->v, pm->nr, sizeof(*pm->v), cmp_entry);
		goto out;
	}
	while (i < old && j < pm->nr) {
		tmp[k++] = cmp_entry(&pm->v[i], &pm->v[j]) <= 0 ? pm->v[i++] : pm->v[j++];
	}
	while (i < old) {
		tmp[k++] = pm->v[i++];
	}
	while (j < pm->nr) {
		tmp[k++] = pm->v[j++];
	}
	memcpy(pm->v, tmp, pm->nr * sizeof(*tmp));
out:
	free(tmp);
	pm->sorted = pm->nr;
}

/* Reads what the map gained since the last read, or all of it when it was rewritten. */
static void load(struct perfmap *pm)
{
	off_t off, limit;
	struct stat st;
	size_t have = 0, start, i;
	char *buf = NULL;
	ssize_t n;
	int fd;

	if (!pm->who_known) {
		return;
	}
	/* A map that went away keeps its names: the code it named may still be running. */
	fd = open_map(pm, &st);
	if (fd < 0) {
		return;
	}
	if (!same_prefix(pm, fd, &st)) {
		reset(pm);
	}
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	limit = st.st_size < (off_t)PERFMAP_MAX_BYTES ? st.st_size : (off_t)PERFMAP_MAX_BYTES;
	if (pm->full || pm->done >= limit) {
		goto out;
	}
	buf = malloc(CHUNK + 1);
	if (!buf) {
		goto out;
	}
	off = pm->done;
	while (off < limit && !pm->full) {
		n = pread(fd, buf + have, CHUNK - have, off);
		if (n <= 0) {
			break;
		}
		off += n;
		have += (size_t)n;
		start = 0;
		for (i = 0; i < have; i++) {
			if (buf[i] != '\n') {
				continue;
			}
			if (!pm->skipping && i - start <= PERFMAP_MAX_LINE) {
				parse_line(pm, buf + start, i - start);
			}
			pm->skipping = false;
			start = i + 1;
		}
		if (have - start > PERFMAP_MAX_LINE) {
			/* A line too long: drop it up to its newline. */
			pm->skipping = true;
			start = have;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		pm->done = off - (off_t)have;
	}
	if (st.st_size > (off_t)PERFMAP_MAX_BYTES && off >= limit) {
		pm->full = true;
	}
	pm->tail_len = pm->done < TAIL ? (size_t)pm->done : TAIL;
	if (pm->tail_len && pread(fd, pm->tail, pm->tail_len, pm->done - (off_t)pm->tail_len) !=
				    (ssize_t)pm->tail_len) {
		reset(pm);
	}
out:
	sort_new(pm);
	free(buf);
	close(fd);
}

/**
 * perfmap_new() - the perf map of process @pid, not read yet
 *
 * Call it while the process lives: who it is (its uids, its pid and root as it sees them) is
 * read now, so that its map can still be read after it exited, if it shares latsnap's root.
 *
 * Return: the map, or NULL when out of memory. One of a process that could not be read names
 * nothing.
 */
struct perfmap *perfmap_new(pid_t pid)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	struct stat theirs, ours;
	char path[32];

	if (!pm) {
		goto out;
	}
	pm->pid = pid;
	if (read_status(pm)) {
		goto out;
	}
	pm->started = start_wall(pid);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	pm->our_root = !stat(path, &theirs) && !stat("/", &ours) && theirs.st_dev == ours.st_dev &&
		       theirs.st_ino == ours.st_ino;
out:
	return pm;
}

/**
 * perfmap_free() - forget a perf map
 * @pm: the map, or NULL
 */
void perfmap_free(struct perfmap *pm)
{
	if (!pm) {
		return;
	}
	__atomic_sub_fetch(&held_total, pm->cap * sizeof(*pm->v) + pm->names_cap, __ATOMIC_RELAXED);
	free(pm->v);
	free(pm->names);
	free(pm);
}

/**
 * perfmap_lookup() - the JIT function that holds @addr, as the process's perf map names it
 * @pm: the map
 * @addr: an address of the process
 * @offset: out, @addr minus the function's start
 *
 * Reads the map the first time, and again when it changed (checked at most every
 * PERFMAP_RECHECK_NS). When several lines hold @addr, the last one in the file wins: code
 * compiled later at a place freed since.
 *
 * Return: the name, valid until the next call with @pm; NULL when no line holds @addr.
 */
const char *perfmap_lookup(struct perfmap *pm, uint64_t addr, uint64_t *offset)
{
	uint64_t now = ls_now_ns();
	const struct entry *best = NULL;
	size_t lo = 0, hi, i, n;

	if (!pm->checked || now - pm->checked_ns >= PERFMAP_RECHECK_NS) {
		load(pm);
		pm->checked = true;
		pm->checked_ns = now;
	}
	/* The first entry that starts after @addr. */
	hi = pm->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	for (i = lo, n = 0; i > 0 && n < SCAN; i--, n++) {
		const struct entry *e = &pm->v[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq)) {
			best = e;
		}
	}
	if (!best) {
		return NULL;
	}
	*offset = addr - best->start;
	return pm->names + best->name;
}

/**
 * perfmap_module() - what a frame named from @pm gives as its module: "/tmp/perf-NSPID.map",
 *                    the file the name came from, in the process's root (NSPID: its pid in its
 *                    namespace), as perf names it: summary.json's module is a path
 */
const char *perfmap_module(const struct perfmap *pm)
{
	return pm->module[0] ? pm->module : "/tmp/perf-map";
}
