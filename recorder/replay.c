// SPDX-License-Identifier: GPL-2.0
/*
 * replay.c - latsnap's own events of a snapshot (its kernel context, its outliers and their
 * stacks) recorded into an LTTng session, each at the time it happened, for a relay daemon.
 *
 * A local snapshot gets them as a CTF trace of their own, written by latsnap (recorder/timeline.c).
 * A relay daemon receives only what LTTng's snapshots send, so there they must be LTTng-UST events
 * of a session; and LTTng-UST stamps an event with its process's trace clock, at the moment it
 * is recorded. latsnap-replay is the process for that: it overrides its trace clock
 * (lttng-ust's clock override, <lttng/ust-clock.h>, keeping the monotonic clock's name, uuid and
 * frequency, so that its events are on the same clock class as every other process's) with the
 * time of the event it is about to record, and records them in time order.
 *
 * A ring buffer's stream must never go back in time, and LTTng starts each buffer's first packet
 * at the time it makes the buffer; a snapshot closes the packet under way at the time it is
 * taken. So latsnap-replay records into sessions of its own (recorder/session.c: per-PID, each
 * tracking one latsnap-replay), two that take turns: each latsnap-replay registers, and gets
 * its buffers, right after its session's previous snapshot, and waits for the next one's events,
 * those older than its buffers left out; it lives until that snapshot is sent, and its buffers
 * go with it. With two sessions taking turns, a snapshot's events reach back to the end of the
 * snapshot before the previous one.
 *
 * latsnap collects the events through the same calls that would record them (recorder/emit.c,
 * with replay_ops() as its table) and hands them over on the helper's standard input:
 *   u64 length, then records of { u32 kind, u32 size (the whole record), fields }.
 * Both ends are this file, of the same build.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events/events.h"
#include "recorder/replay.h"
#include "lib/util.h"

extern char **environ;

/* What the helper is given at most (a snapshot's kernel context is 8 MB at most in latsnap). */
#define REPLAY_MAX_INPUT (256ULL << 20)
/* The trace clock override's library: lttng-ust 2.13's ABI (liblttng-ust-common.so.1). */
#define UST_COMMON_LIBRARY "liblttng-ust-common.so.1"
#define NO_STR UINT32_MAX

enum replay_kind {
	REPLAY_KERNEL_EVENT = 1,
	REPLAY_OUTLIER,
	REPLAY_KERNEL_STACK,
	REPLAY_USER_STACK,
};

struct replay {
	unsigned char *buf;
	size_t len;
	size_t cap;
	size_t count;
	bool nomem;
	pid_t pid; /* latsnap-replay, between replay_start() and replay_finish() */
	int in_fd; /* its standard input */
	int out_fd; /* its answers */
	unsigned int timeout_ms;
	bool used; /* replay_start() was called on it */
};

/*
 * The replay replay_ops()'s table writes into: its calls take no context. latsnap collects a
 * snapshot's events in one thread, the recorder's.
 */
static struct replay *replay_target;

/**
 * replay_new - an empty collection of events for latsnap-replay
 */
struct replay *replay_new(void)
{
	struct replay *rp = calloc(1, sizeof(*rp));

	if (rp) {
		rp->in_fd = rp->out_fd = -1;
	}
	return rp;
}

void replay_free(struct replay *rp)
{
	if (!rp) {
		return;
	}
	if (replay_target == rp) {
		replay_target = NULL;
	}
	replay_finish(rp);
	free(rp->buf);
	free(rp);
}

/**
 * replay_clear - forget the events collected so far (the next snapshot's start)
 */
void replay_clear(struct replay *rp)
{
	rp->len = 0;
	rp->count = 0;
	rp->nomem = false;
}

static void put(struct replay *rp, const void *p, size_t n)
{
	unsigned char *grown;
	size_t cap;

	if (rp->nomem) {
		return;
	}
	if (rp->len + n > rp->cap) {
		cap = rp->cap ? rp->cap : 65536;
		while (cap < rp->len + n) {
			cap *= 2;
		}
		grown = cap <= REPLAY_MAX_INPUT ? realloc(rp->buf, cap) : NULL;
		if (!grown) {
			rp->nomem = true;
			return;
		}
		rp->buf = grown;
		rp->cap = cap;
	}
	memcpy(rp->buf + rp->len, p, n);
	rp->len += n;
}

