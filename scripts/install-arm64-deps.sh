#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# scripts/install-arm64-deps.sh: what `make ARCH=arm64` (the cross build), `make deb ARCH=arm64`
# and `make check-kernels KERNELS=arm64-6.1` need beyond scripts/install-deps.sh: dpkg's arm64
# architecture, Debian's cross toolchain, the :arm64 development packages latsnap links (the
# Makefile's PKGS, libiberty, libunwind for the preload library, lttng-ust for the events
# library), QEMU for aarch64 and mmdebstrap (the guest's userspace, scripts/kernels/arm64-root.sh).
# Idempotent. make check never runs it: only the arm64 targets do.
set -eu

. "$(dirname "$0")/apt-lib.sh"

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "latsnap: install-arm64-deps: dpkg has no arm64 architecture (run as root to add it)" >&2
		exit 1
	fi
	echo "latsnap: install-arm64-deps: dpkg --add-architecture arm64" >&2
	# The arm64 lists come with apt_prepare's update (every package below is missing then).
	dpkg --add-architecture arm64
fi

PACKAGES="
crossbuild-essential-arm64
qemu-system-arm
mmdebstrap
libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libjson-c-dev:arm64 libdw-dev:arm64
libdebuginfod-dev:arm64 libbabeltrace2-dev:arm64 liblttng-ctl-dev:arm64 libncurses-dev:arm64
libsystemd-dev:arm64 libiberty-dev:arm64 libunwind-dev:arm64 liblttng-ust-dev:arm64
"

# shellcheck disable=SC2086
missing=$(apt_missing $PACKAGES)
apt_prepare install-arm64-deps "$missing"
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
