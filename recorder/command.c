// SPDX-License-Identifier: GPL-2.0
/*
 * command.c - starting `record -- COMMAND` as if latsnap were not there: with the signal
 * dispositions and mask latsnap itself was started with, and an environment that differs only
 * in LD_PRELOAD and LATSNAP_SIGNAL.
 *
 * latsnap may have other threads when it forks (lttng-ust's, libraries'), so the child may only
 * call async-signal-safe functions before exec: the environment, the list of files execvp would
 * try and the shell fallback's arguments are all made in the parent, and the child does no more
 * than sigaction, sigprocmask, read, write, dup2, execve and _exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder/command.h"
#include "lib/util.h"

extern char **environ;

/* The shell execvp runs a file the kernel cannot execute (no #! line) with, as glibc does. */
#define COMMAND_SHELL "/bin/sh"

/*
 * The kernel's sigaction, for every signal: glibc's refuses its own two (32 and 33, which it
 * uses for thread cancellation and set*id), whose dispositions COMMAND must still get back.
 * A system call, async-signal-safe.
 */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static int kernel_sigaction(int sig, const struct kernel_sigaction *act,
			    struct kernel_sigaction *old)
{
	return (int)syscall(SYS_rt_sigaction, sig, act, old, sizeof(act->mask));
}

/**
 * command_capture_signals - remember which signals are ignored and which are blocked now, at
 * latsnap's start, before latsnap sets handlers of its own (SIGINT, SIGTERM, SIGPIPE) or blocks
 * any: COMMAND gets these back, whatever latsnap did meanwhile.
 */
void command_capture_signals(struct command *cmd)
{
	struct kernel_sigaction sa;
	int sig;

	memset(cmd->ignored, 0, sizeof(cmd->ignored));
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || kernel_sigaction(sig, NULL, &sa)) {
			continue;
		}
		cmd->ignored[sig] = sa.handler == SIG_IGN;
	}
	sigprocmask(SIG_SETMASK, NULL, &cmd->mask);
}

/* Is environ's "NAME=VALUE" @entry the variable @name? */
static bool env_named(const char *entry, const char *name)
{
	size_t len = strlen(name);

	return !strncmp(entry, name, len) && entry[len] == '=';
}

/*
 * build_env - COMMAND's environment: latsnap's own, with @preload first in LD_PRELOAD (keeping
 * what was there after it) and LATSNAP_SIGNAL=@signal when @signal is set. Without @preload,
 * latsnap's environment unchanged.
 */
static int build_env(struct command *cmd, const char *preload, int signal)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = 0, i, k = 0;
	int err = -ENOMEM;

	while (environ && environ[n]) {
		n++;
	}
	cmd->envp = calloc(n + 3, sizeof(*cmd->envp));
	if (!cmd->envp) {
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (preload && (env_named(environ[i], "LD_PRELOAD") ||
				(signal && env_named(environ[i], "LATSNAP_SIGNAL")))) {
			continue;
		}
		cmd->envp[k++] = environ[i];
	}
	if (preload) {
		if (asprintf(&cmd->env_owned[0], "LD_PRELOAD=%s%s%s", preload,
			     old && *old ? ":" : "", old ? old : "") < 0) {
			cmd->env_owned[0] = NULL;
			goto out;
		}
		cmd->envp[k++] = cmd->env_owned[0];
		if (signal) {
			if (asprintf(&cmd->env_owned[1], "LATSNAP_SIGNAL=%d", signal) < 0) {
				cmd->env_owned[1] = NULL;
				goto out;
			}
			cmd->envp[k++] = cmd->env_owned[1];
		}
	}
	cmd->envp[k] = NULL;
	err = 0;
out:
	return err;
}

/*
 * build_paths - the files execvp(@name) would try, in its order: @name itself when it holds a
 * '/', else each directory of PATH (the system's default path when PATH is unset) joined with
 * @name, an empty entry meaning the current directory. An empty or overlong name gets no file
 * and the error execvp would give.
 */
static int build_paths(struct command *cmd, const char *name)
{
	char *path = NULL, *dir, *next;
	const char *env;
	size_t nr = 1, len, i = 0;
	int err = -ENOMEM;

	if (!*name || strlen(name) > NAME_MAX) {
		cmd->no_file_err = *name ? ENAMETOOLONG : ENOENT;
		cmd->paths = calloc(1, sizeof(*cmd->paths));
		err = cmd->paths ? 0 : -ENOMEM;
		goto out;
	}
	if (strchr(name, '/')) {
		cmd->paths = calloc(2, sizeof(*cmd->paths));
		if (cmd->paths) {
			cmd->paths[0] = strdup(name);
		}
		err = cmd->paths && cmd->paths[0] ? 0 : -ENOMEM;
		goto out;
	}
	env = getenv("PATH");
	if (env) {
		path = strdup(env);
	} else {
		len = confstr(_CS_PATH, NULL, 0);
		path = len ? malloc(len) : strdup("/bin:/usr/bin");
		if (path && len) {
			confstr(_CS_PATH, path, len);
		}
	}
	if (!path) {
		goto out;
	}
	for (dir = path; *dir; dir++) {
		nr += *dir == ':';
	}
	cmd->paths = calloc(nr + 1, sizeof(*cmd->paths));
	if (!cmd->paths) {
		goto out;
	}
	for (dir = path; dir; dir = next) {
		next = strchr(dir, ':');
		if (next) {
			*next++ = '\0';
		}
		/* execvp skips a directory too long for its buffer. */
		if (strlen(dir) >= PATH_MAX) {
			continue;
		}
		if (asprintf(&cmd->paths[i], "%s%s%s", dir, *dir ? "/" : "", name) < 0) {
			cmd->paths[i] = NULL;
			goto out;
		}
		i++;
	}
	err = 0;
out:
	free(path);
	return err;
}

