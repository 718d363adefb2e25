#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# latsnap export --perfetto over snapshots recorded here (the real recorder, lttng-sessiond and
# workloads), checked as a user of the Perfetto UI would:
#  a) DIR/ID of `pipewait 150`: a JSON object that follows the Chrome trace event format (a JSON
#     Schema of it, tests/schemas/chrome-trace-event.schema.json, with Debian's python3-jsonschema);
#     thread names pipewait and pipewriter; the ~150 ms read as a syscall slice on the reader; the
#     outlier as a slice with the summary's cause; a wakeup arrow from pipewriter to the reader;
#     the reader's state track blocked through the read; each flow id one start and one end, each
#     end inside a slice of its thread; slices of a track nest; no negative time or duration.
#  b) DIR, with a run of several overlapping snapshots in it too: each event once, both runs in.
#  c) a thread named '<script>x"' (prctl): still valid JSON, the name carried exactly.
#  d) usage and input errors: exit 2 (usage) or 1, one line naming what is wrong.
set -u
# d) writes a broken summary on purpose: the schema check is of the recorder's (at the end).
SUMMARY_SCHEMA=skip
. "$(dirname "$0")/lib.sh"

require_root
require jq cc timeout
require_latsnap
require_workloads pipewait
require_lttng
if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	skip_all "needs Debian's python3-jsonschema for /usr/bin/python3 (scripts/install-deps.sh)"
fi

T_START=$(date +%s%N)
OUT=$TMPD/s
SCHEMA=$ROOT/tests/schemas/chrome-trace-event.schema.json
STATE_BASE=$((1 << 30))

# rec TAG ARGS...: `latsnap record --json -o $OUT ARGS`; sets RC. Done again (at most twice) when
# another test stopped the machine's session daemon under it.
rec() {
	local tag=$1 try
	shift
	for try in 1 2 3; do
		# Each nap in a snapshot of its own: not the flood guard's matter (46-flood.t).
		record_snap "$tag" -o "$OUT" --no-flood-guard "$@"
		grep -q 'No session daemon is available' "$TMPD/$tag.err" || break
		diag "record $* (try $try): the session daemon went away under it; again"
		find "$OUT" -mindepth 1 -maxdepth 1 -type d -newer "$TMPD/$tag.log" -exec rm -rf {} + 2>/dev/null
		require_lttng
	done
}

# X OUT ERR ARGS...: `latsnap export ARGS` with the time limit; sets RC.
X() {
	run_latsnap "$@"
}

# valid FILE: FILE follows the schema (the first violations as diag lines otherwise).
valid() {
	/usr/bin/python3 - "$SCHEMA" "$1" <<'EOF'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
with open(sys.argv[2], encoding="utf-8") as f:
    doc = json.load(f)
errs = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errs[:5]:
    print("# schema: %s: %s" % (list(e.path), e.message[:300]))
sys.exit(1 if errs else 0)
EOF
}

