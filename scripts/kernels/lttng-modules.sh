#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels/lttng-modules.sh SERIES: LTTng's kernel tracer (lttng-modules) for the Debian
# kernel of SERIES that install.sh fetched, for the guest's test of the LTTng kernel channel
# (tests/kernels/55-lttng-modules.t; docs/check-kernels.md, "lttng-modules").
#
# Debian ships lttng-modules as DKMS source (lttng-modules-dkms). Installing that package here
# would build it for this machine's kernel, not the guest's; so the package is only downloaded and
# unpacked, and its source built with kbuild against the headers of the guest's very release
# (linux-headers-RELEASE, installed with apt: their Makefile names /usr/src by its absolute path),
# outside DKMS: make -C /usr/src/linux-headers-RELEASE M=SRC. The patches of
# scripts/kernels/lttng-modules/ are applied first, each when its condition holds (below).
#
# Cached, as the kernels are: build/kernels/lttng-modules/RELEASE/KEY/ holds the stripped .ko
# files, KEY naming the package's version and the patches' checksum; a second run builds nothing.
# From them, build/kernels/SERIES/lttng/lib/modules/RELEASE is the kernel's module tree (hard
# links) with the .ko files in updates/lttng-modules/ and depmod's indexes: a test bind-mounts it
# on the guest's /lib/modules/RELEASE, so the other tests' guests have no lttng-modules.
#
# Built for 6.1 only: Debian 12's lttng-modules (2.13.9) predates 6.12 (not tried), and 5.10's
# headers are Debian 11's. Exits 0 with the tree made, 1 (after saying why) when it could not be.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KDIR=${KERNELS_DIR:-$ROOT/build/kernels}

die() { echo "latsnap: check-kernels: lttng-modules: $*" >&2; exit 1; }

[ $# = 1 ] || die "usage: scripts/kernels/lttng-modules.sh SERIES"
SERIES=$1
KD=$KDIR/$SERIES
case $SERIES in
6.1) ;;
*) die "$SERIES: not built for this series (Debian 12's lttng-modules 2.13.9 is for 6.1)" ;;
esac
[ -f "$KD/release" ] || die "$SERIES: no kernel in $KD (scripts/kernels/install.sh $SERIES)"
RELEASE=$(cat "$KD/release")
PKG=lttng-modules-dkms
HEADERS=linux-headers-$RELEASE
LOG=$KDIR/logs/lttng-modules-$SERIES.log
mkdir -p "$KDIR/logs"

# --- the key: the package's version and the patches -------------------------------------------
VERSION=$(apt-cache policy "$PKG" 2>/dev/null | sed -n 's/^ *Candidate: //p')
if [ -z "$VERSION" ] || [ "$VERSION" = "(none)" ]; then
	echo "latsnap: check-kernels: apt-get update" >&2
	apt-get update -qq || die "apt-get update failed"
	VERSION=$(apt-cache policy "$PKG" 2>/dev/null | sed -n 's/^ *Candidate: //p')
fi
if [ -z "$VERSION" ] || [ "$VERSION" = "(none)" ]; then
	die "no $PKG in apt's lists"
