#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# latsnap.service under a real systemd as PID 1 (issue 33, part 2). Runs only in the guest of
# `make check-systemd` (scripts/kernels/check-systemd.sh: VM_INIT=systemd, docs/check-kernels.md),
# whose root is an overlay on a tmpfs: it installs a package and changes /etc, which must never
# happen to the machine it was started from.
#  a) the package (make deb) installs with systemd running: the unit is loaded, Type=notify,
#     neither enabled nor started.
#  b) systemctl start returns once latsnap said READY=1: active/running, MainPID is
#     /usr/bin/latsnap, the status text is record's READY one (threshold 400ms); latsnap status
#     names that pid, running, threshold 400 ms.
#  c) threshold 400ms: a preloaded sleeper's 600 ms naps are outliers (journal lines, a snapshot in
#     /var/lib/latsnap whose summary.json names the sleeper's clock_nanosleep); its 250 ms naps are not.
#  d) threshold = 150ms in /etc/latsnap.conf, systemctl reload: the same MainPID, the journal's
#     "reloaded ... threshold 400ms -> 150ms", the status text and latsnap status say 150 ms;
#     now the 250 ms naps are outliers, in a new snapshot.
#  e) systemctl stop: inactive/dead, MainPID 0, Result=success, exit status 0; the journal has
#     the totals line (nothing skipped or lost) and every outlier is in a snapshot; latsnap
#     status says not running (exit 3).
set -u
. "$(dirname "$0")/../integration/lib.sh"

require_root
# Not on a machine of its own: only in make check-systemd's guest (its results share, systemd
# as PID 1).
if [ "${VM_RESULTS:-}" != /run/latsnap-vm ] || [ ! -d /run/latsnap-vm ]; then
	skip_all "not in make check-systemd's guest (it installs a package and edits /etc)"
fi
if [ "$(cat /proc/1/comm)" != systemd ] || [ ! -d /run/systemd/system ]; then
	skip_all "systemd is not PID 1 (make check-systemd boots it)"
fi
require jq systemctl journalctl dpkg timeout
require_workloads sleeper
DEB=${LATSNAP_DEB:-$(ls -t "$BUILD"/latsnap_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n 1)}
if [ -z "$DEB" ] || [ ! -f "$DEB" ]; then
	skip_all "no package in $BUILD (make deb)"
fi
no_ust_wait

plan 61

CONF=/etc/latsnap.conf
OUTDIR=/var/lib/latsnap
# Generous: under TCG a process starts ~100 times slower than on the host.
T_START=${T_START:-240}

prop() { systemctl show -p "$1" --value latsnap.service; }
state() { systemctl show -p ActiveState,SubState latsnap.service | tr '\n' ' ' | sed 's/ $//'; }
journal() { journalctl -u latsnap.service -o cat --no-pager; }
since_s() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# wait_until SECONDS CMD...: until CMD succeeds.
wait_until() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.5
	done
}
journal_has() { journal | grep -q -e "$1"; }
is_active() { [ "$(systemctl is-active latsnap.service)" = active ]; }

# nap_outliers PID MIN_NS: clock_nanosleep outliers of PID of at least MIN_NS in the complete
# snapshots of OUTDIR.
nap_outliers() {
	local s
	for s in "$OUTDIR"/*/summary.json; do
		[ -f "$s" ] || continue
		jq --argjson p "$1" --argjson m "$2" '[.outliers[] | select(.pid == $p and
			.syscall == "clock_nanosleep" and .duration_ns >= $m)] | length' "$s"
	done | awk '{ n += $1 } END { print n + 0 }'
}
# snapshot_of PID: the id of the first snapshot holding an outlier of PID.
snapshot_of() {
	local s
	for s in "$OUTDIR"/*/summary.json; do
		[ -f "$s" ] || continue
		if jq -e --argjson p "$1" 'any(.outliers[]; .pid == $p)' "$s" >/dev/null; then
			basename "$(dirname "$s")"
			return 0
		fi
	done
	return 1
}
has_snapshot_of() { snapshot_of "$1" >/dev/null; }
# nap MS N: a sleeper preloaded as latsnap.conf says a service opts in; its pid in NAP_PID.
nap() {
	LD_PRELOAD=$LIB WL_LOG=$TMPD/nap-$1.log "$WL/sleeper" "$1" "$2" 100 >/dev/null 2>&1 &
	NAP_PID=$!
	wait "$NAP_PID"
}

