// SPDX-License-Identifier: GPL-2.0
/*
 * kernel.c - the kernel features latsnap's BPF programs use, each with the release that brought
 * it, probed with libbpf before a program is loaded: distributions backport BPF features, so the
 * kernel's version number alone would refuse kernels that work.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lib/util.h"
#include "tracker/kernel.h"

/*
 * What the programs use that a kernel may lack and latsnap cannot do without, oldest first: the
 * first one missing is the one named. Everything newer has a stand-in, picked at start by a
 * probe (or, inside the programs, by a CO-RE check of the kernel's own enums and types: see
 * bpf/core_fixes.bpf.h):
 *   - task storage for tracing programs (5.12): a hash map by thread id
 *     (kernel_has_task_storage(), kernel_task_storage_standin());
 *   - bpf_get_current_task_btf() (5.11) and bpf_task_pt_regs() (5.15): reads through
 *     bpf_probe_read_kernel(), the saved registers found by hand (x86-64);
 *   - the sched_exit_tp tracepoint (6.15), where a thread switched in is signalled for the
 *     preload library: fexit on schedule() (kernel_switch_end());
 *   - bpf_send_signal_task() (6.13): a weak kfunc, the signal owed to the end of the switch;
 *   - sched_switch without prev_state (before 5.18), block_rq_issue with its queue (before 5.11),
 *     sched_process_exit without group_dead (6.12 and older; 6.18 has it): alternative programs or reads
 *     (kernel_tp_args());
 *   - BPF atomics that return the old value (5.12): none used (ctx_take()).
 * BPF cookies (5.15), which tell --request's probes apart, have none: --request says so
 * (kernel_has_attach_cookie()). Not probed, because every kernel with bpf_get_task_stack() has
 * them: BTF-typed tracepoint programs (tp_btf), fentry/fexit, mmapable arrays,
 * bpf_probe_read_kernel/user(), bpf_send_signal_thread() and bpf_jiffies64() (5.5), task
 * iterators (5.8).
 */
const struct kernel_feature kernel_features[] = {
	{ .what = "BPF ring buffers",
	  .since = KERNEL_LINUX(5, 8),
	  .users = KERNEL_FOR_RECORD,
	  .probe = KERNEL_PROBE_MAP,
	  .arg = BPF_MAP_TYPE_RINGBUF },
	{ .what = "bpf_get_task_stack()",
	  .since = KERNEL_LINUX(5, 9),
	  .users = KERNEL_FOR_RECORD | KERNEL_FOR_TOP,
	  .probe = KERNEL_PROBE_HELPER,
	  .arg = BPF_FUNC_get_task_stack },
};

const size_t kernel_nr_features = sizeof(kernel_features) / sizeof(kernel_features[0]);

/**
 * kernel_min_version - the first release with every feature @users need, as KERNEL_LINUX().
 */
unsigned int kernel_min_version(unsigned int users)
{
	unsigned int min = 0;
	size_t i;

	for (i = 0; i < kernel_nr_features; i++) {
		if ((kernel_features[i].users & users) && kernel_features[i].since > min) {
			min = kernel_features[i].since;
		}
	}
	return min;
}

/**
 * kernel_first_missing - the oldest feature @users need that @probe says the kernel lacks.
 *
 * A probe that cannot tell (a negative errno) counts as present: loading will say what is wrong.
 *
 * Return: the feature, or NULL when none is missing.
 */
const struct kernel_feature *kernel_first_missing(unsigned int users, kernel_probe_fn probe)
{
	size_t i;

	for (i = 0; i < kernel_nr_features; i++) {
		if ((kernel_features[i].users & users) && probe(&kernel_features[i]) == 0) {
			return &kernel_features[i];
		}
	}
	return NULL;
}

/**
 * kernel_missing_message - the one line that says this kernel (@release) lacks @f, for @who
 * ("record", "top") with @users; what the preload library alone needs says how to do without.
 *
 * Return: what snprintf() returns.
 */
int kernel_missing_message(char *buf, size_t size, const char *who, const char *release,
			   const struct kernel_feature *f, unsigned int users)
{
	unsigned int need = kernel_min_version(users);
	unsigned int without = kernel_min_version(users & ~KERNEL_FOR_PRELOAD);
	char alt[80] = "";

	if (!(f->users & users & ~KERNEL_FOR_PRELOAD) && without < need) {
		snprintf(alt, sizeof(alt), ", or %u.%u with --no-preload and a COMMAND",
			 KERNEL_MAJOR(without), KERNEL_MINOR(without));
	}
	return snprintf(buf, size,
			"%s: this kernel (%s) lacks %s (Linux %u.%u): latsnap %s needs Linux %u.%u "
			"or later%s",
			who, release, f->what, KERNEL_MAJOR(f->since), KERNEL_MINOR(f->since), who,
			KERNEL_MAJOR(need), KERNEL_MINOR(need), alt);
}

