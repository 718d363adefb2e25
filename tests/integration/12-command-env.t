#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsnap record -- COMMAND` starts COMMAND as if latsnap were not there (issue 17, "the target
# never pays"): the signal dispositions and mask latsnap was started with, latsnap's environment
# plus LD_PRELOAD and LATSNAP_SIGNAL only, and execvp's search for the program.
#  a) SIGPIPE: `yes | head -n1` in COMMAND kills yes with SIGPIPE (141), as without latsnap.
#  b) SigIgn and SigBlk of /proc/self/status in COMMAND are those without latsnap: with nothing
#     ignored or blocked, and with an invoker that ignores and blocks signals of its own; also
#     with snapshots, where latsnap starts a session daemon of its own and loads lttng-ust.
#  c) a command not found: exit 127 and one `latsnap: ` line; a file that cannot be executed.
#  d) a command found through PATH, one with a slash, one after a non-executable file of the same
#     name in PATH, a file without a #! line (run by /bin/sh, as execvp does); the environment.
# Not LTTNG_UST_REGISTER_TIMEOUT=0 here: with a session daemon running, lttng-ust still
# registering while a COMMAND shell forks aborts that shell now and then (a known lttng-ust
# limitation of fork without liblttng-ust-fork, not what this file is about).
set -u
. "$(dirname "$0")/lib.sh"

require_root
require perl timeout grep
require_latsnap

# sigrun OUT ERR IGN BLK CMD...: CMD from a clean start, every signal at its default action and
# none blocked, then the signals of the comma-separated list IGN ignored and those of BLK blocked
# ("-": none); with lib.sh's time limit. Sets RC.
sigrun() {
	local out=$1 err=$2 ign=$3 blk=$4
	shift 4
	timeout -k 5 "$LATSNAP_TIMEOUT" perl -MPOSIX -e '
		my ($ign, $blk, @cmd) = @ARGV;
		my $l = sub { $_[0] eq "-" ? () : split /,/, $_[0] };
		POSIX::sigaction($_, POSIX::SigAction->new("DEFAULT"))
			for grep { $_ != SIGKILL && $_ != SIGSTOP } 1 .. 64;
		POSIX::sigaction(POSIX->can("SIG$_")->(), POSIX::SigAction->new("IGNORE"))
			or die "ignore $_: $!\n" for $l->($ign);
		sigprocmask(SIG_SETMASK, POSIX::SigSet->new(map { POSIX->can("SIG$_")->() } $l->($blk)))
			or die "sigprocmask: $!\n";
		exec { $cmd[0] } @cmd or die "exec $cmd[0]: $!\n";' "$ign" "$blk" "$@" >"$out" 2>"$err"
	RC=$?
	return 0
}

# A threshold no wait here reaches: COMMAND's output alone on stdout (lttng-ust's registration
# at COMMAND's start may wait for a busy session daemon).
REC=(record --no-snapshot -t 60s)
SIGLINES=(grep -E '^Sig(Ign|Blk):' /proc/self/status)

# same_sigs NAME IGN BLK [RECORD_ARGS...]: SigIgn/SigBlk of grep, started through sigrun IGN BLK,
# directly and as `latsnap record RECORD_ARGS -- grep`, must be the same.
same_sigs() {
	local name=$1 ign=$2 blk=$3
	shift 3
	sigrun "$TMPD/ref.out" "$TMPD/ref.err" "$ign" "$blk" "${SIGLINES[@]}"
	is "$RC" 0 "$name: without latsnap, grep runs" || diag_file "$TMPD/ref.err" "  stderr: "
	sigrun "$TMPD/got.out" "$TMPD/got.err" "$ign" "$blk" "$LATSNAP" record "$@" -- \
		"${SIGLINES[@]}"
	is "$RC" 0 "$name: latsnap record exits 0" || diag_file "$TMPD/got.err" "  stderr: "
	is "$(paste -sd' ' "$TMPD/got.out")" "$(paste -sd' ' "$TMPD/ref.out")" \
		"$name: COMMAND's SigIgn and SigBlk are those without latsnap"
}

