/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_RBFRAMES_H
#define LATSNAP_RBFRAMES_H

#include <linux/types.h>
#include <sys/types.h>

#include "include/latsnap.h"

struct rbframes;
struct outlier_frame;

struct rbframes *rbframes_new(void);
void rbframes_free(struct rbframes *rf);
int rbframes_frame(struct rbframes *rf, pid_t pid, const struct ls_py_frame *rb,
		   struct outlier_frame *f);

#endif /* LATSNAP_RBFRAMES_H */
