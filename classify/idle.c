// SPDX-License-Identifier: GPL-2.0
/*
 * idle.c - the idle policy: which waits are a thread waiting for work (see idle.h).
 *
 * Measured on the labelled set of tests/integration/48-idle.t, on tests/labelled/ (85-labelled.t:
 * programs nobody here wrote, and a held-out half the rules were not tuned on) and on an idle
 * machine with -a (bench section 9). Its verdicts go by what the thread did and what ended its
 * wait (a lock passed on, a child's exit, its own timer, work come), never by a program's name. What it cannot tell apart, it leaves counted as latency: a client that
 * waits for a reply on a socket at the same place again and again looks like a server waiting
 * for its next request, so a socket or futex wait at a place the thread came back to is idle
 * only when it is not the process's main thread or the thread was already there when tracking
 * began. A pipe or a terminal brings data from one side only: its reader is a consumer, idle
 * wherever it comes back. Rules (`idle`, `!idle`) settle what the defaults get wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/idle.h"
#include "classify/rules.h"
#include "lib/outlier.h"
#include "lib/proc.h"
#include "lib/serving.h"
#include "lib/util.h"

/*
 * What a wait waits for, told by the same matchers as the cause rules. An event nobody owns:
 * `stream`, data that comes from one side whether the thread asked or not (a pipe, a terminal,
 * a signal, a timer, an eventfd); `peer`, a wake-up or data that may be the answer to what the
 * thread asked (a socket, a condition variable or other futex that is not a lock, poll). `busy`:
 * anything that makes the thread wait while it does work, which wins over the event it may be
 * inside of (a page fault copying a pipe's data out, reclaim). A futex is told by its arguments
 * (futex:lock or futex:wait) and by the user stack where the preload library unwound it.
 */
static const char event_rules_text[] =
	"900 kernel:*exc_page_fault|*handle_mm_fault|try_to_free*pages|shrink_node = busy\n"
	"900 kernel:__alloc_pages_direct_compact|out_of_memory|balance_dirty_pages = busy\n"
	"900 kernel:folio_wait_bit*|__folio_lock*|submit_bio_wait|lock_mm_and_find_vma = busy\n"
	"900 kernel:fdget_pos|percpu_rwsem_wait|*pipe_write|pipe_wait_writable = busy\n"
	"470 user:LWLockAcquire|LWLockAcquireOrWait|LWLockWaitForVar|ProcSleep|WaitOnLock = busy\n"
	"460 syscall:futex user:*lll_lock_wait*|*pthread_mutex_*lock*|*pthread_rwlock_*lock* = busy\n"
	"460 syscall:futex user:*pthread_*join* = busy\n"
	/* The JVM's contended synchronized: a lock (Python's Lock is not told from its queues'). */
	"460 syscall:futex user:*ObjectMonitor*enter*|*ObjectMonitor*EnterI* = busy\n"
	"450 syscall:futex user:*pthread_cond_*wait*|*sem_*wait* = peer\n"
	"440 syscall:futex futex:lock = busy\n"
	"430 syscall:futex futex:wait = peer\n"
	"400 kernel:*pipe_read|pipe_wait_readable|n_tty_read|tty_read = stream\n"
	"400 kernel:eventfd_read|inotify_read|timerfd_read_iter|signalfd_read_iter = stream\n"
	"400 kernel:do_msgrcv|wq_sleep|__do_sys_pause|sigsuspend|do_sigtimedwait = stream\n"
	"400 kernel:unix_stream_read_generic|*unix_*recvmsg|unix_accept = peer\n"
	"400 kernel:tcp_recvmsg*|udp*_recvmsg|__skb_recv_udp|inet_csk_accept = peer\n"
	"400 kernel:sk_wait_data|__skb_wait_for_more_packets|skb_recv_datagram = peer\n"
	"400 kernel:do_sys_poll|do_select|core_sys_select|do_epoll_wait|do_epoll_pwait = peer\n"
	"400 kernel:io_cqring_wait = peer\n"
	"100 syscall:recv*|accept*|*poll|*select*|epoll_*wait*|io_uring_enter = peer\n"
	"100 syscall:pause|rt_sigsuspend|rt_sigtimedwait|msgrcv|mq_timedreceive = stream\n";

/* A place a thread waited at: its syscall and its innermost user frame. */
struct site_key {
	int32_t tid;
	int32_t nr;
	uint64_t ip;
};

enum site_seen {
	SITE_NEW, /* remembered from now on */
	SITE_CAME_BACK, /* an earlier wait of the thread was there */
	SITE_AT_START, /* the thread was waiting there when tracking began */
};

/*
 * Places seen, open addressing. Full (three quarters), it starts over: some threads then have
 * one more wait counted as latency before their place is known again.
 */
#define SITES_SLOTS 8192
/*
 * A thread that blocked at most this many times before a wait is new: starting up, it may have
 * waited for a lock or two (workers of a pool take the queue's lock together), not for a job.
 */
#define YOUNG_SWITCHES 8
#define ENTRIES_MAX 1024

/* The verdicts on waits reported while they lasted: their later reports get the same. */
#define LASTING_MAX 256

/* The ended waits judged idle most recently: a lock's holder may have been in one (holder_idle()). */
#define RECENT_IDLE_MAX 64

