/* SPDX-License-Identifier: GPL-2.0 */
/*
 * goroutines.h - a Go program's goroutine waits, timed on the goroutine: uprobes on
 * runtime.gopark and runtime.ready of each tracked process's Go binary (amd64, Go 1.17+ register
 * ABI), attached once per binary for every process that runs it; the BPF side follows only the
 * processes listed in its go_procs map, with the offset of runtime.g's goid read from the
 * binary's DWARF. A binary without DWARF (-ldflags=-w) or of a Go release whose wait reasons
 * latsnap does not know is not followed (record -v says so, once per binary): no offset is ever
 * guessed.
 *
 * Not thread-safe: used by the tracker's thread only.
 */
#ifndef LATSNAP_GOROUTINES_H
#define LATSNAP_GOROUTINES_H

#include <stdbool.h>
#include <sys/types.h>

struct bpf_program;
struct ls_event;
struct outlier;
struct goroutines;

struct goroutines *goroutines_new(struct bpf_program *park, struct bpf_program *ready,
				  int procs_fd);
void goroutines_free(struct goroutines *gr);
int goroutines_follow(struct goroutines *gr, pid_t pid, const char *path);
void goroutines_forget(struct goroutines *gr, pid_t pid);
int goroutines_decorate(const struct goroutines *gr, const struct ls_event *e, struct outlier *o);

#endif /* LATSNAP_GOROUTINES_H */
