/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_OUTLIER_H
#define LATSNAP_OUTLIER_H

#include <stdio.h>
#include <json-c/json.h>

void outlier_print_text(FILE *out, struct json_object *outlier);

#endif /* LATSNAP_OUTLIER_H */
