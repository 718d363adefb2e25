#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels/guest-check.sh TEST...: what scripts/kernels/check.sh runs in each guest (through
# vm-run.sh, in the work tree): a few facts about the kernel, for the log, then the tests under
# prove -v --timer. Exits with prove's status.
set -u

fact() { printf '# kernel: %-36s %s\n' "$1" "$2"; }
yesno() { if "$@" >/dev/null 2>&1; then echo yes; else echo no; fi; }

fact release "$(uname -r)"
fact "/sys/kernel/btf/vmlinux" "$(yesno test -f /sys/kernel/btf/vmlinux)"
probe=$(bpftool feature probe kernel 2>/dev/null)
fact "task_storage map type" "$(yesno grep -q "map_type task_storage is available" <<<"$probe")"
fact "bpf_task_pt_regs helper" "$(yesno grep -q "bpf_task_pt_regs" <<<"$probe")"
fact "sched_exit_tp (tracing events)" "$(yesno grep -rqs sched_exit_tp /sys/kernel/tracing/available_events)"
fact "sched_exit_tp (BTF, raw tracepoint)" \
	"$(yesno sh -c 'bpftool btf dump file /sys/kernel/btf/vmlinux | grep -q "btf_trace_sched_exit_tp\b"')"
fact "ftrace functions (fentry)" "$(wc -l </sys/kernel/tracing/available_filter_functions 2>/dev/null || echo 0)"
# bpf_ktime_get_ns() reads it: under TCG a clocksource other than the TSC makes every clock read
# of the BPF programs cost microseconds, which bench/kernels.t's ratios then show.
fact "clocksource" "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
fact "CPUs, memory" "$(nproc), $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"

[ $# -gt 0 ] || exit 0
# The console formatter, as on a terminal: prove's default for a file (vm-run.sh's results share,
# which the host follows) prints a test's lines only once the test is over.
exec prove -v --timer --formatter TAP::Formatter::Console "$@"
