#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Command-line handling: usage errors (exit 2, one `latsnap: ` line on
# stderr), config file errors with FILE:LINE:, help, and exit status
# pass-through of `latsnap record -- COMMAND`.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_latsnap

# usage_error NAME ARGS...: latsnap ARGS... must exit 2 with exactly one
# stderr line starting with `latsnap: `. Leaves the line in $ERRLINE.
ERRLINE=
usage_error() {
	local name=$1; shift
	LATSNAP_TIMEOUT=20 run_latsnap "$TMPD/u.out" "$TMPD/u.err" "$@"
	local nlines
	nlines=$(grep -c '' "$TMPD/u.err")
	ERRLINE=$(head -n 1 "$TMPD/u.err")
	diag "  stderr: $ERRLINE"
	is "$RC" 2 "$name: exit status 2" || diag_file "$TMPD/u.err" "  stderr: "
	if [ "$nlines" = 1 ] && [[ $ERRLINE == "latsnap: "* ]]; then
		pass "$name: one stderr line starting 'latsnap: '"
	else
		fail "$name: one stderr line starting 'latsnap: '"
		diag "  $nlines stderr lines:"
		diag_file "$TMPD/u.err" "  stderr: "
	fi
}

# --- bad flags and values -------------------------------------------------
usage_error "unknown flag --bogus" record --no-snapshot --bogus -- true
usage_error "-t 5m (unknown unit)" record --no-snapshot -t 5m -- true
usage_error "-t abc" record --no-snapshot -t abc -- true
usage_error "-t -5ms (negative)" record --no-snapshot -t -5ms -- true
usage_error "-t '' (empty)" record --no-snapshot -t '' -- true
usage_error "-t 10MS (unit case)" record --no-snapshot -t 10MS -- true
usage_error "-t 5ms5 (trailing junk)" record --no-snapshot -t 5ms5 -- true
usage_error "-t 1.5.5s" record --no-snapshot -t 1.5.5s -- true
usage_error "-t ms (no number)" record --no-snapshot -t ms -- true
usage_error "-t without a value" record --no-snapshot -t
usage_error "--buffer-size 12parsecs" record --buffer-size 12parsecs -- true
usage_error "--buffer-size 1K (below 16K)" record --buffer-size 1K -- true
usage_error "--max-snapshots 0" record --max-snapshots 0 -- true
usage_error "--max-size -1" record --max-size -1 -- true
usage_error "--post abc" record --post abc -- true
usage_error "--ust-events 'a b'" record --ust-events 'a b' -- true
usage_error "--threshold=1x" record --no-snapshot --threshold=1x -- true
usage_error "-s 2h" record --no-snapshot -s 2h -- true
usage_error "-d xyz" record --no-snapshot -d xyz -- true
usage_error "-p 0" record --no-snapshot -p 0 -d 1s
usage_error "-p abc" record --no-snapshot -p abc -d 1s
usage_error "-p -3" record --no-snapshot -p -3 -d 1s
usage_error "unknown subcommand" frobnicate

# --- config files ---------------------------------------------------------
# bad_config N NAME LINE TEXT: a config file $TMPD/badN.conf of TEXT (printf escapes) is a usage
# error whose message names it and its line LINE.
bad_config() {
	local conf=$TMPD/bad$1.conf name=$2 line=$3
	printf '%b' "$4" >"$conf"
	usage_error "config: $name" record --no-snapshot -c "$conf" -- true
	like "$ERRLINE" "$conf:$line:" "config: $name: message names $conf:$line:"
}
bad_config 1 "bad duration" 2 '# latsnap settings\nthreshold = 5parsecs\njson = true\n'
bad_config 2 "unknown key" 4 'threshold = 20ms\n\n# a comment\nno-such-key = 1\n'
bad_config 3 "line without =" 2 '# only a comment\nthis line has no equals sign\n'
bad_config 4 "empty value" 2 'sleep-threshold = 10ms\nthreshold = \n'
bad_config 5 "bad boolean" 2 'threshold = 20ms\ninclude-idle = perhaps\n'

MISSING=$TMPD/does-not-exist.conf
usage_error "config: missing file" record --no-snapshot -c "$MISSING" -- true
like "$ERRLINE" "does-not-exist\.conf" "config: missing file: message names the file"

# --- help -------------------------------------------------------------------
LATSNAP_TIMEOUT=20 run_latsnap "$TMPD/h.out" "$TMPD/h.err" --help
is "$RC" 0 "latsnap --help exits 0"
ok 'cat "$TMPD/h.out" "$TMPD/h.err" | grep -q -e "--threshold"' "latsnap --help mentions --threshold"
LATSNAP_TIMEOUT=20 run_latsnap "$TMPD/h.out" "$TMPD/h.err" record --help
is "$RC" 0 "latsnap record --help exits 0"
ok 'cat "$TMPD/h.out" "$TMPD/h.err" | grep -q -e "--threshold"' "latsnap record --help mentions --threshold"
ok 'cat "$TMPD/h.out" "$TMPD/h.err" | grep -q -e "--include-idle"' "latsnap record --help mentions --include-idle"

