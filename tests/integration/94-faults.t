#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Faults on latsnap's side must never reach the traced program, nor what was saved before:
#  a) latsnap SIGKILLed in the middle of a burst: the target goes on, gets no further signal
#     (counted by the kernel's signal_generate tracepoint), exits 0; no BPF program or link of
#     latsnap's stays; every snapshot directory is complete (summary.json) or clearly not; the
#     next record starts cleanly;
#  b) lttng-sessiond killed while recording (latsnap's own, in a mount namespace with a private
#     /run/lttng and /dev/shm, so no one else's daemon is touched): latsnap says so once, goes
#     on detecting and printing, counts what it cannot persist as skipped; the target is
#     unharmed; a daemon latsnap did not start is left running;
#  c) the output directory removed while recording: clear errors, the target unharmed, every
#     outlier printed and in a summary or skipped (full: 95-snapshot.t g);
# c2) the output file system remounted read-only mid-run, then writable again: the same, the
#     snapshot written before intact, later ones written again;
#  d) an output directory another user owns (who could swap a new snapshot directory for a
#     symlink while LTTng writes by path) or that is world-writable: refused, nothing written;
#  e) an outlier storm (64 threads, each over the threshold hundreds of times a second, with
#     fork, exec and dlopen): no crash or deadlock of the target, latsnap's peak RSS stated,
#     outliers = in summaries + skipped (+ lost, as latsnap reports them). STORM_SECONDS sets
#     its length (make stress: 60);
#  f) files written for a user who ran latsnap through sudo (SUDO_UID/SUDO_GID) are theirs,
#     none group- or world-writable.
set -u
. "$(dirname "$0")/lib.sh"
# Its runs repeat wait sites and count on a snapshot for each: the flood guard, 46-flood.t's
# subject, is off in them (--no-flood-guard).

require_root
require jq bpftool unshare setpriv
require_latsnap
require_lttng
require_workloads stress sleeper
[ -f "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"

NOBODY=65534
SIG=60
LIB=$BUILD/liblatsnap.so
no_ust_wait
chmod 711 "$TMPD"

# totals ERR: "OUTLIERS SNAPSHOTS SKIPPED LOST" from the totals line, or "none".
totals() {
	sed -n -E 's/^latsnap: ([0-9]+) outliers, ([0-9]+) snapshots, ([0-9]+) skipped, ([0-9]+) lost.*/\1 \2 \3 \4/p' "$1" |
		tail -n 1 | grep . || echo none
}
# complete OUTDIR: snapshot directories with a summary.json.
complete() { find "$1" -mindepth 2 -maxdepth 2 -name summary.json -printf '%h\n' 2>/dev/null | sort; }
# in_summaries OUTDIR: outliers over all complete summaries.
in_summaries() {
	local d n=0
	for d in $(complete "$1"); do n=$((n + $(jq '.outliers | length' "$d/summary.json"))); done
	echo "$n"
}
# wait_for FILE RE [TENTHS]: until a line of FILE matches RE.
wait_for() {
	local i
	for i in $(seq "${3:-150}"); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
# progs_of PID: the BPF programs and links PID holds (from its fds' fdinfo: this bpftool knows no
# pids), written down while it lives.
progs_of() {
	grep -hE '^(prog_id|link_id):' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u
}
# still_there IDS: those of IDS ("prog_id: N" / "link_id: N") that the kernel still has.
still_there() {
	local kind id
	while read -r kind id; do
		case $kind in
		prog_id:) bpftool prog show id "$id" >/dev/null 2>&1 && echo "prog $id" ;;
		link_id:) bpftool link show id "$id" >/dev/null 2>&1 && echo "link $id" ;;
		esac
	done
}

