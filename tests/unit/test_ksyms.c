// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracker/ksyms.h"
#include "tap.h"

/*
 * Deliberately out of order (module symbols come first), with aliases at one address, data
 * symbols that must be ignored, a module, and lines that are not symbols at all.
 */
static const char synthetic[] = "ffffffffc0a01000 t mod_helper\t[e1000]\n"
				"ffffffffc0a01080 T mod_entry\t[e1000]\n"
				"ffffffffc0b00000 t bpf_prog_6deef7357e7b4530_handle_exit\t[bpf]\n"
				"ffffffffc0b00800 t bpf_trampoline_6442521436\t[bpf]\n"
				"ffffffffc0b01000 t some_jited_thing\t[bpf]\n"
				"ffffffffc0c00000 T sym_of_fs\t[ext4]\n"
				"ffffffff81000000 T _text\n"
				"ffffffff81000000 T _stext\n"
				"ffffffff81000000 T startup_64\n"
				"ffffffff81000100 t local_func\n"
				"ffffffff81000200 D some_data\n"
				"ffffffff81000300 W weak_func\n"
				"ffffffff81000300 T strong_alias\n"
				"ffffffff81000400 w weak_local\n"
				"ffffffff81000500 T __schedule_impl\n"
				"ffffffff81000500 T schedule\n"
				"ffffffff81000600 t same_len_b\n"
				"ffffffff81000600 t same_len_a\n"
				"ffffffff81000700 t local_at_700\n"
				"ffffffff81000700 W weak_at_700\n"
				"ffffffff81000800 T short\n"
				"ffffffff81000800 T longer_one\n"
				"ffffffff81000800 T mid_one\n"
				"ffffffff81001000 R rodata_sym\n"
				"ffffffff81002000 B bss_sym\n"
				"ffffffff81003000 A abs_sym\n"
				"this is not a symbol line\n"
				"ffffffff8100zz00 T bad_hex\n"
				"ffffffff81004000 TT two_letter_type\n"
				"ffffffff81004000 T\n"
				"\n"
				"ffffffff81005000 T last_func"; /* no final newline */

static void expect(const struct ksyms *ks, uint64_t addr, const char *name, const char *module)
{
	const struct ksym *sym = ksyms_lookup(ks, addr);

	if (!name) {
		ok(!sym, "0x%" PRIx64 " is below every symbol", addr);
		return;
	}
	if (!ok(sym, "0x%" PRIx64 " resolves", addr)) {
		return;
	}
	is_str(sym->name, name, "0x%" PRIx64 " is in %s", addr, name);
	is_str(sym->module, module, "0x%" PRIx64 " module is %s", addr,
	       module ? module : "vmlinux");
	ok(sym->addr <= addr, "0x%" PRIx64 " symbol address is not above it", addr);
}

static void synthetic_tests(void)
{
	char *path = tap_write_temp(synthetic, strlen(synthetic));
	struct ksyms *ks = ksyms_load(path);
	const struct ksym *a, *b;

	if (!ok(ks, "synthetic kallsyms loads")) {
		diag("errno: %s", strerror(errno));
		goto out;
	}
	/* 15 text addresses (9 vmlinux, 6 module); data, bss, absolute and junk lines go. */
	is_int(ksyms_count(ks), 15, "one entry per text address");

	expect(ks, 0, NULL, NULL);
	expect(ks, 0xffffffff80ffffffULL, NULL, NULL);
	expect(ks, 0xffffffff81000000ULL, "startup_64", NULL);
	expect(ks, 0xffffffff810000ffULL, "startup_64", NULL);
	expect(ks, 0xffffffff81000100ULL, "local_func", NULL);
	/* Data symbols do not end a function: 0x200 is still in local_func. */
	expect(ks, 0xffffffff81000250ULL, "local_func", NULL);
	expect(ks, 0xffffffff81000300ULL, "strong_alias", NULL);
	expect(ks, 0xffffffff81000401ULL, "weak_local", NULL);
	expect(ks, 0xffffffff81000500ULL, "schedule", NULL);
	expect(ks, 0xffffffff81000550ULL, "schedule", NULL);
	expect(ks, 0xffffffff81000600ULL, "same_len_a", NULL);
	expect(ks, 0xffffffff81000700ULL, "local_at_700", NULL);
	expect(ks, 0xffffffff810007ffULL, "local_at_700", NULL);
	expect(ks, 0xffffffff81000800ULL, "longer_one", NULL);
	expect(ks, 0xffffffff81004000ULL, "longer_one", NULL);
	expect(ks, 0xffffffff81005000ULL, "last_func", NULL);
	expect(ks, 0xffffffffbfffffffULL, "last_func", NULL);
	expect(ks, 0xffffffffc0a01000ULL, "mod_helper", "e1000");
	expect(ks, 0xffffffffc0a0107fULL, "mod_helper", "e1000");
	expect(ks, 0xffffffffc0a01080ULL, "mod_entry", "e1000");
	expect(ks, 0xffffffffc0b00010ULL, "bpf_prog_6deef7357e7b4530_handle_exit", "bpf");
	expect(ks, 0xffffffffc0b01000ULL, "some_jited_thing", "bpf");
	expect(ks, 0xffffffffc0c00000ULL, "sym_of_fs", "ext4");
	expect(ks, UINT64_MAX, "sym_of_fs", "ext4");

	/* Module names are shared, not copied per symbol. */
	a = ksyms_lookup(ks, 0xffffffffc0a01000ULL);
	b = ksyms_lookup(ks, 0xffffffffc0a01080ULL);
	ok(a && b && a->module == b->module, "symbols of one module share its name string");

	/* Glue by module even when the name says nothing. */
	ok(ksyms_is_glue(ksyms_lookup(ks, 0xffffffffc0b01000ULL)),
	   "anything in module bpf is glue");
	ok(ksyms_is_glue(ksyms_lookup(ks, 0xffffffffc0b00800ULL)),
	   "a trampoline is glue");
	ok(!ksyms_is_glue(ksyms_lookup(ks, 0xffffffff81000500ULL)),
	   "schedule is not glue");
	ok(!ksyms_is_glue(ksyms_lookup(ks, 0xffffffffc0a01000ULL)),
	   "a symbol of another module is not glue");
	ok(!ksyms_is_glue(NULL), "a NULL symbol is not glue");

out:
	ksyms_free(ks);
	tap_remove_temp(path);
}

