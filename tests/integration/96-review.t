#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# latsnap report, show and flame over snapshots recorded here, with the real recorder, a real
# lttng-sessiond and real workloads:
#  a) report --json: each cause's count, average, maximum and percentage equal what the
#     summaries hold; the per-process sections; --by syscall and --by process; the text form.
#  b) flame: the contract's folded lines (one per distinct stack, '-' between user and kernel
#     frames), the workload's functions and the kernel frame it waited in, weights that add up
#     to the summaries' kernel stack weights; --grep; --svg is well-formed XML with the frames.
#  c) show: the story (user above kernel), source lines, a timeline read from the trace with
#     the thread's latsnap:user_stack event and its waker's events; --json.
#  d) symbolization from the trace's statedump: after the workload binary is deleted (debug
#     info found by build-id in --debug-dir), and after it is rebuilt (a warning names it, no
#     frame is symbolized from the new binary).
#  d) and C++ names demangled in flame and show.
#  e) broken inputs: truncated, wrong-version and missing summary.json, a trace with a missing
#     stream or no metadata, a snapshot of another host, an empty or missing directory, usage
#     errors: a clear error naming the file, exit 1 (2 for usage), never a crash.
set -u
# e) damages summaries on purpose: the schema check is of the others (below, at the end).
SUMMARY_SCHEMA=skip
. "$(dirname "$0")/lib.sh"
# Its runs repeat wait sites and count on a snapshot for each: the flood guard, 46-flood.t's
# subject, is off in them (--no-flood-guard).

require_root
require jq perl timeout xmllint objcopy readelf cc c++
require_latsnap
require lttng lttng-sessiond babeltrace2
require_workloads sleeper pipewait mutexwait
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
require_lttng

T_START=$(date +%s%N)
OUT=$TMPD/out

# rec TAG ARGS...: `latsnap record --json -o $OUT ARGS` in snapshot mode; sets RC. The session
# daemon is the machine's: when another test stops the one it started while this record runs,
# the run is not what is tested here; it is done again (at most twice) with a daemon that runs.
rec() {
	local tag=$1 try
	shift
	for try in 1 2 3; do
		WL_LOG=$TMPD/$tag.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-flood-guard --json -o "$OUT" "$@" \
			>"$TMPD/$tag.out" 2>"$TMPD/$tag.err"
		RC=$?
		grep -q 'No session daemon is available' "$TMPD/$tag.err" || break
		diag "record $* (try $try): the session daemon went away under it; again"
		# This try's snapshots (newer than the workload's log) go: the next try makes its own.
		find "$OUT" -mindepth 1 -maxdepth 1 -type d -newer "$TMPD/$tag.log" -exec rm -rf {} + 2>/dev/null
		require_lttng
	done
	[ "$RC" = 0 ] || { diag "record $* exited $RC:"; diag_file "$TMPD/$tag.err" "  stderr: "; }
	return 0
}

# L OUTFILE ERRFILE ARGS...: run latsnap ARGS; sets RC.
L() {
	local out=$1 err=$2
	shift 2
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" "$@" >"$out" 2>"$err"
	RC=$?
	return 0
}

# complete DIR: the snapshot ids of DIR with a summary.json.
complete() {
	local d
	for d in $(find "$1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | LC_ALL=C sort); do
		[ -f "$1/$d/summary.json" ] && echo "$d"
	done
}

# all_outliers DIR: every outlier of the complete snapshots, one JSON object a line, with _id.
all_outliers() {
	local d
	for d in $(complete "$1"); do
		jq -c --arg id "$d" '.outliers[] | . + {_id: $id}' "$1/$d/summary.json"
	done
}

# --- recordings -------------------------------------------------------------------------------
# A sleeper built here into $TMPD (with -g): d) deletes it and rebuilds it.
mkdir -p "$TMPD/bin"
BIN=$(readlink -f "$TMPD/bin")/napper
build_napper() {
	cc -std=gnu11 -O2 -g -fno-omit-frame-pointer -D_GNU_SOURCE -pthread "$@" -o "$BIN" \
		"$ROOT/tests/workloads/sleeper.c" -ldl
}
build_napper
ok '[ -x "$BIN" ]' "a sleeper built into $BIN" || skip_all "cannot build the sleeper copy"
rec s -t 40ms -- "$BIN" 60 3 20
is "$RC" 0 "record -t 40ms -- napper 60 3 20: exit 0"
rec p -v -t 40ms -- "$WL/pipewait" 120
is "$RC" 0 "record -t 40ms -- pipewait 120: exit 0"
rec m -t 40ms -- "$WL/mutexwait" 150
is "$RC" 0 "record -t 40ms -- mutexwait 150: exit 0"
mapfile -t IDS < <(complete "$OUT")
all_outliers "$OUT" >"$TMPD/all.ndjson"
NALL=$(grep -c '' "$TMPD/all.ndjson")
ok '[ "${#IDS[@]}" -ge 3 ] && [ "$NALL" -ge 5 ]' \
	"at least 3 complete snapshots and 5 outliers to review (${#IDS[@]}, $NALL)"
SPID=$(wl_log_get "$TMPD/s.log" pid)
# Its 60 ms naps: a 20 ms gap between two is an outlier too when the machine keeps it from the
# CPU for 20 ms more (stress-ng at nice -15), but it slept 20 ms, not 60.
NAP_SEL="select(.pid == ${SPID:-0} and (.syscall // \"\" | test(\"^(clock_)?nanosleep$\")) and .blocked_ns >= 50000000)"
NNAPS=$(jq -s "[.[] | $NAP_SEL] | length" "$TMPD/all.ndjson")
is "$NNAPS" 3 "the summaries hold the napper's 3 naps"

# --- a) report --------------------------------------------------------------------------------
L "$TMPD/r.json" "$TMPD/r.err" report --json "$OUT"
is "$RC" 0 "a) report --json DIR: exit 0" || diag_file "$TMPD/r.err" "  stderr: "
ok 'jq -e "type == \"object\"" "$TMPD/r.json" >/dev/null' "a) its output is one JSON object"
# What the groups must be, computed from the summaries themselves.
expect_groups() {
	jq -s -c "group_by($1) | map({key: (.[0] | $1), count: length,
		total_ns: (map(.duration_ns) | add), max_ns: (map(.duration_ns) | max)})
		| map(. + {average_ns: ((.total_ns / .count) | floor)}) | sort_by(.key)" "$TMPD/all.ndjson"
}
got_groups() {
	jq -c '[.system.groups[] | {key, count, total_ns, max_ns, average_ns}] | sort_by(.key)' "$1"
}
WANT=$(expect_groups .cause)
is "$(got_groups "$TMPD/r.json")" "$WANT" \
	"a) each cause's count, total, average and maximum are the summaries'" ||
	diag "want: $WANT"
