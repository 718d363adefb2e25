/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perfmap.h - names of JIT code from a process's perf map, /tmp/perf-PID.map: the text file
 * "START SIZE NAME" a line (hex start and size) that JIT compilers write for perf (the JVM's
 * `jcmd PID Compiler.perfmap`, node's --perf-basic-prof, Python 3.12's -X perf).
 *
 * The map is the traced process's, and latsnap runs as root: it is read through the process's
 * own root (/proc/PID/root, as the process sees /tmp, with its pid-namespace pid), no symlink
 * followed, only when it is a regular file owned by one of the process's uids or by root, and
 * within bounds (PERFMAP_MAX_BYTES read, PERFMAP_MAX_ENTRIES kept, PERFMAP_MAX_LINE a line;
 * PERFMAP_TOTAL_BYTES of memory for all the maps of all processes together).
 * Lines that do not parse are skipped. JITs append to the map: it is read again, from where the
 * last read stopped, when it changed (checked at most every PERFMAP_RECHECK_NS).
 *
 * Not thread-safe: one struct perfmap is used by one thread at a time.
 */
#ifndef LATSNAP_PERFMAP_H
#define LATSNAP_PERFMAP_H

#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_BYTES (32U << 20)
#define PERFMAP_MAX_ENTRIES (512U << 10)
#define PERFMAP_MAX_LINE 4096
#define PERFMAP_TOTAL_BYTES (256U << 20)
#define PERFMAP_RECHECK_NS (100 * 1000 * 1000ULL)

struct perfmap;

struct perfmap *perfmap_new(pid_t pid);
void perfmap_free(struct perfmap *pm);
const char *perfmap_lookup(struct perfmap *pm, uint64_t addr, uint64_t *offset);
const char *perfmap_module(const struct perfmap *pm);

#endif /* LATSNAP_PERFMAP_H */
