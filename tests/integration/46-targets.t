#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Targets an operator thinks in (issue 22): `record --cgroup PATH` tracks the processes of a
# cgroup v2 directory, those started in it and those moved in later, and no other; `record
# --comm NAME` the processes of that name, named so by an exec after latsnap started. The
# naps of `sleeper 120 N` inside a target are outliers, those of the same program outside are
# not, told apart by pid. And the usage errors: --cgroup with -a, a missing cgroup, a name
# longer than the kernel keeps, no cgroup v2 mounted.
set -u
. "$(dirname "$0")/lib.sh"

require_record sleeper
require perl

# The cgroup2 mount: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid setup.
CGM=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -n 1)
[ -n "$CGM" ] || skip_all "no cgroup2 hierarchy mounted"
CGNAME=latsnap-test-$$
CG=$CGM/$CGNAME
mkdir "$CG" || skip_all "cannot make a cgroup in $CGM"

# The cgroup goes at exit, once the processes in it are gone.
cleanup_cgroup() {
	local pid
	for pid in $(cat "$CG/cgroup.procs" 2>/dev/null); do
		kill -KILL "$pid" 2>/dev/null
	done
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$CG" 2>/dev/null && break
		sleep 0.1
	done
	_tap_cleanup
}
trap cleanup_cgroup EXIT

mono_ns() { perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e 'printf "%d\n", clock_gettime(CLOCK_MONOTONIC) * 1e9'; }

# start_record OUT ERR ARGS...: latsnap record --no-snapshot --json -v ARGS in the background
# (LPID), returning once it tracks (its verbose "record: tracking" line, after attach).
start_record() {
	local out=$1 err=$2 i; shift 2
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot --json -v "$@" >"$out" 2>"$err" &
	LPID=$!
	track_bg $LPID
	for ((i = 0; i < 300; i++)); do
		grep -q 'record: tracking' "$err" 2>/dev/null && return 0
		kill -0 $LPID 2>/dev/null || break
		sleep 0.1
	done
	diag "latsnap record $* did not start tracking; its stderr:"
	diag_file "$err" "  stderr: "
	return 1
}

# nap COMM: a jq filter of a whole ~120 ms nap of COMM, reported as a requested sleep.
nap() {
	printf 'select(.comm == "%s" and .kind == "syscall" and (.syscall | test("^(clock_)?nanosleep$"))
		and .duration_ns >= 110000000 and .duration_ns <= 250000000
		and (.cause | test("Requested sleep")))' "$1"
}

# --- --cgroup: started inside, started outside, moved in -----------------------------------
OUT=$TMPD/cg.out ERR=$TMPD/cg.err
if start_record "$OUT" "$ERR" -t 50ms --cgroup "$CGNAME" -d 5s; then
	# Inside from its first instruction: the wrapper shell moves itself in, then execs.
	WL_LOG=$TMPD/in.log sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 120 3' sh "$CG" \
		"$WL/sleeper" </dev/null >/dev/null 2>&1 &
	IN=$!
	WL_LOG=$TMPD/outside.log "$WL/sleeper" 120 3 </dev/null >/dev/null 2>&1 &
	OUTSIDE=$!
	# Started outside, moved in after 1 s: only its naps after the move are the cgroup's.
	WL_LOG=$TMPD/moved.log "$WL/sleeper" 120 20 </dev/null >/dev/null 2>&1 &
	MOVED=$!
	track_bg "$IN $OUTSIDE $MOVED"
	sleep 1
	T0=$(mono_ns)
	echo "$MOVED" >"$CG/cgroup.procs"
	T1=$(mono_ns)
	wait $IN $OUTSIDE $MOVED
	wait $LPID
	RC=$?
else
	RC=none IN=0 OUTSIDE=0 MOVED=0 T0=0 T1=0
fi
is "$RC" 0 "record --cgroup $CGNAME -d 5s: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON"
dump_outliers "$OUT"
is "$(jcount "$OUT" "select(.pid == $IN) | $(nap sleeper)")" 3 \
	"the three 120 ms naps of the sleeper started in the cgroup (pid $IN) are outliers"
is "$(jq -s "[.[] | select(.pid == $IN) | $(nap sleeper) | .tid] | unique | length" "$OUT" 2>/dev/null)" 1 \
	"... of its one thread"
is "$(jcount "$OUT" "select(.pid == $OUTSIDE)")" 0 \
	"none of the same sleeper's outside the cgroup (pid $OUTSIDE)"
