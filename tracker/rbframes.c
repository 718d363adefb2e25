// SPDX-License-Identifier: GPL-2.0
/*
 * rbframes.c - Ruby 3.1's frames in an unwound user stack. The preload library's handler copies,
 * per Ruby control frame, its iseq and pc (preload/preload.c rb_frames()); here each iseq is read
 * from the process (process_vm_readv) for its label (the method's name, "block in serve",
 * "<main>"), its path, and the line of the pc, as rb_vm_get_sourceline() finds it. pyframes.c
 * places the frames at the rb_vm_exec call that runs them.
 *
 * Read while the process runs on: an iseq is checked to be one (an imemo of the iseq kind) and
 * what was cached of it is used only while its body, label and path are still the same. A frame
 * whose iseq cannot be read stays, named as unknown. Offsets: lib/rb31.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "lib/outlier.h"
#include "lib/rb31.h"
#include "tracker/rbframes.h"

#define RB_CACHE_SLOTS 1024 /* iseqs remembered, by (pid, address) */
#define RB_MAX_STR 4096 /* longest label or path read, in bytes */

struct rb_iseq {
	pid_t pid;
	uint64_t addr;
	/* what must still hold for the rest to be this iseq's */
	uint64_t body, label_ptr, path_ptr;
	unsigned char head[LS_RB31_BODY_READ]; /* the body, as read */
	char *label, *path;
};

struct rbframes {
	struct rb_iseq slots[RB_CACHE_SLOTS];
};

/**
 * rbframes_new() - an empty cache of iseqs; NULL without memory
 */
struct rbframes *rbframes_new(void)
{
	return calloc(1, sizeof(struct rbframes));
}

