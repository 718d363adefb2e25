/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lsevents.h - latsnap's own trace events (events/events-tp.h: latsnap:*, events/kernel-tp.h:
 * latsnap_kernel:*) read back from a trace: their names, one typed decoder of a struct ctf_event,
 * and a name -> handler table it dispatches to (perf's evsel_str_handler).
 *
 * The one rule for an event's time (struct lsev @ts_ns): when it happened, which is not always
 * when it was recorded.
 *  - latsnap_kernel:*: the payload's ts_ns, the kernel's time (the CTF timestamp when the
 *    payload has none). In a snapshot's trace/latsnap/ (recorder/timeline.c) the CTF timestamp
 *    is that time too; in earlier snapshots, and with a relay, it is when latsnap wrote the
 *    event into the LTTng session, long after;
 *  - latsnap:user_stack with end_ns: end_ns + unwind_ns, when the handler was done with it, right
 *    after its outlier's end (its CTF timestamp in trace/latsnap/; when latsnap recorded it, a
 *    little later, in the LTTng session);
 *  - any other event: its CTF timestamp.
 *
 * The one rule for an event's threads (struct lsev @thread, @other):
 *  - @thread is the thread the event is about:
 *	sched_switch: prev (the one leaving the CPU); sched_wakeup: the woken thread;
 *	syscall, process_fork/exec/exit, interest, block_rq_*, latsnap:outlier, kernel_stack,
 *	user_stack: its tid (the outlier's thread for latsnap's records);
 *  - @other is the second thread it names: sched_switch: next; sched_wakeup: the waker (a
 *	bystander when in_irq); process_fork: the child; process_exec/exit, interest: other_tid;
 *	latsnap:outlier: the waker (tid 0 when none). Other events have none.
 *  - an event not latsnap's (an application's, the statedump's) is about the thread its
 *    payload's tid field names, else its first *_tid field, and also every further *_tid field
 *    (lsev_threads()); latsnap cannot know what such an event means, so all of them;
 *  - an event that names no thread (latsnap:bin_info, latsnap:summary, an application's without
 *    such fields) is about the thread that emitted it: the vtid, vpid, procname context. One
 *    of latsnap's other events without its thread field is damaged: its @thread is unknown.
 * A pid or comm the event gives of a thread goes with it (the foreign *_tid thread's from the
 * *_pid, *_comm fields of the same prefix).
 *
 * The one rule for whose an event of latsnap's providers is (struct lsev @forged, issue 51): only
 * latsnap's own processes write them. Any process can load liblatsnap-events.so, or declare a
 * provider of the same name, and claim another pid's outliers, stacks and mappings; the
 * recorder's session takes them from latsnap's processes only (recorder/session.c), and a reader
 * takes them from what the trace says latsnap wrote (struct ctf_event @origin): the trace latsnap
 * writes itself, or LTTng's trace of latsnap's session (named after latsnap's pid) from that pid
 * or from a replay session. One there from another process is @forged: no handler sees it
 * (lsev_handle()), and a caller of lsev_decode() leaves it out. A trace that does not say
 * (older, or not latsnap's) is taken as it is.
 */
#ifndef LATSNAP_LSEVENTS_H
#define LATSNAP_LSEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctf_event;
struct json_object;

/* The providers, as event names begin. */
#define LSEV_PROVIDER "latsnap:"
#define LSEV_KERNEL_PROVIDER "latsnap_kernel:"

/* events/events-tp.h */
#define LSEV_NAME_OUTLIER "latsnap:outlier"
#define LSEV_NAME_KERNEL_STACK "latsnap:kernel_stack"
#define LSEV_NAME_USER_STACK "latsnap:user_stack"
#define LSEV_NAME_BIN_INFO "latsnap:bin_info"
#define LSEV_NAME_SUMMARY "latsnap:summary"
/* events/kernel-tp.h */
#define LSEV_NAME_SCHED_SWITCH "latsnap_kernel:sched_switch"
#define LSEV_NAME_SCHED_WAKEUP "latsnap_kernel:sched_wakeup"
#define LSEV_NAME_SYSCALL "latsnap_kernel:syscall"
#define LSEV_NAME_PROCESS_FORK "latsnap_kernel:process_fork"
#define LSEV_NAME_PROCESS_EXEC "latsnap_kernel:process_exec"
#define LSEV_NAME_PROCESS_EXIT "latsnap_kernel:process_exit"
#define LSEV_NAME_INTEREST "latsnap_kernel:interest"
#define LSEV_NAME_BLOCK_RQ_ISSUE "latsnap_kernel:block_rq_issue"
#define LSEV_NAME_BLOCK_RQ_COMPLETE "latsnap_kernel:block_rq_complete"

enum lsev_kind {
	LSEV_FOREIGN, /* not latsnap's: an application's, the statedump's */
	LSEV_OUTLIER,
	LSEV_KERNEL_STACK,
	LSEV_USER_STACK,
	LSEV_BIN_INFO,
	LSEV_SUMMARY,
	LSEV_SCHED_SWITCH,
	LSEV_SCHED_WAKEUP,
	LSEV_SYSCALL,
	LSEV_PROCESS_FORK,
	LSEV_PROCESS_EXEC,
	LSEV_PROCESS_EXIT,
	LSEV_INTEREST,
	LSEV_BLOCK_RQ_ISSUE,
	LSEV_BLOCK_RQ_COMPLETE,
	LSEV_NR_KINDS,
};

/**
 * struct lsev_thread - a thread an event names
 * @known: the event names it (else the rest is 0 and NULL)
 * @tid: its thread id (0: the idle task, or none)
 * @pid: its process, 0 when the event does not say
 * @comm: its name, NULL when the event does not say
 * @context: the thread that emitted the event, named by its context: then @comm is its
 *	process's name (procname), not its own
 */
struct lsev_thread {
	bool known;
	bool context;
	int64_t tid;
	int64_t pid;
	const char *comm;
};

/* Strings are "" and arrays NULL when the field is missing; numbers 0. */
struct lsev_switch {
	uint32_t cpu;
	int64_t prev_state; /* 0: still runnable */
	bool preempted;
	const char *prev_syscall;
	struct json_object *prev_stack; /* prev's kernel stack, innermost first */
};

struct lsev_wakeup {
	uint32_t cpu;
	bool in_irq;
	struct json_object *waker_stack;
};

struct lsev_syscall {
	int64_t nr;
	const char *name;
	uint64_t start_ns;
	uint64_t duration_ns;
	int64_t ret;
};

struct lsev_interest {
	const char *reason; /* "waker" or "wakee" */
};

struct lsev_block {
	uint64_t dev;
	uint64_t sector;
	uint64_t bytes; /* issue */
	uint32_t op; /* issue */
	uint64_t issue_ns; /* complete */
	int32_t error; /* complete */
};

struct lsev_outlier {
	const char *kind;
	const char *syscall;
	int64_t syscall_nr;
	uint64_t start_ns, end_ns, duration_ns;
	uint64_t on_cpu_ns, blocked_ns, runqueue_ns;
	uint32_t switches;
	const char *cause;
	bool signalled;
	const char *flags;
};

struct lsev_kernel_stack {
	uint64_t end_ns;
	const char *role;
	uint32_t index;
	uint64_t weight_ns;
	struct json_object *ips;
	const char *symbols;
};

struct lsev_user_stack {
	bool has_end_ns; /* traces of older versions have none */
	uint64_t end_ns;
	uint32_t depth;
	bool truncated;
	uint8_t status;
	uint64_t unwind_ns;
	struct json_object *ips;
};

struct lsev_bin_info {
	bool has_pid, has_baddr;
	int64_t pid;
	uint64_t baddr;
	uint64_t memsz;
	const char *path; /* NULL when missing */
	struct json_object *build_id;
};

struct lsev_summary {
	const char *id;
	uint32_t part, parts;
	const char *json;
};

/**
 * struct lsev - one event of a trace, decoded (see the rules above)
 * @kind: which of latsnap's events it is
 * @name: its name
 * @ts_ns: when it happened
 * @thread: the thread it is about
 * @other: the second thread it names
 * @ev: the event as read; its fields for what is not decoded (an application's event)
 * @forged: named as one of latsnap's but written by another process (the rule above): then
 *	@kind is LSEV_FOREIGN and nothing else is decoded
 * @u: what the event of @kind says besides its threads
 *
 * Borrowed from @ev: valid as long as it is.
 */
struct lsev {
	enum lsev_kind kind;
	const char *name;
	uint64_t ts_ns;
	struct lsev_thread thread;
	struct lsev_thread other;
	const struct ctf_event *ev;
	bool forged;
	union {
		struct lsev_switch sw;
		struct lsev_wakeup wakeup;
		struct lsev_syscall syscall;
		struct lsev_interest interest;
		struct lsev_block block;
		struct lsev_outlier outlier;
		struct lsev_kernel_stack kstack;
		struct lsev_user_stack ustack;
		struct lsev_bin_info bin;
		struct lsev_summary summary;
	} u;
};

/*
 * typedef lsev_fn - a handler of decoded events; its return as ctf_event_fn's (0: go on,
 * positive: stop, negative: an error)
 */
typedef int (*lsev_fn)(const struct lsev *ev, void *ctx);

/**
 * struct lsev_handler - one entry of a caller's name -> handler table
 * @name: the event's name (LSEV_NAME_*), or NULL: any event no entry before names
 * @fn: its handler
 */
struct lsev_handler {
	const char *name;
	lsev_fn fn;
};

#define LSEV_MAX_THREADS 8

void lsev_decode(const struct ctf_event *ev, struct lsev *out);
int lsev_handle(const struct lsev *ev, const struct lsev_handler *table, size_t nr, void *ctx);
int lsev_dispatch(const struct ctf_event *ev, const struct lsev_handler *table, size_t nr,
		  void *ctx);
size_t lsev_threads(const struct lsev *ev, int64_t *tids, size_t max);
const struct lsev_thread *lsev_thread_of(const struct lsev *ev, int64_t tid);
size_t lsev_ips(struct json_object *arr, uint64_t *ips, size_t max);

#endif /* LATSNAP_LSEVENTS_H */
