// SPDX-License-Identifier: GPL-2.0
/*
 * phpframes.c - PHP 8.2's frames in an unwound user stack. The preload library's handler copies,
 * per PHP frame, its zend_function and opline (preload/preload.c php_frames()); here each is read
 * from the process (process_vm_readv) for the function's name (Class::method for a method,
 * {main} for a file's top level, as PHP's own backtraces say), its file, and the opline's line.
 * pyframes.c places the frames at the execute_ex call that runs them.
 *
 * Read while the process runs on, without a cache: a function's op_array lives as long as its
 * script (a request, under FPM), which may have ended. What no longer reads as a function with
 * a name and a file stays, named as unknown. Offsets: lib/php82.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "lib/outlier.h"
#include "lib/php82.h"
#include "tracker/phpframes.h"

#define PHP_MAX_STR 4096 /* longest name or path read, in bytes */

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

/* A zend_string's bytes, or NULL when @str is NULL, too long or unreadable. */
static char *read_str(pid_t pid, uint64_t str)
{
	uint64_t len;
	char *text;

	if (!str || read_mem(pid, str + LS_PHP82_STR_LEN, &len, sizeof(len)) || len > PHP_MAX_STR) {
		return NULL;
	}
	text = calloc(1, len + 1);
	if (text && read_mem(pid, str + LS_PHP82_STR_VAL, text, len)) {
		free(text);
		text = NULL;
	}
	return text;
}

/**
 * phpframes_frame() - the PHP frame @php (a zend_function and its opline) of process @pid as an
 * outlier frame into @f: the function's name as its symbol, its file as its module, the
 * opline's line.
 *
 * Return: 1 (a frame to show), or -ENOMEM.
 */
int phpframes_frame(pid_t pid, const struct ls_py_frame *php, struct outlier_frame *f)
{
	char *name = NULL, *scope = NULL, *file = NULL, *symbol = NULL;
	unsigned char fn[LS_PHP82_FN_READ];
	uint64_t ce_name;
	uint32_t line;
	int ret = 1;

	f->interp = true;
	f->line = 0;
	if (read_mem(pid, php->code, fn, sizeof(fn)) ||
	    (fn[LS_PHP82_FN_TYPE] != LS_PHP82_USER_FUNCTION &&
	     fn[LS_PHP82_FN_TYPE] != LS_PHP82_EVAL_CODE)) {
		goto unknown;
	}
	file = read_str(pid, u64_at(fn, LS_PHP82_FN_FILENAME));
	if (!file) {
		goto unknown;
	}
	if (u64_at(fn, LS_PHP82_FN_NAME)) {
		name = read_str(pid, u64_at(fn, LS_PHP82_FN_NAME));
		if (!name) {
			goto unknown;
		}
	}
	if (name && u64_at(fn, LS_PHP82_FN_SCOPE) &&
	    !read_mem(pid, u64_at(fn, LS_PHP82_FN_SCOPE) + LS_PHP82_CE_NAME, &ce_name,
		      sizeof(ce_name))) {
		scope = read_str(pid, ce_name);
	}
	if (asprintf(&symbol, "%s%s%s", scope ? scope : "", scope ? "::" : "",
		     name ? name : "{main}") < 0) {
		symbol = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (php->instr && !read_mem(pid, php->instr + LS_PHP82_OP_LINENO, &line, sizeof(line))) {
		f->line = line;
	}
	ret = outlier_frame_set(f, php->code, symbol, 0, file) ?: 1;
	goto out;
unknown:
	ret = outlier_frame_set(f, php->code, NULL, 0, NULL) ?: 1;
out:
	free(name);
	free(scope);
	free(file);
	free(symbol);
	return ret;
}
