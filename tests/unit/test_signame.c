// SPDX-License-Identifier: GPL-2.0
/* The signal names latsnap and the preload library accept, and those they must refuse. */
#include <signal.h>

#include "lib/signame.h"
#include "tap.h"

static void parses(const char *text, int expected)
{
	is_int(ls_parse_signal(text), expected, "'%s' is signal %d", text, expected);
}

static void rejects(const char *text, const char *why)
{
	is_int(ls_parse_signal(text), -1, "'%s' is refused (%s)", text ? text : "(null)", why);
}

int main(void)
{
	parses(LS_DEFAULT_SIGNAL_NAME, SIGRTMAX - 4);
	parses("60", 60);
	parses("RTMAX-4", SIGRTMAX - 4);
	parses("SIGRTMAX-4", SIGRTMAX - 4);
	parses("rtmin+5", SIGRTMIN + 5);
	parses("SIGRTMIN", SIGRTMIN);
	parses("RTMAX", SIGRTMAX);
	parses("USR1", SIGUSR1);
	parses("SIGUSR2", SIGUSR2);

	rejects(NULL, "nothing");
	rejects("", "empty");
	rejects("9", "SIGKILL cannot be caught");
	rejects("KILL", "not a name latsnap takes");
	rejects("19", "SIGSTOP cannot be caught");
	rejects("11", "SIGSEGV belongs to the program");
	rejects("17", "SIGCHLD belongs to the program");
	rejects("32", "glibc keeps it for threads");
	rejects("33", "glibc keeps it for threads");
	rejects("65", "beyond the last signal");
	rejects("0", "not a signal");
	rejects("-3", "negative");
	rejects("60x", "trailing garbage");
	rejects("RTMIN-1", "below SIGRTMIN, glibc's");
	rejects("RTMAX+1", "beyond SIGRTMAX");
	rejects("RTMIN+", "offset missing");
	rejects("RTMIN+99", "beyond SIGRTMAX");
	rejects("nope", "no such signal");
	return tap_done();
}
