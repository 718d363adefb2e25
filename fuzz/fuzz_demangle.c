// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_demangle.c - libFuzzer harness of lib/demangle.c: ls_demangle() and ls_demangle_text()
 * over any text, as a summary.json's symbols and idle places hand it to report, show, flame and
 * the HTML pages. A Rust name comes back bounded (libiberty's output is cut at 4096 bytes, by a
 * jump out of it that must leak nothing), C++ names as libstdc++ makes them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lib/demangle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_stderr();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *d;

	if (!text) {
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	d = ls_demangle(text);
	/* Only a mangled name ("_Z", "_R") demangles, and never to nothing. */
	if (d && (text[0] != '_' || (text[1] != 'Z' && text[1] != 'R') || !*d)) {
		abort();
	}
	free(d);
	d = ls_demangle_text(text);
	/* The text with nothing mangled in it comes back as it was. */
	if (d && !strstr(text, "_Z") && !strstr(text, "_R") && strcmp(d, text)) {
		abort();
	}
	free(d);
	free(text);
	return 0;
}
