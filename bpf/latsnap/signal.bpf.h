/* SPDX-License-Identifier: GPL-2.0 */
/*
 * signal.bpf.h - the preload library's signal: whether it may be sent, and sending it. A part of
 * latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_SIGNAL_BPF_H
#define LATSNAP_BPF_SIGNAL_BPF_H

/* The handler @task's process has installed for @sig, as the kernel will run it. */
static __always_inline __u64 installed_handler(struct task_struct *task, __u32 sig)
{
	struct sighand_struct *sighand = BPF_CORE_READ(task, sighand);
	__u64 handler = 0, off;

	off = bpf_core_field_offset(struct sighand_struct, action) +
	      (__u64)(sig - 1) * bpf_core_type_size(struct k_sigaction) +
	      bpf_core_field_offset(struct k_sigaction, sa.sa_handler);
	if (bpf_probe_read_kernel(&handler, sizeof(handler), (void *)sighand + off)) {
		return 0;
	}
	return handler;
}

static __always_inline bool valid_signal(__u64 sig)
{
	return sig >= 1 && sig <= 64 && sig != SIGKILL && sig != SIGSTOP;
}

/*
 * Signals @task itself, where bpf_send_signal_thread() signals only current (kernel >= 6.13).
 * Sent with si_code SI_KERNEL, as the helper's, which is what the library's handler answers.
 */
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;

/*
 * owe_signal - have @task signalled with @sig at the end of the switch that brings it in, from
 * its own context, by whichever end-of-switch hook this kernel has (send_owed_signal()).
 */
static __always_inline __u32 owe_signal(struct task_struct *task, struct task_state *s, __u32 sig,
					__u32 *seq)
{
	__u32 cpu = bpf_get_smp_processor_id() & (LS_VERDICT_CPUS - 1);
	struct ls_owed_signal *o = &owed_signals[cpu];

	if (!switch_end_hook) {
		return LS_EF_SIGNAL_UNSUPPORTED;
	}
	o->task = (__u64)task;
	o->sig = sig;
	/* Counted when it goes (send_owed_signal()): unsent, the next signal has its number. */
	*seq = s->signals_sent + 1;
	return LS_EF_SIGNALLED;
}

/*
 * signal_preload - ask the preload library in @task to unwind its user stack: current at the end
 * of a syscall, or a thread being switched in after a sleep outlier, which has run no user code
 * since it was switched out, so that the handler unwinds from where it stopped. The signal goes
 * only where the library's handler is still the one the kernel would run, and where the thread
 * neither blocks it nor has it pending: otherwise it would wait, or land on a handler that is not
 * ours, or on the default action. Returns the LS_EF_SIGNAL* flag saying what happened; when
 * LS_EF_SIGNALLED, *@seq is the signal's number in @s's count (counted when it goes: at once,
 * or at the end of the switch, send_owed_signal()).
 */
static __always_inline __u32 signal_preload(struct task_struct *task, struct task_state *s,
					    bool current, __u32 *seq)
{
	__u32 tgid = task_rd(task, tgid), sig;
	struct ls_registration *reg;
	__u64 bit, pending;
	__u8 one = 1;
	long err;

	reg = bpf_map_lookup_elem(&registered, &tgid);
	if (!reg) {
		return 0;
	}
	if (reg->displaced) {
		return LS_EF_SIGNAL_DISPLACED;
	}
	sig = reg->sig;
	if (!valid_signal(sig) || reg->handler <= 1) {
		return 0;
	}
	if (installed_handler(task, sig) != reg->handler) {
		/* Once per process: the application's handler keeps the signal from now on. */
		/* Once per process: the map says who came first, with no atomic (ctx_take()). */
		reg->displaced = 1;
		if (bpf_map_update_elem(&displaced_noticed, &tgid, &one, BPF_NOEXIST) == 0) {
			notify(LS_NOTICE_DISPLACED, tgid, sig);
		}
		return LS_EF_SIGNAL_DISPLACED;
	}
	bit = 1ULL << ((sig - 1) & 63);
	pending = BPF_CORE_READ(task, pending.signal.sig[0]) |
		  BPF_CORE_READ(task, signal, shared_pending.signal.sig[0]);
	if ((BPF_CORE_READ(task, blocked.sig[0]) | pending) & bit) {
		stat_inc(LS_STAT_SIGNAL_SKIPPED);
		return LS_EF_SIGNAL_BLOCKED;
	}
	if (current) {
		err = bpf_send_signal_thread(sig);
	} else if (bpf_send_signal_task) {
		/*
		 * IRQs are off in the scheduler: like the helper's, the signal is deferred to an
		 * irq_work, which runs before the thread returns to user space.
		 */
		err = bpf_send_signal_task(task, sig, PIDTYPE_PID, 0);
		if (err == -EPERM) {
			/*
			 * The kernel sends nothing while current has no user memory of its own:
			 * the idle task (a thread picked up by an idle CPU, the common case), a
			 * kernel thread, an exiting thread. The thread is then signalled at the
			 * end of this switch, from its own context.
			 */
			return owe_signal(task, s, sig, seq);
		}
	} else {
		/* Before 6.13 only current can be signalled: the thread, once it runs. */
		return owe_signal(task, s, sig, seq);
	}
	if (err == -EBUSY) {
		stat_inc(LS_STAT_SIGNAL_BUSY);
		return LS_EF_SIGNAL_BUSY;
	}
	if (err) {
		stat_inc(LS_STAT_SIGNAL_REFUSED);
		return LS_EF_SIGNAL_REFUSED;
	}
	stat_inc(LS_STAT_SIGNALS);
	*seq = ++s->signals_sent;
	return LS_EF_SIGNALLED;
}

#endif /* LATSNAP_BPF_SIGNAL_BPF_H */