# tracks FILE: what Perfetto needs to draw FILE cleanly: the slices ("X") of each track nest
# (none ends inside another it started after), each flow end ("s", "f") lies inside a slice of
# its thread. Says what is wrong, nothing when all is well.
tracks() {
	/usr/bin/python3 - "$1" <<'EOF'
import json, sys
from collections import defaultdict
doc = json.load(open(sys.argv[1], encoding="utf-8"))
ns = lambda us: round(us * 1000)
slices = defaultdict(list)
for e in doc["traceEvents"]:
    if e["ph"] == "X":
        slices[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
bad = []
for key, v in slices.items():
    v.sort(key=lambda s: (s[0], -s[1]))
    stack = []
    for s in v:
        while stack and stack[-1][1] <= s[0]:
            stack.pop()
        if stack and s[1] > stack[-1][1]:
            bad.append("track %s: %s %s crosses %s %s" % (key, s[2], s[:2], stack[-1][2], stack[-1][:2]))
        stack.append(s)
for e in doc["traceEvents"]:
    if e["ph"] in ("s", "f"):
        t = ns(e["ts"])
        if not any(a <= t <= b for a, b, _ in slices[(e["pid"], e["tid"])]):
            bad.append("flow %s %s at %d on %s/%s is in no slice" % (e["ph"], e["id"], t, e["pid"], e["tid"]))
for b in bad[:5]:
    print(b)
EOF
}

# --- recordings -------------------------------------------------------------------------------
rec p -t 50ms -- "$WL/pipewait" 150
is "$RC" 0 "record -t 50ms -- pipewait 150: exit 0"
ID=$(find "$OUT" -mindepth 2 -maxdepth 2 -name summary.json -printf '%h\n' | xargs -r -n1 basename | LC_ALL=C sort | head -1)
ok '[ -n "$ID" ]' "a complete snapshot of pipewait ($ID)" || bail_out "no snapshot recorded"
READER=$(wl_log_get "$TMPD/p.log" reader)
WRITER=$(wl_log_get "$TMPD/p.log" writer)
ok '[ -n "$READER" ] && [ -n "$WRITER" ]' "pipewait ran (reader $READER, writer $WRITER)"
READER=${READER:-0} WRITER=${WRITER:-0}

# A program whose thread names itself '<script>x"' and sleeps: 3 naps of 80 ms, 400 ms apart, so
# that the run leaves snapshots that overlap (each holds the kernel events of the ones before).
cat >"$TMPD/hostile.c" <<'EOF'
#include <sys/prctl.h>
#include <time.h>
static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}
int main(void)
{
	prctl(PR_SET_NAME, "<script>x\"", 0, 0, 0);
	for (int i = 0; i < 3; i++) {
		nap(80);
		if (i < 2)
			nap(400);
	}
	return 0;
}
EOF
cc -O2 -o "$TMPD/hostile" "$TMPD/hostile.c" 2>"$TMPD/cc.err"
ok '[ -x "$TMPD/hostile" ]' "the hostile-name program builds" || diag_file "$TMPD/cc.err" "  cc: "
rec h -t 50ms -- "$TMPD/hostile"
is "$RC" 0 "record -t 50ms -- hostile: exit 0"
NSNAP=$(find "$OUT" -mindepth 2 -maxdepth 2 -name summary.json | wc -l)
ok '[ "$NSNAP" -ge 3 ]' "3 or more complete snapshots in DIR ($NSNAP)"

# --- a) DIR/ID --------------------------------------------------------------------------------
E=$TMPD/one.json
X "$TMPD/one.out" "$TMPD/one.err" export --perfetto "$E" "$OUT/$ID"
is "$RC" 0 "a) export --perfetto FILE DIR/ID: exit 0"
ok '[ ! -s "$TMPD/one.err" ]' "a) nothing on stderr" || diag_file "$TMPD/one.err" "  stderr: "
ok '[ ! -s "$TMPD/one.out" ]' "a) nothing on stdout (it went to FILE)"
ok 'jq -e "type == \"object\" and (.traceEvents | type == \"array\" and length > 0) and .displayTimeUnit == \"ns\"" "$E" >/dev/null' \
	"a) one JSON object: traceEvents, displayTimeUnit ns"
valid "$E"
ok $? "a) it follows the Chrome trace event format (JSON Schema)"
BAD=$(tracks "$E")
is "$BAD" "" "a) slices of each track nest; each flow end lies in a slice of its thread"
J() { jq -r "$@" "$E" 2>/dev/null; }
is "$(J --argjson t "$READER" '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .tid == $t) | .args.name] | join(",")')" \
	pipewait "a) the reader's thread is named pipewait"
is "$(J --argjson t "$WRITER" '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .tid == $t) | .args.name] | join(",")')" \
	pipewriter "a) the writer's thread is named pipewriter"
is "$(J --argjson p "$READER" '[.traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid == $p) | .args.name] | join(",")')" \
	pipewait "a) the reader's process is named pipewait"
READ_SEL='.traceEvents[] | select(.ph == "X" and .cat == "syscall" and .name == "read" and .tid == $t and .dur >= 140000)'
is "$(J --argjson t "$READER" "[$READ_SEL] | length")" 1 "a) one long read slice on the reader's thread"
RDUR=$(J --argjson t "$READER" "[$READ_SEL | .dur] | first // 0")
between "$RDUR" 140000 400000 "a) it lasts ~150 ms ($RDUR us, within [140, 400] ms)"
RTS=$(J --argjson t "$READER" "[$READ_SEL | .ts] | first // 0")