TOTAL=$(jq -s 'map(.duration_ns) | add' "$TMPD/all.ndjson")
is "$(jq .system.total_ns "$TMPD/r.json")" "$TOTAL" "a) the system-wide total is every outlier's duration ($TOTAL ns)"
is "$(jq .system.count "$TMPD/r.json")" "$NALL" "a) the system-wide count is every outlier ($NALL)"
BADPCT=$(jq -r --argjson t "$TOTAL" '.system.groups[] | select((.percent - 100 * .total_ns / $t) | fabs > 0.001) | .key' "$TMPD/r.json")
is "$BADPCT" "" "a) each percentage is the group's share of the total outlier time"
is "$(jq '[.system.groups[].percent] | add | . * 1000 | round' "$TMPD/r.json")" 100000 "a) the percentages add up to 100"
is "$(jq -r '[.system.groups[].total_ns] | . == (sort | reverse)' "$TMPD/r.json")" true "a) groups are sorted by total, largest first"
BADHIST=$(jq -r '.system.groups[] | select(([.histogram[].count] | add) != .count
	or any(.histogram[]; .to_ns != 2 * .from_ns and .from_ns != 0)) | .key' "$TMPD/r.json")
is "$BADHIST" "" "a) each group's log2 histogram counts every outlier of it, in power-of-2 buckets"
NAPHIST=$(jq -c '[.system.groups[] | select(.key == "Requested sleep (nanosleep)") | .histogram[]
	| {from_ns, count}]' "$TMPD/r.json")
is "$NAPHIST" "$(jq -s -c '[.[] | select(.cause == "Requested sleep (nanosleep)") | .duration_ns | log2 | floor]
	| group_by(.) | map({from_ns: pow(2; .[0]), count: length})' "$TMPD/all.ndjson")" \
	"a) the naps' histogram: each nap counted in the bucket of floor(log2(duration))"
WANTP=$(jq -s -c 'group_by(.pid) | map({pid: .[0].pid, count: length, total_ns: (map(.duration_ns) | add),
	threads: (map(.tid) | unique | length)}) | sort_by(.pid)' "$TMPD/all.ndjson")
is "$(jq -c '[.processes[] | {pid, count, total_ns, threads}] | sort_by(.pid)' "$TMPD/r.json")" "$WANTP" \
	"a) one section per process: its count, total and thread count" || diag "want: $WANTP"
is "$(jq -r --argjson p "${SPID:-0}" '.processes[] | select(.pid == $p) | .comm' "$TMPD/r.json")" napper \
	"a) the napper's section is named by its comm"
is "$(jq -c '[.snapshots[] | .status] | unique' "$TMPD/r.json")" '["complete"]' "a) every snapshot is listed as complete"

L "$TMPD/rs.json" "$TMPD/rs.err" report --json --by syscall "$OUT"
is "$(got_groups "$TMPD/rs.json")" "$(expect_groups '(.syscall // "(off-CPU, no syscall)")')" \
	"a) --by syscall: the groups are the syscalls, with the summaries' numbers"
