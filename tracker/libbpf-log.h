/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libbpf-log.h - libbpf's own diagnostics, shown with -v only: the tracker's and top's. What
 * the verifier said of a program it refused is kept, so that the error can name the refusal.
 */
#ifndef LATSNAP_LIBBPF_LOG_H
#define LATSNAP_LIBBPF_LOG_H

#include <stdbool.h>

void libbpf_log_init(void);
void libbpf_log_explain_load(const char *who, int err);
bool libbpf_log_privileged(void);

#endif /* LATSNAP_LIBBPF_LOG_H */
