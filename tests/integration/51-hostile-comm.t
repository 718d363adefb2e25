#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 51: a process cannot forge latsnap's text output with the names it chose. hostile names
# its threads with an ANSI colour and a newline ('\033[31mEV\nIL"}<') and with a C1 CSI, a
# backslash before 'n', ';', DEL, CR, a tab and a right-to-left override; it runs from a
# directory whose name holds ESC and a newline ('bin\033[1m\nFORGED'), so its frames' module
# does too. Through record -v (stdout, stderr), summary.txt, show, report, flame and top --batch:
# no control byte but newline and tab, no C1 or bidirectional control, broken UTF-8 or DEL, no
# line that starts with the text after a forged newline, and the escaped names are there to
# read; summary.json and record --json still hold the names exactly as they were. A third thread
# names itself with bytes that are not UTF-8 ('\xff\xfeU8\xc3(\xed\xa0\x80' and a 4-byte
# emoji): summary.json, record --json, report --json, show --json and export are each UTF-8 a
# strict reader takes, with that name as U+FFFD for each maximal ill-formed subpart.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record hostile
require python3

MAIN_ESC='\x1b[31mEV\nIL"}<'
SECOND_ESC='\u009bJ\\n;\x7f\r\t<\u202e'
BROKEN_ESC='\xff\xfeU8\xc3(\xed\xa0\x80'$'\xf0\x9f\x98\x80'
HD=$TMPD/bin$'\033[1m\n'FORGED
mkdir -p "$HD" && cp "$WL/hostile" "$HD/hostile" || bail_out "cannot copy hostile into $HD"
OUTD=$TMPD/snaps

# scan FILE...: per file "NAME esc=N ctl=N c1=N badutf8=N forged=N": ESC bytes; other bytes
# below 0x20 but newline and tab, and DEL; C1 and bidirectional controls and line separators
# (U+0080-U+009F, U+061C, U+200E-U+200F, U+2028-U+202E, U+2066-U+2069); bytes that are not
# UTF-8; lines that start with what follows a forged newline.
cat >"$TMPD/scan.py" <<'EOF'
import re, sys
for path in sys.argv[1:]:
    data = open(path, 'rb').read()
    esc = data.count(b'\x1b')
    ctl = len(re.findall(rb'[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]', data))
    text = data.decode('utf-8', 'surrogateescape')
    bad = sum(1 for c in text if 0xdc80 <= ord(c) <= 0xdcff)
    c1 = len(re.findall('[\u0080-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]', text))
    forged = len(re.findall(rb'^(IL"\}<|FORGED)', data, re.M))
    print('%s esc=%d ctl=%d c1=%d badutf8=%d forged=%d' % (path.rsplit('/', 1)[-1], esc, ctl,
                                                         c1, bad, forged))
EOF
# clean FILE WHAT: one test: nothing in FILE that a terminal acts on or that starts a line.
clean() {
	local got
	got=$(python3 "$TMPD/scan.py" "$1")
	like "$got" ' esc=0 ctl=0 c1=0 badutf8=0 forged=0$' "$2: no control byte, no forged line ($got)"
}
# shows FILE TEXT WHAT: FILE holds TEXT (fixed string).
shows() {
	grep -aqF -- "$2" "$1"
	ok $? "$3 shows $2" || diag_file "$1" "  $3: " 30
}

# --- record -v, text on stdout ---------------------------------------------------------------
WL_LOG=$TMPD/wl.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -t 50ms -v -o "$OUTD" \
	-- "$HD/hostile" 100 2 >"$TMPD/rec.out" 2>"$TMPD/rec.err"
RC=$?
is "$RC" 0 "record -v -- hostile: exit 0" || diag_file "$TMPD/rec.err" "  stderr: "
clean "$TMPD/rec.out" "record's stdout"
clean "$TMPD/rec.err" "record -v's stderr"
shows "$TMPD/rec.out" "$MAIN_ESC[pid" "record's stdout"
shows "$TMPD/rec.out" "$SECOND_ESC[pid" "record's stdout"
shows "$TMPD/rec.out" "woken by $SECOND_ESC[pid" "record's stdout"
shows "$TMPD/rec.out" "$BROKEN_ESC[pid" "record's stdout (each byte that is not UTF-8)"
# The module's path as the kernel's maps give it: a newline there is "\012", ESC is as it is.
shows "$TMPD/rec.out" 'bin\x1b[1m\\012FORGED/hostile)' "record's stdout (a user frame's module)"
shows "$TMPD/rec.err" "idle, not latency: $SECOND_ESC[" "record -v's stderr"
shows "$TMPD/rec.err" "latsnap:   $SECOND_ESC[" "record's idle list on stderr"
shows "$TMPD/rec.err" 'bin\x1b[1m\nFORGED/hostile' "record -v's stderr (the command tracked)"