struct recent_idle {
	int32_t pid, tid;
	uint64_t start_ns, end_ns;
};

struct lasting {
	int32_t tid;
	uint64_t start_ns;
	bool idle;
	const char *why;
};

/*
 * Processes known to serve or not (serving()), by pid and start time (pids are reused). A "no" is
 * asked again sooner than a "yes": a server's threads may start before it listens.
 */
#define SERVED_SLOTS 64
#define SERVED_YES_NS (10 * 1000000000ULL)
#define SERVED_NO_NS (1000000000ULL)

struct served {
	int32_t pid;
	unsigned long long start_time;
	uint64_t probed_ns; /* 0: not probed yet */
	bool listens;
	bool worked; /* a thread of it was in a unit of work */
	enum { FORKED_UNKNOWN, FORKED_NO, FORKED_YES } forked; /* forked_worker() */
};

struct served_cache {
	struct served slot[SERVED_SLOTS];
	size_t next; /* the slot a new process takes */
};

struct idle_policy {
	struct rules *events;
	const struct rules *rules;
	bool enabled;
	struct site_key *sites;
	bool *used;
	bool *at_start;
	size_t nr_sites;
	struct idle_entry *entries;
	size_t nr_entries;
	struct lasting lasting[LASTING_MAX];
	size_t next_lasting;
	struct recent_idle recent[RECENT_IDLE_MAX];
	size_t next_recent;
	uint64_t count;
	/* Written by decide() through a const policy: a cache, not a verdict. */
	struct served_cache *served;
};

/**
 * idle_open() - a policy for one run
 * @rules: the run's rules, for their `idle` and `!idle` rules (may be NULL)
 * @enabled: false with --include-idle: nothing is idle
 *
 * Return: 0, or -ENOMEM.
 */
int idle_open(struct idle_policy **policyp, const struct rules *rules, bool enabled)
{
	struct idle_policy *p = calloc(1, sizeof(*p));
	int err = -ENOMEM;

	*policyp = NULL;
	if (!p) {
		goto out;
	}
	p->rules = rules;
	p->enabled = enabled;
	p->sites = calloc(SITES_SLOTS, sizeof(*p->sites));
	p->used = calloc(SITES_SLOTS, sizeof(*p->used));
	p->at_start = calloc(SITES_SLOTS, sizeof(*p->at_start));
	p->entries = calloc(ENTRIES_MAX, sizeof(*p->entries));
	p->served = calloc(1, sizeof(*p->served));
	if (!p->sites || !p->used || !p->at_start || !p->entries || !p->served) {
		goto out;
	}
	err = rules_parse(event_rules_text, "idle policy", &p->events);
	if (err) {
		goto out;
	}
	*policyp = p;
	p = NULL;
out:
	idle_close(p);
	return err;
}

void idle_close(struct idle_policy *policy)
{
	if (!policy) {
		return;
	}
	rules_free(policy->events);
	free(policy->sites);
	free(policy->used);
	free(policy->at_start);
	free(policy->entries);
	free(policy->served);
	free(policy);
}

static size_t site_hash(const struct site_key *k)
{
	uint64_t h = (uint64_t)(uint32_t)k->tid * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)(uint32_t)k->nr << 32 | (uint32_t)k->nr) * 0xc2b2ae3d27d4eb4fULL;
	h ^= k->ip * 0x165667b19e3779f9ULL;
	h ^= h >> 29;
	return (size_t)(h % SITES_SLOTS);
}

/* Whether and how @k was seen before; remembered from now on either way. */
static enum site_seen site_seen(struct idle_policy *p, const struct site_key *k, bool at_start)
{
	size_t i = site_hash(k);

	while (p->used[i]) {
		if (!memcmp(&p->sites[i], k, sizeof(*k))) {
			return p->at_start[i] ? SITE_AT_START : SITE_CAME_BACK;
		}
		i = (i + 1) % SITES_SLOTS;
	}
	if (p->nr_sites >= SITES_SLOTS * 3 / 4) {
		memset(p->used, 0, SITES_SLOTS * sizeof(*p->used));
		p->nr_sites = 0;
		i = site_hash(k);
	}
	p->used[i] = true;
	p->at_start[i] = at_start;
	p->sites[i] = *k;
	p->nr_sites++;
	return SITE_NEW;
}

/**
 * idle_set_rules() - the run's rules changed (record's reload): their `idle` and `!idle` rules
 * judge from now on
 * @rules: the new rules, which must outlive the policy or the next call (may be NULL)
 */
void idle_set_rules(struct idle_policy *policy, const struct rules *rules)
{
	policy->rules = rules;
}

/**
 * idle_seed() - thread @tid was waiting in syscall @syscall_nr at user @ip when tracking began:
 * a place it waits at between units of work, for all latsnap knows
 */
void idle_seed(struct idle_policy *policy, int32_t tid, int32_t syscall_nr, uint64_t ip)
{
	struct site_key k = { .tid = tid, .nr = syscall_nr, .ip = ip };

	if (policy && policy->enabled) {
		site_seen(policy, &k, true);
	}
}

/*
 * The length of @symbol without a compiler clone's suffix (.constprop.0, .isra.0, .part.0, .cold)
 * or a symbol version (@GLIBC_): a dot alone ends nothing (Go's runtime.stopm, C++'s lambdas).
 */
