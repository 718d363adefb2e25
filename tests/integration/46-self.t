#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# latsnap never records itself (issue 46): each snapshot is a command to lttng-sessiond, whose
# threads and consumer daemon wait for it; reported, each of those waits made the next snapshot.
#  a) Two `record -a -t 50ms` with snapshots side by side: neither reports an outlier of a
#     process of LTTng's or latsnap's (root processes running lttng-sessiond, lttng-consumerd,
#     lttng-relayd, latsnap, latsnap-replay, latsnap-trace-reader, found in /proc during the run
#     and after), nor of the other latsnap. A copy of `sleeper` named lttng-relayd run by root,
#     started before them or after, is one of those: its naps are not reported. The same file
#     run by another user (a name is anyone's to take) and plain `sleeper 100 5` are reported.
#     With --comm lttng-relayd too: root's is left out, another user's is tracked.
#  b) `-p PID` of such a process tracks it all the same, with a warning.
#  c) The start gate: COMMAND, held until tracking is live (with --go-waits, its probes are
#     attached meanwhile), is no outlier of comm latsnap (its name before its exec); COMMAND's own
#     waits from its exec on are. Three runs at -t 1ms: on the code before, the gate's read was
#     reported in 3 runs of 5.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record sleeper gowaits
require_lttng
require setpriv

# ours_pids: the root processes running a file of latsnap's or LTTng's daemons' names, now.
ours_pids() {
	local d exe uid
	for d in /proc/[0-9]*; do
		exe=$(readlink "$d/exe" 2>/dev/null) || continue
		exe=${exe% (deleted)}
		case ${exe##*/} in
		latsnap | latsnap-replay | latsnap-trace-reader | lttng-sessiond | lttng-consumerd | lttng-relayd) ;;
		*) continue ;;
		esac
		uid=$(awk '$1 == "Uid:" { print $2 }' "$d/status" 2>/dev/null)
		[ "$uid" = 0 ] && echo "${d#/proc/}"
	done
}

# start_record TAG ARGS...: latsnap record --json -v ARGS in the background (pid in LPID),
# returning once it tracks.
start_record() {
	local tag=$1 i; shift
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -v "$@" >"$TMPD/$tag.out" \
		2>"$TMPD/$tag.err" &
	LPID=$!
	track_bg $LPID
	for ((i = 0; i < 300; i++)); do
		grep -q 'record: tracking' "$TMPD/$tag.err" 2>/dev/null && return 0
		kill -0 $LPID 2>/dev/null || break
		sleep 0.1
	done
	diag "latsnap record $* did not start tracking; its stderr:"
	diag_file "$TMPD/$tag.err" "  stderr: "
	return 1
}

# naps OUT PID: the ~100 ms naps of process PID that OUT reports.
naps() {
	jq -s "[.[] | select(.pid == ${2:-0} and (.syscall // \"\" | test(\"nanosleep\"))
		and .duration_ns >= 90000000)] | length" "$1" 2>/dev/null
}

# The fake daemon: sleeper's file, named as LTTng's relay daemon, where another user can run it.
FAKE_DIR=$(mktemp -d /tmp/latsnap-self.XXXXXX)
chmod 755 "$FAKE_DIR"
FAKE=$FAKE_DIR/lttng-relayd
cp "$WL/sleeper" "$FAKE"
chmod 755 "$FAKE"
cleanup_fake() {
	rm -rf "$FAKE_DIR"
	_tap_cleanup
}
trap cleanup_fake EXIT

