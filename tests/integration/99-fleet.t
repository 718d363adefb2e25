#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Many hosts: snapshots streamed to a real lttng-relayd on 127.0.0.1 (its own output directory
# and ports), from two `latsnap record` as two hosts. Each "host" is a UTS namespace (its own
# host name) and a mount namespace with private tmpfs on /run/lttng and /dev/shm, so that it
# starts and talks to a session daemon of its own, whose host name the relay files it under;
# the machine's session daemon is never touched.
#  a) hosta runs sleeper (5 timer sleeps: 3 naps, 2 gaps), hostb pipewait (a pipe read and the writer's sleep):
#     the relay tree holds both hosts' snapshots; `report` over it shows both hosts with the
#     right causes and counts; --by host, --host, flame --host, show of one relay snapshot.
#  b) the relay stops mid-run: a one-line error per snapshot, --keep-local keeps each one,
#     detection goes on; the relay restarted gets the later snapshots again.
#  c) no relay and no --keep-local: the error says the snapshot is not kept; usage errors.
set -u
. "$(dirname "$0")/lib.sh"
# Its runs repeat wait sites and count on a snapshot for each: the flood guard, 46-flood.t's
# subject, is off in them (--no-flood-guard).

require_root
require jq timeout unshare mount lttng-relayd lttng-sessiond babeltrace2 ss
require_latsnap
require_workloads sleeper pipewait
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
[ -r "$BUILD/liblatsnap-events.so" ] || skip_all "liblatsnap-events.so not built (run make)"

RELAY_OUT=$TMPD/relay
export TMPDIR=$TMPD/tmp # the recorders' staging directories go here
mkdir -p "$RELAY_OUT" "$TMPDIR"

# Three free ports, not the default 5342-5344 (a relay of the machine may hold those).
pick_ports() {
	local base tries
	for tries in 1 2 3 4 5 6 7 8 9 10; do
		base=$((20000 + (RANDOM % 4000) * 3))
		if ! ss -Hltn "( sport = :$base or sport = :$((base + 1)) or sport = :$((base + 2)) )" |
			grep -q .; then
			CTRL=$base DATA=$((base + 1)) LIVE=$((base + 2))
			return 0
		fi
	done
	return 1
}
pick_ports || bail_out "no free ports for lttng-relayd"
URL=net://127.0.0.1:$CTRL:$DATA

# In a private mount namespace: own tmpfs on /run/lttng and /dev/shm, then ARGS.
# /run/lttng may not exist yet on a machine where no session daemon ever ran.
PRIVATE='mkdir -p /run/lttng && mount -t tmpfs tmpfs /run/lttng && mount -t tmpfs tmpfs /dev/shm && '

RELAY_PID=
start_relay() {
	local i
	unshare --mount bash -c "$PRIVATE exec \"\$@\"" relay \
		lttng-relayd -C "tcp://127.0.0.1:$CTRL" -D "tcp://127.0.0.1:$DATA" \
		-L "tcp://127.0.0.1:$LIVE" -o "$RELAY_OUT" >>"$TMPD/relayd.log" 2>&1 &
	RELAY_PID=$!
	track_bg "$RELAY_PID"
	for i in $(seq 50); do
		ss -Hltn "( sport = :$CTRL )" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}
stop_relay() {
	kill -TERM "$RELAY_PID" 2>/dev/null
	wait "$RELAY_PID" 2>/dev/null
}

# host NAME OUTFILE ERRFILE ARGS...: `latsnap record ARGS` as host NAME, in the background;
# its pid in HOST_PID.
host() {
	local name=$1 out=$2 err=$3
	shift 3
	unshare --uts --mount bash -c "$PRIVATE hostname \"\$0\" && exec \"\$@\"" "$name" \
		timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-flood-guard -v --json "$@" >"$out" 2>"$err" &
	HOST_PID=$!
	track_bg "$HOST_PID"
}

# relay_snaps HOST: the snapshot directories lttng-relayd filed for HOST.
relay_snaps() {
	find "$RELAY_OUT/$1" -mindepth 2 -maxdepth 2 -type d 2>/dev/null | sort
}

start_relay || bail_out "lttng-relayd did not listen on port $CTRL"