L "$TMPD/rp.json" "$TMPD/rp.err" report --json --by process "$OUT"
is "$(jq -c '[.system.groups[] | {key, count}] | sort_by(.key)' "$TMPD/rp.json")" \
	"$(jq -c '[.processes[] | {key: "\(.comm) (\(.pid))", count}] | sort_by(.key)' "$TMPD/r.json")" \
	"a) --by process: one group per process, named 'comm (pid)', with its count"

L "$TMPD/r.txt" "$TMPD/r.txt.err" report "$OUT"
is "$RC" 0 "a) report DIR (text): exit 0"
like "$(grep -m1 -E '^Cause +Count +Average +Maximum +Percentage$' "$TMPD/r.txt")" 'Percentage' \
	"a) text: the LatencyTOP columns Cause, Count, Average, Maximum, Percentage"
NAPROW=$(grep -m1 '^Requested sleep (nanosleep) ' "$TMPD/r.txt")
NAPCOUNT=$(jq -r '.system.groups[] | select(.key == "Requested sleep (nanosleep)") | .count' "$TMPD/r.json")
NAPPCT=$(jq -r '.system.groups[] | select(.key == "Requested sleep (nanosleep)") | .percent' "$TMPD/r.json" | awk '{ printf "%.1f", $1 }')
like "$NAPROW" "^Requested sleep \\(nanosleep\\) +$NAPCOUNT +[0-9.]+ ms +[0-9.]+ ms +${NAPPCT}%$" \
	"a) text: the nap row says $NAPCOUNT, two durations and $NAPPCT%"
read -r SN ST < <(jq -r --argjson p "${SPID:-0}" '.processes[] | select(.pid == $p) | "\(.count) \(.threads)"' "$TMPD/r.json")
ok 'grep -qE "^Process napper \(${SPID:-x}\): [0-9.]+ ms in ${SN:-x} outliers?, ${ST:-x} threads?$" "$TMPD/r.txt"' \
	"a) text: a section 'Process napper ($SPID): ... in $SN outliers, $ST thread(s)'" || diag_file "$TMPD/r.txt" "  " 80
# The text histogram of the naps: its rows' counts are the JSON buckets', zero rows around them.
HROWS=$(awk '$0 == "  Requested sleep (nanosleep)" { on = 1; next } on && /^$/ { exit }
	on && /\|/ { rows++; if ($NF > 0) out = out (out == "" ? "" : " ") $NF } END { print out "/" rows }' "$TMPD/r.txt")
is "$HROWS" "$(jq -r '[.system.groups[] | select(.key == "Requested sleep (nanosleep)") | .histogram[].count] | join(" ")' "$TMPD/r.json")/$(
	jq -r '[.system.groups[] | select(.key == "Requested sleep (nanosleep)") | .histogram[].from_ns | log2 | floor] | (max - min + 3)' "$TMPD/r.json")" \
	"a) text: a quantize-style histogram per group, its counts the JSON's, from one empty row below to one above" ||
	diag_file "$TMPD/r.txt" "  " 40
ok 'grep -q -- "------------- Distribution ------------- count" "$TMPD/r.txt"' "a) text: the quantize header"

# --- b) flame ---------------------------------------------------------------------------------
L "$TMPD/f.txt" "$TMPD/f.err" flame --svg "$TMPD/f.svg" "$OUT"
is "$RC" 0 "b) flame --svg FILE DIR: exit 0" || diag_file "$TMPD/f.err" "  stderr: "
BADLINES=$(grep -cvE '^[^;]+(;[^;]+)*;-(;[^;]+)+ [0-9]+$' "$TMPD/f.txt")
is "$BADLINES" 0 "b) every line is comm;user...;-;kernel... WEIGHT_NS" || diag_file "$TMPD/f.txt" "  " 20
is "$(sed 's/ [0-9]*$//' "$TMPD/f.txt" | sort | uniq -d | grep -c '')" 0 "b) one line per distinct stack"
WSUM=$(jq -s '[.[].kernel_stacks[].weight_ns] | add' "$TMPD/all.ndjson")
is "$(awk '{ s += $NF } END { print s }' "$TMPD/f.txt")" "$WSUM" \
	"b) the weights add up to the summaries' kernel stack weights ($WSUM ns)"
NAPLINE=$(grep -m1 '^napper;.*;slow_nap;' "$TMPD/f.txt")
like "$NAPLINE" '^napper;(.*;)?main;slow_nap;(.*;)?-;(.*;)?(hrtimer_nanosleep|do_nanosleep)(;[^;]+)* [0-9]+$' \
	"b) the napper's stack: main;slow_nap above '-', the nanosleep kernel frame below"
