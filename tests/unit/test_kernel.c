// SPDX-License-Identifier: GPL-2.0
/*
 * What latsnap needs of the kernel (tracker/kernel.c): the table of features, the first release
 * that has all a program needs, which missing feature a check names and how it says so, from
 * probe results made up here (no older kernel is at hand); and, as root, the probes themselves.
 */
#include <errno.h>
#include <linux/bpf.h>

#include "tracker/kernel.h"
#include "tap.h"

/* The made-up kernel has every feature up to this release... */
static unsigned int fake_release;
/* ...but the probe of those of this one cannot tell (0: none). */
static unsigned int fake_unknown;

static int fake_probe(const struct kernel_feature *f)
{
	if (f->since == fake_unknown) {
		return -EPERM;
	}
	return f->since <= fake_release;
}

/* What a check names on the made-up kernel @release for @users, "" for nothing. */
static const char *missing(unsigned int release, unsigned int unknown, unsigned int users)
{
	const struct kernel_feature *f;

	fake_release = release;
	fake_unknown = unknown;
	f = kernel_first_missing(users, fake_probe);
	return f ? f->what : "";
}

static void check_table(void)
{
	unsigned int prev = 0;
	bool sorted = true, whole = true;
	size_t i;

	ok(kernel_nr_features > 0, "the table has features");
	for (i = 0; i < kernel_nr_features; i++) {
		const struct kernel_feature *f = &kernel_features[i];

		if (f->since < prev) {
			sorted = false;
		}
		prev = f->since;
		if (!f->what || !*f->what || !f->users || f->since < KERNEL_LINUX(5, 0) ||
		    (f->probe == KERNEL_PROBE_HOOK ? !f->hook : f->arg <= 0)) {
			diag("feature %zu (%s) is incomplete", i, f->what ? f->what : "?");
			whole = false;
		}
	}
	ok(sorted, "oldest first, so that a check names the oldest missing");
	ok(whole, "each feature has a name, a release, its users and what to probe");
}

static void check_min_version(void)
{
	is_int(kernel_min_version(KERNEL_FOR_RECORD | KERNEL_FOR_PRELOAD), KERNEL_LINUX(5, 9),
	       "record needs 5.9 (bpf_get_task_stack()): the rest has a fallback");
	is_int(kernel_min_version(KERNEL_FOR_RECORD), KERNEL_LINUX(5, 9),
	       "the preload library's signals need nothing more");
	is_int(kernel_min_version(KERNEL_FOR_TOP), KERNEL_LINUX(5, 9),
	       "top needs 5.9 (bpf_get_task_stack())");
	is_int(kernel_min_version(0), 0, "nothing needs nothing");
}

static void check_first_missing(void)
{
	const unsigned int rec = KERNEL_FOR_RECORD | KERNEL_FOR_PRELOAD;

	is_str(missing(KERNEL_LINUX(6, 18), 0, rec), "", "6.18 has what record needs");
	is_str(missing(KERNEL_LINUX(6, 1), 0, rec), "",
	       "6.1 too (fexit stands in for sched_exit_tp)");
	is_str(missing(KERNEL_LINUX(5, 10), 0, rec), "",
	       "5.10 too (task storage, current's BTF and bpf_task_pt_regs() have stand-ins)");
	is_str(missing(KERNEL_LINUX(5, 10), 0, KERNEL_FOR_TOP), "", "5.10 runs top");
	is_str(missing(KERNEL_LINUX(5, 4), 0, rec), "BPF ring buffers",
	       "5.4: the oldest missing is named");
	is_str(missing(KERNEL_LINUX(5, 8), 0, rec), "bpf_get_task_stack()",
	       "5.8: the task stack helper");
	is_str(missing(KERNEL_LINUX(5, 4), 0, KERNEL_FOR_TOP), "bpf_get_task_stack()",
	       "5.4: top, which has no ring buffer, misses the task stack helper first");
	is_str(missing(KERNEL_LINUX(5, 4), KERNEL_LINUX(5, 8), rec), "bpf_get_task_stack()",
	       "a probe that cannot tell does not blame its feature");
}

