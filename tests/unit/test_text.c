// SPDX-License-Identifier: GPL-2.0
/* ls_text_escape() and its wrappers: what a traced process names itself prints as one safe line. */
#include <locale.h>
#include <stdint.h>
#include <wchar.h>

#include "lib/text.h"
#include "lib/util.h"
#include "tap.h"

static void escapes(const char *text, const char *expected, const char *what)
{
	char buf[256];
	size_t n = ls_text_escape(buf, sizeof(buf), text);

	is_str(buf, expected, "%s", what);
	is_int((long)n, (long)strlen(expected), "%s: the length returned is the text's", what);
}

/* The escapes undone; -1 on one that ls_text_escape() does not make. */
static int unescape(const char *s, char *out, size_t size)
{
	size_t len = 0;
	unsigned int v;

	while (*s) {
		if (len + 4 >= size) {
			return -1;
		}
		if (*s != '\\') {
			out[len++] = *s++;
			continue;
		}
		s++;
		if (*s == '\\' || *s == 'n' || *s == 't' || *s == 'r') {
			out[len++] = *s == '\\' ? '\\' : *s == 'n' ? '\n' : *s == 't' ? '\t' : '\r';
			s++;
		} else if (*s == 'x' && sscanf(s + 1, "%2x", &v) == 1) {
			out[len++] = (char)v;
			s += 3;
		} else if (*s == 'u' && sscanf(s + 1, "%4x", &v) == 1) {
			if (v < 0x800) {
				out[len++] = (char)(0xc0 | v >> 6);
			} else {
				out[len++] = (char)(0xe0 | v >> 12);
				out[len++] = (char)(0x80 | (v >> 6 & 0x3f));
			}
			out[len++] = (char)(0x80 | (v & 0x3f));
			s += 5;
		} else {
			return -1;
		}
	}
	out[len] = '\0';
	return 0;
}

/*
 * Whether @s is what a terminal prints as it reads: well-formed UTF-8 (checked by glibc's
 * mbrtowc in C.UTF-8) without a C0 or C1 control, DEL, a bidirectional control or a line
 * separator.
 */
static bool inert(const char *s)
{
	mbstate_t st = { 0 };
	size_t n, len = strlen(s);
	wchar_t wc;

	while (len) {
		n = mbrtowc(&wc, s, len, &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			return false;
		}
		if (wc < 0x20 || (wc >= 0x7f && wc <= 0x9f) || wc == 0x61c || wc == 0x200e ||
		    wc == 0x200f || (wc >= 0x2028 && wc <= 0x202e) ||
		    (wc >= 0x2066 && wc <= 0x2069)) {
			return false;
		}
		s += n;
		len -= n;
	}
	return true;
}

/* Every string of one and two bytes, and many longer ones: inert, and undone exactly. */
static void every_short_string(void)
{
	char in[8], esc[64], back[64];
	unsigned int a, b, bad_inert = 0, bad_back = 0, i, k;
	uint32_t seed = 51;

	for (a = 1; a < 256; a++) {
		for (b = 0; b < 256; b++) {
			in[0] = (char)a;
			in[1] = (char)b;
			in[2] = '\0';
			ls_text_escape(esc, sizeof(esc), in);
			bad_inert += !inert(esc);
			bad_back += unescape(esc, back, sizeof(back)) || strcmp(back, in);
		}
	}
	/* Three to seven bytes drawn from the bytes that start, continue and break UTF-8. */
	for (i = 0; i < 200000; i++) {
		static const unsigned char pool[] = { 'a',  '\\', 'x',	'u',  '\n', 0x1b, 0x7f,
						      0x80, 0x9b, 0xae, 0xbf, 0xc2, 0xe2, 0xed,
						      0xef, 0xf0, 0xf4, 0xf5, 0xa0, 0x8f, 0x90 };
		unsigned int len = 3 + i % 5;

		for (k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			in[k] = (char)pool[(seed >> 16) % sizeof(pool)];
		}
		in[len] = '\0';
		ls_text_escape(esc, sizeof(esc), in);
		bad_inert += !inert(esc);
		bad_back += unescape(esc, back, sizeof(back)) || strcmp(back, in);
	}
	is_int(bad_inert, 0,
	       "every 1- and 2-byte string, and 200000 longer ones, escape to inert text");
	is_int(bad_back, 0, "... which undoes to the original bytes: no two texts escape alike");
}

