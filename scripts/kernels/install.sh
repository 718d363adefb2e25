#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels/install.sh [SERIES...]: what `make check-kernels` needs (docs/check-kernels.md).
# Installs QEMU, a static busybox and cpio (for the guest's initramfs), kmod (depmod); unpacks a
# newer QEMU from backports into build/kernels/qemu/ when the system's is older than 8 (see
# fetch_qemu); then fetches Debian's
# kernel package of each SERIES (5.10, 6.1, 6.12; default: all three) with `apt-get download`
# and unpacks it into build/kernels/SERIES/root/ (never installed on this machine). Idempotent: a
# series already unpacked is left alone (remove build/kernels/SERIES to fetch it again). For 6.1,
# lttng-modules too (lttng-modules.sh; LTTNG_MODULES=no: not). An arm64-SERIES (arm64-6.1):
# Debian's arm64 kernel of SERIES, with scripts/install-arm64-deps.sh first (qemu-system-arm, the
# cross build's packages) and the guest's arm64 userspace after (arm64-root.sh; ARM64_ROOT=no:
# not, for make ARCH=arm64, which wants only the kernel's BTF).
#
# 6.1 and 6.12 come from bookworm's own suites; 5.10 from bullseye's, through a private sources
# list made from this machine's (same archive, suite renamed), with apt state of its own under
# build/kernels/apt/, so the system's lists and cache are not touched.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KDIR=${KERNELS_DIR:-$ROOT/build/kernels}

die() { echo "latsnap: check-kernels: $*" >&2; exit 1; }

# --- host packages -------------------------------------------------------------------------
PACKAGES="qemu-system-x86 busybox-static cpio kmod xz-utils zstd"
missing=$(. "$ROOT/scripts/apt-lib.sh"; apt_missing $PACKAGES)
if [ -n "$missing" ]; then
	# apt_prepare exits: run it in a subshell (it exits 0 only when nothing is missing).
	(. "$ROOT/scripts/apt-lib.sh"; apt_prepare check-kernels "$missing"; exit 0) || exit 1
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

[ $# -gt 0 ] || set -- 5.10 6.1 6.12

# --- the private apt state for a release other than the system's ---------------------------
# sources_uris: "URI TYPE" for each deb source of this system (TYPE: main or security).
sources_uris() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822 stanzas: a Types line with deb, a URIs line, a Suites line.
		awk '
			function flush() {
				if (deb && uris != "") {
					n = split(uris, u, " ")
					for (i = 1; i <= n; i++)
						print u[i], (suites ~ /-security/ || u[i] ~ /-security\/?$/) ? "security" : "main"
				}
				deb = 0; uris = ""; suites = ""
			}
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "uris:" { $1 = ""; uris = $0 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		# One-line form: deb [options] URI SUITE COMPONENT...
		awk '$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				print $i, ($(i + 1) ~ /-security/ || $i ~ /-security\/?$/) ? "security" : "main"
			}' "$f"
	done
}

# private_apt NAME MAIN_SUITES [SECURITY_SUITES]: makes $KDIR/apt/NAME (sources list, lists,
# cache) with these suites of the system's sources, and sets APT_OPTS to use it.
APT_OPTS=()
private_apt() {
	local dir=$KDIR/apt/$1 uri type keyring='' suite
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	if [ -f /usr/share/keyrings/debian-archive-keyring.gpg ]; then
		keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	fi
	: >"$dir/sources.list"
	while read -r uri type; do
		[ -n "$uri" ] || continue
		if [ "$type" = security ]; then
			for suite in ${3:-}; do
				echo "deb ${keyring:+[signed-by=$keyring] }$uri $suite main" >>"$dir/sources.list"
			done
		else
			for suite in $2; do
				echo "deb ${keyring:+[signed-by=$keyring] }$uri $suite main" >>"$dir/sources.list"
			done
		fi
	done < <(sources_uris | sort -u)
	[ -s "$dir/sources.list" ] || die "no deb source in /etc/apt/sources.list{,.d} to take the archive's address from"
	APT_OPTS=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	# Once a day is enough.
	if [ -z "$(find "$dir/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null)" ]; then
		echo "latsnap: check-kernels: apt-get update for $2 (private lists in $dir)" >&2
		apt-get "${APT_OPTS[@]}" update -qq || die "apt-get update for $2 failed"
	fi
}