/*
 * Whether a program can attach to the tracepoint @name, without attaching one: the program reads
 * the 12th argument, which no tracepoint probed here has. The kernel looks the tracepoint up
 * first (ENOENT when there is none), then refuses a program that reads beyond its arguments
 * (EINVAL) before registering anything, so that no tracepoint is enabled, even for a moment.
 */
static int probe_hook(const char *name)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_0,
		  .src_reg = BPF_REG_1,
		  .off = 11 * sizeof(__u64) },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog, link, ret;

	prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
	if (prog < 0) {
		return -errno;
	}
	link = bpf_raw_tracepoint_open(name, prog);
	if (link >= 0) {
		ret = 1;
		close(link);
	} else {
		ret = errno == EINVAL ? 1 : errno == ENOENT ? 0 : -errno;
	}
	close(prog);
	return ret;
}

/*
 * Whether an fexit program attaches to the kernel function @name: BTF that has it, and ftrace's
 * direct calls, which some kernels are built without. The empty program is attached, then
 * detached at once: the only way to know, since loading succeeds where attaching fails.
 */
static int probe_fexit(const char *name)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT);
	int prog, link, id, ret;

	id = libbpf_find_vmlinux_btf_id(name, BPF_TRACE_FEXIT);
	if (id < 0) {
		return id == -ENOENT || id == -ESRCH ? 0 : id;
	}
	opts.attach_btf_id = (__u32)id;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog < 0) {
		return errno == EPERM ? -EPERM : 0;
	}
	link = bpf_link_create(prog, 0, BPF_TRACE_FEXIT, NULL);
	ret = link >= 0;
	if (link >= 0) {
		close(link);
	} else if (errno == EPERM) {
		ret = -EPERM;
	}
	close(prog);
	return ret;
}

/**
 * kernel_switch_end - the hook from which a thread switched in can be signalled in its own
 * context, before it runs user code: sched_exit_tp at the end of __schedule() (Linux 6.15), else
 * the return of schedule() through fexit (ftrace's direct calls: 5.5, where the kernel was built
 * with them), else none.
 */
enum kernel_switch_end kernel_switch_end(void)
{
	const struct kernel_feature tp = { .what = "the sched_exit_tp tracepoint",
					   .probe = KERNEL_PROBE_HOOK,
					   .hook = "sched_exit_tp" };

	if (kernel_probe(&tp) != 0) {
		return KERNEL_SWITCH_END_TP;
	}
	if (probe_fexit("schedule") > 0) {
		return KERNEL_SWITCH_END_FEXIT;
	}
	return KERNEL_SWITCH_END_NONE;
}

/**
 * kernel_has_task_storage - whether BPF task storage is there for tracing programs (Linux 5.12);
 * a probe that cannot tell says yes, and loading says why.
 */
bool kernel_has_task_storage(void)
{
	/* 5.11 has the map type, for BPF LSM programs only: tracing programs have it from 5.12. */
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_task_storage_get,
				       NULL) != 0;
}

/**
 * kernel_has_attach_cookie - whether BPF cookies (bpf_get_attach_cookie(), Linux 5.15) are
 * there, which tell one request probe from another.
 */
bool kernel_has_attach_cookie(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) != 0;
}

/**
 * kernel_task_storage_standin - make @map, a task storage map, the hash map keyed by thread id
 * that bpf/core_fixes.bpf.h's task_storage_get() uses where the kernel has no task storage.
 *
 * An LRU map: preallocated, as the perf_event program that reads it needs, and bounded. It holds
 * an entry for each thread that ran while tracked or of interest, dropped at its exit; pid_max
 * bounds how many there can be (clamped to 4,096..65,536), and the least recently used goes if a
 * machine has more.
 *
 * Return: 0 or a negative errno from libbpf.
 */
int kernel_task_storage_standin(struct bpf_map *map)
{
	unsigned long pid_max = 32768;
	FILE *f;
	int err;

	f = fopen("/proc/sys/kernel/pid_max", "r");
	if (f) {
		if (fscanf(f, "%lu", &pid_max) != 1) {
			pid_max = 32768;
		}
		fclose(f);
	}
	pid_max = pid_max < 4096 ? 4096 : pid_max > 65536 ? 65536 : pid_max;
	err = bpf_map__set_type(map, BPF_MAP_TYPE_LRU_HASH);
	if (!err) {
		err = bpf_map__set_map_flags(map, 0);
	}
	if (!err) {
		err = bpf_map__set_key_size(map, sizeof(__u32));
	}
	if (!err) {
		err = bpf_map__set_max_entries(map, (__u32)pid_max);
	}
	return err;
}

