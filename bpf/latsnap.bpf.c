// SPDX-License-Identifier: GPL-2.0
/*
 * latsnap.bpf.c - times syscalls and off-CPU intervals of tracked threads, splits each outlier
 * into on-CPU, blocked and runqueue time, and keeps the kernel stacks where it waited and who
 * woke it.
 *
 * Per-thread state lives in task storage, so an untracked thread costs one storage lookup per
 * hook. Stacks are taken only once a wait is already long (half the threshold), as EfficiOS'
 * latency_tracker did: the data of such an outlier-in-the-making accumulates in a hash map keyed
 * by tid and goes to the ring buffer in one copy when the syscall or the sleep ends.
 *
 * One object, one skeleton, built from the parts in bpf/latsnap/, one concern each, included
 * below in the order they depend on each other. Kernel differences: core_fixes.bpf.h. The
 * optional programs (requests.bpf.h, go.bpf.h) are loaded only when asked (tracker.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "include/latsnap.h"
#include "include/futex.h"
#include "bpf/kernel-defs.h"
#include "bpf/core_fixes.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The parts, by concern; each uses only what the ones before it define. */
#include "bpf/latsnap/state.bpf.h"
#include "bpf/latsnap/tracking.bpf.h"
#include "bpf/latsnap/ctxstream.bpf.h"
#include "bpf/latsnap/outlier.bpf.h"
#include "bpf/latsnap/signal.bpf.h"
#include "bpf/latsnap/work.bpf.h"
#include "bpf/latsnap/submit.bpf.h"
#include "bpf/latsnap/syscalls.bpf.h"
#include "bpf/latsnap/switch.bpf.h"
#include "bpf/latsnap/wakeup.bpf.h"
#include "bpf/latsnap/process.bpf.h"
#include "bpf/latsnap/blockio.bpf.h"
#include "bpf/latsnap/stalls.bpf.h"
#include "bpf/latsnap/requests.bpf.h"
#include "bpf/latsnap/go.bpf.h"
