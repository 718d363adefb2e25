#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages `make bench` needs beyond the build's (scripts/install-deps.sh):
# the peers it compares latsnap with (bpftrace, perf), the real server it runs under latsnap
# (PostgreSQL 15, whose postgresql-15 package also ships pgbench: no contrib package needed) and
# GNU time for latsnap's own CPU and memory. Idempotent: installed packages are not touched.
set -eu

PACKAGES="bpftrace linux-perf postgresql-15 postgresql-client-15 time jq perl procps util-linux"

. "$(dirname "$0")/apt-lib.sh"
# shellcheck disable=SC2086
missing=$(apt_missing $PACKAGES)
apt_prepare install-bench-deps "$missing"
# A peer that fails to install is reported by the bench as "not run: why"; the rest still goes in.
# shellcheck disable=SC2086
if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
	for pkg in $missing; do
		apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null ||
			echo "latsnap: install-bench-deps: cannot install $pkg" >&2
	done
fi
