/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Console on the (virtual) PL011 at 0x09000000. Output is serialised by a
 * spinlock taken with IRQs masked: one printf() call is never interleaved
 * with another vCPU's output, so print whole lines per call.
 */
#ifndef GUEST_UART_H
#define GUEST_UART_H

#include "types.h"

#define UART_BASE  0x09000000ul
#define UART_INTID 33

void uart_putc(char c);
void uart_puts(const char *s);
/* Next received character, or -1 if none is waiting (never blocks). */
int uart_getc(void);

/*
 * Formatted output: %d %i %u %x %X %o %c %s %p %%, flags '-' and '0',
 * a width (digits or '*'), length modifiers hh h l ll z.
 */
int printf(const char *fmt, ...) __printf(1, 2);
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

/*
 * For fatal paths: prints even if the console lock cannot be taken (e.g.
 * the fault happened while this vCPU held it).
 */
void uart_panic_printf(const char *fmt, ...) __printf(1, 2);

#endif
