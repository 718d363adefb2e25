#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --log-stacks: the stacks the cause rules left uncategorized (or categorized) are logged once
# each, with a candidate rule; that candidate, given a cause, categorizes the next run. Uses
# pipewait (a pipe read woken by pipewriter, which first sleeps) under a rules file that names
# only the sleep.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record pipewait

RULES=$TMPD/sleep.rules
printf '# only sleeps\n400 kernel:hrtimer_nanosleep = Requested sleep\n' >"$RULES"

# 1) uncategorized, to a file
LOGF=$TMPD/stacks.log
WL_LOG=$TMPD/wl.log record_json "$TMPD/1.out" "$TMPD/1.err" -- -t 50ms --rules "$RULES" \
	--log-stacks uncategorized --stack-log "$LOGF" -- "$WL/pipewait" 120
is "$RC" 0 "record --log-stacks uncategorized --stack-log FILE -- pipewait: exit 0"
READER=$(wl_log_get "$TMPD/wl.log" reader)
is "$(jcount "$TMPD/1.out" "select(.tid == ${READER:-0} and .syscall == \"read\" and .cause == \"read\")")" 1 \
	"the read outlier's cause is its syscall's name (no rule matched)"
is "$(stat -c %a "$LOGF" 2>/dev/null)" 600 "the stack log is created 0600"
ok 'grep -q "^# uncategorized: read, [0-9.]* ms waited here by pipewait (pid [0-9]*, tid ${READER:-x}): cause \"read\"$" "$LOGF"' \
	"the log names the uncategorized read, its process, thread and cause" || diag_file "$LOGF" "  log: "
like "$(grep -A1 '^# uncategorized: read' "$LOGF" | sed -n 's/^#   kernel: //p')" '^[a-z_]*pipe_read < vfs_read < ksys_read' \
	"the next line gives its kernel stack, innermost first"
like "$(grep -A2 '^# uncategorized: read' "$LOGF" | sed -n 's/^#   user: //p')" '(^| < )main( |$)' \
	"then its user stack (the frame-pointer walk without snapshots: read < main)"
CAND=$(grep '^#100 kernel:' "$LOGF" | head -n 1)
like "$CAND" '^#100 kernel:[a-z_]*pipe_read syscall:read = CAUSE$' "a candidate rule on the innermost frame and the syscall"
ok '! grep -q "clock_nanosleep" "$LOGF"' "the categorized sleep is not logged in uncategorized mode"
is "$(grep -c '^# uncategorized: ' "$LOGF")" 1 "one entry: each distinct stack once"
ok '! grep -q "^# uncategorized" "$TMPD/1.err"' "nothing of the log went to stderr"

# 2) the candidate, given a cause, categorizes the read
{ cat "$RULES"; sed 's/^#//; s/= CAUSE$/= Waiting on the pipe writer/' <<<"$CAND"; } >"$TMPD/more.rules"
WL_LOG=$TMPD/wl2.log record_json "$TMPD/2.out" "$TMPD/2.err" -- -t 50ms --rules "$TMPD/more.rules" \
	--log-stacks all -- "$WL/pipewait" 120
is "$RC" 0 "record --rules (with the candidate) --log-stacks all: exit 0"
READER=$(wl_log_get "$TMPD/wl2.log" reader)
is "$(jq -r "select(.tid == ${READER:-0} and .syscall == \"read\") | .cause" "$TMPD/2.out")" \
	"Waiting on the pipe writer" "the uncommented candidate names the read's cause"
ok 'grep -q "^# categorized: read, .*cause \"Waiting on the pipe writer\" (a rule of priority 100)$" "$TMPD/2.err"' \
	"all: the read is logged as categorized, with its rule's priority, on stderr by default" ||
	diag_file "$TMPD/2.err" "  stderr: "
ok 'grep -q "^# categorized: clock_nanosleep, .*cause \"Requested sleep\"" "$TMPD/2.err"' \
	"all: the sleep is logged too"
ok '! grep -q "^#100 " "$TMPD/2.err"' "no candidate rule for categorized stacks"

# 3) bad values, and the log file is never opened through a symlink
RECORD_EXPECT_RC=2 record_json "$TMPD/3.out" "$TMPD/3.err" -- --log-stacks some -- /bin/true
is "$RC" 2 "--log-stacks some: exit 2"
is "$(cat "$TMPD/3.err")" "latsnap: record: bad --log-stacks 'some': expected none, uncategorized, categorized or all" \
	"the error says what is expected"
printf 'log-stacks = sometimes\n' >"$TMPD/bad.conf"
RECORD_EXPECT_RC=2 record_json "$TMPD/4.out" "$TMPD/4.err" -- -c "$TMPD/bad.conf" -- /bin/true
like "$(cat "$TMPD/4.err")" "^latsnap: $TMPD/bad.conf:1: bad log-stacks 'sometimes'" "a bad config value: FILE:LINE and exit $RC"
echo keep >"$TMPD/victim"
ln -s "$TMPD/victim" "$TMPD/link.log"
RECORD_EXPECT_RC=1 record_json "$TMPD/5.out" "$TMPD/5.err" -- --log-stacks all --stack-log "$TMPD/link.log" -- /bin/true
is "$RC" 1 "--stack-log through a symlink: exit 1"
like "$(cat "$TMPD/5.err")" 'link.log: a symlink is refused' "the error names the file and why"
is "$(cat "$TMPD/victim")" keep "the symlink's target is untouched"

done_testing
