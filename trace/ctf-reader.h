/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctf-reader.h - the trace reading process that trace/ctf.c starts (latsnap-trace-reader).
 */
#ifndef LATSNAP_CTF_READER_H
#define LATSNAP_CTF_READER_H

#include <stdbool.h>
#include <sys/types.h>

/* Its file name, looked up like latsnap's libraries (ls_find_helper()). */
#define CTF_READER_NAME "latsnap-trace-reader"

void __attribute__((noreturn)) ctf_reader_main(const char *dir, const char *prefix, bool fields,
					       bool verbose, pid_t parent, int fd);

#endif /* LATSNAP_CTF_READER_H */
