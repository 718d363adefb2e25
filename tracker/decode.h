/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_DECODE_H
#define LATSNAP_DECODE_H

#include <linux/types.h>
#include <sys/types.h>

#include "include/latsnap.h"

struct ksyms;
struct usyms;
struct outlier;
struct outlier_frames;

/* Where a wakeup ran, told from the waker's stack by decode_wake_context(). */
enum wake_context {
	WAKE_TASK,
	WAKE_HARDIRQ,
	WAKE_SOFTIRQ,
};

unsigned int decode_wake_context(const struct ksyms *ks, const __u64 *ips, unsigned int nr,
				 enum wake_context *ctx);
int decode_kernel_frames(const struct ksyms *ks, const __u64 *ips, unsigned int nr,
			 struct outlier_frames *frames);
int decode_event(const struct ls_event *e, const struct ksyms *ks, struct usyms *us,
		 struct outlier **outp);
int decode_stall(const struct ls_stall *st, const struct ksyms *ks, struct usyms *us,
		 struct outlier **outp);
int decode_stall_user(const struct ls_stall *st, struct usyms *us, struct outlier_frames *frames);
int decode_user_frames(struct usyms *us, pid_t pid, const uint64_t *ips, unsigned int nr,
		       struct outlier_frames *frames);

#endif /* LATSNAP_DECODE_H */
