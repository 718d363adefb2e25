/* SPDX-License-Identifier: GPL-2.0 */
/*
 * request.h - the probes that delimit requests (record --request START[,END]): a USDT probe, a
 * function's entry (uprobe) or its return (uretprobe) in a program or library.
 */
#ifndef LATSNAP_REQUEST_H
#define LATSNAP_REQUEST_H

#include <stddef.h>

enum request_probe_kind {
	REQUEST_USDT,
	REQUEST_UPROBE,
	REQUEST_URETPROBE,
};

/**
 * struct request_probe - one probe
 * @path: the program or library
 * @provider: USDT only
 * @name: the USDT probe's name, or the function's symbol
 * @key: what pairs it with its other probe (its "=KEY" suffix): LS_REQ_KEY_THREAD (none given,
 *       "=tid"), argument N ("=argN", 1 to LS_REQ_KEY_ARGS), or LS_REQ_KEY_RET ("=ret")
 */
struct request_probe {
	enum request_probe_kind kind;
	char *path;
	char *provider;
	char *name;
	unsigned int key;
};

/**
 * struct request_spec - a probe pair as --request gives it
 * @text: as given ("START,END", or "START" alone: a function from its entry to its return)
 */
struct request_spec {
	char *text;
	struct request_probe start;
	struct request_probe end;
};

int request_parse(const char *text, struct request_spec *spec, char *why, size_t why_size);
void request_spec_free(struct request_spec *spec);

#endif /* LATSNAP_REQUEST_H */
