#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stripped binaries named at record time (man latsnap, DEBUG INFO): sleeper, built with -g, its
# debug info split off (objcopy --only-keep-debug; strip --strip-all keeps the build-id note),
# has only addresses in its frames; its separate debug file, found by build-id in a
# LATSNAP_DEBUG_DIR tree (.build-id/NN/REST.debug) or served by a local debuginfod
# (DEBUGINFOD_URLS, a cache of this file's own), names slow_nap and main. show takes
# LATSNAP_DEBUG_DIR too. A server slower than record's wait (500 ms) has the first nap's frames
# unnamed and the later ones named once the file came; one that accepts and never answers holds
# record up no longer than its wait (no timing asserted here: the run must end, with its
# outliers).
set -u
. "$(dirname "$0")/lib.sh"

require_record sleeper
require objcopy strip readelf debuginfod debuginfod-find python3
no_ust_wait
# Only the servers this file starts (Debian's profile may name debuginfod.debian.net).
unset DEBUGINFOD_URLS

T=$TMPD
SEL='select(.syscall // "" | test("nanosleep"))'
mkdir -p "$T/bin" "$T/srv"
objcopy --only-keep-debug "$WL/sleeper" "$T/srv/sleeper.debug" || bail_out "objcopy"
strip --strip-all -o "$T/bin/sleeper" "$WL/sleeper" || bail_out "strip"
BIN=$T/bin/sleeper
ID=$(readelf -n "$BIN" | awk '/Build ID:/ { print $3; exit }')
ok "[ -n '$ID' ]" "the stripped sleeper keeps its build-id ($ID)"
ok "! nm '$BIN' 2>/dev/null | grep -q slow_nap" "the stripped sleeper has no symbol slow_nap"
mkdir -p "$T/debug/.build-id/${ID:0:2}"
cp "$T/srv/sleeper.debug" "$T/debug/.build-id/${ID:0:2}/${ID:2}.debug"

# names OUT: the symbols of the stripped sleeper's frames in the nanosleep outlier, innermost
# first, "?" for none.
names() {
	jfirst "$1" "$SEL" "[.user_stack.frames[] | select(.module == \"$BIN\") | .symbol // \"?\"] | join(\" \")"
}

# Without debug info: addresses only (what makes the checks below mean something).
record_json "$T/none.out" "$T/none.err" -t 100ms -- "$BIN" 200
is "$RC" 0 "no debug info: record exits 0"
like "$(names "$T/none.out")" '^"[? ]*(_start)?"$' "no debug info: the sleeper's frames are bare addresses"

# (1) A debug directory of our own.
LATSNAP_DEBUG_DIR=/nonexistent:$T/debug record_json "$T/dir.out" "$T/dir.err" -t 100ms -- "$BIN" 200
is "$RC" 0 "LATSNAP_DEBUG_DIR: record exits 0"
like "$(names "$T/dir.out")" '^"slow_nap main' \
	"LATSNAP_DEBUG_DIR: the debug file found by build-id names slow_nap and main" ||
	dump_outlier_json "$T/dir.out" '.user_stack'

# show reads the snapshot's build-ids again, and the same directories.
require_lttng
record_snap snap -o "$T/snaps" -t 100ms -- "$BIN" 200
SNAP=$(find "$T/snaps" -name summary.json -printf '%h\n' 2>/dev/null | head -n 1)
ok "[ -n '$SNAP' ]" "a snapshot of the stripped sleeper"
LATSNAP_DEBUG_DIR=$T/debug run_latsnap "$T/show.out" "$T/show.err" show "$SNAP"
is "$RC" 0 "show exits 0"
ok "grep -q 'slow_nap.*sleeper.c' '$T/show.out'" \
	"show with LATSNAP_DEBUG_DIR names slow_nap, with its source line" || diag_file "$T/show.out" "  " 20

# (2) A debuginfod of our own, serving the debug file.
free_port() {
	local p
	for p in $(seq $((20000 + $$ % 20000)) $((20100 + $$ % 20000))); do
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
}
PORT=$(free_port)
debuginfod -F "$T/srv" -p "$PORT" -d "$T/debuginfod.sqlite" >"$T/debuginfod.log" 2>&1 &
track_bg $!
URL=http://127.0.0.1:$PORT
served=1
for _ in $(seq 300); do
	DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/probe-cache debuginfod-find debuginfo "$ID" \
		>/dev/null 2>&1 && { served=0; break; }
	rm -rf "$T/probe-cache"
	sleep 0.1
done
ok $served "debuginfod on port $PORT serves build-id $ID" || diag_file "$T/debuginfod.log"
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/cache record_json "$T/dfd.out" "$T/dfd.err" \
	-t 100ms -- "$BIN" 200
is "$RC" 0 "debuginfod: record exits 0"
like "$(names "$T/dfd.out")" '^"slow_nap main' \
	"debuginfod: the fetched debug file names slow_nap and main in record's own output" ||
	dump_outlier_json "$T/dfd.out" '.user_stack'
ok "[ -s '$T/cache/$ID/debuginfo' ]" "debuginfod: the debug file is in DEBUGINFOD_CACHE_PATH"

# A slow server: the first nap's frames come before the file (record waits 500 ms at most),
# the last nap's after it, named once it is there.
python3 -c '
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(1.0)
        if self.path != "/buildid/%s/debuginfo" % sys.argv[1]:
            self.send_error(404)
            return
        data = open(sys.argv[2], "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
' "$ID" "$T/srv/sleeper.debug" >"$T/slow.port" &
track_bg $!
for _ in $(seq 50); do [ -s "$T/slow.port" ] && break; sleep 0.1; done
DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$T/slow.port") DEBUGINFOD_CACHE_PATH=$T/slow-cache \
	record_json "$T/slow.out" "$T/slow.err" -t 100ms -- "$BIN" 200 4 900
# The naps, not the pauses between them (900 ms).
NAPS='select((.syscall // "" | test("nanosleep")) and .duration_ns < 500000000)'
is "$RC" 0 "a slow debuginfod: record exits 0"
is "$(jcount "$T/slow.out" "$NAPS")" 4 "a slow debuginfod: the four naps are outliers"
like "$(jq -s -c "[.[] | $NAPS][-1] // {} | [.user_stack.frames[]? | select(.module == \"$BIN\") | .symbol // \"?\"] | join(\" \")" "$T/slow.out")" \
	'^"slow_nap main' "a slow debuginfod: the last nap's frames are named, from the file fetched meanwhile" ||
	dump_outlier_json "$T/slow.out" '[.end_ns, [.user_stack.frames[] | .symbol]]'

# A server that accepts and never answers.
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
' >"$T/mute.port" &
track_bg $!
for _ in $(seq 50); do [ -s "$T/mute.port" ] && break; sleep 0.1; done
DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$T/mute.port") DEBUGINFOD_CACHE_PATH=$T/mute-cache \
	record_json "$T/mute.out" "$T/mute.err" -t 100ms -- "$BIN" 200 2
is "$RC" 0 "a mute debuginfod: record exits 0, in time"
is "$(jcount "$T/mute.out" "$SEL")" 2 "a mute debuginfod: both naps are outliers"

done_testing
