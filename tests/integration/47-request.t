#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Requests (record --request START,END): an operation of the target between two probes is one
# outlier of kind "request" when it lasts the threshold or more, with where its time went: its
# waits ("waits", each an OUTLIER of kind syscall|sleep) and where it ran ("cpu_profile").
#  a) reqserver, whose thread "worker" handles requests 5:0 5:0 150:0 0:120 5:0
#     (COMPUTE_MS:SLEEP_MS) in handle_request(), recorded with
#     --request uprobe:$WL/reqserver:handle_request (from its entry to its return):
#     - exactly two request outliers: the 150 ms computation and the 120 ms sleep, none for the
#       5 ms ones; request.probe as given, request.arg null (a uprobe has no argument text);
#     - the computation: within the request the workload logged, on CPU >= 80%, a cpu_profile
#       that has crunch() and weighs about the time on CPU;
#     - the sleep: blocked >= 80%, one nanosleep wait of ~120 ms in waits[], from wait_io();
#     - not reported twice: no outlier of kind syscall or sleep of the worker while a request
#       lasts (the 120 ms nanosleep is a wait of its request, not an outlier of its own).
#  a2) fork, exec, exit: a child forked by the worker handles a slow request and exits: a
#     request outlier of the child (its pid); a child that execs the same file ($WL/reqserver) is
#     probed in its new image too (the probe is on the file); one that execs a copy of it at
#     another path is not (another file, even with the same symbols). latsnap exits 0 each time.
#  b) PostgreSQL 15, a throwaway cluster run under record --request with the query__start and
#     query__done USDT probes: session 1 updates a row in a transaction and commits 1.5 s later;
#     session 2's update of the same row waits for it. Its query is a request outlier of its
#     backend (request.arg is the query text), ~1.5 s, blocked, caused by a lock wait, with an
#     epoll_wait wait in ProcSleep/WaitOnLock, and session 1's backend in its wait chain (in the
#     snapshot's summary.json). Twenty fast `SELECT 1` are no request outlier.
# Every latsnap run is under timeout: without the feature, each case fails at its record step,
# with latsnap's stderr as diag lines.
set -u
. "$(dirname "$0")/lib.sh"

require_record reqserver
require babeltrace2
require_lttng
kernel_has_cookies || skip_kernel "lacks BPF cookies (Linux 5.15), which record --request needs"

T_START=$(date +%s%N)
PROBE=uprobe:$WL/reqserver:handle_request
MS=1000000
# One latsnap run of a): a few seconds; the limit only keeps a hung run from hanging the test.
A_TIMEOUT=${A_TIMEOUT:-30}

# --- PostgreSQL: a throwaway server, stopped at exit whatever happens ---------------------------
PG_BIN=/usr/lib/postgresql/15/bin
PGD=$TMPD/pg
PG_BG=

# pg_kill: the server of $PGD stopped (immediate), then every process of it killed.
pg_kill() {
	local pm i
	[ -f "$PGD/data/postmaster.pid" ] || return 0
	pm=$(head -n 1 "$PGD/data/postmaster.pid" 2>/dev/null)
	timeout 20 runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PGD/data" stop -m immediate -w \
		>/dev/null 2>&1
	if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; then
		for i in $(ps -o pid= --ppid "$pm" 2>/dev/null) "$pm"; do
			kill -KILL "$i" 2>/dev/null
		done
	fi
}

_47_cleanup() {
	local pid
	pg_kill
	for pid in $PG_BG; do
		kill -KILL "$pid" 2>/dev/null
	done
	_tap_cleanup
}
trap _47_cleanup EXIT

# --- helpers -----------------------------------------------------------------------------------