/* The buffer is never overrun, and what fits ends on a whole escape. */
static void bounded(void)
{
	static const char *const texts[] = { "\033[31mEV\nIL\"}<",
					     "plain",
					     "",
					     "\\",
					     "\n",
					     "caf\xc3\xa9\x9b end",
					     "x\xe2\x80\xaey\x7f",
					     "\xc2\x9b"
					     "2J tail" };
	const char *hostile = texts[0];
	char buf[32], *dup;
	size_t n, size, cut = 0, over = 0, i;
	FILE *mem;
	char *put = NULL;
	size_t put_len = 0;

	for (size = 0; size < 24; size++) {
		memset(buf, '#', sizeof(buf));
		n = ls_text_escape(size ? buf : NULL, size, hostile);
		over += n != strlen("\\x1b[31mEV\\nIL\"}<");
		if (size && (strlen(buf) >= size || buf[size] != '#' ||
			     strncmp(buf, "\\x1b[31mEV\\nIL\"}<", strlen(buf)))) {
			cut++;
		}
		/* A cut never ends inside an escape: "\x1" or a lone backslash. */
		if (size && strlen(buf) &&
		    (buf[strlen(buf) - 1] == '\\' ||
		     (strlen(buf) >= 2 && !strcmp(buf + strlen(buf) - 2, "\\x")))) {
			cut++;
		}
	}
	is_int((long)over, 0, "the length returned is the whole text's, whatever the size");
	is_int((long)cut, 0, "a small buffer holds a prefix of whole escapes and its NUL, no more");
	ls_text_escape(buf, 6, "a\nbc");
	is_str(buf, "a\\nbc", "6 bytes hold 'a\\nbc'");
	ls_text_escape(buf, 5, "a\nbc");
	is_str(buf, "a\\nb", "5 bytes hold 'a\\nb'");
	ls_text_escape(buf, 3, "a\nbc");
	is_str(buf, "a", "3 bytes hold 'a': the escape that does not fit is left out whole");
	ls_text_escape(buf, 3, "ab\xc3\xa9");
	is_str(buf, "ab", "a UTF-8 character that does not fit is left out whole");

	is_str(ls_text(buf, 10, "abcdefghijkl"), "abcdef...", "ls_text() marks a cut text");
	is_str(ls_text(buf, 10, "abcde\nfgh"), "abcde...", "... on a whole escape");
	is_str(ls_text(buf, 10, "abcdefghi"), "abcdefghi", "... and only a cut one");

	dup = ls_text_dup(hostile);
	is_str(dup, "\\x1b[31mEV\\nIL\"}<", "ls_text_dup() escapes whole");
	free(dup);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		dup = ls_text_dup(texts[i]);
		mem = open_memstream(&put, &put_len);
		ls_put_text(mem, texts[i]);
		ls_put_text(mem, NULL);
		fclose(mem);
		is_str(put, dup, "ls_put_text() prints what ls_text_dup() returns (text %zu)", i);
		free(dup);
		free(put);
		put = NULL;
	}
	dup = malloc(40001);
	memset(dup, '\n', 40000);
	dup[40000] = '\0';
	put = ls_text_dup(dup);
	is_int((long)strlen(put), 80000, "ls_text_dup() of 40000 newlines: 80000 bytes, not cut");
	free(put);
	free(dup);
}

/* ls_err() and ls_verbose() escape their whole message: messages name comms and paths. */
static void messages(void)
{
	static const char lines[] = "latsnap: tracker: pid 7 (\\x1b[31mEV\\nIL\"}<) registered\n"
				    "latsnap: record: idle, not latency: a\\\\b\\r[8]\n";
	struct tap_capture c;
	char out[8192], *big;
	size_t n;

	tap_capture_begin(&c, STDERR_FILENO);
	ls_err("tracker: pid %d (%s) registered", 7, "\033[31mEV\nIL\"}<");
	ls_verbose_enabled = true;
	ls_verbose("record: idle, not latency: %s[%d]", "a\\b\r", 8);
	ls_verbose_enabled = false;
	big = malloc(3001);
	memset(big, '\n', 3000);
	big[3000] = '\0';
	ls_err("%s", big);
	n = tap_capture_end(&c, out, sizeof(out));
	free(big);
	ok(!strncmp(out, lines, strlen(lines)),
	   "ls_err() and ls_verbose() lines escape the names they print");
	ok(n == strlen(lines) + 9 + 6000 + 1 && out[n - 1] == '\n' && out[n - 2] == 'n',
	   "a message escaped beyond the line buffer is printed whole (%zu bytes)", n);
}

