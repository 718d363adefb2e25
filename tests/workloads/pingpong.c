// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong [N=100000]
 *
 * Two processes bounce one byte over a pair of pipes N times: two context switches per round
 * trip, nothing else. The workload of the context stream's cost figures (make bench, notes).
 * Says on stderr (-v) the round trips per second.
 * WL_LOG lines: "pid P", "rate ROUND_TRIPS_PER_S".
 */
#include "wl_common.h"
#include <sys/wait.h>

int main(int argc, char **argv)
{
	int ping[2], pong[2], status;
	uint64_t t0, t1;
	long n, i;
	pid_t child;
	char c = 'p';

	wl_init_knobs("pingpong", argc, argv, WL_KNOB("N", n, 100000, 1, 1000000000));
	if (pipe(ping) || pipe(pong)) {
		wl_die("pipe", errno);
	}
	child = fork();
	if (child < 0) {
		wl_die("fork", errno);
	}
	if (child == 0) {
		for (i = 0; i < n; i++) {
			if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) {
				_exit(1);
			}
		}
		_exit(0);
	}
	t0 = wl_now_ns();
	for (i = 0; i < n; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			wl_die("ping", errno);
		}
	}
	t1 = wl_now_ns();
	waitpid(child, &status, 0);
	wl_log("rate %.0f", n / ((double)(t1 - t0) / 1e9));
	wl_say("%ld round trips in %.3f s: %.0f per second", n, (double)(t1 - t0) / 1e9,
	       n / ((double)(t1 - t0) / 1e9));
	return 0;
}
