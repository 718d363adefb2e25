#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# latsnap show --html and report --html, rendered by a real headless browser (Debian's
# chromium) from snapshots the real recorder wrote:
#  a) pipewait (a pipe read woken by pipewriter): the page is self-contained (nothing fetched),
#     its script ran without error; its index holds each outlier's thread, cause and innermost
#     kernel frame as show --json has them; the read's timeline has the reader's lane (blocked
#     for the time BPF measured) and the waker's, and a wakeup arrow; the flame graph is there;
#     a screenshot is not blank and shows the timeline's colours.
#  b) hostile text: a comm and a C++ symbol holding "<script>" are shown as text, never run.
#  c) 1,024 outliers in one snapshot: every one in the index, only the first sections drawn.
#  d) report --html: the cause table, the distributions as bars, a link to each snapshot's
#     page (each written, each rendering); a symlink in place of the pages directory is refused.
#  e) a request (record --request) of reqserver: its CPU profile (crunch under handle_request).
#  f) usage errors and unwritable files: exit 2 / 1 with the reason.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq timeout c++ chromium /usr/bin/python3
require_latsnap
require_workloads pipewait sleeper reqserver
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
require_lttng
/usr/bin/python3 -c 'import PIL' 2>/dev/null || skip_all "needs python3-pil (scripts/install-deps.sh)"

FACTS=$ROOT/tests/integration/html-facts.py
OUT=$TMPD/out

# rec OUTDIR TAG ARGS...: latsnap record -o OUTDIR ARGS (snapshots); sets RC.
rec() {
	local dir=$1 tag=$2
	shift 2
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -o "$dir" "$@" \
		>"$TMPD/$tag.out" 2>"$TMPD/$tag.err"
	RC=$?
	[ "$RC" = 0 ] || { diag "record $* exited $RC:"; diag_file "$TMPD/$tag.err" "  stderr: "; }
}

# chrome ARGS... PAGE: headless chromium on the file PAGE; its log (the page's console
# included) in $TMPD/chrome.log.
chrome() {
	timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMPD/chrome" --enable-logging=stderr --v=0 \
		--virtual-time-budget=10000 "$@" 2>>"$TMPD/chrome.log"
}

# dom PAGE TAG: the DOM chromium rendered from PAGE, read by html-facts.py into $TMPD/TAG.facts.
dom() {
	: >"$TMPD/chrome.log"
	chrome --dump-dom "file://$1" >"$TMPD/$2.dom"
	/usr/bin/python3 "$FACTS" "$TMPD/$2.dom" "$1" >"$TMPD/$2.facts" ||
		diag "html-facts.py could not read $TMPD/$2.dom"
}

# rendered TAG WHAT: the page's script drew it without an error (its own mark, and the console).
rendered() {
	is "$(jq -r '"\(.render) \(.errors)"' "$TMPD/$1.facts")" "ok null" \
		"$2: the page's script drew it, no error"
	! grep -E 'CONSOLE.*(Uncaught|Error)|Refused to' "$TMPD/chrome.log" >/dev/null
	ok $? "$2: no script error or blocked load in the browser's console" ||
		grep -E 'CONSOLE|Refused' "$TMPD/chrome.log" | head -5 | while read -r l; do diag "  $l"; done
}