fi
PATCHSUM=$(cat "$HERE"/lttng-modules/*.patch | sha256sum | cut -c1-12)
KEY=$VERSION-$PATCHSUM
CACHE=$KDIR/lttng-modules/$RELEASE/$KEY
TREE=$KD/lttng/lib/modules/$RELEASE

# --- the modules, built once per key ------------------------------------------------------------
build() {
	local tmp src deb p h t0
	# The headers of the guest's release; their Makefile names /usr/src absolutely: installed.
	if ! dpkg-query -W -f='${Status}' "$HEADERS" 2>/dev/null | grep -q "install ok installed"; then
		echo "latsnap: check-kernels: lttng-modules: installing $HEADERS" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq --no-install-recommends "$HEADERS" >>"$LOG" 2>&1 || {
			apt-get update -qq && apt-get install -y -qq --no-install-recommends "$HEADERS" >>"$LOG" 2>&1
		} || die "apt-get install $HEADERS failed (a kernel fetched before the archive dropped its ABI? remove $KD to fetch the newest); $LOG"
	fi
	tmp=$(mktemp -d "$KDIR/lttng-modules/.build-$RELEASE.XXXXXX")
	chmod 755 "$tmp"
	# shellcheck disable=SC2064 # tmp now
	trap "rm -rf '$tmp'" EXIT
	(cd "$tmp" && apt-get -o APT::Sandbox::User=root download -qq "$PKG=$VERSION") >>"$LOG" 2>&1 ||
		{ die "apt-get download $PKG=$VERSION failed; $LOG"; }
	deb=$(ls "$tmp"/*.deb)
	dpkg-deb -x "$deb" "$tmp/x"
	src=$(find "$tmp/x/usr/src" -maxdepth 1 -name "lttng-modules-*" -print -quit)
	[ -n "$src" ] || { die "$PKG $VERSION has no /usr/src/lttng-modules-*"; }
	# hrtimer-start-was-armed.patch: for headers whose hrtimer_start has the 6.1 stable series'
	# third argument.
	p=$HERE/lttng-modules/hrtimer-start-was-armed.patch
	h=$(grep -A3 -s 'TRACE_EVENT(hrtimer_start' \
		"/usr/src/linux-headers-${RELEASE%-amd64}-common/include/trace/events/timer.h" \
		"/usr/src/$HEADERS/include/trace/events/timer.h" || true)
	if [[ $h == *was_armed* ]]; then
		echo "latsnap: check-kernels: lttng-modules: applying $(basename "$p")" >&2
		patch -d "$src" -p1 -s <"$p" >>"$LOG" 2>&1 || { die "$(basename "$p") does not apply; $LOG"; }
	fi
	echo "latsnap: check-kernels: lttng-modules: building $PKG $VERSION for $RELEASE (log $LOG)" >&2
	t0=$(date +%s)
	make -C "$src" -j"$(nproc)" KERNELDIR="/usr/src/$HEADERS" >>"$LOG" 2>&1 ||
		{ die "the build failed; the end of $LOG:$(tail -n 15 "$LOG" | sed 's/^/\n  /')"; }
	mkdir -p "$tmp/ko"
	find "$src" -name '*.ko' -exec cp {} "$tmp/ko/" \;
	# Without their debug information (as Debian's own modules): 69 MB -> a few.
	strip --strip-debug "$tmp"/ko/*.ko
	[ -f "$tmp/ko/lttng-tracer.ko" ] || { die "the build made no lttng-tracer.ko; $LOG"; }
	echo "$PKG $VERSION for $RELEASE, patches $PATCHSUM, built in $(($(date +%s) - t0)) s" >"$tmp/ko/BUILT"
	mkdir -p "$(dirname "$CACHE")"
	rm -rf "$CACHE"
	mv "$tmp/ko" "$CACHE"
	rm -rf "$tmp"
	echo "latsnap: check-kernels: lttng-modules: $(cat "$CACHE/BUILT"): $CACHE" >&2
}

mkdir -p "$KDIR/lttng-modules"
if [ ! -f "$CACHE/BUILT" ]; then
	: >"$LOG"
	build
fi

# --- the guest's module tree with them ---------------------------------------------------------
if [ "$(cat "$KD/lttng/KEY" 2>/dev/null)" != "$KEY" ]; then
	rm -rf "$KD/lttng"
	mkdir -p "$(dirname "$TREE")"
	# Hard links: the kernel's modules cost nothing twice; depmod's indexes are new files.
	cp -al "$(cd "$KD/modules" && pwd -P)" "$TREE"
	rm -f "$TREE"/modules.*.bin "$TREE"/modules.dep "$TREE"/modules.alias "$TREE"/modules.symbols \
		"$TREE"/modules.devname "$TREE"/modules.softdep
	rm -rf "$TREE/updates/lttng-modules"
	mkdir -p "$TREE/updates/lttng-modules"
	ln "$CACHE"/*.ko "$TREE/updates/lttng-modules/"
	depmod -b "$KD/lttng" "$RELEASE" || die "depmod of $TREE failed"
	grep -q '/lttng-tracer\.ko:' "$TREE/modules.dep" || die "depmod of $TREE: no lttng-tracer.ko"
	echo "$KEY" >"$KD/lttng/KEY"
fi
