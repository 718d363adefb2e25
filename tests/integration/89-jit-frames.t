#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# JIT frames named through the process's perf map, /tmp/perf-PID.map (man latsnap, JIT CODE):
# node 20's --perf-basic-prof, the JVM's `jcmd PID Compiler.perfmap`, a one-function JIT of our
# own (jitnap), and Python 3.12's -X perf when a python3.12 is there (PYTHON312=PATH, or on
# PATH; Debian 12 has 3.11 only, so CI does not cover it: this file says so). A frame named from
# the map has the module "/tmp/perf-PID.map". An address between two mappings of one file is not
# that file's: node's JIT code lies between /usr/bin/node and V8's remapped code range, and was
# reported as /usr/bin/node's. The map is the traced program's: a corrupt one still names what
# its good lines name, and a FIFO, a symlink or another user's file names nothing and holds
# nothing up. The slow calls are timed waits (Atomics.wait, Thread.sleep), which the idle
# policy may file as idle: --include-idle, this file is about frames.
set -u
. "$(dirname "$0")/lib.sh"

require_record jitnap
require node java javac jcmd
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
no_ust_wait

T=$TMPD
# Perf maps this file made (the runtimes leave theirs for perf), removed at exit.
MAPS=()
cleanup_maps() {
	local m
	for m in "${MAPS[@]}"; do
		rm -f "$m"
	done
	rm -f /tmp/jitnap-*.real
}
trap 'cleanup_maps; _tap_cleanup' EXIT