/* ls_xml_text(@text, @max) is @expected: what XML 1.0 cannot hold as U+FFFD. */
static void xml(const char *text, size_t max, const char *expected, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		bail_out("open_memstream");
	}
	ls_xml_text(f, text, max);
	fclose(f);
	is_str(buf, expected, "xml: %s", what);
	free(buf);
}

/* ls_xml_text() of the hostile bytes an SVG or a page must survive. */
static void xml_texts(void)
{
	xml("a<b>&\"c'", SIZE_MAX, "a&lt;b&gt;&amp;&quot;c&#39;", "markup escaped");
	xml("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", SIZE_MAX,
	    "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", "well-formed UTF-8 kept");
	xml("\xff\xfeU8\xc3(\xed\xa0\x80", SIZE_MAX,
	    "&#xFFFD;&#xFFFD;U8&#xFFFD;(&#xFFFD;&#xFFFD;&#xFFFD;",
	    "bytes that are not UTF-8: U+FFFD per maximal ill-formed subpart");
	xml("\033[31m\x01\t\n\r", SIZE_MAX, "&#xFFFD;[31m&#xFFFD;\t\n\r",
	    "C0 controls but tab, newline, CR: U+FFFD");
	xml("\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd", SIZE_MAX, "&#xFFFD;&#xFFFD;\xef\xbf\xbd",
	    "U+FFFE and U+FFFF: U+FFFD; U+FFFD itself kept");
	xml("ab\xe6\x97\xa5" "cd", 4, "ab&#xFFFD;", "a sequence cut by max: one U+FFFD");
	xml("ab\xe6\x97\xa5" "cd", 5, "ab\xe6\x97\xa5", "max at a sequence's end");
	xml("abc", 0, "", "max 0");
}

int main(void)
{
	char line[256];

	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		bail_out("setlocale C.UTF-8: the UTF-8 checks need it");
	}
	escapes("sleeper", "sleeper", "plain ASCII is kept");
	escapes("a b;c\"{}<>&'#%", "a b;c\"{}<>&'#%", "printable ASCII punctuation is kept");
	escapes("\033[31mEV\nIL\"}<", "\\x1b[31mEV\\nIL\"}<", "ESC and newline of a hostile comm");
	escapes("a\\nb", "a\\\\nb", "a backslash is doubled: the text '\\n' is not a newline");
	escapes("\t\r\x01\x1f\x7f", "\\t\\r\\x01\\x1f\\x7f", "tab, CR, other C0 controls, DEL");
	escapes("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80",
		"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80",
		"well-formed UTF-8 (2, 3 and 4 bytes) is kept");
	escapes("\xc2\x9b"
		"2J",
		"\\u009b2J", "a C1 control in UTF-8 (CSI) as \\u009b");
	escapes("\xc2\x85", "\\u0085", "NEL (U+0085) as \\u0085");
	escapes("\xc2\xa0", "\xc2\xa0", "U+00A0, past the C1 controls, is kept");
	escapes("\x9b"
		"2J",
		"\\x9b2J", "a raw C1 byte (8-bit CSI) as \\x9b");
	escapes("ab\xe2\x80\xae"
		"cd",
		"ab\\u202ecd", "a right-to-left override as \\u202e");
	escapes("\xe2\x80\xa8\xe2\x81\xa6\xd8\x9c\xe2\x80\x8f", "\\u2028\\u2066\\u061c\\u200f",
		"line separator, isolate, Arabic letter mark, RLM");
	escapes("\xc0\xaf", "\\xc0\\xaf", "an overlong '/' byte by byte");
	escapes("\xed\xa0\x80", "\\xed\\xa0\\x80", "a surrogate byte by byte");
	escapes("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF byte by byte");
	escapes("\xe6\x97", "\\xe6\\x97", "a cut sequence byte by byte");
	escapes("\xe6\x97x", "\\xe6\\x97x", "a sequence broken by ASCII byte by byte");
	escapes("\xf5\xff\xfe", "\\xf5\\xff\\xfe", "bytes that never start UTF-8");
	escapes("", "", "the empty string");
	escapes(NULL, "", "NULL is the empty string");

	snprintf(line, sizeof(line), "%s|%s", LS_TEXT("a\n"), LS_TEXT("b\t"));
	is_str(line, "a\\n|b\\t", "two LS_TEXT() in one call have their own buffers");

	every_short_string();
	bounded();
	messages();
	xml_texts();
	return tap_done();
}
