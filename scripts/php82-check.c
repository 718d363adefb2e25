// SPDX-License-Identifier: GPL-2.0
/*
 * php82-check.c - lib/php82.h against PHP 8.2's own headers: compiled (not linked) by make when
 * php8.2-dev is installed; any number that disagrees fails the build.
 */
#include <php.h>
#include <stddef.h>
#include <zend_globals.h>

#include "lib/php82.h"

#define SAME(a, b) _Static_assert((a) == (b), #a " is not " #b " in PHP's headers")

SAME(PHP_MAJOR_VERSION * 100 + PHP_MINOR_VERSION, 802);
#ifdef ZTS
#error "lib/php82.h is for a non-thread-safe PHP: executor_globals is then one global"
#endif
SAME(sizeof(zend_executor_globals), LS_PHP82_EG_SIZE);
SAME(offsetof(zend_executor_globals, current_execute_data), LS_PHP82_EG_CURRENT);
SAME(offsetof(zend_execute_data, opline), LS_PHP82_EX_OPLINE);
SAME(offsetof(zend_execute_data, func), LS_PHP82_EX_FUNC);
SAME(offsetof(zend_execute_data, This.u1.type_info), LS_PHP82_EX_CALL_INFO);
SAME(offsetof(zend_execute_data, prev_execute_data), LS_PHP82_EX_PREV);
_Static_assert(LS_PHP82_EX_READ >= LS_PHP82_EX_PREV + 8, "a frame read misses a field");
SAME(ZEND_CALL_TOP, LS_PHP82_CALL_TOP);
SAME(offsetof(zend_function, type), LS_PHP82_FN_TYPE);
SAME(ZEND_USER_FUNCTION, LS_PHP82_USER_FUNCTION);
SAME(ZEND_EVAL_CODE, LS_PHP82_EVAL_CODE);
SAME(offsetof(zend_function, common.function_name), LS_PHP82_FN_NAME);
SAME(offsetof(zend_function, common.scope), LS_PHP82_FN_SCOPE);
SAME(offsetof(zend_function, op_array.filename), LS_PHP82_FN_FILENAME);
_Static_assert(LS_PHP82_FN_READ >= LS_PHP82_FN_FILENAME + 8, "a function read misses a field");
SAME(offsetof(zend_class_entry, name), LS_PHP82_CE_NAME);
SAME(offsetof(zend_op, lineno), LS_PHP82_OP_LINENO);
SAME(offsetof(zend_string, len), LS_PHP82_STR_LEN);
SAME(offsetof(zend_string, val), LS_PHP82_STR_VAL);
