# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for latsnap's integration tests: TAP output, prerequisites, and
# running `latsnap record --json` (record_json: --no-snapshot; record_snap:
# with snapshots) with a time limit.
#
# Each tests/integration/NN-name.t sources this file, then:
#   require_record sleeper    # root, jq, latsnap and the workload
#   record_json "$T/out" "$T/err" -- "$WL/sleeper" 100
#   is "$(jcount "$T/out" 'select(.kind == "syscall")')" 1 "one outlier"
#   done_testing
#
# ok COND MSG: COND is either a number (an exit status: 0 passes) or a
#   shell command string evaluated with eval (passes if it succeeds):
#     ok '[ -s "$f" ]' "file is not empty";  grep -q x f; ok $? "has x"
# is GOT EXPECTED MSG: string equality.
# between VAL LO HI MSG: LO <= VAL <= HI as numbers (integers or decimals).
#
# A missing prerequisite fails the test under CI (CI=true) and skips it
# otherwise.

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The build tree under test: build/, or build-asan/ for make check-asan.
BUILD=${LATSNAP_BUILD:-$ROOT/build}
LATSNAP=${LATSNAP:-$BUILD/latsnap}
WL=${WL:-$BUILD/workloads}
# Time limit of one latsnap run (seconds).
LATSNAP_TIMEOUT=${LATSNAP_TIMEOUT:-60}

_tap_n=0
_tap_failed=0
_tap_planned=
_tap_started=0

# A scratch directory, removed at exit unless KEEP_TMP=1.
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/latsnap-test.XXXXXX")
_tap_cleanup() {
	local pid s
	for pid in ${_bg_pids:-}; do
		kill -TERM "$pid" 2>/dev/null
	done
	for s in ${_lttng_sessions:-}; do
		lttng destroy "$s" >/dev/null 2>&1
	done
	# The session daemon we started goes, unless another test (run alongside) has a session.
	# It goes before the next test starts: one that saw it still there, dying, would use it.
	if [ -n "${_started_sessiond:-}" ] && ! lttng list 2>/dev/null | grep -q '^ *[0-9])'; then
		kill -TERM "$_started_sessiond" 2>/dev/null
		for _i in $(seq 100); do
			kill -0 "$_started_sessiond" 2>/dev/null || break
			sleep 0.05
		done
	fi
	if [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "# kept $TMPD" >&2
	else
		rm -rf "$TMPD"
	fi
}
trap _tap_cleanup EXIT
_bg_pids=

# Remember a background process to kill at exit.
track_bg() { _bg_pids="$_bg_pids $1"; }

plan() {
	_tap_planned=$1
	_tap_started=1
	echo "1..$1"
}

# diag MSG...: each argument (and each line of it) as a "# " line.
diag() {
	local arg line
	for arg in "$@"; do
		printf '%s\n' "$arg" | while IFS= read -r line; do printf '# %s\n' "$line"; done
	done
}

# _tap_holds COND: whether COND, as ok takes it, passes.
_tap_holds() {
	if [[ $1 =~ ^[0-9]+$ ]]; then
		[ "$1" -eq 0 ]
	else
		eval "$1"
	fi
}

# todo_ok COND MSG: a test marked TODO (reported, never fails the file).
todo_ok() {
	local cond=$1; shift
	local pass=0
	_tap_holds "$cond" && pass=1
	_tap_n=$((_tap_n + 1))
	_tap_started=1
	if [ "$pass" = 1 ]; then
		echo "ok $_tap_n - $* # TODO"
	else
		echo "not ok $_tap_n - $* # TODO"
	fi
}

# diag_file FILE [PREFIX] [MAXLINES]: each line of FILE as a diag line.
diag_file() {
	local f=$1 prefix=${2:-} max=${3:-60} line n=0
	[ -f "$f" ] || { diag "${prefix}(no file $f)"; return; }
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		if [ "$n" -gt "$max" ]; then
			diag "${prefix}... ($(wc -l <"$f") lines in all)"
			break
		fi
		printf '# %s%s\n' "$prefix" "$line"
	done <"$f"
}

_tap_result() {
	local pass=$1; shift
	_tap_n=$((_tap_n + 1))
	_tap_started=1
	if [ "$pass" = 1 ]; then
		echo "ok $_tap_n - $*"
		return 0
	fi
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $*"
	# Where the test is: the first caller outside this file.
	local i=1 src
	while [ "${BASH_SOURCE[$i]:-}" = "${BASH_SOURCE[0]}" ]; do i=$((i + 1)); done
	src=${BASH_SOURCE[$i]:-?}
	diag "  Failed test '$*'" "  at ${src##*/} line ${BASH_LINENO[$((i - 1))]:-?}."
	return 1
}

# _tap_check PASS MSG DIAG...: the result of a check (PASS 1 or 0); a failed one adds the DIAG
# lines, which say what was compared.
_tap_check() {
	local pass=$1 msg=$2; shift 2
	_tap_result "$pass" "$msg" && return 0
	diag "$@"
	return 1
}

ok() {
	local cond=$1; shift
	local pass=0
	_tap_holds "$cond" && pass=1
	_tap_result "$pass" "$*"
}

is() {
	local got=$1 exp=$2 pass=0; shift 2
	[ "$got" = "$exp" ] && pass=1
	_tap_check "$pass" "$*" "         got: '$got'" "    expected: '$exp'"
}

isnt() {
	local got=$1 exp=$2 pass=0; shift 2
	[ "$got" != "$exp" ] && pass=1
	_tap_check "$pass" "$*" "         got: '$got'" "    expected anything else"
}

# like STRING REGEX MSG (bash extended regex)
like() {
	local got=$1 re=$2 pass=0; shift 2
	[[ $got =~ $re ]] && pass=1
	_tap_check "$pass" "$*" "         got: '$got'" "    expected to match: /$re/"
}

_is_number() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }

