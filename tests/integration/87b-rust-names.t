#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A Rust program's names, demangled wherever people read them (issue 47). rustnapper
# (tests/workloads/rust/napper.rs, built with Debian's rustc) sleeps 100 ms twice in
# napper::handle_request, called through a closure from the generic napper::serve. It is built
# with rustc's default mangling, legacy ("_ZN6napper14handle_request17h<16 hex>E", with escapes
# such as $u7b$ for '{' and $LT$ for '<' in std's names), and with v0 ("_RNvCs..._6napper14...").
# For each: record -t 50ms -o DIR, then summary.txt, show DIR/ID, show --html and flame DIR name
# napper::handle_request, and no Rust name is left mangled in them (no "::h" and
# 16 hex digits, no $..$ escape, no _ZN or _R name); summary.json keeps the name as the symbol
# table spells it (mangled), as it does a C++ name. record's text output (legacy) likewise.
set -u
. "$(dirname "$0")/lib.sh"

require_record rustnapper rustnapper-v0
require_lttng
no_ust_wait

# What a Rust name left mangled looks like, in text.
LEFT='::h[0-9a-f]{16}|\$(u[0-9a-f]{2}|LT|GT|RF|BP|SP|LP|RP|C)\$|(^|[^A-Za-z0-9_])_(ZN[0-9]|R[A-Z][A-Za-z0-9_]*[0-9])'
NAME='napper::handle_request'

# names TAG FILE WHAT: FILE names napper::handle_request and leaves no Rust name mangled.
names() {
	local tag=$1 f=$2 what=$3
	like "$(grep -c "$NAME" "$f" 2>/dev/null)" '^[1-9]' "$tag: $what names $NAME" ||
		diag_file "$f" "  $what: " 30
	is "$(grep -cE "$LEFT" "$f" 2>/dev/null)" 0 "$tag: $what leaves no Rust name mangled" ||
		grep -oE ".{0,40}($LEFT).{0,40}" "$f" | head -n 5 | while IFS= read -r l; do diag "  $l"; done
}

# check TAG WORKLOAD MANGLED: record WORKLOAD, read it back; MANGLED is the regex of
# handle_request's symbol as its symbol table spells it.
check() {
	local tag=$1 wl=$2 mangled=$3 snap
	record_snap "$tag" -t 50ms -o "$TMPD/$tag.d" -- "$WL/$wl" 100 2
	is "$RC" 0 "$tag: record -t 50ms -o DIR -- $wl 100 2: exit 0"
	is "$(cat "$TMPD/$tag.d"/*/summary.json 2>/dev/null | jq -s "[.[] | .. | objects |
		select(has(\"addr\")) | .symbol // empty | select(test(\"$mangled\"))] | length > 0")" \
		true "$tag: summary.json keeps the mangled name (/$mangled/)"
	cat "$TMPD/$tag.d"/*/summary.txt >"$TMPD/$tag.summary.txt" 2>/dev/null
	names "$tag" "$TMPD/$tag.summary.txt" summary.txt
	snap=$(find "$TMPD/$tag.d" -mindepth 2 -maxdepth 2 -name summary.json -printf '%h\n' |
		sort | head -n 1)
	run_latsnap "$TMPD/$tag.show" "$TMPD/$tag.show.err" show "${snap:-/nonexistent}"
	is "$RC" 0 "$tag: show DIR/ID: exit 0"
	names "$tag" "$TMPD/$tag.show" "show DIR/ID"
	run_latsnap "$TMPD/$tag.out" "$TMPD/$tag.err" show --html "$TMPD/$tag.html" "${snap:-/nonexistent}"
	is "$RC" 0 "$tag: show --html FILE DIR/ID: exit 0"
	names "$tag" "$TMPD/$tag.html" "show --html's page"
	run_latsnap "$TMPD/$tag.flame" "$TMPD/$tag.flame.err" flame "$TMPD/$tag.d"
	is "$RC" 0 "$tag: flame DIR: exit 0"
	names "$tag" "$TMPD/$tag.flame" "flame DIR"
}

check legacy rustnapper '^_ZN6napper14handle_request17h[0-9a-f]{16}E$'
check v0 rustnapper-v0 '^_RNvCs[0-9A-Za-z_]+_6napper14handle_request$'
like "$(grep -c 'napper::serve::<u32>' "$TMPD/v0.show")" '^[1-9]' \
	"v0: show names the generic caller with its type, napper::serve::<u32>" ||
	diag_file "$TMPD/v0.show" "  show: " 40

timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot -t 50ms -- "$WL/rustnapper" 100 2 \
	>"$TMPD/text.out" 2>"$TMPD/text.err"
is "$?" 0 "text: record --no-snapshot -- rustnapper 100 2 (text output): exit 0"
names text "$TMPD/text.out" "record's text output"

done_testing
