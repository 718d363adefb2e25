// SPDX-License-Identifier: GPL-2.0
/*
 * rogue VICTIM_PID [MS=100] [SIG=60]
 *
 * An unprivileged process (run it as uid 65534, without liblatsnap.so) that
 * tries to abuse latsnap's registration prctl, which anybody can call:
 *  1. registers SIG with a handler address it has not installed (the one it
 *     will install later), with handler 0 while SIG's disposition is SIG_DFL
 *     (0 too, in the kernel's sigaction), then, with its handler in place,
 *     with another address (main): latsnap must refuse all three, or it would
 *     send SIG to a process whose handler for it is something else (the
 *     default action kills);
 *  2. repeats a registration, an unregistration and a quiet-thread request with
 *     VICTIM_PID in each argument position in turn: the prctl speaks for the
 *     caller only, so none of this may track, signal or quiet the victim;
 *  3. does the quiet-thread requests from a helper thread, so that only that
 *     thread may be quieted, never the main one;
 *  4. registers properly (its own handler, installed) and calls nanosleep(MS):
 *     latsnap may now track it and signal it, which its handler counts.
 * The prctl itself always fails with EINVAL (the kernel knows no such option);
 * latsnap only watches it go by.
 * WL_LOG lines: "pid P", "victim V", "prctl WHAT RC ERRNO" per call,
 * "quiet_tid T", "registered", "nap TID START_NS END_NS", "handled H",
 * "from_kernel F".
 */
#include "wl_common.h"
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>

#include <linux/types.h>
#include "../../include/latsnap.h"

static unsigned long victim;

static void try_prctl(const char *what, unsigned long a1, unsigned long a2, unsigned long a3,
		      unsigned long a4, unsigned long a5)
{
	int rc = prctl((int)a1, a2, a3, a4, a5);

	wl_log("prctl %s %d %d", what, rc, rc ? errno : 0);
}

/* Each of the five arguments replaced by the victim's pid in turn. */
static void victim_everywhere(const char *what, const unsigned long args[5])
{
	unsigned long a[5];
	char name[64];
	int pos;

	for (pos = 0; pos < 5; pos++) {
		memcpy(a, args, sizeof(a));
		a[pos] = victim;
		snprintf(name, sizeof(name), "%s-victim-arg%d", what, pos + 1);
		try_prctl(name, a[0], a[1], a[2], a[3], a[4]);
	}
}

static void *quiet_attempts(void *arg)
{
	const unsigned long quiet[5] = { LS_PRCTL_OPTION, LS_PRCTL_QUIET_THREAD, 0, 0,
					 LS_ABI_VERSION };

	(void)arg;
	wl_log("quiet_tid %d", (int)wl_gettid());
	victim_everywhere("quiet", quiet);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long handler = (unsigned long)(uintptr_t)wl_on_signal;
	unsigned long reg[5], unreg[5];
	pthread_t thread;
	long ms, sig;

	wl_init("rogue", "VICTIM_PID [MS=100] [SIG=60]", argc, argv);
	if (wl_argc < 2) {
		fprintf(stderr, "usage: rogue VICTIM_PID [MS=100] [SIG=60] [-v]\n");
		return 2;
	}
	victim = (unsigned long)wl_arg(1, 0, 1, 4194304);
	ms = wl_arg(2, 100, 0, 3600000);
	sig = wl_arg(3, 60, 1, 64);
	wl_log("victim %lu", victim);

	/* 1. A handler that is not installed (yet): the kernel would run SIG_DFL. */
	try_prctl("register-uninstalled", LS_PRCTL_OPTION, LS_PRCTL_REGISTER, (unsigned long)sig,
		  handler, LS_ABI_VERSION);
	/* SIG_DFL is what the kernel has for SIG, but it is no handler: a signal would kill us. */
	try_prctl("register-sig-dfl", LS_PRCTL_OPTION, LS_PRCTL_REGISTER, (unsigned long)sig,
		  (unsigned long)(uintptr_t)SIG_DFL, LS_ABI_VERSION);

	wl_count_signal((int)sig);

	/* An address that is code, but not the handler the kernel would run. */
	try_prctl("register-wrong-handler", LS_PRCTL_OPTION, LS_PRCTL_REGISTER, (unsigned long)sig,
		  (unsigned long)(uintptr_t)main, LS_ABI_VERSION);

	/*
	 * 2. Every argument the victim's pid in turn; the others those of a
	 * registration that would succeed for the caller itself.
	 */
	reg[0] = LS_PRCTL_OPTION;
	reg[1] = LS_PRCTL_REGISTER;
	reg[2] = (unsigned long)sig;
	reg[3] = handler;
	reg[4] = LS_ABI_VERSION;
	victim_everywhere("register", reg);
	memcpy(unreg, reg, sizeof(unreg));
	unreg[1] = LS_PRCTL_UNREGISTER;
	victim_everywhere("unregister", unreg);

	/* 3. Quiet requests from a thread of their own: it alone may be quieted. */
	wl_spawn(&thread, quiet_attempts, NULL, "pthread_create");
	pthread_join(thread, NULL);

	/* 4. The one registration that is legitimate: our own handler, installed. */
	try_prctl("register", LS_PRCTL_OPTION, LS_PRCTL_REGISTER, (unsigned long)sig, handler,
		  LS_ABI_VERSION);
	wl_log("registered");

	wl_timed_nap(ms);
	wl_log("handled %d", (int)wl_handled);
	wl_log("from_kernel %d", (int)wl_from_kernel);
	wl_say("handled %d signals, %d from the kernel", (int)wl_handled, (int)wl_from_kernel);
	return 0;
}