# --- a) SIGKILL mid-burst ----------------------------------------------------------------------
T=$TMPD/a
mkdir -p "$T"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
INST=/sys/kernel/tracing/instances/latsnap94-$$
if mkdir "$INST" 2>/dev/null; then
	# The target, started by the test (its exit status is the test's to see), with the library.
	# It waits at a gate until latsnap tracks it, then execs stress (the same pid): its 10 s
	# start then, however long latsnap takes to start (check-asan in CI took so long that a
	# target started at once had run out before this case looked whether it ran on).
	WL_LOG=$T/log sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done; exec env LD_PRELOAD="$2" "$3" 10 16 2000' \
		gate "$T/go" "$LIB" "$WL/stress" &
	TPID=$!
	track_bg $TPID
	"$LATSNAP" record --no-flood-guard -v -t 1ms --post 20ms -o "$T/out" -p "$TPID" >"$T/out.txt" 2>"$T/err" &
	LPID=$!
	track_bg $LPID
	wait_for "$T/err" '^latsnap: record: tracking' 100
	touch "$T/go"
	wait_for "$T/log" '^pid ' 100
	# mid-burst: 16 threads over the threshold 500 times a second each, a snapshot likely under way
	sleep 2
	progs_of "$LPID" >"$T/progs.before"
	ls /proc/$TPID/task >"$T/tids"
	echo "sig == $SIG" >"$INST/events/signal/signal_generate/filter"
	echo 1 >"$INST/events/signal/signal_generate/enable"
	kill -9 "$LPID"
	wait "$LPID" 2>/dev/null
	KILLED_AT=$(date +%s%N)
	sleep 0.3
	# From now on: any signal $SIG to the target's threads.
	echo >"$INST/trace"
	sleep 2
	SIGS=$(grep -o 'pid=[0-9]*' "$INST/trace" | cut -d= -f2 | grep -cxFf "$T/tids")
	echo 0 >"$INST/events/signal/signal_generate/enable"
	still_there <"$T/progs.before" >"$T/progs.after"
	ALIVE=$(kill -0 "$TPID" 2>/dev/null && echo yes || echo no)
	wait "$TPID"
	TRC=$?
	rmdir "$INST"
	ok '[ -s "$T/progs.before" ]' "a) latsnap held BPF programs before the kill ($(wc -l <"$T/progs.before"))"
	is "$(cat "$T/progs.after")" "" "a) none of them, nor a link, is left once latsnap is SIGKILLed"
	is "$ALIVE" yes "a) the target runs on after latsnap died"
	is "$SIGS" 0 "a) the target gets no signal $SIG in the 2 s after the kill"
	is "$TRC" 0 "a) the target exits 0 (its checks of buffers, errno and naps passed)"
	is "$(wl_log_get "$T/log" hung)" "" "a) no thread of the target stuck"
	NDIR=$(find "$T/out" -mindepth 1 -maxdepth 1 -type d | wc -l)
	NCOMP=$(complete "$T/out" | wc -l)
	BAD=0
	for d in $(complete "$T/out"); do jq -e '.version == 1 and (.outliers | length > 0)' "$d/summary.json" >/dev/null || BAD=$((BAD + 1)); done
	diag "a) $NCOMP complete snapshot(s) of $NDIR directories"
	is "$BAD" 0 "a) every summary.json there is whole and valid"
	# A summary is written to a temporary and renamed: the SIGKILL may land in between (a burst
	# snapshots all the time), which leaves the temporary, never a torn summary.json (BAD above).
	TMPS=$(find "$T/out" -name '*.tmp' | wc -l)
	run_latsnap "$T/rep" "$T/rep.err" report "$T/out"
	is "$RC" 0 "a) report reads the tree the kill left ($TMPS temporaries in it)" ||
		diag_file "$T/rep.err" "  report: "
	diag "a) directories without summary.json (incomplete by the contract): $((NDIR - NCOMP))"
	WL_LOG=$T/log2 timeout -k 5 60 "$LATSNAP" record --no-flood-guard --json -t 50ms -o "$T/out" -- "$WL/sleeper" 100 >"$T/out2" 2>"$T/err2"
	is "$?" 0 "a) the next latsnap record into the same directory exits 0"
	is "$(jq -s '[.[] | select(.syscall // "" | test("nanosleep"))] | length' "$T/out2")" 1 "a) and reports the nap"
	is "$(complete "$T/out" | wc -l)" "$((NCOMP + 1))" "a) and writes one more complete snapshot"
	ok 'grep -q "^latsnap: snapshot " "$T/err2"' "a) the killed run's leftovers do not disturb it"
else
	fail "a) a tracefs instance for signal counting"
	skip_tests 12 "no tracefs instance"
fi