static void put_u32(struct replay *rp, uint32_t v)
{
	put(rp, &v, sizeof(v));
}

static void put_u64(struct replay *rp, uint64_t v)
{
	put(rp, &v, sizeof(v));
}

/* A string with its NUL, after its length; NULL as NO_STR. */
static void put_str(struct replay *rp, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!s || n >= NO_STR) {
		put_u32(rp, NO_STR);
		return;
	}
	put_u32(rp, (uint32_t)n);
	put(rp, s, n + 1);
}

/* A record's head; replay_end() writes its size once its fields are in. */
static size_t replay_begin(struct replay *rp, enum replay_kind kind)
{
	size_t at = rp->len;

	put_u32(rp, kind);
	put_u32(rp, 0);
	return at;
}

static void replay_end(struct replay *rp, size_t at)
{
	uint32_t size = (uint32_t)(rp->len - at);

	if (rp->nomem) {
		rp->len = at;
		return;
	}
	memcpy(rp->buf + at + sizeof(uint32_t), &size, sizeof(size));
	rp->count++;
}

static void put_outlier(const struct ls_ev_outlier *o)
{
	struct replay *rp = replay_target;
	size_t at;

	if (!rp) {
		return;
	}
	at = replay_begin(rp, REPLAY_OUTLIER);
	put_str(rp, o->kind);
	put_str(rp, o->comm);
	put_str(rp, o->syscall);
	put_str(rp, o->cause);
	put_str(rp, o->flags);
	put_str(rp, o->waker_comm);
	put(rp, &o->pid, sizeof(o->pid));
	put(rp, &o->tid, sizeof(o->tid));
	put(rp, &o->waker_pid, sizeof(o->waker_pid));
	put(rp, &o->waker_tid, sizeof(o->waker_tid));
	put(rp, &o->syscall_nr, sizeof(o->syscall_nr));
	put_u64(rp, o->start_ns);
	put_u64(rp, o->end_ns);
	put_u64(rp, o->on_cpu_ns);
	put_u64(rp, o->blocked_ns);
	put_u64(rp, o->runqueue_ns);
	put_u32(rp, o->switches);
	put(rp, &o->signalled, sizeof(o->signalled));
	replay_end(rp, at);
}

static void put_kernel_stack(const struct ls_ev_stack *s)
{
	struct replay *rp = replay_target;
	size_t at;

	if (!rp) {
		return;
	}
	at = replay_begin(rp, REPLAY_KERNEL_STACK);
	put_str(rp, s->role);
	put_str(rp, s->symbols);
	put_u64(rp, s->end_ns);
	put_u64(rp, s->weight_ns);
	put(rp, &s->tid, sizeof(s->tid));
	put_u32(rp, s->index);
	put_u32(rp, s->nr);
	put(rp, s->ips, (size_t)s->nr * sizeof(*s->ips));
	replay_end(rp, at);
}

static void put_kernel_event(const struct ls_ctx_event *e, const char *name)
{
	struct replay *rp = replay_target;
	uint16_t nr = e->nr_ips > LS_MAX_DEPTH ? LS_MAX_DEPTH : e->nr_ips;
	size_t at;

	if (!rp) {
		return;
	}
	at = replay_begin(rp, REPLAY_KERNEL_EVENT);
	put_str(rp, name);
	put(rp, e, offsetof(struct ls_ctx_event, ips));
	put(rp, e->ips, (size_t)nr * sizeof(e->ips[0]));
	replay_end(rp, at);
}

