#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 51: a process cannot crash latsnap with what it maps. maprel maps a relocatable object
# (a .o: as a linker does, here readable and executable) and naps; latsnap reads its mappings to
# symbolize its stacks. libdwfl relocates an ET_REL module before it hands out its ELF, through a
# section_address callback latsnap did not give: a call to address 0, SIGSEGV (seen in 46-self
# under -a while a build ran beside it). a) record -- maprel OBJ: exit 0, both naps reported, with
# nap and main named from maprel itself. b) record -a with maprel started beside it: exit 0.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record maprel sleeper
OBJ=$TMPD/victim.o
# With debug info: relocations against its sections, which libdwfl applies through the callback.
printf 'int v_data = 3;\nstatic int helper(int x) { return x * v_data; }\nint victim_function(int x) { return helper(x) + 1; }\n' \
	>"$TMPD/victim.c"
cc -g -O0 -c -o "$OBJ" "$TMPD/victim.c" || bail_out "cannot build a relocatable object"
like "$(file -b "$OBJ")" 'relocatable' "the object is relocatable (ET_REL)"

# --- a) the process itself ---
WL_LOG=$TMPD/a.log record_json "$TMPD/a.out" "$TMPD/a.err" -t 50ms -- "$WL/maprel" "$OBJ" 100 2
is "$RC" 0 "a) record -- maprel OBJ: exit 0 (not 139: latsnap alive)"
is "$(jcount "$TMPD/a.out" 'select(.syscall == "clock_nanosleep" or .syscall == "nanosleep")')" 2 \
	"a) both naps are outliers"
is "$(jcount "$TMPD/a.out" 'select([.user_stack.frames[]? | .symbol] | (index("nap") != null and index("main") != null))')" 2 \
	"a) each names nap and main: the rest of the process is still symbolized"

# --- b) record -a, the process started beside it ---
timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -a --json --no-snapshot -t 50ms -d 3s \
	>"$TMPD/b.out" 2>"$TMPD/b.err" &
REC=$!
sleep 1
"$WL/maprel" "$OBJ" 100 3
wait "$REC"
RC=$?
is "$RC" 0 "b) record -a beside maprel: exit 0 (not 139)" || diag_file "$TMPD/b.err" "  stderr: "
ok "[ $(jcount "$TMPD/b.out" 'select(.comm == "maprel")') -ge 1 ]" "b) maprel's naps are reported"

done_testing