# --- a) one snapshot ---------------------------------------------------------------------------
rec "$OUT" a -t 50ms -- "$WL/pipewait" 150
is "$RC" 0 "a) record -- pipewait: exit 0"
ID=$(for d in "$OUT"/*/; do [ -f "$d/summary.json" ] && basename "$d"; done | head -n 1)
run_latsnap "$TMPD/a.txt" "$TMPD/a.err" show --html "$TMPD/a.html" "$OUT/${ID:-none}"
is "$RC" 0 "a) show --html FILE DIR/ID: exit 0" || diag_file "$TMPD/a.err" "  stderr: "
ok '[ -s "$TMPD/a.html" ] && ! [ -s "$TMPD/a.txt" ]' "a) the page is in FILE, nothing on stdout"
# (The SVG namespace is a name, not an address; url(#id) is a reference inside the page.)
! grep -Piq '(src|href|action)\s*=\s*["\x27]?(https?:|//|file:)|@import|url\((?!#)|fetch\(|XMLHttpRequest|<(link|iframe|object|embed)\b' \
	"$TMPD/a.html"
ok $? "a) self-contained: no script, style, image or address fetched from anywhere"
run_latsnap "$TMPD/a.json" "$TMPD/a.jerr" show --json "$OUT/${ID:-none}"
dom "$TMPD/a.html" a
rendered a "a)"
# What a user checks first: each outlier's thread, cause and the kernel function it waited in.
want=$(jq -r '.outliers[] | "\(.comm) (\(.pid)/\(.tid))|\(.cause)|" +
	((.kernel_stacks | max_by(.weight_ns) | .frames[0]) as $f |
	 if $f then "\($f.symbol)+0x\($f.offset | tostring)" else "" end)' "$TMPD/a.json" |
	perl -pe 's/\+0x(\d+)$/sprintf("+0x%x", $1)/e' | sort)
got=$(jq -r '.rows[] | "\(.thread)|\(.cause)|\(.frame)"' "$TMPD/a.facts" | sort)
is "$got" "$want" "a) the index: each outlier's thread, cause and innermost kernel frame"
like "$want" 'pipewait \([0-9]+/[0-9]+\)\|Reading from a pipe\|(anon_)?pipe_read\+0x' \
	"a) among them the read of the pipe, waiting in pipe_read"
# The read's timeline: its own lane and its waker's, the wakeup between them.
RIDX=$(jq -r '[.outliers[] | .syscall] | index("read") + 1' "$TMPD/a.json")
READER=$(jq -r '.outliers[] | select(.syscall == "read") | .tid' "$TMPD/a.json")
WRITER=$(jq -r '.outliers[] | select(.syscall == "read") | .waker.tid' "$TMPD/a.json")
is "$(jq -r --arg s "o-$RIDX" '[.lanes[] | select(.section == $s) | "\(.role):\(.tid)"] | join(",")' "$TMPD/a.facts")" \
	"slow thread:$READER,waker:$WRITER" "a) the read's timeline: a lane for the reader, one for its waker (pipewriter)"
between "$(jq -r --arg s "o-$RIDX" '[.lanes[] | select(.section == $s and .role == "slow thread") | .rects.blocked // 0] | add' "$TMPD/a.facts")" \
	1 100 "a) the reader's lane has blocked spans"
between "$(jq -r --arg s "o-$RIDX" '.wakeups[$s] // 0' "$TMPD/a.facts")" 1 100 \
	"a) a wakeup arrow in the read's timeline"
# The spans drawn agree with the split BPF measured: blocked time within the outlier.
drawn=$(jq -r '.data.outliers[] | select(.syscall == "read") | . as $o |
	[.lanes[0].spans[] | select(.[2] == "blocked") |
	 ([.[1], $o.duration_ns] | min) - ([.[0], 0] | max) | select(. > 0)] | add // 0' "$TMPD/a.facts")
measured=$(jq -r '.outliers[] | select(.syscall == "read") | .blocked_ns' "$TMPD/a.json")
between "$(awk -v d="$drawn" -v m="$measured" 'BEGIN { printf "%.3f", m ? d / m : 0 }')" 0.9 1.02 \
	"a) the reader's blocked spans add up to the blocked time measured ($drawn of $measured ns)"
grep -q 'id="latsnap-flame"' "$TMPD/a.dom" && grep -q '<svg[^>]*>' "$TMPD/a.dom" &&
	grep -q 'pipe_read' <(sed -n '/id="latsnap-flame"/,/<\/svg>/p' "$TMPD/a.dom")
ok $? "a) the snapshot's flame graph is on the page, pipe_read in it"
: >"$TMPD/chrome.log"
chrome --window-size=1280,1400 --screenshot="$TMPD/a.png" "file://$TMPD/a.html" >/dev/null
/usr/bin/python3 - "$TMPD/a.png" >"$TMPD/a.png.txt" <<'EOF'
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
px = list(im.getdata())
ink = sum(1 for p in px if p != (255, 255, 255)) / len(px)
colours = set(px)
# The timeline's state colours (review/html/page.css): on CPU, blocked.
print("%.3f %d %d %d" % (ink, len(colours), (58, 157, 58) in colours, (217, 83, 79) in colours))
EOF
read -r ink ncol green red <"$TMPD/a.png.txt"
between "${ink:-0}" 0.03 0.95 "a) the screenshot is not blank ($ink of it inked, $ncol colours)"
is "${green:-0}${red:-0}" "11" "a) the screenshot shows the timeline: on-CPU green and blocked red"

# --- b) hostile text ---------------------------------------------------------------------------
cat >"$TMPD/hostile.cc" <<'EOF'
#include <sys/prctl.h>
#include <time.h>
struct script {};
template <typename T> struct Nap {
	__attribute__((noinline)) static void nap(long ms)
	{
		struct timespec ts = { 0, ms * 1000000L };
		nanosleep(&ts, nullptr);
		__asm__ volatile("" ::: "memory");
	}
};
int main()
{
	prctl(PR_SET_NAME, "<script>x&\"");
	Nap<script>::nap(80);
	return 0;
}
EOF
mkdir -p "$TMPD/bin"
if c++ -O2 -g -fno-omit-frame-pointer -o "$TMPD/bin/hostile" "$TMPD/hostile.cc" 2>"$TMPD/cc.err"; then
	rec "$TMPD/h" b -t 40ms -- "$TMPD/bin/hostile"
	HID=$(for d in "$TMPD/h"/*/; do [ -f "$d/summary.json" ] && basename "$d"; done | head -n 1)
	run_latsnap "$TMPD/b.txt" "$TMPD/b.err" show --html "$TMPD/b.html" "$TMPD/h/${HID:-none}"
	is "$RC" 0 "b) show --html of a process named <script>x&\": exit 0"
	is "$(grep -o '<script' "$TMPD/b.html" | wc -l)" 2 \
		"b) the page file holds its own two script elements, no other"
	dom "$TMPD/b.html" b
	rendered b "b)"
	is "$(jq -r '.scripts' "$TMPD/b.facts")" 2 "b) the rendered DOM has no script element of the snapshot's"
	jq -e '.text | contains("<script>x&\"") and contains("Nap<script>::nap(long)")' "$TMPD/b.facts" >/dev/null
	ok $? "b) the comm and the C++ frame Nap<script>::nap(long) are shown as text" ||
		jq -r '.text' "$TMPD/b.facts" | head -c 600 | while read -r l; do diag "  $l"; done
	is "$(jq -r '.rows[0].thread' "$TMPD/b.facts" | cut -d' ' -f1)" '<script>x&"' \
		"b) the index row names the thread as it is"
