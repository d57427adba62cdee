/* SPDX-License-Identifier: Apache-2.0 */
/* The UART front end (drivers/uart/uart.h): the device config.c names,
 * which console_init gives before anything is printed or read (log lines
 * before it have no sink). */
#include "drivers/uart/uart.h"

static const struct uart_dev *uart_dev;

void uart_init(const struct uart_dev *u)
{
	uart_dev = u;
	u->ops->init(u);
}

void uart_putc(char c)
{
	uart_dev->ops->putc(uart_dev, c);
}

void uart_write(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}

int uart_getc(void)
{
	return uart_dev->ops->getc(uart_dev);
}

void uart_enable_rx_irq(void)
{
	uart_dev->ops->rx_irq_enable(uart_dev);
}

void uart_disable_rx_irq(void)
{
	uart_dev->ops->rx_irq_disable(uart_dev);
}
