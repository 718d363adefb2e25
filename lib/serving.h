/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serving.h - whether a process serves: it holds a socket others connect or send to, read from
 * /proc (the idle policy's "a server's housekeeping", classify/idle.c).
 */
#ifndef LATSNAP_SERVING_H
#define LATSNAP_SERVING_H

#include <sys/types.h>

int serving_probe(pid_t pid);

#endif /* LATSNAP_SERVING_H */