mapfile -t SNAPS < <(find "$OUTD" -mindepth 1 -maxdepth 1 -type d -name '2*' | sort)
between "${#SNAPS[@]}" 1 10 "record wrote snapshots (${#SNAPS[@]})"
cat "${SNAPS[@]/%//summary.txt}" >"$TMPD/summary.txt" 2>/dev/null
clean "$TMPD/summary.txt" "summary.txt"
shows "$TMPD/summary.txt" "$MAIN_ESC[pid" "summary.txt"
shows "$TMPD/summary.txt" "1. $SECOND_ESC [pid" "summary.txt (the wait chain)"
shows "$TMPD/summary.txt" "  $SECOND_ESC[" "summary.txt (the idle waits)"

# --- show, report, flame ---------------------------------------------------------------------
: >"$TMPD/show.txt"
for s in "${SNAPS[@]}"; do
	run_latsnap "$TMPD/show1.txt" "$TMPD/show.err" show "$s"
	[ "$RC" = 0 ] || fail "show ${s##*/}: exit $RC"
	cat "$TMPD/show1.txt" "$TMPD/show.err" >>"$TMPD/show.txt"
done
clean "$TMPD/show.txt" "show"
shows "$TMPD/show.txt" "$MAIN_ESC[pid" "show"
shows "$TMPD/show.txt" "woken by $SECOND_ESC[pid" "show"
shows "$TMPD/show.txt" "  $SECOND_ESC[pid" "show (the idle waits)"
for by in cause process; do
	run_latsnap "$TMPD/report.txt" "$TMPD/report.err" report --by $by "$OUTD"
	is "$RC" 0 "report --by $by: exit 0"
	cat "$TMPD/report.err" >>"$TMPD/report.txt"
	clean "$TMPD/report.txt" "report --by $by"
	shows "$TMPD/report.txt" "$MAIN_ESC[" "report --by $by"
	shows "$TMPD/report.txt" "$SECOND_ESC[" "report --by $by"
done
run_latsnap "$TMPD/flame.txt" "$TMPD/flame.err" flame "$OUTD"
is "$RC" 0 "flame: exit 0"
clean "$TMPD/flame.txt" "flame"
is "$(grep -cvE '^[^;]+(;[^;]+)* [0-9]+$' "$TMPD/flame.txt")" 0 \
	"flame: every line is one folded stack and its weight" || diag_file "$TMPD/flame.txt" "  "
between "$(grep -c '' "$TMPD/flame.txt")" 3 20 "flame: the stacks of both threads"

# --- summary.json and --json: the names exactly ------------------------------------------------
cat >"$TMPD/exact.py" <<'EOF'
import json, sys
MAIN, SECOND = '\x1b[31mEV\nIL"}<', '\u009bJ\\n;\x7f\r\t<\u202e'
BROKEN = '\ufffd\ufffdU8\ufffd(\ufffd\ufffd\ufffd\U0001f600'
mode, module = sys.argv[1], sys.argv[2].replace('\n', '\\012')
outliers, idle = [], []
for path in sys.argv[3:]:
    text = open(path, encoding='utf-8').read()
    docs = [json.loads(l) for l in text.splitlines() if l] if mode == 'ndjson' else [json.loads(text)]
    for d in docs:
        outliers += d.get('outliers', [d])
        idle += d.get('idle', [])
comms = sorted(set(o['comm'] for o in outliers))
print('comms', 'exact' if comms == sorted([MAIN, SECOND, BROKEN]) else repr(comms))
read = [o for o in outliers if o['comm'] == MAIN and o['syscall'] == 'read']
print('waker', 'exact' if read and all((o['waker'] or {}).get('comm') == SECOND for o in read)
      else repr([o['waker'] for o in read]))
if mode == 'summary':
    print('chain', 'exact' if read and any(l['comm'] == SECOND for o in read for l in o['wait_chain'])
          else repr([o['wait_chain'] for o in read]))
    print('idle', 'exact' if idle and all(e['comm'] == SECOND for e in idle) else repr(idle))
mods = set(f.get('module') for o in outliers for f in o['user_stack']['frames'])
print('module', 'exact' if module in mods else repr(mods))
EOF
python3 "$TMPD/exact.py" summary "$HD/hostile" "${SNAPS[@]/%//summary.json}" >"$TMPD/exact.txt" 2>&1
is "$(tr '\n' ' ' <"$TMPD/exact.txt")" "comms exact waker exact chain exact idle exact module exact " \
	"summary.json: each comm, the waker's, the wait chain's, the idle waits' and the module's path exactly" ||
	diag_file "$TMPD/exact.txt" "  "
