/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gostack.h - Go's stack switches in a symbolized user stack.
 *
 * A Go thread (an M) runs goroutines on their own stacks and the scheduler on its own (g0). The
 * runtime switches between them in a few assembly functions that save the goroutine's registers
 * in its g.sched and change SP, but leave BP alone, so a frame-pointer walk from the g0 stack
 * crosses back into a goroutine stack through the switch's caller frame. Whether what it finds
 * there is this thread's depends on the switch:
 *
 * - runtime.mcall (gopark, Gosched, goexit, exitsyscall's slow path) and runtime.morestack
 *   (newstack, which preempts or moves the stack): the goroutine has left the thread, or its
 *   stack is being copied. Its saved BP points into a stack that another thread may be running
 *   now, or that was freed: the frames beyond are not the thread's. Go's own traceback stops at
 *   mcall too. They are cut, and the outlier says the goroutine's frames are unknown.
 * - runtime.mstart (TOPFRAME): a new thread starts with its creator's BP; beyond it are the
 *   creator's frames at the clone. Cut; nothing of the thread is lost.
 * - runtime.systemstack and runtime.asmcgocall: the goroutine stays on the thread and waits for
 *   the call to return; its frames are followed (the switch's own caller is skipped, as the
 *   caller of any frameless function is in a frame-pointer walk).
 */
#ifndef LATSNAP_GOSTACK_H
#define LATSNAP_GOSTACK_H

#include <stdbool.h>

struct outlier;
struct outlier_frames;

bool gostack_cut(struct outlier_frames *frames);
int gostack_flag(struct outlier *o);

#endif /* LATSNAP_GOSTACK_H */
