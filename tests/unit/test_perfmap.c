// SPDX-License-Identifier: GPL-2.0
/*
 * perfmap: this process's own /tmp/perf-PID.map, written as a JIT writes it (appended to,
 * rewritten), and as a hostile program might (control characters, a line too long, a FIFO,
 * another user's file): what names what, and nothing blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracker/perfmap.h"
#include "tap.h"

static char path[64];

static void put(const char *text, bool append)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		bail_out("%s: %s", path, strerror(errno));
	}
	close(fd);
}

/* The name perfmap gives @addr after the map's next re-read, "-" for none, "+OFF" appended. */
static const char *name_of(struct perfmap *pm, uint64_t addr)
{
	static char buf[256];
	uint64_t off = 0;
	const char *n;

	usleep(PERFMAP_RECHECK_NS / 1000 + 5000);
	n = perfmap_lookup(pm, addr, &off);
	if (!n) {
		return "-";
	}
	snprintf(buf, sizeof(buf), "%s+%llu", n, (unsigned long long)off);
	return buf;
}

int main(void)
{
	struct perfmap *pm;
	char *big;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	pm = perfmap_new(getpid());
	if (!pm) {
		bail_out("perfmap_new");
	}
	is_str(name_of(pm, 0x1000), "-", "no map: no name");
	ok(!strncmp(perfmap_module(pm), "/tmp/perf-", 10) && strstr(perfmap_module(pm), ".map"),
	   "frames named from it have the module /tmp/perf-PID.map: %s", perfmap_module(pm));

	put("1000 100 alpha\n0x2000 0x10 beta\n", false);
	is_str(name_of(pm, 0x1050), "alpha+80", "inside the first line's range");
	is_str(name_of(pm, 0x2000), "beta+0", "0x prefixes taken");
	is_str(name_of(pm, 0x1100), "-", "the end is not inside");
	is_str(name_of(pm, 0xfff), "-", "before the start is not inside");

	put("1000 100 alpha2\n", true);
	is_str(name_of(pm, 0x1050), "alpha2+80", "appended: the later line at a place wins");
	is_str(name_of(pm, 0x2001), "beta+1", "appended: the earlier lines stay");
	put("500 10 low\n4000 10 high\n", true);
	is_str(name_of(pm, 0x505), "low+5", "appended below the others: merged in place");
	is_str(name_of(pm, 0x1050), "alpha2+80", "and the others are still found");

	put("3000 10 gam", true);
	is_str(name_of(pm, 0x3000), "-", "a line still being written names nothing yet");
	put("ma\n", true);
	is_str(name_of(pm, 0x3000), "gamma+0", "once ended, it is read whole");

	put("5000 10 delta\n", false);
	is_str(name_of(pm, 0x1050), "-", "rewritten: the old lines are gone");
	is_str(name_of(pm, 0x5000), "delta+0", "rewritten: the new ones are read");

	put("6000 10 a\033[2Jb\n7000 zz bad\nzz 10 bad\n8000 0 empty\nffffffffffffffff 10 wraps\n",
	    true);
	is_str(name_of(pm, 0x6000), "a?[2Jb+0", "control characters do not get through");
	is_str(name_of(pm, 0x7000), "-", "a bad size: skipped");

	big = malloc(3 * PERFMAP_MAX_LINE);
	if (!big) {
		bail_out("malloc");
	}
	memset(big, 'x', 3 * PERFMAP_MAX_LINE - 1);
	big[0] = '9';
	big[1] = ' ';
	big[3 * PERFMAP_MAX_LINE - 1] = '\0';
	put(big, true);
	put("\n9000 10 after_long\n", true);
	free(big);
	is_str(name_of(pm, 0x9000), "after_long+0", "a line too long is skipped, the next is read");
	perfmap_free(pm);

	/* What must not be read: a FIFO (opening it would block), another user's file. */
	unlink(path);
	if (mkfifo(path, 0644)) {
		bail_out("mkfifo: %s", strerror(errno));
	}
	pm = perfmap_new(getpid());
	is_str(name_of(pm, 0x1000), "-", "a FIFO is not opened (no hang) and names nothing");
	perfmap_free(pm);
	unlink(path);
	put("1000 100 alpha\n", false);
	{
		/* Last written long before this process started: a process of the same pid's. */
		struct timespec old[2] = { { .tv_sec = time(NULL) - 3600 - 60 * 60 * 24 * 365 },
					   { .tv_sec = time(NULL) - 3600 - 60 * 60 * 24 * 365 } };

		if (utimensat(AT_FDCWD, path, old, 0)) {
			bail_out("utimensat: %s", strerror(errno));
		}
		pm = perfmap_new(getpid());
		is_str(name_of(pm, 0x1000), "-", "a map older than the process names nothing");
		perfmap_free(pm);
		put("1000 100 alpha\n", false);
		pm = perfmap_new(getpid());
		is_str(name_of(pm, 0x1000), "alpha+0", "written again since it started: read");
		perfmap_free(pm);
	}
	if (geteuid() == 0 && !chown(path, 65534, 65534)) {
		pm = perfmap_new(getpid());
		is_str(name_of(pm, 0x1000), "-", "a map owned by another user names nothing");
		perfmap_free(pm);
	} else {
		skip("not root: cannot give the map to another user");
	}
	unlink(path);
	return tap_done();
}
