#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo: run latsnap record on the bundled demo program and show what it found.
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "latsnap: demo: needs root (BPF)" >&2
	exit 1
fi
echo "== latsnap record --no-snapshot -t 20ms -- build/latsnap-demo" >&2
build/latsnap record --no-snapshot -t 20ms -- build/latsnap-demo