static size_t plain_name_len(const char *symbol)
{
	static const char *const suffixes[] = { ".constprop.", ".isra.", ".part.", ".cold",
						".lto_priv." };
	size_t len = strcspn(symbol, "@"), i;
	const char *at;

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		at = strstr(symbol, suffixes[i]);
		if (at && (size_t)(at - symbol) < len) {
			len = (size_t)(at - symbol);
		}
	}
	return len;
}

static const char *frame_name(const struct outlier_frame *f, char *buf, size_t size)
{
	if (f->symbol && *f->symbol) {
		snprintf(buf, size, "%.*s", (int)plain_name_len(f->symbol), f->symbol);
	} else {
		snprintf(buf, size, "0x%llx", (unsigned long long)f->addr);
	}
	return buf;
}

/*
 * A goroutine's wait reasons, as Go names them (the flag go-wait, tracker/goroutines.c), that
 * park it for work: a channel or select, the netpoller, a condition variable, the runtime's own
 * idle goroutines. A lock, a semaphore (Go 1.19's sync.Mutex), a sleep or a channel send (a
 * producer held up by its consumer) is latency.
 */
static const char *const go_idle_reasons[] = {
	"chan receive",		  "chan receive (nil chan)",
	"chan send (nil chan)",	  "select",
	"select (no cases)",	  "IO wait",
	"sync.Cond.Wait",	  "GC worker (idle)",
	"GC sweep wait",	  "GC scavenge wait",
	"force gc (idle)",	  "finalizer wait",
	"timer goroutine (idle)", "trace reader (blocked)",
};

#define GO_WAIT_FLAG "go-wait: "

/* The wait reason of @o when it is a goroutine's wait, or NULL. */
static const char *go_wait_reason(const struct outlier *o)
{
	size_t i;

	for (i = 0; i < o->nr_flags; i++) {
		if (!strncmp(o->flags[i], GO_WAIT_FLAG, strlen(GO_WAIT_FLAG))) {
			return o->flags[i] + strlen(GO_WAIT_FLAG);
		}
	}
	return NULL;
}

static bool go_idle_reason(const char *reason)
{
	size_t i;

	for (i = 0; i < sizeof(go_idle_reasons) / sizeof(go_idle_reasons[0]); i++) {
		if (!strcmp(reason, go_idle_reasons[i])) {
			return true;
		}
	}
	return false;
}

/*
 * "pthread_cond_wait in bioProcessBackgroundJobs (futex)": the outermost frame of the library
 * the wait is in, and its caller outside it; the innermost frame alone when that is all the
 * stack holds.
 */
static void site_text(const struct outlier *o, char *text, size_t size)
{
	const struct outlier_frames *fr = &o->user_stack.frames;
	const char *what = o->syscall ? o->syscall : "off-CPU";
	const char *lib = fr->nr ? fr->v[0].module : NULL;
	const char *go_reason = go_wait_reason(o);
	char a[96], b[96];
	size_t k;

	if (go_reason) {
		/* "chan receive in main.idler (goroutine)": the first frame outside the runtime. */
		for (k = 1; k < fr->nr; k++) {
			if (fr->v[k].symbol && strncmp(fr->v[k].symbol, "runtime.", 8)) {
				break;
			}
		}
		snprintf(text, size, "%s in %s (goroutine)", go_reason,
			 k < fr->nr ? frame_name(&fr->v[k], a, sizeof(a)) : "runtime.gopark");
		return;
	}
	if (!fr->nr) {
		snprintf(text, size, "%s", what);
		return;
	}
	for (k = 1; k < fr->nr; k++) {
		if (!lib || !fr->v[k].module || strcmp(fr->v[k].module, lib)) {
			break;
		}
	}
	if (k < fr->nr) {
		snprintf(text, size, "%s in %s (%s)", frame_name(&fr->v[k - 1], a, sizeof(a)),
			 frame_name(&fr->v[k], b, sizeof(b)), what);
	} else {
		snprintf(text, size, "%s (%s)", frame_name(&fr->v[0], a, sizeof(a)), what);
	}
}

static void count_idle(struct idle_policy *p, const struct outlier *o)
{
	struct idle_entry *e = NULL;
	char site[IDLE_SITE_LEN];
	uint64_t delta;
	size_t i;

	site_text(o, site, sizeof(site));
	for (i = 0; i < p->nr_entries; i++) {
		if (p->entries[i].tid == o->tid && p->entries[i].pid == o->pid &&
		    !strcmp(p->entries[i].site, site)) {
			e = &p->entries[i];
			break;
		}
	}
	if (!e && p->nr_entries == ENTRIES_MAX) {
		/* Counted in all, not listed: the list is for people. */
		if (o->state != OUTLIER_STILL_BLOCKED) {
			p->count++;
		}
		return;
	}
	if (!e) {
		e = &p->entries[p->nr_entries++];
		e->pid = o->pid;
		e->tid = o->tid;
		snprintf(e->comm, sizeof(e->comm), "%s", o->comm ? o->comm : "");
		snprintf(e->site, sizeof(e->site), "%s", site);
	}
	/*
	 * A wait reported while it lasts (still-blocked) is counted then, for it may never end
	 * (the process exits); its end, or a later report of it, adds only the time since.
	 */
	if (e->open_ns && e->open_start_ns == o->start_ns) {
		delta = o->duration_ns > e->open_ns ? o->duration_ns - e->open_ns : 0;
	} else {
		delta = o->duration_ns;
		e->count++;
		e->window_count++;
		p->count++;
	}
	e->total_ns += delta;
	e->window_ns += delta;
	e->open_start_ns = o->start_ns;
	e->open_ns = o->state == OUTLIER_STILL_BLOCKED ? o->duration_ns : 0;
}

