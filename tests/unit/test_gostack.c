// SPDX-License-Identifier: GPL-2.0
/*
 * Go's stack switches in a symbolized user stack (tracker/gostack.c): a stack is cut after the
 * first return into runtime.mcall, runtime.morestack or runtime.mstart (with or without the
 * linker's .abi0), never at the innermost frame, never at a function whose name only starts
 * alike; only mcall and morestack flag the outlier (the goroutine's frames are unknown).
 * The stacks are as latsnap symbolized them from gowaits (tests/workloads/go/waits.go).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/outlier.h"
#include "tracker/gostack.h"
#include "tap.h"

/* @o's user stack from @names, innermost first, separated by " < " ("?" for no symbol). */
static void set_stack(struct outlier *o, const char *names)
{
	char *copy = strdup(names), *save = NULL, *tok;
	size_t n = 1, i = 0;
	const char *p;

	for (p = names; (p = strstr(p, " < ")); p += 3) {
		n++;
	}
	outlier_frames_free(&o->user_stack.frames);
	if (!copy || outlier_frames_alloc(&o->user_stack.frames, n)) {
		bail_out("out of memory");
	}
	for (tok = strtok_r(copy, "<", &save); tok && i < n; tok = strtok_r(NULL, "<", &save)) {
		tok += strspn(tok, " ");
		tok[strcspn(tok, " ")] = '\0';
		if (outlier_frame_set(&o->user_stack.frames.v[i], 0x401000 + i,
				      strcmp(tok, "?") ? tok : NULL, 0, "/tmp/gowaits")) {
			bail_out("out of memory");
		}
		i++;
	}
	free(copy);
}

/* @o's user stack as set_stack() takes it. */
static const char *stack_text(const struct outlier *o)
{
	static char text[1024];
	size_t i, len = 0;

	text[0] = '\0';
	for (i = 0; i < o->user_stack.frames.nr && len < sizeof(text); i++) {
		const char *s = o->user_stack.frames.v[i].symbol;

		len += snprintf(text + len, sizeof(text) - len, "%s%s", i ? " < " : "",
				s ? s : "?");
	}
	return text;
}

static void cuts(const char *name, const char *stack, const char *expected, bool flagged)
{
	struct outlier *o = outlier_new();
	bool was_cut;

	if (!o) {
		bail_out("out of memory");
	}
	set_stack(o, stack);
	was_cut = gostack_cut(&o->user_stack.frames);
	is_str(stack_text(o), expected, "%s: the frames kept", name);
	ok(was_cut == !!strcmp(stack, expected), "%s: gostack_cut() says whether it cut", name);
	is_int(gostack_flag(o), 0, "%s: gostack_flag()", name);
	ok(outlier_has_flag(o, "go-stack-cut:") == flagged, "%s: %s", name,
	   flagged ? "flagged go-stack-cut" : "not flagged");
	outlier_free(o);
}

int main(void)
{
	cuts("a stale goroutine beyond mcall",
	     "runtime.futex.abi0 < runtime.notesleep < runtime.stopm < runtime.findRunnable < "
	     "runtime.schedule < runtime.park_m < runtime.mcall < runtime.semacquire1 < "
	     "sync.runtime_SemacquireMutex < sync.(*Mutex).lockSlow < main.contend < main.main < "
	     "runtime.main < runtime.goexit.abi0",
	     "runtime.futex.abi0 < runtime.notesleep < runtime.stopm < runtime.findRunnable < "
	     "runtime.schedule < runtime.park_m < runtime.mcall",
	     true);
	cuts("garbage beyond mcall",
	     "runtime.epollwait.abi0 < runtime.findRunnable < "
	     "runtime.schedule < runtime.park_m < runtime.mcall < ? < ?",
	     "runtime.epollwait.abi0 < runtime.findRunnable < runtime.schedule < runtime.park_m < "
	     "runtime.mcall",
	     true);
	cuts("nothing beyond mcall", "runtime.futex.abi0 < runtime.park_m < runtime.mcall",
	     "runtime.futex.abi0 < runtime.park_m < runtime.mcall", true);
	cuts("morestack (.abi0)",
	     "runtime.futex.abi0 < runtime.stopm < runtime.schedule < runtime.gopreempt_m < "
	     "runtime.newstack < runtime.morestack.abi0 < main.deep < main.main",
	     "runtime.futex.abi0 < runtime.stopm < runtime.schedule < runtime.gopreempt_m < "
	     "runtime.newstack < runtime.morestack.abi0",
	     true);
	cuts("the creator's frames beyond mstart",
	     "runtime.futex.abi0 < runtime.notetsleep < runtime.sysmon < runtime.mstart1 < "
	     "runtime.mstart0 < runtime.mstart.abi0 < runtime.execute < ?",
	     "runtime.futex.abi0 < runtime.notetsleep < runtime.sysmon < runtime.mstart1 < "
	     "runtime.mstart0 < runtime.mstart.abi0",
	     false);
	cuts("a goroutine's own syscall",
	     "runtime/internal/syscall.Syscall6 < syscall.Syscall < syscall.read < "
	     "os.(*File).Read < main.pipeReader < main.main.func2 < runtime.goexit.abi0",
	     "runtime/internal/syscall.Syscall6 < syscall.Syscall < syscall.read < "
	     "os.(*File).Read < main.pipeReader < main.main.func2 < runtime.goexit.abi0",
	     false);
	cuts("systemstack is followed",
	     "runtime.futex.abi0 < runtime.lock2 < runtime.systemstack.abi0 < runtime.mallocgc < "
	     "main.work < runtime.goexit.abi0",
	     "runtime.futex.abi0 < runtime.lock2 < runtime.systemstack.abi0 < runtime.mallocgc < "
	     "main.work < runtime.goexit.abi0",
	     false);
	cuts("the innermost frame is no switch", "runtime.mcall < main.park < main.main",
	     "runtime.mcall < main.park < main.main", false);
	cuts("names that only start alike",
	     "runtime.futex.abi0 < runtime.mstart1 < runtime.mstart0.abi0 < runtime.mcallx < "
	     "runtime.morestackx < runtime.mcall.abi1 < main.main",
	     "runtime.futex.abi0 < runtime.mstart1 < runtime.mstart0.abi0 < runtime.mcallx < "
	     "runtime.morestackx < runtime.mcall.abi1 < main.main",
	     false);
	cuts("a C stack",
	     "__futex_abstimed_wait_common < pthread_cond_wait@@GLIBC_2.3.2 < ? < main",
	     "__futex_abstimed_wait_common < pthread_cond_wait@@GLIBC_2.3.2 < ? < main", false);
	cuts("no frames", "?", "?", false);
	return tap_done();
}
