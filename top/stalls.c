// SPDX-License-Identifier: GPL-2.0
/*
 * stalls.c - each refresh of `latsnap top`: the threads that wait now and have for longer than
 * --hang, from the stall scan of bpf/top.bpf.c (a task iterator), each named by its cause and
 * object. A wait counts in the aggregates only once it ends: a thread stuck for good is seen
 * only here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/util.h"
#include "top.skel.h"
#include "top/top-int.h"

/* What a read() asks of the iterator: many records a call. */
#define SCAN_BUF (64 * 1024)

/**
 * top_read_records() - reads fixed-size records from a file descriptor until its end
 * @fd: an open BPF iterator (or any file, a pipe...)
 * @size: the size of one record
 * @fn: called for each whole record, in order, with @arg
 * @arg: passed to @fn
 *
 * A read() ends wherever its buffer does, not at a record's end: what a read leaves of a record
 * is kept for the next. EINTR and EAGAIN (the iterator found nothing to show in its run of
 * tasks) read again.
 *
 * Return: the number of records, or a negative errno: the read's, or -EPROTO when the end cuts a
 * record (the records before it were given to @fn).
 */
ssize_t top_read_records(int fd, size_t size, void (*fn)(const void *rec, void *arg), void *arg)
{
	size_t cap = size > SCAN_BUF ? size : SCAN_BUF, have = 0, off;
	char *buf = malloc(cap);
	ssize_t n, count = 0;

	if (!buf || !size) {
		free(buf);
		return size ? -ENOMEM : -EINVAL;
	}
	for (;;) {
		n = read(fd, buf + have, cap - have);
		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			continue;
		}
		if (n < 0) {
			count = -errno;
			break;
		}
		if (!n) {
			if (have) {
				count = -EPROTO;
			}
			break;
		}
		have += (size_t)n;
		for (off = 0; have - off >= size; off += size) {
			fn(buf + off, arg);
			count++;
		}
		/* The start of the next record, if this read cut one. */
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	free(buf);
	return count;
}

