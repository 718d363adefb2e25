#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Ruby's waits (issue 47), Debian's Ruby 3.1 running tests/workloads/rubywaits.rb: thread
# "mutexwaiter" waits ~200 ms in Mutex#synchronize for "mutexholder"; "sleeper" sleeps 0.2 s;
# "gvlwaiter" reads a file in a loop while "spinner" runs Ruby code for 300 ms, and waits for the
# GVL after each read; "joiner" waits for it after a join. Every one of them waits in a condition variable of Ruby's: the cause must
# come from the frames above it. a) without --include-idle: the Mutex wait and the GVL waits are
# outliers (never idle), named as such, the Mutex's woken by mutexholder. b) with it: the sleep
# is one too, named neither a Mutex nor the GVL but a Ruby sleep: from the thread's status where
# libruby has no symbols (Debian's), the GVL's timer and the Mutex wait from the interpreter's
# state too (flags ruby-gvl, ruby-mutex).
set -u
. "$(dirname "$0")/lib.sh"

require_record
require ruby
no_ust_wait

OUT=$TMPD/out ERR=$TMPD/err SCRIPT=$ROOT/tests/workloads/rubywaits.rb
MUTEX="Waiting for a Ruby Mutex (Mutex#lock)" GVL="Waiting for Ruby's global VM lock (GVL)"

record_json "$OUT" "$ERR" -- -t 50ms -- ruby "$SCRIPT"
is "$RC" 0 "a) record -t 50ms -- ruby rubywaits.rb: exit 0"
dump_outliers "$OUT"
tid_of() { awk -v n="$1" '$1 == "tid" && $2 == n { print $3; exit }' "$ERR"; }
SEL='select(.comm == "mutexwaiter")'
is "$(jcount "$OUT" "$SEL")" 1 "a) one outlier in mutexwaiter" ||
	diag "record's stderr on mutexwaiter: $(grep -i 'mutexwaiter' "$ERR" | tr '\n' ' ')"
is "$(jq -r -s "[.[] | $SEL] | .[0].cause" "$OUT")" "$MUTEX" "a) its cause is the Ruby Mutex"
is "$(jq -r -s "[.[] | $SEL] | .[0].flags | map(select(startswith(\"ruby-mutex:\"))) | length" "$OUT")" 1 \
	"a) flagged ruby-mutex: the thread's own locking_mutex says it (libruby without symbols too)"
is "$(jq -r -s "[.[] | $SEL] | .[0].tid" "$OUT")" "$(tid_of mutexwaiter)" "a) in thread mutexwaiter"
between "$(jq -r -s "[.[] | $SEL] | .[0].duration_ns" "$OUT")" 150000000 1000000000 \
	"a) it waited ~ the 200 ms hold"
is "$(jq -r -s "[.[] | $SEL] | .[0].waker.comm" "$OUT")" mutexholder "a) woken by mutexholder"
# Its waits are for the GVL, either way the scheduler lets it take the GVL (below): a wait after
# its read while spinner runs ("$GVL"), or, when it takes the GVL back after each read before
# spinner, woken by the read's release, is on a CPU, a wait after the timeslice the timer ends
# ("$GVL, its timeslice over"; CI once saw only those: three waits of 96-100 ms).
SEL='select(.comm == "gvlwaiter" and (.cause | startswith("'"$GVL"'")))'
ok "[ $(jcount "$OUT" "$SEL") -ge 1 ]" "a) gvlwaiter waited for the GVL ($(jcount "$OUT" "$SEL") outliers)"
# The GVL's timer waits 100 ms at a time in a timed condition wait, as a sleep does: told by the
# GVL's own owner and timer words, which the preload library reads (issue 47: a request thread
# behind a computing one was filed idle, "between units of work").
# Whether gvlwaiter waits as the timer, in the waiters' list, or after a timeslice of its own
# (it computes between reads) is the scheduler's: each of its GVL waits says which.
GVLT='select(.comm == "gvlwaiter" and (.cause | startswith("'"$GVL"'")) and
	(.flags | map(select(startswith("ruby-gvl"))) | length) == 1)'
GVLA='select(.comm == "gvlwaiter" and (.cause | startswith("'"$GVL"'")))'
ok "[ $(jcount "$OUT" "$GVLT") -ge 1 ] && [ $(jcount "$OUT" "$GVLT") = $(jcount "$OUT" "$GVLA") ]" \
	"a) gvlwaiter's waits for the GVL are told by the GVL's own state: flag ruby-gvl or ruby-gvl-yield ($(jcount "$OUT" "$GVLT") of $(jcount "$OUT" "$GVLA"))"
