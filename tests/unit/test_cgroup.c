// SPDX-License-Identifier: GPL-2.0
/*
 * test_cgroup.c - the cgroup2 mount found in a mountinfo file: a hybrid setup, a pure v2 one, a
 * v1-only one (the mount named for the error), none, and a mount point with an escaped blank.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "tap.h"

static char file[] = "/tmp/test_cgroup.XXXXXX";

static int mount_of(const char *text, char *dir, size_t len, char *v1, size_t v1len)
{
	FILE *f = fopen(file, "w");

	if (!f) {
		bail_out("cannot write %s", file);
	}
	fputs(text, f);
	fclose(f);
	return ls_cgroup2_mount(file, dir, len, v1, v1len);
}

#define ROOT "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
#define V1 "30 25 0:26 / /sys/fs/cgroup/cpu rw,nosuid shared:9 - cgroup cgroup rw,cpu\n"
#define UNIFIED "29 25 0:25 / /sys/fs/cgroup/unified rw,nosuid shared:8 - cgroup2 cgroup2 rw\n"
#define PURE "29 21 0:25 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 rw\n"

int main(void)
{
	char dir[256], v1[256];
	int fd = mkstemp(file);

	if (fd < 0) {
		bail_out("mkstemp: %s", strerror(errno));
	}
	close(fd);
	is_int(mount_of(ROOT V1 UNIFIED, dir, sizeof(dir), v1, sizeof(v1)), 0, "hybrid: found");
	is_str(dir, "/sys/fs/cgroup/unified", "hybrid: the unified mount");
	is_str(v1, "", "hybrid: no v1 mount named");
	is_int(mount_of(ROOT PURE, dir, sizeof(dir), v1, sizeof(v1)), 0, "pure v2: found");
	is_str(dir, "/sys/fs/cgroup", "pure v2: /sys/fs/cgroup");
	is_int(mount_of(ROOT V1, dir, sizeof(dir), v1, sizeof(v1)), -ENODEV, "v1 only: -ENODEV");
	is_str(v1, "/sys/fs/cgroup/cpu", "v1 only: the v1 mount named");
	is_int(mount_of(ROOT, dir, sizeof(dir), v1, sizeof(v1)), -ENODEV, "none: -ENODEV");
	is_str(v1, "", "none: no v1 mount named");
	is_int(mount_of(ROOT "40 22 0:40 / /mnt/my\\040cg rw shared:20 - cgroup2 none rw\n", dir,
			sizeof(dir), v1, sizeof(v1)),
	       0, "an escaped mount point: found");
	is_str(dir, "/mnt/my cg", "an escaped mount point: unescaped");
	is_int(mount_of(ROOT "41 22 0:41 / /x rw - cgroup2\n", dir, sizeof(dir), v1, sizeof(v1)), 0,
	       "a line without source and options: still read");
	is_int(ls_cgroup2_mount("/nonexistent/mountinfo", dir, sizeof(dir), v1, sizeof(v1)),
	       -ENOENT, "a missing file: -ENOENT");
	unlink(file);
	return tap_done();
}
