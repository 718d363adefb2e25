/* SPDX-License-Identifier: GPL-2.0 */
/*
 * outlier.h - an outlier as it travels from the tracker to the summary: one typed struct, with
 * the contract's JSON form (OUTLIER in summary.json and `record --json`) at the edges only.
 */
#ifndef LATSNAP_OUTLIER_H
#define LATSNAP_OUTLIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

enum outlier_kind {
	OUTLIER_SYSCALL,
	OUTLIER_SLEEP,
	OUTLIER_REQUEST, /* an operation between two probes of the target (record --request) */
};

/* Where the user stack came from: the contract's "source" strings, in this order. */
enum outlier_ustack_source {
	OUTLIER_USTACK_NONE,
	OUTLIER_USTACK_FRAME_POINTER,
	OUTLIER_USTACK_UNWIND,
};

/*
 * Was the wait over when it was reported? The contract's "state" strings, in this order: ended
 * (every outlier but the hang check's), still-blocked (reported while it still waited, record
 * --hang), unfinished (the run ended while it still waited).
 */
enum outlier_state {
	OUTLIER_ENDED,
	OUTLIER_STILL_BLOCKED,
	OUTLIER_UNFINISHED,
};

/**
 * struct outlier_deadlock - "deadlock": the cycle of threads that wait for each other, this
 * outlier's thread among them, each waiting for what the next holds and the last for what the
 * first holds; @nr is 0 for a deadlock read from a summary written before the field (its cause
 * said so, not who)
 */
struct outlier_deadlock {
	struct outlier_deadlock_thread {
		int32_t pid;
		int32_t tid;
		char *comm;
	} *threads;
	size_t nr;
};

/**
 * struct outlier_frame - FRAME
 * @addr: the instruction address
 * @symbol: its function, or NULL when unknown
 * @offset: from the start of @symbol (0 without one)
 * @module: "kernel", a kernel module, the path of a user object, or NULL when unknown
 * @interp: an interpreter's frame (CPython): @addr is its code object, @symbol its qualified
 *          name, @module its source file, @line its current line (0: unknown); "line" in JSON
 * @file: a native frame's source file, from the object's DWARF line table (a goroutine's frames),
 *        or NULL; @line is then its line. "file" and "line" in JSON.
 */
struct outlier_frame {
	uint64_t addr;
	char *symbol;
	uint64_t offset;
	char *module;
	bool interp;
	uint32_t line;
	char *file;
};

/* A stack, innermost frame first. */
struct outlier_frames {
	struct outlier_frame *v;
	size_t nr;
};

struct outlier_kstack {
	uint64_t weight_ns;
	struct outlier_frames frames;
};

/**
 * struct outlier_ustack - "user_stack"
 * @unwound: the preload library's report was taken: @unwind_ns and @status are its own
 * @truncated: the unwind stopped at its depth limit (LATSNAP_DEPTH)
 * @in_trace: the snapshot's trace holds its latsnap:user_stack event
 */
struct outlier_ustack {
	enum outlier_ustack_source source;
	bool unwound;
	uint64_t unwind_ns;
	int status;
	bool truncated;
	bool in_trace;
	struct outlier_frames frames;
};

/* "waker": pid and tid 0 for an interrupt, whose comm then names it ("[hardirq]"). */
struct outlier_waker {
	int32_t pid;
	int32_t tid;
	char *comm;
	struct outlier_frames frames;
};

/**
 * struct outlier_holder - "holder": who holds what a stalled thread waits for
 * @what: what it holds ("pthread mutex 0x7f..", "pipe:[1234] write end"), or NULL
 * @state: its own state when looked at ("running", "blocked in futex", ...), or NULL
 * @frames: its user stack, innermost first (the contract's "frames")
 * @kernel_frames: its kernel stack, innermost first, when it was off CPU
 */
struct outlier_holder {
	int32_t pid;
	int32_t tid;
	char *comm;
	char *what;
	char *state;
	struct outlier_frames frames;
	struct outlier_frames kernel_frames;
};

/**
 * struct outlier_request - "request": what delimits a request outlier
 * @probe: the probe pair as given ("START,END", or "START" for a function's entry to return)
 * @arg: the start probe's first argument as text (the first 256 bytes), or NULL
 * @key: the object a keyed request is ("0x..."), or NULL (its thread is its key)
 * @others: a keyed request: the requests its thread began while it lasted
 * @upstream_tid: a keyed request: the thread that last wrote to the socket it connected, at
 *                @upstream_ns (who it waited for), or 0
 */
struct outlier_request {
	char *probe;
	char *arg;
	char *key;
	unsigned int others;
	int32_t upstream_pid, upstream_tid;
	uint64_t upstream_ns;
	char *upstream_comm;
};

/**
 * struct outlier_link - LINK: one thread of the wait chain and what it did meanwhile
 * @syscall: the syscall it was in, or NULL
 * @unknown_ns: the part of [from_ns, to_ns] its events do not cover
 */
struct outlier_link {
	unsigned int depth;
	int32_t pid;
	int32_t tid;
	char *comm;
	uint64_t from_ns;
	uint64_t to_ns;
	uint64_t on_cpu_ns;
	uint64_t blocked_ns;
	uint64_t runqueue_ns;
	uint64_t unknown_ns;
	char *syscall;
	struct outlier_frames frames;
};

