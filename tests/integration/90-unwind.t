#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The preload library's unwinder, end to end, in a real LTTng trace: a slow
# syscall of a registered process gets latsnap's signal and the handler's
# latsnap:user_stack event walks code without frame pointers (unwind-nofp)
# up to main(), where the kernel's frame-pointer walk in the JSON cannot;
# LATSNAP_DEPTH caps the walk; fork children register again, exec'd images
# only when they load the library (one that does not must not be signalled,
# its default action would kill it); processes preloaded before latsnap
# started are found and signalled; --signal picks another signal and a bad
# one is a usage error.
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

# traced N OUT ERR ARGS...: record_json OUT ERR ARGS... inside a fresh LTTng session; the
# session's user_stack events (see user_stacks) end up in $TMPD/usN.
traced() {
	local n=$1 out=$2 err=$3 name="latsnap-90-$$-$1"
	shift 3
	lttng_trace_start "$name" "$TMPD/trace$n" || fail "LTTng session $name starts"
	OTHERS=$(pgrep -a -x latsnap)
	record_json "$out" "$err" "$@"
	lttng_trace_stop "$name"
	user_stacks "$TMPD/trace$n" >"$TMPD/us$n"
}

# others: diag the latsnap processes that ran when the last record began (not this file's).
OTHERS=
others() {
	[ -n "$OTHERS" ] && diag "other latsnap runs when this one started (they may signal it too):" "$OTHERS"
	return 0
}

# events USFILE TID: the user_stack lines of thread TID.
events() {
	awk -v t="$2" '$1 == t' "$1"
}