# (its read; a start-up wait to register with the session daemon may be a stack of its own)
like "$(grep '^pipewait;' "$TMPD/f.txt" | grep -m1 'pipe_read')" ';wait_for_pipe;(.*;)?-;.*pipe_read' \
	"b) pipewait's reader: wait_for_pipe above '-', pipe_read below" || {
	jq -c 'select(.comm == "pipewait") | {syscall, source: .user_stack.source, flags,
		frames: [.user_stack.frames[]? | "\(.symbol)@\(.module)"]}' "$TMPD/all.ndjson" 2>/dev/null |
		while IFS= read -r l; do diag "  pipewait outlier: $l"; done
	grep -v 'libbpf: ' "$TMPD/p.err" | while IFS= read -r l; do diag "  record stderr: $l"; done
}
xmllint --noout "$TMPD/f.svg" 2>"$TMPD/xml.err"
is "$?" 0 "b) the SVG is well-formed XML" || diag_file "$TMPD/xml.err" "  "
ok 'grep -q "<title>slow_nap (" "$TMPD/f.svg" && grep -q "<title>wait_for_pipe (" "$TMPD/f.svg" && grep -qE "<title>(hrtimer_nanosleep|do_nanosleep) \(" "$TMPD/f.svg"' \
	"b) the SVG has the frames, with tooltips (slow_nap, wait_for_pipe, the nanosleep frame)"
L "$TMPD/fg.txt" "$TMPD/fg.err" flame --grep '^slow_nap$' "$OUT"
is "$RC/$(grep -c '' "$TMPD/fg.txt")/$(grep -vc ';slow_nap;' "$TMPD/fg.txt")" \
	"0/$(grep -c ';slow_nap;' "$TMPD/f.txt")/0" "b) --grep '^slow_nap\$' keeps exactly the stacks through slow_nap"

# --- c) show ----------------------------------------------------------------------------------
# The first nap that waited in the kernel (one may have no kernel stack: see the recorder).
read -r SID STID SSTART < <(jq -r "$NAP_SEL | select(.kernel_stacks | length > 0) | \"\(._id) \(.tid) \(.start_ns)\"" "$TMPD/all.ndjson" | head -n 1)
AT=$(printf '%d.%09d' $((${SSTART:-0} / 1000000000)) $((${SSTART:-0} % 1000000000)))
# THIS: the jq selection of that outlier in show --json's output.
THIS="select(.tid == ${STID:-0} and .start_ns == ${SSTART:-0})"
L "$TMPD/show.txt" "$TMPD/show.err" show "$OUT/$SID"
is "$RC" 0 "c) show DIR/$SID: exit 0" || diag_file "$TMPD/show.err" "  stderr: "
# The story of the first nap: user frames outermost first, then the kernel's, in one block.
STORY=$(awk -v at="at $AT" 'index($0, "napper") && index($0, at) { on = 1 } on && /^  woken by|^  timeline/ { exit } on' "$TMPD/show.txt")
like "$(tr '\n' ' ' <<<"$STORY")" 'stack, outermost first: user .* main\+0x[0-9a-f]+ .* slow_nap\+0x[0-9a-f]+ .*-- kernel, waited .* (hrtimer_nanosleep|do_nanosleep)\+0x' \
	"c) the story: main, then slow_nap, then the kernel frames down to the nanosleep one" || diag "$STORY"
like "$(grep -m1 'slow_nap+0x' "$TMPD/show.txt")" 'sleeper\.c:[0-9]+' "c) slow_nap's frame has its source line (sleeper.c:N)"
ok 'grep -q "cause: Requested sleep (nanosleep)" "$TMPD/show.txt"' "c) the cause is shown"
TL=$(awk -v at="at $AT" 'index($0, "napper") && index($0, at) { on = 1 } on && /^  timeline/ { t = 1 } t && on' "$TMPD/show.txt" | sed -n '1,/^$/p')
like "$TL" "napper\\[$STID\\]  latsnap:user_stack" "c) the timeline has the napping thread's latsnap:user_stack event" || diag "$TL"
L "$TMPD/show.json" "$TMPD/showj.err" show --json "$OUT/$SID"
is "$RC" 0 "c) show --json: exit 0"
is "$(jq -c --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .timeline[] | select(.name == "latsnap:user_stack" and .tid == $t)
	| (.rel_ns > 0 and .fields.tid == $t)] | .[0]' "$TMPD/show.json")" true \
	"c) --json: the event is in the timeline with its time relative to the outlier and its fields"
is "$(jq -r --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .user_stack.frames[] | select(.symbol == "slow_nap")][0] | "\(.symbolized) \(.file | split("/") | last)"' "$TMPD/show.json")" \
	"build-id sleeper.c" "c) --json: slow_nap was symbolized again by build-id, with its source file"
