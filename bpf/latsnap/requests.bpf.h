/* SPDX-License-Identifier: GPL-2.0 */
/*
 * requests.bpf.h - requests (--request): probes, keyed requests, their upstream, samples. A part
 * of latsnap.bpf.c, which includes the parts in order: one object.
 */
#ifndef LATSNAP_BPF_REQUESTS_BPF_H
#define LATSNAP_BPF_REQUESTS_BPF_H

/*
 * Requests (record --request): a start probe of a tracked thread opens one, its pair's end probe
 * closes it. Only the outermost request of a thread is followed; the same pair's start again
 * inside it (a recursive function's entry) only counts depth.
 */
static __always_inline void request_start(struct task_struct *task, struct task_state *s,
					  __u32 pair, bool nests, __u64 arg, bool has_arg)
{
	struct req_state *r;

	r = task_storage_get(&reqs, task, true);
	if (!r) {
		stat_inc(LS_STAT_STORAGE_FAILED);
		return;
	}
	/*
	 * Its own start again: a recursive function's entry (it nests), or the next request after
	 * one whose end never came (an error unwound past it: PostgreSQL's query__done): that one
	 * is abandoned. Another pair's start inside it is the outer request's business.
	 */
	if (s->in_req && (r->pair != pair || nests)) {
		if (r->pair == pair) {
			r->depth++;
		}
		return;
	}
	r->pair = pair;
	r->depth = 1;
	r->waits = 0;
	r->exec = BPF_CORE_READ(task, se.sum_exec_runtime);
	r->delay = run_delay(task);
	r->nvcsw = task_rd(task, nvcsw) + task_rd(task, nivcsw);
	r->arg_kind = LS_REQ_ARG_NONE;
	r->arg_num = arg;
	r->arg[0] = 0;
	if (has_arg) {
		r->arg_kind = bpf_probe_read_user_str(r->arg, sizeof(r->arg), (void *)arg) > 0 ?
				      LS_REQ_ARG_TEXT :
				      LS_REQ_ARG_NUMBER;
	}
	r->start = clock_now();
	s->in_req = 1;
	/* Its syscalls take the slow way now: each may be a part of the request. */
	verdict_fast(task, s, 0);
}

static __always_inline void request_end(struct task_struct *task, struct task_state *s, __u32 pair)
{
	struct ls_request *e;
	struct req_state *r;
	__u64 now, delay;
	bool slow;

	if (!s->in_req) {
		return;
	}
	r = task_storage_get(&reqs, task, false);
	if (!r || r->pair != pair) {
		return;
	}
	if (--r->depth > 0) {
		return;
	}
	s->in_req = 0;
	verdict_fast(task, s, 0);
	now = clock_now();
	if (now - r->start < threshold_ns && !r->waits) {
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		return;
	}
	e->kind = LS_KIND_REQUEST;
	e->slow = now - r->start >= threshold_ns;
	e->arg_kind = r->arg_kind;
	e->pad = 0;
	e->pair = pair;
	e->pid = task_rd(task, tgid);
	e->tid = task_rd(task, pid);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	e->switches = (__u32)(task_rd(task, nvcsw) + task_rd(task, nivcsw) - r->nvcsw);
	e->waits = r->waits;
	e->start_ns = r->start;
	e->end_ns = now;
	e->on_cpu_ns = BPF_CORE_READ(task, se.sum_exec_runtime) - r->exec;
	delay = run_delay(task);
	e->runqueue_ns = delay > r->delay ? delay - r->delay : 0;
	e->arg_num = r->arg_num;
	__builtin_memcpy(e->arg, r->arg, sizeof(e->arg));
	slow = e->slow;
	bpf_ringbuf_submit(e, 0);
	if (slow) {
		stat_inc(LS_STAT_OUTLIERS);
	}
}

/*
 * Keyed requests (a probe's =KEY): a request is an object, not a thread, so that an event loop's
 * thread has many under way at once, each begun and ended by the probes that name it. Its time
 * is its own; what its thread did meanwhile was also for the others. An upstream it waited for
 * is found through the socket it connected (kreq_connect(), kreq_sk_ready()).
 */
static __always_inline void kreq_start(struct task_struct *task, __u32 pair, __u64 key)
{
	struct kreq_key k = { .tgid = task_rd(task, tgid), .pair = pair, .key = key };
	struct kreq v = {};
	struct req_state *r;
	__u32 slot;

	r = task_storage_get(&reqs, task, true);
	if (!r) {
		stat_inc(LS_STAT_STORAGE_FAILED);
		return;
	}
	v.start = clock_now();
	v.tid = task_rd(task, pid);
	v.kstarts = ++r->kstarts;
	bpf_probe_read_kernel_str(v.comm, sizeof(v.comm), task->comm);
	bpf_map_update_elem(&kreqs, &k, &v, BPF_ANY);
	/* The oldest pending one makes room: its loop never connected for it. */
	if (r->pend_n == KREQ_PENDING) {
		r->pend_head = (r->pend_head + 1) % KREQ_PENDING;
		r->pend_n--;
	}
	slot = (r->pend_head + r->pend_n) % KREQ_PENDING;
	r->pend[slot & (KREQ_PENDING - 1)] = k;
	r->pend_n++;
}

