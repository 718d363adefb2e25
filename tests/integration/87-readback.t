#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every summary latsnap writes, its reader reads; names are demangled wherever people read them.
#  a) A JVM (-Xcomp: every Java method JIT-compiled) with a contended synchronized block and
#     Thread.sleep, recorded in snapshot mode: its stacks hold frames of JIT code, which have
#     an address and neither symbol nor module ("module": null). report, show, show --html and
#     flame read every snapshot (exit 0, none called corrupt) and show the outliers, the JIT
#     frames as their address.
#  b) A stripped C program (a copy of the sleeper workload, `strip`ped): frames with a module and
#     no symbol; read back the same way.
#  c) A C++ program (cxxwait) that naps in latsnap_wl::Napper<int>::nap(long) and whose worker
#     waits for jobs in latsnap_wl::Queue<int>::wait_for_job(): record's text output, its idle
#     list, summary.txt, report (its idle table), show and flame print those names demangled;
#     summary.json keeps the linkage (mangled) name.
set -u
. "$(dirname "$0")/lib.sh"

require_record sleeper cxxwait
require lttng lttng-sessiond babeltrace2 strip javac java

no_ust_wait

# readback TAG DIR: report, flame, and show and show --html of each complete snapshot of DIR;
# checks every one exits 0 and none calls a summary corrupt. Sets NSNAP (complete snapshots).
readback() {
	local tag=$1 dir=$2 d bad_show=0 bad_html=0 n
	NSNAP=0
	run_latsnap "$TMPD/$tag.report" "$TMPD/$tag.report.err" report "$dir"
	is "$RC" 0 "$tag: report DIR: exit 0" || diag_file "$TMPD/$tag.report.err" "  stderr: "
	n=$(find "$dir" -mindepth 2 -maxdepth 2 -name summary.json | wc -l)
	like "$(head -n 1 "$TMPD/$tag.report")" \
		"^$dir: $n snapshots \\($n complete, 0 incomplete or corrupt\\): [1-9][0-9]* outliers" \
		"$tag: report reads all $n summaries and counts their outliers"
	ok '! grep -q corrupt "$TMPD/$tag.report.err"' "$tag: report calls no summary corrupt" ||
		diag_file "$TMPD/$tag.report.err" "  stderr: "
	for d in "$dir"/*/; do
		d=${d%/}
		[ -f "$d/summary.json" ] || continue
		NSNAP=$((NSNAP + 1))
		run_latsnap "$TMPD/$tag.show" "$TMPD/$tag.show.err" show "$d"
		if [ "$RC" != 0 ] || ! grep -q '^snapshot ' "$TMPD/$tag.show"; then
			bad_show=$((bad_show + 1))
			diag "show $d: exit $RC"
			diag_file "$TMPD/$tag.show.err" "  stderr: " 5
		fi
		rm -f "$TMPD/$tag.html"
		run_latsnap "$TMPD/$tag.html.out" "$TMPD/$tag.html.err" show --html "$TMPD/$tag.html" "$d"
		if [ "$RC" != 0 ] || ! grep -q 'id="latsnap-data"' "$TMPD/$tag.html"; then
			bad_html=$((bad_html + 1))
			diag "show --html $d: exit $RC"
			diag_file "$TMPD/$tag.html.err" "  stderr: " 5
		fi
	done
	ok '[ "$NSNAP" -ge 1 ]' "$tag: at least one complete snapshot ($NSNAP)"
	is "$bad_show" 0 "$tag: show DIR/ID exits 0 and prints the snapshot, for each of the $NSNAP"
	is "$bad_html" 0 "$tag: show --html FILE DIR/ID exits 0 and writes the page, for each"
	run_latsnap "$TMPD/$tag.flame" "$TMPD/$tag.flame.err" flame "$dir"
	is "$RC" 0 "$tag: flame DIR: exit 0" || diag_file "$TMPD/$tag.flame.err" "  stderr: "
}

# frames DIR FILTER: how many frames of DIR's summaries FILTER (a jq condition on a frame) holds.
frames() {
	cat "$1"/*/summary.json 2>/dev/null |
		jq -s "[.[] | .. | objects | select(has(\"addr\")) | select($2)] | length" 2>/dev/null ||
		echo 0
}

