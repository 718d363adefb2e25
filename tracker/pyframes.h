/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_PYFRAMES_H
#define LATSNAP_PYFRAMES_H

#include <linux/types.h>
#include <sys/types.h>

#include "include/latsnap.h"

struct pyframes;
struct outlier_frames;

struct pyframes *pyframes_new(void);
void pyframes_free(struct pyframes *pf);
int pyframes_insert(struct pyframes *pf, pid_t pid, const struct ls_unwind_report *report,
		    struct outlier_frames *frames);

#endif /* LATSNAP_PYFRAMES_H */
