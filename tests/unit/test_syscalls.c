// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "classify/syscalls.h"
#include "tap.h"

/* The ones that must be in the idle list, whichever of them this architecture has. */
static const char idle_names[] = "epoll_wait epoll_pwait epoll_pwait2 poll ppoll select pselect6 "
				 "accept accept4 wait4 waitid pause rt_sigsuspend rt_sigtimedwait "
				 "io_getevents io_pgetevents";

static bool in_idle_list(const char *name)
{
	const char *const *p;

	for (p = syscall_default_idle; *p; p++) {
		if (!strcmp(*p, name)) {
			return true;
		}
	}
	return false;
}

/* The name and number agree with <sys/syscall.h>, both ways. */
static void known(const char *name, int nr)
{
	is_str(syscall_name(nr), name, "syscall %d is %s", nr, name);
	is_int(syscall_number(name), nr, "%s is syscall %d", name, nr);
}

static void names_and_numbers(void)
{
	int nr, named = 0, mismatched = 0, count = syscall_count();

	known("read", SYS_read);
	known("write", SYS_write);
	known("nanosleep", SYS_nanosleep);
	known("futex", SYS_futex);
	known("clock_nanosleep", SYS_clock_nanosleep);
	known("epoll_pwait", SYS_epoll_pwait);
#ifdef SYS_epoll_wait
	known("epoll_wait", SYS_epoll_wait);
#else
	is_int(syscall_number("epoll_wait"), -1, "no epoll_wait on this architecture");
#endif
#ifdef SYS_epoll_pwait2
	known("epoll_pwait2", SYS_epoll_pwait2);
#else
	skip("headers predate epoll_pwait2");
#endif

	ok(count > SYS_read && count > SYS_epoll_pwait && count > SYS_futex,
	   "syscall_count() %d is above the numbers used here", count);
	ok(count <= 4096 + 1024, "syscall_count() %d is not absurd", count);
	ok(syscall_name(count - 1) != NULL, "the highest number has a name");
	ok(syscall_name(count) == NULL, "syscall_count() itself has no name");
	ok(syscall_name(-1) == NULL, "-1 has no name");
	ok(syscall_name(1 << 30) == NULL, "a huge number has no name");
	is_int(syscall_number("no_such_syscall"), -1, "an unknown name is -1");
	is_int(syscall_number(""), -1, "an empty name is -1");
	is_int(syscall_number(NULL), -1, "NULL is -1");
	is_int(syscall_number("READ"), -1, "names are case-sensitive");
	is_int(syscall_number("sys_read"), -1, "no sys_ prefix");
	is_int(syscall_number("read "), -1, "no trailing blank");

	/* Every named number round-trips, and names are plain identifiers. */
	for (nr = 0; nr < count; nr++) {
		const char *name = syscall_name(nr);

		if (!name) {
			continue;
		}
		named++;
		if (syscall_number(name) != nr || !*name ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name)) {
			mismatched++;
			diag("bad entry %d '%s' -> %d", nr, name, syscall_number(name));
		}
	}
	ok(named > 250, "%d syscalls have names", named);
	is_int(mismatched, 0, "every name round-trips to its number");
}

static void idle_list(void)
{
	const char *const *p;
	const char *q = idle_names;
	char name[32];
	int n = 0, expected = 0, present = 0, used;
	bool generic;

	for (p = syscall_default_idle; *p; p++) {
		n++;
	}
	while (sscanf(q, "%31s%n", name, &used) == 1) {
		q += used;
		expected++;
		ok(in_idle_list(name), "%s is idle", name);
		present += syscall_number(name) >= 0;
	}
	is_int(n, expected, "idle list has the documented size");
	ok(!in_idle_list("nanosleep"), "nanosleep is not idle");
	ok(!in_idle_list("clock_nanosleep"), "clock_nanosleep is not idle");
	ok(!in_idle_list("futex"), "futex is not idle");
	ok(!in_idle_list("read"), "read is not idle");
	ok(present >= 8, "%d of the idle syscalls exist here", present);
	generic = syscall_number("epoll_pwait") >= 0 && syscall_number("ppoll") >= 0 &&
		  syscall_number("wait4") >= 0;
	ok(generic, "the generic idle syscalls exist on every architecture");
}