# names BIN LOG LINE: the functions of BIN (addresses from LOG) the IPs of one user_stacks
# line fall in, space-separated, "?" for any other code.
names() {
	local bin=$1 log=$2
	# shellcheck disable=SC2086 # split the line into its fields
	set -- $3
	shift 5
	[ $# -gt 0 ] && ips_to_functions "$bin" "$log" "$@" | paste -sd' '
}

# show_events USFILE TID BIN LOG: each event of TID and its frames' names, as diag lines.
show_events() {
	local line
	diag "user_stack events of tid $2 (tid depth truncated status unwind_ns ips...):"
	[ -s "$1" ] || diag "  (no user_stack event at all in the trace)"
	events "$1" "$2" | while IFS= read -r line; do
		diag "  $line" "    = $(names "$3" "$4" "$line")"
	done
	[ -s "$1" ] && [ -z "$(events "$1" "$2")" ] &&
		diag "  (none; all the trace holds:)" && diag_file "$1" "    " 10
	others
}

# nap_sel PID [MORE]: the jq filter of PID's nanosleep/clock_nanosleep outliers (and MORE). Not
# any outlier of PID: a preloaded process may also wait in lttng-ust's constructor (a futex, for
# the session daemon) before the library registers, an outlier that is never signalled.
nap_sel() {
	printf 'select(.pid == %s and .kind == "syscall" and %s %s)' "${1:-0}" \
		'(.syscall // "" | test("^(clock_)?nanosleep$"))' "${2:-}"
}

# field LINE N: field N (1-based) of a user_stacks line.
field() {
	awk -v n="$2" '{ print $n }' <<<"$1"
}

# --- a) the unwinder walks what frame pointers cannot -------------------------
OUT=$TMPD/a.out ERR=$TMPD/a.err LOG=$TMPD/a.log
WL_LOG=$LOG traced a "$OUT" "$ERR" -- -t 20ms -- "$NOFP" 60 1
is "$RC" 0 "a) record -t 20ms -- unwind-nofp 60 1: exit 0"
ok 'ndjson_ok "$OUT"' "a) stdout is NDJSON" || diag_file "$OUT" "  stdout: "
PID=$(wl_log_get "$LOG" pid)
NAP_TID=$(wl_log_get "$LOG" nap)
ok '[ -n "$PID" ]' "a) unwind-nofp ran (pid $PID)"
SEL=$(nap_sel "$PID")
is "$(jcount "$OUT" "$SEL")" 1 "a) one nanosleep/clock_nanosleep outlier for its pid" || dump_outliers "$OUT"
TID=$(jfirst "$OUT" "$SEL" .tid)
is "$TID" "${NAP_TID:-none}" "a) the outlier's tid is the napping thread's"
is "$(jfirst "$OUT" "$SEL" .signalled)" true "a) the outlier says signalled: true" ||
	{ diag "flags: $(jfirst "$OUT" "$SEL" .flags)"; others; }
is "$(jfirst "$OUT" "$SEL" '[.flags[] | select(startswith("signal-"))] | length')" 0 \
	"a) no signal-displaced/blocked/busy flag" || { diag "flags: $(jfirst "$OUT" "$SEL" .flags)"; others; }
US=$TMPD/usa
is "$(events "$US" "$TID" | grep -c '')" 1 "a) exactly one user_stack event with the outlier's tid" ||
	show_events "$US" "$TID" "$NOFP" "$LOG"
EV=$(events "$US" "$TID" | head -n 1)
NAMES=$(names "$NOFP" "$LOG" "$EV")
is "$(field "$EV" 4)/$(field "$EV" 3)" 0/0 "a) the event has status 0 (walked to the end), truncated 0"
is "$(field "$EV" 2)" "$(($(wc -w <<<"$EV") - 5))" "a) its depth is the number of IPs it holds"
like "$NAMES" "$CHAIN_RE" \
	"a) its IPs map to libc, inner_fn, descend, middle_fn, outer_fn, main, in this order" ||
	show_events "$US" "$TID" "$NOFP" "$LOG"
diag "unwound: $NAMES (depth $(field "$EV" 2), unwind_ns $(field "$EV" 5))"
UNWIND_NS="depth $(field "$EV" 2): $(field "$EV" 5) ns"
# The JSON's user stack is the kernel's frame-pointer walk: it cannot get past the workload's
# functions, which keep no frame pointers. Only the unwinder sees middle_fn and outer_fn.
is "$(jfirst "$OUT" "$SEL" '.user_stack.source')" '"frame-pointer"' \
	"a) the JSON user_stack comes from the frame-pointer walk"
mapfile -t FP_ADDRS < <(jq -r "$SEL | .user_stack.frames[]?.addr" "$OUT" 2>/dev/null)
FP_NAMES=$( ((${#FP_ADDRS[@]})) && ips_to_functions "$NOFP" "$LOG" "${FP_ADDRS[@]}" | paste -sd' ')
ok '! [[ " $FP_NAMES " =~ " "(middle_fn|outer_fn)" " ]]' \
	"a) the frame-pointer stack in the JSON holds neither middle_fn nor outer_fn" ||
	diag "frame-pointer frames: ${FP_ADDRS[*]:-none}" "  = $FP_NAMES"
FP_SYMS=$(jq -r "$SEL | [.user_stack.frames[]? | .symbol // .addr] | join(\" < \")" "$OUT" 2>/dev/null)
diag "frame-pointer walk: $FP_SYMS = ${FP_NAMES:-(no frames)}"

# --- b) a stack deeper than the limit: innermost frames kept, truncated -------
# DEPTH 100 is 100 more descend frames: about 110 in all, beyond the default 64.
deep_check() {
	local tag=$1 want=$2 out=$TMPD/$1.out log=$TMPD/$1.log us=$TMPD/us$1 pid ev n
	pid=$(wl_log_get "$log" pid)
	is "$RC" 0 "$tag) exit 0"
	is "$(jcount "$out" "$(nap_sel "$pid" 'and .signalled == true')")" 1 \
		"$tag) one signalled nanosleep outlier for the deep workload's pid" ||
		{ dump_outliers "$out"; others; }
	n=$(events "$us" "${pid:-0}" | grep -c '')
	is "$n" 1 "$tag) one user_stack event for its tid" || show_events "$us" "${pid:-0}" "$NOFP" "$log"
	ev=$(events "$us" "${pid:-0}" | head -n 1)
	is "$(field "$ev" 2)/$(field "$ev" 3)/$(field "$ev" 4)" "$want/1/0" \
		"$tag) depth $want, truncated 1, status 0"
	is "$(($(wc -w <<<"$ev") - 5))" "$want" "$tag) it holds $want IPs"
	# What the limit cuts is the outer end: the innermost frames are all there.
	like "$(names "$NOFP" "$log" "$ev")" '^(\? ){1,2}inner_fn( descend)+$' \
		"$tag) the kept frames are the innermost: libc, inner_fn, then descend only" ||
		show_events "$us" "${pid:-0}" "$NOFP" "$log"
	UNWIND_NS="$UNWIND_NS; depth $(field "$ev" 2): $(field "$ev" 5) ns"
}
WL_LOG=$TMPD/b.log traced b "$TMPD/b.out" "$TMPD/b.err" -- -t 20ms -- "$NOFP" 60 1 100
deep_check b 64
# LATSNAP_DEPTH in latsnap's environment reaches COMMAND's library.
LATSNAP_DEPTH=10 WL_LOG=$TMPD/b10.log traced b10 "$TMPD/b10.out" "$TMPD/b10.err" -- -t 20ms -- "$NOFP" 60 1 100
deep_check b10 10

# --- c) a fork child registers again ------------------------------------------
OUT=$TMPD/c.out LOG=$TMPD/c.log
WL_LOG=$LOG traced c "$OUT" "$TMPD/c.err" -- -t 50ms -- "$FORKEXEC" fork 100
is "$RC" 0 "c) record -- forkexec fork 100: exit 0"
CHILD=$(wl_log_get "$LOG" child)
ok '[ -n "$CHILD" ]' "c) forkexec forked a child ($CHILD)"
is "$(wl_log_get "$LOG" child_status)" 0 "c) the child exited 0 (wait status 0)"
SEL=$(nap_sel "$CHILD")
is "$(jcount "$OUT" "$SEL")" 1 "c) one nanosleep outlier for the child's pid" || dump_outliers "$OUT"
is "$(jfirst "$OUT" "$SEL" .signalled)" true "c) the child's outlier says signalled: true" ||
	{ diag "flags: $(jfirst "$OUT" "$SEL" .flags)"; others; }
is "$(events "$TMPD/usc" "${CHILD:-0}" | grep -c '')" 1 "c) one user_stack event with the child's tid" ||
	show_events "$TMPD/usc" "${CHILD:-0}" "$FORKEXEC" "$LOG"
NAMES=$(names "$FORKEXEC" "$LOG" "$(events "$TMPD/usc" "${CHILD:-0}" | head -n 1)")
like "$NAMES" '^(\? ){1,2}child_nap ' "c) its innermost workload frame is child_nap (after libc)" ||
	show_events "$TMPD/usc" "${CHILD:-0}" "$FORKEXEC" "$LOG"

# --- d) exec of a preloaded image: it registers again --------------------------
OUT=$TMPD/d.out ERR=$TMPD/d.err LOG=$TMPD/d.log
WL_LOG=$LOG traced d "$OUT" "$ERR" -- -v -t 50ms -- "$FORKEXEC" exec-keep 100 "$WL/sleeper"
is "$RC" 0 "d) record -- forkexec exec-keep 100 sleeper: exit 0"
CHILD=$(wl_log_get "$LOG" child)
ok '[ -n "$CHILD" ]' "d) forkexec forked a child ($CHILD)"
is "$(wl_log_get "$LOG" child_status)" 0 "d) the exec'd sleeper exited 0 (wait status 0)"
ok 'grep -q "pid ${CHILD:-x} (sleeper) registered through the preload library" "$ERR"' \
	"d) -v: the new image (sleeper) registered" || diag_file "$ERR" "  stderr: "
SEL=$(nap_sel "$CHILD" 'and .comm == "sleeper"')
is "$(jcount "$OUT" "$SEL")" 1 "d) one nanosleep outlier for the exec'd sleeper" || dump_outliers "$OUT"
is "$(jfirst "$OUT" "$SEL" .signalled)" true "d) the sleeper's outlier says signalled: true" ||
	{ diag "flags: $(jfirst "$OUT" "$SEL" .flags)"; others; }
is "$(events "$TMPD/usd" "${CHILD:-0}" | grep -c '')" 1 "d) one user_stack event with the sleeper's tid" ||
	diag_file "$TMPD/usd" "  user_stacks: " 10

# --- e) exec of an image without the library: never signalled ------------------
# The registration must go with the old image: the default action of signal 60 kills.
for mode in exec-drop self-exec-drop; do
	OUT=$TMPD/$mode.out LOG=$TMPD/$mode.log
	WL_LOG=$LOG traced "$mode" "$OUT" "$TMPD/$mode.err" -- -v -t 50ms -- \
		"$FORKEXEC" "$mode" 100 "$WL/sleeper"
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
	is "$(jfirst "$OUT" "$SEL" .signalled)" false "e) $mode: the sleeper's outlier says signalled: false" ||
		{ diag "flags: $(jfirst "$OUT" "$SEL" .flags)"; others; }
	is "$(events "$TMPD/us$mode" "${SPID:-0}" | grep -c '')" 0 "e) $mode: no user_stack event for it" ||
		show_events "$TMPD/us$mode" "${SPID:-0}" "$FORKEXEC" "$LOG"
done

# --- f) a process preloaded before latsnap started -------------------------------
# preexisting TAG [-p]: unwind-nofp 100 30 (3 s of 100 ms naps) started with the library in
# LD_PRELOAD, then `latsnap record [-p PID] -v -t 50ms -d 1500ms`.
preexisting() {
	local tag=$1 name="latsnap-90-$$-$1" log=$TMPD/$1.log out=$TMPD/$1.out err=$TMPD/$1.err
	local us=$TMPD/us$1 pid n sig naps ev bad=0 pidarg=()
	shift
	lttng_trace_start "$name" "$TMPD/trace$tag" || fail "$tag) LTTng session $name starts"
	LD_PRELOAD=$BUILD/liblatsnap.so WL_LOG=$log "$NOFP" 100 80 </dev/null >/dev/null \
		2>"$TMPD/$tag.wl.err" &
	pid=$!
	track_bg $pid
	# Its library registers in the constructor; latsnap has to find it in /proc.
	sleep 0.3
	[ "${1:-}" = -p ] && pidarg=(-p "$pid")
	OTHERS=$(pgrep -a -x latsnap)
	record_json "$out" "$err" -- "${pidarg[@]}" -v -t 50ms -d 1500ms
	lttng_trace_stop "$name"
	kill -0 $pid 2>/dev/null
	ok $? "$tag) the workload still ran when latsnap stopped (pid $pid)"
	kill -TERM $pid 2>/dev/null
	wait $pid 2>/dev/null
	user_stacks "$TMPD/trace$tag" >"$us"
	is "$RC" 0 "$tag) record${pidarg[*]:+ ${pidarg[*]}} -v -t 50ms -d 1500ms: exit 0"
	ok 'grep -q "pid $pid registered before latsnap started, signal 60" "$err"' \
		"$tag) -v says: pid $pid registered before latsnap started, signal 60" ||
		diag_file "$err" "  stderr: "
	n=$(jcount "$out" "$(nap_sel $pid)")
	between "$n" 5 16 "$tag) 5-16 nanosleep outliers for its pid in 1.5 s of 100 ms naps" || dump_outliers "$out"
	sig=$(jcount "$out" "$(nap_sel $pid 'and .signalled == true')")
	is "$sig" "$n" "$tag) every one says signalled: true" || { dump_outliers "$out"; others; }
	# Every signal made an event, and no nap more than one. (The trace holds the whole life of
	# the workload: a latsnap run alongside that tracks every registered process, a test of
	# another file, may have signalled it too, and for naps this run did not see.)
	naps=$(grep -c '^nap ' "$log")
	between "$(events "$us" $pid | grep -c '')" "$sig" "$naps" \
		"$tag) a user_stack event with its tid per signalled outlier, at most one a nap ($naps naps)" ||
		show_events "$us" $pid "$NOFP" "$log"
	while IFS= read -r ev; do
		[[ $(names "$NOFP" "$log" "$ev") =~ $CHAIN_RE ]] && [ "$(field "$ev" 3)/$(field "$ev" 4)" = 0/0 ] ||
			bad=$((bad + 1))
	done < <(events "$us" $pid)
	is "$bad" 0 "$tag) every event is complete (status 0, truncated 0) and maps to inner_fn .. main" ||
		show_events "$us" $pid "$NOFP" "$log"
	[ "$tag" = f ] &&
		diag "unwind_ns of the events, depth 10: $(events "$us" $pid | awk '{ print $5 }' | paste -sd' ')"
}
# No target: latsnap tracks whatever registered, found by scanning /proc.
preexisting f
# -p PID: the same process, named.
preexisting fp -p

# --- g) another signal ----------------------------------------------------------
# Were the signal still 60, a process with a handler only for 39 would die of it (exit 188).
OUT=$TMPD/g.out ERR=$TMPD/g.err LOG=$TMPD/g.log
WL_LOG=$LOG traced g "$OUT" "$ERR" -- --signal RTMIN+5 -v -t 20ms -- "$NOFP" 60 1
is "$RC" 0 "g) record --signal RTMIN+5 -- unwind-nofp 60 1: exit 0"
PID=$(wl_log_get "$LOG" pid)
ok 'grep -q "pid ${PID:-x} (unwind-nofp) registered through the preload library, signal 39$" "$ERR"' \
	"g) -v: pid $PID registered through the preload library, signal 39 (SIGRTMIN+5)" ||
	diag_file "$ERR" "  stderr: "
SEL=$(nap_sel "$PID")
is "$(jcount "$OUT" "$SEL")" 1 "g) one nanosleep outlier for its pid" || dump_outliers "$OUT"
is "$(jfirst "$OUT" "$SEL" .signalled)" true "g) it says signalled: true" ||
	{ diag "flags: $(jfirst "$OUT" "$SEL" .flags)"; others; }
is "$(events "$TMPD/usg" "${PID:-0}" | grep -c '')" 1 "g) one user_stack event with its tid" ||
	show_events "$TMPD/usg" "${PID:-0}" "$NOFP" "$LOG"
like "$(names "$NOFP" "$LOG" "$(events "$TMPD/usg" "${PID:-0}" | head -n 1)")" "$CHAIN_RE" \
	"g) the event maps to inner_fn .. main" || show_events "$TMPD/usg" "${PID:-0}" "$NOFP" "$LOG"

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

diag "unwind_ns: $UNWIND_NS"
done_testing
