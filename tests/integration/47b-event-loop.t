#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Requests of an event loop (record --request START=KEY,END=KEY): a request is an object, not a
# thread. evloop's one thread "evloop" serves 20 overlapping requests through epoll, each a
# struct req from req_begin(req) to req_end(req), each sent to a backend thread ("evbk") that
# sleeps 300 ms for the even IDs and 1 ms for the odd ones; recorded with
#   --request uprobe:$WL/evloop:req_begin=arg1,uprobe:$WL/evloop:req_end=arg1 -t 100ms:
#  - the slow requests overlap on the one thread (checked in the workload's log, so the case
#    tests what it says);
#  - every slow request is its own request outlier: one per even ID, keyed by its struct req
#    (request.key is the pointer the workload logged), none for the odd ones;
#  - each names its own backend: request.upstream and the first link of its wait chain (in the
#    snapshot's summary.json) are the evbk thread that served that ID, in clock_nanosleep;
#  - the loop's own waits are no outlier: no syscall outlier of the evloop thread (a preemption
#    on a loaded machine may still be one, of kind sleep, rightly);
#  - a bad key is a usage error (exit 2) that says what is wrong: =arg9 on a uprobe, =ret on a
#    uprobe, a key on one probe of the pair only.
# On the code before keys (main 534b883), --request rejects =arg1 (exit 2): every case fails;
# without keys, the thread-keyed pair finds 0 of the 10 (each start inside another's restarts it).
set -u
. "$(dirname "$0")/lib.sh"

require_record evloop
require_lttng
kernel_has_cookies || skip_kernel "lacks BPF cookies (Linux 5.15), which record --request needs"

PROBE="uprobe:$WL/evloop:req_begin=arg1,uprobe:$WL/evloop:req_end=arg1"
LATSNAP_TIMEOUT=60 record_snap ev -t 100ms --no-flood-guard -o "$TMPD/ev.d" --request "$PROBE" -- \
	"$WL/evloop" 20 300 10
is "$RC" 0 "evloop: latsnap record exits 0"
ok 'ndjson_ok "$TMPD/ev.out"' "evloop: stdout is NDJSON"
LOG=$TMPD/ev.log
LOOP=$(awk '$1 == "tid" && $2 == "evloop" { print $3; exit }' "$LOG")
ok '[ -n "$LOOP" ] && [ "$(grep -c "^req " "$LOG")" = 20 ]' "evloop: served its 20 requests (log)"

# The slow requests overlap: the most under way at once, by the log's spans.
MAXOVER=$(awk '$1 == "req" && $2 % 2 == 0 { s[$2] = $4; e[$2] = $5 }
	END { m = 0; for (i in s) { c = 0; for (j in s) if (s[j] <= s[i] && e[j] > s[i]) c++;
		if (c > m) m = c }; print m }' "$LOG")
between "${MAXOVER:-0}" 5 10 "evloop: the slow requests overlap on the one thread (up to $MAXOVER at once)"

SUMS=$(find "$TMPD/ev.d" -name summary.json 2>/dev/null)
found=0 named=0
for id in 0 2 4 6 8 10 12 14 16 18; do
	key=$(awk -v i="$id" '$1 == "req" && $2 == i { print $3; exit }' "$LOG")
	bk=$(awk -v i="$id" '$1 == "backend" && $2 == i { print $3; exit }' "$LOG")
	n=$(jcount "$TMPD/ev.out" "select(.kind == \"request\" and .request.key == \"$key\")")
	if [ "$n" = 1 ]; then
		found=$((found + 1))
	else
		diag "  request $id ($key): $n request outliers"
	fi
	# Its upstream, and the first link of its chain in a snapshot: its own backend thread.
	up=$(jq -r "select(.kind == \"request\" and .request.key == \"$key\") | .request.upstream.tid" \
		"$TMPD/ev.out" 2>/dev/null | head -n 1)
	link=$(cat $SUMS /dev/null 2>/dev/null | jq -r ".outliers[]? | select(.request.key? == \"$key\") |
		.wait_chain[0] | \"\(.tid) \(.syscall)\"" 2>/dev/null | head -n 1)
	if [ "$up" = "$bk" ] && [ "$link" = "$bk clock_nanosleep" ]; then
		named=$((named + 1))
	else
		diag "  request $id ($key): backend $bk; upstream ${up:-none}, first link '${link:-none}'"
	fi
done
is "$found" 10 "evloop: each of the 10 slow requests is its own request outlier (by its key)"
if [ -e /sys/kernel/tracing/events/sock/sk_data_ready ] ||
	[ -e /sys/kernel/debug/tracing/events/sock/sk_data_ready ]; then
	is "$named" 10 "evloop: each names its own backend thread, in clock_nanosleep (upstream and wait chain)"
else
	skip_tests 1 "this kernel ($(uname -r)) lacks the sk_data_ready tracepoint (Linux 6.5), which names a request's upstream"
fi
is "$(jcount "$TMPD/ev.out" 'select(.kind == "request")')" 10 \
	"evloop: no request outlier for the 10 fast ones" || dump_outliers "$TMPD/ev.out"
is "$(jcount "$TMPD/ev.out" "select(.kind == \"syscall\" and .tid == ${LOOP:-0})")" 0 \
	"evloop: no syscall outlier of the loop's own thread (its epoll_wait serves them all)" ||
	dump_outliers "$TMPD/ev.out"

# Bad keys: a usage error naming the fault.
bad() {
	local spec=$1 want=$2 what=$3
	RECORD_EXPECT_RC=2 record_json "$TMPD/bad.out" "$TMPD/bad.err" -- --request "$spec" -- true
	is "$RC" 2 "bad key ($what): exit 2"
	like "$(head -n 1 "$TMPD/bad.err")" "^latsnap: .*$want" "bad key ($what): says so on one line"
}
bad "uprobe:$WL/evloop:req_begin=arg9,uprobe:$WL/evloop:req_end=arg1" "unknown key '=arg9'" "=arg9"
bad "uprobe:$WL/evloop:req_begin=ret,uprobe:$WL/evloop:req_end=arg1" "only a uretprobe" "=ret on a uprobe"
bad "uprobe:$WL/evloop:req_begin=arg1,uprobe:$WL/evloop:req_end" "both probes name a key" "one key"

done_testing