# --- one kernel series -------------------------------------------------------------------------
# depmod_series DIR: the package leaves modules.dep to depmod at installation: make it here, for
# vm-run.sh (the initramfs's modules) and for modprobe in the guest.
depmod_series() {
	[ -f "$1/modules/modules.dep" ] || depmod -b "$1/root" "$(cat "$1/release")" ||
		die "depmod for $(cat "$1/release") failed"
}

# newest REGEX SERIES: the newest package of apt's lists whose name matches REGEX.
newest() {
	apt-cache "${APT_OPTS[@]}" search --names-only "^linux-image-${2//./\\.}" |
		awk '{ print $1 }' | grep -E "$1" | sort -V | tail -n 1 || true
}

fetch_series() {
	local series=$1 dir=$KDIR/$1 re pkg deb ver tmp arch=amd64 qual=''
	if [ -f "$dir/vmlinuz" ] && [ -f "$dir/release" ]; then
		depmod_series "$dir"
		return 0
	fi
	# arm64-SERIES: Debian's arm64 kernel of SERIES, for an arm64 guest (qemu-system-aarch64;
	# its userspace: arm64-root.sh), named with the architecture for apt (not this machine's).
	case $series in
	arm64-*)
		arch=arm64
		qual=:arm64
		series=${series#arm64-}
		;;
	esac
	case $arch-$series in
	amd64-5.10) private_apt bullseye "bullseye bullseye-updates" bullseye-security ;;
	*-6.1 | *-6.12) APT_OPTS=() ;;
	*) die "unknown kernel series '$1' (known: 5.10 6.1 6.12 arm64-6.1 arm64-6.12)" ;;
	esac
	# linux-image-6.1.0-56-amd64-unsigned, linux-image-6.12.117+deb12-amd64-unsigned: the
	# generic flavour (not cloud: no 9p; not rt), newest ABI.
	re="^linux-image-${series//./\\.}(\\.0-[0-9]+|\\.[0-9]+\\+deb[0-9]+)-$arch-unsigned\$"
	pkg=$(newest "$re" "$series")
	if [ -z "$pkg" ] && [ ${#APT_OPTS[@]} = 0 ]; then
		# The system's lists may be missing or old (a fresh CI machine): update them once.
		echo "latsnap: check-kernels: apt-get update" >&2
		apt-get update -qq || die "apt-get update failed"
		pkg=$(newest "$re" "$series")
	fi
	[ -n "$pkg" ] || die "no $series kernel package (linux-image-$series*-$arch-unsigned) in apt's lists"
	pkg=$pkg$qual
	echo "latsnap: check-kernels: fetching $pkg" >&2
	tmp=$(mktemp -d "$KDIR/.fetch-$1.XXXXXX")
	chmod 755 "$tmp"
	# As root into a directory _apt may not write: download as root, without the warning.
	if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" -o APT::Sandbox::User=root download -qq "$pkg"); then
		# Lists older than the archive name a version it no longer has: update, once.
		echo "latsnap: check-kernels: apt-get update, and again" >&2
		apt-get "${APT_OPTS[@]}" update -qq &&
			(cd "$tmp" && apt-get "${APT_OPTS[@]}" -o APT::Sandbox::User=root download -qq "$pkg") ||
			{ rm -rf "$tmp"; die "apt-get download $pkg failed"; }
	fi
	deb=$(ls "$tmp"/*.deb)
	mkdir -p "$tmp/root"
	dpkg-deb -x "$deb" "$tmp/root"
	# The image and its modules: /boot/vmlinuz-VER, /lib/modules/VER (or /usr/lib/modules).
	ver=$(cd "$tmp/root/boot" && ls vmlinuz-* | head -n 1)
	ver=${ver#vmlinuz-}
	[ -n "$ver" ] || { rm -rf "$tmp"; die "$pkg has no /boot/vmlinuz-*"; }
	rm -f "$deb"
	ln -s "root/boot/vmlinuz-$ver" "$tmp/vmlinuz"
	if [ -d "$tmp/root/lib/modules/$ver" ]; then
		ln -s "root/lib/modules/$ver" "$tmp/modules"
	else
		ln -s "root/usr/lib/modules/$ver" "$tmp/modules"
	fi
	echo "$pkg" >"$tmp/package"
	echo "$ver" >"$tmp/release"
	depmod_series "$tmp"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	echo "latsnap: check-kernels: $1: $ver in $dir" >&2
}

# --- QEMU from backports ----------------------------------------------------------------------
# Debian 12's QEMU (7.2) livelocks guests whose kernel patches its own code while another CPU
# runs it (the int3 of text_poke_bp() executed again and again from a stale translation, under
# multi-threaded TCG): every BPF attach or detach does so. 10.0 from bookworm-backports does not.
# It is unpacked into build/kernels/qemu/root (not installed; the system's qemu-system-x86 brought
# the libraries it needs); vm-run.sh prefers it. Without it, vm-run.sh runs the system's QEMU
# with every CPU in one host thread (half as fast).
fetch_qemu() {
	local dir=$KDIR/qemu codename major tmp pkg
	[ ! -x "$dir/root/usr/bin/qemu-system-x86_64" ] || return 0
	# Tried in the last day, in vain.
	[ -z "$(find "$KDIR/qemu-none" -mmin -1440 2>/dev/null)" ] || return 0
	major=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\).*/\1/p')
	[ "${major:-0}" -lt 8 ] || return 0
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || { echo "latsnap: check-kernels: no VERSION_CODENAME in /etc/os-release: the system's QEMU it is" >&2; touch "$KDIR/qemu-none"; return 0; }
	private_apt "$codename-backports" "$codename-backports"
	tmp=$(mktemp -d "$KDIR/.fetch-qemu.XXXXXX")
	chmod 755 "$tmp"
	echo "latsnap: check-kernels: fetching QEMU from $codename-backports" >&2
	for pkg in qemu-system-x86 qemu-system-common qemu-system-data seabios; do
		if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" -o APT::Sandbox::User=root download -qq "$pkg/$codename-backports"); then
			# seabios may be missing from backports: the system's then.
			[ "$pkg" = seabios ] && continue
			echo "latsnap: check-kernels: no $pkg in $codename-backports: the system's QEMU it is" >&2
			rm -rf "$tmp"
			touch "$KDIR/qemu-none"
			return 0
		fi
	done
	mkdir -p "$tmp/root"
	for pkg in "$tmp"/*.deb; do
		dpkg-deb -x "$pkg" "$tmp/root"
		rm -f "$pkg"
	done
	if ! QEMU_MODULE_DIR=$tmp/root/usr/lib/x86_64-linux-gnu/qemu "$tmp/root/usr/bin/qemu-system-x86_64" --version >"$tmp/version"; then
		echo "latsnap: check-kernels: $codename-backports' QEMU does not run here: the system's it is" >&2
		rm -rf "$tmp"
		touch "$KDIR/qemu-none"
		return 0
	fi
	rm -rf "$dir"
	mv "$tmp" "$dir"
	echo "latsnap: check-kernels: $(head -n 1 "$dir/version") in $dir" >&2
}

mkdir -p "$KDIR"
case " $* " in
*" arm64-"*)
	# The arm64 guest's QEMU, and the cross build's packages (the guest runs its binaries).
	"$ROOT/scripts/install-arm64-deps.sh" || die "scripts/install-arm64-deps.sh failed"
	;;
esac
for s in "$@"; do
	case $s in
	arm64-*) ;;
	*) fetch_qemu ;;
	esac
done
for s in "$@"; do
	fetch_series "$s"
	# The arm64 guest's userspace, from Debian's arm64 packages (this machine's is amd64).
	case $s in
	# ARM64_ROOT=no: the kernel alone (make ARCH=arm64 wants only its BTF).
	arm64-*)
		[ "${ARM64_ROOT:-yes}" = no ] || "$HERE/arm64-root.sh" ||
			die "$s: scripts/kernels/arm64-root.sh failed"
		;;
	esac
	# LTTng's kernel tracer for the guest's test of it (lttng-modules.sh: built once, cached). A
	# failure here is that test's, which says why: the other tests need no lttng-modules.
	if [ "$s" = 6.1 ] && [ "${LTTNG_MODULES:-yes}" != no ]; then
		"$HERE/lttng-modules.sh" "$s" ||
			echo "latsnap: check-kernels: $s: no lttng-modules (above): tests/kernels/55-lttng-modules.t fails" >&2
	fi
done
