// SPDX-License-Identifier: GPL-2.0
/*
 * text.c - strings from traced processes escaped for text output (see text.h).
 *
 * A process names its threads (prctl PR_SET_NAME), its files and its symbols as it likes, and
 * latsnap, root, prints them to terminals, the journal and summary.txt. What is escaped:
 *  - a backslash, as "\\", so that every escape reads one way;
 *  - newline, tab and carriage return as "\n", "\t", "\r"; every other C0 control byte and DEL
 *    as "\xNN" (ESC is "\x1b");
 *  - each byte that is not part of well-formed UTF-8 (a stray continuation byte, an overlong
 *    form, a surrogate, beyond U+10FFFF, a cut sequence) as "\xNN": 0x80-0x9f on their own are
 *    the C1 controls of an 8-bit terminal (0x9b is CSI);
 *  - the C1 controls as UTF-8 (U+0080-U+009F), which some terminals act on, and the characters
 *    that reorder or break lines without a control byte (the bidirectional marks, embeddings,
 *    overrides and isolates U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069; the line and
 *    paragraph separators U+2028, U+2029) as "\uNNNN".
 * Everything else, printable ASCII and well-formed UTF-8, is kept as it is.
 *
 * And every JSON text latsnap writes (ls_json_text()): JSON keeps these strings exact, but must
 * be UTF-8, so what is not well-formed UTF-8 there is U+FFFD. Both read UTF-8 by one table.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/text.h"

/* The longest escape ("\u202e") and its NUL. */
#define ESC_MAX 8

/*
 * The well-formed UTF-8 sequence at @p, by the Unicode standard's table of well-formed byte
 * sequences (table 3-7): its length (2 to 4) and code point. Or 0 when @p starts none, with in
 * *@bad the length of its maximal ill-formed subpart (1 to 3): a lead byte and the continuation
 * bytes that could still have made a sequence of it, or the one byte that starts none (ASCII
 * aside). The second byte's range is what rules out overlong forms, surrogates and code points
 * beyond U+10FFFF, so no decoded value is checked after.
 */
