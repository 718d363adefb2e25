// SPDX-License-Identifier: GPL-2.0
/*
 * requests.c - request outliers (record --request): the probe pairs attached, and at each
 * request's end (LS_KIND_REQUEST) the outlier made, with the waits its thread sent as its parts
 * (kept by deliver.c until then) and its CPU profile from the on-CPU samples (LS_KIND_SAMPLE).
 * request.c reads the pairs' text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracker/decode.h"
#include "tracker/request.h"
#include "tracker/tracker-int.h"
#include "latsnap.skel.h"
#include "tracker/usyms.h"
#include "lib/outlier.h"
#include "lib/util.h"

/* On-CPU samples of requests not ended yet, at most: 40 s of one CPU (the oldest go first). */
#define REQ_SAMPLES_MAX 4096

static int by_start(const void *a, const void *b)
{
	const struct outlier *x = *(struct outlier *const *)a, *y = *(struct outlier *const *)b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The start probe's argument as text: printable bytes kept, the rest as '?'. */
static void request_arg(const struct ls_request *r, char *text, size_t size)
{
	size_t i;

	if (r->arg_kind == LS_REQ_ARG_NUMBER) {
		snprintf(text, size, "%llu", (unsigned long long)r->arg_num);
		return;
	}
	snprintf(text, size, "%.*s", LS_REQ_ARG_LEN - 1, r->arg);
	for (i = 0; text[i]; i++) {
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) {
			text[i] = text[i] == '\n' || text[i] == '\t' ? ' ' : '?';
		}
	}
}

static struct ls_sample *sample_at(struct tracker *tr, unsigned int i)
{
	return &tr->requests.samples[(tr->requests.sample_head + i) % REQ_SAMPLES_MAX];
}

/**
 * requests_keep_sample() - keep an on-CPU sample of a thread inside a request, for the profile of
 *                          that request should it be slow; the oldest goes when all are taken
 */
void requests_keep_sample(struct tracker *tr, const struct ls_sample *sample)
{
	if (!tr->requests.samples) {
		return;
	}
	if (tr->requests.nr_samples == REQ_SAMPLES_MAX) {
		tr->requests.sample_head = (tr->requests.sample_head + 1) % REQ_SAMPLES_MAX;
		tr->requests.nr_samples--;
	}
	*sample_at(tr, tr->requests.nr_samples++) = *sample;
}

static bool same_stack(const struct ls_sample *a, const struct ls_sample *b)
{
	return a->nr_kips == b->nr_kips && a->nr_uips == b->nr_uips &&
	       !memcmp(a->kips, b->kips, a->nr_kips * sizeof(a->kips[0])) &&
	       !memcmp(a->uips, b->uips, a->nr_uips * sizeof(a->uips[0]));
}

/* One stack of a CPU profile: its kernel frames, then its user frames, innermost first. */
static int profile_stack(struct tracker *tr, const struct ls_sample *sample, uint64_t weight_ns,
			 struct outlier *o)
{
	unsigned int nk = sample->nr_kips > LS_MAX_DEPTH ? LS_MAX_DEPTH : sample->nr_kips;
	unsigned int nu = sample->nr_uips > LS_MAX_USER_DEPTH ? LS_MAX_USER_DEPTH : sample->nr_uips;
	struct outlier_frames kf = { 0 }, uf = { 0 };
	struct outlier_kstack *st;
	size_t i;
	int err;

	err = decode_kernel_frames(tr->ksyms, sample->kips, nk, &kf);
	if (!err) {
		err = decode_user_frames(tr->usyms, (pid_t)sample->pid,
					 (const uint64_t *)sample->uips, nu, &uf);
	}
	st = err ? NULL : outlier_add_profile(o, weight_ns);
	err = err ?: st ? outlier_frames_alloc(&st->frames, kf.nr + uf.nr) : -ENOMEM;
	for (i = 0; !err && i < kf.nr + uf.nr; i++) {
		const struct outlier_frame *f = i < kf.nr ? &kf.v[i] : &uf.v[i - kf.nr];

		err = outlier_frame_set(&st->frames.v[i], f->addr, f->symbol, f->offset, f->module);
	}
	outlier_frames_free(&kf);
	outlier_frames_free(&uf);
	return err;
}

static int by_weight(const void *a, const void *b)
{
	const struct outlier_kstack *x = a, *y = b;

	return x->weight_ns > y->weight_ns ? -1 : x->weight_ns < y->weight_ns;
}

/*
 * request_profile - the samples of @r's thread while it lasted, the same stacks together, as
 * @o's CPU profile, heaviest first. Its thread's samples up to its end are used up.
 */
