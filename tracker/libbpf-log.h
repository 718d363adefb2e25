/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libbpf-log.h - libbpf's own diagnostics, shown with -v only: the tracker's and top's.
 */
#ifndef LATSNAP_LIBBPF_LOG_H
#define LATSNAP_LIBBPF_LOG_H

void libbpf_log_init(void);

#endif /* LATSNAP_LIBBPF_LOG_H */
