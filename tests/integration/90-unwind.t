#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The preload library's unwinder, end to end: a slow syscall of a registered process gets
# latsnap's signal, the handler unwinds and reports the stack through the kernel, and the
# outlier's JSON carries it (user_stack.source "unwind"), even with --no-snapshot. It walks code
# without frame pointers (unwind-nofp) up to main(), where the kernel's frame-pointer walk (what
# the JSON holds without the library) cannot; LATSNAP_DEPTH caps the walk; fork children are
# signalled (the BPF side carries the registration over), exec'd images only when they load the
# library (one that does not must not be signalled, its default action would kill it); processes
# preloaded before latsnap started are found and signalled; --signal picks another signal and a
# bad one is a usage error; with snapshots, latsnap itself records the stack and the mappings in
# its own trace (latsnap:user_stack, latsnap:bin_info), and the target emits nothing to LTTng.
# Frames are checked by address, against the runtime addresses the workload logs (not only by
# the symbols latsnap gives them), so a symbolizer's mistake cannot pass for an unwinder's walk.
# A latsnap run alongside that tracks every registered process (no target, or -a) signals these
# workloads too, and one of the two then finds the signal pending (signal-blocked): failures of
# the "signalled" checks name any such run.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq perl nm
require_latsnap
require_lttng
require_workloads unwind-nofp forkexec sleeper
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"

NOFP=$WL/unwind-nofp
FORKEXEC=$WL/forkexec
# The unwound chain of unwind-nofp at DEPTH 0, innermost first: libc's nanosleep and
# clock_nanosleep (1-2 frames), the workload's five functions, then libc's start-up and _start.
CHAIN_RE='^(\? ){1,2}inner_fn descend middle_fn outer_fn main( \?)*$'
UNWIND_NS=

# run N OUT ERR ARGS...: record_json OUT ERR ARGS..., noting the other latsnap runs (see others).
run() {
	local out=$1 err=$2
	shift 2
	OTHERS=$(pgrep -a -x latsnap)
	record_json "$out" "$err" "$@"
}

# others: diag the latsnap processes that ran when the last record began (not this file's).
OTHERS=
others() {
	[ -n "$OTHERS" ] && diag "other latsnap runs when this one started (they may signal it too):" "$OTHERS"
	return 0
}

# nap_sel PID [MORE]: the jq filter of PID's nanosleep/clock_nanosleep outliers (and MORE).
nap_sel() {
	# Naps that ended: a run's end cuts the last one short (reported unfinished, not signalled).
	printf 'select(.pid == %s and .kind == "syscall" and %s and %s %s)' "${1:-0}" \
		'(.syscall // "" | test("^(clock_)?nanosleep$"))' "$ENDED" "${2:-}"
}

# show_stack OUT SEL BIN LOG: the selected outliers' user stacks, frames named both ways, as diag.
show_stack() {
	local out=$1 sel=$2 i n
	n=$(jcount "$out" "$sel")
	diag "user_stack of the $n selected outliers (source status truncated unwind_ns; flags):"
	for ((i = 0; i < n && i < 5; i++)); do
		diag "  $(jq -s -c "[.[] | $sel][$i] | [.user_stack.source, .user_stack.status, .user_stack.truncated, .user_stack.unwind_ns, .flags]" "$out")" \
			"    by address: $(stack_names "$3" "$4" "$out" "$sel" $i)" \
			"    by symbol:  $(stack_symbols "$out" "$sel" $i)"
	done
	[ "$n" = 0 ] && dump_outliers "$out"
	others
}

# unwound_check TAG OUT SEL BIN LOG: the first outlier SEL selects carries an unwound stack (not
# the frame-pointer walk's), complete: status 0, not truncated, no flag saying otherwise.
unwound_check() {
	local tag=$1 out=$2 sel=$3
	is "$(jfirst "$out" "$sel" .user_stack.source)" '"unwind"' \
		"$tag) its JSON user_stack is the unwound one (source unwind)" || show_stack "${@:2}"
	is "$(jfirst "$out" "$sel" '[.user_stack.status, .user_stack.truncated] | map(tostring) | join("/")')" '"0/null"' \
		"$tag) status 0 (walked to the end), not truncated"
	is "$(jfirst "$out" "$sel" '[.flags[] | select(test("^(user-stack-partial|no-unwound-stack|user-stack-truncated):"))] | length')" 0 \
		"$tag) no user-stack-partial, no-unwound-stack or user-stack-truncated flag" ||
		diag "flags: $(jfirst "$out" "$sel" .flags)"
}

