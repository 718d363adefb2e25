// SPDX-License-Identifier: GPL-2.0
/*
 * maprel OBJECT [MS=100] [N=2]
 *
 * A process that maps a relocatable object (a .o) readable and executable, as a linker or a
 * hostile program may, then takes N naps of MS ms in nap() (outliers: requested sleeps). The
 * tracker reads every process's mappings to symbolize its stacks: a relocatable object among
 * them is no module (libdwfl would relocate it through a callback latsnap did not give: a call
 * to address 0, latsnap's SIGSEGV).
 * WL_LOG lines: "pid P", "nap TID START_NS END_NS".
 */
#include "wl_common.h"
#include <sys/mman.h>
#include <sys/stat.h>

static __attribute__((noinline)) void nap(long ms)
{
	wl_timed_nap(ms);
	__asm__ volatile("" ::: "memory"); /* keep the frame */
}

int main(int argc, char **argv)
{
	long ms = argc > 2 ? atol(argv[2]) : 100, n = argc > 3 ? atol(argv[3]) : 2, i;
	struct stat st;
	void *map;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: maprel OBJECT [MS] [N]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		wl_die(argv[1], errno);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		wl_die("mmap", errno);
	}
	wl_log("pid %d", (int)getpid());
	for (i = 0; i < n; i++) {
		nap(ms);
	}
	munmap(map, (size_t)st.st_size);
	close(fd);
	return 0;
}