enum wait_for {
	WAIT_BUSY, /* a lock, the disk, memory, a sleep, itself: never idle by default */
	WAIT_STREAM,
	WAIT_PEER,
};

/* What @o waits for: an event nobody owns (and which kind), or not. */
static enum wait_for waits_for(const struct idle_policy *p, const struct outlier *o)
{
	struct rules_match m;

	if (o->kind != OUTLIER_SYSCALL) {
		return WAIT_BUSY;
	}
	rules_classify(p->events, o, &m);
	if (!m.categorized) {
		return WAIT_BUSY;
	}
	return !strcmp(m.cause, "stream") ? WAIT_STREAM :
	       !strcmp(m.cause, "peer")	  ? WAIT_PEER :
					    WAIT_BUSY;
}

/*
 * Whether @o's wait ended by its own timeout: it said so (-ETIMEDOUT: a futex, a timed semaphore
 * or message queue), or it was woken by the timer it armed (hrtimer_wakeup, in the interrupt),
 * not by anyone. Nothing it waited for came. The return value counts even where the wakeup went
 * unseen (52-work f2, ci58: a futex tick of 80 ms without a waker, called latency).
 */
static bool timed_out(const struct outlier *o)
{
	size_t i;

	if (o->kind == OUTLIER_SYSCALL && o->ret == -ETIMEDOUT) {
		return true;
	}
	if (!o->waker || o->waker->tid) {
		return false;
	}
	for (i = 0; i < o->waker->frames.nr && i < 4; i++) {
		if (o->waker->frames.v[i].symbol &&
		    !strcmp(o->waker->frames.v[i].symbol, "hrtimer_wakeup")) {
			return true;
		}
	}
	return false;
}

/*
 * The functions that sleep on a program's request, whatever they wait in: Java's Thread.sleep
 * (JVM_Sleep, and its JIT frame) parks in a timed condition wait, MariaDB's SLEEP() waits in
 * Interruptible_wait, Python's time.sleep in select or clock_nanosleep, Go's time.Sleep parks its
 * goroutine. Not any function with "sleep" in its name: a runtime's own housekeeping thread
 * sleeps between rounds (the JVM's WatcherThread::sleep), waiting for work.
 */
static const char *const sleep_functions[] = {
	"sleep",     "usleep",	"nanosleep",  "__nanosleep", "clock_nanosleep", "__clock_nanosleep",
	"JVM_Sleep", "pysleep", "time_sleep", "time.Sleep",  "pg_sleep"
};

static bool is_sleep_function(const char *symbol)
{
	size_t len = strcspn(symbol, "@"), i;

	for (i = 0; i < sizeof(sleep_functions) / sizeof(sleep_functions[0]); i++) {
		if (strlen(sleep_functions[i]) == len &&
		    !strncmp(symbol, sleep_functions[i], len)) {
			return true;
		}
	}
	return strstr(symbol, "Interruptible_wait") || strstr(symbol, "Item_func_sleep") ||
	       strstr(symbol, "java.lang.Thread.sleep");
}

/*
 * A wait that sleeps when it runs to its timeout: JavaScript's one synchronous sleep is
 * Atomics.wait on a value nobody changes (V8's Builtin_AtomicsWait < FutexEmulation::WaitSync,
 * a timed condition wait); woken before, it waited for another thread, as a lock does.
 */
static bool is_timed_sleep_function(const char *symbol)
{
	return strstr(symbol, "AtomicsWait") ||
	       (strstr(symbol, "FutexEmulation") && strstr(symbol, "WaitSync"));
}

/*
 * Whether the thread's runtime said it was stopped with a deadline (flag ruby-timed: Ruby's
 * status, read by the preload library) in a condition wait (a futex), or a ppoll for the
 * thread that holds the signal pipe: Kernel#sleep, or a wait with a timeout, in the same timed
 * wait whichever (a stripped libruby names neither). Ruby says the same of a thread in I/O
 * outside the GVL (an accept's ppoll): the library leaves that one unflagged (its blocking
 * region).
 */
static bool runtime_timed_stop(const struct outlier *o)
{
	return o->syscall &&
	       (!strncmp(o->syscall, "futex", 5) || !strcmp(o->syscall, "ppoll") ||
		!strcmp(o->syscall, "poll") || !strcmp(o->syscall, "pselect6") ||
		!strcmp(o->syscall, "select")) &&
	       outlier_has_flag(o, "ruby-timed:");
}