static void request_profile(struct tracker *tr, const struct ls_request *r, struct outlier *o)
{
	unsigned int i, j, n = 0, count;
	struct ls_sample *si, *sj;
	bool *used;

	if (!tr->requests.nr_samples) {
		return;
	}
	used = calloc(tr->requests.nr_samples, sizeof(*used));
	if (!used) {
		return;
	}
	usyms_capture(tr->usyms, (pid_t)r->pid);
	for (i = 0; i < tr->requests.nr_samples; i++) {
		si = sample_at(tr, i);
		if (used[i] || si->tid != r->tid || si->ts < r->start_ns || si->ts > r->end_ns) {
			continue;
		}
		for (count = 0, j = i; j < tr->requests.nr_samples; j++) {
			sj = sample_at(tr, j);
			if (!used[j] && sj->tid == r->tid && sj->ts >= r->start_ns &&
			    sj->ts <= r->end_ns && same_stack(si, sj)) {
				used[j] = true;
				count++;
			}
		}
		profile_stack(tr, si, count * LS_SAMPLE_PERIOD_NS, o);
	}
	if (o->nr_cpu_profile > 1) {
		qsort(o->cpu_profile, o->nr_cpu_profile, sizeof(o->cpu_profile[0]), by_weight);
	}
	/* Keep the others' samples, and this thread's after its end. */
	for (i = 0; i < tr->requests.nr_samples; i++) {
		si = sample_at(tr, i);
		if (!used[i] && (si->tid != r->tid || si->ts > r->end_ns)) {
			*sample_at(tr, n++) = *si;
		}
	}
	tr->requests.nr_samples = n;
	free(used);
}

/* The cpu-clock event of each CPU, for ls_req_sample: once, with the first request pair. */
static int attach_sampling(struct tracker *tr)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = LS_SAMPLE_PERIOD_NS,
	};
	int cpu, fd, err = 0;

	tr->requests.samples = calloc(REQ_SAMPLES_MAX, sizeof(*tr->requests.samples));
	tr->requests.sample_links = calloc((size_t)tr->ncpus, sizeof(*tr->requests.sample_links));
	if (!tr->requests.samples || !tr->requests.sample_links) {
		return -ENOMEM;
	}
	for (cpu = 0; cpu < tr->ncpus; cpu++) {
		fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			/* An offline CPU runs nothing to sample. */
			if (errno != ENODEV) {
				err = -errno;
			}
			continue;
		}
		tr->requests.sample_links[cpu] =
			bpf_program__attach_perf_event(tr->skel->progs.ls_req_sample, fd);
		if (!tr->requests.sample_links[cpu]) {
			err = -errno;
			close(fd);
		}
	}
	if (err) {
		ls_err("tracker: --request: the on-CPU sampling could not start on every CPU: %s "
		       "(request outliers go without CPU profiles there)",
		       strerror(-err));
	}
	return 0;
}

/**
 * requests_on_end() - a request ended: a slow one becomes an outlier of kind request with the
 *                     waits sent as its parts, in time order; a short one's parts are dropped.
 *                     Its thread's outliers still parked for their unwound stacks go first:
 *                     those reports came before it, the ring is in order.
 *
 * Return: 0, or the callback's non-zero return.
 */
/*
 * keyed_on_end - a slow keyed request: an object an event loop served among others, so its
 * thread's time is not its own. Its time is said blocked, waiting for what its loop waited for
 * on its behalf (an upstream, when the socket it connected tells), with what is known of whom.
 */
static int keyed_on_end(struct tracker *tr, const struct ls_request *r)
{
	char text[64];
	struct outlier *o;
	int err = -ENOMEM;

	if (r->pair >= tr->requests.nr) {
		return 0;
	}
	o = outlier_new();
	if (!o) {
		return -ENOMEM;
	}
	o->pid = (int32_t)r->pid;
	o->tid = (int32_t)r->tid;
	snprintf(text, sizeof(text), "%.*s", LS_TASK_COMM_LEN, r->comm);
	if (outlier_set_str(&o->comm, text) ||
	    !outlier_set_request(o, tr->requests.text[r->pair], NULL)) {
		goto out;
	}
	o->start_ns = r->start_ns;
	o->end_ns = r->end_ns;
	o->duration_ns = r->end_ns - r->start_ns;
	o->blocked_ns = o->duration_ns;
	snprintf(text, sizeof(text), "0x%llx", (unsigned long long)r->key);
	if (outlier_set_str(&o->request->key, text)) {
		goto out;
	}
	o->request->others = r->others;
	if (r->peer_tid && r->peer_ns >= r->start_ns && r->peer_ns <= r->end_ns) {
		o->request->upstream_pid = (int32_t)r->peer_pid;
		o->request->upstream_tid = (int32_t)r->peer_tid;
		o->request->upstream_ns = r->peer_ns;
		snprintf(text, sizeof(text), "%.*s", LS_TASK_COMM_LEN, r->peer_comm);
		if (outlier_set_str(&o->request->upstream_comm, text)) {
			goto out;
		}
	}
	outlier_set_cause(o, "request");
	outlier_add_flag(o,
			 "keyed-request: an object its thread (tid %u) served among others (%u "
			 "begun meanwhile): its time is counted blocked, the thread's on-CPU time "
			 "and waits are not split among them",
			 r->tid, r->others);
	return deliver_outlier(tr, o);
out:
	outlier_free(o);
	return err;
}

