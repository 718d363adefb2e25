/* SPDX-License-Identifier: GPL-2.0 */
/* array.h - growing a heap array: the one policy (doubling) every layer's arrays use. */
#ifndef LATSNAP_ARRAY_H
#define LATSNAP_ARRAY_H

#include <stddef.h>

int array_reserve(void **array, size_t *cap, size_t need, size_t size);
void *array_append(void **array, size_t *nr, size_t size);

#endif /* LATSNAP_ARRAY_H */
