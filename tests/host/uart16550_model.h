/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A register model of a 16550 UART for the host tests of its drivers
 * (test_ns16550.c, test_dw8250.c), which drive it through the UART front end
 * (drivers/uart/uart.c): registers every 1 << shift bytes answering only
 * accesses of the model's width (the device tree's reg-shift and
 * reg-io-width), a receive FIFO, a transmit side busy for a few LSR reads
 * after each character, IER/IIR/FCR/LSR and the receive interrupt line; with
 * dw set, DesignWare's USR (index 31), which clears a busy-detect. An access
 * anywhere else, of another width, or a write to LCR and above (the boot
 * loader's) is counted as bad.
 */
#ifndef TESTS_HOST_UART16550_MODEL_H
#define TESTS_HOST_UART16550_MODEL_H

#include <string.h>

#include "drivers/uart/uart.h"
#include "check.h"

#define MODEL_BASE 0x21c0500u

u32 host_mmio_read(uintptr_t addr, u32 width);
void host_mmio_write(uintptr_t addr, u32 width, u32 val);

static struct {
	u32 shift, width; /* the hardware's spacing */
	bool dw;          /* DesignWare: USR, busy detect */
	unsigned char rx[64];
	unsigned rx_head, rx_len;
	char tx[256];
	unsigned tx_len;
	unsigned tx_busy, tx_busy_after;
	u32 ier, fcr_writes, last_fcr;
	bool busy_detect;
	unsigned usr_reads;
	unsigned bad_access;
	unsigned thr_while_busy;
} m;

static void model_reset(u32 shift, u32 width, bool dw)
{
	memset(&m, 0, sizeof(m));
	m.shift = shift;
	m.width = width;
	m.dw = dw;
}

static int irq_line(void)
{
	return (m.ier & 1) && m.rx_len > 0;
}

/* The register index of addr, or -1 (counted) when the model has none there. */
static int reg_of(uintptr_t addr, u32 width)
{
	uintptr_t off = addr - MODEL_BASE;
	uintptr_t reg = off >> m.shift;

	if (addr < MODEL_BASE || width != m.width || off % (1u << m.shift) ||
	    (reg > 7 && !(m.dw && reg == 31))) {
		m.bad_access++;
		return -1;
	}
	return (int)reg;
}

u32 host_mmio_read(uintptr_t addr, u32 width)
{
	switch (reg_of(addr, width)) {
	case -1:
		return ~0u; /* nothing answers: all ones (LSR: the transmitter is never full) */
	case 0: {           /* RBR */
		unsigned char c;

		if (!m.rx_len)
			return 0;
		c = m.rx[m.rx_head];
		m.rx_head = (m.rx_head + 1) % sizeof(m.rx);
		m.rx_len--;
		return c;
	}
	case 1:
		return m.ier;
	case 2: /* IIR: FIFOs enabled (bits 7:6), the highest-priority source */
		if (m.busy_detect)
			return 0xc0 | 0x7;
		return irq_line() ? 0xc4 : 0xc1;
	case 5: { /* LSR */
		u32 v = m.rx_len ? 1 : 0;

		if (m.tx_busy)
			m.tx_busy--;
		else
			v |= 1u << 5 | 1u << 6;
		return v;
	}
	case 31: /* DesignWare USR */
		m.usr_reads++;
		m.busy_detect = false;
		return 0;
	default:
		return 0;
	}
}

void host_mmio_write(uintptr_t addr, u32 width, u32 val)
{
	switch (reg_of(addr, width)) {
	case -1:
		break;
	case 0: /* THR */
		if (m.tx_busy)
			m.thr_while_busy++;
		if (m.tx_len < sizeof(m.tx))
			m.tx[m.tx_len++] = (char)val;
		m.tx_busy = m.tx_busy_after;
		break;
	case 1:
		m.ier = val & 0xff;
		break;
	case 2: /* FCR */
		m.fcr_writes++;
		m.last_fcr = val;
		if (val & 2) {
			m.rx_len = 0;
			m.rx_head = 0;
		}
		break;
	default: /* LCR, MCR, the divisor latch, USR: the boot loader's or read-only */
		m.bad_access++;
		break;
	}
}

static void rx_push(const char *s)
{
	for (; *s; s++)
		m.rx[(m.rx_head + m.rx_len++) % sizeof(m.rx)] = (unsigned char)*s;
}

/* What the console does with the UART: init, output, input, the interrupt. */
static void model_console_run(const struct uart_dev *dev)
{
	m.ier = 0xff;
	rx_push("stale");
	uart_init(dev);
	CHECK(m.ier == 0); /* interrupts off */
	/* FIFOs on, receive FIFO reset, trigger at one character */
	CHECK(m.fcr_writes == 1 && m.last_fcr == 0x3);
	CHECK(m.rx_len == 0);

	m.tx_busy_after = 3;
	uart_write("ok\nA", 4);
	CHECK(m.tx_len == 5 && memcmp(m.tx, "ok\r\nA", 5) == 0);
	CHECK(m.thr_while_busy == 0); /* waited for THRE before every character */

	CHECK(uart_getc() == -1);
	rx_push("hi");
	CHECK(!irq_line()); /* not enabled yet */
	uart_enable_rx_irq();
	CHECK(irq_line() && (m.ier & 1));
	uart_disable_rx_irq();
	CHECK(!irq_line() && m.rx_len == 2); /* masked, characters kept */
	uart_enable_rx_irq();
	CHECK(irq_line());
	CHECK(uart_getc() == 'h');
	CHECK(uart_getc() == 'i');
	CHECK(!irq_line()); /* the FIFO drained: deasserted */
	CHECK(uart_getc() == -1);
	rx_push("\xff");
	CHECK(uart_getc() == 0xff); /* a byte, not a negative char */
}

#endif