# The pipe reader's waker is the writer process: its events are in the reader's timeline. Its
# read of the pipe, told by the kernel frame: under load the loader's reads of its libraries at
# exec may wait on the disk too (true outliers, woken by an interrupt).
RTID=$(wl_log_get "$TMPD/p.log" reader)
PIPE_READ='select(.tid == $r and .syscall == "read" and ([.kernel_stacks[]?.frames[]?.symbol // "" | select(test("pipe_read"))] | length > 0))'
PID_ID=$(jq -r --argjson r "${RTID:-0}" "$PIPE_READ | ._id" "$TMPD/all.ndjson" | head -n 1)
WTID=$(jq -r --argjson r "${RTID:-0}" "$PIPE_READ | .waker.tid" "$TMPD/all.ndjson" | head -n 1)
L "$TMPD/showp.json" "$TMPD/showp.err" show --json --before 200ms "$OUT/$PID_ID"
is "$(jq -r --argjson r "${RTID:-0}" --argjson w "${WTID:-0}" '[.outliers[] | select(.tid == $r) | .timeline[] | select(.tid == $w)] | length > 0' "$TMPD/showp.json")" true \
	"c) the pipe reader's timeline holds events of its waker (pipewriter, tid $WTID)" ||
	diag "timeline: $(jq -c --argjson r "${RTID:-0}" '[.outliers[] | select(.tid == $r) | .timeline[] | [.rel_ns, .tid, .name]]' "$TMPD/showp.json")"
# A wait chain (another engineer's work: summaries have none yet): the pipe reader's waker moved
# into a one-link chain. show prints the link, and its thread's events join the timeline.
WC=$TMPD/wc/$PID_ID
mkdir -p "$TMPD/wc"
cp -a "$OUT/$PID_ID" "$WC"
jq --argjson r "${RTID:-0}" "(.outliers[] | $PIPE_READ)"' |= (.wait_chain = [{depth: 1,
	pid: .waker.pid, tid: .waker.tid, comm: .waker.comm, from_ns: .start_ns, to_ns: .end_ns,
	on_cpu_ns: 1000, blocked_ns: (.duration_ns - 1000), runqueue_ns: 0, syscall: "clock_nanosleep",
	frames: []}] | .waker = null)' "$OUT/$PID_ID/summary.json" >"$WC/summary.json"
L "$TMPD/wc.json" "$TMPD/wc.err" show --json --before 200ms "$WC"
is "$RC" 0 "c) show on a summary with a wait chain: exit 0" || diag_file "$TMPD/wc.err" "  stderr: "
is "$(jq -r --argjson r "${RTID:-0}" --argjson w "${WTID:-0}" '[.outliers[] | select(.tid == $r) | .timeline[] | select(.tid == $w)] | length > 0' "$TMPD/wc.json")" true \
	"c) the wait chain thread's events (tid $WTID) are in the reader's timeline"
L "$TMPD/wc.txt" "$TMPD/wc.err" show --before 200ms "$WC"
like "$(grep -A1 '^  wait chain, nearest first:' "$TMPD/wc.txt" | tail -n 1)" "^  1\. pipewriter\[pid [0-9]+ tid ${WTID:-x}\] from \+0\.000000 ms to \+[0-9.]+ ms, in clock_nanosleep" \
	"c) text: the link, its thread, its span relative to the outlier and its syscall" || diag_file "$TMPD/wc.txt" "  " 40

L "$TMPD/shown.json" "$TMPD/shown.err" show --json --before 0 --after 0 "$OUT/$SID"
is "$RC" 0 "c) show --before 0 --after 0: exit 0 (the unwound stack's event, after the end, is still found)"
is "$(jq --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .duration_ns as $d | .timeline[] | select(.rel_ns < 0 or .rel_ns > $d)] | length' "$TMPD/shown.json")" 0 \
	"c) --before 0 --after 0: no event outside the outlier"

# A summary without the unwound stacks (the recorder missed their events): show takes them from
# the trace.
N=$TMPD/n/$SID
mkdir -p "$TMPD/n"
cp -a "$OUT/$SID" "$N"
jq '.outliers[].user_stack = {"source": "none", "frames": []}' "$OUT/$SID/summary.json" >"$N/summary.json"
L "$TMPD/shownu.json" "$TMPD/shownu.err" show --json "$N"
is "$RC" 0 "c) show on a summary without unwound stacks: exit 0" || diag_file "$TMPD/shownu.err" "  stderr: "
is "$(jq -r --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" '.outliers[] | select(.tid == $t and .start_ns == $s) |
	"\(.user_stack.source) \([.user_stack.frames[] | select(.symbol == "slow_nap" or .symbol == "main") | .symbol] | join(",")) \(any(.flags[]; startswith("unwound-from-trace")))"' "$TMPD/shownu.json")" \
	"unwind slow_nap,main true" "c) the nap's unwound stack is taken from the trace's event, symbolized, and flagged so"

# --- d) symbolization later and elsewhere -----------------------------------------------------
BUILDID=$(readelf -n "$BIN" | awk '/Build ID/ { print $3 }')
DBG=$TMPD/debug
mkdir -p "$DBG/.build-id/${BUILDID:0:2}"
objcopy --only-keep-debug "$BIN" "$DBG/.build-id/${BUILDID:0:2}/${BUILDID:2}.debug"
rm -f "$BIN"
L "$TMPD/d1.json" "$TMPD/d1.err" show --json --debug-dir "$DBG" "$OUT/$SID"
is "$RC" 0 "d) the binary deleted, show --debug-dir: exit 0" || diag_file "$TMPD/d1.err" "  stderr: "
like "$(jq -r --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" --arg m "$BIN" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .user_stack.frames[] | select(.module == $m) | "\(.symbol)/\(.symbolized)/\(.file // "-" | split("/") | last)"] | join(" ")' "$TMPD/d1.json")" \
	'^slow_nap/build-id/sleeper\.c main/build-id/sleeper\.c( _start/build-id/[^ ]+)?$' \
	"d) deleted: its frames are symbolized from the debug file of its build-id (${BUILDID:0:12}...), with source lines"
