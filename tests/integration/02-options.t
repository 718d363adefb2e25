#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every command's options, said three ways, agree: each long option `latsnap CMD --help` lists is
# one CMD's parser takes (with a value exactly when --help names one) and one its man page
# (man/latsnap-CMD.1) documents; each of record's options but --help and --config is a config
# file key, documented in latsnap.conf(5), and every key latsnap.conf(5) documents is one.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_latsnap

MAN=$ROOT/man

# page_has PAGE NAME: PAGE's source writes --NAME (as \-\-NAME), NAME not the start of a longer one.
page_has() {
	sed 's/\\-/-/g' "$1" | grep -qE -- "--$2([^a-z0-9-]|\$)"
}

# accepted CMD NAME ARG: CMD's parser takes --NAME (--NAME=x when ARG is not empty): its error,
# if any, is about the unknown option put after it, or about the value, never about --NAME.
accepted() {
	local cmd=$1 name=$2 arg=$3 opt
	opt=--$name
	[ -n "$arg" ] && opt=--$name=x
	LATSNAP_TIMEOUT=20 run_latsnap "$TMPD/a.out" "$TMPD/a.err" "$cmd" "$opt" --zzz-bogus
	! grep -q "unknown option" "$TMPD/a.err" || grep -q "unknown option '--zzz-bogus'" "$TMPD/a.err"
}

# is_key NAME: a config file line `NAME = ...` is not an unknown key to record. The line after it
# is one, so that record stops there whatever NAME's value did.
is_key() {
	printf '%s = @@bogus@@\nzzz-bogus = 1\n' "$1" >"$TMPD/k.conf"
	LATSNAP_TIMEOUT=20 run_latsnap "$TMPD/k.out" "$TMPD/k.err" record --no-snapshot \
		-c "$TMPD/k.conf" -- true
	[ "$RC" = 2 ] && ! grep -q "unknown key '$1'" "$TMPD/k.err"
}

for cmd in record report show flame export status top rules; do
	LATSNAP_TIMEOUT=20 run_latsnap "$TMPD/$cmd.help" "$TMPD/h.err" "$cmd" --help
	is "$RC" 0 "$cmd --help exits 0"
	page=$MAN/latsnap-$cmd.1
	[ "$cmd" = rules ] && page=$MAN/latsnap-rules.5
	ok '[ -s "$page" ]' "$cmd has its man page, ${page#"$ROOT"/}"
	# Option lines: "  -x, --name ARG   text" or "      --name   text".
	n=0
	while read -r name arg; do
		n=$((n + 1))
		[ "$name" = help ] && continue
		accepted "$cmd" "$name" "$arg"
		ok $? "$cmd --$name${arg:+ $arg}: taken by its parser" ||
			diag_file "$TMPD/a.err" "  stderr: "
		page_has "$page" "$name"
		ok $? "$cmd --$name: in ${page#"$ROOT"/}"
	done < <(sed -nE 's/^ +(-[a-zA-Z], +)?--([a-z][a-z0-9-]*)( ([A-Z][][A-Z|,._-]*))?( .*)?$/\2 \4/p' \
		"$TMPD/$cmd.help")
	ok '[ "$n" -gt 0 ]' "$cmd --help lists its options ($n)"
done

# record's config keys: its options but --help and --config.
CONF=$MAN/latsnap.conf.5
keys=$(sed -nE 's/^ +(-[a-zA-Z], +)?--([a-z][a-z0-9-]*).*/\2/p' "$TMPD/record.help" |
	grep -vx -e help -e config)
nkeys=0
for key in $keys; do
	nkeys=$((nkeys + 1))
	is_key "$key"
	ok $? "config key $key: taken by record" || diag_file "$TMPD/k.err" "  stderr: "
	grep -qE "^\.B[IR] \"$(printf '%s' "$key" | sed 's/-/\\\\-/g') = \"" "$CONF"
	ok $? "config key $key: documented in latsnap.conf(5)"
done
ok '[ "$nkeys" -ge 30 ]' "record has its config keys ($nkeys)"
# ... and every key the page documents is one.
while read -r key; do
	is_key "$key"
	ok $? "latsnap.conf(5) documents $key: record takes it" || diag_file "$TMPD/k.err" "  stderr: "
done < <(sed -nE 's/^\.B[IR] "([a-z\\-]+) = ".*/\1/p' "$CONF" | sed 's/\\-/-/g')
is_key help
isnt $? 0 "help is no config key"
is_key zzz-bogus
isnt $? 0 "an unknown key is refused (the probe can fail)"

done_testing
