/* SPDX-License-Identifier: GPL-2.0 */
/*
 * php82.h - where PHP 8.2 (x86-64, a non-thread-safe build: Debian's php8.2-cli and php8.2-fpm)
 * keeps what latsnap reads of a PHP thread's frames.
 *
 * The numbers are offsetof() of PHP 8.2's own structs, as its headers declare them (php8.2-dev:
 * /usr/include/php/20220829/Zend/zend_globals.h, zend_compile.h, zend_types.h).
 * scripts/php82-check.c asserts each against those headers at build time (make), when they are
 * installed. The executable's executor_globals is that of an 8.2 NTS build when its size is
 * sizeof(zend_executor_globals) here: other versions and ZTS builds are not read.
 */
#ifndef LATSNAP_LIB_PHP82_H
#define LATSNAP_LIB_PHP82_H

#define LS_PHP82_EG_SIZE 1800 /* sizeof(zend_executor_globals) */
#define LS_PHP82_EG_CURRENT 488 /* executor_globals.current_execute_data */

/* zend_execute_data */
#define LS_PHP82_EX_OPLINE 0 /* the opline it runs (saved before each call out of the VM) */
#define LS_PHP82_EX_FUNC 24 /* zend_function *func */
#define LS_PHP82_EX_CALL_INFO 40 /* This.u1.type_info: the call's ZEND_CALL_* bits */
#define LS_PHP82_EX_PREV 48 /* prev_execute_data: the caller's frame */
#define LS_PHP82_EX_READ 56 /* the bytes read of a frame: up to prev_execute_data */
#define LS_PHP82_CALL_TOP (1U << 17) /* ZEND_CALL_TOP: the first frame of its execute_ex call */

/* zend_function (its common part and op_array) */
#define LS_PHP82_FN_TYPE 0 /* zend_uchar type */
#define LS_PHP82_USER_FUNCTION 2 /* ZEND_USER_FUNCTION: an op_array, PHP code */
#define LS_PHP82_EVAL_CODE 4 /* ZEND_EVAL_CODE: eval()'d PHP code */
#define LS_PHP82_FN_NAME 8 /* zend_string *function_name (NULL: a file's top level) */
#define LS_PHP82_FN_SCOPE 16 /* zend_class_entry *scope: a method's class */
#define LS_PHP82_FN_FILENAME 152 /* op_array.filename */
#define LS_PHP82_FN_READ 160

#define LS_PHP82_CE_NAME 8 /* zend_class_entry.name */
#define LS_PHP82_OP_LINENO 24 /* zend_op.lineno */

/* zend_string */
#define LS_PHP82_STR_LEN 16
#define LS_PHP82_STR_VAL 24

#endif /* LATSNAP_LIB_PHP82_H */