static __always_inline void kreq_end(struct task_struct *task, __u32 pair, __u64 key)
{
	struct kreq_key k = { .tgid = task_rd(task, tgid), .pair = pair, .key = key };
	struct req_state *r;
	struct ls_request *e;
	struct kreq *v;
	__u64 now = clock_now();

	v = bpf_map_lookup_elem(&kreqs, &k);
	if (!v) {
		return;
	}
	if (v->sk) {
		bpf_map_delete_elem(&kreq_socks, &v->sk);
	}
	if (now - v->start < threshold_ns) {
		bpf_map_delete_elem(&kreqs, &k);
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		bpf_map_delete_elem(&kreqs, &k);
		stat_inc(LS_STAT_RINGBUF_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = LS_KIND_REQUEST;
	e->slow = 1;
	e->arg_kind = LS_REQ_ARG_NONE;
	e->keyed = 1;
	e->pair = pair;
	e->pid = k.tgid;
	e->tid = v->tid;
	__builtin_memcpy(e->comm, v->comm, sizeof(e->comm));
	e->start_ns = v->start;
	e->end_ns = now;
	e->key = key;
	e->peer_ns = v->peer_ns;
	e->peer_pid = v->peer_pid;
	e->peer_tid = v->peer_tid;
	__builtin_memcpy(e->peer_comm, v->peer_comm, sizeof(e->peer_comm));
	r = task_storage_get(&reqs, task, false);
	e->others = r && (__u32)task_rd(task, pid) == v->tid ? r->kstarts - v->kstarts : 0;
	bpf_map_delete_elem(&kreqs, &k);
	bpf_ringbuf_submit(e, 0);
	stat_inc(LS_STAT_OUTLIERS);
}

/* The key probe @cookie names, read from @ctx: an argument or the return value. */
static __always_inline bool kreq_key_of(struct pt_regs *ctx, __u64 cookie, bool usdt, __u64 *key)
{
	unsigned int which = (cookie >> LS_REQ_COOKIE_KEY_SHIFT) & LS_REQ_COOKIE_KEY_MASK;
	long v = 0;

	if (which == LS_REQ_KEY_RET) {
		*key = PT_REGS_RC_CORE(ctx);
		return true;
	}
	if (usdt) {
		if (bpf_usdt_arg(ctx, which - 1, &v)) {
			return false;
		}
		*key = (__u64)v;
		return true;
	}
	switch (which) {
	case 1:
		*key = PT_REGS_PARM1_CORE(ctx);
		break;
	case 2:
		*key = PT_REGS_PARM2_CORE(ctx);
		break;
	case 3:
		*key = PT_REGS_PARM3_CORE(ctx);
		break;
	case 4:
		*key = PT_REGS_PARM4_CORE(ctx);
		break;
	default:
		*key = PT_REGS_PARM5_CORE(ctx);
		break;
	}
	return true;
}

/* A keyed request's probe: the start of a tracked thread's, or the end of any. */
static __always_inline bool kreq_probe(struct pt_regs *ctx, __u64 cookie, bool usdt)
{
	struct task_struct *task;
	struct task_state *s;
	__u64 key;

	if (!((cookie >> LS_REQ_COOKIE_KEY_SHIFT) & LS_REQ_COOKIE_KEY_MASK)) {
		return false;
	}
	if (!kreq_key_of(ctx, cookie, usdt, &key)) {
		return true;
	}
	task = current_task();
	if (cookie & LS_REQ_COOKIE_END) {
		kreq_end(task, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT), key);
		return true;
	}
	s = task_state(task, true);
	if (s) {
		kreq_start(task, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT), key);
	}
	return true;
}

static __always_inline void request_probe(__u64 cookie, __u64 arg, bool has_arg)
{
	struct task_struct *task = current_task();
	struct task_state *s = task_state(task, true);

	if (!s) {
		return;
	}
	if (cookie & LS_REQ_COOKIE_END) {
		request_end(task, s, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT));
	} else {
		request_start(task, s, (__u32)(cookie >> LS_REQ_COOKIE_SHIFT),
			      cookie & LS_REQ_COOKIE_NESTS, arg, has_arg);
	}
}

/* A request's uprobe or uretprobe (attached by user space, its cookie saying which). */
SEC("uprobe")
int ls_req_uprobe(struct pt_regs *ctx)
{
	/* User space refuses uprobe requests without BPF cookies (has_attach_cookie()). */
	if (has_attach_cookie()) {
		__u64 cookie = bpf_get_attach_cookie(ctx);

		if (!kreq_probe(ctx, cookie, false)) {
			request_probe(cookie, 0, false);
		}
	}
	return 0;
}

