/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The i.MX UART driver of drivers/uart/uart.h ("fsl,imx21-uart" register
 * set: "fsl,imx8mp-uart", "fsl,imx6q-uart"; the i.MX 8M Plus EVK's console
 * UART2). Registers and bits: NXP IMX8MPRM (i.MX 8M Plus Applications
 * Processor Reference Manual), chapter "Universal Asynchronous
 * Receiver/Transmitter (UART)", its memory map and register definitions:
 * URXD 0x00, UTXD 0x40, UCR1 0x80, UCR2 0x84, UCR4 0x8c, USR2 0x98, UTS
 * 0xb4, each 32 bits wide with the low 16 bits used. The baud rate and frame
 * format are the boot loader's (U-Boot sets 115200 8N1; QEMU needs none):
 * UBIR/UBMR/UFCR are never written; the UART, its transmitter and receiver
 * are enabled and every interrupt the boot loader may have left on is off.
 * The receive interrupt is "receive data ready" (UCR4.DREN): a level that
 * follows USR2.RDR, i.e. the receive FIFO not being empty.
 */
#include "drivers/uart/uart.h"

#define IMX_URXD 0x00 /* receiver register (read pops the RX FIFO) */
#define IMX_UTXD 0x40 /* transmitter register */
#define IMX_UCR1 0x80
#define IMX_UCR2 0x84
#define IMX_UCR4 0x8c
#define IMX_USR2 0x98
#define IMX_UTS  0xb4 /* test register: FIFO full/empty flags */

#define URXD_CHARRDY (1u << 15) /* the character is valid */
#define URXD_FRMERR  (1u << 12)
#define URXD_BRK     (1u << 11) /* a break, not a character */
#define URXD_PRERR   (1u << 10)
#define URXD_DATA    0xffu
#define UCR1_UARTEN  (1u << 0)
/* UCR1 bits kept off: the interrupt enables ADEN 15, TRDYEN 13, IDEN 12,
 * RRDYEN 9, TXMPTYEN 6, RTSDEN 5, the DMA requests RXDMAEN 8, TXDMAEN 3,
 * ATDMAEN 2, and SNDBRK 4 */
#define UCR1_OFF  0xb37cu
#define UCR2_SRST (1u << 0) /* 0 resets the UART: always written as 1 */
#define UCR2_RXEN (1u << 1)
#define UCR2_TXEN (1u << 2)
#define UCR4_DREN (1u << 0) /* receive data ready interrupt enable */
/* UCR4 interrupt enables kept off: ENIRI 8, WKEN 7, TCEN 3, BKEN 2, OREN 1,
 * DREN 0 (UCR3's are off after U-Boot and after reset) */
#define UCR4_IRQS   0x18fu
#define USR2_RDR    (1u << 0) /* at least one character in the RX FIFO */
#define UTS_TXFULL  (1u << 4)
#define IMX_RX_FIFO 32

#ifdef BULKHEAD_HOST_TEST
/* tests/host/test_imx_uart.c: a register model of the UART */
u32 host_mmio_read32(uintptr_t addr);
void host_mmio_write32(uintptr_t addr, u32 val);
#define imx_read(u, off)     host_mmio_read32((uintptr_t)(u)->base + (off))
#define imx_write(u, off, v) host_mmio_write32((uintptr_t)(u)->base + (off), (v))
#else
static inline u32 imx_read(const struct uart_dev *u, u32 off)
{
	return *(volatile u32 *)(uintptr_t)(u->base + off);
}

static inline void imx_write(const struct uart_dev *u, u32 off, u32 v)
{
	*(volatile u32 *)(uintptr_t)(u->base + off) = v;
}
#endif

static void imx_init(const struct uart_dev *u)
{
	imx_write(u, IMX_UCR4, imx_read(u, IMX_UCR4) & ~UCR4_IRQS);
	imx_write(u, IMX_UCR1, (imx_read(u, IMX_UCR1) & ~UCR1_OFF) | UCR1_UARTEN);
	imx_write(u, IMX_UCR2, imx_read(u, IMX_UCR2) | UCR2_SRST | UCR2_RXEN | UCR2_TXEN);
	/* The boot loader's stale input is dropped (at most a FIFO's worth). */
	for (int i = 0; i < IMX_RX_FIFO && (imx_read(u, IMX_USR2) & USR2_RDR); i++)
		(void)imx_read(u, IMX_URXD);
}

static void imx_putc(const struct uart_dev *u, char c)
{
	while (imx_read(u, IMX_UTS) & UTS_TXFULL)
		;
	imx_write(u, IMX_UTXD, (u8)c);
}

static int imx_getc(const struct uart_dev *u)
{
	/* A break or a character with a framing or parity error is dropped;
	 * the next one is looked at (bounded by the FIFO's depth). */
	for (int i = 0; i < IMX_RX_FIFO && (imx_read(u, IMX_USR2) & USR2_RDR); i++) {
		u32 v = imx_read(u, IMX_URXD);

		if ((v & URXD_CHARRDY) && !(v & (URXD_BRK | URXD_FRMERR | URXD_PRERR)))
			return (int)(v & URXD_DATA);
	}
	return -1;
}

static void imx_rx_irq_enable(const struct uart_dev *u)
{
	/* Level-sensitive (USR2.RDR): characters already waiting raise it. */
	imx_write(u, IMX_UCR4, imx_read(u, IMX_UCR4) | UCR4_DREN);
}

static void imx_rx_irq_disable(const struct uart_dev *u)
{
	/* Characters wait in the RX FIFO; enabling again raises the interrupt. */
	imx_write(u, IMX_UCR4, imx_read(u, IMX_UCR4) & ~UCR4_DREN);
}

const struct uart_ops imx_ops = {
	.init = imx_init,
	.putc = imx_putc,
	.getc = imx_getc,
	.rx_irq_enable = imx_rx_irq_enable,
	.rx_irq_disable = imx_rx_irq_disable,
};