else
	fail "b) c++ could not build the hostile program" && diag_file "$TMPD/cc.err" "  "
fi

# --- c) 1,024 outliers in one snapshot ----------------------------------------------------------
# 1,024 outliers of one process in 2 s: over its share at the source (46-flood.t), so no limit.
rec "$TMPD/big" c -t 1ms --post 3s --max-rate 0 -- "$WL/sleeper" 2 1024
BID=$(for d in "$TMPD/big"/*/; do [ -f "$d/summary.json" ] && basename "$d"; done | head -n 1)
N=$(jq '.outliers | length' "$TMPD/big/${BID:-none}/summary.json" 2>/dev/null)
between "${N:-0}" 1000 1024 "c) one snapshot of $N outliers"
t0=$(date +%s%N)
run_latsnap "$TMPD/c.txt" "$TMPD/c.err" show --html "$TMPD/c.html" "$TMPD/big/${BID:-none}"
t1=$(date +%s%N)
is "$RC" 0 "c) show --html of it: exit 0"
dom "$TMPD/c.html" c
t2=$(date +%s%N)
diag "c) $N outliers: a page of $(($(stat -c %s "$TMPD/c.html") / 1024)) KiB, written in $(((t1 - t0) / 1000000)) ms; its script drew it in $(jq -r .draw_ms "$TMPD/c.facts") ms (chromium's whole run: $(((t2 - t1) / 1000000)) ms)"
rendered c "c)"
is "$(jq -r '"\(.rows | length) \(.sections | length)"' "$TMPD/c.facts")" "$N $N" \
	"c) the index lists every outlier, each has its section"
is "$(jq -r '.drawn | join(",")' "$TMPD/c.facts")" "o-1,o-2,o-3" \
	"c) only the first three sections are drawn before they are opened"

# --- d) report --html --------------------------------------------------------------------------
NSNAP=$(for d in "$OUT"/*/; do [ -f "$d/summary.json" ] && echo; done | wc -l)
run_latsnap "$TMPD/d.txt" "$TMPD/d.err" report --html "$TMPD/r.html" "$OUT"
is "$RC" 0 "d) report --html FILE DIR: exit 0" || diag_file "$TMPD/d.err" "  stderr: "
is "$(find "$TMPD/r-snapshots" -name '*.html' | wc -l)" "$NSNAP" \
	"d) a page per complete snapshot in r-snapshots/"