# --- record: things that need BPF (root) ----------------------------------
if [ "$(id -u)" != 0 ]; then
	skip_tests 12 "record needs root"
	done_testing
fi

for dur in 250us 1.5s 20 2000ns 0.5ms; do
	LATSNAP_TIMEOUT=60 run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -t "$dur" -- true
	is "$RC" 0 "valid duration -t $dur is accepted" || diag_file "$TMPD/r.err" "  stderr: "
done

CONF=$TMPD/good.conf
printf '# good settings\n\nthreshold = 20ms\nsleep-threshold = 30ms\n' >"$CONF"
run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -c "$CONF" -- true
is "$RC" 0 "a valid config file is accepted" || diag_file "$TMPD/r.err" "  stderr: "

run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -- sh -c 'exit 3'
is "$RC" 3 "record exits with COMMAND's status (3)" || diag_file "$TMPD/r.err" "  stderr: "

run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -- false
is "$RC" 1 "record exits with COMMAND's status (false: 1)" || diag_file "$TMPD/r.err" "  stderr: "

run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -- sh -c 'kill -TERM $$'
is "$RC" 143 "record exits 128+15 when SIGTERM killed COMMAND" || diag_file "$TMPD/r.err" "  stderr: "

run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot --json -- true
is "$RC" 0 "record --json -- true exits 0" || diag_file "$TMPD/r.err" "  stderr: "
is "$(grep -c '' "$TMPD/r.out")" 0 "record --json -- true: nothing on stdout" || diag_file "$TMPD/r.out" "  stdout: "

# --- cause rules -----------------------------------------------------------
RULES=$TMPD/bad.rules
printf '# my rules\n10 kernel:hrtimer_nanosleep = slept\n20 frame:x = nope\n' >"$RULES"
usage_error "rules: unknown matcher" record --no-snapshot --rules "$RULES" -- true
like "$ERRLINE" "$RULES:3:" "rules: unknown matcher: message names $RULES:3:"
usage_error "rules: missing file" record --no-snapshot --rules "$TMPD/none.rules" -- true
like "$ERRLINE" "none.rules" "rules: missing file: message names the file"
if [ "$(id -u)" = 0 ] && [ -x "$WL/sleeper" ]; then
RULES=$TMPD/good.rules
printf '10 kernel:hrtimer_nanosleep syscall:*nanosleep = my own sleep rule\n' >"$RULES"
run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot --json -t 20ms --rules "$RULES" -- \
	"$WL/sleeper" 60
is "$RC" 0 "--rules FILE: a valid rules file is accepted" || diag_file "$TMPD/r.err" "  stderr: "
is "$(jq -r .cause "$TMPD/r.out" 2>/dev/null)" "my own sleep rule" "--rules FILE replaces the built-in set"
run_latsnap "$TMPD/r.out" "$TMPD/r.err" rules
is "$RC" 0 "latsnap rules: exit 0"
run_latsnap "$TMPD/r2.out" "$TMPD/r2.err" record --no-snapshot --json -t 20ms --rules "$TMPD/r.out" -- \
	"$WL/sleeper" 60
is "$RC" 0 "latsnap rules prints a rules file record accepts" || diag_file "$TMPD/r2.err" "  stderr: "
is "$(jq -r .cause "$TMPD/r2.out" 2>/dev/null)" "Requested sleep (nanosleep)" \
	"the printed built-in set classifies as the built-in set does"

# COMMAND gets the preload library first in LD_PRELOAD, after which what was there stays.
LIBZ=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/*/libz.so.1 2>/dev/null | head -n 1)
LD_PRELOAD=$LIBZ run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -- \
	sh -c 'echo "$LD_PRELOAD"'
is "$(cat "$TMPD/r.out")" "$(dirname "$LATSNAP")/liblatsnap.so:$LIBZ" \
	"COMMAND's LD_PRELOAD: the library first, the caller's kept"
run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot --no-preload -- sh -c 'echo "${LD_PRELOAD:-none}"'
is "$(cat "$TMPD/r.out")" "none" "--no-preload: COMMAND's LD_PRELOAD untouched"
# The signal from the config file reaches COMMAND's library.
printf 'signal = RTMIN+3\n' >"$TMPD/sig.conf"
run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -c "$TMPD/sig.conf" -- \
	sh -c 'echo "$LATSNAP_SIGNAL"'
is "$(cat "$TMPD/r.out")" 37 "config 'signal = RTMIN+3' sets signal 37 for COMMAND's library"
printf 'signal = KILL\n' >"$TMPD/sig.conf"
usage_error "config: a signal latsnap must not take" record --no-snapshot -c "$TMPD/sig.conf" -- true
like "$ERRLINE" "$TMPD/sig.conf:1:" "config: bad signal: message names the file and line"
elif [ "${CI:-}" = true ]; then
	fail "rules: running record needs root and the sleeper workload"
else
	skip_tests 11 "needs root and the sleeper workload"
fi

# The command's own stdout goes through untouched.
run_latsnap "$TMPD/r.out" "$TMPD/r.err" record --no-snapshot -- sh -c 'echo hello-from-command'
is "$(cat "$TMPD/r.out")" "hello-from-command" "COMMAND's stdout is passed through"

done_testing
