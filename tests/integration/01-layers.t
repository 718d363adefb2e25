#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The layers of the tree (docs/hacking.md): every include names its header from the top of the
# tree and goes down, never up; scripts/check-layers.sh says which file broke that, and how.
set -u
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

"$ROOT/scripts/check-layers.sh" "$ROOT" >"$TMPD/ok.out" 2>"$TMPD/ok.err"
is "$?" 0 "the tree's includes all go down" || diag_file "$TMPD/ok.err" "  "

# A copy of the tree with one wrong-way include planted in each of two lower layers, and a header
# named bare: each must be named, with its file and line (and nothing else).
COPY=$TMPD/tree
mkdir -p "$COPY"
(cd "$ROOT" && git ls-files -z 2>/dev/null | xargs -0 cp --parents -t "$COPY" 2>/dev/null) ||
	cp -r "$ROOT"/{include,lib,trace,classify,tracker,recorder,review,top,cli,events,preload,bpf} "$COPY"
printf '#include "recorder/recorder.h"\n' >>"$COPY/tracker/decode.c"
printf '#include "review/snapshots.h"\n' >>"$COPY/trace/ctf.c"
printf '#include "util.h"\n' >>"$COPY/review/flame.c"
# A function named in a comment or a string is no call: no circle of ring.c and deliver.c here.
printf '/* ring_record() */\nstatic const char *s = "ring_record()";\n' >>"$COPY/tracker/deliver.c"
"$ROOT/scripts/check-layers.sh" "$COPY" >"$TMPD/bad.out" 2>"$TMPD/bad.err"
is "$?" 1 "a planted upward include fails the check"
like "$(cat "$TMPD/bad.err")" "tracker/decode.c:[0-9]+: tracker/ may not include recorder/recorder.h" \
	"tracker including recorder is named with its file and line"
like "$(cat "$TMPD/bad.err")" "trace/ctf.c:[0-9]+: trace/ may not include review/snapshots.h" \
	"trace including review is named"
like "$(cat "$TMPD/bad.err")" 'review/flame.c:[0-9]+: "util.h": name a header from the top' \
	"a bare header name is named"
is "$(grep -c '' "$TMPD/bad.err")" 3 "nothing else is reported" || diag_file "$TMPD/bad.err" "  "

# Calls go one way between the files of a layer: a planted call back from tracker/deliver.c (which
# ring.c calls) to ring.c makes a circle, named with the files and the calls that make it.
CIRCLE=$TMPD/circle
mkdir -p "$CIRCLE"
(cd "$ROOT" && git ls-files -z 2>/dev/null | xargs -0 cp --parents -t "$CIRCLE" 2>/dev/null) ||
	cp -r "$ROOT"/{include,lib,trace,classify,tracker,recorder,review,top,cli,events,preload,bpf} "$CIRCLE"
printf '\n/* ring_record() in a comment is no call. */\nint deliver_back(void *r)\n{\n\treturn ring_record(r, "x", 1);\n}\n' \
	>>"$CIRCLE/tracker/deliver.c"
"$ROOT/scripts/check-layers.sh" "$CIRCLE" >"$TMPD/circle.out" 2>"$TMPD/circle.err"
is "$?" 1 "a planted circle of calls fails the check"
like "$(cat "$TMPD/circle.err")" \
	"^tracker/: a circle of calls between .*tracker/deliver.c.*tracker/ring.c.*tracker/deliver.c calls ring_record\(\) of tracker/ring.c.*tracker/ring.c calls deliver_outlier\(\) of tracker/deliver.c" \
	"the circle is named with its files and calls"
is "$(grep -c '' "$TMPD/circle.err")" 1 "one line for it, nothing else" || diag_file "$TMPD/circle.err" "  "

done_testing
