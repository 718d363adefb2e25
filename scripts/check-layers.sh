#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-layers.sh - fail when a file includes a header of a layer it may not use, or when the
# files of one layer call each other in a circle.
#
# latsnap's layers, lowest first (docs/hacking.md). A layer may include its own headers and those
# of the layers listed for it; generated headers (from the build directory) are named bare.
#
# Within a layer, calls go one way too: file A depends on file B when A names a function B
# defines (not static); a circle of such dependencies fails. Found from the sources, without a
# build: each .c file with its comments taken out by the C preprocessor (-fpreprocessed: no
# include or macro expanded) and its string literals blanked; a definition is a line at column 0
# naming a function before its "(", not static and not a prototype; the circles are those
# tsort(1) finds in the graph of the layer's files.
#
# Usage: scripts/check-layers.sh [ROOT]   (ROOT defaults to the tree this script is in)
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

declare -A MAY=(
	[include]=""
	[lib]="include"
	[trace]="lib"
	[classify]="lib include"
	[tracker]="classify lib include"
	[events]="include"
	[preload]="lib include"
	[recorder]="tracker trace classify events lib include"
	[review]="trace classify lib include"
	[top]="tracker classify lib include"
	[cli]="recorder review top trace classify lib include"
	[bpf]="include"
)
# Headers generated into the build directory, which any layer that builds them may name bare.
GENERATED=" latsnap.skel.h top.skel.h empty.skel.h syscalls_gen.h vmlinux.h "

bad=0
for layer in "${!MAY[@]}"; do
	[ -d "$layer" ] || continue
	allowed=" $layer ${MAY[$layer]} "
	while IFS=: read -r file line text; do
		header=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$text")
		case $header in
		*/*)
			dir=${header%%/*}
			if [[ $allowed != *" $dir "* ]]; then
				echo "$file:$line: $layer/ may not include $header (allowed: ${allowed# })" >&2
				bad=1
			fi
			;;
		*)
			# A bare name is a generated header or a provider's own re-included header.
			if [[ $GENERATED != *" $header "* && $layer != events ]]; then
				echo "$file:$line: \"$header\": name a header from the top of the tree" >&2
				bad=1
			fi
			;;
		esac
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$layer"/*.[ch] /dev/null)
done
# The file's code without comments, string literals blanked.
code_of() {
	"${CC:-cc}" -fpreprocessed -dD -E -P "$1" 2>/dev/null | sed -E 's/"([^"\\]|\\.)*"/""/g'
}

# The edges "FROM TO NAME" of @1's files: FROM names NAME, a function TO defines.
layer_calls() {
	local file name word
	local -A def=()

	for file in "$1"/*.c; do
		[ -f "$file" ] || continue
		while read -r name; do
			def[$name]=$file
		done < <(code_of "$file" |
			grep -E '^[A-Za-z_][A-Za-z0-9_ *]*[ *][A-Za-z_][A-Za-z0-9_]*\(' |
			grep -vE '^(static|typedef|extern)[[:space:]]|;[[:space:]]*$' |
			sed -E 's/^[^(]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/')
	done
	for file in "$1"/*.c; do
		[ -f "$file" ] || continue
		while read -r word; do
			if [ -n "${def[$word]:-}" ] && [ "${def[$word]}" != "$file" ]; then
				echo "$file ${def[$word]} $word"
			fi
		done < <(code_of "$file" | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u)
	done
}

for layer in "${!MAY[@]}"; do
	[ -d "$layer" ] || continue
	edges=$(layer_calls "$layer")
	[ -n "$edges" ] || continue
	loops=$(awk '{ print $1, $2 }' <<<"$edges" | sort -u | tsort 2>&1 >/dev/null |
		sed -n 's/^tsort: \([^-][^:]*\)$/\1/p' | sort -u)
	[ -n "$loops" ] || continue
	# The calls between the files in circles, to say which break it.
	why=$(awk -v in_loop=" $(tr '\n' ' ' <<<"$loops")" \
		'index(in_loop, " " $1 " ") && index(in_loop, " " $2 " ") { print $1 " calls " $3 "() of " $2 }' \
		<<<"$edges" | paste -sd ';' | sed 's/;/; /g')
	echo "$layer/: a circle of calls between $(tr '\n' ' ' <<<"$loops" | sed 's/ $//'): $why" >&2
	bad=1
done

if [ "$bad" = 0 ]; then
	echo "layers: every include goes down, no layer's files call each other in a circle (${#MAY[@]} layers)"
fi
exit "$bad"
