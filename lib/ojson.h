/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LATSNAP_OJSON_H
#define LATSNAP_OJSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

int64_t ojson_i64(struct json_object *obj, const char *key);
const char *ojson_str(struct json_object *obj, const char *key, const char *fallback);
void ojson_add_flag(struct json_object *outlier, const char *text);
void ojson_drop_flags(struct json_object *outlier, const char *prefix);
bool ojson_has_flag(struct json_object *outlier, const char *prefix);
void ojson_print_text(FILE *out, struct json_object *outlier);

#endif /* LATSNAP_OJSON_H */
