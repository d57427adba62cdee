/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the DesignWare APB UART driver (hypervisor/drivers/uart/
 * dw8250.c) through the UART front end (uart.c) against a register model of
 * the 16550-compatible DW_apb_uart with 32-bit registers (reg-shift 2): a
 * receive FIFO, a transmit side that is busy for a few LSR reads after each
 * character, IER/IIR/LSR/USR semantics and the receive interrupt line.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/uart/uart.h"
#include "check.h"

#define BASE 0xfeb50000u

extern const struct uart_ops dw8250_ops;
/* as config.c has it for the RK3588 (the descriptor's spacing) */
static const struct uart_dev dev = {
	.ops = &dw8250_ops, .base = BASE, .reg_shift = 2, .reg_io_width = 4
};

static struct {
	unsigned char rx[64];
	unsigned rx_head, rx_len;
	char tx[256];
	unsigned tx_len;
	unsigned tx_busy;       /* LSR reads until THRE */
	unsigned tx_busy_after; /* busy reads after each character */
	u32 ier, fcr_writes, last_fcr;
	int busy_detect;
	unsigned usr_reads;
	unsigned
	    bad_access; /* unaligned, not 32 bits, out of the register map, or a write to LCR/DLL */
	unsigned thr_while_busy;
} m;

static int irq_line(void)
{
	return (m.ier & 1) && m.rx_len > 0;
}

u32 host_mmio_read(uintptr_t addr, u32 width);
void host_mmio_write(uintptr_t addr, u32 width, u32 val);

u32 host_mmio_read(uintptr_t addr, u32 width)
{
	u32 off = (u32)(addr - BASE);

	if (addr < BASE || off > 0x7c || off % 4 || width != 4) {
		m.bad_access++;
		return 0;
	}
	switch (off) {
	case 0x00: { /* RBR */
		unsigned char c;

		if (!m.rx_len)
			return 0;
		c = m.rx[m.rx_head];
		m.rx_head = (m.rx_head + 1) % sizeof(m.rx);
		m.rx_len--;
		return c;
	}
	case 0x04:
		return m.ier;
	case 0x08: /* IIR: FIFOs enabled (bits 7:6), the highest-priority source */
		if (m.busy_detect)
			return 0xc0 | 0x7;
		if (irq_line())
			return 0xc0 | 0x4;
		return 0xc0 | 0x1;
	case 0x14: { /* LSR */
		u32 v = m.rx_len ? 1 : 0;

		if (m.tx_busy)
			m.tx_busy--;
		else
			v |= 1u << 5 | 1u << 6;
		return v;
	}
	case 0x7c:
		m.usr_reads++;
		m.busy_detect = 0;
		return 0;
	default:
		return 0;
	}
}

void host_mmio_write(uintptr_t addr, u32 width, u32 val)
{
	u32 off = (u32)(addr - BASE);

	if (addr < BASE || off > 0x7c || off % 4 || width != 4) {
		m.bad_access++;
		return;
	}
	switch (off) {
	case 0x00: /* THR */
		if (m.tx_busy)
			m.thr_while_busy++;
		if (m.tx_len < sizeof(m.tx))
			m.tx[m.tx_len++] = (char)val;
		m.tx_busy = m.tx_busy_after;
		break;
	case 0x04:
		m.ier = val & 0xff;
		break;
	case 0x08: /* FCR */
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

static void test_init(void)
{
	m.ier = 0xff;
	rx_push("stale");
	uart_init(&dev);
	CHECK(m.ier == 0); /* interrupts off */
	CHECK(m.fcr_writes == 1 &&
	      m.last_fcr == 0x3); /* FIFOs on, receive FIFO reset, trigger 1 char */
	CHECK(m.rx_len == 0);
}

static void test_output(void)
{
	m.tx_busy_after = 3;
	uart_write("ok\nA", 4);
	CHECK(m.tx_len == 5 && memcmp(m.tx, "ok\r\nA", 5) == 0);
	CHECK(m.thr_while_busy == 0); /* waited for THRE before every character */
}

static void test_input_and_irq(void)
{
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

static void test_busy_detect(void)
{
	m.busy_detect = 1;
	CHECK(uart_getc() == -1);
	CHECK(m.usr_reads == 1 && !m.busy_detect); /* cleared by reading USR */
	CHECK(uart_getc() == -1 && m.usr_reads == 1);
}

int main(void)
{
	test_init();
	test_output();
	test_input_and_irq();
	test_busy_detect();
	CHECK(m.bad_access == 0);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_dw8250: ok\n");
	return 0;
}
