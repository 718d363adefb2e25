// SPDX-License-Identifier: GPL-2.0
/*
 * lib/demangle.c: C++ and Rust names as people read them. Rust's legacy mangling (its hash
 * dropped, its $..$ escapes and ".." decoded) and v0 (generics, closures, shims, nested paths,
 * Unicode names), C++ as before, what is no mangled name left as it is, names in running text,
 * and a name that would demangle to more text than the bound given up on, not printed in full.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/demangle.h"
#include "tap.h"

/* ls_demangle(@name) is @want (NULL: left as it is). */
static void demangles(const char *name, const char *want, const char *what)
{
	char *d = ls_demangle(name);

	if (want) {
		is_str(d ? d : "(null)", want, "%s", what);
	} else {
		ok(!d, "%s: left as it is", what);
		if (d) {
			diag("  got '%.80s'%s", d, strlen(d) > 80 ? "..." : "");
		}
	}
	free(d);
}

static void test_legacy(void)
{
	demangles("_ZN6napper14handle_request17h638a6dffd271a5fcE", "napper::handle_request",
		  "legacy: the hash is dropped");
	demangles("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17hfbceafc6c49306bbE"
		  ".llvm.15770566279100136700",
		  "std::rt::lang_start::{{closure}}",
		  "legacy: $u7b$ and $u7d$ decoded, LLVM's .llvm. suffix dropped");
	demangles("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
		  "closure$u7d$$u7d$$GT$17h2690e28eb4e7a23aE",
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>",
		  "legacy: $LT$ $GT$ $LP$ $RP$, and .. as ::");
	demangles("_ZN4core3ptr121drop_in_place$LT$$RF$alloc..boxed..Box$LT$dyn$u20$std..error.."
		  "Error$u2b$core..marker..Send$u2b$core..marker..Sync$GT$$GT$17h9fa834cce50580f3E",
		  "core::ptr::drop_in_place<&alloc::boxed::Box<dyn std::error::Error+core::marker::"
		  "Send+core::marker::Sync>>",
		  "legacy: $RF$, $u20$ and $u2b$");
	demangles("_ZN4test10$BP$x$SP$y17h0123456789abcdefE", "test::*x@y",
		  "legacy: $BP$ and $SP$");
	demangles("_ZN4test9$RF$x$C$y17h0123456789abcdefE", "test::&x,y", "legacy: $C$");
	demangles("_ZN6napper14handle_request17h638a6dffd271a5fcE@@V_1",
		  "napper::handle_request@@V_1", "legacy: a symbol version is kept");
}

static void test_v0(void)
{
	demangles("_RNvCs3evIMxFn92s_6napper14handle_request", "napper::handle_request",
		  "v0: a function, its crate's disambiguator dropped");
	demangles("_RINvCs3evIMxFn92s_6napper5servemEB2_", "napper::serve::<u32>",
		  "v0: a generic function with its type, through a back-reference");
	demangles("_RINvNtNtCsdyIG5SqMl5y_3std10sys_common9backtrace28___rust_begin_short_backtrace"
		  "FEuuECs3evIMxFn92s_6napper",
		  "std::sys_common::backtrace::__rust_begin_short_backtrace::<fn(), ()>",
		  "v0: nested modules, a fn type among the generics");
	demangles("_RNCNCNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal00s_0B9_",
		  "std::rt::lang_start_internal::{closure#0}::{closure#0}::{closure#1}",
		  "v0: closures in closures");
	demangles(
		"_RNSNvYNCINvNtCsdyIG5SqMl5y_3std2rt10lang_startuE0INtNtNtCs6IL9ONYDOZW_4core3ops8"
		"function6FnOnceuE9call_once6vtableCs3evIMxFn92s_6napper.llvm.14557453381593631371",
		"<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::"
		"call_once::{shim:vtable#0}",
		"v0: a trait's shim for a closure, its .llvm. suffix dropped");
	demangles("_RNqCs4fqI2P2rA04_11utf8_identsu30____7hkackfecea1cbdathfdh9hlq6y",
		  "utf8_idents::\u10e1\u10d0\u10ed\u10db\u10d4\u10da\u10d0\u10d3_"
		  "\u10d2\u10d4\u10db\u10e0\u10d8\u10d4\u10da\u10d8_"
		  "\u10e1\u10d0\u10d3\u10d8\u10da\u10d8",
		  "v0: a Unicode name (punycode)");
}