# Naps of the moved sleeper that began after the move, from its own log.
AFTER=$(awk -v t="$T1" '$1 == "nap" && $3 > t { n++ } END { print n + 0 }' "$TMPD/moved.log" 2>/dev/null)
BEFORE=$(awk -v t="$T0" '$1 == "nap" && $4 < t { n++ } END { print n + 0 }' "$TMPD/moved.log" 2>/dev/null)
diag "moved sleeper (pid $MOVED): $BEFORE naps ended before the move, $AFTER began after it"
between "$AFTER" 5 20 "the moved sleeper napped at least 5 times after the move (test sanity)"
between "$BEFORE" 3 20 "and at least 3 times before it (test sanity)"
is "$(jcount "$OUT" "select(.pid == $MOVED) | $(nap sleeper) | select(.start_ns > $T1)")" "$AFTER" \
	"each of its naps after the move into the cgroup is an outlier"
is "$(jcount "$OUT" "select(.pid == $MOVED and .start_ns < $T0)")" 0 \
	"none of those before the move"

# --- --comm: a process named napper (the file's name, given at exec) ----------------------
cp "$WL/sleeper" "$TMPD/napper"
OUT=$TMPD/comm.out ERR=$TMPD/comm.err
if start_record "$OUT" "$ERR" -t 50ms --comm napper -d 3s; then
	# The shell runs (an untracked sh) before its exec names it napper: decided again there.
	sh -c 'sleep 0.2; exec "$1" 120 3' sh "$TMPD/napper" </dev/null >/dev/null 2>&1 &
	NAPPER=$!
	"$WL/sleeper" 120 3 </dev/null >/dev/null 2>&1 &
	PLAIN=$!
	track_bg "$NAPPER $PLAIN"
	wait $NAPPER $PLAIN
	wait $LPID
	RC=$?
else
	RC=none NAPPER=0 PLAIN=0
fi
is "$RC" 0 "record --comm napper -d 3s: exit 0"
dump_outliers "$OUT"
is "$(jcount "$OUT" "select(.pid == $NAPPER) | $(nap napper)")" 3 \
	"the three naps of napper (pid $NAPPER, named so by its exec) are outliers"
is "$(jcount "$OUT" "select(.pid == $PLAIN)")" 0 "none of an ordinary sleeper (pid $PLAIN)"
is "$(jcount "$OUT" 'select(.comm != "napper")')" 0 "no outlier of any other name"

# --- usage errors ------------------------------------------------------------------------
RECORD_EXPECT_RC=2
record_json "$TMPD/u1.out" "$TMPD/u1.err" -- --cgroup "$CGNAME" -a -d 1s
is "$RC" 2 "--cgroup with -a: exit 2"
like "$(cat "$TMPD/u1.err")" '--all' "... saying -a tracks every thread already"

record_json "$TMPD/u2.out" "$TMPD/u2.err" -- --cgroup "latsnap-missing-$$" -d 1s
is "$RC" 2 "--cgroup of a missing cgroup: exit 2"
like "$(cat "$TMPD/u2.err")" "latsnap-missing-$$" "... naming it"
is "$(grep -c '' "$TMPD/u2.err")" 1 "... in one line"

record_json "$TMPD/u3.out" "$TMPD/u3.err" -- --comm 0123456789abcdef -d 1s
is "$RC" 2 "--comm of a 16-character name: exit 2"
like "$(cat "$TMPD/u3.err")" '15' "... saying the kernel keeps 15"

printf 'comm = napper\ncomm = 0123456789abcdefg\n' >"$TMPD/bad.conf"
record_json "$TMPD/u4.out" "$TMPD/u4.err" -- -c "$TMPD/bad.conf" -d 1s
is "$RC" 2 "config key comm of a long name: exit 2"
like "$(cat "$TMPD/u4.err")" "bad.conf:2:" "... naming the file and line"

# Only cgroup v1 (or none): unmount cgroup2 in a mount namespace of its own.
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	timeout 30 unshare -m sh -c 'umount "$1" && exec "$2" record --no-snapshot --cgroup "$3" -d 1s' \
		sh "$CGM" "$LATSNAP" "$CGNAME" >/dev/null 2>"$TMPD/u5.err"
	RC=$?
	is "$RC" 2 "--cgroup where no cgroup2 hierarchy is mounted: exit 2"
	like "$(cat "$TMPD/u5.err")" '--cgroup needs cgroup v2' "... saying so ($(head -c 200 "$TMPD/u5.err"))"
else
	skip_tests 2 "unshare -m not available"
fi
unset RECORD_EXPECT_RC

done_testing
