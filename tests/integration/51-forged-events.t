#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 51: only latsnap writes latsnap's events. root runs record --ust-events '*' -t 50ms on a
# victim (sleeper: 600 ms naps, the forger starting within the first) while a forger of user
# nobody (forgeevents) loads latsnap's events library and records, claiming the victim's pid,
# latsnap:bin_info (the victim's binary is the forger's), latsnap:outlier, latsnap:user_stack
# and latsnap_kernel:sched_switch.
#  a) the forger ran and its events reached LTTng: a session of the test's own, enabling
#     latsnap:* and latsnap_kernel:* for anyone, holds them (its vpid), and the forger counts them;
#     and it was traced into latsnap's session too: its statedump (not latsnap's) is there.
#  b) no snapshot's trace (babeltrace2 DIR/<id>/trace) holds any of latsnap's events from the
#     forger's vpid, nor its "FORGED" marks; latsnap's own latsnap:bin_info is there.
#  c) latsnap show names the victim's frames after the victim's binary, never the forger's, and
#     says nothing of the forger's records (its timelines took them as the victim's before).
#  d) the readers' own rule, on a snapshot that holds forged events (tests/fixtures/forged,
#     taken as in a-c by the code before this rule: the forger's events in LTTng's trace of
#     latsnap's session, from its own vpid): show and export leave them out, and keep latsnap's.
#  e) a forger of user nobody in a pid namespace of its own (unshare -Urp), where its vpid is
#     latsnap's pid, during a plain record (latsnap:bin_info enabled for latsnap's vpid alone):
#     none of its mappings of the victim reaches a snapshot, latsnap's own do.
set -u
. "$(dirname "$0")/lib.sh"

require_record sleeper forgeevents
require_lttng
require setpriv babeltrace2 perl timeout unshare pgrep

OUT=$TMPD/out
LIB=$(dirname "$LATSNAP")/liblatsnap-events.so
VICTIM_BIN=$(readlink -f "$WL/sleeper")
FORGER_BIN=$(readlink -f "$WL/forgeevents")

# The control: a session of the test's own, taking latsnap's providers from anyone.
CTL=latsnap-t51-$$
_lttng_sessions="$_lttng_sessions $CTL"
lttng create "$CTL" --output="$TMPD/ctl" >/dev/null &&
	lttng add-context -u -s "$CTL" -t vpid >/dev/null &&
	lttng enable-event -u -s "$CTL" 'latsnap:*' >/dev/null &&
	lttng enable-event -u -s "$CTL" 'latsnap_kernel:*' >/dev/null &&
	lttng start "$CTL" >/dev/null
ok $? "the control session is up"

WL_LOG=$TMPD/v.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --ust-events '*' -t 50ms \
	-o "$OUT" -- "$WL/sleeper" 600 4 >"$TMPD/rec.out" 2>"$TMPD/rec.err" &
REC=$!
track_bg "$REC"
VPID=
for i in $(seq 200); do
	VPID=$(awk '$1 == "pid" { print $2; exit }' "$TMPD/v.log" 2>/dev/null)
	[ -n "$VPID" ] && break
	sleep 0.05
done
# The victim's executable: where it is mapped (the forger is told; it could guess).
read -r BASE END < <(awk -v p="$VICTIM_BIN" '$6 == p {
	split($1, r, "-"); if (!b) b = r[1]; e = r[2] } END { print "0x" b, "0x" e }' \
	"/proc/${VPID:-0}/maps" 2>/dev/null)
ok '[ -n "$VPID" ] && [ "${BASE:-0x}" != 0x ]' "the victim runs (pid ${VPID:-?}, mapped at ${BASE:-?})"
SIZE=$(printf '0x%x' $((END - BASE)))

HOME=/tmp setpriv --reuid=65534 --regid=65534 --clear-groups "$FORGER_BIN" "$LIB" "${VPID:-1}" \
	"$BASE" "$SIZE" 3 >"$TMPD/f.out" 2>"$TMPD/f.err" &
