// SPDX-License-Identifier: GPL-2.0
/*
 * unwind-nofp [MS=60] [N=1] [DEPTH=0]
 *
 * A timer sleep at the bottom of a known call chain, in code without frame
 * pointers (the Makefile builds *-nofp with -fomit-frame-pointer): N times,
 * main -> outer_fn -> middle_fn -> descend (DEPTH more recursive calls) ->
 * inner_fn -> nanosleep(MS). Known cause: a timer sleep. The kernel's
 * frame-pointer walk cannot get from libc's syscall wrapper back through
 * these functions; the preload library's unwinder (DWARF CFI) can, so under
 * `latsnap record` the outlier's unwound user_stack (and, with snapshots, the
 * latsnap:user_stack event latsnap records) holds inner_fn, descend,
 * middle_fn, outer_fn and main in that order. A large DEPTH makes a stack
 * deeper than the unwinder's limit (truncated).
 * WL_LOG lines: "pid P", "fn NAME 0xADDR" (runtime address) for main,
 * outer_fn, middle_fn, descend and inner_fn, "nap TID START_NS END_NS" per
 * nap.
 */
#include "wl_common.h"

/*
 * Each function must stay a frame of its own: not inlined, not cloned into
 * a .isra/.constprop copy (whose address would not be the one logged), and
 * not tail-called (the empty asm after each call keeps work after it).
 */
#ifdef __clang__
#define WL_FRAME __attribute__((noinline))
#else
#define WL_FRAME __attribute__((noinline, noclone))
#endif

static WL_FRAME void inner_fn(long ms)
{
	uint64_t ns = wl_timed_nap(ms);

	wl_say("slept %.3f ms", (double)ns / 1e6);
	__asm__ volatile("" ::: "memory");
}

/* DEPTH frames of descend on top of the first one: a stack as deep as asked. */
static WL_FRAME void descend(long depth, long ms)
{
	if (depth > 0)
		descend(depth - 1, ms);
	else
		inner_fn(ms);
	__asm__ volatile("" ::: "memory");
}

static WL_FRAME void middle_fn(long depth, long ms)
{
	descend(depth, ms);
	__asm__ volatile("" ::: "memory");
}

static WL_FRAME void outer_fn(long depth, long ms)
{
	middle_fn(depth, ms);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long ms, n, depth, i;

	wl_init_knobs("unwind-nofp", argc, argv, WL_MS("MS", ms, 60), WL_COUNT("N", n, 1),
		      WL_KNOB("DEPTH", depth, 0, 0, 100000));
	wl_log_fn(main);
	wl_log_fn(outer_fn);
	wl_log_fn(middle_fn);
	wl_log_fn(descend);
	wl_log_fn(inner_fn);
	for (i = 0; i < n; i++) {
		outer_fn(depth, ms);
		__asm__ volatile("" ::: "memory");
	}
	return 0;
}
