/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_KSYMS_H
#define LATSNAP_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify/frames.h"

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for vmlinux */
};

struct ksyms;

struct ksyms *ksyms_load(const char *path);
const struct ksym *ksyms_lookup(const struct ksyms *ks, uint64_t addr);
size_t ksyms_count(const struct ksyms *ks);

/* Whether a looked-up symbol (or NULL) is BPF tracing glue: classify/frames.c has the list. */
static inline bool ksyms_is_glue(const struct ksym *sym)
{
	return sym && frames_is_tracing_glue(sym->name, sym->module);
}
void ksyms_free(struct ksyms *ks);

#endif /* LATSNAP_KSYMS_H */