# ran TAG WHAT: the record run of TAG exited 0 and its stdout is NDJSON; when not, says so (its
# stderr is already in the diag lines, from record_snap) and fails.
ran() {
	local tag=$1 what=$2
	is "$RC" 0 "$what: latsnap record exits 0" || {
		[ "$RC" = 2 ] && grep -q -- '--request' "$TMPD/$tag.err" 2>/dev/null &&
			diag "  latsnap rejects --request: record --request is not there yet"
		diag "  $what: nothing more to check without a run"
		return 1
	}
	ok 'ndjson_ok "$TMPD/$tag.out"' "$what: stdout is NDJSON" || {
		diag_file "$TMPD/$tag.out" "  stdout: " 20
		return 1
	}
	# A crash of latsnap, the workload or a child: no trace of one on stderr.
	ok '! grep -Eqi "segmentation fault|core dumped|sanitizer|runtime error|assertion|stack smashing" "$TMPD/$tag.err"' \
		"$what: nothing crashed (no crash report on stderr)" || diag_file "$TMPD/$tag.err" "  stderr: "
	return 0
}

# dump_requests FILE: one diag line per request outlier of FILE, its waits and top profile frames.
dump_requests() {
	jq -r 'select(.kind == "request") |
		"  request pid=\(.pid) tid=\(.tid) comm=\(.comm) \(.start_ns)..\(.end_ns) dur=\(.duration_ns / 1e6)ms on_cpu=\(.on_cpu_ns / 1e6) blocked=\(.blocked_ns / 1e6) rq=\(.runqueue_ns / 1e6) probe=\(.request.probe) arg=\(.request.arg) cause=\(.cause) flags=\(.flags)",
		(.waits[]? | "    wait \(.kind) \(.syscall) \(.duration_ns / 1e6)ms user: \([.user_stack.frames[]?.symbol // "?"] | join(" < "))"),
		(.cpu_profile[0:3][]? | "    cpu \(.weight_ns / 1e6)ms: \([.frames[]?.symbol // "?"] | join(" < "))")' \
		"$1" 2>/dev/null | while IFS= read -r line; do diag "$line"; done
}

# req_span LOG N: "START END" of the Nth "req" line of LOG (1-based; -1: the last); "0 0" if none.
req_span() {
	awk -v n="$2" '$1 == "req" { s[++c] = $3 " " $4 }
		END { if (n < 0) n = c + n + 1; print (n in s) ? s[n] : "0 0" }' "$1" 2>/dev/null || echo "0 0"
}

# the_request FILE START END: the request outliers of FILE that overlap [START, END], one a line.
the_request() {
	jq -c "select(.kind == \"request\" and .start_ns < $3 and .end_ns > $2)" "$1" 2>/dev/null
}

