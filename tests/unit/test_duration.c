// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/duration.h"
#include "tap.h"

static void parses(const char *text, uint64_t expected)
{
	uint64_t ns = 0xdeadbeef;
	int ret = ls_parse_duration(text, &ns);

	if (is_int(ret, 0, "'%s' parses", text)) {
		is_u64(ns, expected, "'%s' is %" PRIu64 " ns", text, expected);
	}
}

static void rejects(const char *text, int err)
{
	uint64_t ns = 12345;
	int ret = ls_parse_duration(text, &ns);

	is_int(ret, err, "'%s' is rejected with %s", text, err == -ERANGE ? "ERANGE" : "EINVAL");
	is_u64(ns, 12345, "'%s' leaves the output alone", text);
}

static void formats(uint64_t ns, const char *expected)
{
	char buf[LS_DURATION_BUFSZ];

	memset(buf, 'x', sizeof(buf));
	ls_format_duration(ns, buf, sizeof(buf));
	is_str(buf, expected, "%" PRIu64 " ns formats as '%s'", ns, expected);
}

/*
 * Does ls_format_duration(@ns, NULL, 10) return normally? Called in a child, which a write
 * through the NULL buffer would kill (or, under ASan, make exit non-zero): 1 yes, 0 no, -1 when
 * the child could not be run.
 */
static int null_buffer_ignored(uint64_t ns)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		return -1;
	}
	if (pid == 0) {
		ls_format_duration(ns, NULL, 10);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void)
{
	char small[6];
	uint64_t ns;

	/* Every unit, and the bare-number default of milliseconds. */
	parses("250us", 250000);
	parses("20ms", 20000000);
	parses("1s", 1000000000);
	parses("7ns", 7);
	parses("50", 50000000);
	parses("0", 0);
	parses("0ms", 0);
	parses("007ms", 7000000);
	parses("000000000000000000000000000000001ms", 1000000);

	/* Fractions are exact: no floating point on the way. */
	parses("1.5s", 1500000000);
	parses("0.5ms", 500000);
	parses("1.5", 1500000);
	parses("0.001ms", 1000);
	parses("0.000000001s", 1);
	parses("2.25us", 2250);
	parses("1.000000000000000000000000000001s", 1000000000);
	parses("0.1s", 100000000);
	parses("4.123456789s", 4123456789ULL);
	parses("3.0ns", 3);

	/* Finer than a nanosecond rounds to nearest, halves up. */
	parses("1.4ns", 1);
	parses("1.5ns", 2);
	parses("0.0000000005s", 1);
	parses("0.0000000004999s", 0);
	parses("1.2345us", 1235);
	parses("1.2344999us", 1234);

	/* The edges of 64 bits. */
	parses("18446744073709551615ns", UINT64_MAX);
	parses("18446744073.709551615s", UINT64_MAX);
	parses("18446744073709.551615ms", UINT64_MAX);
	parses("18446744073.7095516154s", UINT64_MAX);
	rejects("18446744073709551616ns", -ERANGE);
	rejects("18446744073.709551616s", -ERANGE);
	rejects("18446744073.7095516155s", -ERANGE);
	rejects("18446744074s", -ERANGE);
	rejects("18446744073710ms", -ERANGE);
	rejects("99999999999999999999999999", -ERANGE);

	/* Malformed. */
	rejects("", -EINVAL);
	rejects("ms", -EINVAL);
	rejects("s", -EINVAL);
	rejects("-5ms", -EINVAL);
	rejects("+5ms", -EINVAL);
	rejects("-0", -EINVAL);
	rejects(" 5ms", -EINVAL);
	rejects("5ms ", -EINVAL);
	rejects("5 ms", -EINVAL);
	rejects("5\tms", -EINVAL);
	rejects("5ms\n", -EINVAL);
	rejects("5m", -EINVAL);
	rejects("5sec", -EINVAL);
	rejects("5MS", -EINVAL);
	rejects("5Ms", -EINVAL);
	rejects("5min", -EINVAL);
	rejects("5h", -EINVAL);
	rejects("5mss", -EINVAL);
	rejects("5msx", -EINVAL);
	rejects("5us5", -EINVAL);
	rejects("5.", -EINVAL);
	rejects("5.ms", -EINVAL);
	rejects(".5ms", -EINVAL);
	rejects(".", -EINVAL);
	rejects("1.2.3ms", -EINVAL);
	rejects("1,5s", -EINVAL);
	rejects("0x10ms", -EINVAL);
	rejects("0x10", -EINVAL);
	rejects("1e3", -EINVAL);
	rejects("1e3ms", -EINVAL);
	rejects("inf", -EINVAL);
	rejects("infms", -EINVAL);
	rejects("nan", -EINVAL);
	rejects("NaN", -EINVAL);
	rejects("٣ms", -EINVAL);
	rejects("5ms\x01", -EINVAL);
	is_int(ls_parse_duration(NULL, &ns), -EINVAL, "NULL text is rejected");
	rejects("99999999999999999999999999x", -EINVAL);

	/* Formatting: exact below a microsecond, else three decimals of the fitting unit. */
	formats(0, "0 ns");
	formats(850, "850 ns");
	formats(999, "999 ns");
	formats(1000, "1.000 us");
	formats(12345, "12.345 us");
	formats(999999, "999.999 us");
	formats(1000000, "1.000 ms");
	formats(102301000, "102.301 ms");
	formats(102301499, "102.301 ms");
	formats(102301500, "102.302 ms");
	formats(999999499, "999.999 ms");
	formats(999999500, "1.000 s");
	formats(1500000000, "1.500 s");
	formats(999999, "999.999 us");
	formats(999999999, "1.000 s");
	formats(1999999, "2.000 ms");
	formats(60000000000ULL, "60.000 s");
	formats(UINT64_MAX, "18446744073.710 s");
	formats(UINT64_MAX - 1000000, "18446744073.709 s");

	/* Short buffers truncate but stay terminated; a zero length writes nothing. */
	ls_format_duration(1500000000, small, sizeof(small));
	is_str(small, "1.500", "a short buffer truncates");
	memset(small, 'x', sizeof(small));
	ls_format_duration(1500000000, small, 0);
	ok(small[0] == 'x', "a zero-length buffer is not written");
	is_int(null_buffer_ignored(1), 1, "a NULL buffer is ignored: no write for '1 ns'");
	is_int(null_buffer_ignored(1500000000), 1,
	       "a NULL buffer is ignored: no write for '1.500 s'");

	/* What is formatted parses back to nearly the same value. */
	{
		static const uint64_t values[] = { 1, 999, 1234, 5678901, 1500000000, 1234567890 };
		char buf[LS_DURATION_BUFSZ], text[LS_DURATION_BUFSZ];
		size_t i;

		for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			char *sp;
			uint64_t back = 0, diff;

			ls_format_duration(values[i], buf, sizeof(buf));
			snprintf(text, sizeof(text), "%s", buf);
			sp = strchr(text, ' ');
			if (sp) {
				memmove(sp, sp + 1, strlen(sp));
			}
			ok(!ls_parse_duration(text, &back), "formatted '%s' parses back", buf);
			diff = back > values[i] ? back - values[i] : values[i] - back;
			ok(diff * 1000 <= values[i] || values[i] < 1000,
			   "'%s' is within 0.1%% of %" PRIu64, buf, values[i]);
		}
	}

	return tap_done();
}
