// SPDX-License-Identifier: GPL-2.0
/*
 * libbpf-log.c - route libbpf's messages to stderr behind latsnap's -v, and keep what the
 * verifier said of a program it refused: a refusal must not read as missing privileges.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/capability.h>

#include <bpf/libbpf.h>

#include "lib/text.h"
#include "lib/util.h"
#include "tracker/libbpf-log.h"

#define VERIFIER_TAIL 3

/* The program the kernel refused last, and the last lines of the verifier's log for it. */
static char refused_prog[64];
static char verifier_tail[VERIFIER_TAIL][200];

/* Keeps the last VERIFIER_TAIL non-empty lines of libbpf's "-- BEGIN PROG LOAD LOG --" message. */
static void keep_verifier_tail(const char *msg)
{
	const char *begin = strstr(msg, "-- BEGIN PROG LOAD LOG --\n");
	const char *end = strstr(msg, "-- END PROG LOAD LOG --");
	const char *line, *next;
	int n = 0, i;

	if (!begin || !end || end < begin) {
		return;
	}
	memset(verifier_tail, 0, sizeof(verifier_tail));
	for (line = begin + strlen("-- BEGIN PROG LOAD LOG --\n"); line < end; line = next + 1) {
		next = memchr(line, '\n', (size_t)(end - line));
		if (!next) {
			next = end;
		}
		if (next == line) {
			continue;
		}
		for (i = 0; i < VERIFIER_TAIL - 1; i++) {
			memcpy(verifier_tail[i], verifier_tail[i + 1], sizeof(verifier_tail[i]));
		}
		snprintf(verifier_tail[VERIFIER_TAIL - 1], sizeof(verifier_tail[0]), "%.*s",
			 (int)(next - line), line);
		n++;
	}
	(void)n;
}

/*
 * @msg escaped (lib/text.c) but for its line breaks and tabs: libbpf names the binaries of
 * traced processes it attaches uprobes to (record --go-waits), and the verifier's log is lines.
 */
static void put_lines(char *msg)
{
	size_t n;
	char sep;

	while (*msg) {
		n = strcspn(msg, "\n\t");
		sep = msg[n];
		msg[n] = '\0';
		ls_put_text(stderr, msg);
		if (!sep) {
			break;
		}
		fputc(sep, stderr);
		msg += n + 1;
	}
}

/* Without -v an error is one line of ours; libbpf's detail would bury it. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	const char *name;
	char *msg = NULL;
	va_list copy;
	int ret;

	/* The verifier's log comes in one message, of up to megabytes. */
	va_copy(copy, args);
	ret = vasprintf(&msg, fmt, copy);
	va_end(copy);
	if (ret < 0) {
		return ret;
	}
	name = strstr(msg, "prog '");
	if (level == LIBBPF_WARN && name &&
	    (strstr(msg, "BPF program load failed") || strstr(msg, "BEGIN PROG LOAD LOG"))) {
		name += 6;
		snprintf(refused_prog, sizeof(refused_prog), "%.*s", (int)strcspn(name, "'"), name);
		keep_verifier_tail(msg);
	}
	if (ls_verbose_enabled) {
		fputs("latsnap: ", stderr);
		put_lines(msg);
	}
	free(msg);
	return ret;
}

/**
 * libbpf_log_init() - send libbpf's messages through latsnap's -v gate; call before any open
 */
void libbpf_log_init(void)
{
	refused_prog[0] = '\0';
	memset(verifier_tail, 0, sizeof(verifier_tail));
	libbpf_set_print(libbpf_print);
}

/**
 * libbpf_log_privileged() - whether this process may load tracing BPF programs at all: CAP_BPF
 * (Linux 5.8) or CAP_SYS_ADMIN in its effective set.
 */
bool libbpf_log_privileged(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };

	if (syscall(SYS_capget, &hdr, data)) {
		return geteuid() == 0;
	}
	return (data[0].effective & (1u << CAP_SYS_ADMIN)) ||
	       (data[1].effective & (1u << (39 /* CAP_BPF */ - 32)));
}

/**
 * libbpf_log_explain_load() - the one line that says why @who ("tracker", "top") could not load
 * its BPF programs (@err, a negative errno): missing privileges only when this process lacks
 * them; a verifier refusal as such, with the program and the verifier's last line (all of its
 * last lines with -v, after libbpf's whole log).
 */
void libbpf_log_explain_load(const char *who, int err)
{
	struct utsname uts;
	const char *last = "";
	int i;

	if ((err == -EPERM || err == -EACCES) && !libbpf_log_privileged()) {
		ls_err("%s: cannot load the BPF program: %s (latsnap needs root: CAP_BPF, "
		       "CAP_PERFMON and CAP_SYS_RESOURCE)",
		       who, strerror(-err));
		return;
	}
	if (uname(&uts)) {
		snprintf(uts.release, sizeof(uts.release), "?");
	}
	if (!refused_prog[0]) {
		ls_err("%s: cannot load the BPF program: %s (kernel %s; run with -v for libbpf's "
		       "log)",
		       who, strerror(-err), uts.release);
		return;
	}
	/* Its last word, but for the statistics it closes with. */
	for (i = 0; i < VERIFIER_TAIL; i++) {
		if (verifier_tail[i][0] && strncmp(verifier_tail[i], "processed ", 10)) {
			last = verifier_tail[i];
		}
	}
	if (ls_verbose_enabled) {
		for (i = 0; i < VERIFIER_TAIL; i++) {
			if (verifier_tail[i][0]) {
				ls_err("%s: verifier: %s", who, verifier_tail[i]);
			}
		}
	}
	ls_err("%s: the kernel (%s) refused BPF program %s: %s%s%s", who, uts.release, refused_prog,
	       strerror(-err), *last ? ": the verifier said: " : "", last);
}
