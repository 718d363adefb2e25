/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_UTIL_H
#define LATSNAP_UTIL_H

/* The Makefile may pass the release; a build from a bare tree says 0.1. */
#ifndef LATSNAP_VERSION
#define LATSNAP_VERSION "0.1"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

/* Set by -v/--verbose; gates ls_verbose(). */
extern bool ls_verbose_enabled;

void ls_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ls_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int ls_parse_pid(const char *text, int *pid);
const char *ls_find_library(const char *name, char *buf, size_t size);
const char *ls_find_helper(const char *name, char *buf, size_t size);
void ls_relay_name(const char *id, char *buf, size_t size);
uint64_t ls_now_ns(void);
void ls_format_bytes(uint64_t bytes, char *buf, size_t size);
void ls_sort(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *));

#endif /* LATSNAP_UTIL_H */
