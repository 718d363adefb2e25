/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_SIGNAME_H
#define LATSNAP_SIGNAME_H

/* The signal latsnap uses by default: one that common programs and glibc leave alone. */
#define LS_DEFAULT_SIGNAL_NAME "RTMAX-4"

int ls_parse_signal(const char *text);

#endif /* LATSNAP_SIGNAME_H */