# ---- a) the package ----
# man-db's trigger (mandb over every manual page, for latsnap.1) took most of two minutes of
# dpkg -i under TCG; it has nothing to do with the service. Off in this guest only.
rm -f /var/lib/man-db/auto-update
t0=$(date +%s.%N)
dpkg -i "$DEB" >"$TMPD/dpkg.out" 2>&1
RC=$?
is "$RC" 0 "a: dpkg -i $(basename "$DEB") ($(since_s "$t0") s)"
[ "$RC" = 0 ] || { diag_file "$TMPD/dpkg.out"; bail_out "the package did not install"; }
LIB=$(dpkg -L latsnap | grep '/liblatsnap\.so$')
# From here on, the installed latsnap (status, show), as an operator runs it.
LATSNAP=/usr/bin/latsnap
ok '[ -r "$LIB" ]' "a: the package holds the preload library ($LIB)"
is "$(prop LoadState)" loaded "a: latsnap.service is loaded"
is "$(prop Type)" notify "a: Type=notify"
is "$(systemctl is-enabled latsnap.service)" disabled "a: not enabled by the install"
is "$(state)" "ActiveState=inactive SubState=dead" "a: not started by the install"
ok '[ -d "$OUTDIR" ] && [ "$(stat -c %a "$OUTDIR")" = 700 ]' "a: $OUTDIR made, mode 0700"

# ---- b) start, READY ----
sed -i 's/^threshold = .*/threshold = 400ms/' "$CONF"
is "$(grep -c '^threshold = 400ms$' "$CONF")" 1 "b: $CONF says threshold = 400ms"
t0=$(date +%s.%N)
timeout "$T_START" systemctl start latsnap.service
RC=$?
START_S=$(since_s "$t0")
is "$RC" 0 "b: systemctl start latsnap returns 0 ($START_S s)"
[ "$RC" = 0 ] || { journal >"$TMPD/j"; diag_file "$TMPD/j"; bail_out "latsnap.service did not start"; }
# Type=notify: systemctl start returned only once the unit left "activating", i.e. READY=1.
is "$(state)" "ActiveState=active SubState=running" "b: active, running"
is "$(systemctl is-active latsnap.service)" active "b: systemctl is-active: active"
MAINPID=$(prop MainPID)
is "$(readlink "/proc/$MAINPID/exe" 2>&1)" /usr/bin/latsnap "b: MainPID ($MAINPID) is /usr/bin/latsnap"
like "$(prop StatusText)" '^tracking .*threshold 400ms$' "b: the status text is record's READY=1 one"
is "$(prop NRestarts)" 0 "b: no restart"
# Where systemctl start's time went, for docs/check-kernels.md: each unit's start, from leaving
# inactive to active (READY=1 for latsnap), in seconds.
mono() { systemctl show -p "$2" --value "$1"; }
for u in lttng-sessiond.service latsnap.service; do
	diag "$u: $(awk -v a="$(mono "$u" InactiveExitTimestampMonotonic)" \
		-v b="$(mono "$u" ActiveEnterTimestampMonotonic)" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') s to active"
done
like "$(journal)" 'Started latsnap\.service' "b: the journal says it started"
wait_until 30 test -f "$OUTDIR/status.json"
run_latsnap "$TMPD/st1.out" "$TMPD/st1.err" status
is "$RC" 0 "b: latsnap status exits 0"
like "$(cat "$TMPD/st1.out")" "pid $MAINPID: running" "b: latsnap status names MainPID, running"
like "$(cat "$TMPD/st1.out")" "threshold 400\\.000 ms" "b: latsnap status: threshold 400 ms"

