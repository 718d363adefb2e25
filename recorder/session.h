/* SPDX-License-Identifier: GPL-2.0 */
/*
 * session.h - the LTTng snapshot session of `latsnap record`.
 */
#ifndef LATSNAP_SESSION_H
#define LATSNAP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SESSION_MAX_EVENTS 16
#define SESSION_MAX_REPLAY 2

struct session;

struct session_opts {
	uint64_t buffer_size; /* per CPU ring buffer, bytes */
	const char *ust_events[SESSION_MAX_EVENTS]; /* event patterns to enable */
	int nr_ust_events;
	/*
	 * With a relay: @nr_replay sessions more, for latsnap-replay (recorder/replay.h), with
	 * @replay_events; the session's own events are not recorded from @replay_exclude, the
	 * helper's name.
	 */
	int nr_replay;
	const char *replay_events[SESSION_MAX_EVENTS];
	int nr_replay_events;
	const char *replay_exclude;
};

int session_open(struct session **sessionp, const struct session_opts *opts);
int session_snapshot(struct session *s, const char *dir);
int session_regenerate_metadata(struct session *s);
bool session_is_network_url(const char *url);
int session_check_url(const char *url, char *why, size_t why_size);
int session_snapshot_net(struct session *s, int k, const char *url, const char *path,
			 const char *name, char *why, size_t why_size);
int session_replay_track(struct session *s, int k, pid_t pid, bool on, char *why,
			 size_t why_size);
const char *session_name(const struct session *s);
uint64_t session_subbuf_size(const struct session *s);
bool session_has_kernel(const struct session *s);
bool session_lost(struct session *s);
void session_set_lost(struct session *s);
uint64_t session_lost_packets(struct session *s);
void session_close(struct session *s);

#endif /* LATSNAP_SESSION_H */
