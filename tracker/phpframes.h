/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_PHPFRAMES_H
#define LATSNAP_PHPFRAMES_H

#include <linux/types.h>
#include <sys/types.h>

#include "include/latsnap.h"

struct outlier_frame;

int phpframes_frame(pid_t pid, const struct ls_py_frame *php, struct outlier_frame *f);

#endif /* LATSNAP_PHPFRAMES_H */
