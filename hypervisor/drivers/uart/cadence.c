/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Cadence UART driver of drivers/uart/uart.h (Zynq UltraScale+ UART0/1,
 * "cdns,uart-r1p12"; register map: Xilinx UG1087, UART module). The baud
 * rate and frame format are the boot loader's (FSBL/U-Boot set them on a
 * board; QEMU needs none): only the transmitter and receiver are enabled.
 */
#include "drivers/uart/uart.h"

#define CDNS_CR     0x00 /* control */
#define CDNS_IER    0x08 /* interrupt enable */
#define CDNS_IDR    0x0c /* interrupt disable */
#define CDNS_ISR    0x14 /* interrupt status, write 1 to clear */
#define CDNS_RXTOUT 0x1c /* receiver timeout, in 4-bit-time units */
#define CDNS_RXWM   0x20 /* receive FIFO trigger level */
#define CDNS_SR     0x2c /* channel status */
#define CDNS_FIFO   0x30

#define CR_RX_EN    (1u << 2)
#define CR_RX_DIS   (1u << 3)
#define CR_TX_EN    (1u << 4)
#define CR_TX_DIS   (1u << 5)
#define CR_RSTTO    (1u << 6) /* restart the receiver timeout counter */
#define SR_RXEMPTY  (1u << 1)
#define SR_TXFULL   (1u << 4)
#define IXR_RTRIG   (1u << 0)
#define IXR_TIMEOUT (1u << 8)

static inline u32 cdns_read(const struct uart_dev *u, u32 off)
{
	return *(volatile u32 *)(uintptr_t)(u->base + off);
}

static inline void cdns_write(const struct uart_dev *u, u32 off, u32 v)
{
	*(volatile u32 *)(uintptr_t)(u->base + off) = v;
}

static void cdns_init(const struct uart_dev *u)
{
	cdns_write(u, CDNS_CR,
	           (cdns_read(u, CDNS_CR) & ~(CR_RX_DIS | CR_TX_DIS)) | CR_RX_EN | CR_TX_EN);
}

static void cdns_putc(const struct uart_dev *u, char c)
{
	while (cdns_read(u, CDNS_SR) & SR_TXFULL)
		;
	cdns_write(u, CDNS_FIFO, (u8)c);
}

static int cdns_getc(const struct uart_dev *u)
{
	if (cdns_read(u, CDNS_SR) & SR_RXEMPTY) {
		/* The status bits latch: clear them, then look again so that a
		 * character that arrived in between is not left unsignalled. */
		cdns_write(u, CDNS_ISR, IXR_RTRIG | IXR_TIMEOUT);
		if (cdns_read(u, CDNS_SR) & SR_RXEMPTY)
			return -1;
	}
	return (int)(cdns_read(u, CDNS_FIFO) & 0xff);
}

static void cdns_rx_irq_enable(const struct uart_dev *u)
{
	/* Input that arrived before still raises the interrupt: RTRIG is a
	 * FIFO level, re-evaluated on enable. */
	cdns_write(u, CDNS_RXWM, 1);
	cdns_write(u, CDNS_RXTOUT, 10);
	cdns_write(u, CDNS_CR, cdns_read(u, CDNS_CR) | CR_RSTTO);
	cdns_write(u, CDNS_IER, IXR_RTRIG | IXR_TIMEOUT);
}

static void cdns_rx_irq_disable(const struct uart_dev *u)
{
	/* The status bits stay latched while characters wait in the FIFO, so
	 * enabling the interrupt again raises it for them. */
	cdns_write(u, CDNS_IDR, IXR_RTRIG | IXR_TIMEOUT);
}

const struct uart_ops cadence_ops = {
	.init = cdns_init,
	.putc = cdns_putc,
	.getc = cdns_getc,
	.rx_irq_enable = cdns_rx_irq_enable,
	.rx_irq_disable = cdns_rx_irq_disable,
};
