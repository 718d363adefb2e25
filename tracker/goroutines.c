// SPDX-License-Identifier: GPL-2.0
/*
 * goroutines.c - follow the goroutine waits of tracked Go processes (see goroutines.h).
 *
 * A binary is looked at once (by device and inode): its symbol table for runtime.gopark and
 * runtime.ready (a Go binary), its DWARF (libdw) for the producer's Go release and for the offset
 * of runtime.g's goid. The wait reasons are the release's own: Go 1.19's waitReasonStrings
 * (runtime/runtime2.go; Debian 12's golang-go), the only table checked against its source here;
 * another release is not followed rather than named wrongly.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "include/latsnap.h"
#include "tracker/goroutines.h"
#include "lib/outlier.h"
#include "lib/util.h"

/* Go 1.19, runtime/runtime2.go: waitReasonStrings, by waitReason. */
static const char *const reasons_go119[] = {
	"",
	"GC assist marking",
	"IO wait",
	"chan receive (nil chan)",
	"chan send (nil chan)",
	"dumping heap",
	"garbage collection",
	"garbage collection scan",
	"panicwait",
	"select",
	"select (no cases)",
	"GC assist wait",
	"GC sweep wait",
	"GC scavenge wait",
	"chan receive",
	"chan send",
	"finalizer wait",
	"force gc (idle)",
	"semacquire",
	"sleep",
	"sync.Cond.Wait",
	"timer goroutine (idle)",
	"trace reader (blocked)",
	"wait for GC cycle",
	"GC worker (idle)",
	"preempted",
	"debug call",
};

struct go_release {
	int minor; /* Go 1.minor */
	const char *const *reasons;
	size_t nr_reasons;
};

static const struct go_release releases[] = {
	{ 19, reasons_go119, sizeof(reasons_go119) / sizeof(reasons_go119[0]) },
};

enum go_state {
	GO_NOT, /* not a Go binary (or not one for amd64 and the register ABI) */
	GO_FOLLOWED, /* its probes are attached */
	GO_UNFOLLOWED, /* a Go binary whose goroutines cannot be followed (said once) */
};

struct go_binary {
	dev_t dev;
	ino_t ino;
	enum go_state state;
	__u32 goid_off, m_off, curg_off;
	size_t probe_off[2]; /* where in gopark and ready the probes go (see probe_offset()) */
	const struct go_release *release;
	struct bpf_link *links[2];
};

struct go_pid {
	pid_t pid;
	size_t binary;
	/* Followed before its exec (record's COMMAND): its image may still be latsnap's. */
	bool expected;
};

struct goroutines {
	struct bpf_program *progs[2]; /* gopark's, ready's */
	int procs_fd;
	struct go_binary *bins;
	size_t nr_bins;
	size_t cap_bins;
	struct go_pid pids[LS_GO_MAX_PROCS];
	size_t nr_pids;
};

static const char *const probed[2] = { "runtime.gopark", "runtime.ready" };

/**
 * goroutines_new() - follow goroutines with the programs @park and @ready, the processes listed
 *                    in the map @procs_fd (tgid -> struct ls_go_proc)
 *
 * Return: the state, or NULL without memory.
 */
struct goroutines *goroutines_new(struct bpf_program *park, struct bpf_program *ready, int procs_fd)
{
	struct goroutines *gr = calloc(1, sizeof(*gr));

	if (gr) {
		gr->progs[0] = park;
		gr->progs[1] = ready;
		gr->procs_fd = procs_fd;
	}
	return gr;
}

void goroutines_free(struct goroutines *gr)
{
	size_t i;

	if (!gr) {
		return;
	}
	for (i = 0; i < gr->nr_bins; i++) {
		bpf_link__destroy(gr->bins[i].links[0]);
		bpf_link__destroy(gr->bins[i].links[1]);
	}
	free(gr->bins);
	free(gr);
}

/*
 * Where in the function at @sym (of @elf, open as @fd) its probe goes: past the stack check that
 * opens a Go function on amd64 (cmp 0x10(%r14),%rsp), on the jbe after it. The kernel emulates a
 * conditional jump where it single-steps a compare with memory out of line: one trap per hit,
 * not two (a trap is microseconds, tens of them in a VM). The registers there are the entry's
 * but for the flags. 0, the entry, for any other first instruction.
 */