/* A request's USDT probe: its first argument is the request's (a query's text). */
SEC("usdt")
int ls_req_usdt(struct pt_regs *ctx)
{
	long arg = 0;
	bool has_arg;

	if (kreq_probe(ctx, bpf_usdt_cookie(ctx), true)) {
		return 0;
	}
	has_arg = bpf_usdt_arg_cnt(ctx) > 0 && bpf_usdt_arg(ctx, 0, &arg) == 0;
	request_probe(bpf_usdt_cookie(ctx), (__u64)arg, has_arg);
	return 0;
}

/* The stream socket of @task's descriptor @fd, or 0. */
static __always_inline __u64 fd_sock(struct task_struct *task, int fd)
{
	struct files_struct *files = BPF_CORE_READ(task, files);
	struct file **fds, *f = NULL;
	struct socket *sock;
	struct fdtable *fdt;

	if (fd < 0 || !files) {
		return 0;
	}
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds)) {
		return 0;
	}
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f ||
	    (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) != S_IFSOCK) {
		return 0;
	}
	sock = BPF_CORE_READ(f, private_data);
	/* A stream's: a datagram socket's connect() (a DNS lookup) is not a request's upstream. */
	if (!sock || BPF_CORE_READ(sock, type) != 1 /* SOCK_STREAM */) {
		return 0;
	}
	return (__u64)BPF_CORE_READ(sock, sk);
}

/*
 * A thread with keyed requests pending connects a socket: to its oldest request's upstream (an
 * event loop connects for a request soon after it began it, in order).
 */
SEC("tracepoint/syscalls/sys_enter_connect")
int ls_kreq_connect(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *task = current_task();
	struct kreq_key k = {};
	struct req_state *r;
	struct kreq *v = NULL;
	__u64 sk;
	int i;

	r = task_storage_get(&reqs, task, false);
	if (!r || !r->pend_n) {
		return 0;
	}
	sk = fd_sock(task, (int)ctx->args[0]);
	if (!sk) {
		return 0;
	}
	for (i = 0; i < KREQ_PENDING && r->pend_n; i++) {
		k = r->pend[r->pend_head & (KREQ_PENDING - 1)];
		r->pend_head = (r->pend_head + 1) % KREQ_PENDING;
		r->pend_n--;
		v = bpf_map_lookup_elem(&kreqs, &k);
		if (v) {
			break;
		}
	}
	if (!v) {
		return 0;
	}
	v->sk = sk;
	bpf_map_update_elem(&kreq_socks, &sk, &k, BPF_ANY);
	return 0;
}

/*
 * Data came on a socket a keyed request connected: its writer, on this machine, runs this
 * (loopback delivers in the sender's context), and is the request's upstream.
 */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(ls_kreq_sk_ready, const struct sock *sk)
{
	struct task_struct *task = current_task();
	__u64 key = (__u64)sk;
	struct kreq_key *k;
	struct kreq *v;

	k = bpf_map_lookup_elem(&kreq_socks, &key);
	if (!k || (task_rd(task, flags) & PF_KTHREAD)) {
		return 0;
	}
	v = bpf_map_lookup_elem(&kreqs, k);
	if (!v || (__u32)task_rd(task, tgid) == k->tgid) {
		return 0;
	}
	v->peer_ns = clock_now();
	v->peer_pid = task_rd(task, tgid);
	v->peer_tid = task_rd(task, pid);
	bpf_probe_read_kernel_str(v->peer_comm, sizeof(v->peer_comm), task->comm);
	return 0;
}

/*
 * An on-CPU sample (a cpu-clock perf event per CPU, attached with the first --request): only a
 * thread inside a request is sampled, its kernel and user stacks sent for user space to keep
 * until the request ends, and to use if it was slow.
 */
SEC("perf_event")
int ls_req_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = current_task();
	struct task_state *s;
	struct ls_sample *e;
	long len;

	s = task_storage_get(&states, task, false);
	if (!s || !s->in_req) {
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(LS_STAT_RINGBUF_LOST);
		return 0;
	}
	e->kind = LS_KIND_SAMPLE;
	e->pid = task_rd(task, tgid);
	e->tid = task_rd(task, pid);
	e->ts = clock_now();
	len = bpf_get_stack(ctx, e->kips, sizeof(e->kips), 0);
	e->nr_kips = len > 0 ? len / sizeof(__u64) : 0;
	len = bpf_get_stack(ctx, e->uips, sizeof(e->uips), BPF_F_USER_STACK);
	e->nr_uips = len > 0 ? len / sizeof(__u64) : 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

#endif /* LATSNAP_BPF_REQUESTS_BPF_H */