static void load_errors(void)
{
	/* Files ksyms_load() must refuse, and the errno it must say why with. */
	static const struct {
		const char *text;
		int err;
		const char *name;
	} refused[] = {
		/* What an unprivileged reader, or one under kptr_restrict, sees. */
		{ "0000000000000000 T _text\n0000000000000000 T schedule\n"
		  "0000000000000000 t foo\t[mod]\n0000000000000000 D data\n",
		  EPERM, "all-zero addresses: NULL and EPERM" },
		{ "0000000000000000 D only_data\n", EPERM,
		  "all-zero data symbols only: still EPERM" },
		{ "not kallsyms at all\n", ENODATA,
		  "a file without symbol lines: NULL and ENODATA" },
		{ "", ENODATA, "empty file: NULL and ENODATA" },
	};
	static const char data_only[] = "ffffffff81000000 D data\n";
	struct ksyms *ks;
	char *path;
	size_t i;

	errno = 0;
	ks = ksyms_load("/nonexistent/kallsyms");
	ok(!ks && errno == ENOENT, "missing file: NULL and ENOENT");

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		path = tap_write_temp(refused[i].text, strlen(refused[i].text));
		errno = 0;
		ks = ksyms_load(path);
		ok(!ks && errno == refused[i].err, "%s", refused[i].name);
		ksyms_free(ks);
		tap_remove_temp(path);
	}

	/* Only data symbols but real addresses: loads, with nothing to find. */
	path = tap_write_temp(data_only, strlen(data_only));
	ks = ksyms_load(path);
	if (ok(ks, "data-only file loads")) {
		is_int(ksyms_count(ks), 0, "with no text symbols");
		ok(!ksyms_lookup(ks, 0xffffffff81000000ULL), "and every lookup fails");
	} else {
		skip("no table");
		skip("no table");
	}
	ksyms_free(ks);
	tap_remove_temp(path);

	ok(!ksyms_lookup(NULL, 1), "lookup in a NULL table gives NULL");
	is_int(ksyms_count(NULL), 0, "a NULL table has no symbols");
	ksyms_free(NULL);
	ok(1, "ksyms_free(NULL) is harmless");
}