static void check_message(void)
{
	const struct kernel_feature *f;
	char buf[256];
	int len;

	fake_release = KERNEL_LINUX(5, 4);
	fake_unknown = 0;
	f = kernel_first_missing(KERNEL_FOR_RECORD | KERNEL_FOR_PRELOAD, fake_probe);
	if (!ok(f != NULL, "5.4 lacks something")) {
		return;
	}
	len = kernel_missing_message(buf, sizeof(buf), "record", "5.4.0-150-generic", f,
				     KERNEL_FOR_RECORD | KERNEL_FOR_PRELOAD);
	is_str(buf,
	       "record: this kernel (5.4.0-150-generic) lacks BPF ring buffers (Linux 5.8): "
	       "latsnap record needs Linux 5.9 or later",
	       "the missing feature, the release that brought it, and the one needed");
	is_int(len, (int)strlen(buf), "its length");

	fake_release = KERNEL_LINUX(5, 8);
	f = kernel_first_missing(KERNEL_FOR_TOP, fake_probe);
	if (!ok(f != NULL, "5.8 lacks something top needs")) {
		return;
	}
	len = kernel_missing_message(buf, 24, "top", "5.8.0", f, KERNEL_FOR_TOP);
	is_str(buf, "top: this kernel (5.8.0", "cut short to the buffer");
	ok(len > 24, "and says how long the whole line is (%d)", len);
	kernel_missing_message(buf, sizeof(buf), "top", "5.8.0", f, KERNEL_FOR_TOP);
	is_str(buf,
	       "top: this kernel (5.8.0) lacks bpf_get_task_stack() (Linux 5.9): latsnap top needs "
	       "Linux 5.9 or later",
	       "top's line");
}

/* The probes of this machine's kernel, which runs latsnap: as root only. */
static void check_real_probes(void)
{
	const struct kernel_feature array = { .what = "arrays",
					      .probe = KERNEL_PROBE_MAP,
					      .arg = BPF_MAP_TYPE_ARRAY };
	const struct kernel_feature helper = { .what = "bpf_ktime_get_ns()",
					       .probe = KERNEL_PROBE_HELPER,
					       .arg = BPF_FUNC_ktime_get_ns };
	const struct kernel_feature helper_none = { .what = "no such helper",
						    .probe = KERNEL_PROBE_HELPER,
						    .arg = 100000 };
	const struct kernel_feature hook = { .what = "sched_switch",
					     .probe = KERNEL_PROBE_HOOK,
					     .hook = "sched_switch" };
	const struct kernel_feature exit_tp = { .what = "sched_exit_tp",
						.probe = KERNEL_PROBE_HOOK,
						.hook = "sched_exit_tp" };
	const struct kernel_feature hook_none = { .what = "no such tracepoint",
						  .probe = KERNEL_PROBE_HOOK,
						  .hook = "latsnap_no_such_tracepoint" };

	if (geteuid() != 0) {
		skip("the probes load BPF programs: root only");
		return;
	}
	is_int(kernel_probe(&array), 1, "arrays are there");
	is_int(kernel_probe(&helper), 1, "bpf_ktime_get_ns() is there");
	is_int(kernel_probe(&helper_none), 0, "helper 100000 is not");
	is_int(kernel_probe(&hook), 1, "sched_switch is there");
	is_int(kernel_probe(&hook_none), 0, "latsnap_no_such_tracepoint is not");
	is_int(kernel_check("top", KERNEL_FOR_TOP), 0, "this kernel runs top");

	/* What picks the programs and stand-ins: true of every kernel latsnap runs on. */
	ok(kernel_tp_args("sched_switch") == 3 || kernel_tp_args("sched_switch") == 4,
	   "sched_switch passes 3 arguments (before 5.18) or 4 (%d)",
	   kernel_tp_args("sched_switch"));
	ok(kernel_tp_args("block_rq_issue") == 1 || kernel_tp_args("block_rq_issue") == 2,
	   "block_rq_issue passes 1 or 2 (before 5.11) (%d)", kernel_tp_args("block_rq_issue"));
	is_int(kernel_tp_args("latsnap_no_such_tracepoint"), -ENOENT,
	       "no such tracepoint: -ENOENT");
	is_int(kernel_switch_end() == KERNEL_SWITCH_END_TP, kernel_probe(&exit_tp) == 1,
	       "the end of a switch is sched_exit_tp exactly where the kernel has it");
	ok(kernel_tp_args("sched_switch") == 3 || kernel_has_task_storage(),
	   "a kernel whose sched_switch has prev_state (5.18) has task storage (5.12)");
#ifdef __x86_64__
	/* Every x86 layout has a per-CPU preempt count: __preempt_count or pcpu_hot's. */
	ok(kernel_preempt_from_rq() != 0,
	   "x86: the preempt count's distance from the runqueue (%lld)", kernel_preempt_from_rq());
#endif
}

int main(void)
{
	check_table();
	check_min_version();
	check_first_missing();
	check_message();
	check_real_probes();
	return tap_done();
}
