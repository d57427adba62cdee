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

static volatile u32 *cdns_regs;

static inline u32 cdns_read(u32 off)
{
	return cdns_regs[off / 4];
}

static inline void cdns_write(u32 off, u32 v)
{
	cdns_regs[off / 4] = v;
}

void uart_init(u64 base)
{
	cdns_regs = (volatile u32 *)(uintptr_t)base;
	cdns_write(CDNS_CR, (cdns_read(CDNS_CR) & ~(CR_RX_DIS | CR_TX_DIS)) | CR_RX_EN | CR_TX_EN);
}

void uart_putc(char c)
{
	if (!cdns_regs)
		return;
	while (cdns_read(CDNS_SR) & SR_TXFULL)
		;
	cdns_write(CDNS_FIFO, (u8)c);
}

int uart_getc(void)
{
	if (!cdns_regs)
		return -1;
	if (cdns_read(CDNS_SR) & SR_RXEMPTY) {
		/* The status bits latch: clear them, then look again so that a
		 * character that arrived in between is not left unsignalled. */
		cdns_write(CDNS_ISR, IXR_RTRIG | IXR_TIMEOUT);
		if (cdns_read(CDNS_SR) & SR_RXEMPTY)
			return -1;
	}
	return (int)(cdns_read(CDNS_FIFO) & 0xff);
}

void uart_enable_rx_irq(void)
{
	/* Input that arrived before still raises the interrupt: RTRIG is a
	 * FIFO level, re-evaluated on enable. */
	cdns_write(CDNS_RXWM, 1);
	cdns_write(CDNS_RXTOUT, 10);
	cdns_write(CDNS_CR, cdns_read(CDNS_CR) | CR_RSTTO);
	cdns_write(CDNS_IER, IXR_RTRIG | IXR_TIMEOUT);
}

void uart_disable_rx_irq(void)
{
	/* The status bits stay latched while characters wait in the FIFO, so
	 * uart_enable_rx_irq raises the interrupt again for them. */
	cdns_write(CDNS_IDR, IXR_RTRIG | IXR_TIMEOUT);
}