static void put_user_stack(const struct ls_ev_user_stack *u)
{
	struct replay *rp = replay_target;
	size_t at;

	if (!rp) {
		return;
	}
	at = replay_begin(rp, REPLAY_USER_STACK);
	put_u64(rp, u->end_ns);
	put_u64(rp, u->unwind_ns);
	put(rp, &u->pid, sizeof(u->pid));
	put(rp, &u->tid, sizeof(u->tid));
	put_u32(rp, u->nr);
	put(rp, &u->status, sizeof(u->status));
	put(rp, &u->truncated, sizeof(u->truncated));
	put(rp, u->ips, (size_t)u->nr * sizeof(*u->ips));
	replay_end(rp, at);
}

/*
 * The calls recorder/emit.c makes, collecting instead of recording. No summary and no mappings:
 * those go into the session from latsnap itself, their time being the time they are written.
 */
static const struct ls_events replay_table = {
	.abi = LS_EVENTS_ABI,
	.size = sizeof(struct ls_events),
	.outlier = put_outlier,
	.kernel_stack = put_kernel_stack,
	.kernel_event = put_kernel_event,
	.user_stack = put_user_stack,
};

/**
 * replay_ops - the table of recorder/emit.c's calls that collect into @rp (emit_open_ops())
 */
const struct ls_events *replay_ops(struct replay *rp)
{
	replay_target = rp;
	return &replay_table;
}

