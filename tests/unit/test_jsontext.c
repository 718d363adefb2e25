// SPDX-License-Identifier: GPL-2.0
/*
 * ls_json_text(): json-c's text, with what is not well-formed UTF-8 as \ufffd, one per maximal
 * ill-formed subpart, and everything else byte for byte.
 */
#include <json-c/json.h>

#include "lib/text.h"
#include "tap.h"

#define R "\\ufffd" /* one replacement, as written */

/*
 * @text as json-c and a strict reader take it back: one string, "" when it is no JSON or not
 * UTF-8 (json-c's own check, JSON_TOKENER_VALIDATE_UTF8).
 */
static bool parses(const char *text)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj = NULL;
	bool ok = false;

	if (!tok) {
		goto out;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
	ok = json_tokener_get_error(tok) == json_tokener_success;
out:
	json_object_put(obj);
	if (tok) {
		json_tokener_free(tok);
	}
	return ok;
}

/* The string of @len bytes @s written: "..." as ls_json_text() has it; NULL without memory. */
static char *string_text(const char *s, size_t len, int flags)
{
	struct json_object *obj = json_object_new_string_len(s, (int)len);
	char *text = obj ? ls_json_text(obj, flags) : NULL;

	json_object_put(obj);
	return text;
}

/* The string @s (sizeof of a literal: its NUL not counted) is written @expected, inside quotes. */
#define writes(s, expected, what) writes_(s, sizeof(s) - 1, "\"" expected "\"", what)
static void writes_(const char *s, size_t len, const char *expected, const char *what)
{
	char *text = string_text(s, len, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	is_str(text, expected, "%s", what);
	ok(text && parses(text), "%s: JSON a strict reader takes", what);
	free(text);
}

/* Well-formed UTF-8 is written byte for byte, each length and each edge of table 3-7. */
static void test_valid(void)
{
	writes("latsnap", "latsnap", "ASCII");
	writes("", "", "the empty string");
	writes("\x7f", "\x7f", "DEL: ASCII, not escaped by JSON");
	writes("caf\xc3\xa9", "caf\xc3\xa9", "2 bytes: U+00E9");
	writes("\xc2\x80\xdf\xbf", "\xc2\x80\xdf\xbf", "2 bytes: U+0080 and U+07FF, the ends");
	writes("\xe2\x82\xac", "\xe2\x82\xac", "3 bytes: U+20AC");
	writes("\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf",
	       "\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf",
	       "3 bytes: U+0800, U+D7FF, U+E000, U+FFFF, around the surrogates");
	writes("\xef\xbf\xbd", "\xef\xbf\xbd", "U+FFFD itself, as UTF-8");
	writes("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "4 bytes: U+1F600");
	writes("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
	       "4 bytes: U+10000 and U+10FFFF, the ends");
	writes("\xe2\x80\xae\xc2\x9b", "\xe2\x80\xae\xc2\x9b",
	       "a right-to-left override and a C1 CSI: well-formed, kept (JSON is not for terminals)");
}

/* Each class of ill-formed sequence, one \ufffd per maximal ill-formed subpart. */
static void test_ill_formed(void)
{
	writes("\xff\xfe", R R, "0xff 0xfe: two bytes that start nothing");
	writes("a\x80z", "a" R "z", "a stray continuation byte");
	writes("\x80\xbf", R R, "two stray continuation bytes: one each");
	writes("\xc3", R, "a lone lead byte at the end");
	writes("\xc3(", R "(", "a lead byte before ASCII: the ASCII is kept");
	writes("\xc0\xaf", R R, "overlong 2 bytes (C0 AF, '/'): C0 starts nothing");
	writes("\xc1\xbf", R R, "overlong 2 bytes (C1 BF)");
	writes("\xe0\x80\xaf", R R R, "overlong 3 bytes (E0 80 AF): E0 then two strays");
	writes("\xf0\x80\x80\xaf", R R R R, "overlong 4 bytes (F0 80 80 AF)");
	writes("\xed\xa0\x80", R R R, "a surrogate (U+D800)");
	writes("\xed\xbf\xbf", R R R, "a surrogate (U+DFFF)");
	writes("\xed\xa0\x80\xed\xb0\x80", R R R R R R, "a surrogate pair, as CESU-8 writes it");
	writes("\xf4\x90\x80\x80", R R R R, "beyond U+10FFFF (U+110000)");
	writes("\xf5\x80\x80\x80", R R R R, "F5: a lead byte no longer");
	writes("\xf8\x88\x80\x80\x80", R R R R R, "a 5-byte form");
	writes("\xe2\x82", R, "a 3-byte sequence cut at the end: one subpart");
	writes("\xe2\x82x", R "x", "a 3-byte sequence cut by ASCII");
	writes("\xf0\x9f\x98", R, "a 4-byte sequence cut at the end");
	writes("\xf0\x9f\x98!", R "!", "a 4-byte sequence cut by ASCII");
	writes("\xf0\x9f\xf0\x9f\x98\x80", R "\xf0\x9f\x98\x80",
	       "a cut sequence before a whole one: the whole one is kept");
	writes("\xe2\x82\xc3\xa9", R "\xc3\xa9", "a cut sequence before a 2-byte one");
	/* The Unicode standard's own example (chapter 3, U+FFFD substitution of maximal subparts). */
	writes("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64", "a" R R R "b" R "c" R R "d",
	       "the standard's example: F1 80 80, E1 80, C2, 80, 80, BF");
	writes("\xff\xfeU8\xc3(\xed\xa0\x80\xf0\x9f\x98\x80",
	       R R "U8" R "(" R R R "\xf0\x9f\x98\x80", "the hostile workload's third name");
}

/* What json-c escapes stays as it wrote it, next to the replacements. */
static void test_escapes(void)
{
	writes("a\\\"\n\t\x01/", "a\\\\\\\"\\n\\t\\u0001/", "json-c's escapes, none needed here");
	writes("\\\xff", "\\\\" R, "a backslash then 0xff: its escape, then the replacement");
	writes("\xff\\n", R "\\\\n", "0xff then a backslash and 'n'");
	writes("\"\xc3\"", "\\\"" R "\\\"",
	       "a lead byte between quotes: the quote is no continuation");
	writes("\xc3\n", R "\\n", "a lead byte before a newline");
	writes("\xe2\x80\x01", R "\\u0001", "a cut sequence before a control byte");
	writes_("\xc3\0\xa9", 3, "\"" R "\\u0000" R "\"",
		"a NUL inside: json-c's \\u0000, no sequence across it");
}

/* json-c writes high bytes as they are, in order, never split by an escape of its own. */
static void test_jsonc(void)
{
	char bytes[0x80], expected[0x80 + 3];
	struct json_object *obj;
	const char *raw;
	int i;

	for (i = 0; i < 0x80; i++) {
		bytes[i] = (char)(0x80 + i);
	}
	obj = json_object_new_string_len(bytes, (int)sizeof(bytes));
	raw = obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN) : NULL;
	expected[0] = '"';
	memcpy(expected + 1, bytes, sizeof(bytes));
	expected[sizeof(bytes) + 1] = '"';
	expected[sizeof(bytes) + 2] = '\0';
	ok(raw && !strcmp(raw, expected),
	   "json-c writes the bytes 0x80-0xff of a string as they are");
	json_object_put(obj);
}

/* A whole object, keys included, pretty or plain: only the ill-formed bytes change. */
static void test_object(void)
{
	struct json_object *obj = json_object_new_object(), *arr = json_object_new_array(),
			   *back = NULL, *v;
	char *text = NULL, *plain = NULL;

	json_object_object_add(obj, "comm", json_object_new_string("\xff\xfeNAME\nIL\"}<"));
	json_object_object_add(obj, "ok", json_object_new_string("caf\xc3\xa9 \xf0\x9f\x98\x80"));
	json_object_object_add(obj, "key\xc3", json_object_new_int(7));
	json_object_object_add(obj, "ms", json_object_new_double(1.5));
	json_object_object_add(obj, "none", NULL);
	json_object_array_add(arr, json_object_new_string("/a\xed\xa0\x80/b"));
	json_object_array_add(arr, json_object_new_boolean(1));
	json_object_object_add(obj, "paths", arr);

	plain = ls_json_text(obj, JSON_C_TO_STRING_PLAIN);
	is_str(plain,
	       "{\"comm\":\"" R R "NAME\\nIL\\\"}<\",\"ok\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\","
	       "\"key" R "\":7,\"ms\":1.5,\"none\":null,\"paths\":[\"\\/a" R R R "\\/b\",true]}",
	       "a whole object, plain: keys, nested strings; numbers and the rest as they were");
	ok(plain && parses(plain), "... JSON a strict reader takes");

	text = ls_json_text(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	ok(text && parses(text), "a whole object, pretty: JSON a strict reader takes");
	back = text ? json_tokener_parse(text) : NULL;
	v = json_object_object_get(back, "comm");
	is_str(json_object_get_string(v), "\xef\xbf\xbd\xef\xbf\xbdNAME\nIL\"}<",
	       "... its comm reads back with U+FFFD for each ill-formed byte, the rest exact");
	v = json_object_object_get(back, "ok");
	is_str(json_object_get_string(v), "caf\xc3\xa9 \xf0\x9f\x98\x80",
	       "... a well-formed string reads back exactly");
	ok(json_object_object_get_ex(back, "key\xef\xbf\xbd", NULL), "... and the key with U+FFFD");
	free(text);
	free(plain);
	json_object_put(back);
	json_object_put(obj);

	text = ls_json_text(NULL, JSON_C_TO_STRING_PLAIN);
	is_str(text, "null", "NULL is null, as json-c has it");
	free(text);
}

/* Every string of two bytes: unchanged exactly when table 3-7 says it is well-formed. */
static void test_all_pairs(void)
{
	int a, b, wrong = 0, refused = 0;
	char s[2], *text;
	bool valid;

	for (a = 1; a < 0x100; a++) {
		for (b = 1; b < 0x100; b++) {
			s[0] = (char)a;
			s[1] = (char)b;
			valid = (a < 0x80 && b < 0x80) ||
				(a >= 0xc2 && a <= 0xdf && b >= 0x80 && b <= 0xbf);
			text = string_text(s, 2, JSON_C_TO_STRING_PLAIN);
			if (!text) {
				bail_out("out of memory");
			}
			/* JSON's own escapes aside (ASCII only), unchanged is the bytes between quotes. */
			if (a >= 0x80 || b >= 0x80) {
				wrong += valid != (strlen(text) == 4 && !memcmp(text + 1, s, 2));
			}
			refused += !parses(text);
			free(text);
		}
	}
	is_int(wrong, 0, "every 2-byte string: kept exactly when well-formed, else replaced");
	is_int(refused, 0, "every 2-byte string: JSON a strict reader takes");
}

int main(void)
{
	test_valid();
	test_ill_formed();
	test_escapes();
	test_jsonc();
	test_object();
	test_all_pairs();
	return tap_done();
}
