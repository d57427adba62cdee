/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DesignWare APB UART driver of drivers/uart/uart.h ("snps,dw-apb-uart";
 * the RK3588's UART0-9): a 16550 (drivers/uart/ns16550.h) with 32-bit
 * registers every 4 bytes (reg_shift 2, reg_io_width 4, its descriptor's
 * defaults) and DesignWare's USR, register index 31 (offset 0x7c) [Synopsys
 * DW_apb_uart databook, as Linux's 8250_dw driver uses it]: a write to LCR
 * while the UART is busy raises a busy-detect interrupt that only reading
 * USR clears. LCR is never written (the boot loader's 1500000 8N1 stays), so
 * it is not expected; getc clears one all the same.
 */
#include "drivers/uart/ns16550.h"

#define DW_USR      31 /* DesignWare UART status: reading it clears a busy-detect */
#define IIR_ID_MASK 0xfu
#define IIR_BUSY    0x7u /* busy detect: LCR written while the UART was busy */

static int dw8250_getc(const struct uart_dev *u)
{
	int c = ns16550_getc(u);

	/* Nothing to read: a busy-detect interrupt would stay asserted until
	 * USR is read. */
	if (c < 0 && (ns16550_read(u, NS16550_IIR) & IIR_ID_MASK) == IIR_BUSY)
		(void)ns16550_read(u, DW_USR);
	return c;
}

const struct uart_ops dw8250_ops = {
	.init = ns16550_init,
	.putc = ns16550_putc,
	.getc = dw8250_getc,
	.rx_irq_enable = ns16550_rx_irq_enable,
	.rx_irq_disable = ns16550_rx_irq_disable,
};
