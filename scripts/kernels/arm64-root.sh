#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels/arm64-root.sh: the arm64 guest's userspace (make check-kernels KERNELS=arm64-6.1,
# docs/check-kernels.md), made from Debian's arm64 packages: what the x86 guests take from this
# machine's / (latsnap's libraries, lttng, babeltrace2, bpftool, perl's prove, jq, python3's
# jsonschema, a static busybox for the initramfs). mmdebstrap's extract variant unpacks the
# packages and their dependencies without running anything of theirs (this machine cannot run
# arm64 code); what their maintainer scripts would have made and the tests need is made here
# (accounts, the alternatives' links). Into build/kernels/arm64-root/root, once: a new package
# list (ROOT_PACKAGES below) or this script's change makes it anew.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KDIR=${KERNELS_DIR:-$ROOT/build/kernels}
DIR=$KDIR/arm64-root

die() { echo "latsnap: check-kernels: arm64-root: $*" >&2; exit 1; }

# latsnap's run-time libraries (the Makefile's PKGS, libunwind, lttng-ust) and what the kernel
# tests run.
ROOT_PACKAGES="
libc-bin bash dash coreutils util-linux procps psmisc grep sed mawk gawk findutils diffutils
gzip xz-utils tar kmod iproute2 busybox-static base-files base-passwd debianutils sysvinit-utils
perl jq python3 python3-jsonschema babeltrace2 lttng-tools bpftool
libbpf1 libelf1 libdw1 libdebuginfod1 libjson-c5 libbabeltrace2-0 liblttng-ctl0 libncursesw6
libsystemd0 libunwind8 liblttng-ust1 libstdc++6 zlib1g
"
key=$(cat "$0"; echo "$ROOT_PACKAGES") && key=$(sha256sum <<<"$key" | cut -c1-16)
if [ -f "$DIR/KEY" ] && [ "$(cat "$DIR/KEY")" = "$key" ] && [ -x "$DIR/root/bin/busybox" ]; then
	exit 0
fi

command -v mmdebstrap >/dev/null || die "no mmdebstrap (scripts/install-arm64-deps.sh installs it)"
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mirror=$(sed -n 's/^URIs:[[:space:]]*\(http[^ ]*debian\/\?\)$/\1/p' /etc/apt/sources.list.d/*.sources \
	2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$KDIR"
tmp=$(mktemp -d "$KDIR/.arm64-root.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "latsnap: check-kernels: arm64-root: $suite's arm64 packages into $DIR (mmdebstrap)" >&2
# shellcheck disable=SC2086 # the packages are words
mmdebstrap --quiet --mode=root --variant=extract --architectures=arm64 \
	--include="$(echo $ROOT_PACKAGES | tr ' ' ,)" \
	"$suite" "$tmp/root" "deb $mirror $suite main" "deb $mirror $suite-updates main" \
	"deb http://deb.debian.org/debian-security $suite-security main" ||
	die "mmdebstrap failed"
r=$tmp/root

# base-passwd's postinst: the accounts; lttng-tools': its tracing group.
cp "$r/usr/share/base-passwd/passwd.master" "$r/etc/passwd"
cp "$r/usr/share/base-passwd/group.master" "$r/etc/group"
echo "tracing:x:999:" >>"$r/etc/group"
sed -e 's/:.*$/:*:19000:0:99999:7:::/' "$r/etc/passwd" >"$r/etc/shadow"
echo "127.0.0.1 localhost" >"$r/etc/hosts"
# The alternatives the packages' postinsts would have set.
ln -sfn /usr/bin/mawk "$r/usr/bin/awk"
ln -sfn /usr/bin/python3.11 "$r/usr/bin/python3"
# The merged /usr's top-level links (base-files makes them; usrmerge in bookworm's packages).
for d in bin sbin lib; do
	[ -e "$r/$d" ] || ln -s "usr/$d" "$r/$d"
done
[ -x "$r/bin/busybox" ] || die "no busybox in the root"
[ -x "$r/usr/bin/lttng-sessiond" ] || die "no lttng-sessiond in the root"
echo "$key" >"$tmp/KEY"
rm -rf "$DIR"
mv "$tmp" "$DIR"
trap - EXIT
du -sh "$DIR/root" | sed 's/^/latsnap: check-kernels: arm64-root: /' >&2
