// SPDX-License-Identifier: GPL-2.0
/*
 * signame.c - the signal latsnap asks the preload library to unwind on, by number or by name.
 *
 * Shared by latsnap and liblatsnap.so, so it uses nothing that allocates or depends on locale.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/signame.h"

/* Signals that must never be ours: they cannot be caught, or the program depends on them. */
static int usable(int sig)
{
	return sig >= 1 && sig <= SIGRTMAX && sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV &&
	       sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGABRT &&
	       sig != SIGCHLD && sig != SIGCONT && sig != SIGTRAP && (sig < 32 || sig >= SIGRTMIN);
}

static int parse_offset(const char *text, int base, int sign)
{
	char *end;
	long n;

	if (*text == '\0') {
		return base;
	}
	if ((sign > 0 && *text != '+') || (sign < 0 && *text != '-')) {
		return -1;
	}
	n = strtol(text + 1, &end, 10);
	if (end == text + 1 || *end != '\0' || n < 0 || n > 64) {
		return -1;
	}
	return base + sign * (int)n;
}

/**
 * ls_parse_signal() - a signal number from "60", "RTMAX-4", "SIGRTMIN+3", "USR2" or "SIGUSR1".
 * @text: what the user wrote.
 *
 * Return: the signal, or -1 if @text names none or one latsnap must not take (SIGKILL, SIGSEGV,
 * the two real-time signals glibc keeps for itself, ...).
 */
int ls_parse_signal(const char *text)
{
	char *end;
	int sig = -1;
	long n;

	if (!text || *text == '\0') {
		return -1;
	}
	if (*text >= '0' && *text <= '9') {
		n = strtol(text, &end, 10);
		sig = (*end == '\0' && n <= 64) ? (int)n : -1;
	} else {
		if (strncasecmp(text, "SIG", 3) == 0) {
			text += 3;
		}
		if (strncasecmp(text, "RTMIN", 5) == 0) {
			sig = parse_offset(text + 5, SIGRTMIN, 1);
		} else if (strncasecmp(text, "RTMAX", 5) == 0) {
			sig = parse_offset(text + 5, SIGRTMAX, -1);
		} else if (strcasecmp(text, "USR1") == 0) {
			sig = SIGUSR1;
		} else if (strcasecmp(text, "USR2") == 0) {
			sig = SIGUSR2;
		} else if (strcasecmp(text, "PWR") == 0) {
			sig = SIGPWR;
		}
	}
	return usable(sig) ? sig : -1;
}