# --- a) SIGPIPE ---------------------------------------------------------------------------------
if command -v bash >/dev/null && command -v yes >/dev/null && command -v head >/dev/null; then
	PIPE_CMD=(bash -c 'yes | head -n1; echo "${PIPESTATUS[0]}"')
	sigrun "$TMPD/ref.out" "$TMPD/ref.err" - - "${PIPE_CMD[@]}"
	is "$(tail -n 1 "$TMPD/ref.out")" 141 "a) without latsnap, SIGPIPE kills yes (128+13)"
	sigrun "$TMPD/a.out" "$TMPD/a.err" - - "$LATSNAP" "${REC[@]}" -- "${PIPE_CMD[@]}"
	is "$RC" 0 "a) latsnap record exits with bash's status 0" || diag_file "$TMPD/a.err" "  stderr: "
	is "$(tail -n 1 "$TMPD/a.out")" 141 "a) under latsnap, SIGPIPE kills yes too (128+13)"
	ok '! grep -q "Broken pipe" "$TMPD/a.err"' "a) yes does not see EPIPE ('Broken pipe')" ||
		diag_file "$TMPD/a.err" "  stderr: "
	# An invoker that ignores SIGPIPE: COMMAND ignores it too, as it would without latsnap.
	sigrun "$TMPD/a.out" "$TMPD/a.err" PIPE - "$LATSNAP" "${REC[@]}" -- "${PIPE_CMD[@]}"
	is "$(tail -n 1 "$TMPD/a.out")" 1 "a) SIGPIPE ignored by the invoker: yes gets EPIPE (1)"
else
	skip_tests 5 "a) needs bash, yes and head"
fi

# --- b) dispositions and mask -------------------------------------------------------------------
same_sigs "b) nothing ignored or blocked" - - --no-snapshot -t 60s
same_sigs "b) invoker ignores USR1 HUP INT QUIT PIPE, blocks USR2 TERM ALRM" USR1,HUP,INT,QUIT,PIPE \
	USR2,TERM,ALRM --no-snapshot -t 60s
like "$(cat "$TMPD/got.out")" 'SigIgn:[[:space:]]*0*[1-9a-f]' \
	"b) (the wrapper did ignore signals: SigIgn is not zero)"
same_sigs "b) --no-preload" USR1 USR2 --no-snapshot -t 60s --no-preload
# With snapshots: a private /run/lttng and /dev/shm, where latsnap starts its own session daemon
# (it changes SIGUSR1 and the mask meanwhile) and loads lttng-ust (whose threads block signals).
if command -v lttng-sessiond >/dev/null && command -v unshare >/dev/null; then
	cat >"$TMPD/ns.sh" <<'EOF'
mkdir -p /run/lttng && mount -t tmpfs -o mode=0755 latsnap-12 /run/lttng || exit 91
mount -t tmpfs -o mode=1777 latsnap-12 /dev/shm || exit 92
exec "$@"
EOF
	sigrun "$TMPD/ref.out" "$TMPD/ref.err" USR1,HUP,INT USR2,TERM \
		unshare -m -- sh "$TMPD/ns.sh" "${SIGLINES[@]}"
	sigrun "$TMPD/got.out" "$TMPD/got.err" USR1,HUP,INT USR2,TERM \
		unshare -m -- sh "$TMPD/ns.sh" "$LATSNAP" record -o "$TMPD/snaps" -t 60s -- \
		"${SIGLINES[@]}"
	is "$RC" 0 "b) with a session daemon latsnap started: exit 0" ||
		diag_file "$TMPD/got.err" "  stderr: "
	is "$(paste -sd' ' "$TMPD/got.out")" "$(paste -sd' ' "$TMPD/ref.out")" \
		"b) with a session daemon latsnap started: COMMAND's SigIgn and SigBlk are unchanged"
elif [ "${CI:-}" = true ]; then
	fail "b) with snapshots: needs lttng-sessiond and unshare"
else
	skip_tests 2 "b) with snapshots: needs lttng-sessiond and unshare"
fi