L "$TMPD/d2.json" "$TMPD/d2.err" show --json "$OUT/$SID"
is "$RC" 0 "d) the binary deleted, no debug dir: exit 0"
like "$(jq -r --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" --arg m "$BIN" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .user_stack.frames[] | select(.module == $m) | "\(.symbol)/\(.symbolized)"] | join(" ")' "$TMPD/d2.json")" \
	'^slow_nap/recorded main/recorded( _start/recorded)?$' "d) deleted, no debug info: the frames keep the symbols recorded, and say so"
# Rebuilt with another function in front: same path, another build-id, every address moved.
build_napper -DREBUILT -include /dev/stdin <<<'void rebuilt_pad(void); __attribute__((used, noinline)) void rebuilt_pad(void) { __asm__ volatile(".fill 4096, 1, 0x90"); }'
isnt "$(readelf -n "$BIN" | awk '/Build ID/ { print $3 }')" "$BUILDID" "d) rebuilt: the binary has another build-id"
L "$TMPD/d3.json" "$TMPD/d3.err" show --json "$OUT/$SID"
is "$RC" 0 "d) rebuilt: show exits 0"
like "$(cat "$TMPD/d3.err")" "^latsnap: show: warning: $BIN: build-id [0-9a-f]+ is not the $BUILDID the snapshot recorded" \
	"d) rebuilt: a warning names the binary and both build-ids" || diag_file "$TMPD/d3.err" "  stderr: "
like "$(jq -r --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" --arg m "$BIN" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .user_stack.frames[] | select(.module == $m) | "\(.symbol)/\(.symbolized)"] | join(" ")' "$TMPD/d3.json")" \
	'^slow_nap/recorded main/recorded( _start/recorded)?$' "d) rebuilt: no frame is symbolized from the new binary"
L "$TMPD/d4.json" "$TMPD/d4.err" show --json --debug-dir "$DBG" "$OUT/$SID"
like "$(jq -r --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" --arg m "$BIN" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .user_stack.frames[] | select(.module == $m) | "\(.symbol)/\(.symbolized)"] | join(" ")' "$TMPD/d4.json")" \
	'^slow_nap/build-id main/build-id( _start/build-id)?$' "d) rebuilt, --debug-dir: symbolized from the debug file of the recorded build-id"