static size_t probe_offset(Elf *elf, int fd, const GElf_Sym *sym)
{
	static const unsigned char check[] = { 0x49, 0x3b, 0x66, 0x10 };
	unsigned char code[sizeof(check) + 2];
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr shdr;
	off_t at;

	if (!scn || !gelf_getshdr(scn, &shdr) || sym->st_value < shdr.sh_addr ||
	    sym->st_value + sizeof(code) > shdr.sh_addr + shdr.sh_size) {
		return 0;
	}
	at = (off_t)(shdr.sh_offset + (sym->st_value - shdr.sh_addr));
	if (pread(fd, code, sizeof(code), at) != (ssize_t)sizeof(code) ||
	    memcmp(code, check, sizeof(check))) {
		return 0;
	}
	/* jbe rel8 (76), or jbe rel32 (0f 86). */
	if (code[4] == 0x76 || (code[4] == 0x0f && code[5] == 0x86)) {
		return sizeof(check);
	}
	return 0;
}

/*
 * Whether @elf's symbol table has both functions the probes need: a Go program's runtime; where
 * in each the probe goes, into @off.
 */
static bool has_go_runtime(Elf *elf, int fd, size_t *off)
{
	bool found[2] = { false, false };
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	GElf_Sym sym;
	const char *name;
	size_t i, k, n;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize) {
			continue;
		}
		data = elf_getdata(scn, NULL);
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; data && i < n; i++) {
			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC) {
				continue;
			}
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			for (k = 0; name && k < 2; k++) {
				if (!found[k] && !strcmp(name, probed[k])) {
					found[k] = true;
					off[k] = probe_offset(elf, fd, &sym);
				}
			}
		}
	}
	return found[0] && found[1];
}

/* The release named by a Go compile unit's producer ("Go cmd/compile go1.19.8; regabi"). */
static const struct go_release *go_release(Dwarf *dw, int *minor)
{
	Dwarf_Off off = 0, next;
	Dwarf_Attribute attr;
	const char *producer;
	Dwarf_Die cu;
	size_t hsize, i;

	*minor = -1;
	while (*minor < 0 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			producer = dwarf_formstring(dwarf_attr(&cu, DW_AT_producer, &attr));
			if (producer && sscanf(producer, "Go cmd/compile go1.%d", minor) != 1) {
				*minor = -1;
			}
		}
		off = next;
	}
	for (i = 0; i < sizeof(releases) / sizeof(releases[0]); i++) {
		if (releases[i].minor == *minor) {
			return &releases[i];
		}
	}
	return NULL;
}