# signalled_is OUT SEL WANT MSG: the first outlier SEL selects says signalled: WANT (true, false).
signalled_is() {
	is "$(jfirst "$1" "$2" .signalled)" "$3" "$4" ||
		{ diag "flags: $(jfirst "$1" "$2" .flags)"; others; }
}

# one_signalled TAG OUT SEL BIN LOG WHO WHOSE: one outlier SEL selects ("one nanosleep outlier for
# WHO"), which says signalled: true ("WHOSE says signalled: true"), its unwound stack complete
# (unwound_check).
one_signalled() {
	local tag=$1 out=$2 sel=$3
	is "$(jcount "$out" "$sel")" 1 "$tag) one nanosleep outlier for $6" || dump_outliers "$out"
	signalled_is "$out" "$sel" true "$tag) $7 says signalled: true"
	unwound_check "$tag" "$out" "$sel" "$4" "$5"
}

# --- a) the unwinder walks what frame pointers cannot -------------------------
OUT=$TMPD/a.out ERR=$TMPD/a.err LOG=$TMPD/a.log
WL_LOG=$LOG run "$OUT" "$ERR" -- -t 20ms -- "$NOFP" 60 1
is "$RC" 0 "a) record --no-snapshot -t 20ms -- unwind-nofp 60 1: exit 0"
ok 'ndjson_ok "$OUT"' "a) stdout is NDJSON" || diag_file "$OUT" "  stdout: "
PID=$(wl_log_get "$LOG" pid)
NAP_TID=$(wl_log_get "$LOG" nap)
ok '[ -n "$PID" ]' "a) unwind-nofp ran (pid $PID)"
SEL=$(nap_sel "$PID")
is "$(jcount "$OUT" "$SEL")" 1 "a) one nanosleep/clock_nanosleep outlier for its pid" || dump_outliers "$OUT"
TID=$(jfirst "$OUT" "$SEL" .tid)
is "$TID" "${NAP_TID:-none}" "a) the outlier's tid is the napping thread's"
signalled_is "$OUT" "$SEL" true "a) the outlier says signalled: true"
is "$(jfirst "$OUT" "$SEL" '[.flags[] | select(startswith("signal-"))] | length')" 0 \
	"a) no signal-displaced/blocked/busy flag" || { diag "flags: $(jfirst "$OUT" "$SEL" .flags)"; others; }
unwound_check a "$OUT" "$SEL" "$NOFP" "$LOG"
NAMES=$(stack_names "$NOFP" "$LOG" "$OUT" "$SEL")
like "$NAMES" "$CHAIN_RE" \
	"a) its frames' addresses fall in libc, inner_fn, descend, middle_fn, outer_fn, main, in this order" ||
	show_stack "$OUT" "$SEL" "$NOFP" "$LOG"
# The symbols latsnap gave the workload's frames are the functions their addresses fall in.
SYMS=$(stack_symbols "$OUT" "$SEL")
read -ra N_ARR <<<"$NAMES"
read -ra S_ARR <<<"$SYMS"
MISNAMED=
for i in "${!N_ARR[@]}"; do
	[ "${N_ARR[$i]}" != "?" ] && [ "${N_ARR[$i]}" != "${S_ARR[$i]:-}" ] && MISNAMED="$MISNAMED $i:${S_ARR[$i]:-none}/${N_ARR[$i]}"
done
ok '[ ${#N_ARR[@]} -gt 0 ] && [ ${#N_ARR[@]} = ${#S_ARR[@]} ] && [ -z "$MISNAMED" ]' \
	"a) latsnap's symbols for the workload's frames are those functions" ||
	diag "by address: $NAMES" "by symbol:  $SYMS" "mismatches (index:symbol/function):${MISNAMED:- none}" \
		"frames: $(jfirst "$OUT" "$SEL" '[.user_stack.frames[] | "\(.symbol)@\(.module)"] | join(" ")')" \
		"flags: $(jfirst "$OUT" "$SEL" .flags)"
