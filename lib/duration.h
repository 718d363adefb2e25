/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_DURATION_H
#define LATSNAP_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Large enough for any ls_format_duration() output ("18446744073.710 s"). */
#define LS_DURATION_BUFSZ 32

int ls_parse_duration(const char *text, uint64_t *ns);
void ls_format_duration(uint64_t ns, char *buf, size_t len);

#endif /* LATSNAP_DURATION_H */
