// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/duration.h"

struct dur_unit {
	const char *name;
	uint64_t ns;
	/* log10(ns): how many fraction digits are whole nanoseconds. */
	int digits;
};

static const struct dur_unit dur_units[] = {
	{ "ns", 1, 0 },
	{ "us", 1000, 3 },
	{ "ms", 1000000, 6 },
	{ "s", 1000000000, 9 },
};

#define DUR_NUNITS (sizeof(dur_units) / sizeof(dur_units[0]))
#define DUR_MS_UNIT 2

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/**
 * ls_parse_duration() - parse a DUR value ("250us", "20ms", "1.5s", "0.5ms", "20")
 * @text: digits, optionally "." and more digits, then an optional unit ns/us/ms/s;
 *        a bare number is milliseconds. Nothing else: no sign, space, exponent or hex.
 * @ns: receives the value in nanoseconds on success, untouched on failure
 *
 * Integer arithmetic throughout, so decimal input is exact ("1.5s" is 1500000000); fraction
 * digits finer than a nanosecond round to the nearest nanosecond, halves up.
 *
 * Return: 0, -EINVAL on malformed text, -ERANGE when the value does not fit in 64 bits.
 */
int ls_parse_duration(const char *text, uint64_t *ns)
{
	const struct dur_unit *unit = NULL;
	const char *int_start, *int_end, *frac_start = NULL, *frac_end = NULL, *p;
	uint64_t whole = 0, frac = 0, total;
	bool round_up = false;
	size_t i;
	int k;

	if (!text) {
		return -EINVAL;
	}

	int_start = text;
	for (p = text; is_digit(*p); p++) {
	}
	int_end = p;
	if (int_end == int_start) {
		return -EINVAL;
	}
	if (*p == '.') {
		frac_start = ++p;
		for (; is_digit(*p); p++) {
		}
		frac_end = p;
		/* "5." and ".5" are typos more often than not; insist on digits both sides. */
		if (frac_end == frac_start) {
			return -EINVAL;
		}
	}

	if (!*p) {
		unit = &dur_units[DUR_MS_UNIT];
	} else {
		for (i = 0; i < DUR_NUNITS; i++) {
			if (!strcmp(p, dur_units[i].name)) {
				unit = &dur_units[i];
				break;
			}
		}
	}
	if (!unit) {
		return -EINVAL;
	}

	for (p = int_start; p < int_end; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (whole > (UINT64_MAX - d) / 10) {
			return -ERANGE;
		}
		whole = whole * 10 + d;
	}

	/* The first unit->digits fraction digits are whole nanoseconds, the next one rounds. */
	p = frac_start;
	for (k = 0; k < unit->digits; k++) {
		frac *= 10;
		if (p && p < frac_end) {
			frac += (uint64_t)(*p++ - '0');
		}
	}
	if (p && p < frac_end && *p >= '5') {
		round_up = true;
	}

	if (whole > UINT64_MAX / unit->ns) {
		return -ERANGE;
	}
	total = whole * unit->ns;
	if (total > UINT64_MAX - frac - round_up) {
		return -ERANGE;
	}
	*ns = total + frac + round_up;
	return 0;
}

/**
 * ls_format_duration() - format nanoseconds for people
 * @ns: the duration
 * @buf: output buffer, always NUL-terminated when @len > 0
 * @len: size of @buf; LS_DURATION_BUFSZ always suffices
 *
 * Below a microsecond the exact "850 ns"; above, three decimals of the largest unit that keeps
 * the number at least 1: "12.345 us", "102.301 ms", "1.500 s". Values are rounded to the
 * nearest last digit, and a value that rounds up to 1000 moves to the next unit ("1.000 s",
 * never "1000.000 ms").
 */
void ls_format_duration(uint64_t ns, char *buf, size_t len)
{
	uint64_t step, milli;
	size_t i;

	if (!buf || !len) {
		return;
	}
	if (ns < 1000) {
		snprintf(buf, len, "%" PRIu64 " ns", ns);
		return;
	}

	for (i = 1; i < DUR_NUNITS; i++) {
		if (i + 1 < DUR_NUNITS && ns >= dur_units[i + 1].ns) {
			continue;
		}
		/* Thousandths of the unit, rounded; written to avoid overflow near UINT64_MAX. */
		step = dur_units[i].ns / 1000;
		milli = ns / step + (ns % step >= (step + 1) / 2);
		if (milli >= 1000000 && i + 1 < DUR_NUNITS) {
			continue;
		}
		snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 " %s", milli / 1000, milli % 1000,
			 dur_units[i].name);
		return;
	}
}
