// SPDX-License-Identifier: GPL-2.0
/*
 * deadlock-nofp [SECONDS=30]
 *
 * deadlock.c built without frame pointers (the Makefile gives *-nofp NOFP_CFLAGS): the same ABBA
 * deadlock, whose stacks only an unwinder with DWARF CFI can walk back to lock_a_then_b() and
 * lock_b_then_a(). Same WL_LOG lines as deadlock.
 */
#define DEADLOCK_NAME "deadlock-nofp"
#include "deadlock.c"
