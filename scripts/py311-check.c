// SPDX-License-Identifier: GPL-2.0
/*
 * py311-check.c - lib/py311.h against CPython 3.11's own headers: compiled (not linked) by make
 * when python3.11-dev is installed; any number that disagrees fails the build.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>

#include "lib/py311.h"

#define SAME(a, b) _Static_assert((a) == (b), #a " is not " #b " in CPython's headers")

SAME(PY_VERSION_HEX &LS_PY311_HEX_MASK, LS_PY311_HEX);
SAME(offsetof(_PyRuntimeState, gilstate.autoTSSkey), LS_PY311_RUNTIME_TSS);
SAME(offsetof(Py_tss_t, _is_initialized), LS_PY311_TSS_INITIALIZED);
SAME(offsetof(Py_tss_t, _key), LS_PY311_TSS_KEY);
SAME(offsetof(PyThreadState, cframe), LS_PY311_TSTATE_CFRAME);
SAME(offsetof(_PyCFrame, current_frame), LS_PY311_CFRAME_CURRENT);
SAME(offsetof(_PyInterpreterFrame, f_code), LS_PY311_FRAME_CODE);
SAME(offsetof(_PyInterpreterFrame, previous), LS_PY311_FRAME_PREVIOUS);
SAME(offsetof(_PyInterpreterFrame, prev_instr), LS_PY311_FRAME_PREV_INSTR);
SAME(offsetof(_PyInterpreterFrame, is_entry), LS_PY311_FRAME_IS_ENTRY);
_Static_assert(LS_PY311_FRAME_READ > LS_PY311_FRAME_IS_ENTRY, "a frame read misses is_entry");
SAME(offsetof(PyObject, ob_type), LS_PY311_OB_TYPE);
SAME(offsetof(PyCodeObject, co_firstlineno), LS_PY311_CODE_FIRSTLINENO);
SAME(offsetof(PyCodeObject, co_filename), LS_PY311_CODE_FILENAME);
SAME(offsetof(PyCodeObject, co_qualname), LS_PY311_CODE_QUALNAME);
SAME(offsetof(PyCodeObject, co_linetable), LS_PY311_CODE_LINETABLE);
SAME(offsetof(PyCodeObject, _co_firsttraceable), LS_PY311_CODE_FIRSTTRACEABLE);
SAME(offsetof(PyCodeObject, co_code_adaptive), LS_PY311_CODE_CODE);
_Static_assert(LS_PY311_CODE_READ >= LS_PY311_CODE_CODE, "a code read misses a field");
SAME(sizeof(_Py_CODEUNIT), 2);
SAME(offsetof(PyTypeObject, tp_name), LS_PY311_TYPE_NAME);
SAME(offsetof(PyASCIIObject, length), LS_PY311_STR_LENGTH);
SAME(offsetof(PyASCIIObject, state), LS_PY311_STR_STATE);
SAME(offsetof(PyCompactUnicodeObject, utf8_length), LS_PY311_STR_UTF8_LENGTH);
SAME(offsetof(PyCompactUnicodeObject, utf8), LS_PY311_STR_UTF8);
SAME(sizeof(PyASCIIObject), LS_PY311_STR_ASCII_DATA);
SAME(sizeof(PyCompactUnicodeObject), LS_PY311_STR_COMPACT_DATA);
SAME(offsetof(PyVarObject, ob_size), LS_PY311_BYTES_SIZE);
SAME(offsetof(PyBytesObject, ob_sval), LS_PY311_BYTES_DATA);