# --- a) two hosts, one relay ----------------------------------------------------------------
host hosta "$TMPD/a.out" "$TMPD/a.err" -o "$URL" -t 50ms -- "$WL/sleeper" 150 3 400
A_PID=$HOST_PID
host hostb "$TMPD/b.out" "$TMPD/b.err" -o "$URL" -t 50ms -- "$WL/pipewait" 150
B_PID=$HOST_PID
wait "$A_PID"
ok $? "hosta: latsnap record -o $URL exits 0"
wait "$B_PID"
ok $? "hostb: latsnap record -o $URL exits 0"
for h in a b; do
	grep -v 'libbpf' "$TMPD/$h.err" | grep -E '^latsnap: (snapshot|record: snapshot|[0-9]+ outliers)' |
		sed "s/^/host$h: /" | while read -r l; do diag "$l"; done
done

# sleeper's start read from disk (a fresh build's binary under the other hosts' load) is a true
# outlier of its own: counted on top, and said (lib.sh's LOADING).
A_LOAD=$(jq -s "[.[] | select($LOADING)] | length" "$TMPD/a.out" 2>/dev/null)
A_N=$((5 + ${A_LOAD:-0}))
loading_note "$TMPD/a.out"
# How many snapshots each outlier batch makes depends on timing; the counts must agree.
sent_a=$(grep -c "^latsnap: snapshot .* sent to $URL: " "$TMPD/a.err")
between "$sent_a" 1 "$A_N" "hosta says its snapshots were sent to the relay"
is "$(relay_snaps hosta | wc -l)" "$sent_a" "the relay holds each of hosta's snapshots under hosta/"
between "$(relay_snaps hostb | wc -l)" 1 2 "the relay holds hostb's snapshots under hostb/"
first=$(relay_snaps hosta | head -1)
ok '[ -n "$(find "$first" -mindepth 2 -maxdepth 2 -path "*/trace-*/ust")" ] &&
	[ -n "$(find "$first" -mindepth 2 -maxdepth 2 -path "*/latsnap-*/ust")" ] &&
	! [ -e "$first/summary.json" ]' \
	"a relay snapshot is LTTng's trace and latsnap's (ID/trace-*, ID/latsnap-*), without summary.json"
babeltrace2 "$first" 2>/dev/null | grep -q 'latsnap:summary: .*part = 0, parts = 1'
ok $? "its trace carries the summary as a latsnap:summary event"
is "$(find "$TMPDIR" -mindepth 1 | wc -l)" 0 "no local copy stays behind without --keep-local"

L() {
	local out=$1 err=$2
	shift 2
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" "$@" >"$out" 2>"$err"
	RC=$?
}
# lttng-relayd writes what it received after `lttng snapshot record` returned: under load a
# stream file of the last snapshot can still be short when record has exited. Wait (15 s at
# most) for every relay snapshot to read back complete; the checks below say what is not.
for i in $(seq 30); do
	L "$TMPD/r.json" "$TMPD/r.err" report --json "$RELAY_OUT"
	[ "$(jq -r '[.snapshots[] | select(.status != "complete")] | length' "$TMPD/r.json" 2>/dev/null)" = 0 ] &&
		break
	sleep 0.5
done
is "$RC" 0 "report --json over the relay tree exits 0"
jq -r '.snapshots[] | select(.status != "complete") | "  not complete: \(.)"' "$TMPD/r.json" 2>/dev/null |
	while read -r l; do diag "$l"; done
R=$TMPD/r.json
is "$(jq -r '[.snapshots[] | select(.status == "complete") | .host] | unique | join(",")' "$R")" \
	"hosta,hostb" "every snapshot is complete, from hosta and hostb (summaries read from the traces)"
is "$(jq -r '.hosts.groups[] | select(.key == "hosta") | .count' "$R")" "$A_N" "hosta: 5 outliers (+${A_LOAD:-0} loading)" ||
	jq -r '"  hosta printed: \(.syscall // .kind) \(.duration_ns / 1000000 | floor) ms \(.cause)"' "$TMPD/a.out" |
	while read -r l; do diag "$l"; done
is "$(jq -r '[.processes[] | select(.host == "hosta") | .groups[] | select(.key == "Requested sleep (nanosleep)") | .count] | add' "$R")" \
	5 "hosta: the 5 outliers are sleeper's timer sleeps" ||
	jq -r '"  hosta printed: \(.syscall) \(.duration_ns / 1000000 | floor) ms \(.cause)"' "$TMPD/a.out" |
	while read -r l; do diag "$l"; done
