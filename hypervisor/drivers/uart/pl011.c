/* SPDX-License-Identifier: Apache-2.0 */
/* The Arm PL011 driver of drivers/uart/uart.h (32-bit registers). */
#include "drivers/uart/uart.h"

#define UART_DR    0x000
#define UART_FR    0x018
#define UART_LCR_H 0x02c
#define UART_CR    0x030
#define UART_IMSC  0x038
#define UART_ICR   0x044
#define FR_RXFE    (1u << 4)
#define FR_TXFF    (1u << 5)
#define FR_BUSY    (1u << 3)
#define LCR_FEN    (1u << 4)
#define CR_UARTEN  (1u << 0)
#define INT_RX     (1u << 4)
#define INT_RT     (1u << 6)

static inline u32 pl011_read(const struct uart_dev *u, u32 off)
{
	return *(volatile u32 *)(uintptr_t)(u->base + off);
}

static inline void pl011_write_reg(const struct uart_dev *u, u32 off, u32 v)
{
	*(volatile u32 *)(uintptr_t)(u->base + off) = v;
}

static void pl011_init(const struct uart_dev *u)
{
	/* QEMU's PL011 needs no clock setup; on boards the firmware or the
	 * platform file's settings leave it configured. Receive through the
	 * FIFO, not the one-character holding register (firmware, or QEMU's
	 * reset, may leave it off). The PL011 must be disabled and idle while
	 * LCR_H changes. */
	if (!(pl011_read(u, UART_LCR_H) & LCR_FEN)) {
		u32 cr = pl011_read(u, UART_CR);

		pl011_write_reg(u, UART_CR, cr & ~CR_UARTEN);
		while (pl011_read(u, UART_FR) & FR_BUSY)
			;
		pl011_write_reg(u, UART_LCR_H, pl011_read(u, UART_LCR_H) | LCR_FEN);
		pl011_write_reg(u, UART_CR, cr);
	}
}

static void pl011_putc(const struct uart_dev *u, char c)
{
	while (pl011_read(u, UART_FR) & FR_TXFF)
		;
	pl011_write_reg(u, UART_DR, (u8)c);
}

static int pl011_getc(const struct uart_dev *u)
{
	if (pl011_read(u, UART_FR) & FR_RXFE)
		return -1;
	return (int)(pl011_read(u, UART_DR) & 0xff);
}

static void pl011_rx_irq_enable(const struct uart_dev *u)
{
	/* No ICR write: input that arrived before (a full FIFO raises no new
	 * receive interrupt) must still raise one now. */
	pl011_write_reg(u, UART_IMSC, INT_RX | INT_RT);
}

static void pl011_rx_irq_disable(const struct uart_dev *u)
{
	pl011_write_reg(u, UART_IMSC, 0);
}

const struct uart_ops pl011_ops = {
	.init = pl011_init,
	.putc = pl011_putc,
	.getc = pl011_getc,
	.rx_irq_enable = pl011_rx_irq_enable,
	.rx_irq_disable = pl011_rx_irq_disable,
};