# ---- c) outliers at 400 ms ----
nap 600 2
P600=$NAP_PID
wait_until 120 has_snapshot_of "$P600"
ok $? "c: a snapshot holds the 600 ms naps' outliers"
SNAP1=$(snapshot_of "$P600")
S1=$OUTDIR/$SNAP1/summary.json
between "$(nap_outliers "$P600" 600000000)" 1 2 "c: the 600 ms naps are outliers ($(nap_outliers "$P600" 600000000) of 2)"
is "$(jq -r --argjson p "$P600" '[.outliers[] | select(.pid == $p)][0] |
	[.kind, .comm, .syscall, (.cause | test("sleep"; "i"))] | join(" ")' "$S1" 2>&1)" \
	"syscall sleeper clock_nanosleep true" "c: summary.json: the sleeper's clock_nanosleep, a sleep"
like "$(jq -r '.host' "$S1")" '^latsnap-vm-' "c: summary.json: the guest's host name"
ok '[ -n "$(ls -A "$OUTDIR/$SNAP1/trace" 2>/dev/null)" ] && [ -s "$OUTDIR/$SNAP1/summary.txt" ]' \
	"c: the snapshot has its trace and summary.txt"
wait_until 30 journal_has "latsnap: snapshot $OUTDIR/$SNAP1: "
ok $? "c: the journal names the snapshot"
like "$(journal)" "syscall clock_nanosleep  sleeper\\[pid $P600 tid $P600\\]  6[0-9][0-9]\\.[0-9]+ ms" \
	"c: the journal has the outlier's line"
nap 250 2
P250=$NAP_PID
# A later snapshot would have come by now: give one a few seconds.
sleep 3
is "$(nap_outliers "$P250" 0)" 0 "c: the 250 ms naps are no outliers at 400 ms"
journal | grep -q "syscall clock_nanosleep  sleeper\\[pid $P250 "
isnt $? 0 "c: nor in the journal"
wait_until 30 sh -c "$LATSNAP status | grep -q 'snapshots [1-9][0-9]* written'"
run_latsnap "$TMPD/st2.out" "$TMPD/st2.err" status
like "$(cat "$TMPD/st2.out")" "snapshots [1-9][0-9]* written" "c: latsnap status counts the snapshot"

# ---- d) reload with threshold 150ms ----
sed -i 's/^threshold = .*/threshold = 150ms/' "$CONF"
t0=$(date +%s.%N)
timeout 120 systemctl reload latsnap.service
RC=$?
is "$RC" 0 "d: systemctl reload latsnap returns 0 ($(since_s "$t0") s)"
wait_until 30 journal_has "reloaded $CONF"
ok $? "d: the journal has the reload"
like "$(journal | grep "reloaded $CONF")" \
	"^latsnap: record: reloaded $CONF: threshold 400ms -> 150ms" "d: it says the threshold changed"
wait_until 30 is_active
is "$(state)" "ActiveState=active SubState=running" "d: active, running after the reload"
is "$(prop MainPID)" "$MAINPID" "d: the same MainPID"
like "$(prop StatusText)" '^tracking .*threshold 150ms$' "d: the status text (READY=1 again) says 150ms"
like "$(journal)" 'Reloaded latsnap\.service' "d: systemd logged the reload"
# status.json is rewritten every 10 s and at each snapshot.
wait_until 30 sh -c "$LATSNAP status | grep -q 'threshold 150\\.000 ms'"
run_latsnap "$TMPD/st3.out" "$TMPD/st3.err" status
is "$RC" 0 "d: latsnap status exits 0"
like "$(cat "$TMPD/st3.out")" "pid $MAINPID: running" "d: latsnap status: the same pid, running"
like "$(cat "$TMPD/st3.out")" "threshold 150\\.000 ms" "d: latsnap status: threshold 150 ms"
nap 250 2
P250b=$NAP_PID
wait_until 120 has_snapshot_of "$P250b"
ok $? "d: a snapshot holds the 250 ms naps' outliers"
SNAP2=$(snapshot_of "$P250b")
between "$(nap_outliers "$P250b" 250000000)" 1 2 "d: the 250 ms naps are outliers now ($(nap_outliers "$P250b" 250000000) of 2)"
isnt "$SNAP2" "$SNAP1" "d: in a new snapshot ($SNAP2)"
like "$(journal)" "syscall clock_nanosleep  sleeper\\[pid $P250b tid $P250b\\]  2[5-9][0-9]\\.[0-9]+ ms" \
	"d: the journal has its line"

