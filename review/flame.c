// SPDX-License-Identifier: GPL-2.0
/*
 * flame.c - `latsnap flame [--svg FILE] [--grep PATTERN] DIR`
 *
 * One folded line per distinct stack (the contract's form, which flamegraph.pl, inferno and
 * speedscope read), each kernel stack of each outlier weighted by the time the thread waited in
 * it (a wait reported more than once, see record --hang, counted once), under the outlier's
 * user stack: the user frames say what the code asked for, the kernel frames where it waited.
 * A request (record --request) adds the stacks of its waits, weighted the same way, and the
 * sampled stacks of its CPU profile, each weighted by the CPU time it stands for.
 * The SVG is drawn here rather than by flamegraph.pl so that a machine without Perl scripts
 * gets one; it is plain SVG with a <title> tooltip on each frame.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/frames.h"
#include "lib/demangle.h"
#include "lib/options.h"
#include "lib/outlier.h"
#include "lib/text.h"
#include "review/flame.h"
#include "review/snapshots.h"
#include "lib/util.h"

#define SVG_WIDTH 1200
#define SVG_ROW 16
#define SVG_PAD 10
#define SVG_TOP 34
#define SVG_CHAR_PX 7
/* Rectangles narrower than this are not drawn: they would be invisible and bloat the file. */
#define SVG_MIN_PX 0.1

/* The options, in --help's order: getopt_long()'s tables and --help are made from them. */
static const struct ls_option flame_options[] = {
	{ "svg", 's', required_argument, 0, NULL, "FILE",
	  "also draw the flame graph into FILE (self-contained SVG)" },
	{ "grep", 'g', required_argument, 0, NULL, "PATTERN",
	  "only outliers with a user frame whose symbol matches PATTERN\n"
	  "(POSIX extended regular expression)" },
	{ "host", 'H', required_argument, 0, NULL, "NAME",
	  "only the snapshots recorded on host NAME (DIR an lttng-relayd\n"
	  "output tree of many hosts, say)" },
	{ "help", 'h', no_argument, 0, NULL, NULL, "this help" },
};

#define NR_FLAME_OPTIONS (sizeof(flame_options) / sizeof(flame_options[0]))

static const char flame_usage_head[] =
	"Usage: latsnap flame [--svg FILE] [--grep PATTERN] [--host NAME] DIR\n"
	"\n"
	"The stacks of every outlier of the snapshots in DIR, folded one per line:\n"
	"  comm;outermost user frame;...;innermost user frame;-;outermost kernel frame;...;"
	"innermost kernel frame WEIGHT_NS\n"
	"each kernel stack weighted by the time waited in it (for flamegraph.pl, inferno,\n"
	"speedscope); a request's waits likewise, and its sampled on-CPU stacks by their CPU\n"
	"time.\n"
	"\n";

static void flame_help(void)
{
	fputs(flame_usage_head, stdout);
	ls_options_usage(stdout, flame_options, NR_FLAME_OPTIONS, 22);
}

/* Append @s to the growing line, as a frame name: ';' would split it, control bytes and
 * invalid UTF-8 would break the SVG and line-based readers, and a terminal would act on them. */
static int put_name(char **buf, size_t *len, size_t *cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t need = strlen(s) + 2, k, n;
	char *grown, seq[5];
	bool valid;
	int ret = 0;

	if (*len + need >= *cap) {
		grown = realloc(*buf, (*len + need) * 2);
		if (!grown) {
			ret = -ENOMEM;
			goto out;
		}
		*buf = grown;
		*cap = (*len + need) * 2;
	}
	if (*len) {
		(*buf)[(*len)++] = ';';
	}
	while (*p) {
		if (*p < 0x20 || *p == 0x7f || *p == ';') {
			(*buf)[(*len)++] = *p == ';' ? ':' : '?';
			p++;
			continue;
		}
		if (*p < 0x80) {
			(*buf)[(*len)++] = (char)*p++;
			continue;
		}
		/* A UTF-8 sequence is copied whole if well-formed, else its first byte is '?'. */
		n = *p >= 0xf5 ? 0 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;
		valid = n > 0;
		for (k = 1; valid && k < n; k++) {
			valid = (p[k] & 0xc0) == 0x80;
		}
		if (valid && n == 3 &&
		    ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))) {
			valid = false; /* overlong, or a surrogate */
		}
		/* U+FFFE and U+FFFF are well-formed UTF-8 but not XML characters. */
		if (valid && n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe) {
			valid = false;
		}
		if (valid && n == 4 &&
		    ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))) {
			valid = false;
		}
		/* A C1 control, a bidirectional or line-breaking character: what text escapes. */
		if (valid) {
			memcpy(seq, p, n);
			seq[n] = '\0';
			valid = ls_text_escape(NULL, 0, seq) == n;
		}
		if (!valid) {
			(*buf)[(*len)++] = '?';
			p++;
			continue;
		}
		memcpy(*buf + *len, p, n);
		*len += n;
		p += n;
	}
	(*buf)[*len] = '\0';
