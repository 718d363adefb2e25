// SPDX-License-Identifier: GPL-2.0
/*
 * replay.c - latsnap-replay, the process in which `latsnap record` with a relay daemon records
 * its own events of a snapshot into the LTTng session, each at the time it happened
 * (recorder/replay.c), started by recorder/replay.c and by nothing else.
 *
 * Usage: latsnap-replay LIBRARY TIMEOUT_MS, the events on standard input.
 */
#include "recorder/replay.h"

int main(int argc, char **argv)
{
	return replay_helper_main(argc, argv);
}