static int cmp_stalled(const void *a, const void *b)
{
	const struct top_stalled *x = a, *y = b;

	if (x->waited_ns != y->waited_ns) {
		return x->waited_ns > y->waited_ns ? -1 : 1;
	}
	if (x->tgid != y->tgid) {
		return x->tgid < y->tgid ? -1 : 1;
	}
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* What the scan's read loop keeps: the records of the --pid processes, as they come. */
struct scan {
	const struct top *t;
	struct top_stall *recs;
	size_t nr;
	size_t cap;
	int err;
};

static void scan_keep(const void *rec, void *arg)
{
	const struct top_stall *r = rec;
	struct scan *sc = arg;
	struct top_stall *grown;

	if (sc->err || !top_pid_listed(sc->t, r->tgid)) {
		return;
	}
	if (sc->nr == sc->cap) {
		grown = reallocarray(sc->recs, sc->cap ? sc->cap * 2 : 64, sizeof(*grown));
		if (!grown) {
			sc->err = -ENOMEM;
			return;
		}
		sc->recs = grown;
		sc->cap = sc->cap ? sc->cap * 2 : 64;
	}
	sc->recs[sc->nr++] = *r;
}

/*
 * A record of the scan, as a stalled thread: its cause and object named. Return: false, nothing
 * filled in, when the thread waits for work (the idle policy): not a stall.
 */
static bool stalled_of(struct top *t, const struct top_stall *r, struct top_stalled *s)
{
	const struct top_cause *c = top_cause_of_stall(t, r);
	struct top_key k = { 0 };

	if (top_idle_stall(t, r, c)) {
		return false;
	}
	memset(s, 0, sizeof(*s));
	s->tgid = r->tgid;
	s->tid = r->tid;
	s->waited_ns = r->now > r->start ? r->now - r->start : 0;
	s->nr = r->nr;
	s->before_top = r->flags & TOP_STALL_BEFORE_TOP;
	s->cause = c->cause;
	k.tgid = r->tgid;
	k.tid = r->tid;
	k.obj = r->obj;
	k.obj_kind = r->obj_kind;
	s->object = top_object_of(&k);
	memcpy(s->comm, r->comm, sizeof(s->comm));
	memcpy(s->pcomm, r->pcomm, sizeof(s->pcomm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	s->pcomm[sizeof(s->pcomm) - 1] = '\0';
	return true;
}

/*
 * Runs the scan once, listing the waits of @min_ns or more into @p (NULL: none listed). -v says
 * what the read loop (the walk of every thread in the kernel) took, and then the naming.
 */
static int scan_run(struct top *t, struct top_period *p, uint64_t min_ns)
{
	struct scan sc = { .t = t };
	uint64_t start, read_ns;
	ssize_t n;
	size_t i;
	int fd;

	t->skel->bss->stall_min_ns = min_ns;
	fd = bpf_iter_create(bpf_link__fd(t->skel->links.top_stalls));
	if (fd < 0) {
		return fd;
	}
	start = ls_now_ns();
	n = top_read_records(fd, sizeof(struct top_stall), scan_keep, &sc);
	read_ns = ls_now_ns() - start;
	close(fd);
	if (n < 0 || sc.err) {
		free(sc.recs);
		return n < 0 ? (int)n : sc.err;
	}
	start = ls_now_ns();
	if (p && sc.nr) {
		p->stalled = calloc(sc.nr, sizeof(*p->stalled));
		if (!p->stalled) {
			free(sc.recs);
			return -ENOMEM;
		}
		for (i = 0; i < sc.nr; i++) {
			if (stalled_of(t, &sc.recs[i], &p->stalled[p->nr_stalled])) {
				p->nr_stalled++;
			} else {
				p->idle_now++;
			}
		}
		ls_sort(p->stalled, p->nr_stalled, sizeof(*p->stalled), cmp_stalled);
	}
	free(sc.recs);
	if (p) {
		ls_verbose("top: stall scan: %zd threads waiting %.3f s or more (%zu listed, %zu "
			   "waiting for work): read in %.0f us, named in %.0f us",
			   n, (double)min_ns / 1e9, p->nr_stalled, p->idle_now,
			   (double)read_ns / 1e3, (double)(ls_now_ns() - start) / 1e3);
	} else {
		ls_verbose("top: stall scan at load (threads blocked since before top noted): "
			   "read in %.0f us",
			   (double)read_ns / 1e3);
	}
	return 0;
}

/**
 * top_stalls_scan() - the threads waiting longer than --hang, at this refresh
 * @t: the loaded program and the options; nothing is done with --hang off
 * @p: the new period; receives them, longest first (those of the --pid processes only)
 *
 * Return: 0, or a negative errno said on stderr.
 */
int top_stalls_scan(struct top *t, struct top_period *p)
{
	int ret;

	if (!t->opts.hang_ns) {
		return 0;
	}
	ret = scan_run(t, p, t->opts.hang_ns);
	if (ret) {
		ls_err("top: listing the stalled threads: %s", strerror(-ret));
	}
	return ret;
}

/**
 * top_stalls_note() - the scan at load, listing nothing: each thread blocked since before top
 * is given its start (the hooks see a thread only once it switches out, which a thread stuck for
 * good never does)
 * @t: the program just attached; nothing is done with --hang off
 *
 * Return: 0, or a negative errno said on stderr.
 */
int top_stalls_note(struct top *t)
{
	int ret;

	if (!t->opts.hang_ns) {
		return 0;
	}
	ret = scan_run(t, NULL, UINT64_MAX);
	if (ret) {
		ls_err("top: cannot run the stall scan (a BPF task iterator): %s", strerror(-ret));
	}
	return ret;
}

/**
 * top_stalls_free() - frees the stalled threads of a period
 * @p: the period
 */
void top_stalls_free(struct top_period *p)
{
	size_t i;

	for (i = 0; i < p->nr_stalled; i++) {
		free(p->stalled[i].object);
	}
	free(p->stalled);
	p->stalled = NULL;
	p->nr_stalled = 0;
}
