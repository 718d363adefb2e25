// SPDX-License-Identifier: GPL-2.0
/* array.c - growing a heap array: room for more elements, or one more zeroed element. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"

/* The first allocation's elements: small arrays are the common case, big ones double soon. */
#define ARRAY_FIRST_CAP 16

/**
 * array_reserve() - room for @need elements of @size bytes in *@array, which has *@cap
 *
 * The capacity doubles (from ARRAY_FIRST_CAP) until @need fits, so that appending one at a time
 * costs amortized constant time.
 *
 * Return: 0 (*@array and *@cap updated), or -ENOMEM (both untouched).
 */
int array_reserve(void **array, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : ARRAY_FIRST_CAP;
	void *p;

	if (*array && need <= *cap) {
		return 0;
	}
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2) {
			return -ENOMEM;
		}
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size) {
		return -ENOMEM;
	}
	p = realloc(*array, ncap * size);
	if (!p) {
		return -ENOMEM;
	}
	*array = p;
	*cap = ncap;
	return 0;
}

/**
 * array_append() - one more zeroed element of @size bytes at the end of *@array (*@nr of them),
 * for an array kept at its exact length (no capacity beside it: struct outlier's)
 *
 * Return: the new element (*@nr counts it), or NULL without memory (*@array untouched).
 */
void *array_append(void **array, size_t *nr, size_t size)
{
	char *p;

	if (size && *nr >= SIZE_MAX / size - 1) {
		return NULL;
	}
	p = realloc(*array, (*nr + 1) * size);
	if (!p) {
		return NULL;
	}
	*array = p;
	memset(p + *nr * size, 0, size);
	return p + (*nr)++ * size;
}