/* The offset of member @member of the structure @die, or -1. */
static long member_offset(Dwarf_Die *die, const char *member)
{
	Dwarf_Attribute attr;
	Dwarf_Word off;
	Dwarf_Die m;
	const char *name;

	if (dwarf_child(die, &m)) {
		return -1;
	}
	do {
		name = dwarf_diename(&m);
		if (dwarf_tag(&m) == DW_TAG_member && name && !strcmp(name, member) &&
		    !dwarf_formudata(dwarf_attr(&m, DW_AT_data_member_location, &attr), &off)) {
			return (long)off;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return -1;
}

/*
 * The offset of member @member of structure @type (runtime.g's goid), from the type's definition
 * among the units' top DIEs, or -1.
 */
static long type_member_offset(Dwarf *dw, const char *type, const char *member)
{
	Dwarf_Off off = 0, next;
	Dwarf_Die cu, die;
	const char *name;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				name = dwarf_diename(&die);
				if (dwarf_tag(&die) == DW_TAG_structure_type && name &&
				    !strcmp(name, type)) {
					return member_offset(&die, member);
				}
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	return -1;
}

/*
 * Look at the binary open as @fd (@path, for messages) and fill @b: whether it is Go, and what its
 * goroutines' probes need. Says once why a Go binary is not followed.
 */
static void examine(int fd, const char *path, pid_t pid, struct go_binary *b)
{
	Dwarf *dw = NULL;
	GElf_Ehdr ehdr;
	long goid, m, curg;
	int minor;
	Elf *elf;

	b->state = GO_NOT;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &ehdr) || !has_go_runtime(elf, fd, b->probe_off)) {
		goto out;
	}
	b->state = GO_UNFOLLOWED;
	if (ehdr.e_machine != EM_X86_64) {
		ls_verbose("tracker: pid %d runs %s, a Go binary not for x86-64: its goroutines' "
			   "waits are not followed (the probes know amd64's register ABI only)",
			   pid, path);
		goto out;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		ls_verbose(
			"tracker: pid %d runs %s, a Go binary without DWARF (built with "
			"-ldflags=-w?): its goroutines' waits are not followed (runtime.g's layout "
			"is unknown)",
			pid, path);
		goto out;
	}
	b->release = go_release(dw, &minor);
	if (!b->release) {
		ls_verbose("tracker: pid %d runs %s, a Go binary of %s%d: its goroutines' waits "
			   "are not followed (latsnap knows the wait reasons of Go 1.19 only)",
			   pid, path, minor < 0 ? "an unknown release" : "Go 1.",
			   minor < 0 ? 0 : minor);
		goto out;
	}
	goid = type_member_offset(dw, "runtime.g", "goid");
	if (goid < 0 || goid > 4096) {
		ls_verbose(
			"tracker: pid %d runs %s, a Go binary whose DWARF has no runtime.g.goid: "
			"its goroutines' waits are not followed",
			pid, path);
		goto out;
	}
	b->goid_off = (__u32)goid;
	/* Only the waker's goroutine needs these: without them its thread is still named. */
	m = type_member_offset(dw, "runtime.g", "m");
	curg = type_member_offset(dw, "runtime.m", "curg");
	if (m > 0 && m <= 4096 && curg > 0 && curg <= 4096) {
		b->m_off = (__u32)m;
		b->curg_off = (__u32)curg;
	}
	b->state = GO_FOLLOWED;
out:
	if (dw) {
		dwarf_end(dw);
	}
	if (elf) {
		elf_end(elf);
	}
}

/* Attach @b's probes to @path: once per binary, for every process that runs it. */
static int attach(struct goroutines *gr, struct go_binary *b, const char *path)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	int k, err;

	for (k = 0; k < 2; k++) {
		opts.func_name = probed[k];
		b->links[k] = bpf_program__attach_uprobe_opts(gr->progs[k], -1, path,
							      b->probe_off[k], &opts);
		if (!b->links[k]) {
			err = -errno;
			ls_err("tracker: cannot attach a uprobe to %s in %s: %s: its goroutines' "
			       "waits are not followed",
			       probed[k], path, strerror(-err));
			bpf_link__destroy(b->links[0]);
			b->links[0] = NULL;
			b->state = GO_UNFOLLOWED;
			return err;
		}
	}
	return 0;
}

/* The binary @path names (examined and attached when new), or NULL. */
static struct go_binary *binary_of(struct goroutines *gr, const char *path, pid_t pid)
{
	struct go_binary *b = NULL, *bins;
	struct stat st;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		goto out;
	}
	for (i = 0; i < gr->nr_bins; i++) {
		if (gr->bins[i].dev == st.st_dev && gr->bins[i].ino == st.st_ino) {
			b = &gr->bins[i];
			goto out;
		}
	}
	if (gr->nr_bins == gr->cap_bins) {
		bins = realloc(gr->bins, (gr->cap_bins * 2 + 8) * sizeof(*bins));
		if (!bins) {
			goto out;
		}
		gr->bins = bins;
		gr->cap_bins = gr->cap_bins * 2 + 8;
	}
	b = &gr->bins[gr->nr_bins++];
	memset(b, 0, sizeof(*b));
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	examine(fd, path, pid, b);
	if (b->state == GO_FOLLOWED) {
		attach(gr, b, path);
	}
out:
	if (fd >= 0) {
		close(fd);
	}
	return b;
}

static struct go_pid *pid_entry(const struct goroutines *gr, pid_t pid)
{
	size_t i;