out:
	return ret;
}

/* A frame's name: its symbol, demangled, or its address. */
static int put_frame(char **buf, size_t *len, size_t *cap, const struct outlier_frame *frame)
{
	const char *sym = frame->symbol;
	char *demangled = sym && !frame->interp ? ls_demangle(sym) : NULL;
	char addr[LS_INTERP_NAME_LEN];
	int ret;

	if (frame->interp) {
		outlier_interp_name(frame, addr, sizeof(addr));
		sym = addr;
	} else if (!sym || !*sym) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, frame->addr);
		sym = addr;
	}
	ret = put_name(buf, len, cap, demangled ? demangled : sym);
	free(demangled);
	return ret;
}

/* @frames, outermost first, from the @skip-th innermost one on. */
static int put_frames(char **buf, size_t *len, size_t *cap, const struct outlier_frames *frames,
		      size_t skip)
{
	size_t k;
	int ret = 0;

	for (k = frames->nr; !ret && k > skip; k--) {
		ret = put_frame(buf, len, cap, &frames->v[k - 1]);
	}
	return ret;
}

static bool user_matches(const struct outlier_frames *frames, const regex_t *grep)
{
	const char *sym;
	char *demangled;
	bool ret = false;
	size_t i;

	for (i = 0; i < frames->nr && !ret; i++) {
		sym = frames->v[i].symbol;
		if (!sym) {
			continue;
		}
		demangled = ls_demangle(sym);
		ret = !regexec(grep, demangled ? demangled : sym, 0, NULL, 0);
		free(demangled);
	}
	return ret;
}

static int push(struct flame *f, char *line, uint64_t weight)
{
	struct flame_stack *grown;

	if (f->nr == f->cap) {
		grown = realloc(f->stacks, (f->cap ? f->cap * 2 : 64) * sizeof(*grown));
		if (!grown) {
			return -ENOMEM;
		}
		f->stacks = grown;
		f->cap = f->cap ? f->cap * 2 : 64;
	}
	f->stacks[f->nr].line = line;
	f->stacks[f->nr].weight_ns = weight;
	f->nr++;
	return 0;
}

/* Fold the kernel stacks of @o, each under its comm (@comm when it has none) and user frames. */
static int add_outlier(struct flame *f, const struct outlier *o, const char *comm)
{
	const struct outlier_kstack *st;
	size_t j, len = 0, cap = 256, base;
	char *buf = malloc(cap);
	int ret = -ENOMEM;

	if (!buf) {
		goto out;
	}
	/* The part shared by all its kernel stacks: comm and user frames. */
	buf[0] = '\0';
	ret = put_name(&buf, &len, &cap, o->comm ? o->comm : comm);
	ret = ret ?: put_frames(&buf, &len, &cap, &o->user_stack.frames, 0);
	ret = ret ?: put_name(&buf, &len, &cap, "-");
	base = len;
	for (j = 0; !ret && j < o->nr_kernel_stacks; j++) {
		st = &o->kernel_stacks[j];
		if (!st->weight_ns || !st->frames.nr) {
			continue;
		}
		len = base;
		buf[len] = '\0';
		ret = put_frames(&buf, &len, &cap, &st->frames, snapshots_kernel_skip(&st->frames));
		if (ret) {
			break;
		}
		ret = push(f, strdup(buf), st->weight_ns);
		if (ret || !f->stacks[f->nr - 1].line) {
			ret = -ENOMEM;
		}
	}
out:
	free(buf);
	return ret;
}

/*
 * Fold one sampled on-CPU stack of request @o: its user frames, "-", its kernel frames (those
 * before the user ones), weighted by its CPU time; through --grep on its user frames.
 */
