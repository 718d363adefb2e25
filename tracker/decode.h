/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_DECODE_H
#define LATSNAP_DECODE_H

#include <linux/types.h>
#include <json-c/json.h>

#include "include/latsnap.h"

struct ksyms;
struct usyms;

/* Where a wakeup ran, told from the waker's stack by decode_wake_context(). */
enum wake_context {
	WAKE_TASK,
	WAKE_HARDIRQ,
	WAKE_SOFTIRQ,
};

unsigned int decode_wake_context(const struct ksyms *ks, const __u64 *ips, unsigned int nr,
				 enum wake_context *ctx);
struct json_object *decode_kernel_frames(const struct ksyms *ks, const __u64 *ips, unsigned int nr);
struct json_object *decode_event(const struct ls_event *e, const struct ksyms *ks, struct usyms *us,
				 struct json_object *lost_before);

struct json_object *decode_user_frames(struct usyms *us, pid_t pid, const uint64_t *ips,
				       unsigned int nr);

#endif /* LATSNAP_DECODE_H */
