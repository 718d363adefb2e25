/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_OUTLIER_H
#define LATSNAP_OUTLIER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

int64_t outlier_i64(struct json_object *obj, const char *key);
const char *outlier_str(struct json_object *obj, const char *key, const char *fallback);
void outlier_add_flag(struct json_object *outlier, const char *text);
void outlier_drop_flags(struct json_object *outlier, const char *prefix);
bool outlier_has_flag(struct json_object *outlier, const char *prefix);
void outlier_print_text(FILE *out, struct json_object *outlier);

#endif /* LATSNAP_OUTLIER_H */
