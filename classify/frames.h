/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frames.h - what a frame is: latsnap's own tracing glue, or the traced thread's work.
 */
#ifndef LATSNAP_FRAMES_H
#define LATSNAP_FRAMES_H

#include <stdbool.h>

bool frames_is_tracing_glue(const char *symbol, const char *module);

#endif /* LATSNAP_FRAMES_H */