dom "$TMPD/r.html" d
rendered d "d)"
like "$(jq -r '.groups[] | join("|")' "$TMPD/d.facts")" 'Reading from a pipe\|1\|' \
	"d) the cause table: Reading from a pipe, once"
between "$(jq -r '.hist_bars' "$TMPD/d.facts")" 2 100 "d) the distributions drawn as bars"
links=$(jq -r '.links[]' "$TMPD/d.facts")
is "$(echo "$links" | grep -c .)" "$NSNAP" "d) a link to each snapshot's page"
missing=0
for l in $links; do [ -s "$TMPD/$l" ] || missing=$((missing + 1)); done
is "$missing" 0 "d) each link leads to a page that exists, relative to the report"
first=$(echo "$links" | head -n 1)
dom "$TMPD/${first:-none}" d1
rendered d1 "d) a linked snapshot page"
mkdir "$TMPD/elsewhere"
ln -s "$TMPD/elsewhere" "$TMPD/s-snapshots"
run_latsnap "$TMPD/d2.txt" "$TMPD/d2.err" report --html "$TMPD/s.html" "$OUT"
is "$RC" 1 "d) report --html with a symlink as its pages directory: exit 1"
grep -q 's-snapshots: not a directory (a symlink is not followed)' "$TMPD/d2.err" &&
	[ -z "$(ls -A "$TMPD/elsewhere")" ]
ok $? "d) it says so and writes nothing where the symlink points"

# --- e) a request (record --request): its CPU profile on the page --------------------------------
rec "$TMPD/rq" e -t 50ms --request "uprobe:$WL/reqserver:handle_request" -- "$WL/reqserver" 5:0 150:0
QID=$(for d in "$TMPD/rq"/*/; do [ -f "$d/summary.json" ] && basename "$d"; done | head -n 1)
is "$(jq -r '[.outliers[] | select(.kind == "request")] | length' "$TMPD/rq/${QID:-none}/summary.json" 2>/dev/null)" \
	1 "e) record --request -- reqserver: one request outlier (150 ms computing)"
run_latsnap "$TMPD/e.txt" "$TMPD/e.err" show --html "$TMPD/e.html" "$TMPD/rq/${QID:-none}"
dom "$TMPD/e.html" e
rendered e "e)"
jq -e '.text | test("CPU profile: [0-9.]+ ms sampled in [0-9]+ stacks?, heaviest first")' "$TMPD/e.facts" >/dev/null &&
	jq -e '.text | test("handle_request\\+0x[0-9a-f]+ +\\(reqserver\\) crunch\\+0x")' "$TMPD/e.facts" >/dev/null
ok $? "e) the request's CPU profile is on the page, crunch called from handle_request" ||
	jq -r '.text' "$TMPD/e.facts" | grep -o 'CPU profile.\{0,300\}' | while read -r l; do diag "  $l"; done

# --- f) usage and unwritable files ---------------------------------------------------------------
run_latsnap "$TMPD/f.txt" "$TMPD/f.err" show --html
is "$RC" 2 "f) show --html without FILE: usage error"
run_latsnap "$TMPD/f.txt" "$TMPD/f.err" show --json --html "$TMPD/x.html" "$OUT/$ID"
is "$RC" 2 "f) show --json --html: usage error"
grep -q 'one or the other' "$TMPD/f.err"
ok $? "f) it says --json and --html are one or the other"
cp "$TMPD/a.html" "$TMPD/a.before"
run_latsnap "$TMPD/f.txt" "$TMPD/f.err" show --html "$TMPD/nodir/a.html" "$OUT/$ID"
is "$RC" 1 "f) show --html into a missing directory: exit 1"
grep -q "$TMPD/nodir/a.html: No such file or directory" "$TMPD/f.err"
ok $? "f) the error names the file and why"
run_latsnap "$TMPD/f.txt" "$TMPD/f.err" show --html "$TMPD/a.html" "$TMPD/nosuch"
is "$RC" 1 "f) show --html of a missing snapshot: exit 1"
cmp -s "$TMPD/a.html" "$TMPD/a.before"
ok $? "f) the page already there is left as it was"

done_testing
