/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_KSYMS_H
#define LATSNAP_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for vmlinux */
};

struct ksyms;

struct ksyms *ksyms_load(const char *path);
const struct ksym *ksyms_lookup(const struct ksyms *ks, uint64_t addr);
size_t ksyms_count(const struct ksyms *ks);
bool ksyms_is_tracing_glue(const char *name);
bool ksyms_sym_is_tracing_glue(const struct ksym *sym);
void ksyms_free(struct ksyms *ks);

#endif /* LATSNAP_KSYMS_H */
