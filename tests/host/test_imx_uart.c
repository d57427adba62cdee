/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the i.MX UART driver (hypervisor/drivers/uart/imx.c)
 * against a register model of the i.MX 8M Plus UART (IMX8MPRM UART chapter):
 * a 32-entry receive FIFO read through URXD (CHARRDY, error and break flags),
 * a transmit FIFO that is full for a few UTS reads after each character,
 * UCR1/UCR2/UCR4 and USR2.RDR, and the receive interrupt line (DREN & RDR).
 */
#include <stdio.h>
#include <string.h>

#include "drivers/uart/uart.h"
#include "check.h"

#define BASE 0x30890000u

extern const struct uart_ops imx_ops;
static const struct uart_dev dev = {
	.ops = &imx_ops, .base = BASE, .reg_shift = 2, .reg_io_width = 4
};

static struct {
	u32 rx[32];
	unsigned rx_head, rx_len;
	char tx[256];
	unsigned tx_len;
	unsigned tx_full;       /* UTS reads until TXFULL clears */
	unsigned tx_full_after; /* full reads after each character */
	u32 ucr1, ucr2, ucr4;
	unsigned resets;     /* UCR2 written with SRST = 0 */
	unsigned bad_access; /* unaligned, out of the map, or a baud/FIFO register written */
	unsigned utxd_while_full, utxd_while_off;
} m;

static int irq_line(void)
{
	return (m.ucr4 & 1) && m.rx_len > 0;
}

u32 host_mmio_read32(uintptr_t addr)
{
	u32 off = (u32)(addr - BASE);

	if (addr < BASE || off > 0xb8 || off % 4) {
		m.bad_access++;
		return 0;
	}
	switch (off) {
	case 0x00: { /* URXD */
		u32 v;

		if (!m.rx_len)
			return 0;
		v = m.rx[m.rx_head];
		m.rx_head = (m.rx_head + 1) % 32;
		m.rx_len--;
		return v | 1u << 15;
	}
	case 0x80:
		return m.ucr1;
	case 0x84:
		return m.ucr2;
	case 0x8c:
		return m.ucr4;
	case 0x98: /* USR2: TXFE, RDR */
		return (m.tx_full ? 0 : 1u << 14) | (m.rx_len ? 1u : 0);
	case 0xb4: /* UTS: TXFULL, RXEMPTY */
		if (m.tx_full) {
			m.tx_full--;
			return 1u << 4 | (m.rx_len ? 0 : 1u << 5);
		}
		return m.rx_len ? 0 : 1u << 5;
	default:
		return 0;
	}
}

void host_mmio_write32(uintptr_t addr, u32 val)
{
	u32 off = (u32)(addr - BASE);

	if (addr < BASE || off > 0xb8 || off % 4) {
		m.bad_access++;
		return;
	}
	switch (off) {
	case 0x40: /* UTXD */
		if (m.tx_full)
			m.utxd_while_full++;
		if (!(m.ucr1 & 1) || !(m.ucr2 & 4))
			m.utxd_while_off++;
		if (m.tx_len < sizeof(m.tx))
			m.tx[m.tx_len++] = (char)val;
		m.tx_full = m.tx_full_after;
		break;
	case 0x80:
		m.ucr1 = val & 0xffff;
		break;
	case 0x84:
		if (!(val & 1))
			m.resets++;
		m.ucr2 = val & 0xffff;
		break;
	case 0x8c:
		m.ucr4 = val & 0xffff;
		break;
	default: /* UCR3, UFCR, the baud registers: the boot loader's */
		m.bad_access++;
		break;
	}
}

static void rx_push(u32 v)
{
	m.rx[(m.rx_head + m.rx_len++) % 32] = v;
}

static void rx_push_str(const char *s)
{
	for (; *s; s++)
		rx_push((unsigned char)*s);
}

static void test_init(void)
{
	/* as U-Boot may leave it: receive interrupts on, 8-bit words (WS) */
	m.ucr1 = 1u << 9 | 1u << 13;
	m.ucr2 = 1u << 5 | 1u << 0;
	m.ucr4 = 0x18f;
	rx_push_str("stale");
	uart_init(&dev);
	CHECK(m.ucr1 == 1); /* UARTEN only: every interrupt and DMA request off */
	CHECK(m.ucr2 == (1u << 5 | 1u << 2 | 1u << 1 | 1u << 0)); /* TXEN, RXEN; WS and SRST kept */
	CHECK(m.ucr4 == 0);
	CHECK(m.resets == 0);
	CHECK(m.rx_len == 0); /* stale input dropped */
}

static void test_output(void)
{
	m.tx_full_after = 3;
	uart_write("ok\nA", 4);
	CHECK(m.tx_len == 5 && memcmp(m.tx, "ok\r\nA", 5) == 0);
	CHECK(m.utxd_while_full == 0 && m.utxd_while_off == 0);
}

static void test_input_and_irq(void)
{
	CHECK(uart_getc() == -1);
	rx_push_str("hi");
	CHECK(!irq_line()); /* not enabled yet */
	uart_enable_rx_irq();
	CHECK(irq_line() && (m.ucr4 & 1));
	uart_disable_rx_irq();
	CHECK(!irq_line() && m.rx_len == 2); /* masked, characters kept */
	uart_enable_rx_irq();
	CHECK(irq_line());
	CHECK(uart_getc() == 'h');
	CHECK(uart_getc() == 'i');
	CHECK(!irq_line()); /* the FIFO drained: deasserted */
	CHECK(uart_getc() == -1);
	rx_push(0xff);
	CHECK(uart_getc() == 0xff); /* a byte, not a negative char */
}

static void test_break_and_errors_dropped(void)
{
	rx_push(1u << 14 | 1u << 12 | 1u << 11); /* a break: ERR, FRMERR, BRK, data 0 */
	rx_push(1u << 14 | 1u << 10 | 'p');      /* a parity error */
	rx_push('k');
	CHECK(uart_getc() == 'k');
	CHECK(m.rx_len == 0 && uart_getc() == -1);
	rx_push(1u << 14 | 1u << 13 | 'o'); /* the 32nd character: OVRRUN, still valid */
	CHECK(uart_getc() == 'o');
}

int main(void)
{
	test_init();
	test_output();
	test_input_and_irq();
	test_break_and_errors_dropped();
	CHECK(m.bad_access == 0);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_imx_uart: ok\n");
	return 0;
}