static void test_cxx_and_garbage(void)
{
	demangles("_ZN3foo3barEv", "foo::bar()", "C++: still demangled");
	demangles("_ZN3foo3barE", "foo::bar", "C++: a name with no Rust hash is C++'s");
	demangles("_ZN10latsnap_wl6NapperIiE3napEl", "latsnap_wl::Napper<int>::nap(long)",
		  "C++: a template's member");
	demangles("main", NULL, "a C name");
	demangles("", NULL, "an empty name");
	demangles("_R", NULL, "_R alone");
	demangles("_RNvC", NULL, "a v0 name cut short");
	demangles("_RC0", NULL, "a v0 name that demangles to nothing");
	demangles("_Rfoo_bar", NULL, "a word that starts with _R");
	demangles("_ZN6napper14handle_request17hE", NULL, "a legacy name with no hash digits");
	demangles("_Znotmangled", NULL, "an invalid C++ name");
}

/*
 * A v0 name of @levels tuples, each holding the one before twice by back-reference; the first
 * holds @elem twice.
 */
static char *backref_bomb(int levels, const char *elem)
{
	static const char digits[] =
		"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char *s = malloc(64 + 2 * strlen(elem) + (size_t)levels * 16), num[8];
	size_t len, prev, at, n, v;
	int i, k;

	if (!s) {
		bail_out("out of memory");
	}
	/* After "_R": a generic path "IC1a", its first argument a tuple (ELEM, ELEM). */
	sprintf(s, "_RIC1aT%s%sE", elem, elem);
	prev = 4;
	for (i = 0; i < levels; i++) {
		len = strlen(s);
		at = len - 2;
		/* Base 62, "_" for 0: the position of the tuple before, after "_R". */
		v = prev - 1;
		n = 0;
		do {
			num[n++] = digits[v % 62];
			v /= 62;
		} while (v);
		s[len++] = 'T';
		for (k = 0; k < 2; k++) {
			s[len++] = 'B';
			for (v = n; v > 0; v--) {
				s[len++] = num[v - 1];
			}
			s[len++] = '_';
		}
		s[len++] = 'E';
		s[len] = '\0';
		prev = at;
	}
	strcat(s, "E");
	return s;
}

/* "_ZN4core<LEN>aaa...17h<hash>E": a legacy name of @len characters in one identifier. */
static char *legacy_of(size_t len)
{
	char *name = malloc(len + 64);
	int n;

	if (!name) {
		bail_out("out of memory");
	}
	n = sprintf(name, "_ZN4core%zu", len);
	memset(name + n, 'a', len);
	strcpy(name + n + len, "17h0123456789abcdefE");
	return name;
}

static void test_bounds(void)
{
	char *name, *d;

	/* 30 levels: 2^30 copies of "(u8, u8)" once printed in full, from 300 bytes. */
	name = backref_bomb(30, "h");
	demangles(name, NULL, "v0: 300 bytes that would print gigabytes: given up on at the bound");
	free(name);
	/* Where the bound is reached in a Unicode name: libiberty's buffer for it is freed. */
	name = backref_bomb(12, "Cu30____7hkackfecea1cbdathfdh9hlq6y");
	demangles(name, NULL, "v0: the same, of Unicode names");
	free(name);
	name = backref_bomb(3, "h");
	d = ls_demangle(name);
	ok(d && strstr(d, "((((u8, u8), (u8, u8))"), "  the same, 3 levels deep, demangles");
	if (!d) {
		diag("  %s demangles to nothing", name);
	}
	free(d);
	free(name);

	/* Legacy names of one long identifier: too long once demangled too, or not. */
	name = legacy_of(5000);
	demangles(name, NULL,
		  "legacy: 5000 characters long: left mangled, not C++'s with its hash");
	free(name);
	name = legacy_of(1000);
	d = ls_demangle(name);
	ok(d && strlen(d) == strlen("core::") + 1000, "legacy: 1000 characters long: demangled");
	free(d);
	free(name);
}

static void test_text(void)
{
	char *d = ls_demangle_text(
		"nanosleep in _ZN6napper14handle_request17h638a6dffd271a5fcE < "
		"_RINvCs3evIMxFn92s_6napper5servemEB2_ (x_RNvC _Rjunk _ZN3foo3barEv)");

	is_str(d ? d : "(null)",
	       "nanosleep in napper::handle_request < napper::serve::<u32> (x_RNvC _Rjunk foo::bar())",
	       "text: Rust names in it demangled, both manglings, C++ too, the rest kept");
	free(d);
}

int main(void)
{
	test_legacy();
	test_v0();
	test_cxx_and_garbage();
	test_bounds();
	test_text();
	return tap_done();
}
