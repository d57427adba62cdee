/* SPDX-License-Identifier: Apache-2.0 */
/* printf-style formatting into a character sink (no floating point). */
#ifndef LIB_FORMAT_H
#define LIB_FORMAT_H

#include <stdarg.h>

#include "lib/types.h"

typedef void (*fmt_putc_fn)(void *ctx, char c);

/* Formats fmt into the sink; returns the number of characters produced.
 * Supports %d %i %u %x %X %p %s %c %%, flags '-' '0', width, and the
 * length modifiers l, ll, z. */
size_t fmt_vformat(fmt_putc_fn out, void *ctx, const char *fmt, va_list ap);

size_t fmt_snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

#endif
