/* SPDX-License-Identifier: GPL-2.0 */
/*
 * text.h - strings a traced process chose (comm, paths, symbols, request arguments), made safe
 * to print for people and logs: no control character, nothing a terminal acts on, no line of
 * their making. JSON keeps them exact (json-c escapes what must be), but only as UTF-8 can:
 * every JSON text latsnap writes is ls_json_text()'s, with what is not UTF-8 as U+FFFD, and every
 * XML or HTML text ls_xml_text()'s, with what XML 1.0 has no character for as U+FFFD.
 */
#ifndef LATSNAP_TEXT_H
#define LATSNAP_TEXT_H

#include <stddef.h>
#include <stdio.h>

struct json_object;

/* What LS_TEXT() holds: a comm (15 bytes) escaped whole many times over; longer text is cut. */
#define LS_TEXT_BUFSZ 1024

size_t ls_text_escape(char *buf, size_t size, const char *text);
const char *ls_text(char *buf, size_t size, const char *text);
char *ls_text_dup(const char *text);
void ls_put_text(FILE *out, const char *text);
char *ls_json_text(struct json_object *obj, int flags);
void ls_xml_text(FILE *out, const char *text, size_t max);

/*
 * LS_TEXT(s) - @s escaped, as a printf argument: fprintf(out, "%s", LS_TEXT(o->comm)). The
 * buffer is a compound literal of the calling block, so each use has its own; @s NULL gives "".
 */
#define LS_TEXT(s) ls_text((char[LS_TEXT_BUFSZ]){ 0 }, LS_TEXT_BUFSZ, (s))

#endif /* LATSNAP_TEXT_H */