# not_twice FILE TID LOG WHAT: no outlier of kind syscall or sleep of thread TID overlaps a
# request LOG logged.
not_twice() {
	local f=$1 tid=$2 log=$3 what=$4 spans
	spans=$(awk '$1 == "req" { printf "%s[%s,%s]", sep, $3, $4; sep = "," }' "$log")
	is "$(jq -c "select((.kind == \"syscall\" or .kind == \"sleep\") and .tid == ${tid:-0}) |
		select(. as \$o | [$spans] | any(\$o.start_ns < .[1] and \$o.end_ns > .[0]))" "$f" 2>/dev/null |
		grep -c '')" 0 "$what: no syscall or sleep outlier of the worker ($tid) while a request lasts" ||
		dump_outliers "$f"
}

# --- a) reqserver ------------------------------------------------------------------------------
case_main() {
	local W PID S E O N WSEL
	LATSNAP_TIMEOUT=$A_TIMEOUT record_snap ra -t 50ms --request "$PROBE" -o "$TMPD/ra.d" -- \
		"$WL/reqserver" 5:0 5:0 150:0 0:120 5:0
	ran ra "reqserver" || return
	W=$(awk '$1 == "tid" && $2 == "worker" { print $3; exit }' "$TMPD/ra.log")
	PID=$(wl_log_get "$TMPD/ra.log" pid)
	N=$(jcount "$TMPD/ra.out" 'select(.kind == "request")')
	is "$N" 2 "reqserver: exactly two request outliers (150 ms on CPU, 120 ms asleep)" || {
		dump_requests "$TMPD/ra.out"
		dump_outliers "$TMPD/ra.out"
	}
	for i in 1 2 5; do
		read -r S E <<<"$(req_span "$TMPD/ra.log" $i)"
		is "$(the_request "$TMPD/ra.out" "$S" "$E" | grep -c '')" 0 \
			"reqserver: no request outlier for request $((i - 1)) (5 ms)"
	done
	is "$(jq -r 'select(.kind == "request") | "\(.pid) \(.tid) \(.comm)"' "$TMPD/ra.out" 2>/dev/null | sort -u | paste -sd' ')" \
		"$PID $W worker" "reqserver: they are the worker thread's ($PID/$W)"
	is "$(jq -r 'select(.kind == "request") | .request.probe' "$TMPD/ra.out" 2>/dev/null | sort -u)" "$PROBE" \
		"reqserver: request.probe is the probe as given"
	is "$(jq -r 'select(.kind == "request") | .request.arg' "$TMPD/ra.out" 2>/dev/null | sort -u)" null \
		"reqserver: request.arg is null (a uprobe has no argument text)"
	is "$(jq -s '[.[] | select(.kind == "request") | (.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs | select(. > 2000)] | length' "$TMPD/ra.out")" \
		0 "reqserver: on_cpu + blocked + runqueue == duration (2 us) in each"

	# The computation, request 2 (150:0).
	read -r S E <<<"$(req_span "$TMPD/ra.log" 3)"
	O=$(the_request "$TMPD/ra.out" "$S" "$E" | head -n 1)
	J() { jq -r "$1" <<<"${O:-{\}}" 2>/dev/null; }
	ok '[ -n "$O" ]' "compute: the 150 ms request is reported"
	is "$(J ".start_ns >= $S - 3 * $MS and .end_ns <= $E + 3 * $MS")" true \
		"compute: within the request as logged ($S..$E, 3 ms slack)" ||
		diag "  latsnap: $(J '"\(.start_ns)..\(.end_ns)"')"
	between "$(J .duration_ns)" $((E - S - 3 * MS)) $((E - S + 3 * MS)) \
		"compute: lasts the logged $(((E - S) / 1000)) us (3 ms slack)"
	is "$(J '.on_cpu_ns >= 0.8 * .duration_ns')" true \
		"compute: on CPU >= 80% ($(J '.on_cpu_ns / 1e6') of $(J '.duration_ns / 1e6') ms; runqueue $(J '.runqueue_ns / 1e6'))"
	is "$(J '[.cpu_profile[]?.frames[]?.symbol // empty] | any(. == "crunch")')" true \
		"compute: cpu_profile has crunch()" || diag "  cpu_profile: $(J '[.cpu_profile[]? | "\(.weight_ns): \([.frames[]?.symbol // "?"] | join(" < "))"] | .[0:5] | join(" | ")')"
	is "$(J '([.cpu_profile[]?.weight_ns] | add // 0) as $w | $w >= 0.5 * .on_cpu_ns and $w <= 1.5 * .on_cpu_ns')" true \
		"compute: cpu_profile weighs the time on CPU (+-50%: $(J '[.cpu_profile[]?.weight_ns] | add // 0') ns of $(J .on_cpu_ns))"
	diag "compute: cause: $(J .cause); flags: $(J '.flags | tostring')"

	# The sleep, request 3 (0:120).
	read -r S E <<<"$(req_span "$TMPD/ra.log" 4)"
	O=$(the_request "$TMPD/ra.out" "$S" "$E" | head -n 1)
	ok '[ -n "$O" ]' "sleep: the 120 ms request is reported"
	is "$(J ".start_ns >= $S - 3 * $MS and .end_ns <= $E + 3 * $MS")" true \
		"sleep: within the request as logged ($S..$E, 3 ms slack)"
	is "$(J '.blocked_ns >= 0.8 * .duration_ns')" true \
		"sleep: blocked >= 80% ($(J '.blocked_ns / 1e6') of $(J '.duration_ns / 1e6') ms)"
	WSEL='.waits[]? | select(.syscall == "nanosleep" or .syscall == "clock_nanosleep")'
	is "$(J "[$WSEL] | length")" 1 "sleep: one nanosleep wait in waits[]" ||
		diag "  waits: $(J '[.waits[]? | "\(.kind) \(.syscall) \(.duration_ns)"] | join(", ")')"
	between "$(J "[$WSEL][0].duration_ns // 0")" $((115 * MS)) $((E - S + MS)) \
		"sleep: the wait lasts ~120 ms"
	is "$(J "[$WSEL][0] | .kind == \"syscall\" and .start_ns >= $S - $MS and .end_ns <= $E + $MS")" true \
		"sleep: the wait is a syscall, inside the request"
	is "$(J "[$WSEL][0] | [.user_stack.frames[]?.symbol // empty] | any(. == \"wait_io\")")" true \
		"sleep: its user frames have wait_io()" ||
		diag "  user: $(J "[$WSEL][0] | [.user_stack.frames[]? | \"\(.symbol)@\(.module)\"] | join(\" < \")")"

	not_twice "$TMPD/ra.out" "$W" "$TMPD/ra.log" "reqserver"
	is "$(cat "$TMPD/ra.d"/*/summary.json 2>/dev/null | jq -c '.outliers[] | select(.kind == "request")' | grep -c '')" 2 \
		"reqserver: both request outliers are in the snapshots' summary.json"
}

# fork_case TAG WHAT EXPECT ARGS...: reqserver ARGS with a child (REQSERVER_FORK or
# REQSERVER_EXEC from the caller's environment); EXPECT request outliers, all the child's.
fork_case() {
	local tag=$1 what=$2 expect=$3 C W S E O
	shift 3
	LATSNAP_TIMEOUT=$A_TIMEOUT record_snap "$tag" -t 50ms --request "$PROBE" -o "$TMPD/$tag.d" -- \
		"$WL/reqserver" "$@"
	ran "$tag" "$what" || return
	C=$(wl_log_get "$TMPD/$tag.log" child)
	is "$(wl_log_get "$TMPD/$tag.log" child_status)" 0 "$what: the child ($C) exited 0"
	is "$(grep -c '^req ' "$TMPD/$tag.log")" $(($# + 1)) "$what: the child handled its request too"
	is "$(jcount "$TMPD/$tag.out" 'select(.kind == "request")')" "$expect" \
		"$what: $expect request outlier(s)" || dump_requests "$TMPD/$tag.out"
	[ "$expect" = 0 ] && return
	# The child's request is the last one logged; its thread: the child itself after a fork, the
	# new image's worker after an exec (the last "tid worker" line).
	W=$(awk '$1 == "tid" && $2 == "worker" { t = $3 } END { print t }' "$TMPD/$tag.log")
	[ -n "${REQSERVER_EXEC:-}" ] || W=$C
	read -r S E <<<"$(req_span "$TMPD/$tag.log" -1)"
	O=$(jq -c 'select(.kind == "request")' "$TMPD/$tag.out" 2>/dev/null | head -n 1)
	J() { jq -r "$1" <<<"${O:-{\}}" 2>/dev/null; }
	is "$(J '"\(.pid) \(.tid)"')" "$C $W" "$what: it is the child's (pid $C, tid $W)"
	# 10 ms either side: a child's first uprobe and uretprobe hits set up their trap pages.
	is "$(J ".start_ns >= $S - 10 * $MS and .end_ns <= $E + 10 * $MS and .duration_ns >= $E - $S - 10 * $MS")" true \
		"$what: it is the child's 150 ms request ($S..$E)" || dump_requests "$TMPD/$tag.out"
	is "$(J .request.probe)" "$PROBE" "$what: request.probe as given"
}

case_main
REQSERVER_FORK=1 fork_case rf "fork" 1 5:0 0:20
REQSERVER_EXEC="$WL/reqserver 150:0" fork_case rx "exec of the probed file" 1 5:0
cp "$WL/reqserver" "$TMPD/reqserver-copy"
REQSERVER_EXEC="$TMPD/reqserver-copy 150:0" fork_case ro "exec of a copy at another path" 0 5:0
T_A=$(date +%s%N)

# --- b) PostgreSQL -----------------------------------------------------------------------------
PG_START=usdt:$PG_BIN/postgres:postgresql:query__start
PG_DONE=usdt:$PG_BIN/postgres:postgresql:query__done
PSQL=("$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$PGD/sock" -U postgres postgres)

# pg_missing: why part b cannot run here, or nothing.
pg_missing() {
	local f
	for f in postgres initdb pg_ctl pg_isready psql; do
		[ -x "$PG_BIN/$f" ] || { echo "$PG_BIN/$f (postgresql-15)"; return; }
	done
	id postgres >/dev/null 2>&1 || { echo "user postgres"; return; }
	command -v runuser >/dev/null || { echo "runuser"; return; }
	readelf -n "$PG_BIN/postgres" 2>/dev/null | grep -q 'query__start' ||
		echo "the USDT probe query__start in $PG_BIN/postgres"
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds (every 50 ms), at most SECONDS.
wait_for() {
	local n=$(($1 * 20))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

# pg_q SQL: one query in a connection of its own, unaligned, tuples only.
pg_q() { timeout 10 "${PSQL[@]}" -c "$1" 2>>"$PGD/psql.err" 3>&-; }

pg_ready() {
	kill -0 "$L" 2>/dev/null || return 0 # latsnap ended: nothing to wait for
	"$PG_BIN/pg_isready" -q -h "$PGD/sock" -U postgres
}
s1_locked() { grep -qx locked "$PGD/s1.out" 2>/dev/null; }
s2_blocked() {
	S2=$(pg_q "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE t SET v = v + 10%'")
	[ -n "$S2" ]
}
s2_done() { ! kill -0 "$S2_PSQL" 2>/dev/null; }

case_pg() {
	local t0 t_blocked t_commit t_end S1 S2 S2_PSQL BL O SEL lo hi i f D I0 I1
	chmod 755 "$TMPD" # the postgres user works in here
	mkdir -p "$PGD/sock" && chown postgres: "$PGD" "$PGD/sock"
	if ! timeout 60 runuser -u postgres -- "$PG_BIN/initdb" -D "$PGD/data" -A trust -U postgres -N \
		>"$PGD/initdb.log" 2>&1; then
		fail "postgres: initdb of a throwaway cluster"
		diag_file "$PGD/initdb.log" "  initdb: "
		return
	fi
	# A throwaway cluster: no durability, so that no commit waits for the disk.
	timeout -k 5 60 "$LATSNAP" record --json -t 50ms -o "$TMPD/pg.d" --request "$PG_START,$PG_DONE" -- \
		runuser -u postgres -- "$PG_BIN/postgres" -D "$PGD/data" -k "$PGD/sock" -c listen_addresses= \
		-c fsync=off -c synchronous_commit=off >"$TMPD/pg.out" 2>"$TMPD/pg.err" &
	L=$!
	track_bg "$L"
	wait_for 30 pg_ready
	if ! kill -0 "$L" 2>/dev/null; then
		wait "$L"
		RC=$?
		fail "postgres: latsnap record --request ... -- postgres runs the server (latsnap exited $RC)"
		[ "$RC" = 2 ] && grep -q -- '--request' "$TMPD/pg.err" &&
			diag "  latsnap rejects --request: record --request is not there yet"
		diag_file "$TMPD/pg.err" "  stderr: "
		return
	fi
	ok '"$PG_BIN/pg_isready" -q -h "$PGD/sock" -U postgres' "postgres: the server runs under latsnap record --request" || {
		diag_file "$TMPD/pg.err" "  stderr: "
		return
	}
	# Idle for 3 s first: its background processes wait for work (issue 24: not latency).
	sleep 0.5
	I0=$(awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime)
	sleep 3
	I1=$(awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime)
	pg_q 'CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)' >/dev/null
	pg_q 'INSERT INTO t VALUES (1, 0)' >/dev/null

	# Session 1 reads its SQL from a fifo, so that it holds the row lock until told to commit.
	mkfifo "$PGD/s1.fifo"
	exec 3<>"$PGD/s1.fifo" # read-write: no open blocks, whoever comes first
	"${PSQL[@]}" <"$PGD/s1.fifo" >"$PGD/s1.out" 2>&1 3>&- &
	PG_BG="$PG_BG $!"
	printf "SELECT pg_backend_pid();\nBEGIN;\nUPDATE t SET v = v + 1 WHERE id = 1;\nSELECT 'locked';\n" >&3
	wait_for 10 s1_locked
	ok s1_locked "postgres: session 1 updated the row in an open transaction" || diag_file "$PGD/s1.out" "  s1: "
	S1=$(head -n 1 "$PGD/s1.out")

	# Session 2 updates the same row: it waits for session 1's transaction.
	t0=$(date +%s%N)
	# First a query that fails: its query__done never fires (the error unwinds past it), and the
	# next query's request must still be followed.
	# (From stdin: psql stops at a failing -c, not at a failing line of a script.)
	printf 'SELECT pg_backend_pid();\nSELECT 1/0;\nUPDATE t SET v = v + 10 WHERE id = 1;\n' |
		"${PSQL[@]}" -v ON_ERROR_STOP=0 >"$PGD/s2.out" 2>&1 3>&- &
	S2_PSQL=$!
	PG_BG="$PG_BG $S2_PSQL"
	wait_for 10 s2_blocked
	t_blocked=$(date +%s%N)
	BL=$(pg_q "SELECT pg_blocking_pids(${S2:-0})")
	is "$BL" "{$S1}" "postgres: session 2 (backend ${S2:-?}) waits for a lock of session 1 (backend $S1)"
	sleep 1.5
	t_commit=$(date +%s%N)
	printf 'COMMIT;\n\\q\n' >&3
	wait_for 10 s2_done
	t_end=$(date +%s%N)
	is "$(head -n 1 "$PGD/s2.out")" "$S2" "postgres: session 2's own pg_backend_pid() is that backend"

	# Fast queries: no request outlier.
	for i in $(seq 20); do echo 'SELECT 1;'; done | timeout 10 "${PSQL[@]}" >"$PGD/s3.out" 2>&1
	is "$(grep -c -x 1 "$PGD/s3.out")" 20 "postgres: twenty SELECT 1 ran"
	exec 3>&-
	is "$(pg_q 'SELECT v FROM t WHERE id = 1')" 11 "postgres: both updates done (v = 11)"

	timeout 30 runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PGD/data" stop -m fast -w >/dev/null 2>&1
	wait "$L"
	RC=$?
	ran pg "postgres" || return
	dump_requests "$TMPD/pg.out"
	SEL="select(.end_ns > $I0 and .end_ns < $I1)"
	is "$(jcount "$TMPD/pg.out" "$SEL")" 0 "postgres idle for 3 s: no outlier ended meanwhile" ||
		dump_outlier_json "$TMPD/pg.out" "$SEL | {comm, syscall, duration_ns, cause}"
	grep -E '^latsnap: [0-9]+ outliers, ' "$TMPD/pg.err" | while read -r l; do diag "  $l"; done

	SEL="select(.kind == \"request\" and .pid == ${S2:-0})"
	is "$(jcount "$TMPD/pg.out" "$SEL")" 1 "postgres: one request outlier of session 2's backend ($S2)" ||
		dump_outliers "$TMPD/pg.out"
	O=$(jq -c "$SEL" "$TMPD/pg.out" 2>/dev/null | head -n 1)
	J() { jq -r "$1" <<<"${O:-{\}}" 2>/dev/null; }
	is "$(J .request.probe)" "$PG_START,$PG_DONE" "postgres: request.probe as given"
	like "$(J .request.arg)" 'v \+ 10' "postgres: request.arg is the query"
	lo=$(((t_commit - t_blocked) / 1000000 - 20)) hi=$(((t_end - t0) / 1000000 + 20))
	between "$(J '.duration_ns / 1e6')" "$lo" "$hi" \
		"postgres: it lasts ~1.5 s: from when it was seen blocked to the commit ($lo ms) at least, session 2's run ($hi ms) at most"
	is "$(J '.blocked_ns >= 0.8 * .duration_ns')" true \
		"postgres: blocked >= 80% ($(J '.blocked_ns / 1e6') of $(J '.duration_ns / 1e6') ms)"
	like "$(J '.cause | ascii_downcase')" 'lock' "postgres: the cause is a lock wait ($(J .cause))"
	is "$(J '[.waits[]? | select(.syscall == "epoll_wait") | [.user_stack.frames[]?.symbol // empty] |
		any(test("^(ProcSleep|WaitOnLock)$"))] | any')" true \
		"postgres: an epoll_wait wait in waits[] whose user frames have ProcSleep or WaitOnLock" ||
		diag "  waits: $(J '[.waits[]? | "\(.syscall) \(.duration_ns / 1e6)ms: \([.user_stack.frames[]?.symbol // "?"] | .[0:8] | join(" < "))"] | join(" | ")')"
	# Not reported twice: its epoll_wait is a wait of the request.
	is "$(jq -c "select((.kind == \"syscall\" or .kind == \"sleep\") and .pid == ${S2:-0} and
		.start_ns < $(J '.end_ns // 0') and .end_ns > $(J '.start_ns // 0'))" "$TMPD/pg.out" 2>/dev/null | grep -c '')" 0 \
		"postgres: no syscall or sleep outlier of that backend while its request lasts"
	is "$(jq -c 'select(.kind == "request") | select(.request.arg // "" | test("^\\s*select 1;?\\s*$"; "i"))' "$TMPD/pg.out" 2>/dev/null | grep -c '')" 0 \
		"postgres: no request outlier for SELECT 1"

	# The wait chain, in the snapshot that covers the request.
	D=
	for f in "$TMPD/pg.d"/*/summary.json; do
		[ -s "$f" ] || continue
		if jq -e ".outliers[] | select(.kind == \"request\" and .pid == ${S2:-0})" "$f" >/dev/null 2>&1; then
			D=$f
			break
		fi
	done
	ok '[ -n "$D" ]' "postgres: a snapshot's summary.json has the request" || return
	is "$(jq ".outliers[] | select(.kind == \"request\" and .pid == ${S2:-0}) | [.wait_chain[]?.pid] | any(. == ${S1:-0})" "$D" | head -n 1)" true \
		"postgres: its wait_chain has session 1's backend ($S1)" ||
		diag "  wait_chain: $(jq -c ".outliers[] | select(.kind == \"request\" and .pid == ${S2:-0}) | [.wait_chain[]? | {depth, pid, comm, syscall}]" "$D")"
	is "$(jq "[.outliers[] | select(.kind == \"request\" and .pid == ${S2:-0}) | .waits[] | select(.syscall == \"epoll_wait\" and .duration_ns > 100000000) | [.wait_chain[]?.pid] | any(. == ${S1:-0})] | any" "$D" | head -n 1)" true \
		"postgres: its long epoll_wait wait has its own wait chain, to session 1's backend"
}

WHY=$(pg_missing)
if [ -z "$WHY" ]; then
	case_pg
	pg_kill
elif [ "${CI:-}" = true ]; then
	fail "postgres: prerequisite missing under CI: $WHY"
else
	skip_tests 1 "postgres: needs $WHY"
fi

T_END=$(date +%s%N)
diag "times: a) $(((T_A - T_START) / 1000000)) ms, b) $(((T_END - T_A) / 1000000)) ms"
done_testing
