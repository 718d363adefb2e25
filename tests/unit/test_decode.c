// SPDX-License-Identifier: GPL-2.0
/* decode_event(): an outlier's kernel stacks as the BPF side sent them, decoded and merged. */
#include <string.h>
#include <linux/types.h>

#include "include/latsnap.h"
#include "lib/outlier.h"
#include "tracker/decode.h"
#include "tracker/ksyms.h"
#include "tracker/usyms.h"
#include "tap.h"

static const char kallsyms[] = "ffffffff81000000 T _text\n"
			       "ffffffff81000100 T __traceiter_sched_switch\n"
			       "ffffffff81000200 T __schedule\n"
			       "ffffffff81000300 T schedule_hrtimeout_range\n"
			       "ffffffff81000400 T ep_poll\n"
			       "ffffffff81000500 T do_epoll_wait\n"
			       "ffffffff81000600 T _etext\n";

/*
 * One epoll_wait, blocked twice at the same place: once seen from a program whose stack walk
 * starts in the tracing glue, once not. The BPF side hashes them apart; decoded, the glue goes
 * and they are one stack, not "1 of 2" and "2 of 2" alike (issue 52).
 */
static void glue_apart(struct ksyms *ks, struct usyms *us)
{
	static const __u64 wait[] = { 0xffffffff81000210, 0xffffffff81000310, 0xffffffff81000410,
				      0xffffffff81000510 };
	static struct ls_event e;
	struct outlier *o = NULL;

	memset(&e, 0, sizeof(e));
	e.kind = LS_KIND_SYSCALL;
	e.pid = e.tid = 42;
	e.syscall_nr = 232;
	e.start_ns = 1000000000;
	e.end_ns = e.start_ns + 50000000;
	e.blocked_ns = 50000000;
	e.nr_stacks = 3;
	e.stacks[0].weight_ns = 30000000;
	e.stacks[0].ips[0] = 0xffffffff81000110;
	memcpy(&e.stacks[0].ips[1], wait, sizeof(wait));
	e.stacks[0].nr = 5;
	e.stacks[1].weight_ns = 15000000;
	memcpy(e.stacks[1].ips, wait + 1, sizeof(wait) - sizeof(wait[0]));
	e.stacks[1].nr = 3;
	e.stacks[2].weight_ns = 5000000;
	memcpy(e.stacks[2].ips, wait, sizeof(wait));
	e.stacks[2].nr = 4;
	if (!is_int(decode_event(&e, ks, us, &o), 0, "the event decodes") || !o) {
		return;
	}
	is_int((long long)o->nr_kernel_stacks, 2,
	       "the stacks apart only by the glue are one; another place stays another");
	is_int((long long)o->kernel_stacks[0].weight_ns, 35000000, "  their weights add up");
	is_int((long long)o->kernel_stacks[0].frames.nr, 4, "  without the glue frame");
	is_int((long long)o->kernel_stacks[1].weight_ns, 15000000, "  the other keeps its own");
	outlier_free(o);
}

int main(void)
{
	char *path = tap_write_temp(kallsyms, strlen(kallsyms));
	struct ksyms *ks = ksyms_load(path);
	struct usyms *us = usyms_new();

	if (ok(ks && us, "synthetic kallsyms and user symbols")) {
		glue_apart(ks, us);
	}
	usyms_free(us);
	ksyms_free(ks);
	tap_remove_temp(path);
	return tap_done();
}
