/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the generic 16550 driver (hypervisor/drivers/uart/
 * ns16550.c) through the UART front end (uart.c), for every register
 * spacing it honours: a register model of a 16550 whose registers lie every
 * 1 << shift bytes and answer only accesses of its width (the device tree's
 * reg-shift and reg-io-width), with a receive FIFO, a transmit side busy for
 * a few LSR reads after each character and the receive interrupt line. An
 * access anywhere else, or of another width, is counted as bad; the last
 * check drives a byte-spaced UART with the 32-bit spacing and sees them.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/uart/uart.h"
#include "check.h"

#define BASE 0x21c0500u

extern const struct uart_ops ns16550_ops;
u32 host_mmio_read(uintptr_t addr, u32 width);
void host_mmio_write(uintptr_t addr, u32 width, u32 val);

static struct {
	u32 shift, width; /* the hardware's spacing */
	unsigned char rx[64];
	unsigned rx_head, rx_len;
	char tx[256];
	unsigned tx_len;
	unsigned tx_busy, tx_busy_after;
	u32 ier, fcr_writes, last_fcr;
	unsigned bad_access; /* between registers, of another width, or LCR and above written */
	unsigned thr_while_busy;
} m;

static int irq_line(void)
{
	return (m.ier & 1) && m.rx_len > 0;
}

/* The register index of addr, or -1 (counted) when the model has none there. */
static int reg_of(uintptr_t addr, u32 width)
{
	uintptr_t off = addr - BASE;

	if (addr < BASE || width != m.width || off % (1u << m.shift) || (off >> m.shift) > 7) {
		m.bad_access++;
		return -1;
	}
	return (int)(off >> m.shift);
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
	case 2: /* IIR: FIFOs enabled, the highest-priority source */
		return irq_line() ? 0xc4 : 0xc1;
	case 5: { /* LSR */
		u32 v = m.rx_len ? 1 : 0;

		if (m.tx_busy)
			m.tx_busy--;
		else
			v |= 1u << 5 | 1u << 6;
		return v;
	}
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
	default: /* LCR, MCR, the divisor latch: the boot loader's */
		m.bad_access++;
		break;
	}
}

static void rx_push(const char *s)
{
	for (; *s; s++)
		m.rx[(m.rx_head + m.rx_len++) % sizeof(m.rx)] = (unsigned char)*s;
}

static void reset_model(u32 shift, u32 width)
{
	memset(&m, 0, sizeof(m));
	m.shift = shift;
	m.width = width;
}

/* Everything the console does with the UART, on a device of this spacing. */
static void run(u32 shift, u32 width)
{
	const struct uart_dev dev = {
		.ops = &ns16550_ops, .base = BASE, .reg_shift = (u8)shift, .reg_io_width = (u8)width
	};

	reset_model(shift, width);
	m.ier = 0xff;
	rx_push("stale");
	uart_init(&dev);
	CHECK(m.ier == 0);                             /* interrupts off */
	CHECK(m.fcr_writes == 1 && m.last_fcr == 0x3); /* FIFOs on, receive FIFO reset */
	CHECK(m.rx_len == 0);

	m.tx_busy_after = 3;
	uart_write("ok\nA", 4);
	CHECK(m.tx_len == 5 && memcmp(m.tx, "ok\r\nA", 5) == 0);
	CHECK(m.thr_while_busy == 0); /* waited for THRE before every character */

	CHECK(uart_getc() == -1);
	rx_push("hi");
	CHECK(!irq_line());
	uart_enable_rx_irq();
	CHECK(irq_line());
	uart_disable_rx_irq();
	CHECK(!irq_line() && m.rx_len == 2); /* masked, characters kept */
	uart_enable_rx_irq();
	CHECK(uart_getc() == 'h' && uart_getc() == 'i');
	CHECK(!irq_line() && uart_getc() == -1);
	rx_push("\xff");
	CHECK(uart_getc() == 0xff); /* a byte, not a negative char */
	if (m.bad_access)
		fprintf(stderr, "reg_shift %u, reg_io_width %u: %u bad accesses\n", shift, width,
		        m.bad_access);
	CHECK(m.bad_access == 0);
}

int main(void)
{
	static const u32 spacing[][2] = { { 0, 1 }, { 1, 1 }, { 2, 1 }, { 2, 4 } };

	for (size_t i = 0; i < sizeof(spacing) / sizeof(spacing[0]); i++)
		run(spacing[i][0], spacing[i][1]);
	/* the model notices a driver that ignores the spacing: a byte-spaced
	 * UART driven as the 32-bit one */
	{
		const struct uart_dev wrong = {
			.ops = &ns16550_ops, .base = BASE, .reg_shift = 2, .reg_io_width = 4
		};

		reset_model(0, 1);
		uart_init(&wrong);
		uart_putc('x');
		CHECK(m.bad_access > 0 && m.tx_len == 0);
	}
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_ns16550: ok\n");
	return 0;
}
