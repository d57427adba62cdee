/* SPDX-License-Identifier: Apache-2.0 */
/* panic() for host tests that expect one (lib/log.h): the message goes to
 * panic_msg and control back to the caller's setjmp(panic_jmp). */
#ifndef TESTS_HOST_PANIC_JMP_H
#define TESTS_HOST_PANIC_JMP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>

static jmp_buf panic_jmp;
static char panic_msg[160];

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(panic_msg, sizeof(panic_msg), fmt, ap);
	va_end(ap);
	longjmp(panic_jmp, 1);
}

#endif