/* Whether @o waits in a sleep: a sleep is latency, asked for, even when it runs to its timeout. */
static bool in_sleep(const struct outlier *o)
{
	const struct outlier_frames *fr = &o->user_stack.frames;
	bool timed = timed_out(o);
	size_t i;

	if (runtime_timed_stop(o)) {
		return true;
	}

	if (o->syscall &&
	    (!strcmp(o->syscall, "nanosleep") || !strcmp(o->syscall, "clock_nanosleep"))) {
		return true;
	}
	for (i = 0; i < fr->nr && i < 24; i++) {
		if (fr->v[i].symbol && (is_sleep_function(fr->v[i].symbol) ||
					(timed && is_timed_sleep_function(fr->v[i].symbol)))) {
			return true;
		}
	}
	return false;
}

/*
 * Whether @o's wait ran to its own timeout, nothing cut short: a sleep that returned 0 (a signal
 * makes it -EINTR), a poll, select or epoll_wait that returned 0 (no descriptor ready), a futex
 * (a timed condition variable or semaphore), a timed message or signal wait that said it timed
 * out, any other wait woken by the timer it armed (timed_out()). A wait seen while it lasts has
 * not ended yet.
 */
static bool slept_to_timeout(const struct outlier *o)
{
	static const char *const zero_on_timeout[] = {
		"nanosleep",	"clock_nanosleep", "poll",	   "ppoll",
		"select",	"pselect6",	   "epoll_wait",   "epoll_pwait",
		"epoll_pwait2", "io_getevents",	   "io_pgetevents"
	};
	size_t i;

	if (o->kind != OUTLIER_SYSCALL || !o->syscall || o->state != OUTLIER_ENDED) {
		return false;
	}
	for (i = 0; i < sizeof(zero_on_timeout) / sizeof(zero_on_timeout[0]); i++) {
		if (!strcmp(o->syscall, zero_on_timeout[i])) {
			return o->ret == 0;
		}
	}
	if (!strcmp(o->syscall, "rt_sigtimedwait") || !strcmp(o->syscall, "semtimedop")) {
		return o->ret == -EAGAIN;
	}
	if (!strncmp(o->syscall, "futex", 5) || !strcmp(o->syscall, "mq_timedreceive")) {
		/* They say when they time out: 0 is a wake-up by someone, whatever else fired. */
		return o->ret == -ETIMEDOUT;
	}
	/* Any other wait: it said so, or the timer it armed woke it. */
	return o->ret == -ETIME || timed_out(o);
}

/* Whether @o waits for descriptors to be ready: poll, select, epoll (an event loop's wait). */
static bool waits_for_events(const struct outlier *o)
{
	static const char *const event_waits[] = {
		"poll",	       "ppoll",	       "select",       "pselect6",     "epoll_wait",
		"epoll_pwait", "epoll_pwait2", "io_getevents", "io_pgetevents"
	};
	size_t i;

	for (i = 0; o->kind == OUTLIER_SYSCALL && o->syscall &&
		    i < sizeof(event_waits) / sizeof(event_waits[0]);
	     i++) {
		if (!strcmp(o->syscall, event_waits[i])) {
			return true;
		}
	}
	return false;
}

/* Whether @name is a kernel function on @w's stack, among its first 32 frames. */
static bool waker_in(const struct outlier_waker *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->frames.nr && i < 32; i++) {
		if (w->frames.v[i].symbol && !strcmp(w->frames.v[i].symbol, name)) {
			return true;
		}
	}
	return false;
}

/*
 * Whether a process @o's thread started ended its wait for descriptors by exiting (its pipes
 * closing: Node's execSync waits so in epoll_wait): the waker, another process, was in do_exit,
 * and descriptors came ready. The BPF side reports such an idle-list wait outside work only when it was a child's
 * (or a child's child's) exit that ended it. A peer's exit ending a socket read is not one: no
 * wait for descriptors; and a wait4, waitid or sigsuspend (a launcher's, for its program's whole
 * life) is never reported.
 */
static bool ended_by_child_exit(const struct outlier *o)
{
	const struct outlier_waker *w = o->waker;

	/*
	 * Descriptors came ready (the child's pipes closed): its SIGCHLD, delivered to whichever
	 * thread of the process, ends another's wait with -EINTR (a Node helper's uv loop).
	 */
	return w && w->tid && w->pid != o->pid && waits_for_events(o) && o->ret > 0 &&
	       (waker_in(w, "do_exit") || waker_in(w, "do_group_exit"));
}

/*
 * Whether @o waited for descriptors until its own timeout with no sleep function on its stack:
 * an event loop awaiting a timer (asyncio.sleep, setTimeout), free to run whatever came on its
 * descriptors meanwhile, not held up by anything. An event loop waits in epoll, or polls more
 * than one descriptor; a poll of one (a reply awaited with a timeout) or a select (its count is
 * not told) may be a request held up by what never came. A sleep function that waits there
 * (PostgreSQL's pg_sleep on its latch, Python's time.sleep in select) is a sleep.
 */
static bool free_until_timer(const struct outlier *o)
{
	bool loop;

	if (!o->syscall || !slept_to_timeout(o) || in_sleep(o)) {
		return false;
	}
	loop = !strncmp(o->syscall, "epoll_", 6) ||
	       ((!strcmp(o->syscall, "poll") || !strcmp(o->syscall, "ppoll")) && o->has_args &&
		o->args[1] >= 2);
	return loop;
}