static int add_sample(struct flame *f, const struct outlier *o, const struct outlier_kstack *st)
{
	struct outlier_frames kernel, user;
	size_t len = 0, cap = 256;
	char *buf;
	int ret;

	if (!st->weight_ns || !st->frames.nr) {
		return 0;
	}
	frames_split_sample(&st->frames, &kernel, &user);
	if (f->grep && !user_matches(&user, f->grep)) {
		return 0;
	}
	buf = malloc(cap);
	if (!buf) {
		return -ENOMEM;
	}
	buf[0] = '\0';
	ret = put_name(&buf, &len, &cap, o->comm ? o->comm : "?");
	ret = ret ?: put_frames(&buf, &len, &cap, &user, 0);
	ret = ret ?: put_name(&buf, &len, &cap, "-");
	ret = ret ?: put_frames(&buf, &len, &cap, &kernel, snapshots_kernel_skip(&kernel));
	ret = ret ?: push(f, buf, st->weight_ns);
	if (ret) {
		free(buf);
	}
	return ret;
}

/*
 * Fold a request: the kernel stacks of each of its waits (through --grep on the wait's user
 * frames) and its CPU profile. Its own stacks only when it has no waits: then they are all
 * there is of where it waited; else they would count its waits twice.
 */
static int add_request(struct flame *f, const struct outlier *o)
{
	const struct outlier *w;
	size_t i;
	int ret = 0;

	for (i = 0; i < o->nr_waits && !ret; i++) {
		w = o->waits[i];
		if (f->grep && !user_matches(&w->user_stack.frames, f->grep)) {
			continue;
		}
		ret = add_outlier(f, w, o->comm ? o->comm : "?");
	}
	for (i = 0; i < o->nr_cpu_profile && !ret; i++) {
		ret = add_sample(f, o, &o->cpu_profile[i]);
	}
	if (!ret && !o->nr_waits && (!f->grep || user_matches(&o->user_stack.frames, f->grep))) {
		ret = add_outlier(f, o, "?");
	}
	return ret;
}

/* Fold the waits @waits, those with a user frame through --grep when it is set. */
static int add_waits(struct flame *f, const struct snapshot_wait *waits, size_t nr)
{
	const struct outlier *o;
	size_t i;
	int ret = 0;

	for (i = 0; i < nr && !ret; i++) {
		o = waits[i].o;
		if (o->kind == OUTLIER_REQUEST) {
			ret = add_request(f, o);
			continue;
		}
		if (f->grep && !user_matches(&o->user_stack.frames, f->grep)) {
			continue;
		}
		ret = add_outlier(f, o, "?");
	}
	return ret;
}

/**
 * flame_add_summary() - fold the stacks of every outlier of a summary
 * @f: where they go
 * @summary: a summary read by snapshots_parse_summary()
 *
 * Each kernel stack with a weight becomes one line: the thread's comm, its user frames
 * outermost first, "-", the kernel frames outermost first (without the BPF glue on top). A wait
 * reported more than once (still-blocked, then ended or unfinished) is folded once, from the
 * report that counts (summary_waits()). A request adds its waits' stacks and its sampled
 * on-CPU stacks (user frames, "-", kernel frames), each weighted by its weight_ns.
 *
 * Return: 0 or -ENOMEM.
 */
int flame_add_summary(struct flame *f, const struct summary *summary)
{
	struct snapshot_wait *waits = NULL;
	size_t nr = 0;
	int ret;

	ret = summary_waits(summary, &waits, &nr);
	if (!ret) {
		ret = add_waits(f, waits, nr);
	}
	free(waits);
	return ret;
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp(((const struct flame_stack *)a)->line, ((const struct flame_stack *)b)->line);
}

/**
 * flame_finish() - sort the stacks and merge equal ones (their weights add up, saturating)
 */
void flame_finish(struct flame *f)
{
	size_t i, out = 0;

	if (!f->nr) {
		return;
	}
	ls_sort(f->stacks, f->nr, sizeof(*f->stacks), cmp_stack);
	for (i = 1; i < f->nr; i++) {
		if (!strcmp(f->stacks[out].line, f->stacks[i].line)) {
			if (__builtin_add_overflow(f->stacks[out].weight_ns, f->stacks[i].weight_ns,
						   &f->stacks[out].weight_ns)) {
				f->stacks[out].weight_ns = UINT64_MAX;
			}
			free(f->stacks[i].line);
			continue;
		}
		f->stacks[++out] = f->stacks[i];
	}
	f->nr = out + 1;
}

