// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_flame.c - libFuzzer harness of the folded-stack and SVG writers: any summary the reader
 * accepts must fold into lines of the contract's form (frames, a space, a decimal weight) and
 * draw into an SVG that libxml2 parses as well-formed XML.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "review/flame.h"
#include "review/snapshots.h"

static void silent(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

static void check_folded(const char *text, size_t len, size_t nr)
{
	size_t lines = 0;
	const char *p = text, *nl, *sp, *d;

	while (p < text + len) {
		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl) {
			abort();
		}
		/* The weight is after the last space; the stack before it has no newline. */
		sp = nl;
		while (sp > p && sp[-1] != ' ') {
			sp--;
		}
		if (sp == p || sp == nl) {
			abort();
		}
		for (d = sp; d < nl; d++) {
			if (!isdigit((unsigned char)*d)) {
				abort();
			}
		}
		lines++;
		p = nl + 1;
	}
	if (lines != nr) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct summary *summary = NULL;
	struct flame f = { 0 };
	char why[512], *buf = NULL;
	size_t len = 0;
	xmlDocPtr doc;
	FILE *out;

	if (snapshots_parse_summary((const char *)data, size, "F", &summary, why, sizeof(why))) {
		return 0;
	}
	if (flame_add_summary(&f, summary) || flame_add_summary(&f, summary)) {
		abort();
	}
	flame_finish(&f);
	out = open_memstream(&buf, &len);
	if (!out || flame_write_folded(out, &f) || fclose(out)) {
		abort();
	}
	check_folded(buf, len, f.nr);
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &len);
	if (!out || flame_write_svg(out, &f, "fuzz <&> \"title\"") || fclose(out)) {
		abort();
	}
	xmlSetGenericErrorFunc(NULL, silent);
	doc = xmlReadMemory(buf, (int)len, "flame.svg", NULL, XML_PARSE_NONET);
	if (!doc) {
		abort();
	}
	xmlFreeDoc(doc);
	free(buf);
	flame_free(&f);
	summary_free(summary);
	return 0;
}