is "$(jq -r '[.processes[] | select(.host == "hostb") | .groups[] | select(.key == "Reading from a pipe") | .count] | add' "$R")" \
	1 "hostb: pipewait's read is one outlier, reading from a pipe"
# The writer's outliers may come before it renames itself pipewriter: pipewait's processes only.
is "$(jq -r '[.processes[] | select(.host == "hostb") | .comm] | unique | map(select(. != "pipewriter")) | join(",")' "$R")" \
	"pipewait" "hostb: pipewait's processes, nothing of hosta"
is "$(jq -r '.system.count' "$R")" \
	"$(($(jq -r '.hosts.groups[] | select(.key == "hosta") | .count' "$R") + $(jq -r '.hosts.groups[] | select(.key == "hostb") | .count' "$R")))" \
	"the system-wide count is the sum of the hosts'"

L "$TMPD/r.txt" "$TMPD/r.err" report "$RELAY_OUT"
grep -q '^By host:' "$TMPD/r.txt" && grep -qE "^hosta +$A_N " "$TMPD/r.txt"
ok $? "report (text): a By host table with hosta's $A_N outliers"
grep -qE '^Process sleeper \([0-9]+\) on hosta:' "$TMPD/r.txt" &&
	grep -qE '^Process pipewait \([0-9]+\) on hostb:' "$TMPD/r.txt"
ok $? "report (text): each process names its host"
L "$TMPD/rh.txt" "$TMPD/rh.err" report --by host "$RELAY_OUT"
grep -qE '^Host +Count' "$TMPD/rh.txt" && grep -qE '^hostb +[0-9]+ ' "$TMPD/rh.txt"
ok $? "report --by host: one row per host"
L "$TMPD/ra.json" "$TMPD/ra.err" report --json --host hosta "$RELAY_OUT"
is "$(jq -r '[.snapshots[].host] | unique | join(",")' "$TMPD/ra.json") $(jq -r .system.count "$TMPD/ra.json")" \
	"hosta $A_N" "report --host hosta: only hosta's snapshots and outliers"
L "$TMPD/rn.txt" "$TMPD/rn.err" report --host nosuchhost "$RELAY_OUT"
is "$RC" 1 "report --host of no snapshot: exit 1"
grep -q 'no snapshot of host nosuchhost' "$TMPD/rn.err"
ok $? "report --host of no snapshot: says so"
L "$TMPD/f.txt" "$TMPD/f.err" flame --host hostb "$RELAY_OUT"
grep -q '^pipewait;.*wait_for_pipe;.*pipe_read' "$TMPD/f.txt" && ! grep -q '^sleeper;' "$TMPD/f.txt"
ok $? "flame --host hostb: pipewait's stack through wait_for_pipe into pipe_read, no sleeper" || {
	diag_file "$TMPD/f.txt" "  flame: "
	jq -c 'select(.comm == "pipewait") | {syscall, source: .user_stack.source, flags,
		frames: [.user_stack.frames[]? | "\(.symbol)@\(.module)"]}' "$TMPD/b.out" 2>/dev/null |
		while IFS= read -r l; do diag "  hostb outlier: $l"; done
	grep -E 'tracker: pid|usyms' "$TMPD/b.err" | while IFS= read -r l; do diag "  hostb: $l"; done
}
# The first snapshot that holds a nap (the first may hold only a loading outlier, see above).
for snap in $(relay_snaps hosta); do
	L "$TMPD/s.txt" "$TMPD/s.err" show "$snap"
	grep -q 'cause: Requested sleep (nanosleep)' "$TMPD/s.txt" && break
done
grep -q 'cause: Requested sleep (nanosleep)' "$TMPD/s.txt" && grep -q 'slow_nap' "$TMPD/s.txt"
ok $? "show of a relay snapshot: the cause and the workload's frame"

# --- b) the relay goes away mid-run and comes back --------------------------------------------
KEEP=$TMPD/keep
# --hang off: the 1 s gaps are as long as the default --hang (max(1 s, 10 x 50 ms)); a stall scan
# that caught one a hair past 1 s would add an eighth, still-blocked outlier to the count below.
host hostc "$TMPD/c.out" "$TMPD/c.err" -o "$URL" --keep-local "$KEEP" -t 50ms --hang off -- \
	"$WL/sleeper" 150 4 1000
