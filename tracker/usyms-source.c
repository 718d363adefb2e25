// SPDX-License-Identifier: GPL-2.0
/*
 * usyms-source.c - the source file and line of an address, from the captured objects' DWARF (an
 * inlined call's site when the address is in inlined code).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "tracker/usyms-int.h"
#include "lib/proc.h"
#include "lib/util.h"

/*
 * The outermost inlined call at @pc below @die (a unit, a subprogram, a lexical block), into
 * @out. A walk of its own: libdw 0.188's dwarf_getscopes() loses 32 bytes of its own on Go's
 * units (check-asan: LeakSanitizer, inside dwarf_getscopes, each process that named a Go frame).
 */
static bool outermost_inlined(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > 8 || dwarf_child(die, &child) != 0) {
		return false;
	}
	do {
		if (dwarf_haspc(&child, pc) != 1) {
			continue;
		}
		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) {
			*out = child;
			return true;
		}
		return outermost_inlined(&child, pc, out, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/*
 * Where the function of the frame at @pc, in @cu, called the outermost function inlined into it
 * (its call_file and call_line): the line in the frame's own function, the one its symbol names.
 * NULL when nothing is inlined there.
 */
static const char *inlined_call_site(Dwarf_Die *cu, Dwarf_Addr pc, int *lineno)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Die outer;
	const char *src = NULL;
	Dwarf_Word file, line;
	size_t nfiles;

	if (outermost_inlined(cu, pc, &outer, 0) &&
	    !dwarf_formudata(dwarf_attr(&outer, DW_AT_call_file, &attr), &file) &&
	    !dwarf_formudata(dwarf_attr(&outer, DW_AT_call_line, &attr), &line) && line &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && file < nfiles) {
		src = dwarf_filesrc(files, file, NULL, NULL);
		*lineno = (int)line;
	}
	return src;
}

/*
 * The line of @addr from the compilation units' own address ranges: libdw (elfutils 0.188) finds a
 * unit by .debug_aranges, which Go's linker does not write, so dwfl_module_getsrc() knows no
 * address of a Go binary. A Go binary has a unit per package: a few dozen to walk. Where code
 * is inlined, the line is the call's in the frame's own function (sync.(*Mutex).Lock inlined
 * into main.contend: main.contend's line that locks), as Go's tracebacks say it.
 */
static const char *cu_source(Dwfl_Module *mod, uint64_t addr, int *lineno)
{
	Dwarf_Off off = 0, next;
	Dwarf_Addr bias;
	Dwarf_Line *dl;
	const char *src;
	Dwarf_Die cu;
	size_t hsize;
	Dwarf *dw;

	dw = dwfl_module_getdwarf(mod, &bias);
	if (!dw) {
		return NULL;
	}
	for (; !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL); off = next) {
		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_haspc(&cu, addr - bias) != 1) {
			continue;
		}
		src = inlined_call_site(&cu, addr - bias, lineno);
		if (src) {
			return src;
		}
		dl = dwarf_getsrc_die(&cu, addr - bias);
		if (dl && !dwarf_lineno(dl, lineno)) {
			return dwarf_linesrc(dl, NULL, NULL);
		}
		return NULL;
	}
	return NULL;
}

/**
 * usyms_source() - the source line of an address of @pid, from its object's DWARF line table
 * @file: set to the source file (the cache's own string, valid until usyms_free()), or NULL
 * @line: set to its line, or 0
 *
 * Not remembered: it is asked for a goroutine's frames only, a few a wait.
 *
 * Return: 0 when the line is known; -ENOENT when not; the -errno of usyms_capture() when @pid is
 * not cached and cannot be captured.
 */
int usyms_source(struct usyms *us, pid_t pid, uint64_t addr, const char **file, uint32_t *line)
{
	struct usyms_proc *p;
	Dwfl_Module *mod;
	Dwfl_Line *dl;
	const char *src;
	int err = -ENOENT, lineno = 0;

	*file = NULL;
	*line = 0;
	pthread_mutex_lock(&us->lock);
	p = usyms_get_proc(us, pid, &err);
	if (!p) {
		goto out;
	}
	err = -ENOENT;
	usyms_tls_us = us;
	usyms_tls_proc = p;
	mod = dwfl_addrmodule(p->dwfl, addr);
	dl = usyms_holds_code(mod, addr) ? dwfl_module_getsrc(mod, addr) : NULL;
	src = dl ? dwfl_lineinfo(dl, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (!src && usyms_holds_code(mod, addr)) {
		src = cu_source(mod, addr, &lineno);
	}
	if (src && lineno > 0) {
		*file = usyms_intern(&us->names, src);
		*line = (uint32_t)lineno;
		err = *file ? 0 : -ENOMEM;
	}
out:
	usyms_tls_us = NULL;
	usyms_tls_proc = NULL;
	pthread_mutex_unlock(&us->lock);
	return err;
}