# --- b) lttng-sessiond killed --------------------------------------------------------------------
T=$TMPD/b
mkdir -p "$T"
cat >"$T/ns.sh" <<'EOF'
set -u
T=$1 LATSNAP=$2 WL=$3
mount -t tmpfs -o mode=0755 latsnap-94 /run/lttng || exit 91
mount -t tmpfs -o mode=1777 latsnap-94 /dev/shm || exit 92
# isolation: no daemon answers here, whatever runs outside
lttng list >/dev/null 2>&1 && echo reachable >"$T/iso" || echo isolated >"$T/iso"
# 1: latsnap's own daemon, killed after the first snapshot
WL_LOG=$T/log1 timeout -k 5 60 "$LATSNAP" record --no-flood-guard -v --json -t 50ms --post 20ms -o "$T/out1" \
	-- "$WL/sleeper" 100 25 150 >"$T/out1.json" 2>"$T/err1" &
L=$!
for _ in $(seq 150); do grep -q '^latsnap: snapshot ' "$T/err1" && break; sleep 0.1; done
SD=$(sed -n 's/.*started lttng-sessiond (pid \([0-9]*\)).*/\1/p' "$T/err1" | head -n 1)
echo "${SD:-none}" >"$T/sd1"
[ -n "$SD" ] && pgrep -P "$SD" >"$T/sd1.children"
[ -n "$SD" ] && kill -9 "$SD"
for c in $(cat "$T/sd1.children" 2>/dev/null); do kill -9 "$c" 2>/dev/null; done
wait "$L"
echo $? >"$T/rc1"
# 2: a daemon latsnap did not start is left alone
lttng-sessiond --daemonize --no-kernel --quiet 2>/dev/null
OWN=$(pgrep -o -x lttng-sessiond)
echo "${OWN:-none}" >"$T/sd2"
WL_LOG=$T/log2 timeout -k 5 60 "$LATSNAP" record --no-flood-guard -v -t 50ms -o "$T/out2" -- "$WL/sleeper" 100 >/dev/null 2>"$T/err2"
echo $? >"$T/rc2"
sleep 0.2
[ -n "$OWN" ] && kill -0 "$OWN" 2>/dev/null && echo alive >"$T/sd2.after" || echo gone >"$T/sd2.after"
for p in $(pgrep -x lttng-sessiond) $(pgrep -x lttng-consumerd); do
	# only daemons of this namespace: their /run/lttng is ours
	[ "$(readlink /proc/$p/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ] && kill -9 "$p"
done
exit 0
EOF
OUTSIDE=$(pgrep -x lttng-sessiond | sort | paste -sd' ')
unshare --mount --propagation private bash "$T/ns.sh" "$T" "$LATSNAP" "$WL"
NSRC=$?
is "$NSRC" 0 "b) a mount namespace with a private /run/lttng and /dev/shm"
is "$(cat "$T/iso" 2>/dev/null)" isolated "b) no session daemon reachable inside it (isolation verified)"
for p in $OUTSIDE; do
	kill -0 "$p" 2>/dev/null || { fail "b) the session daemon $p outside is still running"; OUTSIDE_DEAD=1; }
done
[ -z "${OUTSIDE_DEAD:-}" ] && pass "b) every session daemon outside ($OUTSIDE) is still running"
ok '[ "$(cat "$T/sd1")" != none ]' "b1) latsnap started its own lttng-sessiond ($(cat "$T/sd1")) and the test killed it"
is "$(cat "$T/rc1")" 0 "b1) latsnap exits 0 (the target's status)"
is "$(grep -c 'lttng-sessiond is gone' "$T/err1")" 1 "b1) latsnap says once that the session daemon is gone"
diag "  $(grep -m1 'lttng-sessiond is gone' "$T/err1")"
NAPS=$(grep -c '^nap ' "$T/log1")
is "$NAPS" 25 "b1) the target made all 25 naps"
NJ=$(jq -s '[.[] | select((.syscall // "" | test("nanosleep")) and .duration_ns >= 90000000)] | length' "$T/out1.json")
is "$NJ" 49 "b1) every nap and gap (25 + 24) is still detected and printed, after the daemon died too"
read -r TO TS TK TL <<<"$(totals "$T/err1")"
is "${TO:-none}" "$(jq -s length "$T/out1.json")" "b1) the totals count every outlier printed"
is "$(( $(in_summaries "$T/out1") + ${TK:-0} ))" "${TO:-none}" "b1) outliers = in summaries ($(in_summaries "$T/out1")) + skipped (${TK:-none})"
between "${TK:-0}" 1 1000 "b1) what could no longer be persisted is counted as skipped (${TK:-none})"
is "$(cat "$T/rc2")" 0 "b2) latsnap with a daemon it did not start: exit 0"
ok '! grep -q "started lttng-sessiond" "$T/err2"' "b2) it started no daemon of its own"
is "$(cat "$T/sd2.after")" alive "b2) the daemon it did not start is still running after it exited"

# bg_snapshots NAPS: `latsnap record --json -t 50ms --post 20ms -o $T/mnt/out` (O) of the sleeper's
# NAPS naps of 100 ms, 200 ms apart, in the background (L), its stdout, stderr and the sleeper's log
# in $T/out, $T/err and $T/log; returns once a snapshot is written, the first of which is FIRST.
bg_snapshots() {
	O=$T/mnt/out
	WL_LOG=$T/log timeout -k 5 60 "$LATSNAP" record --no-flood-guard --json -t 50ms --post 20ms -o "$O" \
		-- "$WL/sleeper" 100 "$1" 200 >"$T/out" 2>"$T/err" &
	L=$!
	wait_for "$T/err" '^latsnap: snapshot ' 100
	FIRST=$(complete "$O" | head -n 1)
}

# --- c) output directory removed mid-run ----------------------------------------
T=$TMPD/c
mkdir -p "$T/mnt"
if mount -t tmpfs -o size=64m,mode=0755 latsnap-94 "$T/mnt"; then
	# Naps enough to outlast a slow start on a loaded machine: some must come after the removal.
	bg_snapshots 40
	cp -a "$FIRST" "$T/first.copy" 2>/dev/null
	rm -rf "$O"
	wait_for "$T/err" "^latsnap: record: $O/[^ ]*: No such file" 50
	wait "$L"
	RC=$?
	is "$RC" 0 "c) latsnap exits 0 (the target's status)"
	is "$(grep -c '^nap ' "$T/log")" 40 "c) the target made all 40 naps"
	ok 'grep -q "^latsnap: record: $O/[^ ]*: No such file or directory" "$T/err"' "c) the removed directory: one clear line naming the snapshot path"
	read -r TO TS TK TL <<<"$(totals "$T/err")"
	is "${TO:-none}" "$(jq -s length "$T/out")" "c) every outlier printed and counted"
	between "${TK:-0}" 1 1000 "c) those no snapshot could hold are skipped (${TK:-none})"
	diag "c) $(grep -c '^latsnap: record:' "$T/err") error lines, e.g.: $(grep '^latsnap: record:' "$T/err" | sort -u | head -n 3 | paste -sd'|')"
	# (It compared the copy with itself before: a check that could not fail.)
	ok 'jq -e ".outliers | length > 0" "$T/first.copy/summary.json" >/dev/null && babeltrace2 "$T/first.copy/trace" >/dev/null 2>&1' \
		"c) the first snapshot was complete before the removal: its summary has outliers, its trace reads"
	umount "$T/mnt"
else
	skip_tests 6 "c) no tmpfs"
fi

# --- c2) output file system made read-only mid-run, then writable again -------------------------
T=$TMPD/c2
mkdir -p "$T/mnt"
if mount -t tmpfs -o size=64m,mode=0755 latsnap-94ro "$T/mnt"; then
	bg_snapshots 20
	(cd "$FIRST" 2>/dev/null && find . -type f -exec md5sum {} + | sort -k2) >"$T/first.before"
	# A remount to read-only fails (EBUSY) while a file on it is open for writing: the snapshot
	# being written at that instant. Retry until it lands between two snapshots.
	for _ in $(seq 50); do
		mount -o remount,ro "$T/mnt" 2>"$T/remount.err" && break
		sleep 0.1
	done
	RO=$(findmnt -no OPTIONS "$T/mnt" | tr , '\n' | grep -cx ro)
	wait_for "$T/err" "^latsnap: record: $O/[^ ]*: Read-only file system" 50
	mount -o remount,rw "$T/mnt"
	N_ERR=$(grep -c '^latsnap: record: ' "$T/err")
	wait "$L"
	RC=$?
	is "$RO" 1 "c2) the output file system was remounted read-only mid-run" ||
		diag_file "$T/remount.err" "  mount: "
	is "$RC" 0 "c2) latsnap exits 0 (the target's status)"
	is "$(grep -c '^nap ' "$T/log")" 20 "c2) the target made all 20 naps"
	ok 'grep -q "^latsnap: record: $O/[^ ]*: Read-only file system$" "$T/err"' \
		"c2) read-only: one clear line per snapshot naming its path and why" ||
		diag_file "$T/err" "  stderr: "
	read -r TO TS TK TL <<<"$(totals "$T/err")"
	NS=$(in_summaries "$O")
	is "$((NS + ${TK:-0}))" "${TO:-none}" "c2) outliers ${TO:-none} = in summaries $NS + skipped ${TK:-none}"
	between "${TK:-0}" 1 1000 "c2) what could not be written is counted as skipped (${TK:-none})"
	(cd "$FIRST" 2>/dev/null && find . -type f -exec md5sum {} + | sort -k2) >"$T/first.after"
	ok '[ -s "$T/first.before" ] && cmp -s "$T/first.before" "$T/first.after"' \
		"c2) the snapshot written before is intact (same files, same content)"
	LAST=$(complete "$O" | tail -n 1)
	ok '[ "$LAST" != "$FIRST" ] && [ "$(grep -c "^latsnap: record: " "$T/err")" = "$N_ERR" ]' \
		"c2) writable again: later snapshots are written ($(basename "${LAST:-none}")), with no new error"
	diag "c2) $N_ERR error lines; $(tail -n 1 "$T/err")"
	umount "$T/mnt"
else
	skip_tests 9 "c2) no tmpfs"
fi

# --- d) an output directory another user controls ---------------------------------------------
# The session daemon writes a snapshot by path: whoever may rename entries of -o could swap a new
# snapshot directory for a symlink. Such a directory is refused before anything is written.
T=$TMPD/d
mkdir -p "$T/victim"
chmod 755 "$T" "$T/victim"
O=$T/out
mkdir -m 0755 "$O" && chown $NOBODY:$NOBODY "$O"
WL_LOG=$T/log timeout -k 5 60 "$LATSNAP" record --no-flood-guard -t 50ms -o "$O" -- "$WL/sleeper" 100 >"$T/out.json" 2>"$T/err"
is "$?" 1 "d) -o a directory owned by uid $NOBODY: exit 1"
ok 'grep -q "^latsnap: record: $O: owned by another user" "$T/err"' "d) one clear line naming it and why" ||
	diag_file "$T/err" "  stderr: "
is "$(find "$O" "$T/victim" -mindepth 1 | wc -l)" 0 "d) nothing written there"
mkdir -m 0777 "$T/open"
WL_LOG=$T/log timeout -k 5 60 "$LATSNAP" record --no-flood-guard -t 50ms -o "$T/open" -- "$WL/sleeper" 100 >/dev/null 2>"$T/err2"
is "$?" 1 "d) -o a world-writable directory without the sticky bit: exit 1"
ok 'grep -q "writable by others" "$T/err2"' "d) and says why"

# --- e) outlier storm ----------------------------------------------------------------------------
T=$TMPD/e
mkdir -p "$T"
S=${STORM_SECONDS:-4}
# A hung target waits 30 s for gdb to take its threads' backtraces (shown on failure).
hang_watch "$T/log" "$T/hung-bt"
WL_HANG_HOLD=30 WL_LOG=$T/log "$LATSNAP" record --no-flood-guard --json -t 1ms --post 50ms -o "$T/out" \
	-- "$WL/stress" "$S" 64 2000 /bin/true >"$T/out.json" 2>"$T/err" &
L=$!
track_bg $L
# Peak RSS, and the peak of its private part: most of the RSS is the BPF rings and LTTng's
# buffers, mapped and shared, fixed in size; what latsnap allocates is the anonymous part.
PEAK=0
ANON=0
while kill -0 $L 2>/dev/null; do
	H=$(awk '/^VmHWM/ { print $2 }' /proc/$L/status 2>/dev/null)
	[ -n "$H" ] && PEAK=$H
	A=$(awk '/^Anonymous:/ { print $2 }' /proc/$L/smaps_rollup 2>/dev/null)
	[ -n "$A" ] && [ "$A" -gt "$ANON" ] && ANON=$A
	sleep 0.5
done
wait $L
RC=$?
is "$RC" 0 "e) storm of ${S}s, 64 threads at -t 1ms, fork+exec+dlopen: latsnap exits 0 with the target's status"
is "$(wl_log_get "$T/log" hung)" "" "e) no thread of the target stuck (no deadlock)" || {
	grep -E '^(hung|stuck) ' "$T/log" | head -n 20 | while read -r l; do diag "e) watchdog: $l"; done
	diag "e) the hung target's threads (gdb), same frames merged:"
	hang_summary "$T/hung-bt"
}
is "$(awk '$1 == "worker" && $3 == "ok"' "$T/log" | wc -l)" 64 "e) all 64 workers ok (buffers, errno, naps intact)"
for role in fork dlopen; do
	is "$(wl_log_get "$T/log" "$role")" ok "e) $role ok ($(wl_log_get "$T/log" "$role" 3) done)"
done
ok '[ "$(wl_log_get "$T/log" exec 3)" -gt 0 ] 2>/dev/null' "e) children exec'd ($(wl_log_get "$T/log" exec 3))"
read -r TO TS TK TL <<<"$(totals "$T/err")"
NS=$(in_summaries "$T/out")
NJ=$(jq -s length "$T/out.json")
is "${TO:-none}" "$NJ" "e) the totals count every outlier printed ($NJ)"
is "$((NS + ${TK:-0}))" "${TO:-none}" "e) outliers ${TO:-none} = in summaries $NS + skipped ${TK:-none} (lost before decoding: ${TL:-none})"
between "$((NJ / S))" 200 1000000 "e) a storm indeed: $((NJ / S)) outliers a second"
# Under make check-asan, ASan's shadow memory and quarantine come on top: 8 times the room.
MEM_X=1
[ -n "${ASAN_OPTIONS:-}" ] && MEM_X=8
between "$ANON" 1 $((131072 * MEM_X)) "e) latsnap's own memory stays bounded: ${ANON} KiB anonymous at most (limit asserted: $((128 * MEM_X)) MiB; peak RSS with the shared rings ${PEAK} KiB)"
between "$PEAK" 1 $((393216 * MEM_X)) "e) its peak RSS, the mapped rings and buffers included, too: ${PEAK} KiB (limit asserted: $((384 * MEM_X)) MiB)"
# What bounds it: a snapshot holds at most 1024 outliers, and one that filled says so.
is "$(cat "$T"/out/*/summary.json | jq -s '[.[] | .outliers | length] | max // 0 | . <= 1024')" true \
	"e) no snapshot holds more than 1024 outliers"
is "$(cat "$T"/out/*/summary.json | jq -s '[.[] | select((.outliers | length) == 1024) |
	any(.flags[]; startswith("batch-full: "))] | all')" true \
	"e) a snapshot that held 1024 says how many more were counted as skipped (batch-full)"