static size_t utf8_seq(const unsigned char *p, uint32_t *cp, size_t *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, k;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		*cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		*cp = p[0] & 0x0f;
		lo = p[0] == 0xe0 ? 0xa0 : 0x80; /* E0 80..9F: overlong */
		hi = p[0] == 0xed ? 0x9f : 0xbf; /* ED A0..BF: a surrogate */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		*cp = p[0] & 0x07;
		lo = p[0] == 0xf0 ? 0x90 : 0x80; /* F0 80..8F: overlong */
		hi = p[0] == 0xf4 ? 0x8f : 0xbf; /* F4 90..BF: beyond U+10FFFF */
	} else {
		*bad = 1; /* a continuation byte, C0, C1 (overlong) or F5..FF */
		return 0;
	}
	/* A NUL ends the loop too: it is no continuation byte. */
	for (k = 1; k < n; k++) {
		if (p[k] < lo || p[k] > hi) {
			*bad = k;
			return 0;
		}
		*cp = *cp << 6 | (p[k] & 0x3f);
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/* The characters that act on a terminal or on the order and lines of text, printed "\uNNNN". */
static bool is_format_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * The next piece of @p: how many bytes of it (*@in) and what to print: its escape in @esc
 * (returned), or NULL when those bytes are printed as they are.
 */
static const char *next_piece(const unsigned char *p, size_t *in, char esc[ESC_MAX])
{
	uint32_t cp;
	size_t n, bad;

	*in = 1;
	switch (*p) {
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\t':
		return "\\t";
	case '\r':
		return "\\r";
	}
	if (*p < 0x20 || *p == 0x7f) {
		snprintf(esc, ESC_MAX, "\\x%02x", *p);
		return esc;
	}
	if (*p < 0x80) {
		return NULL;
	}
	n = utf8_seq(p, &cp, &bad);
	if (!n) { /* text shows each byte of it as \xNN: it loses none */
		snprintf(esc, ESC_MAX, "\\x%02x", *p);
		return esc;
	}
	*in = n;
	if (is_format_control(cp)) {
		snprintf(esc, ESC_MAX, "\\u%04x", (unsigned int)cp);
		return esc;
	}
	return NULL;
}

/**
 * ls_text_escape() - @text as one line that prints as it reads (the rules atop lib/text.c)
 * @buf: receives as much of the escaped text as fits, whole escapes only, and a NUL (when
 *	 @size > 0); may be NULL when @size is 0
 * @size: of @buf
 * @text: any bytes, NUL-terminated; NULL is taken as ""
 *
 * Pure and reentrant: no allocation, no global state. The escaped text is at most 4 times as
 * long as @text.
 *
 * Return: the length of the whole escaped text, as snprintf() counts: @size or more means @buf
 * holds only a part.
 */
size_t ls_text_escape(char *buf, size_t size, const char *text)
{
	const unsigned char *p = (const unsigned char *)(text ? text : "");
	char spare[ESC_MAX];
	const char *piece;
	size_t total = 0, len = 0, in, n;
	bool full = false;

	while (*p) {
		piece = next_piece(p, &in, spare);
		n = piece ? strlen(piece) : in;
		if (!full && len + n < size) {
			memcpy(buf + len, piece ? piece : (const char *)p, n);
			len += n;
		} else {
			full = true; /* the part kept ends on a whole escape */
		}
		total += n;
		p += in;
	}
	if (size) {
		buf[len] = '\0';
	}
	return total;
}

/**
 * ls_text() - ls_text_escape() into @buf, for a printf argument; cut text ends in "..."
 * @buf: receives the text
 * @size: of @buf
 * @text: any bytes; NULL is taken as ""
 *
 * Return: @buf.
 */
const char *ls_text(char *buf, size_t size, const char *text)
{
	if (ls_text_escape(buf, size, text) >= size && size > 3) {
		ls_text_escape(buf, size - 3, text);
		strcat(buf, "...");
	}
	return buf;
}

/**
 * ls_text_dup() - @text escaped whole, in a new string
 * @text: any bytes; NULL is taken as ""
 *
 * Return: a malloc()ed string the caller frees, or NULL when memory ran out.
 */
char *ls_text_dup(const char *text)
{
	size_t n = ls_text_escape(NULL, 0, text);
	char *buf = malloc(n + 1);

	if (buf) {
		ls_text_escape(buf, n + 1, text);
	}
	return buf;
}

/**
 * ls_put_text() - print @text escaped whole to @out, however long
 * @out: where to
 * @text: any bytes; NULL prints nothing
 */
void ls_put_text(FILE *out, const char *text)
{
	const unsigned char *p = (const unsigned char *)(text ? text : ""), *run = p;
	char spare[ESC_MAX];
	const char *piece;
	size_t in;

	/* What needs no escape goes in runs: stderr is unbuffered, a write each. */
	while (*p) {
		piece = next_piece(p, &in, spare);
		if (piece) {
			fwrite(run, 1, (size_t)(p - run), out);
			fputs(piece, out);
			run = p + in;
		}
		p += in;
	}
	fwrite(run, 1, (size_t)(p - run), out);
}

/* @json with each maximal ill-formed subpart as "\ufffd" into @out (NULL: only measured). */
static size_t json_utf8(char *out, const unsigned char *json)
{
	const unsigned char *p = json, *run = json;
	size_t len = 0, n, bad;
	uint32_t cp;

	while (*p) {
		n = *p < 0x80 ? 1 : utf8_seq(p, &cp, &bad);
		if (n) {
			p += n;
			continue;
		}
		/* What was well-formed since the last one goes in one copy. */
		if (out) {
			memcpy(out + len, run, (size_t)(p - run));
			memcpy(out + len + (size_t)(p - run), "\\ufffd", 6);
		}
		len += (size_t)(p - run) + 6;
		p += bad;
		run = p;
	}
	if (out) {
		memcpy(out + len, run, (size_t)(p - run) + 1);
	}
	return len + (size_t)(p - run);
}

/**
 * ls_json_text() - @obj as JSON text to write: json-c's, made valid UTF-8
 * @obj: the value (NULL is "null", as json-c has it)
 * @flags: JSON_C_TO_STRING_*, as json_object_to_json_string_ext() takes them
 *
 * Every JSON text latsnap writes comes from here. json-c writes a string's bytes from 0x20 up
 * as they are (it escapes only '"', '\\', '/' and bytes below 0x20), and a comm, a path or a
 * request's argument is whatever bytes a program chose, and JSON text that is not UTF-8 is
 * refused whole by strict readers (Python's json). Well-formed UTF-8 is kept byte for
 * byte, and each maximal ill-formed subpart (a lead byte with the continuation bytes that could
 * still have completed it, or one byte; Unicode's recommended practice, as Python and browsers
 * decode) is the escape \ufffd, U+FFFD: a name reads as near its bytes as UTF-8 can say. A
 * pass over the whole text suffices: outside strings json-c writes ASCII only (numbers
 * included), and its escapes are ASCII, so every byte from 0x80 up is a string's or a key's, in
 * order, and an escape is never cut into.
 *
 * Return: the text, malloc()ed (the caller frees it), or NULL without memory.
 */
char *ls_json_text(struct json_object *obj, int flags)
{
	const unsigned char *json;
	char *text;

	json = (const unsigned char *)json_object_to_json_string_ext(obj, flags);
	if (!json) {
		return NULL;
	}
	text = malloc(json_utf8(NULL, json) + 1);
	if (text) {
		json_utf8(text, json);
	}
	return text;
}

/* XML 1.0's Char: no C0 control but tab, newline and carriage return; neither U+FFFE nor U+FFFF. */
static bool xml_char(uint32_t cp)
{
	return cp >= 0x20 ? cp != 0xfffe && cp != 0xffff : cp == '\t' || cp == '\n' || cp == '\r';
}

/**
 * ls_xml_text() - @text as XML/HTML character data or an attribute value: & < > " ' escaped,
 * and what XML 1.0 has no character for as U+FFFD ("&#xFFFD;"): a byte that is not UTF-8 (each
 * maximal ill-formed subpart, as ls_json_text()), a C0 control but tab, newline and carriage
 * return, U+FFFE, U+FFFF. A name a traced process chose then leaves an SVG or a page
 * well-formed: XML parsers reject the whole document for one such byte.
 * @out: where to
 * @text: the text
 * @max: at most this many bytes of it (SIZE_MAX: all); a sequence it cuts is one U+FFFD
 */
void ls_xml_text(FILE *out, const char *text, size_t max)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0, n, bad;
	uint32_t cp;

	while (i < max && p[i]) {
		if (p[i] < 0x80) {
			n = 1;
			cp = p[i];
		} else {
			n = utf8_seq(p + i, &cp, &bad);
		}
		if (!n) {
			fputs("&#xFFFD;", out);
			i += bad;
			continue;
		}
		if (n > max - i) {
			fputs("&#xFFFD;", out);
			break;
		}
		switch (cp) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			if (xml_char(cp)) {
				fwrite(p + i, 1, n, out);
			} else {
				fputs("&#xFFFD;", out);
			}
		}
		i += n;
	}
}
