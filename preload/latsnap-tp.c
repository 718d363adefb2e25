// SPDX-License-Identifier: GPL-2.0
/* latsnap-tp.c - instantiates the latsnap tracepoint provider in liblatsnap.so. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "latsnap-tp.h"