UNS=$(jfirst "$OUT" "$SEL" .user_stack.unwind_ns)
# It arrived, so the walk took less than the 200 ms latsnap holds an outlier for its stack.
between "$UNS" 1 200000000 "a) user_stack.unwind_ns is the walk's time: 1 ns .. 200 ms ($UNS)"
diag "unwound: $NAMES ($SYMS)"
UNWIND_NS="depth $(wc -w <<<"$NAMES"): $UNS ns"

# The control: without the library the JSON's user stack is the kernel's frame-pointer walk, and
# it cannot get past the workload's functions, which keep no frame pointers. Only the unwinder
# sees middle_fn and outer_fn, so the chain above is the unwinder's work.
OUT=$TMPD/a0.out LOG=$TMPD/a0.log
WL_LOG=$LOG run "$OUT" "$TMPD/a0.err" -- -t 20ms --no-preload -- "$NOFP" 60 1
SEL=$(nap_sel "$(wl_log_get "$LOG" pid)")
is "$RC/$(jfirst "$OUT" "$SEL" '[.signalled, .user_stack.source] | map(tostring) | join("/")')" '0/"false/frame-pointer"' \
	"a) control, --no-preload: exit 0, not signalled, the user_stack is the frame-pointer walk" ||
	dump_outliers "$OUT"
FP_NAMES=$(stack_names "$NOFP" "$LOG" "$OUT" "$SEL")
ok '! [[ " $FP_NAMES " =~ " "(middle_fn|outer_fn)" " ]]' \
	"a) control: the frame-pointer stack holds neither middle_fn nor outer_fn" ||
	diag "frame-pointer frames: $FP_NAMES"
diag "frame-pointer walk: $(stack_symbols "$OUT" "$SEL") = ${FP_NAMES:-(no frames)}"

