#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Hostile traces: a real snapshot (real recorder, lttng-sessiond, sleeper workload), then
# CORRUPT_COPIES copies of it, each with its trace damaged a different way (bytes overwritten in
# a stream file or the metadata, a stream truncated, random bytes appended), seeded so that a
# failure can be replayed. `latsnap show` and `show --json` read each copy: exit 0 or 1, never a
# crash, a hang (the reader gives up after 20 s of silence) or a usage exit; every stderr line
# is latsnap's own "latsnap: ..." line. Under make check-asan the sanitizers watch each run.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq perl timeout
require_latsnap
require lttng lttng-sessiond babeltrace2
require_workloads sleeper
require_lttng

COPIES=${CORRUPT_COPIES:-24}
SEED=${CORRUPT_SEED:-9}
plan $((2 + 2 * COPIES))

OUT=$TMPD/out
for try in 1 2 3; do
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -t 20ms -o "$OUT" -- \
		"$WL/sleeper" 60 >"$TMPD/rec.out" 2>"$TMPD/rec.err"
	RC=$?
	grep -q 'No session daemon is available' "$TMPD/rec.err" || break
	rm -rf "$OUT"
	require_lttng
done
is "$RC" 0 "record -o OUT -- sleeper 60: exit 0" || diag_file "$TMPD/rec.err" "  stderr: "
SNAP=$(find "$OUT" -name summary.json -printf '%h\n' 2>/dev/null | head -n 1)
ok "[ -n '$SNAP' ] && [ -d '$SNAP/trace' ]" "a snapshot with a trace: ${SNAP:-none}"
[ -n "$SNAP" ] || SNAP=$TMPD/none

# corrupt DIR N: damage copy N of the trace under DIR (perl, seeded by SEED and N).
corrupt() {
	perl -e '
		use strict;
		my ($dir, $n, $seed) = @ARGV;
		srand($seed * 1000 + $n);
		my @files = sort split /\n/, `find "$dir/trace" -type f -size +0`;
		@files or exit 0;
		my $f = $files[int(rand(@files))];
		my $size = -s $f;
		my $how = $n % 4;
		open(my $fh, "+<", $f) or die "$f: $!";
		binmode $fh;
		if ($how == 0 || $how == 1) {
			# Overwrite a few bytes: random ones, or 0xff runs (big lengths, sizes, ids).
			for (1 .. 1 + int(rand(8))) {
				seek($fh, int(rand($size)), 0);
				print $fh ($how == 0 ? chr(int(rand(256))) : "\xff" x (1 + int(rand(8))));
			}
		} elsif ($how == 2) {
			truncate($fh, int(rand($size)));
		} else {
			seek($fh, 0, 2);
			print $fh join("", map { chr(int(rand(256))) } 1 .. 1 + int(rand(4096)));
		}
		close($fh);
		print "$f ($how)\n";
	' "$1" "$2" "$SEED"
}

for n in $(seq 1 "$COPIES"); do
	C=$TMPD/copy/$n/$(basename "$SNAP")
	mkdir -p "$(dirname "$C")"
	cp -r "$SNAP" "$C"
	what=$(corrupt "$C" "$n")
	for mode in text json; do
		args=()
		[ "$mode" = json ] && args=(--json)
		timeout -k 5 90 "$LATSNAP" show "${args[@]}" "$C" >"$TMPD/s.out" 2>"$TMPD/s.err"
		RC=$?
		bad=$(grep -cv '^latsnap: ' "$TMPD/s.err")
		ok "[ $RC -le 1 ] && [ $bad -eq 0 ]" \
			"copy $n ${what#"$C/"}: show $mode: exit $RC (0 or 1), only latsnap: lines on stderr"
		if [ "$RC" -gt 1 ] || [ "$bad" -ne 0 ]; then
			diag_file "$TMPD/s.err" "  stderr: "
		fi
	done
done