# --- a) two latsnaps -a with snapshots, side by side -----------------------------------------
"$FAKE" 100 60 </dev/null >/dev/null 2>&1 &
BEFORE=$!
track_bg $BEFORE
start_record b -a -t 50ms -d 8s -o "$TMPD/snaps-b"
BPID=$LPID
start_record a -a -t 50ms -d 5s -o "$TMPD/snaps-a"
APID=$LPID
# latsnap itself, timeout's child.
LATSNAPS="$(pgrep -P $APID) $(pgrep -P $BPID)"
"$WL/sleeper" 100 5 20 </dev/null >/dev/null 2>&1 &
SLEEPER=$!
"$FAKE" 100 5 20 </dev/null >/dev/null 2>&1 &
AFTER=$!
setpriv --reuid=65534 --regid=65534 --clear-groups "$FAKE" 100 5 20 </dev/null >/dev/null 2>&1 &
USER=$!
track_bg "$SLEEPER $AFTER $USER"
sleep 3
OURS="$(ours_pids) $LATSNAPS"
wait $APID
RC_A=$?
OURS="$OURS $(ours_pids)"
wait $BPID
RC_B=$?
kill $BEFORE 2>/dev/null
is "$RC_A" 0 "record -a -t 50ms -d 5s (latsnap A): exit 0"
is "$RC_B" 0 "record -a -t 50ms -d 8s beside it (latsnap B): exit 0"
LIST=$(echo $OURS | tr ' ' '\n' | sort -un | paste -sd, -)
diag "LTTng's and latsnap's processes seen: $LIST; the fake daemon: $BEFORE (before), $AFTER (after)"
OWN="[.[] | select(.pid as \$p | [$LIST] | index(\$p))]"
for tag in a b; do
	is "$(jq -s "$OWN | length" "$TMPD/$tag.out")" 0 \
		"latsnap $tag: no outlier of LTTng's daemons, of latsnap, its helpers or the other latsnap" ||
		jq -s -c "$OWN | .[] | [.pid, .tid, .comm, .syscall, .duration_ns, .cause]" \
			"$TMPD/$tag.out" | head -20 | while IFS= read -r l; do diag "  $l"; done
	is "$(naps "$TMPD/$tag.out" $BEFORE)" 0 \
		"latsnap $tag: no nap of root's lttng-relayd (a sleeper) started before latsnap"
	is "$(naps "$TMPD/$tag.out" $AFTER)" 0 \
		"latsnap $tag: no nap of root's lttng-relayd started after latsnap"
	is "$(naps "$TMPD/$tag.out" $USER)" 5 \
		"latsnap $tag: the 5 naps of the same file run by another user are reported"
	is "$(naps "$TMPD/$tag.out" $SLEEPER)" 5 "latsnap $tag: the 5 naps of sleeper 100 5 are reported"
done
# The snapshots A made: none of them for a wait of LTTng's or latsnap's.
is "$(cat "$TMPD"/snaps-a/*/summary.json 2>/dev/null | jq -s "[.[] | .outliers[]?] | $OWN | length")" 0 \
	"no snapshot of A holds an outlier of LTTng's or latsnap's processes"

# --- a2) --comm names it: root's is still left out, another user's is tracked -----------------
"$FAKE" 100 30 20 </dev/null >/dev/null 2>&1 &
ROOTS=$!
setpriv --reuid=65534 --regid=65534 --clear-groups "$FAKE" 100 30 20 </dev/null >/dev/null 2>&1 &
USERS=$!
track_bg "$ROOTS $USERS"
record_json "$TMPD/comm.out" "$TMPD/comm.err" -- -t 50ms --comm lttng-relayd -d 2s
is "$RC" 0 "record --comm lttng-relayd -d 2s: exit 0"
is "$(naps "$TMPD/comm.out" $ROOTS)" 0 "--comm lttng-relayd: no nap of root's lttng-relayd"
between "$(naps "$TMPD/comm.out" $USERS)" 5 30 "--comm lttng-relayd: another user's are reported"
kill $ROOTS $USERS 2>/dev/null

# --- b) -p PID of one of them: tracked, with a warning ---------------------------------------
# Napping long enough for latsnap to start on a loaded machine; record ends when it exits.
"$FAKE" 100 40 20 </dev/null >/dev/null 2>&1 &
ASKED=$!
track_bg $ASKED
record_json "$TMPD/p.out" "$TMPD/p.err" -- -t 50ms -p $ASKED
is "$RC" 0 "record -p PID of root's lttng-relayd (a sleeper): exit 0"
ok 'grep -q "pid $ASKED is lttng-relayd, left out unless asked for by pid: tracked" "$TMPD/p.err"' \
	"it warns that the process is tracked although one of LTTng's" || diag_file "$TMPD/p.err" "  stderr: "
between "$(naps "$TMPD/p.out" $ASKED)" 10 40 "its naps are reported"

# --- c) the start gate, under --go-waits -----------------------------------------------------
GATE=0 GO_WAITS=0
for i in 1 2 3; do
	WL_LOG=$TMPD/go$i.log record_snap go$i -t 1ms --go-waits -o "$TMPD/snaps-go$i" -- "$WL/gowaits" 50
	PID=$(wl_log_get "$TMPD/go$i.log" pid)
	GATE=$((GATE + $(jq -s '[.[] | select(.comm == "latsnap")] | length' "$TMPD/go$i.out")))
	GO_WAITS=$((GO_WAITS + $(jq -s "[.[] | select(.pid == ${PID:-0} and .comm == \"gowaits\"
		and (.cause | startswith(\"Go: sleep\")))] | length" "$TMPD/go$i.out")))
	jq -s -c '.[] | select(.comm == "latsnap") | [.pid, .tid, .syscall, .duration_ns, .cause]' \
		"$TMPD/go$i.out" | while IFS= read -r l; do diag "  run $i: $l"; done
done
is "$GATE" 0 "3 runs of record -t 1ms --go-waits -- gowaits 50: no outlier of comm latsnap (the gate)"
between "$GO_WAITS" 3 1000 "gowaits' own goroutine naps are reported from its exec on, in each run"

done_testing