	for (i = 0; i < gr->nr_pids; i++) {
		if (gr->pids[i].pid == pid) {
			return (struct go_pid *)&gr->pids[i];
		}
	}
	return NULL;
}

/**
 * goroutines_forget() - stop following process @pid's goroutines (it exited, or exec'd)
 */
void goroutines_forget(struct goroutines *gr, pid_t pid)
{
	struct go_pid *p = gr ? pid_entry(gr, pid) : NULL;
	__u32 key = (__u32)pid;

	if (!p) {
		return;
	}
	bpf_map_delete_elem(gr->procs_fd, &key);
	*p = gr->pids[--gr->nr_pids];
}

/**
 * goroutines_follow() - follow the goroutine waits of tracked process @pid, when it runs a Go
 *                       binary that can be followed
 * @path: the binary it runs or is about to exec; NULL: /proc/PID/exe
 *
 * Return: 1 when followed, 0 when not (not Go, or said why), or a negative errno.
 */
int goroutines_follow(struct goroutines *gr, pid_t pid, const char *path)
{
	struct ls_go_proc proc = { 0 };
	bool expected = path != NULL;
	struct go_binary *b;
	char exe[64];
	struct go_pid *p;
	__u32 key = (__u32)pid;

	if (!gr) {
		return 0;
	}
	if (!path) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		path = exe;
	}
	b = binary_of(gr, path, pid);
	p = pid_entry(gr, pid);
	if (!b || b->state != GO_FOLLOWED) {
		/* A notice from before its exec: what it is about to run is still followed. */
		if (!p || !p->expected || expected) {
			goroutines_forget(gr, pid);
		}
		return 0;
	}
	if (!p && gr->nr_pids == LS_GO_MAX_PROCS) {
		return -ENOSPC;
	}
	proc.goid_off = b->goid_off;
	proc.m_off = b->m_off;
	proc.curg_off = b->curg_off;
	if (bpf_map_update_elem(gr->procs_fd, &key, &proc, BPF_ANY)) {
		return -errno;
	}
	if (!p) {
		p = &gr->pids[gr->nr_pids++];
		ls_verbose("tracker: pid %d: following its goroutines' waits (Go 1.%d, "
			   "runtime.gopark and runtime.ready, goid at +%u)",
			   pid, b->release->minor, b->goid_off);
	}
	p->pid = pid;
	p->binary = (size_t)(b - gr->bins);
	p->expected = expected;
	return 1;
}

/**
 * goroutines_decorate() - what a goroutine's wait @e is, on its outlier @o: flags goroutine,
 *                         "goroutine GOID" and "go-wait: REASON" (the wait reason as Go names
 *                         it), and a cause that the cause rules may name better
 *
 * Return: 0 or -ENOMEM.
 */
int goroutines_decorate(const struct goroutines *gr, const struct ls_event *e, struct outlier *o)
{
	const struct go_pid *p = gr ? pid_entry(gr, (pid_t)e->pid) : NULL;
	const struct go_release *rel = p ? gr->bins[p->binary].release : NULL;
	unsigned int reason = (unsigned int)e->args[1];
	char name[64], cause[80];

	if (!(e->flags & LS_EF_GOROUTINE)) {
		return 0;
	}
	if (rel && reason < rel->nr_reasons && *rel->reasons[reason]) {
		snprintf(name, sizeof(name), "%s", rel->reasons[reason]);
	} else {
		snprintf(name, sizeof(name), "waitReason %u", reason);
	}
	snprintf(cause, sizeof(cause), "Go: %s", name);
	/* A goroutine waits outside the kernel: it has no kernel stack to miss. */
	outlier_drop_flags(o, "no-wait-stack");
	if (outlier_set_cause(o, cause) || outlier_add_flag(o, "goroutine") ||
	    outlier_add_flag(o, "goroutine %" PRIu64, (uint64_t)e->args[0]) ||
	    outlier_add_flag(o, "go-wait: %s", name)) {
		return -ENOMEM;
	}
	if (e->args[2] && outlier_add_flag(o, "waker-goroutine %" PRIu64, (uint64_t)e->args[2])) {
		return -ENOMEM;
	}
	return 0;
}