# --- b) a stack deeper than the limit: innermost frames kept, truncated -------
# DEPTH 100 is 100 more descend frames: about 110 in all, beyond the default 64.
deep_check() {
	local tag=$1 want=$2 out=$TMPD/$1.out log=$TMPD/$1.log pid sel names
	pid=$(wl_log_get "$log" pid)
	sel=$(nap_sel "$pid" 'and .signalled == true')
	is "$RC" 0 "$tag) exit 0"
	is "$(jcount "$out" "$sel")" 1 "$tag) one signalled nanosleep outlier for the deep workload's pid" ||
		{ dump_outliers "$out"; others; }
	is "$(jfirst "$out" "$sel" '[.user_stack.source, .user_stack.status, .user_stack.truncated, (.user_stack.frames | length)] | map(tostring) | join("/")')" \
		"\"unwind/0/true/$want\"" "$tag) its user_stack: source unwind, status 0, truncated true, $want frames" ||
		show_stack "$out" "$sel" "$NOFP" "$log"
	is "$(jfirst "$out" "$sel" "[.flags[] | select(startswith(\"user-stack-truncated:\") and test(\" $want frames\"))] | length")" 1 \
		"$tag) flag user-stack-truncated, at $want frames" || diag "flags: $(jfirst "$out" "$sel" .flags)"
	# What the limit cuts is the outer end: the innermost frames are all there.
	names=$(stack_names "$NOFP" "$log" "$out" "$sel")
	like "$names" '^(\? ){1,2}inner_fn( descend)+$' \
		"$tag) the kept frames are the innermost: libc, inner_fn, then descend only" ||
		show_stack "$out" "$sel" "$NOFP" "$log"
	UNWIND_NS="$UNWIND_NS; depth $want: $(jfirst "$out" "$sel" .user_stack.unwind_ns) ns"
}
WL_LOG=$TMPD/b.log run "$TMPD/b.out" "$TMPD/b.err" -- -t 20ms -- "$NOFP" 60 1 100
deep_check b 64
# LATSNAP_DEPTH in latsnap's environment reaches COMMAND's library.
LATSNAP_DEPTH=10 WL_LOG=$TMPD/b10.log run "$TMPD/b10.out" "$TMPD/b10.err" -- -t 20ms -- "$NOFP" 60 1 100
deep_check b10 10

# --- c) a fork child is signalled and unwound -----------------------------------
# It inherits its parent's registration (the BPF side, at fork): no wrapper, no new prctl.
OUT=$TMPD/c.out LOG=$TMPD/c.log
WL_LOG=$LOG run "$OUT" "$TMPD/c.err" -- -t 50ms -- "$FORKEXEC" fork 100
is "$RC" 0 "c) record -- forkexec fork 100: exit 0"
CHILD=$(wl_log_get "$LOG" child)
ok '[ -n "$CHILD" ]' "c) forkexec forked a child ($CHILD)"
is "$(wl_log_get "$LOG" child_status)" 0 "c) the child exited 0 (wait status 0)"
SEL=$(nap_sel "$CHILD")
one_signalled c "$OUT" "$SEL" "$FORKEXEC" "$LOG" "the child's pid" "the child's outlier"
like "$(stack_names "$FORKEXEC" "$LOG" "$OUT" "$SEL")" '^(\? ){1,2}child_nap ' \
	"c) its innermost workload frame is child_nap (after libc)" || show_stack "$OUT" "$SEL" "$FORKEXEC" "$LOG"

# --- d) exec of a preloaded image: it registers again --------------------------
OUT=$TMPD/d.out ERR=$TMPD/d.err LOG=$TMPD/d.log
WL_LOG=$LOG run "$OUT" "$ERR" -- -v -t 50ms -- "$FORKEXEC" exec-keep 100 "$WL/sleeper"
is "$RC" 0 "d) record -- forkexec exec-keep 100 sleeper: exit 0"
CHILD=$(wl_log_get "$LOG" child)
ok '[ -n "$CHILD" ]' "d) forkexec forked a child ($CHILD)"
is "$(wl_log_get "$LOG" child_status)" 0 "d) the exec'd sleeper exited 0 (wait status 0)"
ok 'grep -q "pid ${CHILD:-x} (sleeper) registered through the preload library" "$ERR"' \
	"d) -v: the new image (sleeper) registered" || diag_file "$ERR" "  stderr: "
SEL=$(nap_sel "$CHILD" 'and .comm == "sleeper"')
one_signalled d "$OUT" "$SEL" "$WL/sleeper" "$LOG" "the exec'd sleeper" "the sleeper's outlier"
# The sleeper logs no addresses: its symbols, from the new image's mappings, say where it was.
like "$(stack_symbols "$OUT" "$SEL")" '(^| )slow_nap( .*)? main( |$)' \
	"d) its frames are named in the new image: slow_nap, then main" || show_stack "$OUT" "$SEL" "$WL/sleeper" "$LOG"

# --- e) exec of an image without the library: never signalled ------------------
# The registration must go with the old image: the default action of signal 60 kills.
for mode in exec-drop self-exec-drop; do
	OUT=$TMPD/$mode.out LOG=$TMPD/$mode.log
	WL_LOG=$LOG run "$OUT" "$TMPD/$mode.err" -- -v -t 50ms -- "$FORKEXEC" "$mode" 100 "$WL/sleeper"
	is "$RC" 0 "e) record -- forkexec $mode 100 sleeper: exit 0 (the sleeper was not killed)"
	if [ "$mode" = exec-drop ]; then
		SPID=$(wl_log_get "$LOG" child)
		is "$(wl_log_get "$LOG" child_status)" 0 "e) $mode: the sleeper exited 0 (wait status 0, no signal)"
	else
		SPID=$(wl_log_get "$LOG" pid)
	fi
	# The sleeper logs its own pid line: the exec happened in the process we think.
	is "$(awk '$1 == "pid" { print $2 }' "$LOG" | tail -n 1)" "${SPID:-none}" \
		"e) $mode: the sleeper ran as pid $SPID"
	ok 'grep -q "^nap " "$LOG"' "e) $mode: the sleeper finished its nap"
	SEL=$(nap_sel "$SPID" 'and .comm == "sleeper"')
	is "$(jcount "$OUT" "$SEL")" 1 "e) $mode: one nanosleep outlier for the sleeper" || dump_outliers "$OUT"
	signalled_is "$OUT" "$SEL" false "e) $mode: the sleeper's outlier says signalled: false"
	# Nothing came back from a handler it does not have, and latsnap waited for nothing.
	is "$(jfirst "$OUT" "$SEL" '[(.user_stack.source == "unwind"), (.flags | any(startswith("no-unwound-stack")))] | map(tostring) | join("/")')" \
		'"false/false"' "e) $mode: no unwound stack for it, and no no-unwound-stack flag" ||
		show_stack "$OUT" "$SEL" "$WL/sleeper" "$LOG"
done

# --- f) a process preloaded before latsnap started -------------------------------
# preexisting TAG [-p]: unwind-nofp 100 80 (8 s of 100 ms naps) started with the library in
# LD_PRELOAD, then `latsnap record [-p PID] -v -t 50ms -d 1500ms`.
preexisting() {
	local tag=$1 log=$TMPD/$1.log out=$TMPD/$1.out err=$TMPD/$1.err pid n sig unw i names bad=0 sel
	shift
	LD_PRELOAD=$BUILD/liblatsnap.so WL_LOG=$log "$NOFP" 100 80 </dev/null >/dev/null \
		2>"$TMPD/$tag.wl.err" &
	pid=$!
	track_bg $pid
	# Its library registers in the constructor; latsnap has to find it in /proc.
	sleep 0.3
	[ "${1:-}" = -p ] && set -- -p "$pid"
	run "$out" "$err" -- "$@" -v -t 50ms -d 1500ms
	kill -0 $pid 2>/dev/null
	ok $? "$tag) the workload still ran when latsnap stopped (pid $pid)"
	kill -TERM $pid 2>/dev/null
	wait $pid 2>/dev/null
	is "$RC" 0 "$tag) record${1:+ $*} -v -t 50ms -d 1500ms: exit 0"
	ok 'grep -q "pid $pid registered before latsnap started, signal 60" "$err"' \
		"$tag) -v says: pid $pid registered before latsnap started, signal 60" ||
		diag_file "$err" "  stderr: "
	sel=$(nap_sel $pid)
	n=$(jcount "$out" "$sel")
	between "$n" 5 16 "$tag) 5-16 nanosleep outliers for its pid in 1.5 s of 100 ms naps" || dump_outliers "$out"
	sig=$(jcount "$out" "$(nap_sel $pid 'and .signalled == true')")
	is "$sig" "$n" "$tag) every one says signalled: true" || { dump_outliers "$out"; others; }
	unw=$(jcount "$out" "$(nap_sel $pid 'and .user_stack.source == "unwind"')")
	is "$unw" "$n" "$tag) every one carries an unwound stack (user_stack.source unwind)" || show_stack "$out" "$sel" "$NOFP" "$log"
	for ((i = 0; i < n; i++)); do
		names=$(stack_names "$NOFP" "$log" "$out" "$sel" $i)
		[[ $names =~ $CHAIN_RE ]] &&
			[ "$(jq -s -c "[.[] | $sel][$i] | [.user_stack.status, .user_stack.truncated]" "$out")" = '[0,null]' ] ||
			bad=$((bad + 1))
	done
	ok '[ "$n" -gt 0 ] && [ "$bad" = 0 ]' \
		"$tag) every stack is complete (status 0, not truncated) and maps to inner_fn .. main ($bad of $n not)" ||
		show_stack "$out" "$sel" "$NOFP" "$log"
	[ "$tag" = f ] &&
		diag "unwind_ns of the stacks, depth 10: $(jq -r "$sel | .user_stack.unwind_ns" "$out" | paste -sd' ')"
}
# No target: latsnap tracks whatever registered, found by scanning /proc.
preexisting f
# -p PID: the same process, named.
preexisting fp -p

# --- g) another signal ----------------------------------------------------------
# Were the signal still 60, a process with a handler only for 39 would die of it (exit 188).
OUT=$TMPD/g.out ERR=$TMPD/g.err LOG=$TMPD/g.log
WL_LOG=$LOG run "$OUT" "$ERR" -- --signal RTMIN+5 -v -t 20ms -- "$NOFP" 60 1
is "$RC" 0 "g) record --signal RTMIN+5 -- unwind-nofp 60 1: exit 0"
PID=$(wl_log_get "$LOG" pid)
ok 'grep -q "pid ${PID:-x} (unwind-nofp) registered through the preload library, signal 39$" "$ERR"' \
	"g) -v: pid $PID registered through the preload library, signal 39 (SIGRTMIN+5)" ||
	diag_file "$ERR" "  stderr: "
SEL=$(nap_sel "$PID")
one_signalled g "$OUT" "$SEL" "$NOFP" "$LOG" "its pid" "it"
like "$(stack_names "$NOFP" "$LOG" "$OUT" "$SEL")" "$CHAIN_RE" \
	"g) its frames map to inner_fn .. main" || show_stack "$OUT" "$SEL" "$NOFP" "$LOG"

# --- h) a signal latsnap must not take is a usage error -------------------------------
for bad in KILL 9 nope RTMIN+99 SEGV; do
	run_latsnap "$TMPD/h.out" "$TMPD/h.err" record --no-snapshot --json --signal "$bad" -- true
	is "$RC" 2 "h) --signal $bad: exit status 2" || diag_file "$TMPD/h.err" "  stderr: "
	if [ "$(grep -c '' "$TMPD/h.err")" = 1 ] && [[ $(head -n 1 "$TMPD/h.err") == "latsnap: "* ]]; then
		pass "h) --signal $bad: one stderr line starting 'latsnap: '"
		diag "  $(cat "$TMPD/h.err")"
	else
		fail "h) --signal $bad: one stderr line starting 'latsnap: '"
		diag_file "$TMPD/h.err" "  stderr: "
	fi
done

# --- i) the snapshot's trace: latsnap records the stack, the target emits nothing ---------
# With snapshots, latsnap writes the stack it got into its own session (latsnap:user_stack) and
# the target's mappings (latsnap:bin_info), so the trace alone can be symbolized. The target
# runs no lttng-ust: a private session with the emitter's pid as context, alongside, sees
# latsnap's copy, never an event from the target itself.
T=$TMPD/i LOG=$TMPD/i.log PRIV="latsnap-90-$$-i"
mkdir -p "$T"
_lttng_sessions="$_lttng_sessions $PRIV"
lttng create "$PRIV" --output="$T/priv" >/dev/null &&
	lttng enable-event -u -s "$PRIV" 'latsnap:*' >/dev/null &&
	lttng add-context -u -s "$PRIV" -t vpid -t procname >/dev/null &&
	lttng start "$PRIV" >/dev/null
ok $? "i) a private LTTng session for latsnap:* events, with vpid and procname, started"
OTHERS=$(pgrep -a -x latsnap)
t0=$(date +%s%N)
WL_LOG=$LOG timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -o "$T/out" -t 20ms -- "$NOFP" 60 1 \
	>"$T/stdout" 2>"$T/err"
RC=$?
lttng_trace_stop "$PRIV"
is "$RC" 0 "i) record -o DIR -t 20ms -- unwind-nofp 60 1: exit 0" || diag_file "$T/err" "  stderr: "
PID=$(wl_log_get "$LOG" pid)
mapfile -t SNAPS < <(find "$T/out" -mindepth 2 -maxdepth 2 -name summary.json 2>/dev/null)
is "${#SNAPS[@]}" 1 "i) one snapshot" || diag_file "$T/err" "  stderr: "
SUM=${SNAPS[0]:-$T/none}
SNAPDIR=$(dirname "$SUM")
jq -c '.outliers[]' "$SUM" >"$T/outliers" 2>/dev/null
SEL=$(nap_sel "${PID:-0}")
is "$(jcount "$T/outliers" "$SEL | select(.signalled and .user_stack.source == \"unwind\")")" 1 \
	"i) summary.json: the nap's outlier, signalled, with its unwound stack" || dump_outliers "$T/outliers"