WL_LOG=$TMPD/wl2.log record_json "$TMPD/json.out" "$TMPD/json.err" -t 50ms -- "$HD/hostile" 100 2
is "$RC" 0 "record --json -- hostile: exit 0"
python3 "$TMPD/exact.py" ndjson "$HD/hostile" "$TMPD/json.out" >"$TMPD/exact2.txt" 2>&1
is "$(tr '\n' ' ' <"$TMPD/exact2.txt")" "comms exact waker exact module exact " \
	"record --json: each comm, the waker's and the module's path exactly" ||
	diag_file "$TMPD/exact2.txt" "  "
clean "$TMPD/json.err" "record --json's stderr"

# --- every JSON form: UTF-8 a strict reader takes, the broken name as U+FFFD --------------------
# strict FILE WHAT [ndjson]: FILE is UTF-8 and JSON (one document, or one a line) to Python's
# strict reader; NAMED counts the files of which a string holds the third thread's name read back.
cat >"$TMPD/strict.py" <<'EOF2'
import json, sys
BROKEN = '\ufffd\ufffdU8\ufffd(\ufffd\ufffd\ufffd\U0001f600'
path, mode = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else 'json'
try:
    if mode == 'ndjson':
        text = open(path, encoding='utf-8', errors='strict').read()
        docs = [json.loads(l) for l in text.splitlines() if l]
    else:
        docs = [json.load(open(path, encoding='utf-8', errors='strict'))]
except ValueError as e:  # UnicodeDecodeError and JSONDecodeError alike
    print('refused: %s' % e)
    sys.exit(0)
def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
print('parses', 'broken' if any(BROKEN in s for d in docs for s in strings(d)) else 'no-name')
EOF2
strict() {
	local got
	got=$(python3 "$TMPD/strict.py" "$1" "${3:-json}" 2>&1)
	like "$got" '^parses ' "$2: UTF-8 JSON to a strict reader ($got)"
	[ "$got" = "parses broken" ] && NAMED=$((NAMED + 1))
}
# One snapshot or another holds the third thread's naps; each file is checked, the name in one.
NAMED=0
for s in "${SNAPS[@]}"; do
	strict "$s/summary.json" "summary.json of ${s##*/}"
done
ok '[ "$NAMED" -ge 1 ]' "summary.json: the name that is not UTF-8 read back with U+FFFD ($NAMED)"
NAMED=0
for s in "${SNAPS[@]}"; do
	run_latsnap "$TMPD/show.json" "$TMPD/show.err" show --json "$s"
	[ "$RC" = 0 ] || fail "show --json ${s##*/}: exit $RC"
	strict "$TMPD/show.json" "show --json ${s##*/}"
done
ok '[ "$NAMED" -ge 1 ]' "show --json: the name that is not UTF-8 read back with U+FFFD ($NAMED)"
for what in "record --json" "report --by process --json" "export --perfetto"; do
	case $what in
	record*) f=$TMPD/json.out ;;
	report*)
		f=$TMPD/report.json
		run_latsnap "$f" "$TMPD/report.err" report --by process --json "$OUTD"
		is "$RC" 0 "report --by process --json: exit 0"
		;;
	export*)
		f=$TMPD/export.json
		run_latsnap "$TMPD/export.out" "$TMPD/export.err" export --perfetto "$f" "$OUTD"
		is "$RC" 0 "export --perfetto: exit 0"
		;;
	esac
	NAMED=0
	strict "$f" "$what" "$([ "$f" = "$TMPD/json.out" ] && echo ndjson)"
	is "$NAMED" 1 "$what: the name that is not UTF-8 read back with U+FFFD"
done

# --- top --batch: the threads stalled now, each named -----------------------------------------
# No nap: the main thread reads the pipe at once, the second waits 2.5 s for its timer; with
# --include-idle both are stalled when the refresh after 1 s lists them.
"$HD/hostile" 2500 0 >/dev/null 2>&1 &
HOSTILE=$!
track_bg $HOSTILE
run_latsnap "$TMPD/top.txt" "$TMPD/top.err" top -i 1s --batch 1 --hang 300ms --include-idle \
	-p "$HOSTILE"
is "$RC" 0 "top --batch 1: exit 0"
cat "$TMPD/top.err" >>"$TMPD/top.txt"
clean "$TMPD/top.txt" "top --batch"
shows "$TMPD/top.txt" "$MAIN_ESC[$HOSTILE] $MAIN_ESC[$HOSTILE]" "top --batch (the stalled threads)"
shows "$TMPD/top.txt" "$MAIN_ESC[$HOSTILE] $SECOND_ESC[" "top --batch (the stalled threads)"
wait $HOSTILE 2>/dev/null

diag "$(python3 "$TMPD/scan.py" "$TMPD/rec.out" "$TMPD/rec.err" "$TMPD/summary.txt" "$TMPD/show.txt" \
	"$TMPD/report.txt" "$TMPD/flame.txt" "$TMPD/top.txt")"
done_testing
