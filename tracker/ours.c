// SPDX-License-Identifier: GPL-2.0
/*
 * ours.c - the processes latsnap never reports (issue 46): the LTTng daemons it commands, its
 * helpers, another latsnap and its helpers. Their waits are latsnap's own snapshots' doing, and
 * each reported would make the next snapshot. Known by the file a root process runs (a name
 * alone is anyone's: an unprivileged user's process named so is reported as any other), kept
 * in the BPF map quiet_tgids, which the programs consult once per thread and tracking generation.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/tracker-int.h"
#include "latsnap.skel.h"
#include "lib/util.h"

/* The executables whose root processes are latsnap's own or LTTng's (exe_quiet() in BPF). */
static const char *const ours_exes[] = {
	"latsnap",	  "latsnap-replay",  "latsnap-trace-reader",
	"lttng-sessiond", "lttng-consumerd", "lttng-relayd",
};

/* The real uid of process @pid, or -1 when it cannot be read (it is gone). */
static long real_uid(pid_t pid)
{
	char path[64], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4)) {
			uid = strtol(line + 4, NULL, 10);
			break;
		}
	}
	fclose(f);
	return uid;
}

/*
 * ours_exe - whether process @pid is a root process running one of ours_exes, its file's name
 * (/proc/PID/exe's last component, " (deleted)" taken off: a binary rebuilt since) into @name.
 */
static bool ours_exe(pid_t pid, char *name, size_t size)
{
	static const char deleted[] = " (deleted)";
	char path[64], exe[4096];
	const char *base;
	size_t len, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0) {
		return false;
	}
	exe[n] = '\0';
	len = (size_t)n;
	if (len > sizeof(deleted) - 1 && !strcmp(exe + len - (sizeof(deleted) - 1), deleted)) {
		exe[len - (sizeof(deleted) - 1)] = '\0';
	}
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	for (i = 0; i < sizeof(ours_exes) / sizeof(ours_exes[0]); i++) {
		if (!strcmp(base, ours_exes[i])) {
			snprintf(name, size, "%s", ours_exes[i]);
			/* After the file: the uid read last cannot be of a process exec'd since. */
			return real_uid(pid) == 0;
		}
	}
	return false;
}

/* Is @pid in the tracked map: COMMAND, a -p target, a child of one? Then it is never ours. */
static bool listed(struct tracker *tr, pid_t pid)
{
	__u32 key = (__u32)pid, reason;

	return !bpf_map_lookup_elem(bpf_map__fd(tr->skel->maps.tracked), &key, &reason);
}

static int quiet(struct tracker *tr, pid_t pid, bool on)
{
	int fd = bpf_map__fd(tr->skel->maps.quiet_tgids);
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (on) {
		return bpf_map_update_elem(fd, &key, &one, BPF_ANY) ? -errno : 0;
	}
	return bpf_map_delete_elem(fd, &key) && errno != ENOENT ? -errno : 0;
}

/**
 * ours_open() - the file names the programs know latsnap's and LTTng's processes by, and the
 *               processes of those files running now (before attach: none is ever tracked)
 *
 * Return: 0, or a negative errno after saying why.
 */
int ours_open(struct tracker *tr)
{
	int fd = bpf_map__fd(tr->skel->maps.quiet_exes), err = 0;
	char key[LS_EXE_NAME_LEN], name[LS_EXE_NAME_LEN];
	struct dirent *de;
	unsigned int i;
	DIR *dir;
	__u8 one = 1;
	pid_t pid;

	for (i = 0; i < sizeof(ours_exes) / sizeof(ours_exes[0]); i++) {
		memset(key, 0, sizeof(key));
		strncpy(key, ours_exes[i], sizeof(key) - 1);
		if (bpf_map_update_elem(fd, key, &one, BPF_ANY)) {
			err = -errno;
			ls_err("tracker: cannot name latsnap's own processes: %s", strerror(-err));
			return err;
		}
	}
	dir = opendir("/proc");
	if (!dir) {
		err = -errno;
		ls_err("tracker: /proc: %s", strerror(-err));
		return err;
	}
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0])) {
			continue;
		}
		pid = (pid_t)atoi(de->d_name);
		if (pid == getpid() || !ours_exe(pid, name, sizeof(name))) {
			continue;
		}
		err = quiet(tr, pid, true);
		if (err) {
			ls_err("tracker: cannot leave out pid %d (%s): %s", (int)pid, name,
			       strerror(-err));
			break;
		}
		ls_verbose("tracker: pid %d (%s) is LTTng's or latsnap's own: never reported",
			   (int)pid, name);
	}
	closedir(dir);
	return err;
}

/**
 * ours_drop() - whether an outlier or a stall of process @pid is not to be reported: a process
 *               of quiet_tgids, or one found to be latsnap's or LTTng's now (a daemon started
 *               since that no exec made known, e.g. before the programs were attached), then
 *               put in quiet_tgids so that its threads stop being tracked. Counted.
 */
bool ours_drop(struct tracker *tr, pid_t pid)
{
	char name[LS_EXE_NAME_LEN];
	__u32 key = (__u32)pid;
	__u8 v;

	if (!bpf_map_lookup_elem(bpf_map__fd(tr->skel->maps.quiet_tgids), &key, &v)) {
		goto drop;
	}
	if (listed(tr, pid) || !ours_exe(pid, name, sizeof(name))) {
		return false;
	}
	if (!quiet(tr, pid, true)) {
		/* Its threads decide again, at their next hook. */
		__atomic_add_fetch(&tr->skel->data->tracking_gen, 1, __ATOMIC_SEQ_CST);
	}
	ls_verbose("tracker: pid %d (%s) is LTTng's or latsnap's own: never reported", (int)pid,
		   name);
drop:
	tr->ours.dropped++;
	return true;
}

/**
 * ours_target() - @pid becomes (@on) or stops being a -p target: asked for by pid, one of
 *                 latsnap's or LTTng's processes is tracked after all, with a warning; dropped,
 *                 it is left out again. The caller bumps the tracking generation.
 */
void ours_target(struct tracker *tr, pid_t pid, bool on)
{
	char name[LS_EXE_NAME_LEN];

	if (!ours_exe(pid, name, sizeof(name))) {
		if (on) {
			quiet(tr, pid, false);
		}
		return;
	}
	if (!on) {
		/* Unless still tracked for another reason (a tracked process's child). */
		if (!listed(tr, pid)) {
			quiet(tr, pid, true);
		}
		return;
	}
	quiet(tr, pid, false);
	ls_err("record: pid %d is %s, left out unless asked for by pid: tracked, but its waits may "
	       "be latsnap's own snapshots' doing",
	       (int)pid, name);
}