user_stacks "$SNAPDIR/trace" >"$T/stacks"
is "$(awk -v t="${PID:-x}" '$1 == t' "$T/stacks" | wc -l)" 1 \
	"i) the trace holds one latsnap:user_stack event for the napping thread" || diag_file "$T/stacks" "  user_stack: " 10
EV=$(awk -v t="${PID:-x}" '$1 == t' "$T/stacks" | head -n 1)
# shellcheck disable=SC2086 # split the event into its fields
set -- $EV
WANT_IPS=$(jfirst "$T/outliers" "$SEL" '[.user_stack.frames[].addr] | join(" ")' | tr -d '"')
is "${2:-}/${3:-}/${4:-}" "$(wc -w <<<"$WANT_IPS")/0/0" "i) the event: depth = the summary's frame count, truncated 0, status 0"
shift 5 2>/dev/null
is "$*" "$WANT_IPS" "i) its IPs are the summary's frames, in order" || diag "summary: $WANT_IPS"
like "$( (($#)) && ips_to_functions "$NOFP" "$LOG" "$@" | paste -sd' ')" "$CHAIN_RE" "i) they map to inner_fn .. main"
# Who wrote it: latsnap's process (the context fields), not the target.
EMITTER=$(babeltrace2 "$SNAPDIR/trace" 2>/dev/null |
	grep -E "latsnap:user_stack: .*\{ tid = ${PID:-x}, " | grep -oE 'vpid = [0-9]+, vtid = [0-9]+, procname = "[^"]*"' | head -n 1)