/**
 * kernel_tp_args - how many arguments the kernel's tracepoint @name passes to a tp_btf program
 * (its btf_trace_ typedef's, less the first, which is the tracepoint's data); -ENOENT when BTF
 * does not have it.
 */
int kernel_tp_args(const char *name)
{
	char tname[128];
	const struct btf_type *t;
	struct btf *btf;
	int id, ret = -ENOENT;

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		return -errno;
	}
	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	id = btf__find_by_name_kind(btf, tname, BTF_KIND_TYPEDEF);
	if (id > 0) {
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
		if (t && btf_is_ptr(t)) {
			t = btf__type_by_id(btf, t->type);
		}
		if (t && btf_is_func_proto(t)) {
			ret = btf_vlen(t) - 1;
		}
	}
	btf__free(btf);
	return ret;
}

/* The offset of the per-CPU variable @name in vmlinux's per-CPU area; -1 when BTF has none. */
static long long percpu_offset(const struct btf *btf, const char *name)
{
	const struct btf_var_secinfo *v;
	const struct btf_type *t;
	int id, ds, i;

	id = btf__find_by_name_kind(btf, name, BTF_KIND_VAR);
	ds = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	if (id <= 0 || ds <= 0) {
		return -1;
	}
	t = btf__type_by_id(btf, ds);
	v = btf_var_secinfos(t);
	for (i = 0; i < btf_vlen(t); i++, v++) {
		if (v->type == (__u32)id) {
			return v->offset;
		}
	}
	return -1;
}

/* The byte offset of member @member of struct @type; -1 when BTF has none. */
static long long member_offset(const struct btf *btf, const char *type, const char *member)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id, i;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id <= 0) {
		return -1;
	}
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member)) {
			return btf_member_bit_offset(t, i) / 8;
		}
	}
	return -1;
}

/**
 * kernel_preempt_from_rq - where this CPU's preempt count lies from its runqueue in the per-CPU
 * area (cpu_in_hardirq() in bpf/core_fixes.bpf.h), from vmlinux's BTF: x86's __preempt_count
 * (before 6.2, since 6.15), or pcpu_hot's preempt_count (6.2 to 6.14).
 *
 * Return: the distance in bytes; 0 when BTF has none of them (another architecture).
 */
long long kernel_preempt_from_rq(void)
{
	long long rq, pc, hot;
	struct btf *btf;

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		return 0;
	}
	rq = percpu_offset(btf, "runqueues");
	pc = percpu_offset(btf, "__preempt_count");
	if (pc < 0) {
		hot = percpu_offset(btf, "pcpu_hot");
		pc = member_offset(btf, "pcpu_hot", "preempt_count");
		pc = hot >= 0 && pc >= 0 ? hot + pc : -1;
	}
	btf__free(btf);
	return rq >= 0 && pc >= 0 && pc != rq ? pc - rq : 0;
}

/**
 * kernel_probe - whether the running kernel has @f: 1 if so, 0 if not, a negative errno when it
 * cannot tell (without privilege, say).
 *
 * Helpers are probed in raw tracepoint programs, which have the tracing helpers of tp_btf ones:
 * libbpf cannot probe BPF_PROG_TYPE_TRACING (-EOPNOTSUPP).
 */
int kernel_probe(const struct kernel_feature *f)
{
	switch (f->probe) {
	case KERNEL_PROBE_MAP:
		return libbpf_probe_bpf_map_type(f->arg, NULL);
	case KERNEL_PROBE_HELPER:
		return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, f->arg, NULL);
	case KERNEL_PROBE_HOOK:
		return probe_hook(f->hook);
	}
	return -EINVAL;
}

/**
 * kernel_check - probe what @users need of the running kernel, before a program is loaded.
 * @who: the command, for the message ("record", "top")
 *
 * Return: 0 when the kernel has everything, or when the probes cannot tell (loading then says
 * why); -ENOTSUP after a one-line error that names the first feature missing.
 */
int kernel_check(const char *who, unsigned int users)
{
	const struct kernel_feature *f;
	struct utsname uts;
	char msg[256];

	/*
	 * Every kernel with BPF has arrays: without privilege, or with BPF turned off, this fails
	 * too, and every other probe would blame a feature the kernel may well have.
	 */
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARRAY, NULL) != 1) {
		return 0;
	}
	f = kernel_first_missing(users, kernel_probe);
	if (!f) {
		return 0;
	}
	if (uname(&uts)) {
		snprintf(uts.release, sizeof(uts.release), "?");
	}
	kernel_missing_message(msg, sizeof(msg), who, uts.release, f, users);
	ls_err("%s", msg);
	return -ENOTSUP;
}
