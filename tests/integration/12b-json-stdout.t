#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Under record --json, latsnap's stdout carries only the NDJSON outliers (issue 47): COMMAND's
# own stdout goes to latsnap's stderr. COMMAND is a shell that prints three lines of text, one of
# them half a JSON object, and sleeps 200 ms (a nanosleep outlier past -t 50ms) between them:
# every line of latsnap's stdout parses as JSON and is an outlier, the sleep among them, and the
# three lines are on latsnap's stderr, in their order. Without --json, COMMAND's stdout is
# latsnap's stdout, as before.
set -u
. "$(dirname "$0")/lib.sh"

require_record
require sh sleep
no_ust_wait

PRINTER='echo "printer: line 1"; echo "{\"printer\": 2,"; sleep 0.2; echo "printer: line 3"'

record_json "$TMPD/out" "$TMPD/err" -- -t 50ms -- sh -c "$PRINTER"
is "$RC" 0 "record --json -- sh -c PRINTER: exit 0"
N=$(grep -c '' "$TMPD/out")
is "$(jq -c . "$TMPD/out" 2>/dev/null | grep -c '^{')" "$N" \
	"every line of stdout ($N) parses as a JSON object (jq)" || diag_file "$TMPD/out" "  stdout: "
is "$(jq -s '[.[] | select(.kind == "syscall" and .comm == "sleep")] | length > 0' \
	"$TMPD/out" 2>/dev/null)" true "the 200 ms sleep is an outlier on stdout"
is "$(grep -c 'printer' "$TMPD/out")" 0 "none of COMMAND's lines is on stdout"
is "$(grep -E '^(printer: line 1|\{"printer": 2,|printer: line 3)$' "$TMPD/err" | tr '\n' '|')" \
	'printer: line 1|{"printer": 2,|printer: line 3|' \
	"COMMAND's three lines are on stderr, whole and in their order" ||
	diag_file "$TMPD/err" "  stderr: "

timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot -t 50ms -- sh -c "$PRINTER" \
	>"$TMPD/text.out" 2>"$TMPD/text.err"
is "$?" 0 "record (text) -- sh -c PRINTER: exit 0"
is "$(grep -c '^printer: line [13]$' "$TMPD/text.out")" 2 \
	"without --json, COMMAND's stdout is latsnap's stdout" || diag_file "$TMPD/text.out" "  stdout: "

done_testing