int requests_on_end(struct tracker *tr, const struct ls_request *r)
{
	struct outlier *parts[REQ_PARTS_MAX];
	char arg[LS_REQ_ARG_LEN + 24];
	struct outlier *o = NULL;
	unsigned int i, n;
	uint64_t dur, cpu, rq;
	int err;

	if (r->keyed) {
		return keyed_on_end(tr, r);
	}
	err = park_release_thread(tr, (pid_t)r->tid);
	if (r->slow && r->pair < tr->requests.nr) {
		o = outlier_new();
	}
	if (o) {
		dur = r->end_ns - r->start_ns;
		cpu = r->on_cpu_ns < dur ? r->on_cpu_ns : dur;
		rq = r->runqueue_ns < dur - cpu ? r->runqueue_ns : dur - cpu;
		o->pid = (int32_t)r->pid;
		o->tid = (int32_t)r->tid;
		snprintf(arg, sizeof(arg), "%.*s", LS_TASK_COMM_LEN, r->comm);
		outlier_set_str(&o->comm, arg);
		o->start_ns = r->start_ns;
		o->end_ns = r->end_ns;
		o->duration_ns = dur;
		o->on_cpu_ns = cpu;
		o->runqueue_ns = rq;
		o->blocked_ns = dur - cpu - rq;
		o->switches = r->switches;
		request_arg(r, arg, sizeof(arg));
		if (!outlier_set_request(o, tr->requests.text[r->pair],
					 r->arg_kind != LS_REQ_ARG_NONE ? arg : NULL)) {
			outlier_free(o);
			o = NULL;
		} else {
			outlier_set_cause(o, "request");
			outlier_add_flag(o,
					 "split-from-scheduler: on-CPU and runqueue time from the "
					 "scheduler's own accounting, within a tick");
		}
	}
	/* Its parts: the waits of its thread sent while it lasted. */
	n = deliver_take_parts(tr, (int32_t)r->tid, r->end_ns, parts);
	for (i = 0; i < n; i++) {
		if (o && parts[i]->start_ns >= r->start_ns) {
			parts[i]->part_of_request = false;
			outlier_add_wait(o, parts[i]);
		} else {
			outlier_free(parts[i]);
		}
	}
	if (!o) {
		return err;
	}
	if (o->nr_waits > 1) {
		qsort(o->waits, o->nr_waits, sizeof(o->waits[0]), by_start);
	}
	if (r->waits > o->nr_waits) {
		outlier_add_flag(o, "waits-lost: %u of its %u waits were not received",
				 r->waits - (unsigned int)o->nr_waits, r->waits);
	}
	request_profile(tr, r, o);
	return err ?: deliver_outlier(tr, o);
}

static const char *const probe_kind_name[] = {
	[REQUEST_USDT] = "usdt",
	[REQUEST_UPROBE] = "uprobe",
	[REQUEST_URETPROBE] = "uretprobe",
};

static struct bpf_link *attach_probe(struct tracker *tr, const struct request_probe *p,
				     __u64 cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, usdt, .usdt_cookie = cookie);
	LIBBPF_OPTS(bpf_uprobe_opts, uprobe, .bpf_cookie = cookie, .func_name = p->name,
		    .retprobe = p->kind == REQUEST_URETPROBE);

	if (p->kind == REQUEST_USDT) {
		return bpf_program__attach_usdt(tr->skel->progs.ls_req_usdt, -1, p->path,
						p->provider, p->name, &usdt);
	}
	return bpf_program__attach_uprobe_opts(tr->skel->progs.ls_req_uprobe, -1, p->path, 0,
					       &uprobe);
}

/*
 * attach_keyed - with the first keyed pair, what finds a keyed request's upstream: the connect()
 * its loop makes for it, and the data that comes on that socket (Linux 6.5's sk_data_ready;
 * without it, no upstream is named).
 */