# --- a) a JVM: JIT frames ------------------------------------------------------------------------
mkdir -p "$TMPD/java"
cat >"$TMPD/java/Contend.java" <<'EOF'
public class Contend {
	static final Object lock = new Object();

	static void holdLock() throws InterruptedException {
		synchronized (lock) {
			Thread.sleep(300);
		}
	}

	static void waitForLock() {
		synchronized (lock) {
			lock.notifyAll();
		}
	}

	static void nap() throws InterruptedException {
		Thread.sleep(200);
	}

	public static void main(String[] args) throws Exception {
		for (int i = 0; i < 2; i++) {
			Thread holder = new Thread(() -> {
				try {
					holdLock();
				} catch (InterruptedException e) {
				}
			});
			holder.start();
			Thread.sleep(50);
			waitForLock();
			holder.join();
			nap();
		}
		System.out.println("contend: done");
	}
}
EOF
javac -d "$TMPD/java" "$TMPD/java/Contend.java" 2>"$TMPD/javac.err"
ok '[ -f "$TMPD/java/Contend.class" ]' "a) javac compiled the Java program" ||
	diag_file "$TMPD/javac.err" "  javac: "
# --include-idle: every wait past the threshold is an outlier, whatever the idle policy makes of
# a JVM's waits; this test is about reading back the stacks, not about which waits count.
# -Xcomp for Contend's methods alone, by C1: JIT frames certain, in a second rather than four.
record_snap jvm -t 50ms --include-idle -o "$TMPD/jvm.d" -- java -Xcomp -XX:CompileCommand=quiet \
	'-XX:CompileOnly=Contend::*' -XX:TieredStopAtLevel=1 -cp "$TMPD/java" Contend
is "$RC" 0 "a) record -o DIR -- java -Xcomp Contend: exit 0 (java's status)"
NJIT=$(frames "$TMPD/jvm.d" '.module == null and .symbol == null')
ok '[ "$NJIT" -ge 1 ]' "a) the summaries hold frames of JIT code, module and symbol null ($NJIT)"
readback a "$TMPD/jvm.d"
like "$(grep -c 'Process java' "$TMPD/a.report")" '^[1-9]' "a) report lists java's outliers"
# A snapshot with JIT frames: show prints each as its address, of no known object.
JITSNAP=
for d in "$TMPD"/jvm.d/*/; do
	if [ -f "$d/summary.json" ] &&
		jq -e '[.. | objects | select(has("addr") and .module == null)] | length > 0' \
			"$d/summary.json" >/dev/null 2>&1; then
		JITSNAP=${d%/}
		break
	fi
done
ok '[ -n "$JITSNAP" ]' "a) a snapshot with JIT frames: ${JITSNAP##*/}"
run_latsnap "$TMPD/a.jit" "$TMPD/a.jit.err" show "${JITSNAP:-/nonexistent}"
like "$(grep -cE '^ +0x[0-9a-f]+ +\(\?\)$' "$TMPD/a.jit")" '^[1-9]' \
	"a) show prints a JIT frame as its address, its object unknown: '0x7f... (?)'"
like "$(grep -cE '^ +0x[0-9a-f]+ \(\?\)$' "${JITSNAP:-/nonexistent}/summary.txt" 2>/dev/null)" '^[1-9]' \
	"a) so does summary.txt"

# --- b) a stripped C program ---------------------------------------------------------------------
mkdir -p "$TMPD/bin"
cp "$WL/sleeper" "$TMPD/bin/stripped-napper"
strip "$TMPD/bin/stripped-napper"
ok '! nm "$TMPD/bin/stripped-napper" 2>/dev/null | grep -q slow_nap' \
	"b) the sleeper's copy is stripped: no symbol table"
