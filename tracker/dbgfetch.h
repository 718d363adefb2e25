/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dbgfetch.h - separate debug info fetched from debuginfod servers (elfutils' libdebuginfod:
 * DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, ... as its man page says), in a
 * thread of its own, so that a slow server never holds up the outliers for long.
 *
 * A build-id asked for the first time is fetched at once, and the caller waits for it at most
 * DBGFETCH_WAIT_NS; after a wait that ran out, nobody waits again until some fetch ends (the
 * server is slow: what is pending is used once it is there). Each build-id is fetched once per
 * run; libdebuginfod keeps what it fetched in its cache, and the misses too (for 10 minutes).
 */
#ifndef LATSNAP_DBGFETCH_H
#define LATSNAP_DBGFETCH_H

#include <stddef.h>
#include <stdint.h>

#define DBGFETCH_WAIT_NS (500 * 1000 * 1000ULL)

struct dbgfetch;

struct dbgfetch *dbgfetch_new(void);
void dbgfetch_free(struct dbgfetch *df);
int dbgfetch_get(struct dbgfetch *df, const uint8_t *id, size_t len, char **path);
uint64_t dbgfetch_done(struct dbgfetch *df);

#endif /* LATSNAP_DBGFETCH_H */
