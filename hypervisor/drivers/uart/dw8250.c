/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DesignWare APB UART driver of drivers/uart/uart.h ("snps,dw-apb-uart",
 * a 16550-compatible 8250 with 32-bit registers every 4 bytes: reg-shift 2,
 * reg-io-width 4; the RK3588's UART0-9). Register map: the 16550 (RBR/THR,
 * IER, IIR/FCR, LCR, LSR at indices 0, 1, 2, 3, 5) and DesignWare's USR at
 * 0x7c [Synopsys DW_apb_uart databook, as Linux's 8250_dw driver uses it].
 * The baud rate and frame format are the boot loader's (1500000 8N1 on the
 * RK3588 boards): the divisor latch and LCR are never written, so the UART
 * never reports a busy-detect; the FIFOs are enabled, the receiver's
 * trigger level set to one character.
 */
#include "drivers/uart/uart.h"

#define DW_RBR 0x00 /* receive buffer (read) */
#define DW_THR 0x00 /* transmit holding (write) */
#define DW_IER 0x04 /* interrupt enable */
#define DW_IIR 0x08 /* interrupt identification (read) */
#define DW_FCR 0x08 /* FIFO control (write) */
#define DW_LSR 0x14 /* line status */
#define DW_USR 0x7c /* DesignWare UART status: reading it clears a busy-detect */

#define IER_ERBFI   (1u << 0) /* received data available (and character timeout) */
#define FCR_FIFOE   (1u << 0)
#define FCR_RFIFOR  (1u << 1) /* reset the receive FIFO */
#define LSR_DR      (1u << 0) /* a character waits in RBR / the receive FIFO */
#define LSR_THRE    (1u << 5) /* the transmit FIFO is empty */
#define IIR_ID_MASK 0xfu
#define IIR_BUSY    0x7u /* busy detect: LCR written while the UART was busy */

static uintptr_t dw_base;

#ifdef BULKHEAD_HOST_TEST
/* tests/host/test_dw8250.c: a register model of the UART */
u32 host_mmio_read32(uintptr_t addr);
void host_mmio_write32(uintptr_t addr, u32 val);
#define dw_read(off)     host_mmio_read32(dw_base + (off))
#define dw_write(off, v) host_mmio_write32(dw_base + (off), (v))
#else
static inline u32 dw_read(u32 off)
{
	return *(volatile u32 *)(dw_base + off);
}

static inline void dw_write(u32 off, u32 v)
{
	*(volatile u32 *)(dw_base + off) = v;
}
#endif

void uart_init(u64 base)
{
	dw_base = (uintptr_t)base;
	dw_write(DW_IER, 0);
	/* FIFOs on, receive trigger at one character (RT = 0), the stale
	 * receive FIFO of the boot loader dropped; the transmit FIFO keeps
	 * what it still sends */
	dw_write(DW_FCR, FCR_FIFOE | FCR_RFIFOR);
}

void uart_putc(char c)
{
	if (!dw_base)
		return;
	while (!(dw_read(DW_LSR) & LSR_THRE))
		;
	dw_write(DW_THR, (u8)c);
}

int uart_getc(void)
{
	if (!dw_base)
		return -1;
	if (dw_read(DW_LSR) & LSR_DR)
		return (int)(dw_read(DW_RBR) & 0xff);
	/* Nothing to read: a busy-detect interrupt (not expected: LCR is never
	 * written) would stay asserted until USR is read. */
	if ((dw_read(DW_IIR) & IIR_ID_MASK) == IIR_BUSY)
		(void)dw_read(DW_USR);
	return -1;
}

void uart_enable_rx_irq(void)
{
	/* Level-sensitive: characters already in the FIFO raise it at once. */
	dw_write(DW_IER, dw_read(DW_IER) | IER_ERBFI);
}

void uart_disable_rx_irq(void)
{
	/* Characters wait in the FIFO; enabling again raises the interrupt. */
	dw_write(DW_IER, dw_read(DW_IER) & ~IER_ERBFI);
}