# The waits that are not for the GVL: the Mutex's and the sleeps, 200 ms each (a GVL wait ends
# within its timer's 100 ms). Any thread that runs Ruby code may wait for the GVL, the main
# thread too: the timer asks whoever owns the GVL when it fires to yield, one that took it a
# moment before included (its timeslice counted as over: CI saw the main thread's 99 ms).
NOTGVL='select((.comm == "mutexholder" or .comm == "mutexwaiter" or .comm == "sleeper") and
	.duration_ns >= 150000000)'
is "$(jcount "$OUT" "$NOTGVL"' | select(.flags | map(select(startswith("ruby-gvl"))) | length > 0)')" 0 \
	"a) the Mutex wait and the sleeps (200 ms) are not flagged ruby-gvl ($(jcount "$OUT" "$NOTGVL") of them)"
ok "[ $(jcount "$OUT" "$NOTGVL") -ge 1 ]" "a) ... the Mutex wait among them"
# Two threads computing at once give the GVL up to each other at each timeslice's end: told by
# their status (runnable: they were running), apart from a wait to take it back after I/O.
YIELD='select((.comm == "spinA" or .comm == "spinB") and
	(.flags | map(select(startswith("ruby-gvl-yield:"))) | length) == 1 and
	.cause == "'"$GVL"', its timeslice over")'
ok "[ $(jcount "$OUT" "$YIELD") -ge 1 ]" \
	"a) spinA and spinB wait for the GVL after their timeslices: flagged ruby-gvl-yield ($(jcount "$OUT" "$YIELD"))"
# (gvlwaiter runs Ruby code between its reads: a yield of its own is possible, and no check.)
# A thread woken by a join's end is made runnable by the joined thread, an interrupt pending for
# it: its wait for the GVL after that is no yield (CI: the main thread, joining spinA while spinB
# ran, was said to have given the GVL up). joiner waits so when the scheduler has spinner2 hold
# the GVL as napper ends (most runs; -t 50ms may leave it out).
JOINER='select(.comm == "joiner" and (.flags | map(select(startswith("ruby-gvl"))) | length) > 0)'
is "$(jcount "$OUT" "$JOINER"' | select(.flags | map(select(startswith("ruby-gvl-yield:"))) | length > 0)')" 0 \
	"a) joiner's waits for the GVL after its joins are no yields ($(jcount "$OUT" "$JOINER") flagged ruby-gvl)"
# The main thread holds Ruby's signal pipe: it sleeps and joins in a ppoll, which the BPF side
# leaves on its idle list but in a process whose preload library says it runs Ruby
# (LS_PRCTL_RUNTIME): told apart by the thread's status (issue 47: rbcond's were missed).
MAINSEL='select(.tid == .pid and .syscall == "ppoll")'
is "$(jcount "$OUT" "$MAINSEL"' | select(.cause | startswith("Requested sleep (Ruby sleep"))')" 1 \
	"a) the main thread's sleep 0.2 in ppoll is found, a Ruby sleep (flag ruby-timed)" ||
	diag "  main's: $(jq -c "$MAINSEL"' | {duration_ns, cause, flags}' "$OUT" | tr '\n' ' ')"
is "$(jcount "$OUT" "$MAINSEL"' | select(.cause | startswith("Waiting for another Ruby thread"))')" \
	"$(($(jcount "$OUT" "$MAINSEL") - 1))" \
	"a) ... its joins in ppoll ($(jcount "$OUT" "$MAINSEL") waits in all) wait for another Ruby thread (flag ruby-stopped)"
is "$(jcount "$OUT" 'select(.comm == "gvlwaiter" and .cause == "'"$MUTEX"'")')" 0 \
	"a) none of gvlwaiter's is named a Mutex"
is "$(jcount "$OUT" 'select(.comm == "mutexwaiter" and .cause == "'"$GVL"'")')" 0 \
	"a) mutexwaiter's is not named the GVL"

record_json "$OUT" "$ERR" -- -t 50ms --include-idle -- ruby "$SCRIPT"
is "$RC" 0 "b) record -t 50ms --include-idle -- ruby rubywaits.rb: exit 0"
dump_outliers "$OUT"
SEL='select(.comm == "sleeper")'
is "$(jcount "$OUT" "$SEL")" 1 "b) one outlier in sleeper"
NAP=$(jq -r -s "[.[] | $SEL] | .[0].cause" "$OUT")
isnt "$NAP" "$MUTEX" "b) the sleep is not named a Mutex ($NAP)"
isnt "$NAP" "$GVL" "b) the sleep is not named the GVL"
# Named from the thread's status (stopped with a deadline) where libruby has no symbols
# (Debian's), from sleep_hrtime where it has.
like "$NAP" '^Requested sleep \(Ruby sleep' "b) the sleep is Ruby's sleep ($NAP)"
is "$(jcount "$OUT" 'select(.comm == "mutexwaiter") | select(.cause == "'"$MUTEX"'")')" 1 \
	"b) the Mutex wait is still named so"

done_testing