C_PID=$HOST_PID
waited=0
# Stopped only once the first snapshot is whole there: sent, and its metadata written by the relay.
until { grep -q ' sent to ' "$TMPD/c.err" &&
	[ -n "$(find "$RELAY_OUT/hostc" -name metadata -size +0 2>/dev/null)" ]; } ||
	[ $waited -ge 200 ]; do
	sleep 0.05
	waited=$((waited + 1))
done
stop_relay
before=$(relay_snaps hostc | wc -l)
waited=0
until grep -q 'kept locally' "$TMPD/c.err" || [ $waited -ge 200 ]; do
	sleep 0.05
	waited=$((waited + 1))
done
start_relay || bail_out "lttng-relayd did not come back"
wait "$C_PID"
ok $? "hostc: latsnap record exits 0 though the relay went away"
grep -E '^latsnap: (snapshot|record: snapshot|[0-9]+ outliers)' "$TMPD/c.err" |
	while read -r l; do diag "hostc: $l"; done
is "$before" 1 "the relay had hostc's first snapshot when it stopped"
errs=$(grep -cE "^latsnap: record: snapshot [^ ]+ to $URL: LTTng: .+; kept locally in $KEEP/[^ ]+$" "$TMPD/c.err")
between "$errs" 1 5 "each snapshot the relay missed: one line naming the relay, LTTng's reason and the local copy"
# 4 naps and 3 gaps: 7 timer sleeps, in as many snapshots as the timing made.
grep -qE '^latsnap: 7 outliers, [0-9]+ snapshots, 0 skipped' "$TMPD/c.err"
ok $? "detection went on: 7 outliers, none skipped"
snaps=$(sed -nE 's/^latsnap: 7 outliers, ([0-9]+) snapshots.*/\1/p' "$TMPD/c.err")
is "$(jq -s 'length' "$TMPD/c.out")" 7 "all 7 outliers on stdout"
is "$(find "$KEEP" -mindepth 2 -maxdepth 2 -name summary.json | wc -l)" "${snaps:-?}" \
	"--keep-local keeps every snapshot locally, those the relay missed included"
after=$(relay_snaps hostc | wc -l)
ok '[ "$after" -gt "$before" ]' "the relay, back, gets snapshots again"
is "$after" "$((${snaps:-0} - errs))" "the relay has every snapshot but those it missed ($after)"
L "$TMPD/rk.json" "$TMPD/rk.err" report --json "$KEEP"
is "$(jq -r '.system.groups[] | select(.key == "Requested sleep (nanosleep)") | .count' "$TMPD/rk.json")" 7 \
	"report over the local copy: the 7 timer sleeps (the local layout as before)"
L "$TMPD/rc.json" "$TMPD/rc.err" report --json --host hostc "$RELAY_OUT"
between "$(jq -r .system.count "$TMPD/rc.json")" "$after" 6 \
	"report over the relay: hostc's outliers of the snapshots there"

# --- c) no relay at all, no local copy; usage ---------------------------------------------------
stop_relay
host hostd "$TMPD/d.out" "$TMPD/d.err" -o "$URL" -t 50ms -- "$WL/sleeper" 120 1
wait "$HOST_PID"
ok $? "hostd: no relay: latsnap record still exits 0"
grep -qE "^latsnap: record: snapshot [^ ]+ to $URL: LTTng: .+; not kept \(no --keep-local\)$" "$TMPD/d.err"
ok $? "no relay, no --keep-local: one line says the snapshot is not kept"
is "$(jq -s 'length' "$TMPD/d.out")" 1 "no relay: the outlier is still reported"
L "$TMPD/u.out" "$TMPD/u.err" record -o 'net://127.0.0.1:notaport' -- true
is "$RC" 2 "a bad relay URL is a usage error"
grep -q "^latsnap: record: bad --output 'net://127.0.0.1:notaport': " "$TMPD/u.err"
ok $? "the bad URL is named"
L "$TMPD/u.out" "$TMPD/u.err" record --keep-local "$TMPD/x" -- true
is "$RC" 2 "--keep-local without a relay is a usage error"

done_testing