/* @pid's entry in the cache of served processes, as it is now (started at @start_time). */
static struct served *served_of(const struct idle_policy *p, int32_t pid,
				unsigned long long start_time)
{
	struct served *e;
	size_t i;

	for (i = 0; i < SERVED_SLOTS; i++) {
		e = &p->served->slot[i];
		if (e->pid == pid) {
			if (e->start_time != start_time) {
				/* Another process with the pid: nothing known of it yet. */
				memset(e, 0, sizeof(*e));
				e->pid = pid;
				e->start_time = start_time;
			}
			return e;
		}
	}
	e = &p->served->slot[p->served->next++ % SERVED_SLOTS];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->start_time = start_time;
	return e;
}

/* A thread of @o's process is in a unit of work, or was: the process serves. */
static void note_worked(struct idle_policy *p, const struct outlier *o)
{
	unsigned long long start_time;
	size_t i;

	if (!o->worked && !o->in_work && !o->got_work) {
		return;
	}
	for (i = 0; i < SERVED_SLOTS; i++) {
		if (p->served->slot[i].pid == o->pid && p->served->slot[i].worked) {
			/* Checked against the start time when it matters (serving()). */
			return;
		}
	}
	if (!proc_start_time(o->pid, &start_time)) {
		served_of(p, o->pid, start_time)->worked = true;
	}
}

/*
 * Whether @o's process serves: one of its threads was in a unit of work, or it holds a socket
 * that listens (lib/serving.c). Read from /proc, so only for a live process: asked last, for a
 * wait the rest of the policy calls a sleep or a timeout outside work.
 */
static bool serving(const struct idle_policy *p, const struct outlier *o)
{
	unsigned long long start_time;
	struct served *e;
	uint64_t now;

	if (proc_start_time(o->pid, &start_time)) {
		return false;
	}
	e = served_of(p, o->pid, start_time);
	if (e->worked) {
		return true;
	}
	now = ls_now_ns();
	if (!e->probed_ns || now - e->probed_ns > (e->listens ? SERVED_YES_NS : SERVED_NO_NS)) {
		e->listens = serving_probe(o->pid) == 1;
		e->probed_ns = now;
	}
	return e->listens;
}

/*
 * Whether @o's process is a worker its parent forked and did not exec: the same code at the same
 * addresses as its parent (a prefork server's worker, Python's multiprocessing, a pool of processes
 * fed over pipes). Its main thread does the jobs handed to it, as a pool's thread does, not its
 * process's own work. Read from /proc once per process, so only for a live one.
 */
static bool forked_worker(const struct idle_policy *p, const struct outlier *o)
{
	struct proc_stat st;
	struct served *e;
	uint64_t hash;

	if (proc_stat_read(o->pid, 0, &st)) {
		return false;
	}
	e = served_of(p, o->pid, st.start_time);
	if (e->forked == FORKED_UNKNOWN) {
		hash = st.ppid > 1 ? proc_code_hash(o->pid) : 0;
		e->forked = hash && hash == proc_code_hash(st.ppid) ? FORKED_YES : FORKED_NO;
	}
	return e->forked == FORKED_YES;
}

/*
 * A server's housekeeping: a thread never in a unit of work sleeps or waits for an event to its
 * own timeout, in a process that serves (memcached's LRU maintainer backs off from 21 ms to 1 s
 * in usleep). A sleep inside a unit of work, a sleep cut short (a signal, another thread), a
 * lock's timed wait, and the sleeps of a program that serves nothing (a batch job) stay latency.
 */
static bool housekeeping(const struct idle_policy *p, const struct outlier *o)
{
	if (o->worked || o->answered || !slept_to_timeout(o)) {
		return false;
	}
	if (!in_sleep(o) && waits_for(p, o) == WAIT_BUSY) {
		return false;
	}
	return serving(p, o);
}

/* Whether @o waits in a POSIX semaphore (sem_wait, sem_timedwait, sem_clockwait: glibc's). */
static bool in_semaphore(const struct outlier *o)
{
	const struct outlier_frames *fr = &o->user_stack.frames;
	size_t i;

	for (i = 0; o->syscall && !strncmp(o->syscall, "futex", 5) && i < fr->nr && i < 4; i++) {
		if (fr->v[i].symbol && (!strncmp(fr->v[i].symbol, "sem_", 4) ||
					strstr(fr->v[i].symbol, "_sem_wait"))) {
			return true;
		}
	}
	return false;
}

/*
 * Whether @o is a lock passed on by its holder: a semaphore wait (a count one thread gives back
 * for another to take: Python's threading.Lock is one) that another helper thread of its process
 * ended, outside any unit of work (work handed over from a unit is got_work, judged before). A
 * condition variable is an event, whoever signals it (a pool's jobs: MariaDB's tpool workers wake
 * each other); the main thread does the process's work (decide()): a helper it wakes is handed a
 * job, as a pool's worker is.
 */
static bool woken_by_sibling(const struct outlier *o)
{
	return o->waker && o->waker->tid && o->waker->pid == o->pid && o->waker->tid != o->tid &&
	       o->waker->tid != o->pid && o->state == OUTLIER_ENDED && in_semaphore(o);
}