static void iseq_clear(struct rb_iseq *c)
{
	free(c->label);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

/**
 * rbframes_free() - free @rf (NULL: nothing)
 */
void rbframes_free(struct rbframes *rf)
{
	size_t i;

	if (!rf) {
		return;
	}
	for (i = 0; i < RB_CACHE_SLOTS; i++) {
		iseq_clear(&rf->slots[i]);
	}
	free(rf);
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t u64_at(const unsigned char *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const unsigned char *buf, size_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/*
 * read_str - a String's bytes (Ruby keeps labels and paths as UTF-8 or ASCII), or NULL when
 * @obj is not a String or cannot be read. An Array (a pathobj [path, realpath]) gives its path.
 */
static char *read_str(pid_t pid, uint64_t obj, bool array_ok)
{
	unsigned char head[40]; /* an RVALUE: flags, klass and three words */
	uint64_t flags, len, ptr;
	char *text;

	if (!obj || (obj & 7) || read_mem(pid, obj, head, sizeof(head))) {
		return NULL;
	}
	flags = u64_at(head, 0);
	if ((flags & LS_RB31_T_MASK) == LS_RB31_T_ARRAY && array_ok) {
		if (flags & LS_RB31_FL_USER1) {
			obj = u64_at(head, LS_RB31_ARY_EMBED);
		} else if (read_mem(pid, u64_at(head, LS_RB31_ARY_PTR), &obj, sizeof(obj))) {
			return NULL;
		}
		return read_str(pid, obj, false);
	}
	if ((flags & LS_RB31_T_MASK) != LS_RB31_T_STRING) {
		return NULL;
	}
	if (flags & LS_RB31_FL_USER1) {
		len = u64_at(head, LS_RB31_STR_LEN);
		ptr = u64_at(head, LS_RB31_STR_PTR);
	} else {
		len = (flags >> LS_RB31_STR_EMBED_SHIFT) & 0x1f;
		ptr = obj + LS_RB31_STR_EMBED;
	}
	if (len > RB_MAX_STR) {
		return NULL;
	}
	text = calloc(1, len + 1);
	if (text && read_mem(pid, ptr, text, len)) {
		free(text);
		text = NULL;
	}
	return text;
}

/*
 * iseq_at - what the cache knows of the iseq at @addr, read again when it is not there or its
 * body, label or path changed (freed, and another in its place); NULL when @addr is not a
 * readable iseq.
 */
static struct rb_iseq *iseq_at(struct rbframes *rf, pid_t pid, uint64_t addr)
{
	struct rb_iseq *c =
		&rf->slots[((addr >> 4) ^ (uint64_t)pid * 2654435761U) % RB_CACHE_SLOTS];
	unsigned char head[LS_RB31_BODY_READ];
	uint64_t iseq[3], body;

	if (!addr || read_mem(pid, addr, iseq, sizeof(iseq)) ||
	    (iseq[0] & LS_RB31_T_MASK) != LS_RB31_T_IMEMO ||
	    ((iseq[0] >> LS_RB31_IMEMO_SHIFT) & LS_RB31_IMEMO_MASK) != LS_RB31_IMEMO_ISEQ) {
		return NULL;
	}
	body = iseq[LS_RB31_ISEQ_BODY / 8];
	if (!body || read_mem(pid, body, head, sizeof(head))) {
		return NULL;
	}
	if (c->pid == pid && c->addr == addr && c->body == body &&
	    c->label_ptr == u64_at(head, LS_RB31_BODY_LABEL) &&
	    c->path_ptr == u64_at(head, LS_RB31_BODY_PATHOBJ)) {
		/* The line tables may have been encoded since: keep the body as it is now. */
		memcpy(c->head, head, sizeof(head));
		return c;
	}
	iseq_clear(c);
	c->label = read_str(pid, u64_at(head, LS_RB31_BODY_LABEL), false);
	c->path = read_str(pid, u64_at(head, LS_RB31_BODY_PATHOBJ), true);
	if (!c->label || !c->path) {
		iseq_clear(c);
		return NULL;
	}
	c->pid = pid;
	c->addr = addr;
	c->body = body;
	c->label_ptr = u64_at(head, LS_RB31_BODY_LABEL);
	c->path_ptr = u64_at(head, LS_RB31_BODY_PATHOBJ);
	memcpy(c->head, head, sizeof(head));
	return c;
}

/*
 * succ_rank - Ruby's succ_index_lookup() (iseq.c): how many recorded positions are <= @pos, from
 * the rank dictionary at @table; -1 when it cannot be read.
 */
static int64_t succ_rank(pid_t pid, uint64_t table, uint64_t pos)
{
	unsigned char block[LS_RB31_SUCC_BLOCK_SIZE];
	uint64_t word, bits, small;
	unsigned int bit, sb;

	if (pos < LS_RB31_SUCC_IMM_SIZE) {
		if (read_mem(pid, table + (pos / 9) * 8, &word, sizeof(word))) {
			return -1;
		}
		return (int64_t)((word >> ((pos % 9) * 7)) & 0x7f);
	}
	pos -= LS_RB31_SUCC_IMM_SIZE;
	if (read_mem(pid, table + LS_RB31_SUCC_PART + (pos / 512) * LS_RB31_SUCC_BLOCK_SIZE, block,
		     sizeof(block))) {
		return -1;
	}
	bit = pos % 512;
	sb = bit / 64;
	small = u64_at(block, LS_RB31_SUCC_BLOCK_SMALL);
	bits = u64_at(block, LS_RB31_SUCC_BLOCK_BITS + sb * 8) << (63 - bit % 64);
	return (int64_t)u32_at(block, 0) + (sb ? (int64_t)((small >> ((sb - 1) * 9)) & 0x1ff) : 0) +
	       __builtin_popcountll(bits);
}

/*
 * line_of - the line of @pc in @c, as rb_vm_get_sourceline() says it: the position before the
 * pc (it points past the instruction running), and the last line-table entry at or before it.
 * 0 when the tables say none, or cannot be read.
 */
static uint32_t line_of(pid_t pid, const struct rb_iseq *c, uint64_t pc)
{
	uint64_t encoded = u64_at(c->head, LS_RB31_BODY_ENCODED);
	uint64_t insns = u64_at(c->head, LS_RB31_BODY_INSNS);
	uint64_t positions = u64_at(c->head, LS_RB31_BODY_POSITIONS);
	uint32_t size = u32_at(c->head, LS_RB31_BODY_INSNS_SIZE), at, lo, hi;
	uint64_t pos;
	int64_t index;
	int32_t line;

	if (!pc || pc < encoded || !size || (pc - encoded) % 8) {
		return 0;
	}
	pos = (pc - encoded) / 8;
	if (pos > u32_at(c->head, LS_RB31_BODY_ISEQ_SIZE)) {
		return 0;
	}
	if (pos) {
		pos--;
	}
	if (size == 1) {
		index = 1;
	} else if (positions) {
		/* Not yet encoded: the entries' positions, ascending. */
		for (lo = 0, hi = size; lo < hi;) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (read_mem(pid, positions + mid * 4ULL, &at, sizeof(at))) {
				return 0;
			}
			if (at <= pos) {
				lo = mid + 1;
			} else {
				hi = mid;
			}
		}
		index = lo;
	} else {
		index = succ_rank(pid, u64_at(c->head, LS_RB31_BODY_SUCC), pos);
	}
	if (index < 1 || index > size ||
	    read_mem(pid,
		     insns + (uint64_t)(index - 1) * LS_RB31_INSN_ENTRY_SIZE + LS_RB31_INSN_LINE,
		     &line, sizeof(line))) {
		return 0;
	}
	return line > 0 ? (uint32_t)line : 0;
}

/**
 * rbframes_frame() - the Ruby frame @rb (an iseq and its pc) of process @pid as an outlier
 * frame into @f: the iseq's label as its symbol, its path as its module, the pc's line.
 *
 * Return: 1 (a frame to show), or -ENOMEM.
 */
int rbframes_frame(struct rbframes *rf, pid_t pid, const struct ls_py_frame *rb,
		   struct outlier_frame *f)
{
	struct rb_iseq *c = iseq_at(rf, pid, rb->code);

	f->interp = true;
	f->line = 0;
	if (!c) {
		return outlier_frame_set(f, rb->code, NULL, 0, NULL) ?: 1;
	}
	f->line = line_of(pid, c, rb->instr);
	return outlier_frame_set(f, rb->code, c->label, 0, c->path) ?: 1;
}