static void parse_list(void)
{
	int count = syscall_count(), nr_read = syscall_number("read");
	int nr_ppoll = syscall_number("ppoll"), nr_futex = syscall_number("futex"), i, set;
	unsigned char bm[4096], small[4];
	char bad[64], tiny[4];
	char text[256];

	if (count > (int)sizeof(bm)) {
		bail_out("syscall_count() %d exceeds the test bitmap", count);
	}

	memset(bm, 0xaa, sizeof(bm));
	is_int(syscall_parse_list("read,ppoll", bm, count, bad, sizeof(bad)), 0,
	       "comma list parses");
	ok(bm[nr_read] == 1 && bm[nr_ppoll] == 1, "listed entries are 1");
	for (i = 0, set = 0; i < count; i++) {
		set += bm[i] != 0;
	}
	is_int(set, 2, "everything else is 0");
	is_int(bm[count], 0xaa, "nothing past nbits is written");

	memset(bm, 0, sizeof(bm));
	is_int(syscall_parse_list("  read ,\tppoll,,futex ", bm, count, bad, sizeof(bad)), 0,
	       "blanks, tabs and empty items are separators");
	ok(bm[nr_read] && bm[nr_ppoll] && bm[nr_futex], "all three set");
	is_int(syscall_parse_list("read ppoll", bm, count, bad, sizeof(bad)), 0,
	       "space-separated list parses");
	ok(bm[nr_read] && bm[nr_ppoll] && !bm[nr_futex], "the list replaces the old bitmap");

	snprintf(text, sizeof(text), "%d,ppoll", nr_futex);
	is_int(syscall_parse_list(text, bm, count, bad, sizeof(bad)), 0, "numbers are accepted");
	ok(bm[nr_futex] && bm[nr_ppoll] && !bm[nr_read], "a number sets its entry");
	is_int(syscall_parse_list("0", bm, count, bad, sizeof(bad)), 0, "number 0 is accepted");
	ok(bm[0] == 1, "entry 0 set");
	snprintf(text, sizeof(text), "%d", count - 1);
	is_int(syscall_parse_list(text, bm, count, bad, sizeof(bad)), 0,
	       "the last entry is accepted");

	memset(bm, 1, sizeof(bm));
	is_int(syscall_parse_list("", bm, count, bad, sizeof(bad)), 0, "empty list parses");
	for (i = 0, set = 0; i < count; i++) {
		set += bm[i] != 0;
	}
	is_int(set, 0, "and clears the bitmap");
	is_int(syscall_parse_list(" , ", bm, count, bad, sizeof(bad)), 0, "only separators parses");

	/* Errors: -EINVAL, the offending token, and the bitmap left alone. */
	memset(bm, 0x55, sizeof(bm));
	is_int(syscall_parse_list("read,bogus_call,ppoll", bm, count, bad, sizeof(bad)), -EINVAL,
	       "unknown name is rejected");
	is_str(bad, "bogus_call", "the unknown name is reported");
	ok(bm[0] == 0x55 && bm[nr_read] == 0x55, "the bitmap is untouched on error");
	is_int(syscall_parse_list("read,READ", bm, count, bad, sizeof(bad)), -EINVAL,
	       "uppercase is rejected");
	is_str(bad, "READ", "uppercase token reported");
	snprintf(text, sizeof(text), "read %d", count);
	is_int(syscall_parse_list(text, bm, count, bad, sizeof(bad)), -EINVAL,
	       "a number at nbits is rejected");
	snprintf(text, sizeof(text), "%d", count);
	is_str(bad, text, "the out-of-range number is reported");
	is_int(syscall_parse_list("99999999999999999999", bm, count, bad, sizeof(bad)), -EINVAL,
	       "a huge number is rejected");
	is_int(syscall_parse_list("-1", bm, count, bad, sizeof(bad)), -EINVAL, "-1 is rejected");
	is_str(bad, "-1", "-1 reported");
	is_int(syscall_parse_list("12abc", bm, count, bad, sizeof(bad)), -EINVAL,
	       "digits with garbage are rejected");
	is_str(bad, "12abc", "digits with garbage reported");
	is_int(syscall_parse_list("read;ppoll", bm, count, bad, sizeof(bad)), -EINVAL,
	       "semicolon is not a separator");
	is_str(bad, "read;ppoll", "the whole token is reported");
	memset(text, 'x', 200);
	text[200] = '\0';
	is_int(syscall_parse_list(text, bm, count, bad, sizeof(bad)), -EINVAL,
	       "a very long token is rejected");
	is_int(strlen(bad), sizeof(bad) - 1, "and reported truncated");
	is_int(syscall_parse_list("bogus", bm, count, tiny, sizeof(tiny)), -EINVAL,
	       "error with a tiny bad buffer");
	is_str(tiny, "bog", "tiny buffer truncates");
	is_int(syscall_parse_list("bogus", bm, count, NULL, 0), -EINVAL, "bad may be NULL");
	ok(bm[0] == 0x55, "the bitmap is still untouched");

	/* A real name whose number does not fit the caller's bitmap. */
	memset(small, 0, sizeof(small));
	snprintf(text, sizeof(text), "%s", syscall_name(count - 1));
	is_int(syscall_parse_list(text, small, 4, bad, sizeof(bad)), -EINVAL,
	       "a name past nbits is rejected");
	is_str(bad, text, "and reported");
	is_int(syscall_parse_list("read", small, 0, bad, sizeof(bad)), -EINVAL, "nbits 0 rejected");
	is_int(syscall_parse_list(NULL, small, 4, bad, sizeof(bad)), -EINVAL, "NULL list rejected");
	is_int(syscall_parse_list("read", NULL, 4, bad, sizeof(bad)), -EINVAL,
	       "NULL bitmap rejected");
}

int main(void)
{
	names_and_numbers();
	idle_list();
	parse_list();
	return tap_done();
}
