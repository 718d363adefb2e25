/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_SYSCALLS_H
#define LATSNAP_SYSCALLS_H

#include <stddef.h>

const char *syscall_name(int nr);
int syscall_number(const char *name);
int syscall_count(void);
int syscall_parse_list(const char *csv, unsigned char *bitmap, int nbits, char *bad, size_t badlen);

/* NULL-terminated names of the syscalls that wait for work; see syscalls.c. */
extern const char *const syscall_default_idle[];

#endif /* LATSNAP_SYSCALLS_H */