CAUSE=$(jq -r --argjson t "$READER" '[.outliers[] | select(.tid == $t and .syscall == "read") | .cause] | first // ""' "$OUT/$ID/summary.json")
is "$CAUSE" "Reading from a pipe" "a) the summary's cause of the read"
OSEL='.traceEvents[] | select(.ph == "X" and .cat == "outlier" and .tid == $t and (.name | startswith("OUTLIER: read ")))'
is "$(J --argjson t "$READER" "[$OSEL | .args.cause] | join(\",\")")" "$CAUSE" \
	"a) an outlier slice 'OUTLIER: read ...' on the reader with the summary's cause"
is "$(J --argjson t "$READER" "[$OSEL | .args | (.kind == \"syscall\") and (.snapshot == \"$ID\") and (.duration_ns > 140000000) and (.blocked_ns > 0) and (.flags | type == \"array\")] | first")" \
	true "a) its args: kind, snapshot id, duration_ns, split, flags"
is "$(J --argjson t "$READER" --argjson ts "$RTS" --argjson d "$RDUR" "[$OSEL | (.ts == \$ts and .dur == \$d)] | first")" \
	true "a) the outlier slice spans the read slice exactly"
is "$(J --argjson t "$READER" '[.traceEvents[] | select(.ph == "i" and .s == "g" and .cat == "outlier" and .tid == $t and (.name | startswith("OUTLIER: read ")))] | length')" \
	1 "a) a global instant marks the read outlier's end"

