#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-layers.sh - fail when a file includes a header of a layer it may not use.
#
# latsnap's layers, lowest first (docs/hacking.md). A layer may include its own headers and those
# of the layers listed for it; generated headers (from the build directory) are named bare.
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
if [ "$bad" = 0 ]; then
	echo "layers: every include goes down (${#MAY[@]} layers)"
fi
exit "$bad"