# --- c) not found, not executable ---------------------------------------------------------------
one_error() {
	local name=$1 re=$2
	is "$RC" 127 "$name: exit 127" || diag_file "$TMPD/c.err" "  stderr: "
	is "$(grep -c '' "$TMPD/c.err")" 1 "$name: one stderr line" || diag_file "$TMPD/c.err" "  stderr: "
	like "$(head -n 1 "$TMPD/c.err")" "^latsnap: .*cannot run .*$re" "$name: it says why"
}
run_latsnap "$TMPD/c.out" "$TMPD/c.err" "${REC[@]}" -- latsnap-no-such-command-12 x
one_error "c) a command not in PATH" "No such file or directory"
run_latsnap "$TMPD/c.out" "$TMPD/c.err" "${REC[@]}" -- "$TMPD/no/such/file"
one_error "c) a path that does not exist" "No such file or directory"
mkdir -p "$TMPD/noexec" "$TMPD/bin"
printf '#!/bin/sh\necho "from noexec"\n' >"$TMPD/noexec/cmd12"
chmod 644 "$TMPD/noexec/cmd12"
PATH="$TMPD/noexec:$PATH" run_latsnap "$TMPD/c.out" "$TMPD/c.err" "${REC[@]}" -- cmd12
one_error "c) only a non-executable file of the name in PATH" "Permission denied"

# --- d) found and run ---------------------------------------------------------------------------
printf '#!/bin/sh\necho "cmd12 $*"\n' >"$TMPD/bin/cmd12"
printf 'echo "noshebang $*"\n' >"$TMPD/bin/noshebang12"
chmod 755 "$TMPD/bin/cmd12" "$TMPD/bin/noshebang12"
PATH="$TMPD/bin:$PATH" run_latsnap "$TMPD/d.out" "$TMPD/d.err" "${REC[@]}" -- cmd12 a 'b c'
is "$RC:$(cat "$TMPD/d.out")" "0:cmd12 a b c" "d) a command found through PATH runs, with its arguments"
run_latsnap "$TMPD/d.out" "$TMPD/d.err" "${REC[@]}" -- "$TMPD/bin/cmd12" slash
is "$RC:$(cat "$TMPD/d.out")" "0:cmd12 slash" "d) a command given with a slash runs"
(cd "$TMPD/bin" && run_latsnap "$TMPD/d.out" "$TMPD/d.err" "${REC[@]}" -- ./cmd12 rel &&
	echo "$RC" >"$TMPD/d.rc")
is "$(cat "$TMPD/d.rc" 2>/dev/null):$(cat "$TMPD/d.out")" "0:cmd12 rel" "d) ./cmd12 runs"
PATH="$TMPD/noexec:$TMPD/bin:$PATH" run_latsnap "$TMPD/d.out" "$TMPD/d.err" "${REC[@]}" -- \
	cmd12 later
is "$RC:$(cat "$TMPD/d.out")" "0:cmd12 later" \
	"d) a non-executable file first in PATH: the next one of the name runs, as with execvp"
PATH="$TMPD/bin:$PATH" run_latsnap "$TMPD/d.out" "$TMPD/d.err" "${REC[@]}" -- noshebang12 x
is "$RC:$(cat "$TMPD/d.out")" "0:noshebang x" "d) a file without #! found through PATH: /bin/sh runs it"
run_latsnap "$TMPD/d.out" "$TMPD/d.err" "${REC[@]}" -- "$TMPD/bin/noshebang12" y
is "$RC:$(cat "$TMPD/d.out")" "0:noshebang y" "d) a file without #! given with a slash: /bin/sh runs it"
# latsnap's own environment changes (libdw's DEBUGINFOD_URLS goes) are not COMMAND's.
DEBUGINFOD_URLS=http://debuginfod.invalid LATSNAP_SIGNAL=40 run_latsnap "$TMPD/d.out" "$TMPD/d.err" \
	"${REC[@]}" -- sh -c 'echo "$DEBUGINFOD_URLS $LATSNAP_SIGNAL"'
is "$(cat "$TMPD/d.out")" "http://debuginfod.invalid 40" \
	"d) COMMAND's environment is latsnap's as it started (DEBUGINFOD_URLS, LATSNAP_SIGNAL kept)"
run_latsnap "$TMPD/d.out" "$TMPD/d.err" "${REC[@]}" --signal RTMIN+2 -- \
	sh -c 'echo "$LATSNAP_SIGNAL"; env | grep -c "^LATSNAP_SIGNAL="'
is "$(paste -sd' ' "$TMPD/d.out")" "36 1" "d) --signal RTMIN+2: LATSNAP_SIGNAL=36, once"

done_testing