between() {
	local val=$1 lo=$2 hi=$3; shift 3
	local pass=0
	if _is_number "$val" && _is_number "$lo" && _is_number "$hi"; then
		if [[ $val$lo$hi =~ ^[-0-9]+$ ]] && [ ${#val} -lt 19 ] && [ ${#lo} -lt 19 ] && [ ${#hi} -lt 19 ]; then
			[ "$val" -ge "$lo" ] && [ "$val" -le "$hi" ] && pass=1
		else
			awk -v v="$val" -v l="$lo" -v h="$hi" 'BEGIN { exit !(v + 0 >= l + 0 && v + 0 <= h + 0) }' && pass=1
		fi
	fi
	_tap_check "$pass" "$*" "         got: '$val'" "    expected: between $lo and $hi"
}

pass() { _tap_result 1 "$*"; }
fail() { _tap_result 0 "$*"; }

# skip_tests N REASON: N skipped tests
skip_tests() {
	local n=$1 i; shift
	for ((i = 0; i < n; i++)); do
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # SKIP $*"
	done
}

# check_summaries PATH...: every summary.json under the PATHs conforms to summary.json's schema
# (tests/schemas/summary.schema.json), one test; none found, no test.
check_summaries() {
	local out rc
	[ -n "$(find "$@" -name summary.json -print -quit 2>/dev/null)" ] || return 0
	out=$(/usr/bin/python3 "$ROOT/tests/schemas/check-summaries.py" "$@" 2>&1)
	rc=$?
	_tap_result "$([ "$rc" = 0 ] && echo 1 || echo 0)" \
		"every summary.json written conforms to tests/schemas/summary.schema.json ($(tail -n 1 <<<"$out"))"
	[ "$rc" = 0 ] || diag "$(head -n 20 <<<"$out")"
}

done_testing() {
	# What latsnap wrote in this test's scratch directory, unless the test damages summaries on
	# purpose (SUMMARY_SCHEMA=skip; it checks its own with check_summaries).
	if [ -z "$_tap_planned" ] && [ "${SUMMARY_SCHEMA:-check}" != skip ]; then
		check_summaries "$TMPD"
	fi
	if [ -z "$_tap_planned" ]; then
		echo "1..$_tap_n"
	elif [ "$_tap_planned" != "$_tap_n" ]; then
		diag "planned $_tap_planned tests but ran $_tap_n"
		_tap_failed=$((_tap_failed + 1))
	fi
	if [ "$_tap_failed" -gt 0 ]; then
		diag "failed $_tap_failed of $_tap_n tests"
		exit 1
	fi
	exit 0
}

# skip_all REASON: no test can run. Under CI this is a failure.
skip_all() {
	if [ "${CI:-}" = true ]; then
		if [ "$_tap_started" = 0 ]; then
			echo "1..1"
			echo "not ok 1 - prerequisite missing: $*"
		fi
		echo "Bail out! prerequisite missing under CI: $*"
		exit 1
	fi
	if [ "$_tap_started" = 0 ]; then
		echo "1..0 # SKIP $*"
		exit 0
	fi
	# Some tests already ran: skip is no longer possible, stop here.
	echo "Bail out! $*"
	exit 1
}

# skip_kernel REASON: the running kernel cannot give what this file tests (REASON names the
# feature it lacks and the release that brought it): skipped, under CI too, since no machine can
# change that. For the older kernels make check-kernels boots.
skip_kernel() {
	if [ "$_tap_started" = 0 ]; then
		echo "1..0 # SKIP this kernel ($(uname -r)) $*"
		exit 0
	fi
	echo "Bail out! this kernel ($(uname -r)) $*"
	exit 1
}

# kernel_has_cookies: whether the kernel has BPF cookies (bpf_get_attach_cookie(), Linux 5.15),
# which record --request needs.
kernel_has_cookies() {
	bpftool feature probe kernel 2>/dev/null | grep -q 'bpf_get_attach_cookie'
}

# bail_out REASON: this file cannot go on, for a reason of its own making (not a missing
# prerequisite): a failure, with or without CI. Not TAP's "Bail out!", which would stop the
# other files too.
bail_out() {
	fail "cannot go on: $*"
	done_testing
}

require_root() {
	[ "$(id -u)" = 0 ] || skip_all "needs root"
}

require() {
	local cmd
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 || skip_all "needs $cmd"
	done
}

require_latsnap() {
	[ -x "$LATSNAP" ] || skip_all "$LATSNAP not built (run make)"
}

require_workloads() {
	local w
	for w in "$@"; do
		[ -x "$WL/$w" ] || skip_all "workload $WL/$w not built (run make)"
	done
}

# require_record WORKLOAD...: what recording WORKLOADs and reading the JSON takes: root, jq, latsnap
# and the workloads.
require_record() {
	require_root
	require jq
	require_latsnap
	require_workloads "$@"
}

# no_ust_wait: for a test not about LTTng. When some session daemon runs on the machine,
# lttng-ust's constructor in COMMAND waits for it to answer (up to 3 s), a futex outlier of its
# own that can pass the threshold on a loaded machine.
no_ust_wait() { export LTTNG_UST_REGISTER_TIMEOUT=0; }

# record_json OUT ERR [--] ARGS...: runs
#   $LATSNAP record --no-snapshot --json ARGS...
# with a time limit, stdout to OUT, stderr to ERR. Sets RC to its exit status
# and ELAPSED_MS to its wall time. On a nonzero status (unless
# RECORD_EXPECT_RC says that status is expected) dumps stderr as diag lines.
RC=
ELAPSED_MS=
record_json() {
	local out=$1 err=$2; shift 2
	[ "${1:-}" = -- ] && shift
	local t0 t1
	t0=$(date +%s%N)
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot --json "$@" >"$out" 2>"$err"
	RC=$?
	t1=$(date +%s%N)
	ELAPSED_MS=$(((t1 - t0) / 1000000))
	if [ "$RC" != "${RECORD_EXPECT_RC:-0}" ]; then
		diag "latsnap record --no-snapshot --json $* exited $RC after ${ELAPSED_MS} ms$([ "$RC" = 124 ] && echo ' (timed out)'); its stderr:"
		diag_file "$err" "  stderr: "
	fi
	return 0
}

# record_snap TAG ARGS...: `latsnap record --json ARGS` (snapshot mode) with the time limit; stdout
# in $TMPD/TAG.out, stderr in $TMPD/TAG.err, COMMAND's WL_LOG in $TMPD/TAG.log. Sets RC; dumps
# stderr when the status is not RECORD_EXPECT_RC (default 0).
record_snap() {
	local tag=$1
	shift
	WL_LOG=$TMPD/$tag.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json "$@" \
		>"$TMPD/$tag.out" 2>"$TMPD/$tag.err"
	RC=$?
	if [ "$RC" != "${RECORD_EXPECT_RC:-0}" ]; then
		diag "latsnap record --json $* exited $RC$([ "$RC" = 124 ] && echo ' (timed out)'); its stderr:"
		diag_file "$TMPD/$tag.err" "  stderr: "
	fi
	return 0
}

# run_latsnap OUT ERR ARGS...: runs $LATSNAP ARGS... with the time limit;
# sets RC.
run_latsnap() {
	local out=$1 err=$2; shift 2
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" "$@" >"$out" 2>"$err"
	RC=$?
	return 0
}

# ndjson_ok FILE: every non-empty line of FILE is one JSON object.
ndjson_ok() {
	jq -e -R -s 'split("\n") | map(select(length > 0) | fromjson | type == "object") | all' \
		"$1" >/dev/null 2>&1
}

# jcount FILE [FILTER]: number of outliers (lines) of FILE for which FILTER
# yields a value, e.g. jcount out 'select(.kind == "syscall")'.
jcount() {
	local f=$1 filter=${2:-.}
	jq -s "[.[] | $filter] | length" "$f" 2>/dev/null || echo "invalid-json"
}

# NOT_LOADING: a jq filter that drops a workload's loading from a cold page cache. A binary just
# built, ld.so or a library read from disk blocks execve, an mmap or the loader's first page
# faults for real (166 ms once, on a CI machine right after the build): a true outlier, but not
# what a test of "no outlier" is about. Only disk reads of those calls are dropped, and the exec
# itself whatever it waited for (once 43 ms blocked in execve, woken from a softirq, its stack
# matching no cause rule: ci58); a wait of the workload's own is still counted. Use: jcount out
# "$NOT_LOADING".
LOADING='(((.syscall // "") | test("^(execve|execveat)$")) or
	((((.syscall // "") | test("^(mmap|openat|read|pread64)$")) or .kind == "sleep")
	and (.cause == "Reading a file from disk" or .cause == "Page fault reading a mapped file from disk")))'
NOT_LOADING="select($LOADING | not)"

# loading_note FILE: a diag line for each outlier NOT_LOADING drops, so a run that had one says so.
loading_note() {
	jq -r "select($LOADING) | \"(left out: the workload loading from disk: \\(.syscall // .kind) \\(.duration_ns/1e6) ms, \\(.cause))\"" \
		"$1" 2>/dev/null | while IFS= read -r line; do diag "$line"; done
	return 0
}

# jfirst FILE FILTER EXPR: EXPR of the first outlier FILTER selects
# ("null" if none), e.g. jfirst out 'select(.comm == "waiter")' .duration_ns
jfirst() {
	local f=$1 filter=$2 expr=$3
	jq -s -c "[.[] | $filter] | (.[0] // null) | if . == null then null else ($expr) end" \
		"$f" 2>/dev/null || echo "invalid-json"
}

# dump_outliers FILE: one diag line per outlier (summary), for evidence.
dump_outliers() {
	local f=$1 n line
	[ -s "$f" ] || { diag "(no outliers)"; return 0; }
	if ! ndjson_ok "$f"; then
		diag "stdout is not NDJSON:"
		diag_file "$f" "  stdout: " 40
		return 0
	fi
	n=$(grep -c '' "$f")
	[ "$n" -gt 40 ] && diag "($n outliers; the first 40:)"
	head -n 40 "$f" | jq -r '"  \(.kind) pid=\(.pid) tid=\(.tid) comm=\(.comm) syscall=\(.syscall) dur=\(.duration_ns/1e6)ms on_cpu=\(.on_cpu_ns/1e6) blocked=\(.blocked_ns/1e6) rq=\(.runqueue_ns/1e6) sw=\(.switches) waker=\(.waker.comm // "null")/\(.waker.tid // "-") cause=\(.cause) flags=\(.flags)"' \
		2>/dev/null | while IFS= read -r line; do diag "$line"; done
	return 0
}

# dump_outlier_json FILE FILTER: the full JSON of the selected outliers.
dump_outlier_json() {
	jq -c "$2" "$1" 2>/dev/null | while IFS= read -r line; do diag "  $line"; done
}

# wl_log_get LOGFILE KEY [FIELD]: field FIELD (default 2) of the first
# "KEY ..." line of a workload's WL_LOG file.
wl_log_get() {
	local f=$1 key=$2 field=${3:-2}
	awk -v k="$key" -v n="$field" '$1 == k { print $n; exit }' "$f" 2>/dev/null
}

# hang_watch LOG OUT: in the background, waits for a workload's watchdog to log "hung" in LOG,
# then writes every thread's backtrace of the hung process (its "pid P" line) to OUT with gdb.
# The workload must run with WL_HANG_HOLD=SECONDS, so that it is still there to be looked at.
hang_watch() {
	local log=$1 out=$2
	(
		while ! grep -qs '^hung' "$log"; do sleep 0.2; done
		pid=$(awk '$1 == "pid" { print $2; exit }' "$log")
		if command -v gdb >/dev/null; then
			timeout 60 gdb -p "$pid" -batch -ex 'thread apply all bt' >"$out" 2>&1
		else
			echo "gdb not installed: no backtraces" >"$out"
		fi
	) &
	track_bg $!
}

# hang_summary OUT: diag lines from hang_watch's backtraces, threads with the same frames merged:
# "COUNT x fn <- caller <- ...", innermost first.
hang_summary() {
	[ -s "$1" ] || { diag "  no backtraces of the hung process"; return 0; }
	awk '/^Thread / { if (s != "") print s; s = ""; next }
		/^#[0-9]+ / { f = /signal handler called/ ? "<signal>" : ($3 == "in") ? $4 : $2
			s = (s == "" ? f : s " <- " f) }
		END { if (s != "") print s }' "$1" | sort | uniq -c | sort -rn | head -n 12 |
		while IFS= read -r line; do diag "  $line"; done
}

# Frame regexes (jq test()). GLUE_RE: the BPF tracing glue frames, built from the one list of
# them, glue_patterns[] in classify/frames.c (one { "text", GLUE_KIND } entry per line).
# shellcheck disable=SC2034 # used by the .t files
GLUE_RE=$(sed -nE 's/^[[:space:]]*\{ "([^"]+)", GLUE_(EXACT|PREFIX|HEX16|DIGITS) \},.*/\2 \1/p' \
	"$ROOT/classify/frames.c" | awk '
	$1 == "EXACT" { r = r sep "^" $2 "$" } $1 == "PREFIX" { r = r sep "^" $2 }
	$1 == "HEX16" { r = r sep "^" $2 "[0-9a-f]{16}" } $1 == "DIGITS" { r = r sep "^" $2 "[0-9]" }
	{ sep = "|" } END { print r }')
[ -n "$GLUE_RE" ] || { echo "lib.sh: no glue patterns in classify/frames.c" >&2; exit 1; }

# A jq condition: the outlier is a wait that ended, not one reported while it lasted (record
# --hang: still-blocked) or cut short by the end of the run (unfinished).
# shellcheck disable=SC2034 # used by the .t files
ENDED='((.flags // []) | map(select(startswith("still-blocked") or startswith("unfinished"))) | length == 0)'

# --- LTTng: a real session daemon and a real trace, read back with babeltrace2 ---

_lttng_sessions=
_started_sessiond=

# require_lttng: lttng, lttng-sessiond and babeltrace2 are there and a session daemon runs (one
# is started, UST only, when none does; it is stopped at exit).
require_lttng() {
	require lttng lttng-sessiond babeltrace2
	if ! pgrep -x lttng-sessiond >/dev/null; then
		lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 || skip_all "cannot start lttng-sessiond"
		_started_sessiond=$(pgrep -n -x lttng-sessiond)
	fi
}

# lttng_trace_start NAME DIR: a UST tracing session NAME that records latsnap:* events into DIR.
# Applications started after this register with the daemon before main() and trace.
lttng_trace_start() {
	local name=$1 dir=$2
	_lttng_sessions="$_lttng_sessions $name"
	lttng create "$name" --output="$dir" >/dev/null &&
		lttng enable-event -u -s "$name" 'latsnap:*' >/dev/null &&
		lttng start "$name" >/dev/null
}

# lttng_trace_stop NAME: flush and close the session; its trace is complete afterwards.
lttng_trace_stop() {
	lttng stop "$1" >/dev/null 2>&1
	lttng destroy "$1" >/dev/null 2>&1
}

# user_stacks DIR: one line per latsnap:user_stack event of the trace in DIR:
#   TID DEPTH TRUNCATED STATUS UNWIND_NS IP0 IP1 ...   (IPs in lower-case hex, innermost first)
user_stacks() {
	babeltrace2 "$1" 2>/dev/null | perl -ne '
		next unless /latsnap:user_stack:/;
		my %f = map { /^(\w+) = (\S+)$/ ? ($1, $2) : () } split /, /, ($1 // "") if /\{ (tid = [^\[]*?), _ips_length/;
		my @ips = map { lc } /\[\d+\] = (0x[0-9A-Fa-f]+)/g;
		print join(" ", @f{qw(tid depth truncated status unwind_ns)}, @ips), "\n";'
}

# ips_to_functions BINARY WL_LOG IP...: for each IP, the function of BINARY it falls in, or "?".
# The workload logs "fn NAME 0xADDR" (its runtime address) for each function of interest; sizes
# come from the symbol table. A caller's IP is a return address: it may equal the function's end.
ips_to_functions() {
	local bin=$1 log=$2; shift 2
	perl -e '
		my ($bin, $log, @ips) = @ARGV;
		my (%size, %addr);
		open(my $nm, "-|", "nm", "-S", "--defined-only", $bin) or die;
		while (<$nm>) { my @f = split; $size{$f[3]} = hex($f[1]) if @f == 4; }
		open(my $l, "<", $log) or die;
		while (<$l>) { my @f = split; $addr{$f[1]} = hex($f[2]) if $f[0] eq "fn"; }
		for my $i (0 .. $#ips) {
			my $ip = hex($ips[$i]); my $name = "?";
			for my $fn (keys %addr) {
				next unless defined $size{$fn};
				my ($lo, $hi) = ($addr{$fn}, $addr{$fn} + $size{$fn});
				if ($i == 0 ? ($ip >= $lo && $ip < $hi) : ($ip > $lo && $ip <= $hi)) { $name = $fn; last; }
			}
			print "$name\n";
		}' "$bin" "$log" "$@"
}

# --- unwound stacks in the JSON (user_stack of source "unwind") ---

# stack_names BIN WL_LOG OUT FILTER [INDEX]: the functions of BIN (addresses from WL_LOG, as
# ips_to_functions) that the frames[].addr of the user_stack of outlier INDEX (default 0) among
# those FILTER selects in the NDJSON file OUT fall in, innermost first, space-separated, "?" for
# other code; empty when it has no frames. Whatever the stack's source: check .user_stack.source.
stack_names() {
	local bin=$1 log=$2 out=$3 filter=$4 idx=${5:-0} addrs
	mapfile -t addrs < <(jq -s -r "[.[] | $filter][$idx].user_stack.frames[]?.addr" "$out" 2>/dev/null)
	((${#addrs[@]})) && ips_to_functions "$bin" "$log" "${addrs[@]}" | paste -sd' '
}

# stack_symbols OUT FILTER [INDEX]: the symbols latsnap gave those frames, space-separated, "?"
# for a frame it could not name.
stack_symbols() {
	jq -s -r "[.[] | $2][${3:-0}] | [.user_stack.frames[]? | .symbol // \"?\"] | join(\" \")" "$1" 2>/dev/null
}

# wl_spans LOG MIN_NS KINDS: a workload's logged waits ("KIND TID START END") of MIN_NS or more,
# as JSON lines {label, tid, start, end}: "idle" lines idle, those whose kind matches the regex
# KINDS latency.
wl_spans() {
	awk -v min="$2" -v kinds="^($3)\$" '($1 ~ kinds || $1 == "idle") && $4 - $3 >= min {
		printf "{\"label\":\"%s\",\"tid\":%s,\"start\":%s,\"end\":%s}\n",
			($1 == "idle" ? "idle" : "latency"), $2, $3, $4 }' "$1"
}

# wl_score SPANS OUT: "TP FN FP TN" of the spans in file SPANS (wl_spans) against the outliers of
# OUT: a span is reported when an outlier of its thread overlaps it.
wl_score() {
	jq -n -r --slurpfile s "$1" --slurpfile o "$2" '
		def reported($x): any($o[]; .tid == $x.tid and .start_ns <= $x.end and
			.end_ns >= $x.start);
		[$s[] | {label: .label, r: reported(.)}] |
		"\(map(select(.label == "latency" and .r)) | length) \(map(select(.label == "latency" and (.r | not))) | length) \(map(select(.label == "idle" and .r)) | length) \(map(select(.label == "idle" and (.r | not))) | length)"' 2>/dev/null || echo "x x x x"
}