static int write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;
	ssize_t w;

	while (n) {
		w = write(fd, c, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return w < 0 ? -errno : -EIO;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The helper's one line ("replayed N M" or "error WHY"), waited for until @deadline_ns. */
static int read_answer(int fd, uint64_t deadline_ns, char *line, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t used = 0;
	uint64_t now;
	ssize_t r;
	int ret;

	while (used + 1 < size) {
		now = ls_now_ns();
		if (now >= deadline_ns) {
			return -ETIMEDOUT;
		}
		ret = poll(&p, 1, (int)((deadline_ns - now) / 1000000 + 1));
		if (ret < 0 && errno == EINTR) {
			continue;
		}
		if (ret <= 0) {
			return ret < 0 ? -errno : -ETIMEDOUT;
		}
		r = read(fd, line + used, 1);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			return -EPIPE;
		}
		if (line[used] == '\n') {
			break;
		}
		used++;
	}
	line[used] = '\0';
	return 0;
}

/* The helper is done (its input closed): reaped, killed after a few seconds. */
static void reap(pid_t pid)
{
	int waited;

	for (waited = 0; waited < 5000; waited += 10) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			return;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int spawn_helper(unsigned int timeout_ms, uint64_t max_bytes, int in, int out, pid_t *pid,
			char *why, size_t why_size)
{
	char path[4096], events[4096], timeout[16], bytes[24];
	char *argv[7], **envp;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	size_t n = 0, i;
	sigset_t none;
	int ret;

	if (!ls_find_helper(REPLAY_HELPER_NAME, path, sizeof(path))) {
		snprintf(why, why_size, "%s: not found next to latsnap nor in %.300s",
			 REPLAY_HELPER_NAME, LS_LIBDIR);
		return -ENOENT;
	}
	if (!ls_find_library("liblatsnap-events.so", events, sizeof(events))) {
		snprintf(why, why_size, "liblatsnap-events.so: not found next to latsnap nor in %.300s",
			 LS_LIBDIR);
		return -ENOENT;
	}
	while (environ && environ[n]) {
		n++;
	}
	envp = calloc(n + 3, sizeof(*envp));
	if (!envp) {
		snprintf(why, why_size, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		envp[i] = environ[i];
	}
	/* It has nothing to say of itself. */
	envp[n++] = "LTTNG_UST_WITHOUT_BADDR_STATEDUMP=1";
	envp[n++] = "LTTNG_UST_WITHOUT_PROCNAME_STATEDUMP=1";
	snprintf(timeout, sizeof(timeout), "%u", timeout_ms);
	snprintf(bytes, sizeof(bytes), "%" PRIu64, max_bytes);
	argv[0] = path;
	argv[1] = events;
	argv[2] = timeout;
	argv[3] = bytes;
	argv[4] = NULL;
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	ret = -posix_spawn(pid, path, &fa, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	if (ret) {
		snprintf(why, why_size, "%.400s: %s", path, strerror(-ret));
	}
	return ret;
}

/**
 * replay_standby - start the latsnap-replay of the next snapshot, unless one is running that
 * replay_start() did not use yet (then nothing changes); replay_pid() is the process to track. It registers with the
 * session daemon now: the buffers LTTng makes it start at that time, and it can record nothing
 * older (a ring buffer's packet begins when the buffer is made, and what follows in it must not
 * go back in time). So it waits, ready, from the end of one snapshot to the next.
 * @timeout_ms: how long it may wait for the session daemon to enable its events
 * @max_bytes: the kernel context it records at most, the newest (what its ring holds)
 *
 * Return: 0, or a negative errno with why in @why.
 */
int replay_standby(struct replay *rp, unsigned int timeout_ms, uint64_t max_bytes, char *why,
		   size_t why_size)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int err;

	if (rp->pid > 0 && !rp->used) {
		return 0;
	}
	replay_finish(rp);
	rp->timeout_ms = timeout_ms;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		err = -errno;
		snprintf(why, why_size, "pipe: %s", strerror(errno));
		goto out;
	}
	err = spawn_helper(timeout_ms, max_bytes, in[0], out[1], &rp->pid, why, why_size);
	if (err) {
		rp->pid = 0;
		goto out;
	}
	rp->in_fd = in[1];
	rp->out_fd = out[0];
	in[1] = out[0] = -1;
out:
	if (in[0] >= 0) {
		close(in[0]);
	}
	if (out[1] >= 0) {
		close(out[1]);
	}
	if (in[1] >= 0) {
		close(in[1]);
	}
	if (out[0] >= 0) {
		close(out[0]);
	}
	return err;
}

/**
 * replay_start - have the standing-by latsnap-replay record @rp's events into the session, each
 * at its time, those older than its buffers left out. Its buffers are in the session's
 * snapshots until replay_finish(): take them in between.
 *
 * Return: 0 with @res filled, or a negative errno with why in @why (the helper let go).
 */
int replay_start(struct replay *rp, struct replay_result *res, char *why, size_t why_size)
{
	unsigned long long recorded, before, room, ready_ns;
	uint64_t len = rp->len, deadline;
	char line[512];
	int err;

	memset(res, 0, sizeof(*res));
	rp->used = true;
	if (rp->pid <= 0) {
		snprintf(why, why_size, "%s is not running", REPLAY_HELPER_NAME);
		return -ESRCH;
	}
	if (rp->nomem) {
		snprintf(why, why_size, "no memory for its %zu events", rp->count);
		err = -ENOMEM;
		goto out;
	}
	deadline = ls_now_ns() + (rp->timeout_ms + 5000ULL) * 1000000ULL;
	err = read_answer(rp->out_fd, deadline, line, sizeof(line));
	if (!err && sscanf(line, "ready %llu", &ready_ns) != 1) {
		err = -EIO;
	}
	if (!err) {
		err = write_all(rp->in_fd, &len, sizeof(len));
	}
	if (!err && len) {
		err = write_all(rp->in_fd, rp->buf, rp->len);
	}
	if (!err) {
		err = read_answer(rp->out_fd, deadline, line, sizeof(line));
	}
	if (!err && sscanf(line, "replayed %llu %llu %llu", &recorded, &before, &room) != 3) {
		err = -EIO;
	}
	if (err == -EIO) {
		snprintf(why, why_size, "%s: %.400s", REPLAY_HELPER_NAME,
			 strncmp(line, "error ", 6) ? line : line + 6);
	} else if (err) {
		snprintf(why, why_size, "%s: %s", REPLAY_HELPER_NAME,
			 err == -ETIMEDOUT ? "no answer"
			 : err == -EPIPE  ? "exited without an answer"
					  : strerror(-err));
	} else {
		res->recorded = recorded;
		res->before = before;
		res->room = room;
		res->ready_ns = ready_ns;
	}
out:
	if (err) {
		replay_finish(rp);
	}
	return err;
}

/**
 * replay_pid - the latsnap-replay standing by, or 0
 */
pid_t replay_pid(const struct replay *rp)
{
	return rp->pid > 0 ? rp->pid : 0;
}

/**
 * replay_finish - let latsnap-replay go (its input closed), and its buffers with it
 */
void replay_finish(struct replay *rp)
{
	if (rp->in_fd >= 0) {
		close(rp->in_fd);
	}
	if (rp->out_fd >= 0) {
		close(rp->out_fd);
	}
	rp->in_fd = rp->out_fd = -1;
	if (rp->pid > 0) {
		reap(rp->pid);
	}
	rp->pid = 0;
	rp->used = false;
}

/* The helper's side. */

struct cursor {
	const unsigned char *p;
	const unsigned char *end;
	bool bad;
};

static void get(struct cursor *c, void *out, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, c->p, n);
	c->p += n;
}

static uint32_t get_u32(struct cursor *c)
{
	uint32_t v;

	get(c, &v, sizeof(v));
	return v;
}

static uint64_t get_u64(struct cursor *c)
{
	uint64_t v;

	get(c, &v, sizeof(v));
	return v;
}

static const char *get_str(struct cursor *c)
{
	uint32_t n = get_u32(c);
	const char *s;

	if (n == NO_STR || c->bad) {
		return NULL;
	}
	if ((size_t)(c->end - c->p) < (size_t)n + 1 || c->p[n] != '\0') {
		c->bad = true;
		return NULL;
	}
	s = (const char *)c->p;
	c->p += (size_t)n + 1;
	return s;
}

/* @nr addresses, copied out (the input has no alignment), into @ips of @max. */
static uint32_t get_ips(struct cursor *c, uint32_t nr, uint64_t *ips, uint32_t max)
{
	if (nr > max) {
		c->bad = true;
		return 0;
	}
	get(c, ips, (size_t)nr * sizeof(*ips));
	return nr;
}

/* The most frames a stack may hand over: a user stack is LATSNAP_DEPTH at most. */
#define REPLAY_MAX_FRAMES 1024

/**
 * struct replay_item - one record of the input, as the helper orders them
 * @time: when it happened, trace/lsevents.h's rule: a kernel event at its ts, an outlier and
 *	its kernel stacks at the outlier's end, an unwound stack when the handler was done
 */
struct replay_item {
	uint64_t time;
	size_t seq;
	const unsigned char *rec;
	uint32_t size;
	uint32_t kind;
};

static int item_cmp(const void *a, const void *b)
{
	const struct replay_item *x = a, *y = b;

	if (x->time != y->time) {
		return x->time < y->time ? -1 : 1;
	}
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Decode the record of @it and record it through @ops (or, with !ops, only find its time). */
static int play_one(struct replay_item *it, const struct ls_events *ops)
{
	static uint64_t ips[REPLAY_MAX_FRAMES];
	struct cursor c = { it->rec + 2 * sizeof(uint32_t), it->rec + it->size, false };

	switch (it->kind) {
	case REPLAY_KERNEL_EVENT: {
		static struct ls_ctx_event e;
		const char *name = get_str(&c);

		memset(&e, 0, sizeof(e));
		get(&c, &e, offsetof(struct ls_ctx_event, ips));
		if (e.nr_ips > LS_MAX_DEPTH) {
			return -EINVAL;
		}
		get(&c, e.ips, (size_t)e.nr_ips * sizeof(e.ips[0]));
		it->time = e.ts;
		if (!c.bad && ops) {
			ops->kernel_event(&e, name);
		}
		break;
	}
	case REPLAY_OUTLIER: {
		struct ls_ev_outlier o = { 0 };

		o.kind = get_str(&c);
		o.comm = get_str(&c);
		o.syscall = get_str(&c);
		o.cause = get_str(&c);
		o.flags = get_str(&c);
		o.waker_comm = get_str(&c);
		get(&c, &o.pid, sizeof(o.pid));
		get(&c, &o.tid, sizeof(o.tid));
		get(&c, &o.waker_pid, sizeof(o.waker_pid));
		get(&c, &o.waker_tid, sizeof(o.waker_tid));
		get(&c, &o.syscall_nr, sizeof(o.syscall_nr));
		o.start_ns = get_u64(&c);
		o.end_ns = get_u64(&c);
		o.on_cpu_ns = get_u64(&c);
		o.blocked_ns = get_u64(&c);
		o.runqueue_ns = get_u64(&c);
		o.switches = get_u32(&c);
		get(&c, &o.signalled, sizeof(o.signalled));
		it->time = o.end_ns;
		if (!c.bad && ops) {
			ops->outlier(&o);
		}
		break;
	}
	case REPLAY_KERNEL_STACK: {
		struct ls_ev_stack s = { 0 };

		s.role = get_str(&c);
		s.symbols = get_str(&c);
		s.end_ns = get_u64(&c);
		s.weight_ns = get_u64(&c);
		get(&c, &s.tid, sizeof(s.tid));
		s.index = get_u32(&c);
		s.nr = get_ips(&c, get_u32(&c), ips, REPLAY_MAX_FRAMES);
		s.ips = ips;
		it->time = s.end_ns;
		if (!c.bad && ops) {
			ops->kernel_stack(&s);
		}
		break;
	}
	case REPLAY_USER_STACK: {
		struct ls_ev_user_stack u = { 0 };

		u.end_ns = get_u64(&c);
		u.unwind_ns = get_u64(&c);
		get(&c, &u.pid, sizeof(u.pid));
		get(&c, &u.tid, sizeof(u.tid));
		u.nr = get_ips(&c, get_u32(&c), ips, REPLAY_MAX_FRAMES);
		get(&c, &u.status, sizeof(u.status));
		get(&c, &u.truncated, sizeof(u.truncated));
		u.ips = ips;
		it->time = u.end_ns + u.unwind_ns;
		if (!c.bad && ops && ops->size >= offsetof(struct ls_events, user_stack) +
							   sizeof(ops->user_stack) &&
		    ops->user_stack) {
			ops->user_stack(&u);
		}
		break;
	}
	default:
		return -EINVAL;
	}
	return c.bad ? -EINVAL : 0;
}

/*
 * The trace clock latsnap-replay records with: the time of the event being recorded, in the
 * thread that records them (replay_clock_ns not 0); the monotonic clock, LTTng's own, in any
 * other (lttng-ust's own threads record a statedump whenever a session asks for one).
 */
static __thread uint64_t replay_clock_ns;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t replay_read64(void)
{
	return replay_clock_ns ? replay_clock_ns : monotonic_ns();
}

typedef uint64_t (*clock_u64_fn)(void);
typedef const char *(*clock_str_fn)(void);
typedef int (*clock_uuid_fn)(char *uuid);

/*
 * Take over lttng-ust's trace clock before lttng-ust itself is loaded (it records its first
 * events as it registers), keeping what the monotonic clock says of itself: the session's
 * metadata describes one clock for every process.
 */
static int override_clock(char *why, size_t why_size)
{
	int (*set_read64)(clock_u64_fn), (*set_freq)(clock_u64_fn), (*get_freq)(clock_u64_fn *);
	int (*set_name)(clock_str_fn), (*get_name)(clock_str_fn *);
	int (*set_desc)(clock_str_fn), (*get_desc)(clock_str_fn *);
	int (*set_uuid)(clock_uuid_fn), (*get_uuid)(clock_uuid_fn *);
	int (*enable)(void);
	clock_u64_fn freq;
	clock_str_fn name, desc;
	clock_uuid_fn uuid;
	void *h;
	int ret;

	h = dlopen(UST_COMMON_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		snprintf(why, why_size, "%s", dlerror());
		return -ENOENT;
	}
	*(void **)&set_read64 = dlsym(h, "lttng_ust_trace_clock_set_read64_cb");
	*(void **)&set_freq = dlsym(h, "lttng_ust_trace_clock_set_freq_cb");
	*(void **)&get_freq = dlsym(h, "lttng_ust_trace_clock_get_freq_cb");
	*(void **)&set_name = dlsym(h, "lttng_ust_trace_clock_set_name_cb");
	*(void **)&get_name = dlsym(h, "lttng_ust_trace_clock_get_name_cb");
	*(void **)&set_desc = dlsym(h, "lttng_ust_trace_clock_set_description_cb");
	*(void **)&get_desc = dlsym(h, "lttng_ust_trace_clock_get_description_cb");
	*(void **)&set_uuid = dlsym(h, "lttng_ust_trace_clock_set_uuid_cb");
	*(void **)&get_uuid = dlsym(h, "lttng_ust_trace_clock_get_uuid_cb");
	*(void **)&enable = dlsym(h, "lttng_ust_enable_trace_clock_override");
	if (!set_read64 || !set_freq || !get_freq || !set_name || !get_name || !set_desc ||
	    !get_desc || !set_uuid || !get_uuid || !enable) {
		snprintf(why, why_size, "%s has no trace clock override", UST_COMMON_LIBRARY);
		return -ENOTSUP;
	}
	ret = get_freq(&freq);
	if (!ret) {
		ret = get_name(&name);
	}
	if (!ret) {
		ret = get_desc(&desc);
	}
	if (!ret) {
		ret = get_uuid(&uuid);
	}
	if (!ret) {
		ret = set_read64(replay_read64);
	}
	if (!ret) {
		ret = set_freq(freq);
	}
	if (!ret) {
		ret = set_name(name);
	}
	if (!ret) {
		ret = set_desc(desc);
	}
	if (!ret) {
		ret = set_uuid(uuid);
	}
	if (!ret) {
		ret = enable();
	}
	if (ret) {
		snprintf(why, why_size, "lttng-ust's trace clock override: %s", strerror(-ret));
	}
	return ret;
}

static int read_all(int fd, void *p, size_t n)
{
	unsigned char *c = p;
	ssize_t r;

	while (n) {
		r = read(fd, c, n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			return -EIO;
		}
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * Index the records of @buf in time order, the kernel events older than @floor_ns (what the
 * helper's buffers cannot hold: they began then) left out and counted in @beforep, and the
 * oldest of the others past @max_bytes in @roomp.
 */
static int index_input(const unsigned char *buf, size_t len, uint64_t floor_ns,
		       uint64_t max_bytes, struct replay_item **itemsp, size_t *nrp,
		       uint64_t *beforep, uint64_t *roomp)
{
	struct replay_item *items = NULL;
	size_t nr = 0, cap = 0, off = 0, i, kept;
	uint64_t kernel_bytes = 0;
	uint32_t head[2];

	while (off < len) {
		if (len - off < sizeof(head)) {
			goto bad;
		}
		memcpy(head, buf + off, sizeof(head));
		if (head[1] < sizeof(head) || head[1] > len - off) {
			goto bad;
		}
		if (nr == cap) {
			struct replay_item *grown;

			cap = cap ? cap * 2 : 4096;
			grown = realloc(items, cap * sizeof(*items));
			if (!grown) {
				free(items);
				return -ENOMEM;
			}
			items = grown;
		}
		items[nr] = (struct replay_item){ .seq = nr, .rec = buf + off, .size = head[1],
						   .kind = head[0] };
		if (play_one(&items[nr], NULL)) {
			goto bad;
		}
		if (items[nr].kind == REPLAY_KERNEL_EVENT && items[nr].time >= floor_ns) {
			kernel_bytes += head[1];
		}
		off += head[1];
		nr++;
	}
	qsort(items, nr, sizeof(*items), item_cmp);
	*beforep = *roomp = 0;
	for (i = 0, kept = 0; i < nr; i++) {
		if (items[i].kind == REPLAY_KERNEL_EVENT && items[i].time >= floor_ns &&
		    kernel_bytes > max_bytes) {
			kernel_bytes -= items[i].size;
			++*roomp;
			continue;
		}
		/*
		 * An outlier and its stacks are at its end, which came after the previous
		 * snapshot: never before the buffers. Should one be, it goes at their start.
		 */
		if (items[i].time < floor_ns) {
			if (items[i].kind == REPLAY_KERNEL_EVENT) {
				++*beforep;
				continue;
			}
			items[i].time = floor_ns;
		}
		items[kept++] = items[i];
	}
	*itemsp = items;
	*nrp = kept;
	return 0;
bad:
	free(items);
	return -EINVAL;
}

/**
 * replay_helper_main - latsnap-replay LIBRARY TIMEOUT_MS MAX_BYTES (replay_standby()): once the
 * session's events are enabled in it, says "ready T" (T: the monotonic time, after its buffers
 * were made); then reads the events on its standard input (replay_start()), records them, and
 * says "replayed N M R" (M: older than T, R: past MAX_BYTES, left out), or "error WHY" at any
 * step; then waits for
 * its input to close (the snapshots taken) and exits, its buffers with it.
 */
int replay_helper_main(int argc, char **argv)
{
	struct timespec nap = { 0, 5 * 1000000 };
	const struct ls_events *ops = NULL;
	struct replay_item *items = NULL;
	unsigned char *buf = NULL, byte;
	uint64_t len = 0, before = 0, room = 0, ready_ns, max_bytes;
	unsigned int timeout_ms, waited;
	size_t nr = 0, i;
	char why[512];
	void *handle;
	int ret = 1;

	if (argc != 4) {
		fprintf(stderr, "%s: latsnap's own helper, not a command: see latsnap(1)\n",
			REPLAY_HELPER_NAME);
		return 2;
	}
	timeout_ms = (unsigned int)strtoul(argv[2], NULL, 10);
	max_bytes = strtoull(argv[3], NULL, 10);
	/*
	 * latsnap says when it is done (its input closes, latsnap gone or not): a Ctrl-C to the
	 * terminal's process group, or a service's stop to its cgroup, is for latsnap, whose last
	 * snapshot still needs this one.
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	why[0] = '\0';
	if (override_clock(why, sizeof(why))) {
		goto out;
	}
	handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		snprintf(why, sizeof(why), "%s", dlerror());
		goto out;
	}
	ops = dlsym(handle, LS_EVENTS_SYMBOL);
	if (!ops || ops->abi != LS_EVENTS_ABI || ops->size < sizeof(struct ls_events)) {
		snprintf(why, sizeof(why), "%s: not the library of this latsnap", argv[1]);
		goto out;
	}
	for (waited = 0; !ops->ready(); waited += 5) {
		if (waited >= timeout_ms) {
			snprintf(why, sizeof(why), "its events not enabled after %u ms", timeout_ms);
			goto out;
		}
		nanosleep(&nap, NULL);
	}
	ready_ns = monotonic_ns();
	printf("ready %" PRIu64 "\n", ready_ns);
	fflush(stdout);
	if (read_all(STDIN_FILENO, &len, sizeof(len)) || len > REPLAY_MAX_INPUT) {
		snprintf(why, sizeof(why), "no input");
		goto out;
	}
	buf = malloc(len ? len : 1);
	if (!buf || read_all(STDIN_FILENO, buf, len)) {
		snprintf(why, sizeof(why), "%s", buf ? "input cut short" : strerror(ENOMEM));
		goto out;
	}
	if (index_input(buf, len, ready_ns, max_bytes, &items, &nr, &before, &room)) {
		snprintf(why, sizeof(why), "damaged input");
		goto out;
	}
	for (i = 0; i < nr; i++) {
		replay_clock_ns = items[i].time ? items[i].time : 1;
		play_one(&items[i], ops);
	}
	replay_clock_ns = 0;
	ret = 0;
out:
	if (ret) {
		printf("error %s\n", why);
	} else {
		printf("replayed %zu %" PRIu64 " %" PRIu64 "\n", nr, before, room);
	}
	fflush(stdout);
	/* Its buffers are in the snapshots only while it lives: until latsnap is done. */
	while (read(STDIN_FILENO, &byte, 1) > 0) {
	}
	free(items);
	free(buf);
	return ret;
}