/**
 * command_prepare - everything command_start() needs, made before fork: @argv is COMMAND,
 * @preload the library to put first in its LD_PRELOAD (NULL: none, and the environment as it
 * is), @signal the signal the library is asked to use (0: its default).
 * command_capture_signals() must have been called first, as early as possible.
 * Return: 0, or -ENOMEM after saying so.
 */
int command_prepare(struct command *cmd, char **argv, const char *preload, int signal)
{
	size_t argc = 0;
	int err;

	cmd->argv = argv;
	err = build_env(cmd, preload, signal);
	if (!err) {
		err = build_paths(cmd, argv[0]);
	}
	if (err) {
		goto out;
	}
	while (argv[argc]) {
		argc++;
	}
	/* "/bin/sh" FILE ARG... NULL: FILE is filled in by the child, for the file it tried. */
	cmd->sh_argv = calloc(argc + 2, sizeof(*cmd->sh_argv));
	if (!cmd->sh_argv) {
		err = -ENOMEM;
		goto out;
	}
	cmd->sh_argv[0] = COMMAND_SHELL;
	memcpy(cmd->sh_argv + 2, argv + 1, (argc > 0 ? argc - 1 : 0) * sizeof(*argv));
out:
	if (err) {
		ls_err("record: cannot prepare '%s': %s", argv[0], strerror(-err));
	}
	return err;
}

/*
 * exec_command - in the child: execvp's search over the prepared files, with execve only.
 * Returns the errno execvp would have left.
 */
static int exec_command(struct command *cmd)
{
	bool eacces = false;
	int err = cmd->no_file_err;
	size_t i;

	for (i = 0; cmd->paths[i]; i++) {
		execve(cmd->paths[i], cmd->argv, cmd->envp);
		err = errno;
		if (err == ENOEXEC) {
			/* Not a binary nor a #! script: the shell runs it, as glibc's execvp does. */
			cmd->sh_argv[1] = cmd->paths[i];
			execve(cmd->sh_argv[0], cmd->sh_argv, cmd->envp);
			err = errno;
		}
		switch (err) {
		case EACCES:
			eacces = true;
			/* fallthrough */
		case ENOENT:
		case ESTALE:
		case ENOTDIR:
		case ENODEV:
		case ETIMEDOUT:
			continue;
		default:
			return err;
		}
	}
	return eacces ? EACCES : err;
}

/**
 * command_start - fork COMMAND held at a gate, so tracking is live before its first instruction.
 * Returns the pid, or -1 after saying why; @gate_fd opens the gate (a byte written, or closed to
 * make the child exit 127 instead), @exec_fd reports an exec failure (its errno, as an int), or
 * that of putting its stdout on stderr (@cmd->stdout_to_stderr): COMMAND does not run then.
 */
pid_t command_start(struct command *cmd, int *gate_fd, int *exec_fd)
{
	struct kernel_sigaction sa = { 0 };
	sigset_t all, saved;
	int gate[2] = { -1, -1 }, status[2] = { -1, -1 };
	pid_t pid = -1;
	char go;
	int sig, err, i;

	if (pipe2(gate, O_CLOEXEC) || pipe2(status, O_CLOEXEC)) {
		ls_err("record: pipe: %s", strerror(errno));
		goto fail;
	}
	/*
	 * Until the child has put back the original dispositions, latsnap's handlers are its: with
	 * every signal blocked none runs there, and one sent meanwhile is acted on as COMMAND would.
	 */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &saved);
	pid = fork();
	if (pid == 0) {
		for (sig = 1; sig < NSIG; sig++) {
			if (sig == SIGKILL || sig == SIGSTOP) {
				continue;
			}
			sa.handler = cmd->ignored[sig] ? SIG_IGN : SIG_DFL;
			kernel_sigaction(sig, &sa, NULL);
		}
		sigprocmask(SIG_SETMASK, &cmd->mask, NULL);
		close(gate[1]);
		close(status[0]);
		if (read(gate[0], &go, 1) != 1) {
			_exit(127);
		}
		/* Under --json latsnap's stdout is the NDJSON stream: COMMAND's own goes to stderr. */
		if (cmd->stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			err = errno;
		} else {
			err = exec_command(cmd);
		}
		if (write(status[1], &err, sizeof(err)) < 0) {
			_exit(127);
		}
		_exit(127);
	}
	err = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (pid < 0) {
		ls_err("record: fork: %s", strerror(err));
		goto fail;
	}
	close(gate[0]);
	close(status[1]);
	*gate_fd = gate[1];
	*exec_fd = status[0];
	return pid;
fail:
	for (i = 0; i < 2; i++) {
		if (gate[i] >= 0) {
			close(gate[i]);
		}
		if (status[i] >= 0) {
			close(status[i]);
		}
	}
	return -1;
}

/**
 * command_free - what command_prepare() made. @cmd may be all zero.
 */
void command_free(struct command *cmd)
{
	size_t i;

	for (i = 0; cmd->paths && cmd->paths[i]; i++) {
		free(cmd->paths[i]);
	}
	free(cmd->paths);
	free(cmd->sh_argv);
	free(cmd->envp);
	free(cmd->env_owned[0]);
	free(cmd->env_owned[1]);
	cmd->paths = NULL;
	cmd->sh_argv = NULL;
	cmd->envp = NULL;
	cmd->env_owned[0] = NULL;
	cmd->env_owned[1] = NULL;
}
