/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_PRELOADED_H
#define LATSNAP_PRELOADED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "include/latsnap.h"

int preloaded_read(pid_t pid, struct ls_preload_abi *abi);
int preloaded_scan(int (*fn)(pid_t pid, const struct ls_preload_abi *abi, void *ctx), void *ctx);

#endif /* LATSNAP_PRELOADED_H */
