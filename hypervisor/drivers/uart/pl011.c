/* SPDX-License-Identifier: Apache-2.0 */
/* The Arm PL011 driver of drivers/uart/uart.h. */
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

static volatile u32 *pl011_regs;

static inline u32 pl011_read(u32 off)
{
	return pl011_regs[off / 4];
}

static inline void pl011_write_reg(u32 off, u32 v)
{
	pl011_regs[off / 4] = v;
}

void uart_init(u64 base)
{
	/* QEMU's PL011 needs no clock setup; on boards the firmware or the
	 * platform file's settings leave it configured. */
	pl011_regs = (volatile u32 *)(uintptr_t)base;
	/* Receive through the FIFO, not the one-character holding register
	 * (firmware, or QEMU's reset, may leave it off). The PL011 must be
	 * disabled and idle while LCR_H changes. */
	if (!(pl011_read(UART_LCR_H) & LCR_FEN)) {
		u32 cr = pl011_read(UART_CR);

		pl011_write_reg(UART_CR, cr & ~CR_UARTEN);
		while (pl011_read(UART_FR) & FR_BUSY)
			;
		pl011_write_reg(UART_LCR_H, pl011_read(UART_LCR_H) | LCR_FEN);
		pl011_write_reg(UART_CR, cr);
	}
}

void uart_putc(char c)
{
	if (!pl011_regs)
		return;
	while (pl011_read(UART_FR) & FR_TXFF)
		;
	pl011_write_reg(UART_DR, (u8)c);
}

int uart_getc(void)
{
	if (!pl011_regs || (pl011_read(UART_FR) & FR_RXFE))
		return -1;
	return (int)(pl011_read(UART_DR) & 0xff);
}

void uart_enable_rx_irq(void)
{
	/* No ICR write: input that arrived before (a full FIFO raises no new
	 * receive interrupt) must still raise one now. */
	pl011_write_reg(UART_IMSC, INT_RX | INT_RT);
}

void uart_disable_rx_irq(void)
{
	pl011_write_reg(UART_IMSC, 0);
}
