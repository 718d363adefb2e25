// SPDX-License-Identifier: GPL-2.0
/*
 * sigstate [MS=100] [SIG=60]
 *
 * Reports what the preload library did to this process, then calls
 * nanosleep(MS) once. Meant to be built linked against liblatsnap.so and made
 * setuid root: run by an ordinary user, the process is in secure execution
 * (AT_SECURE), where the library must do nothing at all: an unprivileged user
 * must not be able to steer a privileged process through the library (its
 * environment settings, a signal handler, a registration latsnap would act on).
 * Run by root, the same binary is not in secure execution and the library
 * takes SIG and registers, which is the control.
 * WL_LOG lines: "pid P", "at_secure 0|1" (getauxval(AT_SECURE)),
 * "handler dfl|ign|other" (the disposition of SIG), "abi_sig N" (the signal
 * in the library's exported latsnap_preload_abi, 0 when it did not register,
 * -1 when the library is not loaded), "nap TID START_NS END_NS".
 */
#include "wl_common.h"
#include <dlfcn.h>
#include <signal.h>
#include <sys/auxv.h>

#include <linux/types.h>
#include "../../include/latsnap.h"

int main(int argc, char **argv)
{
	const volatile struct ls_preload_abi *abi;
	struct sigaction old;
	const char *disp;
	long ms, sig;

	wl_init_knobs("sigstate", argc, argv, WL_MS("MS", ms, 100), WL_SIG("SIG", sig, 60));

	wl_log("at_secure %lu", getauxval(AT_SECURE));
	if (sigaction((int)sig, NULL, &old))
		wl_die("sigaction", errno);
	if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
		disp = "dfl";
	else if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
		disp = "ign";
	else
		disp = "other";
	wl_log("handler %s", disp);
	/* Looked up at run time: the same source runs with and without the library. */
	abi = dlsym(RTLD_DEFAULT, LS_PRELOAD_ABI_SYMBOL);
	wl_log("abi_sig %d", abi ? (int)abi->sig : -1);
	wl_say("at_secure %lu, handler %s, abi_sig %d", getauxval(AT_SECURE), disp,
	       abi ? (int)abi->sig : -1);

	wl_timed_nap(ms);
	return 0;
}