/*
 * Whether @o, a wait for a lock, was spent behind a holder that was itself waiting for work: the
 * thread that ended it (the holder, at its unlock) had a wait judged idle that ended within @o
 * and covered at least half of it. A pool whose workers take a lock around the queue's receive
 * (Rust's `rx.lock().unwrap().recv()`) queues every idle worker but one on that lock: they wait
 * for work, behind the one that waits for it in the queue. A lock held across a sleep, I/O or a
 * computation is latency as before: its holder's wait (if any) was not idle. The lock may be
 * another process's too (a semaphore in shared memory: Python's multiprocessing queue).
 */
static bool holder_idle(const struct idle_policy *p, const struct outlier *o)
{
	uint64_t end = o->start_ns + o->duration_ns, overlap, start;
	const struct recent_idle *r;
	size_t i;

	if (!o->waker || !o->waker->tid || o->waker->tid == o->tid || o->state != OUTLIER_ENDED) {
		return false;
	}
	for (i = 0; i < RECENT_IDLE_MAX; i++) {
		r = &p->recent[i];
		if (r->tid != o->waker->tid || r->pid != o->waker->pid || r->end_ns > end ||
		    r->end_ns <= o->start_ns) {
			continue;
		}
		start = r->start_ns > o->start_ns ? r->start_ns : o->start_ns;
		overlap = r->end_ns - start;
		if (overlap * 2 >= o->duration_ns) {
			return true;
		}
	}
	return false;
}

/*
 * decide - the policy, for @o waiting at a place @seen as it was: the rules first, then what the
 * thread is doing (its work context), then, where that says nothing, the kind of wait and
 * whether it is the thread's home wait.
 */
static bool decide(const struct idle_policy *p, const struct outlier *o, enum site_seen seen,
		   bool live, const char **why)
{
	/*
	 * A main thread does its process's work: a reply it asked for on a socket or a futex is
	 * latency each time, even at the same place. A forked worker process's main thread is a
	 * worker.
	 */
	bool worker = o->tid != o->pid || (live && forked_worker(p, o));
	const char *go_reason;
	enum wait_for what;

	switch (rules_idle_verdict(p->rules, o)) {
	case RULES_IDLE_IDLE:
		*why = "an idle rule matches it";
		return true;
	case RULES_IDLE_COUNT:
		return false;
	default:
		break;
	}
	/* A goroutine's wait: its M's work context is not the goroutine's; its reason tells. */
	go_reason = go_wait_reason(o);
	if (go_reason) {
		*why = "a goroutine parked for work (a channel, select, the netpoller, a condition "
		       "variable, the runtime's idle goroutines)";
		return go_idle_reason(go_reason);
	}
	/*
	 * Work context first: a wait inside a unit of work is latency whatever it waits on; a
	 * wait that work ended (a request read, a job handed over), or a serving thread's wait
	 * between units, is idle whatever it waits on. A sleep is latency.
	 */
	if (o->got_work) {
		*why = "it waited for work, and work came (a request read, or a job handed over)";
		return true;
	}
	if (o->in_work && o->handed && timed_out(o) && !in_sleep(o)) {
		/*
		 * Woken by a thread in work (the JVM's WatcherThread unparked while a request ran),
		 * then waiting until its own timeout: nobody in the unit waited for it to wake, and
		 * nothing of the unit came. Its periodic sleeps were the request's latency before.
		 */
		*why = "handed work, it then slept to its own timeout: nothing of the unit came";
		return true;
	}
	if (free_until_timer(o)) {
		*why = "an event loop's wait for descriptors ran to its timer: the thread was free to "
		       "run other work, nothing held it up";
		return true;
	}
	if (o->in_work || ended_by_child_exit(o)) {
		/* A child's exit ended it: the caller waited for work it started. */
		return false;
	}
	if (live && housekeeping(p, o)) {
		*why = "a server's housekeeping: a thread never in work slept or waited to its own "
		       "timeout in a process that serves";
		return true;
	}
	/*
	 * The same housekeeper reported while it still sleeps (--hang, or the run's end): whether
	 * it runs to its timeout is not known yet, but it came back to where it slept before,
	 * never in work, in a process that serves (memcached's LRU maintainer at a SIGINT).
	 */
	if (live && o->state != OUTLIER_ENDED && seen == SITE_CAME_BACK && !o->worked &&
	    !o->answered && in_sleep(o) && serving(p, o)) {
		*why = "a server's housekeeping, still asleep where its thread slept before";
		return true;
	}
	if (o->worked && !in_sleep(o)) {
		*why = "between units of work: its last one was answered or done";
		return true;
	}
	what = waits_for(p, o);
	if (what == WAIT_BUSY && !in_sleep(o) && holder_idle(p, o)) {
		*why = "a lock held by a thread that was waiting for work: queued for the next job "
		       "behind it";
		return true;
	}
	if (what == WAIT_BUSY || o->answered || in_sleep(o)) {
		/* A client reading the answer it asked for waits for its peer, each time. */
		return false;
	}
	if (timed_out(o) && !in_sleep(o)) {
		*why = "it timed out: nothing it waited for came";
		return true;
	}
	if (seen == SITE_AT_START) {
		*why = "its thread's home wait: it was waiting there when tracking began";
		return true;
	}
	if (seen == SITE_CAME_BACK && (worker || what == WAIT_STREAM)) {
		*why = "its thread's home wait: it came back to where it waited before";
		return true;
	}
	if (seen == SITE_NEW && worker && o->nvcsw && o->nvcsw <= o->switches + YOUNG_SWITCHES &&
	    !woken_by_sibling(o)) {
		*why = "the first wait of a new thread: waiting for its first work";
		return true;
	}
	if (worker && !(seen == SITE_NEW && woken_by_sibling(o))) {
		/*
		 * A helper thread never in work, waiting for an event nobody owns and not for an
		 * answer it asked: a pool's worker, a housekeeper, waiting for its next job.
		 */
		*why = "a helper thread, never in work, waits for an event: for its next job";
		return true;
	}
	return false;
}

