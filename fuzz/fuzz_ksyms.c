// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ksyms.c - libFuzzer harness of the /proc/kallsyms reader (ksyms_load()) and of the
 * lookups the tracker makes with what it loaded: a symbol found for an address starts at or
 * below it, and the tracing-glue test takes any name.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "tracker/ksyms.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stderr();
	return 0;
}

/* The 16 hex digits at @p, as a string. */
static const char *fuzz_strndup_static(const char *p, size_t n)
{
	static char buf[17];

	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

static void check_lookup(const struct ksyms *ks, uint64_t addr)
{
	const struct ksym *sym = ksyms_lookup(ks, addr);

	if (!sym) {
		return;
	}
	if (sym->addr > addr || !sym->name) {
		abort();
	}
	(void)frames_is_tracing_glue(sym->name, NULL);
	(void)ksyms_is_glue(sym);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *ks;
	uint64_t addr = 0;
	char *text;
	size_t i;

	ks = ksyms_load(fuzz_input_path(data, size));
	if (!ks) {
		if (errno != EPERM && errno != ENODATA && errno != ENOMEM) {
			abort();
		}
	} else {
		/* A table of no text symbol is possible (only data symbols): lookups find none. */
		if (!ksyms_count(ks) && ksyms_lookup(ks, UINT64_MAX)) {
			abort();
		}
		if (size >= sizeof(addr)) {
			memcpy(&addr, data, sizeof(addr));
		}
		check_lookup(ks, addr);
		check_lookup(ks, 0);
		check_lookup(ks, UINT64_MAX);
		for (i = 0; i + 16 <= size && i < 64 * 16; i += 16) {
			addr = strtoull(fuzz_strndup_static((const char *)data + i, 16), NULL, 16);
			check_lookup(ks, addr);
			check_lookup(ks, addr - 1);
		}
		ksyms_free(ks);
	}
	text = fuzz_strndup(data, size);
	(void)frames_is_tracing_glue(text, NULL);
	free(text);
	return 0;
}