/**
 * flame_write_folded() - one "STACK WEIGHT_NS" line per stack
 *
 * Return: 0, or -EIO when @out failed.
 */
int flame_write_folded(FILE *out, const struct flame *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++) {
		fprintf(out, "%s %" PRIu64 "\n", f->stacks[i].line, f->stacks[i].weight_ns);
	}
	return ferror(out) ? -EIO : 0;
}

/* Cut a UTF-8 string at @max bytes at most, on a character boundary. */
static size_t utf8_cut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max) {
		return n;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80) {
		max--;
	}
	return max;
}

enum frame_kind { FRAME_ROOT, FRAME_COMM, FRAME_USER, FRAME_SEP, FRAME_KERNEL };

static unsigned int name_hash(const char *s, size_t n)
{
	unsigned int h = 2166136261U;
	size_t i;

	for (i = 0; i < n; i++) {
		h = (h ^ (unsigned char)s[i]) * 16777619U;
	}
	return h;
}

static void svg_frame(FILE *out, const char *name, size_t nlen, enum frame_kind kind, int depth,
		      int max_depth, uint64_t start, uint64_t end, long double total)
{
	double x = SVG_PAD + (double)((long double)start / total * (SVG_WIDTH - 2 * SVG_PAD));
	double w = (double)((long double)(end - start) / total * (SVG_WIDTH - 2 * SVG_PAD));
	int y = SVG_TOP + (max_depth - depth) * SVG_ROW;
	unsigned int h = name_hash(name, nlen);
	int r = 0, g = 0, b = 0;
	size_t chars;

	if (w < SVG_MIN_PX) {
		return;
	}
	switch (kind) {
	case FRAME_ROOT:
		r = 200, g = 200, b = 200;
		break;
	case FRAME_COMM:
		r = 110 + h % 40, g = 150 + h % 50, b = 220;
		break;
	case FRAME_USER:
		r = 205 + h % 50, g = 100 + (h >> 8) % 130, b = 40 + (h >> 16) % 30;
		break;
	case FRAME_SEP:
		r = 160, g = 160, b = 160;
		break;
	case FRAME_KERNEL:
		r = 80 + h % 40, g = 170 + (h >> 8) % 70, b = 90 + (h >> 16) % 40;
		break;
	}
	fputs("<g><title>", out);
	ls_xml_text(out, name, nlen);
	fprintf(out, " (%" PRIu64 " ns, %.2f%%)</title>", end - start,
		(double)((long double)(end - start) * 100 / total));
	fprintf(out,
		"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
		"rx=\"2\" ry=\"2\"/>",
		x, y, w, SVG_ROW - 1, r, g, b);
	chars = (size_t)(w / SVG_CHAR_PX);
	if (chars >= 3) {
		fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + SVG_ROW - 4);
		if (nlen + 1 <= chars) {
			ls_xml_text(out, name, nlen);
		} else {
			ls_xml_text(out, name, utf8_cut(name, chars - 2));
			fputs("..", out);
		}
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

struct open_frame {
	const char *name;
	size_t len;
	uint64_t start;
	enum frame_kind kind;
};

/* Splits @line into frames: pointers into it and their lengths. */
static size_t split_frames(const char *line, const char **names, size_t *lens, size_t max)
{
	size_t n = 0;
	const char *p = line, *semi;

	while (n < max) {
		semi = strchr(p, ';');
		names[n] = p;
		lens[n] = semi ? (size_t)(semi - p) : strlen(p);
		n++;
		if (!semi) {
			break;
		}
		p = semi + 1;
	}
	return n;
}

/* The SVG's head: its size, the style of its frames, the background and @title. */
static void svg_begin(FILE *out, int height, const char *title)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		"<style>text { font-family: monospace; font-size: 12px; fill: #000; "
		"pointer-events: none; } rect:hover { stroke: #000; stroke-width: 0.5; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%d\" y=\"22\" style=\"font-size: 16px\">",
		SVG_WIDTH, height, SVG_WIDTH, height, SVG_WIDTH, height, SVG_PAD);
	ls_xml_text(out, title, strlen(title));
	fputs("</text>\n", out);
}

