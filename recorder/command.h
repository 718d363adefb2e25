/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_COMMAND_H
#define LATSNAP_COMMAND_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * How `record -- COMMAND` starts COMMAND: everything the child needs is made before fork, since
 * the child of a process with other threads may only call async-signal-safe functions.
 */
struct command {
	char **argv;
	char **envp; /* the environment COMMAND gets */
	char *env_owned[2]; /* its LD_PRELOAD= and LATSNAP_SIGNAL= entries */
	char **paths; /* what execvp would try, in order; NULL-terminated */
	int no_file_err; /* execvp's error when there is no file to try (an empty name) */
	char **sh_argv; /* "/bin/sh" PATH ARG...: a file without a #! line, as execvp runs it */
	unsigned char ignored[NSIG]; /* 1 where latsnap's invoker left the signal ignored */
	sigset_t mask; /* the signal mask latsnap started with */
	bool stdout_to_stderr; /* COMMAND's stdout is latsnap's stderr (record --json) */
};

void command_capture_signals(struct command *cmd);
int command_prepare(struct command *cmd, char **argv, const char *preload, int signal);
pid_t command_start(struct command *cmd, int *gate_fd, int *exec_fd);
void command_free(struct command *cmd);

#endif /* LATSNAP_COMMAND_H */
