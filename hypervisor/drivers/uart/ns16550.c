/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generic 16550 driver of drivers/uart/uart.h ("ns16550a", "ns16550"):
 * the platform file's uart.reg_shift (0, 1, 2) and uart.reg_io_width (1, 4)
 * place and size its registers (drivers/uart/ns16550.h).
 */
#include "drivers/uart/ns16550.h"

const struct uart_ops ns16550_ops = {
	.init = ns16550_init,
	.putc = ns16550_putc,
	.getc = ns16550_getc,
	.rx_irq_enable = ns16550_rx_irq_enable,
	.rx_irq_disable = ns16550_rx_irq_disable,
};
