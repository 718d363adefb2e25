/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup.h - cgroup v2 directories as an operator names them, to the ids the kernel knows them by.
 */
#ifndef LATSNAP_LIB_CGROUP_H
#define LATSNAP_LIB_CGROUP_H

#include <stddef.h>
#include <stdint.h>

int ls_cgroup2_mount(const char *mountinfo, char *dir, size_t len, char *v1, size_t v1len);
int ls_cgroup_resolve(const char *path, const char *root, char *full, size_t len, uint64_t *id);

#endif /* LATSNAP_LIB_CGROUP_H */
