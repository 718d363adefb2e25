/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usyms.h - symbolize user-space addresses of other processes with elfutils' libdwfl.
 *
 * A process's mappings are captured while it lives and the ELF file of every mapped object is
 * opened at that moment, so addresses stay symbolizable after the process has exited, after a
 * shared library on disk was replaced, and for processes in another mount namespace.
 *
 * Addresses are symbolized as given. A return address in a stack points just after the call
 * instruction, possibly at the first byte of the next function; whoever knows that an address is
 * a return address subtracts 1 before the lookup (and reports the original address).
 *
 * Every string handed out is the cache's own copy and stays valid until usyms_free().
 *
 * The ELF files stay mapped in this process: in its own maps, and in those of a child it forks
 * without exec, they show up as extra mappings of those objects.
 *
 * usyms_unwind() walks the user stack of a thread of a captured process from its saved registers,
 * with the CFI of the captured objects, reading the stack through /proc/PID/mem: the thread is
 * neither stopped nor signalled.
 *
 * Thread-safe: every call holds the cache's lock. The maps reader's thread captures processes the
 * moment they are noticed (usyms_maps_read(), no lock, then usyms_precapture_maps()) while the
 * main loop symbolizes.
 */
#ifndef LATSNAP_USYMS_H
#define LATSNAP_USYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How many processes the cache holds; capturing one more drops the least recently used. */
#define USYMS_MAX_PROCS 64

struct usyms;

struct usym {
	const char *symbol; /* NULL when unknown */
	uint64_t offset; /* addr - symbol start, 0 when unknown */
	/*
	 * The object's path as /proc/PID/maps gives it, or "[vdso]", or "/tmp/perf-PID.map" for JIT
	 * code named by the process's perf map; NULL if addr is in none.
	 */
	const char *module;
};

struct usyms *usyms_new(void);
void usyms_free(struct usyms *us);
void usyms_skip_own(struct usyms *us);
int usyms_capture(struct usyms *us, pid_t pid);
int usyms_recapture(struct usyms *us, pid_t pid, uint32_t key);
int usyms_precapture(struct usyms *us, pid_t pid, uint32_t key);
struct usyms_maps;
struct usyms_maps *usyms_maps_read(pid_t pid);
bool usyms_maps_gone(const struct usyms_maps *m);
void usyms_maps_free(struct usyms_maps *m);
int usyms_precapture_maps(struct usyms *us, pid_t pid, uint32_t key, const struct usyms_maps *m,
			  bool wait, unsigned int *loading);
void usyms_reader(struct usyms *us, bool on);
unsigned int usyms_loading(struct usyms *us, pid_t pid);
void usyms_forget(struct usyms *us, pid_t pid);
void usyms_forget_image(struct usyms *us, pid_t pid, uint64_t exec_ns);
int usyms_lookup(struct usyms *us, pid_t pid, uint64_t addr, struct usym *out);
int usyms_source(struct usyms *us, pid_t pid, uint64_t addr, const char **file, uint32_t *line);

/* One object mapped in a process, as usyms_modules() hands it over. */
struct usyms_module {
	const char *path; /* as /proc/PID/maps gives it */
	uint64_t base; /* where its first mapping starts */
	uint64_t size; /* up to the end of its last mapping */
	const uint8_t *build_id; /* NULL when it has none */
	size_t build_id_len;
};

typedef void (*usyms_module_fn)(const struct usyms_module *m, void *ctx);
int usyms_modules(struct usyms *us, pid_t pid, usyms_module_fn fn, void *ctx);

/*
 * The user registers of a thread, in DWARF numbering, what the kernel saved in struct pt_regs at
 * the thread's last entry: on x86-64 rax rdx rcx rbx rsi rdi rbp rsp, r8 to r15, rip
 * (USYMS_REG_IP), reordered; on arm64 x0 to x30, sp, and the pc last (DWARF has no number for it
 * that libdw sets: USYMS_REG_IP is an index here, not a DWARF register).
 */
#if defined(__aarch64__)
#define USYMS_NR_REGS 33
#define USYMS_REG_SP 31
#define USYMS_REG_IP 32
#else
#define USYMS_NR_REGS 17
#define USYMS_REG_SP 7
#define USYMS_REG_IP 16
#endif

int usyms_unwind(struct usyms *us, pid_t pid, pid_t tid, const uint64_t regs[USYMS_NR_REGS],
		 uint64_t *ips, unsigned int max);

#endif /* LATSNAP_USYMS_H */
