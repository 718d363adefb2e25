// SPDX-License-Identifier: GPL-2.0
/*
 * replay.c - run a libFuzzer harness without libFuzzer: each file named, or each file of each
 * directory named, is given once to LLVMFuzzerTestOneInput(). make check replays the seed
 * corpora and the inputs that once crashed (fuzz/regress/) this way, under the sanitizers in
 * make check-asan; a harness aborts on a broken invariant.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0, cap = 0;
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			data = realloc(data, cap);
			if (!data) {
				abort();
			}
		}
		n = fread(data + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	struct dirent **names;
	char path[4096];
	struct stat st;
	int i, j, n, count = 0, ret = 0;

	if (LLVMFuzzerInitialize) {
		LLVMFuzzerInitialize(&argc, &argv);
	}
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			ret = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			ret |= replay_file(argv[i]) ? 1 : 0;
			count++;
			continue;
		}
		n = scandir(argv[i], &names, NULL, by_name);
		for (j = 0; j < n; j++) {
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
			if (!stat(path, &st) && S_ISREG(st.st_mode)) {
				ret |= replay_file(path) ? 1 : 0;
				count++;
			}
			free(names[j]);
		}
		free(n >= 0 ? names : NULL);
	}
	/* stdout may be /dev/null by now (the harness silences what it tests). */
	dprintf(2, "replay: %d inputs\n", count);
	return ret;
}
