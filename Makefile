# SPDX-License-Identifier: GPL-2.0
# latsnap - build, test and install. Outputs go to build/.

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib/latsnap
DESTDIR ?=
BUILD := build

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/')
# ARCH from make's command line only (an ARCH in the environment means other things elsewhere).
ARCH := $(if $(filter command line,$(origin ARCH)),$(ARCH),$(HOST_ARCH))
# The kernel BTF vmlinux.h is made from: the running kernel's, or (cross) an ARCH kernel's.
VMLINUX_BTF := /sys/kernel/btf/vmlinux

# make ARCH=arm64 on an x86-64 machine: a cross build into build-arm64/ with Debian's cross
# toolchain and :arm64 libraries (scripts/install-arm64-deps.sh), its BPF objects compiled for
# arm64's saved registers against the BTF of Debian's arm64 kernel (the one make check-kernels
# KERNELS=arm64-6.1 boots; scripts/kernels/install.sh fetches it). make check never needs it.
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_TRIPLE_arm64 := aarch64-linux-gnu
CROSS_TRIPLE := $(or $(CROSS_TRIPLE_$(ARCH)),$(error ARCH=$(ARCH): no cross toolchain known (arm64 only)))
CROSS ?= $(CROSS_TRIPLE)-
BUILD := build-$(ARCH)
CC := $(CROSS)gcc
CXX := $(CROSS)g++
AR := $(CROSS)ar
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(CROSS_TRIPLE)/pkgconfig:/usr/share/pkgconfig pkg-config
DEB_ARCH_arm64 := arm64
KERNEL_SERIES_arm64 := arm64-6.1
VMLINUX_BTF := $(BUILD)/vmlinux.btf
GOARCH := $(ARCH)
CROSS_DEPS := scripts/install-arm64-deps.sh
endif
OBJ := $(BUILD)/obj

# Evaluated at use, after the deps step has had a chance to install pkg-config files.
PKGS = libbpf libelf zlib json-c libdw libdebuginfod babeltrace2 lttng-ctl ncursesw libsystemd
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libstdc++ demangles C++ names, libiberty (Debian's libiberty-dev, a static library) Rust ones:
# lib/demangle.c.
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lstdc++ -liberty

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
PRELOAD_CFLAGS ?= $(CFLAGS)
# Headers are named from the top of the tree ("tracker/ksyms.h"), so that an include says which
# layer it reaches into (docs/hacking.md); only generated headers come bare from $(BUILD).
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -I. -I$(BUILD) $(PKG_CFLAGS) \
	-DLS_LIBDIR='"$(LIBDIR)"'
# libbpf's usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> is under the multiarch dir.
# BPF_EXTRA_CFLAGS: make deb maps this tree's path out of the DWARF the skeletons embed.
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) $(BPF_EXTRA_CFLAGS) \
	-Wno-unused-parameter -Wno-unused-function -Wno-missing-declarations \
	-Wno-compare-distinct-pointer-types \
	-idirafter /usr/include/$(shell $(CC) -print-multiarch 2>/dev/null)

