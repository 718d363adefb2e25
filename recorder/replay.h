/* SPDX-License-Identifier: GPL-2.0 */
/*
 * replay.h - latsnap's own events of a snapshot recorded into its LTTng session each at the time
 * it happened, for a relay daemon (which receives LTTng's snapshot and nothing else). A process
 * of its own, latsnap-replay, records them: LTTng-UST stamps an event with its process's trace
 * clock, which that process sets to each event's time of occurrence.
 */
#ifndef LATSNAP_REPLAY_H
#define LATSNAP_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ls_events;
struct replay;

/* The helper's program, found as latsnap-trace-reader is (ls_find_helper()). */
#define REPLAY_HELPER_NAME "latsnap-replay"

struct replay *replay_new(void);
void replay_free(struct replay *rp);
void replay_clear(struct replay *rp);
const struct ls_events *replay_ops(struct replay *rp);

/**
 * struct replay_result - what latsnap-replay did with a snapshot's events
 * @recorded: events recorded into the session
 * @before: kernel context events older than its buffers, left out
 * @room: the oldest kernel context events past what its ring holds, left out
 * @ready_ns: when its buffers began (monotonic)
 */
struct replay_result {
	uint64_t recorded;
	uint64_t before;
	uint64_t room;
	uint64_t ready_ns;
};

int replay_standby(struct replay *rp, unsigned int timeout_ms, uint64_t max_bytes, char *why,
		   size_t why_size);
pid_t replay_pid(const struct replay *rp);
int replay_start(struct replay *rp, struct replay_result *res, char *why, size_t why_size);
void replay_finish(struct replay *rp);
int replay_helper_main(int argc, char **argv);

#endif /* LATSNAP_REPLAY_H */
