// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup.c - where the cgroup v2 hierarchy is mounted, and the id of one of its directories.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "lib/cgroup.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* A mountinfo field in place, without its octal escapes (\040 for a space, \134 a backslash). */
static void unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

static void copy_out(char *dst, size_t len, const char *src)
{
	if (len) {
		snprintf(dst, len, "%s", src);
	}
}

/**
 * ls_cgroup2_mount() - where the cgroup v2 (unified) hierarchy is mounted
 * @mountinfo: the file to read, NULL for /proc/self/mountinfo (tests give their own)
 * @dir: receives the first cgroup2 mount point: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
 *       hybrid setup
 * @len: the size of @dir
 * @v1: receives, when there is none, the first cgroup v1 mount point ("" if none either), for
 *      the error message
 * @v1len: the size of @v1
 *
 * Return: 0; -ENODEV when no cgroup2 hierarchy is mounted; -errno when @mountinfo cannot be
 * read.
 */
int ls_cgroup2_mount(const char *mountinfo, char *dir, size_t len, char *v1, size_t v1len)
{
	char *line = NULL, *mnt, *dash, *fstype, *save;
	size_t cap = 0;
	int ret = -ENODEV, i;
	FILE *f;

	copy_out(dir, len, "");
	copy_out(v1, v1len, "");
	f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	if (!f) {
		return -errno;
	}
	while (ret == -ENODEV && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		dash = strstr(line, " - ");
		if (!dash) {
			continue;
		}
		*dash = '\0';
		fstype = strtok_r(dash + 3, " \n", &save);
		mnt = strtok_r(line, " ", &save);
		for (i = 0; mnt && i < 4; i++) {
			mnt = strtok_r(NULL, " ", &save);
		}
		if (!mnt || !fstype) {
			continue;
		}
		unescape(mnt);
		if (!strcmp(fstype, "cgroup2")) {
			copy_out(dir, len, mnt);
			ret = 0;
		} else if (!strcmp(fstype, "cgroup") && v1len && !*v1) {
			copy_out(v1, v1len, mnt);
		}
	}
	free(line);
	fclose(f);
	if (!ret) {
		copy_out(v1, v1len, "");
	}
	return ret;
}

/* The id BPF sees (cgroup->kn->id) of the cgroup v2 directory @path: its file handle, else inode. */
static int cgroup_id(const char *path, const struct stat *st, uint64_t *id)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h;
	int mount_id;

	h.fh.handle_bytes = sizeof(uint64_t);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) == 0 &&
	    h.fh.handle_bytes == sizeof(uint64_t)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	/* Without file handles: kernfs numbers a node's inode with its 64-bit id as well. */
	*id = (uint64_t)st->st_ino;
	return 0;
}

/**
 * ls_cgroup_resolve() - the cgroup v2 directory an operator names, and its cgroup id
 * @path: absolute (/sys/fs/cgroup/system.slice/x.service), relative to @root
 *        (system.slice/x.service), or absolute within the hierarchy as /proc/PID/cgroup shows it
 *        (/system.slice/x.service) when no such file exists
 * @root: the cgroup2 mount point (ls_cgroup2_mount())
 * @full: receives the directory's path, as tried last when it is not found
 * @len: the size of @full
 * @id: receives the id the kernel's BPF helpers and cgroup->kn->id give it
 *
 * Return: 0; -ENOENT when there is no such directory; -ENOTDIR when it is not a directory;
 * -EXDEV when it is not on a cgroup2 file system (a cgroup v1 directory, or no cgroup at all).
 */
int ls_cgroup_resolve(const char *path, const char *root, char *full, size_t len, uint64_t *id)
{
	struct statfs sfs;
	struct stat st;
	int n;

	if (path[0] == '/') {
		n = snprintf(full, len, "%s", path);
	} else {
		n = snprintf(full, len, "%s/%s", root, path);
	}
	if (n < 0 || (size_t)n >= len) {
		return -ENAMETOOLONG;
	}
	if (stat(full, &st) && errno == ENOENT && path[0] == '/') {
		/* The form of /proc/PID/cgroup, within the hierarchy: under its mount point. */
		n = snprintf(full, len, "%s%s", root, path);
		if (n < 0 || (size_t)n >= len) {
			return -ENAMETOOLONG;
		}
	}
	if (stat(full, &st)) {
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		return -ENOTDIR;
	}
	if (statfs(full, &sfs)) {
		return -errno;
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		return -EXDEV;
	}
	return cgroup_id(full, &st, id);
}