like "$EMITTER" "procname = \"latsnap\"" "i) the event was emitted by latsnap ($EMITTER)"
ok '[ -n "$EMITTER" ] && ! [[ $EMITTER =~ vpid\ =\ ${PID:-x}, ]]' "i) not by the target (pid $PID)"
# The target's own executable, mapped where its main is: enough to symbolize from the trace alone.
MAIN=$(awk '$1 == "fn" && $2 == "main" { print $3 }' "$LOG")
BININFO=$(babeltrace2 "$SNAPDIR/trace" 2>/dev/null | grep 'latsnap:bin_info:' |
	grep -E "\{ pid = ${PID:-x}, .*path = \"$NOFP\"" | head -n 1)
ok '[ -n "$BININFO" ] && [[ $BININFO =~ baddr\ =\ (0x[0-9A-Fa-f]+),\ memsz\ =\ ([0-9]+) ]] &&
	(( MAIN >= BASH_REMATCH[1] && MAIN < BASH_REMATCH[1] + BASH_REMATCH[2] ))' \
	"i) a latsnap:bin_info event maps $NOFP in pid $PID over its main ($MAIN)" ||
	{ diag "bin_info of pid $PID: $(babeltrace2 "$SNAPDIR/trace" 2>/dev/null | grep -c "latsnap:bin_info: .*{ pid = ${PID:-x}, ") events; $BININFO"; dump_outliers "$T/outliers"; }
babeltrace2 "$T/priv" 2>/dev/null >"$T/priv.txt"
is "$(grep -c -E "vpid = ${PID:-x}, " "$T/priv.txt")" 0 "i) the private session holds no event from the target process" ||
	grep -E "vpid = ${PID:-x}, " "$T/priv.txt" | head -3 | while IFS= read -r line; do diag "  $line"; done
is "$(grep -E "latsnap:user_stack: .*procname = \"latsnap\" \}, \{ tid = ${PID:-x}, " "$T/priv.txt" | grep -c '')" 1 \
	"i) it holds latsnap's copy of the stack (the session saw latsnap's events at all)" ||
	{ diag_file "$T/priv.txt" "  private: " 5; others; }