/**
 * flame_write_svg() - draw the (finished) stacks as a flame graph
 * @out: where the SVG goes
 * @f: stacks sorted by flame_finish(): equal prefixes are then neighbours, so each frame is one
 *	rectangle, as flamegraph.pl draws it
 * @title: the graph's title
 *
 * Return: 0, -ENOMEM, or -EIO when @out failed.
 */
int flame_write_svg(FILE *out, const struct flame *f, const char *title)
{
	struct open_frame *open = NULL;
	const char **names = NULL;
	size_t *lens = NULL, max_frames = 1, i, n, d, common, open_nr = 0, sep;
	uint64_t x = 0, total = 0;
	int max_depth = 0, ret = 0;
	const char *p;

	for (i = 0; i < f->nr; i++) {
		n = 1;
		for (p = f->stacks[i].line; *p; p++) {
			n += *p == ';';
		}
		max_frames = n > max_frames ? n : max_frames;
		total = total + f->stacks[i].weight_ns < total ? UINT64_MAX :
								 total + f->stacks[i].weight_ns;
	}
	max_depth = (int)max_frames;
	open = calloc(max_frames + 1, sizeof(*open));
	names = calloc(max_frames, sizeof(*names));
	lens = calloc(max_frames, sizeof(*lens));
	if (!open || !names || !lens) {
		ret = -ENOMEM;
		goto out;
	}
	svg_begin(out, SVG_TOP + (max_depth + 1) * SVG_ROW + SVG_PAD, title);
	if (!total) {
		fputs("<text x=\"10\" y=\"60\">no stacks</text>\n", out);
		goto end;
	}
	/* The root; then per stack, close what differs from the previous one and open the rest. */
	open[0] = (struct open_frame){ .name = "all", .len = 3, .start = 0, .kind = FRAME_ROOT };
	open_nr = 1;
	for (i = 0; i < f->nr; i++) {
		if (!f->stacks[i].weight_ns) {
			continue;
		}
		n = split_frames(f->stacks[i].line, names, lens, max_frames);
		for (common = 0; common < n && common + 1 < open_nr; common++) {
			if (open[common + 1].len != lens[common] ||
			    memcmp(open[common + 1].name, names[common], lens[common])) {
				break;
			}
		}
		while (open_nr > common + 1) {
			open_nr--;
			svg_frame(out, open[open_nr].name, open[open_nr].len, open[open_nr].kind,
				  (int)open_nr, max_depth, open[open_nr].start, x,
				  (long double)total);
		}
		sep = n;
		for (d = 0; d < n; d++) {
			if (sep == n && lens[d] == 1 && names[d][0] == '-') {
				sep = d;
			}
			if (d < common) {
				continue;
			}
			open[d + 1] = (struct open_frame){
				.name = names[d],
				.len = lens[d],
				.start = x,
				.kind = d == 0	 ? FRAME_COMM :
					d == sep ? FRAME_SEP :
					d > sep	 ? FRAME_KERNEL :
						   FRAME_USER,
			};
		}
		open_nr = n + 1;
		x = x + f->stacks[i].weight_ns < x ? UINT64_MAX : x + f->stacks[i].weight_ns;
	}
	while (open_nr > 0) {
		open_nr--;
		svg_frame(out, open[open_nr].name, open[open_nr].len, open[open_nr].kind,
			  (int)open_nr, max_depth, open[open_nr].start, x, (long double)total);
	}
end:
	fputs("</svg>\n", out);
	if (ferror(out)) {
		ret = -EIO;
	}
out:
	free(open);
	free(names);
	free(lens);
	return ret;
}

/**
 * flame_free() - release the stacks
 */
void flame_free(struct flame *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++) {
		free(f->stacks[i].line);
	}
	free(f->stacks);
	f->stacks = NULL;
	f->nr = f->cap = 0;
}

struct flame_opts {
	const char *svg;
	const char *pattern;
	const char *host;
};

