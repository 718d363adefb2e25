#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages latsnap needs to build and test. Idempotent: a package already
# installed is not touched, so this is cheap to run before every build.
set -eu

PACKAGES="
clang llvm gcc g++ make pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev libjson-c-dev
libdw-dev linux-libc-dev jq perl procps libxml2-dev libxml2-utils iproute2 util-linux
libunwind-dev liblttng-ust-dev liblttng-ctl-dev lttng-tools babeltrace2 libbabeltrace2-dev
libncurses-dev tmux
"

missing=""
for pkg in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $pkg"
	fi
done

if [ -z "$missing" ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "latsnap: install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi

echo "latsnap: install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