diag "e) $(grep -m1 -E '^latsnap: [0-9]+ outliers' "$T/err" | sed 's/^latsnap: //'); peak RSS ${PEAK} KiB, anonymous ${ANON} KiB"

# --- f) sudo: files belong to the user -----------------------------------------------------------
T=$TMPD/f
mkdir -p "$T"
chmod 755 "$T"
SUDO_UID=$NOBODY SUDO_GID=$NOBODY WL_LOG=$T/log timeout -k 5 60 "$LATSNAP" record --no-flood-guard -t 50ms --post 20ms \
	-o "$T/out" -- "$WL/sleeper" 100 >/dev/null 2>"$T/err"
is "$?" 0 "f) record as root with SUDO_UID=SUDO_GID=$NOBODY: exit 0"
ok '[ "$(complete "$T/out" | wc -l)" -ge 1 ]' "f) a snapshot was written"
is "$(find "$T/out" ! -uid $NOBODY | wc -l)/$(find "$T/out" ! -gid $NOBODY | wc -l)" 0/0 \
	"f) every file and directory under -o belongs to $NOBODY:$NOBODY ($(find "$T/out" | wc -l) entries)"
is "$(find "$T/out" -perm /022 | wc -l)" 0 "f) none is group- or world-writable"
# an existing directory the user named is not given away
mkdir -m 0755 "$T/existing"
SUDO_UID=$NOBODY SUDO_GID=$NOBODY WL_LOG=$T/log timeout -k 5 60 "$LATSNAP" record --no-flood-guard -t 50ms --post 20ms \
	-o "$T/existing" -- "$WL/sleeper" 100 >/dev/null 2>"$T/err2"
is "$(stat -c %u "$T/existing")" 0 "f) an -o directory that existed keeps its owner (root)"
is "$(find "$T/existing" -mindepth 1 ! -uid $NOBODY | wc -l)" 0 "f) what latsnap wrote in it belongs to $NOBODY"

done_testing