/* The verdict on @o when it was reported while it lasted, or NULL. */
static struct lasting *lasting_of(struct idle_policy *p, const struct outlier *o)
{
	size_t i;

	for (i = 0; i < LASTING_MAX && i < p->next_lasting; i++) {
		if (p->lasting[i].tid == o->tid && p->lasting[i].start_ns == o->start_ns) {
			return &p->lasting[i];
		}
	}
	return NULL;
}

/* The place of @o, as the policy remembers it. */
static struct site_key site_of(const struct outlier *o)
{
	const struct outlier_frames *fr = &o->user_stack.frames;
	struct site_key k = { 0 };

	k.tid = o->tid;
	/* A sleep's syscall_nr means nothing (0 as it is decoded: read's number). */
	k.nr = o->syscall ? o->syscall_nr : -1;
	k.ip = fr->nr ? fr->v[0].addr : 0;
	return k;
}

/**
 * idle_judge() - whether @outlier is a thread waiting for work; if so it is counted
 * @why: set to the reason, for -v, when it is idle
 *
 * Its place is remembered for the thread's next waits. A wait reported while it lasts (flag
 * still-blocked) is counted once, its time so far; its end adds the rest.
 *
 * Return: true when idle.
 */
/*
 * loop_wait - an event loop of keyed requests waiting for events: free, not blocked, with
 * requests outstanding or none; those requests are its latency (issue 52).
 */
static bool loop_wait(const struct outlier *o, const char **why)
{
	if (!o->loop_wait) {
		return false;
	}
	*why = "an event loop's wait for events: its requests (record --request) are what is slow";
	return true;
}

bool idle_judge(struct idle_policy *policy, const struct outlier *outlier, const char **why)
{
	struct lasting *last;
	struct site_key k;
	enum site_seen seen;
	bool idle;

	*why = NULL;
	if (!policy || !policy->enabled || outlier->kind == OUTLIER_REQUEST) {
		return false;
	}
	k = site_of(outlier);
	seen = site_seen(policy, &k, false);
	last = lasting_of(policy, outlier);
	if (last) {
		/* One wait, one verdict: reported while it lasted, and then again. */
		idle = last->idle;
		*why = last->why;
	} else {
		note_worked(policy, outlier);
		idle = loop_wait(outlier, why) || decide(policy, outlier, seen, true, why);
	}
	if (!last && outlier->state == OUTLIER_STILL_BLOCKED) {
		last = &policy->lasting[policy->next_lasting++ % LASTING_MAX];
		last->tid = outlier->tid;
		last->start_ns = outlier->start_ns;
		last->idle = idle;
		last->why = *why;
	}
	if (idle) {
		count_idle(policy, outlier);
		if (outlier->state == OUTLIER_ENDED) {
			struct recent_idle *r =
				&policy->recent[policy->next_recent++ % RECENT_IDLE_MAX];

			r->pid = outlier->pid;
			r->tid = outlier->tid;
			r->start_ns = outlier->start_ns;
			r->end_ns = outlier->start_ns + outlier->duration_ns;
		}
	}
	return idle;
}

/**
 * idle_judge_wait() - the same policy for an aggregate of waits (`latsnap top`): @wait stands for
 * them, and @came_back says the thread waited there more than once. Nothing is remembered or
 * counted.
 *
 * Return: true when idle.
 */
bool idle_judge_wait(const struct idle_policy *policy, const struct outlier *wait, bool came_back,
		     const char **why)
{
	*why = NULL;
	if (!policy || !policy->enabled || wait->kind == OUTLIER_REQUEST) {
		return false;
	}
	/* Its pid stands for many, or none: no process to look at in /proc. */
	return decide(policy, wait, came_back ? SITE_CAME_BACK : SITE_NEW, false, why);
}

/**
 * idle_entries() - the idle waits counted, per thread and place
 *
 * Return: how many; *@entries points at them until the next idle_judge().
 */
size_t idle_entries(const struct idle_policy *policy, const struct idle_entry **entries)
{
	*entries = policy ? policy->entries : NULL;
	return policy ? policy->nr_entries : 0;
}

/* idle_count() - the idle waits counted in all */
uint64_t idle_count(const struct idle_policy *policy)
{
	return policy ? policy->count : 0;
}

/* idle_window_reset() - a snapshot has listed the idle waits so far: start a new window */
void idle_window_reset(struct idle_policy *policy)
{
	size_t i;

	for (i = 0; policy && i < policy->nr_entries; i++) {
		policy->entries[i].window_count = 0;
		policy->entries[i].window_ns = 0;
	}
}