LAYERS := lib trace classify tracker recorder review top
CORE_SRCS := $(wildcard $(patsubst %,%/*.c,$(LAYERS)))
CORE_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(CORE_SRCS)) $(OBJ)/review/html-assets.o
CLI_OBJS := $(OBJ)/cli/latsnap.o
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(UNIT_SRCS))
# The fuzz harnesses (fuzz/fuzz_NAME.c); make check replays their corpora (see fuzz: below).
FUZZ_NAMES := summary flame config rules args show ksyms report demangle
FUZZ_REPLAY := $(patsubst %,$(BUILD)/fuzz-replay/fuzz_%,$(FUZZ_NAMES))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WORKLOAD_SRCS))
# C++ workloads (tests/workloads/*.cc): the names latsnap demangles.
WORKLOAD_CXX_SRCS := $(wildcard tests/workloads/*.cc)
WORKLOADS += $(patsubst tests/workloads/%.cc,$(BUILD)/workloads/%,$(WORKLOAD_CXX_SRCS))
# Go workloads: tests/workloads/go/NAME.go is build/workloads/goNAME (see its rule below).
GO_WORKLOAD_SRCS := $(wildcard tests/workloads/go/*.go)
GO_WORKLOADS := $(patsubst tests/workloads/go/%.go,$(BUILD)/workloads/go%,$(GO_WORKLOAD_SRCS))
WORKLOADS += $(GO_WORKLOADS)
# Rust workloads: tests/workloads/rust/NAME.rs is build/workloads/rustNAME (rustc's default,
# legacy, mangling) and build/workloads/rustNAME-v0 (v0 mangling); see their rules below.
RUST_WORKLOAD_SRCS := $(wildcard tests/workloads/rust/*.rs)
RUST_WORKLOADS := $(patsubst tests/workloads/rust/%.rs,$(BUILD)/workloads/rust%,$(RUST_WORKLOAD_SRCS))
RUST_V0_WORKLOADS := $(patsubst %,%-v0,$(RUST_WORKLOADS))
WORKLOADS += $(RUST_WORKLOADS) $(RUST_V0_WORKLOADS)
DEPS_STAMP := $(BUILD)/.deps-ok
PRELOAD := $(BUILD)/liblatsnap.so
PRELOAD_SRCS := preload/preload.c lib/signame.c
# lib/py311.h's offsets checked against CPython 3.11's headers (python3.11-dev), when present.
PY311_INC := /usr/include/python3.11
PY311_CHECK := $(if $(wildcard $(PY311_INC)/internal/pycore_frame.h),$(BUILD)/.py311-ok)
# (Not in a cross build: the headers' pyconfig.h is this machine's architecture's.)
ifneq ($(ARCH),$(HOST_ARCH))
PY311_CHECK :=
endif
# lib/php82.h's offsets checked against PHP 8.2's headers (php8.2-dev), when present.
PHP82_INC := /usr/include/php/20220829
PHP82_CHECK := $(if $(wildcard $(PHP82_INC)/Zend/zend_globals.h),$(BUILD)/.php82-ok)
ifneq ($(ARCH),$(HOST_ARCH))
PHP82_CHECK :=
endif
EVENTS := $(BUILD)/liblatsnap-events.so
# The process latsnap reads CTF traces in (trace/ctf.c starts it; cli/trace-reader.c).
TRACE_READER := $(BUILD)/latsnap-trace-reader
# The process that records latsnap's own events for a relay, each at its time (recorder/replay.c).
REPLAY := $(BUILD)/latsnap-replay
# bench/run.sh (make bench, and its quick mode in make check) and what it runs.
BENCH_BINS := $(BUILD)/bench/empty-hooks $(BUILD)/bench/prims $(BUILD)/bench/pingpong $(BUILD)/bench/getppid \
	$(BUILD)/bench/idlethreads $(BUILD)/bench/calls \
	$(BUILD)/bench/burst
BENCH_NEEDS := $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY) $(BUILD)/workloads/sleeper \
	$(BUILD)/workloads/unwind-nofp $(BENCH_BINS)
BENCH_DEPS_STAMP := $(BUILD)/.bench-deps-ok
# The labelled set's programs in Java, Go, C++ and Rust (tests/labelled/README.md): 85-labelled.t, make bench.
LABELLED := $(BUILD)/labelled/LabServer.class $(BUILD)/labelled/goserver $(BUILD)/labelled/cxxpool \
	$(BUILD)/labelled/rustpool

.PHONY: all deps check check-asan check-valgrind unit integration demo bench install clean \
	format fuzz stress deb
.DELETE_ON_ERROR:

all: $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY) $(PY311_CHECK) $(PHP82_CHECK)

# Installs missing Debian packages first, so each target works as the first command on a fresh
# machine; the stamp keeps the check to once per build tree.
deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh scripts/apt-lib.sh $(CROSS_DEPS)
	@mkdir -p $(BUILD)
	@scripts/install-deps.sh
	@$(if $(CROSS_DEPS),$(CROSS_DEPS))
	@touch $@

$(BUILD)/vmlinux.h: | $(DEPS_STAMP) $(filter-out /sys/%,$(VMLINUX_BTF))
	@test -r $(VMLINUX_BTF) || \
		{ echo "latsnap: build: $(VMLINUX_BTF) missing: a kernel with BTF is needed" >&2; exit 1; }
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

# Cross: the BTF of Debian's kernel for ARCH, cut out of its boot image (no ELF to read it from).
$(BUILD)/vmlinux.btf: scripts/image-btf.py | $(DEPS_STAMP)
	ARM64_ROOT=no scripts/kernels/install.sh $(KERNEL_SERIES_$(ARCH))
	scripts/image-btf.py $(or $(KERNELS_DIR),build/kernels)/$(KERNEL_SERIES_$(ARCH))/vmlinuz $@

$(BUILD)/latsnap.bpf.o: bpf/latsnap.bpf.c $(wildcard bpf/latsnap/*.bpf.h) bpf/kernel-defs.h bpf/core_fixes.bpf.h \
		include/latsnap.h $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -I. -I$(BUILD) -c $< -o $@

$(BUILD)/latsnap.skel.h: $(BUILD)/latsnap.bpf.o
	$(BPFTOOL) gen skeleton $< name latsnap_bpf > $@

# `latsnap top`'s own program, loaded only by it.
$(BUILD)/top.bpf.o: bpf/top.bpf.c bpf/kernel-defs.h bpf/core_fixes.bpf.h include/top.h $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -I. -I$(BUILD) -c $< -o $@

$(BUILD)/top.skel.h: $(BUILD)/top.bpf.o
	$(BPFTOOL) gen skeleton $< name top_bpf > $@

$(BUILD)/syscalls_gen.h: scripts/gen-syscalls.sh | $(DEPS_STAMP)
	CC="$(CC)" scripts/gen-syscalls.sh $@

# Each object depends on the headers it includes, as the compiler found them (-MMD -MP write
# them to its .d, read at the end of this file): a header's change rebuilds what includes it, and
# the BPF skeletons rebuild only the files that include them. A generated header must exist
# before the first compile of a file that includes it (it has no .d yet): those files are found
# by their include line. An object without its .d (built before -MMD, or the .d lost) is built
# again: which headers it took is unknown (a stale object of a changed struct links silently,
# as tracker/decode.o did once here, of a struct outlier that had changed: see DEP_FILES).
DEPFLAGS := -MMD -MP
SKEL_USERS := $(shell grep -l -E '"(latsnap|top)\.skel\.h"' $(CORE_SRCS) cli/*.c)
SYSCALLS_USERS := $(shell grep -l -F '"syscalls_gen.h"' $(CORE_SRCS) cli/*.c)
$(patsubst %.c,$(OBJ)/%.o,$(SKEL_USERS)): | $(BUILD)/latsnap.skel.h $(BUILD)/top.skel.h
$(patsubst %.c,$(OBJ)/%.o,$(SYSCALLS_USERS)): | $(BUILD)/syscalls_gen.h

$(OBJ)/%.o: %.c $(OBJ)/%.d | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

# The HTML pages' script and style sheet, inlined by review/html.c (.incbin, from the top).
$(OBJ)/review/html-assets.o: review/html-assets.S review/html/page.js review/html/page.css
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(BUILD)/libcore.a: $(CORE_OBJS)
	$(AR) rcs $@ $^

# The core without the files that include a BPF skeleton (tracker/'s and top/'s readers of
# its maps): what builds without bpftool, clang or a kernel with BTF. The trace reader and the
# unit tests link it, but for those that reach the BPF side (UNIT_FULL: their link fails
# with libbase.a, naming a tracker_ or top_ function).
BASE_OBJS := $(filter-out $(patsubst %.c,$(OBJ)/%.o,$(SKEL_USERS)),$(CORE_OBJS))
$(BUILD)/libbase.a: $(BASE_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/latsnap: $(CLI_OBJS) $(BUILD)/libcore.a
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS)

$(TRACE_READER): $(OBJ)/cli/trace-reader.o $(BUILD)/libbase.a
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS)

# It never links lttng-ust: it loads it, through liblatsnap-events.so, after its clock is set.
$(REPLAY): $(OBJ)/cli/replay.o $(BUILD)/libbase.a
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -ldl

$(BUILD)/.py311-ok: scripts/py311-check.c lib/py311.h | $(DEPS_STAMP)
	$(CC) -fsyntax-only -I. -I$(PY311_INC) $<
	@touch $@

$(BUILD)/.php82-ok: scripts/php82-check.c lib/php82.h | $(DEPS_STAMP)
	$(CC) -fsyntax-only -I. -I$(PHP82_INC) -I$(PHP82_INC)/main -I$(PHP82_INC)/Zend \
		-I$(PHP82_INC)/TSRM $<
	@touch $@

# The preload library: hidden by default, bound at load (no lazy binding in the signal path).
$(PRELOAD): $(PRELOAD_SRCS) include/latsnap.h lib/signame.h lib/py311.h lib/rb31.h \
		lib/php82.h | $(DEPS_STAMP)
	$(CC) -std=gnu11 $(WARN) $(PRELOAD_CFLAGS) -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
		-I. -o $@ $(PRELOAD_SRCS) -lunwind -ldl \
		-Wl,-z,defs -Wl,-z,now

# latsnap's own events: loaded by `record` once its LTTng session exists (recorder/emit.c).
$(EVENTS): events/events.c events/events-tp.h events/kernel-tp.h events/schema.h \
	events/events.h include/latsnap.h | $(DEPS_STAMP)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
		-I. -Ievents -o $@ events/events.c -llttng-ust -ldl \
		-Wl,-z,defs -Wl,-z,now

UNIT_FULL := test_chain test_ctf test_top test_ring
UNIT_FULL_BINS := $(patsubst %,$(BUILD)/tests/%.t,$(UNIT_FULL))
$(filter-out $(UNIT_FULL_BINS),$(UNIT_BINS)): $(BUILD)/tests/%.t: tests/unit/%.c $(BUILD)/tests/%.d \
	$(BUILD)/libbase.a | $(TRACE_READER)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Itests -o $@ $< $(BUILD)/libbase.a $(PKG_LIBS)

$(UNIT_FULL_BINS): $(BUILD)/tests/%.t: tests/unit/%.c $(BUILD)/tests/%.d $(BUILD)/libcore.a | \
	$(TRACE_READER)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Itests -o $@ $< $(BUILD)/libcore.a $(PKG_LIBS)

# Workloads keep frame pointers and symbols: tests check the functions they call. Those named
# *-nofp have none, so that only the preload library's unwinder can walk them.
NOFP_CFLAGS := -fomit-frame-pointer -fno-inline -fno-optimize-sibling-calls
$(BUILD)/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(if $(findstring -nofp,$*),$(NOFP_CFLAGS),-fno-omit-frame-pointer) \
		$(WARN) -D_GNU_SOURCE -pthread -o $@ $< -ldl

# apptp: an application with its own lttng-ust tracepoint provider (apptp-tp.h).
$(BUILD)/workloads/apptp: tests/workloads/apptp.c tests/workloads/apptp-tp.h \
	tests/workloads/wl_common.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE -pthread \
		-Itests/workloads -o $@ $< -llttng-ust -ldl

# ustinject, forgeevents: load latsnap's events library as latsnap does (events/events.h's types).
$(BUILD)/workloads/ustinject $(BUILD)/workloads/forgeevents: $(BUILD)/workloads/%: \
	tests/workloads/%.c events/events.h include/latsnap.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE -I. -o $@ $< -ldl

$(BUILD)/workloads/%: tests/workloads/%.cc | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -O2 -g -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE -pthread -o $@ $<

# Go workloads: one standard-library program each, static (no cgo) like most Go binaries, so a
# preload library never loads in them. Built offline: GOPATH mode (no module download), the
# user's go env file ignored, the build cache and GOPATH under build/.
GO ?= go
$(GO_WORKLOADS): $(BUILD)/workloads/go%: tests/workloads/go/%.go | $(DEPS_STAMP)
	@mkdir -p $(dir $@) $(BUILD)/go
	$(if $(GOARCH),GOARCH=$(GOARCH)) GOENV=off GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOCACHE=$(abspath $(BUILD)/go/cache) \
		GOPATH=$(abspath $(BUILD)/go/path) $(GO) build -buildvcs=false -o $@ $<

# Rust workloads: std only, no cargo (nothing to download), with Debian's rustc (1.63 on Debian
# 12, scripts/install-deps.sh) rather than whichever a rustup install puts first in PATH. Frame
# pointers in the program's own code, as most Rust programs have none in std's.
RUSTC ?= /usr/bin/rustc
RUST_FLAGS := -O -g -C force-frame-pointers=yes
$(RUST_WORKLOADS): $(BUILD)/workloads/rust%: tests/workloads/rust/%.rs | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(RUSTC) $(RUST_FLAGS) -o $@ $<

$(RUST_V0_WORKLOADS): $(BUILD)/workloads/rust%-v0: tests/workloads/rust/%.rs | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(RUSTC) $(RUST_FLAGS) -C symbol-mangling-version=v0 -o $@ $<

# The labelled set's Java and Go servers (tests/labelled/README.md), with Debian 12's toolchains
# (openjdk-17-jdk-headless, golang-go); the Go one built as the Go workloads are.
$(BUILD)/labelled/LabServer.class: tests/labelled/LabServer.java | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	javac -d $(BUILD)/labelled $<

$(BUILD)/labelled/goserver: tests/labelled/goserver/main.go | $(DEPS_STAMP)
	@mkdir -p $(dir $@) $(BUILD)/go
	GOENV=off GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOCACHE=$(abspath $(BUILD)/go/cache) \
		GOPATH=$(abspath $(BUILD)/go/path) $(GO) build -buildvcs=false -o $@ $<

# The labelled set's C++ and Rust programs (issue 47's held-out half).
$(BUILD)/labelled/cxxpool: tests/labelled/cxxpool.cc | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	g++ -std=c++17 -O2 -g -Wall -Wextra -Werror -pthread -o $@ $<

$(BUILD)/labelled/rustpool: tests/labelled/rustpool.rs | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(RUSTC) -O -g -o $@ $<

unit: $(UNIT_BINS)
	prove -v --exec '' $(UNIT_BINS)

integration: $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY) $(WORKLOADS) $(BENCH_NEEDS) \
	$(BENCH_DEPS_STAMP) $(FUZZ_REPLAY) $(LABELLED)
	prove -v --timer tests/integration/

check: $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY) $(UNIT_BINS) $(WORKLOADS) $(BENCH_NEEDS) \
	$(BENCH_DEPS_STAMP) $(FUZZ_REPLAY) $(LABELLED)
	prove --exec '' $(UNIT_BINS)
	prove -v --timer tests/integration/

# The integration tests (scripts/kernels/tests.list) in QEMU guests booted on Debian's own kernels,
# with this machine's userspace (scripts/kernels/, docs/check-kernels.md); fetches QEMU and the
# kernels first. KERNELS: Debian kernel series, from 5.10 (bullseye) to 6.12.
# arm64-6.1: Debian 12's arm64 kernel under qemu-system-aarch64, with an arm64 userspace made from
# Debian's packages and this tree cross-built (make ARCH=arm64 kernel-build: build-arm64/).
KERNELS ?= 5.10 6.1 6.12
.PHONY: check-kernels kernel-build
check-kernels: $(if $(filter-out arm64-%,$(KERNELS)),$(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) \
	$(REPLAY) $(WORKLOADS) $(BENCH_NEEDS) $(BENCH_DEPS_STAMP) $(FUZZ_REPLAY))
	$(if $(filter arm64-%,$(KERNELS)),$(MAKE) ARCH=arm64 kernel-build)
	KERNELS="$(KERNELS)" scripts/kernels/check.sh

# What the kernel tests run in a guest of another architecture: latsnap and the C and C++
# workloads (no Go or Rust ones: Debian has no Rust standard library for a cross target).
kernel-build: all $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WORKLOAD_SRCS)) \
	$(patsubst tests/workloads/%.cc,$(BUILD)/workloads/%,$(WORKLOAD_CXX_SRCS))

# latsnap.service under systemd as PID 1 (tests/systemd/): the package installed, started, reloaded
# and stopped with systemctl in a QEMU guest of Debian's KERNEL (scripts/kernels/check-systemd.sh,
# docs/check-kernels.md).
KERNEL ?= 6.1
.PHONY: check-systemd
check-systemd: deb $(BUILD)/workloads/sleeper
	KERNEL="$(KERNEL)" scripts/kernels/check-systemd.sh

# The faults test with its outlier storm a minute long (make check runs it for a few seconds).
stress: $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY) $(WORKLOADS)
	STORM_SECONDS=60 nice -n 19 prove -v tests/integration/94-faults.t

# The whole suite again against build-asan/: latsnap, the events library and the unit tests
# built with ASan and UBSan, the preload library with UBSan only. ASan cannot be preloaded into
# the uninstrumented targets without its runtime coming first in them (LD_PRELOAD=libasan.so),
# which would replace the targets' malloc and sigaction: not the programs latsnap is tested on.
# UBSan's runtime loads anywhere. LeakSanitizer leaves TLS unscanned (use_tls=0): its scan of
# latsnap's dynamic TLS at exit crashes its own tracer ("Tracer caught signal 11", a bogus DTLS
# entry) with GCC 12's runtime and glibc 2.36; scripts/lsan.supp names the third-party blocks
# held only from TLS that then look leaked. Reports go to build-asan/san/; scripts/san-reports.sh fails the
# run on any of them but libbabeltrace2's own crashes in the trace reading child.
ASAN_BUILD := build-asan
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
SAN_DIR = $(abspath $(ASAN_BUILD))/san
# verify_asan_link_order=0: tests run latsnap with LD_PRELOAD set (the caller's, kept for COMMAND).
ASAN_OPTS = log_path=$(SAN_DIR)/asan:detect_leaks=1:verify_asan_link_order=0:$\
	detect_stack_use_after_return=1
check-asan:
	@rm -rf $(SAN_DIR) && mkdir -p $(SAN_DIR)
	$(MAKE) BUILD=$(ASAN_BUILD) CFLAGS="$(SAN_CFLAGS)" \
		PRELOAD_CFLAGS="-O2 -g -fsanitize=undefined -fno-sanitize-recover=undefined" \
		LATSNAP_BUILD=$(abspath $(ASAN_BUILD)) \
		ASAN_OPTIONS=$(ASAN_OPTS) \
		LSAN_OPTIONS=suppressions=$(abspath scripts/lsan.supp):print_suppressions=0:use_tls=0 \
		UBSAN_OPTIONS=log_path=$(SAN_DIR)/ubsan:print_stacktrace=1:halt_on_error=1 \
		check; rc=$$?; scripts/san-reports.sh $(SAN_DIR) && exit $$rc

# valgrind memcheck over record, report and show (scripts/check-valgrind.sh); slow under
# valgrind (the BPF load alone takes most of a minute), so not part of make check.
check-valgrind: $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY) $(WORKLOADS)
	scripts/check-valgrind.sh

$(BUILD)/latsnap-demo: demo/latsnap-demo.c | $(DEPS_STAMP)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WARN) -pthread -o $@ $<

demo: $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY) $(BUILD)/latsnap-demo
	scripts/demo.sh

# The bench's extra Debian packages (the peers and PostgreSQL), installed once per build tree.
# A peer that cannot be installed is a "not run: why" row of the table, not a failed build.
$(BENCH_DEPS_STAMP): scripts/install-bench-deps.sh scripts/apt-lib.sh | $(DEPS_STAMP)
	@scripts/install-bench-deps.sh || echo "latsnap: bench: some bench packages are missing" >&2
	@touch $@

# The floor: empty programs on latsnap's hooks, loaded like the tracker's (a skeleton).
$(BUILD)/empty.bpf.o: bench/empty.bpf.c $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -I$(BUILD) -c $< -o $@

$(BUILD)/empty.skel.h: $(BUILD)/empty.bpf.o
	$(BPFTOOL) gen skeleton $< name empty_bpf > $@

$(BUILD)/bench/empty-hooks: bench/empty-hooks.c $(BUILD)/empty.skel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -I$(BUILD) -o $@ $< $(shell $(PKG_CONFIG) --libs libbpf)

# The primitives of latsnap's programs, one program each (issue 31's cost model).
$(BUILD)/prims.bpf.o: bench/prims.bpf.c $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -I$(BUILD) -c $< -o $@

$(BUILD)/prims.skel.h: $(BUILD)/prims.bpf.o
	$(BPFTOOL) gen skeleton $< name prims_bpf > $@

$(BUILD)/bench/prims: bench/prims.c $(BUILD)/prims.skel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -I$(BUILD) -pthread -o $@ $< $(shell $(PKG_CONFIG) --libs libbpf)

$(BUILD)/bench/pingpong: bench/pingpong.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $<

$(BUILD)/bench/%: bench/workloads/%.c tests/workloads/wl_common.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE -pthread -o $@ $<

bench: $(BENCH_NEEDS) $(BENCH_DEPS_STAMP) $(LABELLED) $(WORKLOADS)
	bench/run.sh

# Fuzzing (libFuzzer, ASan, UBSan): one harness per reader of untrusted input, each run for
# FUZZ_TIME seconds on its seeds (fuzz/corpus/TARGET/); the corpus grows in build/fuzz/, crashes
# are left there as crash-*. The harnesses link the whole core, built instrumented in build/fuzz/.
FUZZ_TIME ?= 60
FUZZERS := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_NAMES))
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -std=gnu11 $(WARN) -g -O1 -D_GNU_SOURCE -I. -I$(BUILD) -Ifuzz $(PKG_CFLAGS) \
	-DLS_LIBDIR='"$(LIBDIR)"'
FUZZ_OBJS := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(CORE_SRCS))
$(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(SKEL_USERS)): | $(BUILD)/latsnap.skel.h $(BUILD)/top.skel.h
$(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(SYSCALLS_USERS)): | $(BUILD)/syscalls_gen.h
$(BUILD)/fuzz/obj/%.o: %.c $(BUILD)/fuzz/obj/%.d | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@

$(BUILD)/fuzz/libcore.a: $(FUZZ_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/fuzz/%: fuzz/%.c fuzz/fuzz_common.h $(BUILD)/fuzz/libcore.a | $(DEPS_STAMP) $(TRACE_READER)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) \
		$(shell $(PKG_CONFIG) --cflags libxml-2.0) -o $@ $< $(BUILD)/fuzz/libcore.a \
		$(PKG_LIBS) $(shell $(PKG_CONFIG) --libs libxml-2.0)

# The same harnesses without libFuzzer, built like the rest of $(BUILD) (with the sanitizers in
# check-asan): tests/integration/11-fuzz-corpus.t replays the seeds and fuzz/regress/ with them.
$(BUILD)/fuzz-replay/%: fuzz/%.c fuzz/replay.c fuzz/fuzz_common.h $(BUILD)/libcore.a | $(TRACE_READER)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ifuzz $(shell $(PKG_CONFIG) --cflags libxml-2.0) -o $@ $< fuzz/replay.c \
		$(BUILD)/libcore.a $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs libxml-2.0)

fuzz: $(FUZZERS)
	@for f in $(FUZZ_NAMES); do \
		mkdir -p $(BUILD)/fuzz/corpus-$$f && \
		echo "fuzz: $$f for $(FUZZ_TIME) s" && \
		(cd $(BUILD)/fuzz && ./fuzz_$$f -max_total_time=$(FUZZ_TIME) \
			$$(test -f ../../fuzz/$$f.dict && echo -dict=../../fuzz/$$f.dict) \
			-max_len=65536 -print_final_stats=1 corpus-$$f ../../fuzz/corpus/$$f) || \
			exit 1; \
	done

# The overview latsnap(1), a page per command, latsnap.conf(5) and latsnap-rules(5).
MAN_PAGES := $(wildcard man/*.1 man/*.5)

install: $(BUILD)/latsnap $(PRELOAD) $(EVENTS) $(TRACE_READER) $(REPLAY)
	install -D -m 0755 $(BUILD)/latsnap $(DESTDIR)$(PREFIX)/bin/latsnap
	install -D -m 0755 $(TRACE_READER) $(DESTDIR)$(LIBDIR)/latsnap-trace-reader
	install -D -m 0755 $(REPLAY) $(DESTDIR)$(LIBDIR)/latsnap-replay
	install -D -m 0755 $(PRELOAD) $(DESTDIR)$(LIBDIR)/liblatsnap.so
	install -D -m 0755 $(EVENTS) $(DESTDIR)$(LIBDIR)/liblatsnap-events.so
	for m in $(MAN_PAGES); do \
		install -D -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$${m##*.}/$${m##*/} || exit 1; \
	done

# make deb: build/latsnap_VERSION_ARCH.deb (scripts/build-deb.sh). Its binaries are built apart,
# in $(DEB_BUILD), for the installed layout: LS_LIBDIR baked into them must be where the package
# puts the libraries and the trace reader, never this build tree. Hardened as Debian builds are
# (dpkg-buildflags), where it is there.
# make deb ARCH=arm64: the arm64 package, cross-built (build-arm64/latsnap_VERSION_arm64.deb),
# with arm64's binutils and multiarch directory.
DEB_VERSION = $(shell sed -n 's/^.define LATSNAP_VERSION "\(.*\)"/\1/p' lib/util.h)
DEB_ARCH = $(or $(DEB_ARCH_$(ARCH)),$(shell dpkg --print-architecture))
DEB_MULTIARCH = $(shell dpkg-architecture -a$(DEB_ARCH) -qDEB_HOST_MULTIARCH 2>/dev/null || \
	$(CC) -print-multiarch)
DEB_BUILD := $(BUILD)/deb
DEB_CFLAGS = $(or $(shell dpkg-buildflags --get CFLAGS 2>/dev/null),-O2 -g) \
	$(shell dpkg-buildflags --get CPPFLAGS 2>/dev/null) \
	$(shell dpkg-buildflags --get LDFLAGS 2>/dev/null) -Wl,-z,now
deb: | $(DEPS_STAMP)
	$(MAKE) BUILD=$(DEB_BUILD) PREFIX=/usr LIBDIR=/usr/lib/$(DEB_MULTIARCH)/latsnap \
		CFLAGS="$(DEB_CFLAGS)" PRELOAD_CFLAGS="$(DEB_CFLAGS)" \
		BPF_EXTRA_CFLAGS=-ffile-prefix-map=$(CURDIR)=. all
	STRIP=$(CROSS)strip scripts/build-deb.sh $(DEB_BUILD) \
		$(BUILD)/latsnap_$(DEB_VERSION)_$(DEB_ARCH).deb $(DEB_VERSION) $(DEB_ARCH) $(DEB_MULTIARCH)

format:
	clang-format -i $(filter-out events/events-tp.h events/kernel-tp.h,$(wildcard */*.c */*.h))

clean:
	rm -rf $(BUILD)

# The headers each object, unit test and fuzz object was compiled with (DEPFLAGS).
# Each .d is named as a target (see DEPFLAGS), so that make never takes it for an intermediate
# file it may skip: a missing one rebuilds its object.
DEP_FILES := $(patsubst %.c,$(OBJ)/%.d,$(CORE_SRCS) $(wildcard cli/*.c)) \
	$(patsubst %.c,$(BUILD)/fuzz/obj/%.d,$(CORE_SRCS)) $(UNIT_BINS:.t=.d)
$(DEP_FILES): ;
-include $(wildcard $(OBJ)/*/*.d $(BUILD)/tests/*.d $(BUILD)/fuzz/obj/*/*.d)
