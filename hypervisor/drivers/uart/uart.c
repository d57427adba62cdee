/* SPDX-License-Identifier: Apache-2.0 */
#include "drivers/uart/uart.h"

void uart_write(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}