# The wakeup: "s" on the writer at its write, "f" on the reader where it got the CPU back.
FLOW=$(J --argjson w "$WRITER" --argjson r "$READER" '
	(.traceEvents | map(select(.ph == "s" and .cat == "wakeup" and .tid == $w)) | map(.id)) as $s
	| [.traceEvents[] | select(.ph == "f" and .bp == "e" and .cat == "wakeup" and .tid == $r and (.id as $i | $s | index($i)))]
	| first | if . then "\(.id) \(.ts)" else "" end')
ok '[ -n "$FLOW" ]' "a) a wakeup arrow from pipewriter's thread to the reader's ($FLOW)"
FID=${FLOW% *} FTS=${FLOW#* }
is "$(J --argjson i "${FID:-0}" '[.traceEvents[] | select(.ph == "s" and .id == $i) | "\(.pid)/\(.tid)"] | join(",")')" \
	"$WRITER/$WRITER" "a) its start is on the writer, and only there"
between "${FTS:-0}" "$RTS" "$(jq -n "$RTS + $RDUR")" "a) its end lies inside the read"

# The reader's state track: blocked through most of the read.
BLOCKED=$(J --argjson t "$((STATE_BASE + READER))" --argjson a "$RTS" --argjson d "$RDUR" '
	[.traceEvents[] | select(.ph == "X" and .cat == "sched" and .name == "blocked" and .tid == $t)
	 | ([.ts + .dur, $a + $d] | min) - ([.ts, $a] | max) | select(. > 0)] | add // 0')
is "$(jq -n "$BLOCKED >= 0.9 * $RDUR")" true "a) state 'blocked' covers >= 90% of the read ($BLOCKED of $RDUR us)"
is "$(J --argjson t "$((STATE_BASE + READER))" '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .tid == $t) | .args.name] | first')" \
	"pipewait $READER state" "a) the state track is named 'pipewait $READER state'"
is "$(J --argjson t "$((STATE_BASE + READER))" '[.traceEvents[] | select(.tid == $t and .ph == "X") | .name] | unique | map(select(IN("on-cpu", "blocked", "runqueue") | not)) | length')" \
	0 "a) state slices are on-cpu, blocked or runqueue only"
# One state track: its slices follow each other without gap or overlap.
is "$(J --argjson t "$((STATE_BASE + READER))" '[.traceEvents[] | select(.tid == $t and .ph == "X")] | sort_by(.ts)
	| [range(1; length) as $i | .[$i].ts - (.[$i - 1].ts + .[$i - 1].dur) | fabs | select(. > 0.0015)] | length')" \
	0 "a) the reader's state slices are contiguous"

is "$(J '[.traceEvents[] | select(.ph == "s" or .ph == "f")] | group_by(.id) | map(select((map(.ph) | sort) != ["f", "s"])) | length')" \
	0 "a) every flow id has exactly one s and one f"
is "$(J '[.traceEvents[] | select(.ph == "s" or .ph == "f")] | group_by(.id) | map(select(.[0].ts > .[1].ts and .[0].ph == "s" or .[1].ts > .[0].ts and .[1].ph == "s")) | length')" \
	0 "a) no flow ends before it starts"
is "$(J '[.traceEvents[] | select(.ph != "M" and (.ts < 0 or (.dur // 0) < 0))] | length')" 0 \
	"a) no negative ts or dur"
is "$(J '[.traceEvents[] | select(.ph != "M" and (.ts | type) != "number")] | length')" 0 \
	"a) every ts is a number"

X "$TMPD/stdout.json" "$TMPD/stdout.err" export --perfetto - "$OUT/$ID"
is "$RC" 0 "a) --perfetto - : exit 0"
is "$(jq -S -c . "$TMPD/stdout.json" 2>&1 | md5sum)" "$(jq -S -c . "$E" | md5sum)" "a) stdout gets the same document as FILE"

# --- b) DIR -----------------------------------------------------------------------------------
D=$TMPD/dir.json
X "$TMPD/dir.out" "$TMPD/dir.err" export --perfetto "$D" "$OUT"
is "$RC" 0 "b) export --perfetto FILE DIR: exit 0" || diag_file "$TMPD/dir.err" "  stderr: "
valid "$D"
ok $? "b) it follows the Chrome trace event format (JSON Schema)"
BAD=$(tracks "$D")
is "$BAD" "" "b) slices of each track nest; each flow end lies in a slice of its thread"
is "$(jq '.metadata.snapshots | length' "$D")" "$NSNAP" "b) metadata names every complete snapshot ($NSNAP)"
DUPS=$(jq -c '[.traceEvents[]] | group_by([.ph, .name, .cat, .ts, .pid, .tid, .id]) | map(select(length > 1) | .[0]) | .[:3]' "$D")
is "$DUPS" "[]" "b) no event twice, though the snapshots overlap"
# The overlap is real: the hostile run's last snapshot holds the kernel events of its first.
HT=$(jq -r '[.outliers[] | select(.comm == "<script>x\"") | .tid] | first // 0' "$OUT"/*/summary.json | sort -u | grep -v '^0$' | head -1)
HT=${HT:-0}
SHARED=0
H1=$(grep -l '<script>x' "$OUT"/*/summary.json | LC_ALL=C sort | head -1)
H2=$(grep -l '<script>x' "$OUT"/*/summary.json | LC_ALL=C sort | tail -1)
if [ -n "$H1" ] && [ "$H1" != "$H2" ]; then
	X "$TMPD/h1.json" "$TMPD/h1.err" export -p - "$(dirname "$H1")"
	X "$TMPD/h2.json" "$TMPD/h2.err" export -p - "$(dirname "$H2")"
	SHARED=$(jq -n --slurpfile a "$TMPD/h1.json" --slurpfile b "$TMPD/h2.json" '
		[$a[0].traceEvents[] | select(.cat == "syscall")] as $x
		| [$b[0].traceEvents[] | select(.cat == "syscall")] as $y | [$x[] | select(IN($y[]))] | length')
fi
# Since latsnap writes each snapshot's kernel context as a trace of its own (trace/latsnap/), a
# snapshot holds the context of its own window only: two of them share events only when their
# windows overlap. In LTTng's ring buffer (the earlier layout) a snapshot kept what earlier ones
# had written too.
if [ -n "$H2" ] && [ -e "$(dirname "$H2")/trace/latsnap" ]; then
	skip_tests 1 "b) snapshots of latsnap's own traces share kernel events only when their windows overlap ($SHARED syscall slices shared)"
else
	ok '[ "${SHARED:-0}" -ge 1 ]' "b) the hostile run's first and last snapshots share events ($SHARED syscall slices)"
fi
is "$(jq --argjson t "$READER" '[.traceEvents[] | select(.ph == "X" and .cat == "syscall" and .name == "read" and .tid == $t and .dur >= 140000)] | length' "$D")" \
	1 "b) the pipewait read is in DIR's export once"
NOUT=$(jq -s '[.[].outliers[] | [.tid, .start_ns]] | unique | length' "$OUT"/*/summary.json)
is "$(jq '[.traceEvents[] | select(.ph == "X" and .cat == "outlier")] | length' "$D")" "$NOUT" \
	"b) each wait of the summaries is one outlier slice ($NOUT)"

# --- c) a hostile comm ------------------------------------------------------------------------
ok '[ "$HT" != 0 ]' "c) the hostile thread's outliers are in the summaries (tid $HT)"
ok 'jq -e . "$D" >/dev/null' "c) the export with it is valid JSON"
is "$(jq -r --argjson t "$HT" '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .tid == $t) | .args.name] | first' "$D")" \
	'<script>x"' "c) its thread_name is '<script>x\"' exactly"
is "$(jq -r --argjson t "$((STATE_BASE + HT))" '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .tid == $t) | .args.name] | first' "$D")" \
	"<script>x\" $HT state" "c) so is its state track's, with its tid"
is "$(jq --argjson t "$HT" '[.traceEvents[] | select(.ph == "X" and .cat == "outlier" and .tid == $t)] | length' "$D")" \
	5 "c) its 5 sleeps are outlier slices"

# --- d) errors --------------------------------------------------------------------------------
X "$TMPD/u.out" "$TMPD/u.err" export --help
is "$RC" 0 "d) --help: exit 0"
like "$(cat "$TMPD/u.out")" "Usage: latsnap export --perfetto FILE DIR\[/ID\]" "d) --help prints the usage"
X "$TMPD/u.out" "$TMPD/u.err" export "$OUT/$ID"
is "$RC" 2 "d) no --perfetto: exit 2"
like "$(cat "$TMPD/u.err")" "^latsnap: export: --perfetto FILE missing" "d) ... and says --perfetto FILE is missing"
X "$TMPD/u.out" "$TMPD/u.err" export --perfetto "$TMPD/x.json"
is "$RC" 2 "d) no DIR: exit 2"
like "$(cat "$TMPD/u.err")" "^latsnap: export: DIR or DIR/ID missing" "d) ... and says DIR is missing"
X "$TMPD/u.out" "$TMPD/u.err" export --perfetto "$TMPD/x.json" --bogus "$OUT"
is "$RC" 2 "d) an unknown option: exit 2"
like "$(cat "$TMPD/u.err")" "unknown option '--bogus'" "d) ... named"
X "$TMPD/u.out" "$TMPD/u.err" export --perfetto "$TMPD/x.json" "$TMPD/no-such-dir"
is "$RC" 1 "d) a DIR that does not exist: exit 1"
like "$(cat "$TMPD/u.err")" "^latsnap: export: $TMPD/no-such-dir: No such file or directory$" "d) ... named, one line"
ok '[ ! -e "$TMPD/x.json" ]' "d) ... and no FILE written"
mkdir -p "$TMPD/empty"
X "$TMPD/u.out" "$TMPD/u.err" export --perfetto "$TMPD/x.json" "$TMPD/empty"
is "$RC" 1 "d) a DIR without snapshots: exit 1"
like "$(cat "$TMPD/u.err")" "$TMPD/empty: no snapshot in it" "d) ... says so"
X "$TMPD/u.out" "$TMPD/u.err" export --perfetto "$TMPD/no-such-dir/x.json" "$OUT/$ID"
is "$RC" 1 "d) an unwritable FILE: exit 1"
like "$(cat "$TMPD/u.err")" "^latsnap: export: $TMPD/no-such-dir/x.json: No such file or directory$" "d) ... named"
mkdir -p "$TMPD/broken/1"
echo '{"version": 1, "id": ' >"$TMPD/broken/1/summary.json"
X "$TMPD/u.out" "$TMPD/u.err" export --perfetto "$TMPD/x.json" "$TMPD/broken/1"
is "$RC" 1 "d) a corrupt snapshot: exit 1"
like "$(head -1 "$TMPD/u.err")" "$TMPD/broken/1/summary.json" "d) ... its summary named"
# The schema itself can say no: an "X" without dur, a flow without id.
jq '.traceEvents |= map(if .ph == "X" then del(.dur) elif .ph == "s" then del(.id) else . end)' "$E" >"$TMPD/bad.json"
valid "$TMPD/bad.json" >/dev/null
isnt $? 0 "d) the schema refuses an X without dur and a flow without id"

diag "84-perfetto took $(( ($(date +%s%N) - T_START) / 1000000 )) ms"
check_summaries "$OUT"
done_testing
