// SPDX-License-Identifier: GPL-2.0
/*
 * pyframes.c - CPython 3.11's frames in an unwound user stack. The preload library's handler
 * copies, per Python frame, its code object's address, its last instruction and its is_entry bit
 * (preload/preload.c py_frames()); here, once the report has arrived, each code object is read
 * from the process (process_vm_readv) for its co_qualname, co_filename and location table, and
 * the frames are placed in the native stack at the _PyEval_EvalFrameDefault call that runs them.
 *
 * Read while the process runs on: a code object is checked to be one (its type's tp_name is
 * "code") and what was cached of it is used only while its name, file and table pointers are
 * still the same. A frame whose code object cannot be read stays, named as unknown. Offsets:
 * lib/py311.h.
 */
#include <errno.h>
#include <iconv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "lib/outlier.h"
#include "lib/py311.h"
#include "tracker/phpframes.h"
#include "tracker/pyframes.h"
#include "tracker/rbframes.h"

#define PY_CACHE_SLOTS 1024 /* code objects remembered, by (pid, address) */
#define PY_MAX_STR 4096 /* longest name or path read, in bytes */
#define PY_MAX_TABLE 65536 /* longest location table read */
#define PY_EVAL_SYMBOL "_PyEval_EvalFrameDefault"
#define RB_EVAL_SYMBOL "rb_vm_exec"
#define PHP_EVAL_SYMBOL "execute_ex"

struct py_code {
	pid_t pid;
	uint64_t addr;
	/* what must still hold for the rest to be this code object's */
	uint64_t qualname_ptr, filename_ptr, table_ptr;
	int32_t firstlineno, firsttraceable;
	char *qualname, *filename;
	unsigned char *table;
	size_t table_len;
};

struct pyframes {
	struct py_code slots[PY_CACHE_SLOTS];
	struct rbframes *rb; /* Ruby's iseqs (rbframes.c): its frames come in the same report */
};

/**
 * pyframes_new() - an empty cache of code objects (and of Ruby's iseqs); NULL without memory
 */
struct pyframes *pyframes_new(void)
{
	struct pyframes *pf = calloc(1, sizeof(struct pyframes));

	if (pf) {
		pf->rb = rbframes_new();
		if (!pf->rb) {
			free(pf);
			pf = NULL;
		}
	}
	return pf;
}

static void code_clear(struct py_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->table);
	memset(c, 0, sizeof(*c));
}

/**
 * pyframes_free() - free @pf (NULL: nothing)
 */