FORGER=$!
track_bg "$FORGER"
wait "$REC"
is "$?" 0 "record --ust-events '*' -t 50ms -- sleeper 600 4: exit 0"
wait "$FORGER"
FPID=$(awk '$1 == "registered" { print $2 }' "$TMPD/f.out")
EMITTED=$(awk '$1 == "emitted" { print $2 }' "$TMPD/f.out")
ok '[ -n "$FPID" ] && [ "${EMITTED:-0}" -gt 0 ]' \
	"a) the forger (user nobody, pid ${FPID:-?}) recorded ${EMITTED:-no} events"
[ -s "$TMPD/f.err" ] && diag_file "$TMPD/f.err" "  forger: "
FPID=${FPID:-none}

lttng stop "$CTL" >/dev/null 2>&1
lttng destroy "$CTL" >/dev/null 2>&1
n=$(babeltrace2 "$TMPD/ctl" 2>/dev/null |
	grep -cE " latsnap(_kernel)?:[a-z_]+: .*\\bvpid = $FPID\\b")
ok "[ 0$n -gt 0 ]" "a) the control session holds the forger's latsnap events ($n)"

SNAPS=$(find "$OUT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | LC_ALL=C sort)
ok '[ -n "$SNAPS" ]' "snapshots taken ($(echo "$SNAPS" | grep -c .))"
forged=0 marks=0 other=0 own=0
for id in $SNAPS; do
	babeltrace2 "$OUT/$id/trace" >"$TMPD/bt-$id.txt" 2>/dev/null
	forged=$((forged + $(grep -cE " latsnap(_kernel)?:[a-z_]+: .*\\bvpid = $FPID\\b" "$TMPD/bt-$id.txt")))
	marks=$((marks + $(grep -c 'FORGED' "$TMPD/bt-$id.txt")))
	other=$((other + $(grep -E "\\bvpid = $FPID\\b" "$TMPD/bt-$id.txt" |
		grep -cvE ' latsnap(_kernel)?:[a-z_]+: ')))
	own=$((own + $(grep -cE " latsnap:bin_info: .*\\bpid = $VPID,.*path = \"$VICTIM_BIN\"" \
		"$TMPD/bt-$id.txt")))
done
ok "[ $other -gt 0 ]" "a) the forger was traced into latsnap's session: its own events are there ($other)"
is "$forged" 0 "b) no snapshot holds latsnap's events from the forger's vpid"
is "$marks" 0 "b) nor any of its FORGED marks"
ok "[ $own -gt 0 ]" "b) latsnap's own latsnap:bin_info of the victim is there ($own)"

# c) show, on each snapshot with the victim's outliers.
bad=0 good=0 shown=0
for id in $SNAPS; do
	jq -e ".outliers[] | select(.pid == ${VPID:-0})" "$OUT/$id/summary.json" >/dev/null 2>&1 ||
		continue
	run_latsnap "$TMPD/show-$id.json" "$TMPD/show-$id.err" show --json "$OUT/$id"
	[ "$RC" = 0 ] || diag_file "$TMPD/show-$id.err" "  show $id: "
	shown=$((shown + 1))
	bad=$((bad + $(jq "[.outliers[]? | select(.pid == ${VPID:-0}) | .user_stack.frames[]? |
		select(.module == \"$FORGER_BIN\")] | length" "$TMPD/show-$id.json" 2>/dev/null || echo 1)))
	good=$((good + $(jq "[.outliers[]? | select(.pid == ${VPID:-0}) | .user_stack.frames[]? |
		select(.module == \"$VICTIM_BIN\" and .symbol != null)] | length" \
		"$TMPD/show-$id.json" 2>/dev/null || echo 0)))
	marks=$(grep -c FORGED "$TMPD/show-$id.json")
	[ "$marks" = 0 ] || bad=$((bad + marks))
done
ok "[ $shown -gt 0 ]" "c) show ran on the snapshots of the victim's naps ($shown)"
is "$bad" 0 "c) show names none of the victim's frames after the forger's binary (nor says FORGED)"
ok "[ $good -gt 0 ]" "c) show names the victim's own frames after its binary ($good)"

# d) the readers, on a trace that holds the forger's events.
FX=$ROOT/tests/fixtures/forged/20261202T032902.626Z-0001
n=$(babeltrace2 "$FX/trace" 2>/dev/null | grep -cE ' latsnap(_kernel)?:[a-z_]+: .*\bvpid = 29641\b')
ok "[ 0$n -gt 0 ]" "d) the fixture holds the forger's latsnap events ($n, vpid 29641)"
run_latsnap "$TMPD/fx.json" "$TMPD/fx.err" show --json "$FX"
is "$RC" 0 "d) show --json on it: exit 0"
is "$(grep -c FORGED "$TMPD/fx.json")" 0 "d) show says nothing of the forger's events"
is "$(jq '[.outliers[] | select(.pid == 29636)] | length' "$TMPD/fx.json" 2>/dev/null)" 1 \
	"d) show: the victim's outlier"
n=$(jq '[.outliers[0].timeline[]? | select(.name | startswith("latsnap_kernel:"))] | length' \
	"$TMPD/fx.json" 2>/dev/null)
ok "[ 0$n -gt 0 ]" "d) show: its timeline keeps latsnap's own kernel context ($n events)"
run_latsnap "$TMPD/fx.out" "$TMPD/fx.err" export --perfetto "$TMPD/fx.pf" "$FX"
is "$RC" 0 "d) export --perfetto on it: exit 0"
is "$(grep -c FORGED "$TMPD/fx.pf")" 0 "d) export says nothing of the forger's events"

# e) the forger's vpid made latsnap's pid, in a pid namespace of its own.
OUT=$TMPD/out-e
WL_LOG=$TMPD/e.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -t 50ms -o "$OUT" -- \
	"$WL/sleeper" 600 3 >"$TMPD/e.out" 2>"$TMPD/e.err" &
REC=$!
track_bg "$REC"
VPID= LPID=
for i in $(seq 200); do
	VPID=$(awk '$1 == "pid" { print $2; exit }' "$TMPD/e.log" 2>/dev/null)
	[ -n "$VPID" ] && break
	sleep 0.05
done
LPID=$(pgrep -P "$REC" -x latsnap)
read -r BASE END < <(awk -v p="$VICTIM_BIN" '$6 == p {
	split($1, r, "-"); if (!b) b = r[1]; e = r[2] } END { print "0x" b, "0x" e }' \
	"/proc/${VPID:-0}/maps" 2>/dev/null)
SIZE=$(printf '0x%x' $((END - BASE)))
# ns_last_pid: the namespace's next pid is latsnap's; sh forks the forger with it.
HOME=/tmp setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urpf --mount-proc sh -c \
	"echo $((${LPID:-2} - 1)) >/proc/sys/kernel/ns_last_pid && '$FORGER_BIN' '$LIB' ${VPID:-1} $BASE $SIZE 3" \
	>"$TMPD/fe.out" 2>"$TMPD/fe.err" &
FORGER=$!
track_bg "$FORGER"
wait "$REC"
is "$?" 0 "e) record -t 50ms -- sleeper 600 3: exit 0"
wait "$FORGER"
is "$(awk '$1 == "registered" { print $2 }' "$TMPD/fe.out")" "${LPID:-?}" \
	"e) the forger in its pid namespace has latsnap's pid (${LPID:-?}) as its vpid"
ok '[ "$(awk '"'"'$1 == "emitted" { print $2 }'"'"' "$TMPD/fe.out")" -gt 0 ] 2>/dev/null' \
	"e) and recorded its events ($(awk '$1 == "emitted" { print $2 }' "$TMPD/fe.out"))"
[ -s "$TMPD/fe.err" ] && diag_file "$TMPD/fe.err" "  forger: "
forged=0 own=0
for d in "$OUT"/*/; do
	[ -d "$d/trace" ] || continue
	babeltrace2 "$d/trace" 2>/dev/null | grep ' latsnap:bin_info: ' >"$TMPD/e-bin.txt"
	forged=$((forged + $(grep -c "path = \"$FORGER_BIN\"" "$TMPD/e-bin.txt")))
	own=$((own + $(grep -c "pid = ${VPID:-0}, .*path = \"$VICTIM_BIN\"" "$TMPD/e-bin.txt")))
done
is "$forged" 0 "e) no snapshot holds the forger's latsnap:bin_info"
ok "[ $own -gt 0 ]" "e) latsnap's own latsnap:bin_info of the victim is there ($own)"

done_testing