static void glue_tests(void)
{
	static const char *const glue[] = {
		"bpf_prog_6deef7357e7b4530_handle_exit",
		"bpf_prog_6deef7357e7b4530",
		"bpf_prog_00000000000000ff_F",
		"bpf_trampoline_6442521436",
		"bpf_trace_run2",
		"bpf_trace_run12",
		"__bpf_trace_sched_switch",
		"__bpf_trace_run",
		"__traceiter_sched_switch",
		"bpf_get_stack",
		"bpf_get_stackid",
		"bpf_get_stack_raw_tp",
		"bpf_get_stackid_pe",
		"bpf_get_task_stack",
		"__bpf_get_stack",
		"__bpf_get_stackid",
		"bpf_dispatcher_xdp_func",
		"perf_trace_sched_switch",
		"perf_trace_run_bpf_submit",
		"trace_call_bpf",
		"__bpf_prog_enter",
		"__bpf_prog_enter_recur",
		"__bpf_prog_enter_sleepable",
		"__bpf_prog_exit",
		"__bpf_prog_exit_recur",
	};
	static const char *const not_glue[] = {
		"schedule",
		"__schedule",
		"do_syscall_64",
		"entry_SYSCALL_64_after_hwframe",
		"futex_wait",
		"bpf_prog_realloc",
		"bpf_prog_realloc.cold",
		"bpf_prog_6deef7357e7b45",
		"bpf_prog_6deef7357e7b453_x",
		"bpf_trampoline_link_prog",
		"bpf_trampoline_",
		"trace_call_bpf_x",
		"xtrace_call_bpf",
		"bpf_trace_printk_x",
		"__bpf_trac",
		"my_bpf_get_stack",
		"__traceiter",
		"",
		"bpf_",
		"perf_event_open",
		"bpf_prog_load",
	};
	size_t i;

	for (i = 0; i < sizeof(glue) / sizeof(glue[0]); i++) {
		ok(frames_is_tracing_glue(glue[i], NULL), "%s is tracing glue", glue[i]);
	}
	for (i = 0; i < sizeof(not_glue) / sizeof(not_glue[0]); i++) {
		ok(!frames_is_tracing_glue(not_glue[i], NULL), "'%s' is not tracing glue", not_glue[i]);
	}
	ok(!frames_is_tracing_glue(NULL, NULL), "NULL is not tracing glue");
}

/* Address of @name as the file lists it, or 0. */
static uint64_t find_in_file(const char *path, const char *want)
{
	char line[1024], type, name[512];
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) == 3 && !strcmp(name, want) &&
		    (type == 'T' || type == 't')) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * An unprivileged reader of the real /proc/kallsyms sees only zero addresses; the load must say
 * EPERM rather than return a table that maps everything to nothing. As root, check it as uid
 * 65534 in a child, which reports through a pipe (valgrind may replace its exit status).
 */
/* 'y' EPERM as expected, 'l' loaded anyway, 'e' another errno. */
static char load_kallsyms(void *arg)
{
	struct ksyms *ks;
	char verdict;

	(void)arg;
	errno = 0;
	ks = ksyms_load(NULL);
	verdict = ks ? 'l' : errno == EPERM ? 'y' : 'e';
	ksyms_free(ks);
	return verdict;
}

static void real_kallsyms_unprivileged(void)
{
	struct ksyms *ks;
	char verdict;

	if (geteuid() != 0) {
		errno = 0;
		ks = ksyms_load(NULL);
		if (ks) {
			skip("kallsyms shows addresses to this user (CAP_SYSLOG?)");
			ksyms_free(ks);
		} else {
			is_int(errno, EPERM, "unprivileged /proc/kallsyms load fails with EPERM");
		}
		return;
	}
	verdict = tap_as_nobody(load_kallsyms, NULL);
	if (verdict == 'u') {
		skip("cannot drop to uid 65534");
	} else if (verdict == 'l') {
		skip("kallsyms shows addresses to uid 65534");
	} else {
		ok(verdict == 'y', "as uid 65534, /proc/kallsyms fails with EPERM");
	}
}

static void real_kallsyms(void)
{
	struct timespec t0, t1;
	const struct ksym *sym;
	struct ksyms *ks;
	uint64_t addr;
	double ms;

	if (geteuid() != 0) {
		skip("not root: /proc/kallsyms shows no addresses");
		return;
	}
	addr = find_in_file("/proc/kallsyms", "schedule");
	if (!addr) {
		skip("kernel addresses hidden (kptr_restrict?) or no schedule symbol");
		return;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ks = ksyms_load(NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!ok(ks, "/proc/kallsyms loads")) {
		diag("errno: %s", strerror(errno));
		return;
	}
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	diag("%zu text symbols in %.1f ms", ksyms_count(ks), ms);
	ok(ksyms_count(ks) > 1000, "it has many text symbols");
	ok(ms < 2000, "loading takes well under two seconds");

	sym = ksyms_lookup(ks, addr);
	ok(sym && !strcmp(sym->name, "schedule"), "schedule's address maps back to schedule");
	ok(sym && !sym->module, "schedule is in vmlinux");
	sym = ksyms_lookup(ks, addr + 4);
	ok(sym && !strcmp(sym->name, "schedule"), "an address inside schedule maps to schedule");
	ok(!ksyms_lookup(ks, 0x1000), "a user-space address is below every kernel symbol");

	addr = find_in_file("/proc/kallsyms", "trace_call_bpf");
	if (addr) {
		ok(ksyms_is_glue(ksyms_lookup(ks, addr)),
		   "real trace_call_bpf is glue");
	} else {
		skip("no trace_call_bpf in this kernel");
	}
	ksyms_free(ks);
}

int main(void)
{
	synthetic_tests();
	load_errors();
	glue_tests();
	real_kallsyms();
	real_kallsyms_unprivileged();
	return tap_done();
}