/* The options into @opts: SNAPSHOTS_GO_ON, or the exit status to stop with. */
static int parse_options(int argc, char **argv, struct flame_opts *opts)
{
	struct option longopts[NR_FLAME_OPTIONS + 1];
	char shortopts[sizeof("+:") + 2 * NR_FLAME_OPTIONS];
	int id;

	optind = 0;
	opterr = 0;
	ls_options_getopt(flame_options, NR_FLAME_OPTIONS, "+:", longopts, shortopts);
	while ((id = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (id) {
		case 's':
			opts->svg = optarg;
			break;
		case 'H':
			opts->host = optarg;
			break;
		case 'g':
			opts->pattern = optarg;
			break;
		case 'h':
			flame_help();
			return 0;
		default:
			snapshots_option_error("flame", id, optopt, argv, optind);
			return 2;
		}
	}
	if (optind != argc - 1) {
		ls_err("flame: %s (see latsnap flame --help)",
		       optind == argc ? "DIR missing" : "one DIR only");
		return 2;
	}
	return SNAPSHOTS_GO_ON;
}

/*
 * The complete snapshots of @set into @f, each wait once however many snapshots report it
 * (snapshots_waits()); the others are named on stderr.
 */
static int add_snapshots(struct flame *f, const struct snapshot_set *set, size_t *complete)
{
	struct snapshot_wait *waits = NULL;
	size_t i, nr = 0;
	int ret;

	for (i = 0; i < set->nr; i++) {
		if (set->snaps[i].state != SNAPSHOT_COMPLETE) {
			ls_err("flame: %s: %s", snapshots_state_name(set->snaps[i].state),
			       set->snaps[i].why);
			continue;
		}
		(*complete)++;
	}
	ret = snapshots_waits(set, &waits, &nr);
	if (!ret) {
		ret = add_waits(f, waits, nr);
	}
	free(waits);
	return ret;
}

/* The flame graph of @f into the file @path; 0, or 1 after saying what failed. */
static int write_svg_file(const char *path, const struct flame *f, const char *dir,
			  const char *pattern)
{
	char title[512];
	FILE *file;
	int rc;

	file = fopen(path, "we");
	if (!file) {
		ls_err("flame: %s: %s", path, strerror(errno));
		return 1;
	}
	snprintf(title, sizeof(title), "latsnap: where the outliers of %s waited%s%s", dir,
		 pattern ? ", through " : "", pattern ? pattern : "");
	rc = flame_write_svg(file, f, title);
	if (fclose(file) || rc) {
		ls_err("flame: %s: %s", path, strerror(rc == -ENOMEM ? ENOMEM : EIO));
		return 1;
	}
	return 0;
}

/**
 * flame_main() - `latsnap flame`
 * @argc: argument count, the command name included
 * @argv: "flame", options, DIR
 *
 * Return: the exit status: 0; 1 when DIR cannot be read, holds no complete snapshot, or the
 * output cannot be written; 2 on a usage error.
 */
int flame_main(int argc, char **argv)
{
	struct flame_opts opts = { 0 };
	struct snapshot_set set = { 0 };
	struct flame f = { 0 };
	size_t complete = 0;
	bool have_re = false;
	char err[256];
	regex_t re;
	int ret, rc;

	ret = parse_options(argc, argv, &opts);
	if (ret != SNAPSHOTS_GO_ON) {
		goto out;
	}
	ret = 0;
	if (opts.pattern) {
		rc = regcomp(&re, opts.pattern, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &re, err, sizeof(err));
			ls_err("flame: --grep '%s': %s", opts.pattern, err);
			ret = 2;
			goto out;
		}
		have_re = true;
		f.grep = &re;
	}
	if (snapshots_load(argv[optind], &set)) {
		ret = 1;
		goto out;
	}
	snapshots_filter_host(&set, opts.host);
	if (add_snapshots(&f, &set, &complete)) {
		ls_err("flame: %s", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	if (!complete) {
		ls_err("flame: %s: %s", set.dir,
		       set.nr ? "no complete snapshot in it" : "no snapshot in it");
		ret = 1;
		goto out;
	}
	flame_finish(&f);
	if (flame_write_folded(stdout, &f) || fflush(stdout) == EOF) {
		ls_err("flame: writing to stdout: %s", strerror(errno));
		ret = 1;
		goto out;
	}
	if (opts.svg) {
		ret = write_svg_file(opts.svg, &f, set.dir, opts.pattern);
	}
out:
	if (have_re) {
		regfree(&re);
	}
	flame_free(&f);
	snapshots_free(&set);
	return ret;
}