void pyframes_free(struct pyframes *pf)
{
	size_t i;

	if (!pf) {
		return;
	}
	for (i = 0; i < PY_CACHE_SLOTS; i++) {
		code_clear(&pf->slots[i]);
	}
	rbframes_free(pf->rb);
	free(pf);
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

static int32_t i32_at(const unsigned char *buf, size_t off)
{
	int32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Whether the object at @obj is of the type named @name (tp_name), as far as memory says. */
static bool is_type(pid_t pid, uint64_t obj, const char *name)
{
	char text[16] = { 0 };
	uint64_t type, tp_name;
	size_t len = strlen(name) + 1;

	if (len > sizeof(text) || read_mem(pid, obj + LS_PY311_OB_TYPE, &type, sizeof(type)) ||
	    read_mem(pid, type + LS_PY311_TYPE_NAME, &tp_name, sizeof(tp_name)) ||
	    read_mem(pid, tp_name, text, len)) {
		return false;
	}
	return !memcmp(text, name, len);
}

/* @len bytes of @from (Latin-1, or UCS-2/UCS-4 little-endian: x86-64) as UTF-8, with iconv. */
static char *to_utf8(const char *from, const char *raw, size_t len)
{
	size_t out_len = len * 2 + 1, left = out_len - 1;
	char *out = calloc(1, out_len), *in = (char *)raw, *at = out;
	iconv_t cd = iconv_open("UTF-8", from);

	if (cd == (iconv_t)-1 || !out || iconv(cd, &in, &len, &at, &left) == (size_t)-1) {
		free(out);
		out = NULL;
	} else {
		*at = '\0';
	}
	if (cd != (iconv_t)-1) {
		iconv_close(cd);
	}
	return out;
}

/*
 * read_str - a str object's text as UTF-8 (a compact string, as every name and path of code
 * is), or NULL when @obj is not one or cannot be read.
 */
static char *read_str(pid_t pid, uint64_t obj)
{
	static const char *const kinds[] = { [1] = "ISO-8859-1", [2] = "UCS-2LE", [4] = "UCS-4LE" };
	unsigned char head[LS_PY311_STR_COMPACT_DATA], state;
	char *text = NULL, *raw = NULL;
	uint64_t len, utf8;
	unsigned int kind;

	if (!obj || read_mem(pid, obj, head, LS_PY311_STR_ASCII_DATA)) {
		goto out;
	}
	len = u64_at(head, LS_PY311_STR_LENGTH);
	state = head[LS_PY311_STR_STATE];
	kind = (state >> 2) & 7;
	/* compact and ready; a length a name or a path can have */
	if (!(state & 0x20) || !(state & 0x80) || len > PY_MAX_STR || !is_type(pid, obj, "str")) {
		goto out;
	}
	if (state & 0x40) {
		text = calloc(1, len + 1);
		if (text && read_mem(pid, obj + LS_PY311_STR_ASCII_DATA, text, len)) {
			free(text);
			text = NULL;
		}
		goto out;
	}
	if (read_mem(pid, obj, head, sizeof(head))) {
		goto out;
	}
	utf8 = u64_at(head, LS_PY311_STR_UTF8);
	if (utf8) {
		len = u64_at(head, LS_PY311_STR_UTF8_LENGTH);
		text = len <= PY_MAX_STR ? calloc(1, len + 1) : NULL;
		if (text && read_mem(pid, utf8, text, len)) {
			free(text);
			text = NULL;
		}
		goto out;
	}
	if (kind != 1 && kind != 2 && kind != 4) {
		goto out;
	}
	raw = malloc(len * kind + 1);
	if (raw && !read_mem(pid, obj + LS_PY311_STR_COMPACT_DATA, raw, len * kind)) {
		text = to_utf8(kinds[kind], raw, len * kind);
	}
out:
	free(raw);
	return text;
}

/* A bytes object's contents (the location table), or NULL. */
static unsigned char *read_bytes(pid_t pid, uint64_t obj, size_t *lenp)
{
	unsigned char head[LS_PY311_BYTES_DATA], *data;
	uint64_t len;

	if (!obj || read_mem(pid, obj, head, sizeof(head))) {
		return NULL;
	}
	len = u64_at(head, LS_PY311_BYTES_SIZE);
	if (!len || len > PY_MAX_TABLE || !is_type(pid, obj, "bytes")) {
		return NULL;
	}
	data = malloc(len);
	if (data && read_mem(pid, obj + LS_PY311_BYTES_DATA, data, len)) {
		free(data);
		return NULL;
	}
	*lenp = len;
	return data;
}

/*
 * code_at - what the cache knows of the code object at @addr, read again when it is not there
 * or its name, file or table changed (freed, and another in its place); NULL when @addr is not
 * a readable code object.
 */
static struct py_code *code_at(struct pyframes *pf, pid_t pid, uint64_t addr)
{
	unsigned char head[LS_PY311_CODE_READ];
	struct py_code *c =
		&pf->slots[((addr >> 4) ^ (uint64_t)pid * 2654435761U) % PY_CACHE_SLOTS];
	uint64_t qualname, filename, table;

	if (!addr || read_mem(pid, addr, head, sizeof(head))) {
		return NULL;
	}
	qualname = u64_at(head, LS_PY311_CODE_QUALNAME);
	filename = u64_at(head, LS_PY311_CODE_FILENAME);
	table = u64_at(head, LS_PY311_CODE_LINETABLE);
	if (c->pid == pid && c->addr == addr && c->qualname_ptr == qualname &&
	    c->filename_ptr == filename && c->table_ptr == table &&
	    c->firstlineno == i32_at(head, LS_PY311_CODE_FIRSTLINENO)) {
		return c;
	}
	code_clear(c);
	if (!is_type(pid, addr, "code")) {
		return NULL;
	}
	c->qualname = read_str(pid, qualname);
	c->filename = read_str(pid, filename);
	c->table = read_bytes(pid, table, &c->table_len);
	if (!c->qualname || !c->filename) {
		code_clear(c);
		return NULL;
	}
	c->pid = pid;
	c->addr = addr;
	c->qualname_ptr = qualname;
	c->filename_ptr = filename;
	c->table_ptr = table;
	c->firstlineno = i32_at(head, LS_PY311_CODE_FIRSTLINENO);
	c->firsttraceable = i32_at(head, LS_PY311_CODE_FIRSTTRACEABLE);
	return c;
}

/* A varint of the location table: 6 bits a byte, low first, 0x40 when another follows. */
static bool varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	unsigned char b;

	do {
		if (*p >= end || shift > 60) {
			return false;
		}
		b = *(*p)++;
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return true;
}

/*
 * line_of - the line of code unit @index of @c, from its location table (CPython 3.11's
 * Objects/locations.md): each entry covers 1..8 code units and moves the line by a delta. 0 when
 * the table says none, or cannot be read that far.
 */
static uint32_t line_of(const struct py_code *c, uint64_t index)
{
	const unsigned char *p = c->table, *end = c->table + c->table_len;
	int64_t line = c->firstlineno, delta;
	unsigned int code, len;
	uint64_t pos = 0, v, skip;

	while (p && p < end) {
		if (!(*p & 0x80)) {
			return 0;
		}
		code = (*p >> 3) & 15;
		len = (*p & 7) + 1;
		p++;
		delta = 0;
		skip = 0;
		if (code == 14 || code == 13) {
			if (!varint(&p, end, &v)) {
				return 0;
			}
			delta = (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
			/* the long form's end line, column and end column */
			for (skip = code == 14 ? 3 : 0; skip; skip--) {
				if (!varint(&p, end, &v)) {
					return 0;
				}
			}
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
			p += 2;
		} else if (code < 10) {
			p += 1;
		}
		line += delta;
		if (index < pos + len) {
			return code == 15 || line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		}
		pos += len;
	}
	return 0;
}

/*
 * py_frame - the Python frame @i of @report as an outlier frame into @f. Return: 1 when it is
 * one to show, 0 when CPython itself would not (a frame pushed whose code has not started),
 * -ENOMEM.
 */
static int py_frame(struct pyframes *pf, pid_t pid, const struct ls_py_frame *py,
		    struct outlier_frame *f)
{
	struct py_code *c = code_at(pf, pid, py->code);
	uint64_t start = py->code + LS_PY311_CODE_CODE;
	int64_t index;

	f->interp = true;
	f->line = 0;
	if (!c) {
		return outlier_frame_set(f, py->code, NULL, 0, NULL) ?: 1;
	}
	index = py->instr >= start ? (int64_t)((py->instr - start) / 2) : -1;
	if (index < c->firsttraceable) {
		return 0;
	}
	f->line = line_of(c, (uint64_t)index);
	return outlier_frame_set(f, py->code, c->qualname, 0, c->filename) ?: 1;
}

static bool is_eval_frame(const struct outlier_frame *f, const char *eval)
{
	return !f->interp && f->symbol && !strcmp(f->symbol, eval);
}

/**
 * pyframes_insert() - put the Python frames of @report into @frames, the native stack of the
 * same report (innermost first): each _PyEval_EvalFrameDefault frame gets, on its inner side,
 * the Python frames its call runs (up to and including the next one with is_entry). Python frames
 * beyond the native stack's last eval frame (a truncated unwind) are left out. A report of Ruby
 * frames (LS_RB_MAGIC) goes the same way, at the rb_vm_exec frames (named by rbframes.c), and
 * one of PHP frames (LS_PHP_MAGIC) at the execute_ex frames (phpframes.c).
 *
 * Return: 0 (also when the report holds no Python frames), or -ENOMEM.
 */
int pyframes_insert(struct pyframes *pf, pid_t pid, const struct ls_unwind_report *report,
		    struct outlier_frames *frames)
{
	unsigned int nr_py = report->py_nr < LS_PY_MAX_FRAMES ? report->py_nr : LS_PY_MAX_FRAMES;
	bool ruby = report->py_magic == LS_RB_MAGIC, php = report->py_magic == LS_PHP_MAGIC;
	const char *eval = ruby ? RB_EVAL_SYMBOL : php ? PHP_EVAL_SYMBOL : PY_EVAL_SYMBOL;
	struct outlier_frames out = { 0 };
	unsigned int p = 0;
	size_t i, n = 0;
	int ret = 0;

	if (!pf || (report->py_magic != LS_PY_MAGIC && !ruby && !php) || !nr_py) {
		return 0;
	}
	ret = outlier_frames_alloc(&out, frames->nr + nr_py);
	for (i = 0; !ret && i < frames->nr; i++) {
		while (is_eval_frame(&frames->v[i], eval) && p < nr_py && !ret) {
			bool entry = report->py_entry & (1U << p);

			if (ruby) {
				ret = rbframes_frame(pf->rb, pid, &report->py[p++], &out.v[n]);
			} else if (php) {
				ret = phpframes_frame(pid, &report->py[p++], &out.v[n]);
			} else {
				ret = py_frame(pf, pid, &report->py[p++], &out.v[n]);
			}
			if (ret == 1) {
				n++;
				ret = 0;
			}
			if (entry) {
				break;
			}
		}
		/* The native frame moves over, strings and all. */
		out.v[n++] = frames->v[i];
		frames->v[i] = (struct outlier_frame){ 0 };
	}
	out.nr = n;
	if (ret) {
		outlier_frames_free(&out);
		return ret;
	}
	outlier_frames_move(frames, &out);
	return 0;
}