# --- j) under a CPU limit ---------------------------------------------------------------------
# A container's CPU limit: the sleeper and a busy loop in a cgroup allowed 5 ms per 500 ms
# period. A nap's thread, back from its syscall, returns to user space where its handler unwinds,
# but the group is throttled for most of each period: the handler may run up to a period later.
# The outlier waits for it while the thread has not had the CPU (latsnap waited a fixed 200 ms:
# 3 of 4 naps lost their unwound stack). Its sleeps outside a syscall (the throttling preempts it
# in user code) are not checked here.
CG=$("$ROOT/scripts/cpu-limit.sh" make "latsnap-90-$$") || CG=
if [ -z "$CG" ]; then
	if [ "${CI:-}" = true ]; then
		fail "j) a cgroup with a CPU limit (cgroup v1 cpu or v2 cpu.max): none could be made"
	else
		skip_tests 4 "j) no cgroup with a CPU limit could be made"
	fi
else
	cat >"$T/limited.sh" <<-EOS
		#!/bin/sh
		echo \$\$ >"$CG/$([ -e "$CG/cgroup.procs" ] && echo cgroup.procs || echo tasks)"
		( while :; do :; done ) &
		B=\$!
		"$WL/sleeper" 60 4
		kill \$B
	EOS
	chmod +x "$T/limited.sh"
	WL_LOG=$T/limited.log run "$T/limited.out" "$T/limited.err" -t 20ms -- "$T/limited.sh"
	is "$RC" 0 "j) record -t 20ms -- sleeper 60 4 beside a busy loop, 5 ms of CPU per 500 ms: exit 0"
	NAPS=$(jq -c 'select(.comm == "sleeper" and .syscall == "clock_nanosleep")' "$T/limited.out" | grep -c '')
	between "$NAPS" 4 4 "j) its 4 naps are outliers ($NAPS)"
	LOST=$(jq -r 'select(.comm == "sleeper" and .syscall == "clock_nanosleep" and .user_stack.source != "unwind") |
		"\(.duration_ns / 1e6 | floor) ms: \(.user_stack.source) \(.flags)"' "$T/limited.out")
	is "$LOST" "" "j) each nap's user stack was unwound by the preload library, however late its handler ran" ||
		diag "$(jq -r '.flags' "$T/limited.out" | grep -c no-unwound) flagged no-unwound-stack in all"
	# The busy loop, should the script have died before it: nothing of the test stays behind.
	"$ROOT/scripts/cpu-limit.sh" remove "$CG"
	ok '[ ! -d "$CG" ]' "j) its cgroup is gone, nothing left in it"
fi

# --- k) short-lived processes while latsnap writes a snapshot ------------------------------
# Forty processes, one after the other, each napping 21 ms once and exiting: latsnap reads a
# process's mappings when it first waits, and its main loop spends tens of milliseconds on each
# snapshot. Read there, the mappings of a process that lived less than a snapshot were gone
# (every frame a bare address, flagged user-stack-unsymbolized: 1 to 13 of 40 in each of 5 runs
# here); the maps reader reads them as the process is noticed.
cat >"$TMPD/k-short.sh" <<-EOS
	#!/bin/sh
	for i in \$(seq 40); do "$WL/sleeper" 21; done
EOS
chmod +x "$TMPD/k-short.sh"
record_snap short -t 20ms -o "$TMPD/k-short-snaps" -- "$TMPD/k-short.sh"
is "$RC" 0 "k) record -t 20ms -- forty sleepers of 21 ms, one after the other: exit 0"
SHORT='select(.comm == "sleeper" and .syscall == "clock_nanosleep")'
between "$(jcount "$TMPD/short.out" "$SHORT")" 40 40 "k) 40 naps are outliers" ||
	dump_outliers "$TMPD/short.out"
UNNAMED=$(jq -r "$SHORT"' | select([.user_stack.frames[] | select(.symbol == null)] | length > 0) |
	"pid \(.pid): \([.user_stack.frames[] | "\(.symbol)@\(.module)"] | join(" ")) \(.flags)"' "$TMPD/short.out")
is "$UNNAMED" "" "k) every frame of every nap's user stack is named, the processes gone or not" ||
	diag "$(grep -c '' <<<"$UNNAMED") of 40 with unnamed frames; snapshots: $(grep -c '^latsnap: snapshot ' "$TMPD/short.err")"
ok '[ -d "$TMPD/k-short-snaps" ] && [ "$(ls "$TMPD/k-short-snaps" | grep -c "Z-")" -ge 1 ]' \
	"k) the snapshots were written while the processes ran" || diag_file "$TMPD/short.err" "  stderr: "

diag "unwind_ns: $UNWIND_NS"
done_testing
