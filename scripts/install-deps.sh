#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages latsnap needs to build and test. Idempotent: a package already
# installed is not touched, so this is cheap to run before every build.
# postgresql-15 (and its client, psql) is for tests/integration/47-request.t, which records a
# throwaway server of its own (not the default cluster the package may create). redis-server
# (with redis-tools, its client) is for tests/integration/48-idle.t, which starts its own too.
# chromium renders the HTML pages in tests/integration/83-html.t (headless), which reads its
# screenshot with python3-pil (Debian's /usr/bin/python3).
# python3-jsonschema is for tests/integration/84-perfetto.t, which checks export's output against
# a JSON Schema with Debian's /usr/bin/python3, and for every integration test's last check: the
# summaries it wrote against tests/schemas/summary.schema.json (tests/schemas/check-summaries.py).
# rustc builds tests/workloads/rust/ (a Rust program's names, tests/integration/87b-rust-names.t);
# libiberty-dev holds the Rust demangler lib/demangle.c links (a static library).
# golang-go builds tests/workloads/go/ (a Go program's goroutine stacks, tests/integration/86-go.t).
# The labelled set of tests/integration/85-labelled.t (tests/labelled/README.md) runs programs
# nobody here wrote: MariaDB 10.11 (its server, its client, and PyMySQL for Debian's python3,
# which drives the sessions), PostgreSQL 15 (psycopg2 drives its sessions), OpenJDK 17, Go 1.19
# and Node (Debian's nodejs, or a newer one already installed).
# python3.11-dev holds CPython 3.11's headers, which lib/py311.h's offsets are checked against
# (scripts/py311-check.c); tests/integration/89c-python-frames.t runs Debian's /usr/bin/python3.
# ruby (Debian's Ruby 3.1) runs tests/workloads/rbframes.rb for tests/integration/89d-ruby-frames.t;
# php8.2-cli runs tests/workloads/phpframes.php for 89e-php-frames.t, and php8.2-dev holds PHP
# 8.2's headers, which lib/php82.h's offsets are checked against (scripts/php82-check.c).
# stress-ng saturates every CPU in `make bench` section 13 (the evidence under load, issue 33).
# ruby (Ruby 3.1) and php-cli (PHP 8.2, with pcntl and posix) run labelled programs of issue 47
# (tests/labelled/rbserver.rb, phpflock.php); g++ and rustc build its C++ and Rust ones.
# memcached is for tests/integration/46-housekeeping.t, which records a server of its own (its
# LRU maintainer's usleeps are a server's housekeeping, issue 46), never the packaged service.
# php8.2-cli and ruby (Ruby 3.1) are the runtimes of tests/integration/41-file-lock.t (PHP's
# flock()) and 41b-ruby-waits.t (a Ruby Mutex, sleep and the GVL), issue 47.
# haproxy (2.6) and nginx-light (1.22) are the event loops of tests/integration/47c-proxies.t
# (keyed --request, issue 52), each run with a config of its own, never the packaged service.
set -eu

PACKAGES="
clang llvm gcc g++ make pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev libjson-c-dev
libdw-dev linux-libc-dev jq perl procps libxml2-dev libxml2-utils iproute2 util-linux
libunwind-dev liblttng-ust-dev liblttng-ctl-dev lttng-tools babeltrace2 libbabeltrace2-dev
libncurses-dev libsystemd-dev tmux gdb postgresql-15 postgresql-client-15 redis-server redis-tools
chromium python3-pil fonts-dejavu-core python3-jsonschema
openjdk-17-jdk-headless
golang-go
rustc
libiberty-dev
libdebuginfod-dev
debuginfod
mariadb-server
mariadb-client
python3-pymysql
python3-psycopg2
python3.11-dev
ruby
php8.2-cli
php8.2-dev
stress-ng
memcached
nodejs
php-cli
haproxy
nginx-light
"

. "$(dirname "$0")/apt-lib.sh"
# shellcheck disable=SC2086
missing=$(apt_missing $PACKAGES)
apt_prepare install-deps "$missing"
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
