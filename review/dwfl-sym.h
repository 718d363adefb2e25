/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dwfl-sym.h - symbolize the user addresses of a snapshot, later and elsewhere, with elfutils'
 * libdwfl: from the mappings and build-ids the trace recorded (lttng-ust statedump events), not
 * from any live process. A file is used only when its build-id is the one recorded; otherwise
 * the separate debug file of that build-id is looked for (in --debug-dir, then
 * /usr/lib/debug/.build-id), and a binary that changed since is named in a warning.
 */
#ifndef LATSNAP_DWFL_SYM_H
#define LATSNAP_DWFL_SYM_H

#include <stddef.h>
#include <stdint.h>

struct dwfl_sym;

/**
 * struct dwfl_sym_result - what one address resolved to
 * @symbol: the function, as the symbol table names it (mangled for C++; NULL when unknown)
 * @offset: the address minus the function's start
 * @module: the path the statedump recorded for the object holding the address (NULL if none)
 * @file: the source file (NULL without line information)
 * @line: its line (0 without)
 *
 * The strings belong to the struct dwfl_sym and live until dwfl_sym_free().
 */
struct dwfl_sym_result {
	const char *symbol;
	uint64_t offset;
	const char *module;
	const char *file;
	int line;
};

struct dwfl_sym *dwfl_sym_new(const char *debug_dir);
void dwfl_sym_free(struct dwfl_sym *ds);
int dwfl_sym_add_mapping(struct dwfl_sym *ds, int64_t pid, uint64_t base, uint64_t memsz,
			 const char *path);
int dwfl_sym_add_build_id(struct dwfl_sym *ds, int64_t pid, uint64_t base, const uint8_t *id,
			  size_t len);
int dwfl_sym_lookup(struct dwfl_sym *ds, int64_t pid, uint64_t addr, int is_return,
		    struct dwfl_sym_result *out);
size_t dwfl_sym_nr_mappings(const struct dwfl_sym *ds, int64_t pid);

#endif /* LATSNAP_DWFL_SYM_H */