# --- d) C++, demangled --------------------------------------------------------------------
# Names demangled in show and flame (the recorder stores them as the symbol table has them).
# The nap makes its syscall itself: the frame-pointer walk then finds Napper<int>::nap too (libc's
# wrappers keep no frame pointer, so their caller is skipped), and the check does not hang on the
# preload library's unwound stack, which 19-own-waits and 90-unwind test.
CXXOUT=$TMPD/cxx.d
cat >"$TMPD/cxxnap.cc" <<'EOF'
#include <sys/syscall.h>
#include <time.h>
namespace work {
template <typename T> struct Napper {
	__attribute__((noinline)) static void nap(T ms)
	{
		struct timespec ts = { 0, (long)ms * 1000000L };
		long ret;

		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
				 : "rcx", "r11", "memory");
		(void)ret;
	}
};
}
int main() { work::Napper<int>::nap(60); return 0; }
EOF
if c++ -O2 -g -fno-omit-frame-pointer -o "$TMPD/bin/cxxnap" "$TMPD/cxxnap.cc" 2>"$TMPD/cxx.err"; then
	OUT=$CXXOUT rec x -t 40ms -- "$TMPD/bin/cxxnap"
	is "$RC" 0 "d) record -- cxxnap (C++): exit 0"
	L "$TMPD/fx.txt" "$TMPD/fx.err" flame "$CXXOUT"
	like "$(grep -m1 '^cxxnap;.*Napper' "$TMPD/fx.txt")" ';main;work::Napper<int>::nap\(int\);' \
		"d) flame: the C++ frame demangled, work::Napper<int>::nap(int)" || {
		diag_file "$TMPD/fx.txt" "  "
		cat "$CXXOUT"/*/summary.json | jq -c '.outliers[] | {syscall, flags, source: .user_stack.source}' |
			while read -r l; do diag "  $l"; done
	}
	# The snapshot of the nap: under load a start-up wait for the CPU may make one of its own.
	XID=$(for id in $(complete "$CXXOUT"); do
		grep -q 'Napper' "$CXXOUT/$id/summary.json" && echo "$id" && break
	done)
	L "$TMPD/sx.txt" "$TMPD/sx.err" show "$CXXOUT/${XID:-none}"
	like "$(grep -m1 'Napper' "$TMPD/sx.txt")" '^    work::Napper<int>::nap\(int\)\+0x[0-9a-f]+  .*cxxnap\.cc:[0-9]+  \(cxxnap\)$' \
		"d) show: demangled, with its source line" || diag_file "$TMPD/sx.txt" "  " 30
else
	fail "d) c++ builds a C++ workload"
	diag_file "$TMPD/cxx.err" "  "
fi

# --- e) broken inputs -------------------------------------------------------------------------
C=$TMPD/broken
mkdir -p "$C"
cp -a "$OUT/." "$C/"
X0=${IDS[0]:-none} X1=${IDS[1]:-none}
head -c 300 "$OUT/$X0/summary.json" >"$C/$X0/summary.json"
jq '.version = 7' "$OUT/$X1/summary.json" >"$C/$X1/summary.json"
# An incomplete one: its trace written, its summary.json not (yet).
cp -a "$OUT/$SID" "$C/29991231T000000.000Z-9999"
rm "$C/29991231T000000.000Z-9999/summary.json"
L "$TMPD/e1.json" "$TMPD/e1.err" report --json "$C"
is "$RC" 0 "e) report on a directory with broken snapshots: exit 0 (the rest is reported)"
is "$(jq -c '[.snapshots[] | select(.status != "complete") | "\(.id):\(.status)"]' "$TMPD/e1.json")" \
	"[\"$X0:corrupt\",\"$X1:corrupt\",\"29991231T000000.000Z-9999:incomplete\"]" \
	"e) --json lists the truncated, the wrong-version and the incomplete one"
is "$(jq -r '.snapshots[] | select(.status != "complete") | .reason' "$TMPD/e1.json" | paste -sd'|')" \
	"$C/$X0/summary.json: not JSON: it ends in the middle (truncated?)|$C/$X1/summary.json: version 7, this latsnap reads version 1|$C/29991231T000000.000Z-9999/summary.json: missing: the snapshot is incomplete" \
	"e) each with its reason, naming the file"
BROKEN_N=$(jq -s '[.[].outliers | length] | add' "$OUT/$X0/summary.json" "$OUT/$X1/summary.json")
is "$(jq .system.count "$TMPD/e1.json")" "$((NALL - BROKEN_N))" \
	"e) the outliers of the other snapshots are still counted ($NALL - $BROKEN_N)"
L "$TMPD/e1.txt" "$TMPD/e1t.err" report "$C"
ok 'grep -q "^  $X0: corrupt: $C/$X0/summary.json: not JSON" "$TMPD/e1.txt"' "e) text: listed under 'Not reported' with the reason"
is "$(grep -c '' "$TMPD/e1t.err")" 2 "e) stderr: one line per corrupt summary" || diag_file "$TMPD/e1t.err" "  "
L "$TMPD/e2.txt" "$TMPD/e2.err" show "$C/$X0"
is "$RC/$(cat "$TMPD/e2.err")" "1/latsnap: show: $C/$X0/summary.json: not JSON: it ends in the middle (truncated?)" \
	"e) show on a truncated summary.json: exit 1, one line naming it"
L "$TMPD/e3.txt" "$TMPD/e3.err" show "$C/29991231T000000.000Z-9999"
is "$RC/$(cat "$TMPD/e3.err")" "1/latsnap: show: $C/29991231T000000.000Z-9999/summary.json: missing: the snapshot is incomplete" \
	"e) show on an incomplete snapshot: exit 1, one line naming the missing file"
# A trace without the stream that holds the nap's latsnap:user_stack event.
M=$TMPD/m/$SID
mkdir -p "$TMPD/m"
cp -a "$OUT/$SID" "$M"
# latsnap records it (the target runs no tracer): its payload names the thread. It is in
# latsnap's own trace (trace/latsnap/, one stream); in the earlier layout, in LTTng's stream of
# the CPU latsnap wrote it from.
if babeltrace2 "$M/trace/latsnap" 2>/dev/null | grep -qE "latsnap:user_stack: \{ vpid = [^}]*\}, \{ tid = $STID,"; then
	CPU=own
	STREAM=$M/trace/latsnap/stream
else
	CPU=$(babeltrace2 "$M/trace" 2>/dev/null | grep "latsnap:user_stack: { cpu_id = [0-9]* }, {[^}]*}, { tid = $STID," | head -n 1 | sed 's/.*cpu_id = \([0-9]*\).*/\1/')
	STREAM=$(find "$M/trace" -name "*_${CPU:-x}" -type f | head -n 1)
fi
ok '[ -f "$STREAM" ] && rm -f "$STREAM"' "e) the stream file of CPU $CPU removed ($(basename "${STREAM:-none}"))"
L "$TMPD/e4.txt" "$TMPD/e4.err" show "$M"
is "$RC" 1 "e) show on a trace with a stream missing: exit 1"
like "$(cat "$TMPD/e4.err")" "latsnap: show: $M/trace: the latsnap:user_stack event of tid $STID .* not in the trace" \
	"e) the error names the trace and what is missing from it"
find "$M/trace" -name metadata -delete
L "$TMPD/e5.txt" "$TMPD/e5.err" show "$M"
is "$RC" 1 "e) show on a trace without metadata: exit 1"
like "$(head -n 1 "$TMPD/e5.err")" "^latsnap: ctf: $M/trace: " "e) the error names the trace"
ok 'grep -q "cause: Requested sleep" "$TMPD/e5.txt"' "e) and the summary is still shown"
# A snapshot with the traces of two users, as when a process of another user traced: the second
# one from a session of its own (another UUID), its statedump of a sleeper put in as uid 4242's.
U=$TMPD/u/$SID
mkdir -p "$TMPD/u"
cp -a "$OUT/$SID" "$U"
OSESS=latsnap96-$$
_lttng_sessions="$_lttng_sessions $OSESS"
lttng create "$OSESS" --output="$TMPD/other" >/dev/null &&
	lttng enable-event -u -s "$OSESS" 'lttng_ust_statedump:*' >/dev/null &&
	lttng start "$OSESS" >/dev/null &&
	LD_PRELOAD=liblttng-ust.so.1 LTTNG_UST_REGISTER_TIMEOUT=3000 "$WL/sleeper" 1 >/dev/null 2>&1
lttng_trace_stop "$OSESS"
OMETA=$(find "$TMPD/other" -name metadata | head -n 1)
mkdir -p "$U/trace/ust/uid/4242"
ok '[ -n "$OMETA" ] && cp -a "$(dirname "$OMETA")" "$U/trace/ust/uid/4242/"' "e) a trace of another session (another UUID) put in the snapshot as uid 4242's"
L "$TMPD/e10.json" "$TMPD/e10.err" show --json "$U"
is "$RC" 0 "e) show on a snapshot holding the traces of two users (different UUIDs): exit 0" ||
	diag_file "$TMPD/e10.err" "  stderr: "
is "$(jq -c --argjson t "${STID:-0}" --argjson s "${SSTART:-0}" '[.outliers[] | select(.tid == $t and .start_ns == $s) | .timeline[] | select(.name == "latsnap:user_stack" and .tid == $t)] | length > 0' "$TMPD/e10.json")" true \
	"e) two users' traces: the nap's timeline is still read"
# Another host's snapshot.
H=$TMPD/h/$SID
mkdir -p "$TMPD/h"
cp -a "$OUT/$SID" "$H"
jq '.host = "elsewhere.example"' "$OUT/$SID/summary.json" >"$H/summary.json"
L "$TMPD/e6.txt" "$TMPD/e6.err" show "$H"
is "$RC" 0 "e) show on another host's snapshot: exit 0"
like "$(cat "$TMPD/e6.err")" "^latsnap: show: warning: $H/summary.json: recorded on host elsewhere.example, this is " \
	"e) a warning names the file and the host"
mkdir "$TMPD/empty"
for cmd in report flame; do
	L "$TMPD/e7.txt" "$TMPD/e7.err" $cmd "$TMPD/empty"
	is "$RC/$(cat "$TMPD/e7.err")" "1/latsnap: $cmd: $TMPD/empty: no snapshot in it" "e) $cmd on an empty directory: exit 1, naming it"
	L "$TMPD/e8.txt" "$TMPD/e8.err" $cmd "$TMPD/nonexistent"
	is "$RC/$(cat "$TMPD/e8.err")" "1/latsnap: $TMPD/nonexistent: No such file or directory" "e) $cmd on a missing directory: exit 1, naming it"
done
L "$TMPD/e9.txt" "$TMPD/e9.err" show "$TMPD/nonexistent"
is "$RC/$(cat "$TMPD/e9.err")" "1/latsnap: show: $TMPD/nonexistent: No such file or directory" "e) show on a missing directory: exit 1, naming it"
L "$TMPD/e11.txt" "$TMPD/e11.err" show "$OUT"
is "$RC/$(cat "$TMPD/e11.err")" "1/latsnap: show: $OUT: not a snapshot (no summary.json, no trace/ in it): show takes one snapshot, DIR/ID" \
	"e) show on an output directory: exit 1, saying it wants DIR/ID"
for args in "report --by color $OUT" "report" "show --before soon $OUT/$SID" "show" "flame --nope $OUT" "flame $OUT $OUT"; do
	# shellcheck disable=SC2086 # the words are the arguments
	L "$TMPD/u.txt" "$TMPD/u.err" $args
	is "$RC/$(grep -c '' "$TMPD/u.err")" "2/1" "e) latsnap $args: exit 2, one error line"
done
for cmd in report show flame; do
	L "$TMPD/h.txt" "$TMPD/h.err" $cmd --help
	ok '[ "$RC" = 0 ] && grep -q "^Usage: latsnap $cmd" "$TMPD/h.txt"' "$cmd --help: exit 0 and a usage text"
done

diag "wall time: $((($(date +%s%N) - T_START) / 1000000)) ms"
check_summaries "$OUT" "$TMPD/wc" "$TMPD/n" "$TMPD/h"
done_testing