static int attach_keyed(struct tracker *tr)
{
	struct bpf_program *ready = tr->skel->progs.ls_kreq_sk_ready;

	if (tr->requests.kreq_links[0]) {
		return 0;
	}
	tr->requests.kreq_links[0] = bpf_program__attach(tr->skel->progs.ls_kreq_connect);
	if (!tr->requests.kreq_links[0]) {
		ls_err("tracker: keyed --request: cannot attach to connect(): %s", strerror(errno));
		return -1;
	}
	if (bpf_program__autoload(ready)) {
		tr->requests.kreq_links[1] = bpf_program__attach(ready);
	}
	if (!tr->requests.kreq_links[1]) {
		ls_verbose("tracker: keyed --request: no sk_data_ready tracepoint (Linux 6.5): "
			   "requests name no upstream");
	}
	return 0;
}

/**
 * tracker_add_request() - follow the requests @spec delimits, in every tracked process that runs
 *                         its probes' objects (after tracker_attach())
 *
 * A request as long as the threshold is an outlier of kind request; the waits of its thread
 * inside it, down to the context floor, idle-list syscalls included, are its parts, not outliers
 * of their own.
 *
 * Return: 0, -E2BIG beyond LS_MAX_REQUESTS pairs, or the error of a probe that could not be
 * attached (said on stderr).
 */
int tracker_add_request(struct tracker *tr, const struct request_spec *spec)
{
	const struct request_probe *probes[2] = { &spec->start, &spec->end };
	unsigned int i = tr->requests.nr, k;
	struct bpf_link *link;
	__u64 cookie;
	bool nests;
	int err;

	if (i == LS_MAX_REQUESTS) {
		ls_err("tracker: --request '%s': at most %d probe pairs", spec->text,
		       LS_MAX_REQUESTS);
		return -E2BIG;
	}
	if (!tr->has_attach_cookie) {
		struct utsname uts;

		if (uname(&uts)) {
			snprintf(uts.release, sizeof(uts.release), "?");
		}
		ls_err("tracker: --request '%s': this kernel (%s) lacks BPF cookies "
		       "(bpf_get_attach_cookie(), Linux 5.15), which tell one request probe from "
		       "another",
		       spec->text, uts.release);
		return -ENOTSUP;
	}
	if (!tr->requests.sample_links && attach_sampling(tr)) {
		return -ENOMEM;
	}
	/* The entry and return of one function nest (recursion); other pairs do not. */
	nests = spec->start.kind == REQUEST_UPROBE && spec->end.kind == REQUEST_URETPROBE &&
		!strcmp(spec->start.path, spec->end.path) &&
		!strcmp(spec->start.name, spec->end.name);
	cookie = ((__u64)i << LS_REQ_COOKIE_SHIFT) | (nests ? LS_REQ_COOKIE_NESTS : 0);
	if (spec->start.key != LS_REQ_KEY_THREAD && attach_keyed(tr)) {
		return -errno;
	}
	for (k = 0; k < 2; k++) {
		link = attach_probe(tr, probes[k],
				    cookie | (k ? LS_REQ_COOKIE_END : 0) |
					    ((__u64)probes[k]->key << LS_REQ_COOKIE_KEY_SHIFT));
		if (!link) {
			err = -errno;
			ls_err("tracker: --request '%s': cannot attach %s:%s%s%s:%s: %s",
			       spec->text, probe_kind_name[probes[k]->kind], probes[k]->path,
			       probes[k]->provider ? ":" : "",
			       probes[k]->provider ? probes[k]->provider : "", probes[k]->name,
			       err == -ENOENT ? "no such file, symbol or probe" : strerror(-err));
			return err;
		}
		tr->requests.links[2 * i + k] = link;
	}
	for (k = 0; spec->start.key != LS_REQ_KEY_THREAD && k < 2; k++) {
		char *real = realpath(probes[k]->path, NULL);

		if (real) {
			tr->requests.kreq_paths[tr->requests.nr_kreq_paths++] = real;
		}
	}
	tr->requests.text[i] = strdup(spec->text);
	if (!tr->requests.text[i]) {
		return -ENOMEM;
	}
	tr->requests.nr++;
	return 0;
}

/**
 * requests_free() - detach the request probes and the sampling, and free what they left
 */
void requests_free(struct tracker *tr)
{
	unsigned int i;

	for (i = 0; i < 2 * LS_MAX_REQUESTS; i++) {
		bpf_link__destroy(tr->requests.links[i]);
	}
	bpf_link__destroy(tr->requests.kreq_links[0]);
	bpf_link__destroy(tr->requests.kreq_links[1]);
	for (i = 0; tr->requests.sample_links && i < (unsigned int)tr->ncpus; i++) {
		bpf_link__destroy(tr->requests.sample_links[i]);
	}
	free(tr->requests.sample_links);
	free(tr->requests.samples);
	for (i = 0; i < tr->requests.nr; i++) {
		free(tr->requests.text[i]);
	}
	for (i = 0; i < tr->requests.nr_kreq_paths; i++) {
		free(tr->requests.kreq_paths[i]);
	}
}
