# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Sourced by the install scripts (scripts/install-deps.sh, scripts/install-bench-deps.sh).

# apt_missing PKG...: prints " PKG" for each package dpkg does not have installed.
apt_missing() {
	for pkg in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
			printf ' %s' "$pkg"
		fi
	done
}

# apt_prepare WHO MISSING: exits 0 when nothing is missing, 1 when not root; otherwise says what
# it installs and updates apt's lists, for the caller's apt-get install.
apt_prepare() {
	if [ -z "$2" ]; then
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "latsnap: $1: missing packages:$2 (run as root to install them)" >&2
		exit 1
	fi
	echo "latsnap: $1: installing$2" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
}
