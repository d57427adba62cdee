/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The 16550's registers and operations, shared by the drivers of 16550
 * compatibles (ns16550.c, the generic one; dw8250.c, DesignWare's, which
 * adds its busy-detect quirk): register i lies at base + (i << reg_shift)
 * and is accessed reg_io_width bytes wide (struct uart_dev; the device
 * tree's reg-shift and reg-io-width). Register map: the 16550's RBR/THR,
 * IER, IIR/FCR, LCR, LSR at indices 0, 1, 2, 3, 5. The baud rate and frame
 * format are the boot loader's: the divisor latch and LCR are never written;
 * the FIFOs are enabled, the receiver's trigger level set to one character.
 */
#ifndef DRIVERS_UART_NS16550_H
#define DRIVERS_UART_NS16550_H

#include "drivers/uart/uart.h"

#define NS16550_RBR 0 /* receive buffer (read) */
#define NS16550_THR 0 /* transmit holding (write) */
#define NS16550_IER 1 /* interrupt enable */
#define NS16550_IIR 2 /* interrupt identification (read) */
#define NS16550_FCR 2 /* FIFO control (write) */
#define NS16550_LSR 5 /* line status */

#define NS16550_IER_ERBFI  (1u << 0) /* received data available (and character timeout) */
#define NS16550_FCR_FIFOE  (1u << 0)
#define NS16550_FCR_RFIFOR (1u << 1) /* reset the receive FIFO */
#define NS16550_LSR_DR     (1u << 0) /* a character waits in RBR / the receive FIFO */
#define NS16550_LSR_THRE   (1u << 5) /* the transmit FIFO is empty */

#ifdef BULKHEAD_HOST_TEST
/* tests/host/test_ns16550.c, test_dw8250.c: a register model of the UART */
u32 host_mmio_read(uintptr_t addr, u32 width);
void host_mmio_write(uintptr_t addr, u32 width, u32 val);
#endif

static inline u32 ns16550_read(const struct uart_dev *u, u32 reg)
{
	uintptr_t a = (uintptr_t)u->base + ((uintptr_t)reg << u->reg_shift);

#ifdef BULKHEAD_HOST_TEST
	return host_mmio_read(a, u->reg_io_width);
#else
	return u->reg_io_width == 4 ? *(volatile u32 *)a : *(volatile u8 *)a;
#endif
}

static inline void ns16550_write(const struct uart_dev *u, u32 reg, u32 v)
{
	uintptr_t a = (uintptr_t)u->base + ((uintptr_t)reg << u->reg_shift);

#ifdef BULKHEAD_HOST_TEST
	host_mmio_write(a, u->reg_io_width, v);
#else
	if (u->reg_io_width == 4)
		*(volatile u32 *)a = v;
	else
		*(volatile u8 *)a = (u8)v;
#endif
}

static inline void ns16550_init(const struct uart_dev *u)
{
	ns16550_write(u, NS16550_IER, 0);
	/* FIFOs on, receive trigger at one character (RT = 0), the stale
	 * receive FIFO of the boot loader dropped; the transmit FIFO keeps
	 * what it still sends */
	ns16550_write(u, NS16550_FCR, NS16550_FCR_FIFOE | NS16550_FCR_RFIFOR);
}

static inline void ns16550_putc(const struct uart_dev *u, char c)
{
	while (!(ns16550_read(u, NS16550_LSR) & NS16550_LSR_THRE))
		;
	ns16550_write(u, NS16550_THR, (u8)c);
}

/* The next character, or -1 when none waits. */
static inline int ns16550_getc(const struct uart_dev *u)
{
	if (ns16550_read(u, NS16550_LSR) & NS16550_LSR_DR)
		return (int)(ns16550_read(u, NS16550_RBR) & 0xff);
	return -1;
}

static inline void ns16550_rx_irq_enable(const struct uart_dev *u)
{
	/* Level-sensitive: characters already in the FIFO raise it at once. */
	ns16550_write(u, NS16550_IER, ns16550_read(u, NS16550_IER) | NS16550_IER_ERBFI);
}

static inline void ns16550_rx_irq_disable(const struct uart_dev *u)
{
	/* Characters wait in the FIFO; enabling again raises the interrupt. */
	ns16550_write(u, NS16550_IER, ns16550_read(u, NS16550_IER) & ~NS16550_IER_ERBFI);
}

#endif
