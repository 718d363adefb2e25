// SPDX-License-Identifier: GPL-2.0
/*
 * libbpf-log.c - route libbpf's messages to stderr behind latsnap's -v.
 */
#include <stdarg.h>
#include <stdio.h>

#include <bpf/libbpf.h>

#include "lib/util.h"
#include "tracker/libbpf-log.h"

/* Without -v an error is one line of ours; libbpf's detail would bury it. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	if (!ls_verbose_enabled) {
		return 0;
	}
	fputs("latsnap: ", stderr);
	return vfprintf(stderr, fmt, args);
}

/**
 * libbpf_log_init() - send libbpf's messages through latsnap's -v gate; call before any open
 */
void libbpf_log_init(void)
{
	libbpf_set_print(libbpf_print);
}