# ---- e) stop ----
t0=$(date +%s.%N)
timeout 120 systemctl stop latsnap.service
RC=$?
is "$RC" 0 "e: systemctl stop latsnap returns 0 ($(since_s "$t0") s)"
is "$(systemctl is-active latsnap.service)" inactive "e: systemctl is-active: inactive"
is "$(state)" "ActiveState=inactive SubState=dead" "e: inactive, dead"
is "$(prop MainPID)" 0 "e: MainPID 0"
is "$(prop Result)" success "e: Result=success"
is "$(prop ExecMainStatus)" 0 "e: latsnap exited 0"
ok '! kill -0 "$MAINPID" 2>/dev/null' "e: the process is gone"
journal >"$TMPD/journal"
TOT=$(sed -n 's/^latsnap: \([0-9]*\) outliers, \([0-9]*\) snapshots, \([0-9]*\) skipped, \([0-9]*\) lost.*/\1 \2 \3 \4/p' \
	"$TMPD/journal" | tail -n 1)
ok '[ -n "$TOT" ]' "e: the journal has the totals line ($TOT)"
# The packaged config keeps the flood guard on: the sleeper's repeated naps (one wait site) are
# held back, counted in skipped and said apart ("held back N"); nothing else is skipped.
HELD=$(sed -n 's/^latsnap: [0-9]* outliers, .*), held back \([0-9]*\) (.*/\1/p' "$TMPD/journal" | tail -n 1)
is "$(echo "$TOT" | cut -d' ' -f3-)" "${HELD:-x} 0" "e: nothing lost; skipped only what the flood guard held back (${HELD:-?})"
in_summaries=$(for s in "$OUTDIR"/*/summary.json; do jq '.outliers | length' "$s"; done |
	awk '{ n += $1 } END { print n + 0 }')
is "$((in_summaries + ${HELD:-0}))" "$(echo "$TOT" | cut -d' ' -f1)" \
	"e: every outlier is in a snapshot ($in_summaries) or held back (${HELD:-?})"
ok '[ "$(echo "$TOT" | cut -d" " -f2)" -ge 2 ]' "e: at least the two snapshots"
# Every snapshot is written now: the 250 ms naps of c) are still in none of them.
is "$(nap_outliers "$P250" 0)" 0 "e: the 250 ms naps before the reload never became outliers"
like "$(cat "$TMPD/journal")" 'latsnap\.service: Deactivated successfully' "e: systemd: deactivated successfully"
like "$(cat "$TMPD/journal")" 'Stopped latsnap\.service' "e: systemd: stopped"
run_latsnap "$TMPD/st4.out" "$TMPD/st4.err" status
is "$RC" 3 "e: latsnap status exits 3 once stopped"
like "$(cat "$TMPD/st4.out")" "pid $MAINPID: not running" "e: and says not running"
run_latsnap "$TMPD/show.out" "$TMPD/show.err" show --json "$OUTDIR/$SNAP2"
is "$RC" 0 "e: latsnap show reads the second snapshot"
is "$(jq -r --argjson p "$P250b" '[.outliers[] | select(.pid == $p)] | length > 0' "$TMPD/show.out" 2>&1)" true \
	"e: and finds the 250 ms naps' outliers in it"

check_summaries "$OUTDIR"

if [ "$_tap_failed" != 0 ] || [ "${KEEP_TMP:-0}" = 1 ]; then
	journal >"$TMPD/journal"
	diag "journalctl -u latsnap:"
	diag_file "$TMPD/journal"
fi
diag "systemctl start took $START_S s"
done_testing