STRIPPED=$(readlink -f "$TMPD/bin/stripped-napper")
record_snap stripped -t 50ms -o "$TMPD/stripped.d" -- "$STRIPPED" 150 2
is "$RC" 0 "b) record -o DIR -- stripped-napper 150 2: exit 0"
NSTRIP=$(frames "$TMPD/stripped.d" ".symbol == null and .module == \"$STRIPPED\"")
ok '[ "$NSTRIP" -ge 1 ]' "b) the summaries hold frames of the stripped program, symbol null ($NSTRIP)"
readback b "$TMPD/stripped.d"
like "$(grep -A3 '^System-wide' "$TMPD/b.report")" 'Requested sleep' "b) report shows the naps"

# --- c) C++ names, demangled for people, mangled in the JSON -------------------------------------
NAP='latsnap_wl::Napper<int>::nap(long)'
JOB='latsnap_wl::Queue<int>::wait_for_job()'
NAP_RE='latsnap_wl::Napper<int>::nap\(long\)'
JOB_RE='latsnap_wl::Queue<int>::wait_for_job\(\)'
timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot -t 50ms -- "$WL/cxxwait" 200 3 \
	>"$TMPD/c.txt" 2>"$TMPD/c.err"
is "$?" 0 "c) record --no-snapshot -- cxxwait 200 3 (text output): exit 0" ||
	diag_file "$TMPD/c.err" "  stderr: "
like "$(grep -cE "$NAP_RE" "$TMPD/c.txt")" '^[1-9]' "c) record's text output names $NAP" ||
	diag_file "$TMPD/c.txt" "  stdout: " 30
ok '! grep -q "_ZN10latsnap_wl" "$TMPD/c.txt" "$TMPD/c.err"' "c) and no mangled name, on stdout or stderr"
like "$(sed -n '/idle waits/,$p' "$TMPD/c.err")" "cxx_worker.* in $JOB_RE" \
	"c) record's idle list (stderr) names $JOB" || diag_file "$TMPD/c.err" "  stderr: "

record_snap cxx -t 50ms -o "$TMPD/cxx.d" -- "$WL/cxxwait" 200 3
is "$RC" 0 "c) record -o DIR -- cxxwait 200 3: exit 0"
like "$(cat "$TMPD"/cxx.d/*/summary.txt 2>/dev/null)" "$NAP_RE\\+0x" "c) summary.txt names $NAP"
ok '! grep -q "_ZN10latsnap_wl" "$TMPD"/cxx.d/*/summary.txt' "c) summary.txt has no mangled name"
is "$(frames "$TMPD/cxx.d" '.symbol == "_ZN10latsnap_wl6NapperIiE3napEl"' | grep -c '^[1-9]')" 1 \
	"c) summary.json keeps the linkage name (_ZN10latsnap_wl6NapperIiE3napEl)"
readback c "$TMPD/cxx.d"
like "$(sed -n '/^Idle waits/,$p' "$TMPD/c.report")" "cxx_worker.* in $JOB_RE" \
	"c) report's idle table names $JOB" || diag_file "$TMPD/c.report" "  report: "
ok '! grep -q "_ZN10latsnap_wl" "$TMPD/c.report"' "c) report has no mangled name"
like "$(grep -cE "$NAP_RE" "$TMPD/c.flame")" '^[1-9]' "c) flame names $NAP"
CXXSNAP=$(find "$TMPD/cxx.d" -mindepth 2 -maxdepth 2 -name summary.json -printf '%h\n' | sort | head -n 1)
run_latsnap "$TMPD/c.show" "$TMPD/c.show.err" show "${CXXSNAP:-/nonexistent}"
like "$(grep -cE "$NAP_RE" "$TMPD/c.show")" '^[1-9]' "c) show names $NAP"

done_testing