/**
 * struct outlier - OUTLIER
 * @syscall: its name, NULL for a sleep; @syscall_nr is meaningful only with it
 * @waker: NULL when nobody is known to have woken it
 * @holder: who holds what it waits for (a stall, see --hang), NULL when not known
 * @request: kind request: its probe pair and argument (the other kinds: NULL)
 * @signalled: latsnap asked the preload library for the user stack
 *
 * Strings and arrays are owned: outlier_free() frees them. Build one with outlier_new() and the
 * outlier_*() setters below, or read one with outlier_from_json().
 */
struct outlier {
	enum outlier_kind kind;
	int32_t pid;
	int32_t tid;
	char *comm;
	char *syscall;
	int32_t syscall_nr;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t duration_ns;
	uint64_t on_cpu_ns;
	uint64_t blocked_ns;
	uint64_t runqueue_ns;
	uint32_t switches;
	/* kind syscall: its arguments, from the saved user registers (has_args) */
	uint64_t args[6];
	bool has_args;
	/*
	 * Not written: the thread's voluntary context switches in all, this wait's included, when
	 * the outlier was taken (0: not known). 1 is the first wait of the thread's life.
	 */
	uint64_t nvcsw;
	/* Not written: kind syscall, what it returned (-ETIMEDOUT: it ran to its own timeout). */
	int64_t ret;
	/* Not written: its process's real user id when the BPF side sent it (has_uid). */
	uint32_t uid;
	bool has_uid;
	/*
	 * Not written: the thread's work context (the idle policy; latsnap.bpf.c's work_note()):
	 * in a unit of work when the wait began; in work ever before; and the wait ended with
	 * work come (a request read, a job handed over) where it began outside work.
	 */
	bool in_work;
	bool worked;
	bool got_work;
	bool answered; /* a read of the answer to what the thread wrote on that descriptor */
	bool handed; /* its unit of work came by a wakeup from a thread in work, not a read */
	/*
	 * Not written: an event loop's wait for events (epoll, poll, select) in a process that runs
	 * a keyed --request's probes: its requests, not its waits, are what can be slow.
	 */
	bool loop_wait;
	char *cause;
	struct outlier_kstack *kernel_stacks;
	size_t nr_kernel_stacks;
	struct outlier_ustack user_stack;
	struct outlier_waker *waker;
	struct outlier_holder *holder;
	struct outlier_request *request;
	/* kind request: its waits (syscall and sleep outliers), in time order */
	struct outlier **waits;
	size_t nr_waits;
	/* kind request: where its on-CPU time went, sampled stacks (kernel frames, then user) */
	struct outlier_kstack *cpu_profile;
	size_t nr_cpu_profile;
	struct outlier_link *wait_chain;
	size_t nr_links;
	char **flags;
	size_t nr_flags;
	bool signalled;
	/* Written as "state" and "deadlock" (NULL: none); see enum outlier_state. */
	enum outlier_state state;
	struct outlier_deadlock *deadlock;
	/* Not written: the tracker's mark of a wait sent as a part of a request of its thread. */
	bool part_of_request;
};

struct outlier *outlier_new(void);
void outlier_free(struct outlier *o);
int outlier_set_str(char **field, const char *text);
int outlier_set_cause(struct outlier *o, const char *cause);
int outlier_frames_alloc(struct outlier_frames *frames, size_t nr);
int outlier_frame_set(struct outlier_frame *f, uint64_t addr, const char *symbol,
		      uint64_t offset, const char *module);
void outlier_frames_free(struct outlier_frames *frames);
/* Room for outlier_interp_name()'s text: long names and paths are cut. */
#define LS_INTERP_NAME_LEN 512
void outlier_interp_name(const struct outlier_frame *f, char *buf, size_t len);
void outlier_frames_move(struct outlier_frames *to, struct outlier_frames *from);
struct outlier_kstack *outlier_add_kstack(struct outlier *o, uint64_t weight_ns);
struct outlier_link *outlier_add_link(struct outlier *o);
void outlier_links_free(struct outlier *o);
struct outlier_holder *outlier_set_holder(struct outlier *o);
struct outlier_request *outlier_set_request(struct outlier *o, const char *probe, const char *arg);
int outlier_add_wait(struct outlier *o, struct outlier *wait);
struct outlier_kstack *outlier_add_profile(struct outlier *o, uint64_t weight_ns);

int outlier_add_flag(struct outlier *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void outlier_drop_flags(struct outlier *o, const char *prefix);
bool outlier_has_flag(const struct outlier *o, const char *prefix);

const char *outlier_kind_name(enum outlier_kind kind);
const char *outlier_ustack_source_name(enum outlier_ustack_source source);
const char *outlier_state_name(enum outlier_state state);
const char *outlier_time_key(size_t i);
void outlier_deadlock_free(struct outlier_deadlock *d);
int outlier_set_deadlock(struct outlier *o, const struct outlier_deadlock_thread *threads,
			 size_t nr);

struct json_object *outlier_to_json(const struct outlier *o);
struct json_object *outlier_frames_to_json(const struct outlier_frames *frames);
int outlier_from_json(struct json_object *obj, struct outlier **outp);
int outlier_from_json_at(struct json_object *obj, const char *where, struct outlier **outp,
			 char *why, size_t len);

void outlier_print_head(FILE *out, const struct outlier *o);
void outlier_print_text(FILE *out, const struct outlier *o);

#endif /* LATSNAP_OUTLIER_H */
