/* SPDX-License-Identifier: GPL-2.0 */
/*
 * py311.h - where CPython 3.11 (x86-64) keeps what latsnap reads of a Python thread's frames.
 *
 * The numbers are offsetof() of CPython 3.11's own structs, as its headers declare them
 * (python3.11-dev: /usr/include/python3.11/internal/pycore_runtime.h, pycore_frame.h,
 * cpython/pystate.h, cpython/code.h, cpython/unicodeobject.h, cpython/bytesobject.h).
 * scripts/py311-check.c asserts each against those headers at build time (make), so a header that
 * disagrees fails the build instead of naming frames wrongly. 3.11's internal structs did not
 * change between its patch releases; 3.10 and 3.12 laid them out differently, so latsnap reads
 * only a process whose Py_Version says 3.11.
 */
#ifndef LATSNAP_LIB_PY311_H
#define LATSNAP_LIB_PY311_H

#define LS_PY311_HEX_MASK 0xffff0000UL /* Py_Version's major and minor */
#define LS_PY311_HEX 0x030b0000UL

/* _PyRuntimeState.gilstate.autoTSSkey, a Py_TSS_t: the key of each thread's PyThreadState */
#define LS_PY311_RUNTIME_TSS 592
#define LS_PY311_TSS_INITIALIZED 0 /* int _is_initialized */
#define LS_PY311_TSS_KEY 4 /* pthread_key_t _key */

#define LS_PY311_TSTATE_CFRAME 56 /* PyThreadState.cframe */
#define LS_PY311_CFRAME_CURRENT 8 /* _PyCFrame.current_frame */

/* _PyInterpreterFrame */
#define LS_PY311_FRAME_CODE 32 /* f_code */
#define LS_PY311_FRAME_PREVIOUS 48 /* previous: the caller's frame */
#define LS_PY311_FRAME_PREV_INSTR 56 /* prev_instr: the last instruction it ran */
#define LS_PY311_FRAME_IS_ENTRY 68 /* is_entry: the first frame of its eval call */
#define LS_PY311_FRAME_READ 72 /* the bytes read of a frame: up to is_entry, rounded up */

/* PyCodeObject (and the ob_type of every object) */
#define LS_PY311_OB_TYPE 8
#define LS_PY311_CODE_FIRSTLINENO 72 /* int co_firstlineno */
#define LS_PY311_CODE_FILENAME 112 /* co_filename */
#define LS_PY311_CODE_QUALNAME 128 /* co_qualname */
#define LS_PY311_CODE_LINETABLE 136 /* co_linetable, a bytes object (Objects/locations.md) */
#define LS_PY311_CODE_FIRSTTRACEABLE 168 /* int _co_firsttraceable */
#define LS_PY311_CODE_CODE 184 /* co_code_adaptive: the code units, 2 bytes each */
#define LS_PY311_CODE_READ 192

#define LS_PY311_TYPE_NAME 24 /* PyTypeObject.tp_name */

/* PyASCIIObject / PyCompactUnicodeObject */
#define LS_PY311_STR_LENGTH 16 /* Py_ssize_t length, in code points */
#define LS_PY311_STR_STATE 32 /* interned:2, kind:3, compact:1, ascii:1, ready:1 */
#define LS_PY311_STR_UTF8_LENGTH 48 /* of a compact non-ASCII string */
#define LS_PY311_STR_UTF8 56
#define LS_PY311_STR_ASCII_DATA 48 /* sizeof(PyASCIIObject) */
#define LS_PY311_STR_COMPACT_DATA 72 /* sizeof(PyCompactUnicodeObject) */

/* PyBytesObject */
#define LS_PY311_BYTES_SIZE 16 /* ob_size */
#define LS_PY311_BYTES_DATA 32 /* ob_sval */

#endif /* LATSNAP_LIB_PY311_H */