# frame_index OUT SEL REGEX: the index of the first user frame (innermost 0) of the first outlier
# SEL selects whose symbol matches REGEX; -1 when none.
frame_index() {
	jq -s -r "[.[] | $2][0] // {} | [.user_stack.frames[]? | .symbol // \"\"] |
		(map(test(\"$3\")) | index(true)) // -1" "$1" 2>/dev/null
}

# frame_module OUT SEL REGEX: the module of that frame ("null" when none).
frame_module() {
	jq -s -c "[.[] | $2][0] // {} | [.user_stack.frames[]? |
		select(.symbol // \"\" | test(\"$3\")) | .module][0]" "$1" 2>/dev/null
}

# show_user OUT SEL: the selected outlier's user frames, as diag lines.
show_user() {
	jq -s -r "[.[] | $2][0] // {} | .user_stack.frames[]? |
		\"    \(.addr) \(.symbol // \"?\") (\(.module // \"?\"))\"" "$1" 2>/dev/null |
		while IFS= read -r l; do diag "$l"; done
}

# --- node: the main thread blocks in Atomics.wait, called from two JS functions ---
cat >"$T/block.js" <<'EOF'
'use strict';
const ia = new Int32Array(new SharedArrayBuffer(4));
function waitForLock(ms) {
	return Atomics.wait(ia, 0, 0, ms);
}
function outerWork(ms) {
	return waitForLock(ms);
}
for (let i = 0; i < 50; i++) {
	outerWork(0);
}
outerWork(300);
EOF
# The runtimes write files in their working directory (V8's log, the JVM's attach file).
cd "$T" || bail_out "cd $T"
# A latsnap run alongside that signals every preloaded process can leave the signal pending
# (signal-blocked): the unwound stack is then missing, and these runs are named.
OTHERS=$(pgrep -a -x latsnap)
record_json "$T/node.out" "$T/node.err" --include-idle -t 200ms -- \
	node --perf-basic-prof --interpreted-frames-native-stack "$T/block.js"
NODE_PID=$(jq -s -r '[.[] | select(.comm == "node")][0].pid // empty' "$T/node.out" 2>/dev/null)
[ -n "$NODE_PID" ] && MAPS+=("/tmp/perf-$NODE_PID.map")
NODE_BIN=$(readlink -f "$(command -v node)")
NSEL='select(.pid == .tid and .comm == "node" and .syscall == "futex" and .duration_ns >= 250000000)'
is "$RC" 0 "node: record exits 0"
ok "[ $(jcount "$T/node.out" "$NSEL") -ge 1 ]" "node: the main thread's 300 ms Atomics.wait is an outlier" ||
	dump_outliers "$T/node.out"
is "$(jfirst "$T/node.out" "$NSEL" .user_stack.source)" '"unwind"' \
	"node: its user stack comes from the preload library's unwinder" ||
	diag "$(jfirst "$T/node.out" "$NSEL" .flags)" "other latsnap runs: ${OTHERS:-none}"
wi=$(frame_index "$T/node.out" "$NSEL" 'waitForLock')
oi=$(frame_index "$T/node.out" "$NSEL" 'outerWork')
like "$(frame_module "$T/node.out" "$NSEL" 'waitForLock')" '^"/tmp/perf-[0-9]+\.map"$' \
	"node: the JS function waitForLock is named, from the perf map" || show_user "$T/node.out" "$NSEL"
ok "[ $wi -ge 0 ] && [ $oi -gt $wi ]" "node: outerWork is named too, as waitForLock's caller (frames $wi, $oi)"
is "$(jfirst "$T/node.out" "$NSEL" "[.user_stack.frames[] | select(.module == \"$NODE_BIN\" and .symbol == null)] | length")" 0 \
	"node: no frame is given to $NODE_BIN without a symbol (JIT code is not node's)" ||
	show_user "$T/node.out" "$NSEL"

# --- the JVM: a compiled method sleeps; the map is written by jcmd while it runs ---
cat >"$T/Contend.java" <<'EOF'
import java.nio.file.*;

public class Contend {
	static long waitForLock(long ms) throws Exception {
		long t = System.nanoTime();
		Thread.sleep(ms);
		return System.nanoTime() - t;
	}

	public static void main(String[] args) throws Exception {
		long sum = 0;
		/* Called often enough to be compiled (C1 and C2), before the map is written. */
		for (int i = 0; i < 20000; i++) {
			sum += waitForLock(0);
		}
		Path tmp = Paths.get(args[0] + ".tmp");
		Files.write(tmp, Long.toString(ProcessHandle.current().pid()).getBytes());
		Files.move(tmp, Paths.get(args[0]), StandardCopyOption.ATOMIC_MOVE);
		while (!Files.exists(Paths.get(args[1]))) {
			Thread.sleep(20);
		}
		sum += waitForLock(300);
		System.err.println("slept " + sum);
	}
}
EOF
if ! javac -d "$T" "$T/Contend.java" 2>"$T/javac.err"; then
	diag_file "$T/javac.err"
	bail_out "javac failed"
fi
(
	record_json "$T/java.out" "$T/java.err" --include-idle -t 200ms -- \
		java -XX:+PreserveFramePointer -cp "$T" Contend "$T/java.pid" "$T/go"
	echo "$RC" >"$T/java.rc"
) &
REC=$!
for _ in $(seq 600); do
	[ -s "$T/java.pid" ] && break
	kill -0 "$REC" 2>/dev/null || break
	sleep 0.1
done
JPID=$(cat "$T/java.pid" 2>/dev/null)
[ -n "$JPID" ] && MAPS+=("/tmp/perf-$JPID.map")
ok "[ -n '$JPID' ]" "java: warmed up, pid $JPID" || diag_file "$T/java.err"
timeout 60 jcmd "$JPID" Compiler.perfmap >"$T/jcmd.out" 2>&1
ok $? "jcmd $JPID Compiler.perfmap writes the map" || diag_file "$T/jcmd.out"
touch "$T/go"
wait "$REC"
is "$(cat "$T/java.rc" 2>/dev/null)" 0 "java: record exits 0"
# The 300 ms sleep: the thread whose stack goes through JVM_Sleep (the launcher runs main() in a
# thread of its own, and the JVM's own threads wait in other places).
JSEL='select(.duration_ns >= 250000000 and ([.user_stack.frames[]? | .symbol] | index("JVM_Sleep")))'
ok "[ $(jcount "$T/java.out" "$JSEL") -ge 1 ]" "java: the 300 ms Thread.sleep is an outlier" ||
	dump_outliers "$T/java.out"
like "$(frame_module "$T/java.out" "$JSEL" 'Contend\\.waitForLock')" '^"/tmp/perf-[0-9]+\.map"$' \
	"java: the compiled method Contend.waitForLock is named, from the perf map" ||
	show_user "$T/java.out" "$JSEL"
ji=$(frame_index "$T/java.out" "$JSEL" 'Contend\\.waitForLock')
si=$(frame_index "$T/java.out" "$JSEL" '^JVM_Sleep$')
ok "[ $si -ge 0 ] && [ $ji -gt $si ]" "java: below JVM_Sleep, through Thread.sleep's frame (frames $si, $ji)"

# --- jitnap: the map a JIT writes, a corrupt one, and ones that must not be read ---
# jit_case MODE: records jitnap MODE; sets JOUT, and JFRAME (the JIT frame's symbol and module).
jit_case() {
	local mode=$1 pid
	: >"$T/jit-$mode.log"
	WL_LOG="$T/jit-$mode.log" record_json "$T/jit-$mode.out" "$T/jit-$mode.err" -t 100ms -- \
		"$WL/jitnap" "$mode" 200
	pid=$(wl_log_get "$T/jit-$mode.log" pid)
	[ -n "$pid" ] && MAPS+=("/tmp/perf-$pid.map")
	JOUT=$T/jit-$mode.out
	JFRAME=$(jfirst "$JOUT" 'select(.syscall // "" | test("nanosleep"))' \
		'(.user_stack.frames | map(.symbol) | index("jit_inner")) as $k |
		 if $k == null then "no jit_inner" else
		 "\(.user_stack.frames[$k + 1].symbol) \(.user_stack.frames[$k + 1].module) \(.user_stack.frames[$k + 2].symbol)" end')
}

jit_case good
is "$RC" 0 "jitnap good: record exits 0"
like "$JFRAME" '^"jitnap::trampoline /tmp/perf-[0-9]+\.map main"$' \
	"jitnap good: the JIT frame is named from the map, and the walk goes on to main"
jit_case garbage
like "$JFRAME" '^"jitnap::trampoline /tmp/perf-[0-9]+\.map main"$' \
	"jitnap garbage: junk, bad numbers and a 100 KiB line are skipped, the good line names the frame"
# The loader maps its cache (/etc/ld.so.cache) and unmaps it before main(); a capture of the
# maps at a first wait while it loads (a page fault read from a busy disk) still had it where
# the JIT code was put later, and check-asan in CI named the frame "/etc/ld.so.cache". remap
# makes that happen every time: a data file holds no code, and never names a frame.
jit_case remap
like "$JFRAME" '^"jitnap::trampoline /tmp/perf-[0-9]+\.map main"$' \
	"jitnap remap: JIT code where a data file was mapped at the first wait is named from the map"
for mode in fifo symlink foreign none; do
	jit_case "$mode"
	is "$RC" 0 "jitnap $mode: record exits 0, in time"
	is "$JFRAME" '"null null main"' "jitnap $mode: the JIT frame has no name and no module"
done

# With a snapshot: show and report read back what record wrote, the JIT frame's name kept (its
# map may be gone by then).
require_lttng
record_snap jitsnap -o "$T/snaps" -t 100ms -- "$WL/jitnap" good 200
pid=$(wl_log_get "$T/jitsnap.log" pid)
[ -n "$pid" ] && MAPS+=("/tmp/perf-$pid.map")
SNAP=$(find "$T/snaps" -name summary.json -printf '%h\n' 2>/dev/null | head -n 1)
ok "[ -n '$SNAP' ]" "jitnap with a snapshot: one is written"
run_latsnap "$T/show.out" "$T/show.err" show "$SNAP"
is "$RC" 0 "show reads it" || diag_file "$T/show.err"
ok "grep -q 'jitnap::trampoline+0x6 *(perf-$pid.map)' '$T/show.out'" \
	"show names the JIT frame as record did" || diag_file "$T/show.out" "  " 30
run_latsnap "$T/report.out" "$T/report.err" report "$T/snaps"
is "$RC" 0 "report reads it" || diag_file "$T/report.err"

# --- Python 3.12's -X perf, where there is one ---
PY312=${PYTHON312:-$(command -v python3.12 || true)}
# The interpreter itself (not a pyenv shim), if it is a 3.12 or later.
[ -n "$PY312" ] && PY312=$("$PY312" -c 'import sys; print(sys.executable if sys.version_info >= (3, 12) else "")' 2>/dev/null)
# A pyenv whose global version is older has a shim that fails: its own 3.12 build then.
if [ -z "$PY312" ]; then
	for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3.1[2-9]; do
		[ -x "$p" ] && PY312=$p && break
	done
fi
if [ -n "$PY312" ] && [ -x "$PY312" ]; then
	diag "Python: $PY312 ($("$PY312" --version 2>&1))"
	cat >"$T/block.py" <<'EOF'
import threading
lock = threading.Lock()
def wait_for_lock(t):
    return lock.acquire(timeout=t)
lock.acquire()
wait_for_lock(0.3)
EOF
	record_json "$T/py.out" "$T/py.err" --include-idle -t 200ms -- "$PY312" -X perf "$T/block.py"
	PPID_=$(jq -s -r '[.[]][0].pid // empty' "$T/py.out" 2>/dev/null)
	[ -n "$PPID_" ] && MAPS+=("/tmp/perf-$PPID_.map")
	PSEL='select(.pid == .tid and .syscall == "futex" and .duration_ns >= 250000000)'
	like "$(frame_module "$T/py.out" "$PSEL" '^py::wait_for_lock:')" '^"/tmp/perf-[0-9]+\.map"$' \
		"python3.12 -X perf: the Python function wait_for_lock is named, from the perf map" ||
		show_user "$T/py.out" "$PSEL"
else
	diag "no python3.12 here (Debian 12 has 3.11; PYTHON312=PATH names one): Python 3.12's -X perf" \
		"maps are not covered by this run"
fi

done_testing
