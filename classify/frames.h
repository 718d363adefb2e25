/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frames.h - what a frame is: latsnap's own tracing glue, or the traced thread's work.
 */
#ifndef LATSNAP_FRAMES_H
#define LATSNAP_FRAMES_H

#include <stdbool.h>

struct outlier_frame;
struct outlier_frames;

bool frames_is_tracing_glue(const char *symbol, const char *module);
bool frames_is_kernel(const struct outlier_frame *frame);
void frames_split_sample(const struct outlier_frames *sample, struct outlier_frames *kernel,
			 struct outlier_frames *user);

#endif /* LATSNAP_FRAMES_H */
