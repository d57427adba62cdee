// SPDX-License-Identifier: Apache-2.0
/*
 * uartfifo: checks the virtual PL011's receive FIFO register by register
 * (core/console/vuart.c), with its interrupt masked, on input the test types:
 *
 *  1. FIFO on (LCR_H.FEN), receive level 1/2 (IFLS: 16 of 32), 40
 *     characters typed: the FIFO fills (FR.RXFF) and RIS shows RX, not RT;
 *     after 20 reads 20 remain (still >= 16: RX); after 10 more, 10 remain
 *     (below the level, not empty: RT, no RX, no RXFF); after the last 10
 *     the FIFO is empty (RXFE, neither interrupt); the characters came in
 *     order ("0123456789" four times).
 *  2. FIFO off, 2 characters typed: the holding register is full after
 *     one (RXFF and RX with one character), then the second follows.
 *  3. Level 1/8 (4 entries), 3 characters typed: RT; a fourth: RX.
 *
 * Lines: "uartfifo: ready <step>" when it waits for the test's input,
 *        "uartfifo: PASS" or "uartfifo: FAIL (<what>)".
 */
#include "runtime.h"

#define UART_DR      0x000
#define UART_FR      0x018
#define UART_LCR_H   0x02c
#define UART_IFLS    0x034
#define UART_IMSC    0x038
#define UART_RIS     0x03c
#define FR_RXFE      (1u << 4)
#define FR_RXFF      (1u << 6)
#define LCR_FEN      (1u << 4)
#define INT_RX       (1u << 4)
#define INT_RT       (1u << 6)
#define WAIT_INPUT_S 60

static u32 reg(u32 off)
{
	return mmio_read32(UART_BASE + off);
}

#define fail(...) rt_fail("uartfifo", __VA_ARGS__)

/* Waits until FR has all bits of want set. */
static bool wait_fr(u32 want)
{
	u64 end = timer_now() + timer_ns_to_ticks(WAIT_INPUT_S * NSEC_PER_SEC);

	while ((reg(UART_FR) & want) != want)
		if (timer_now() > end)
			return false;
	return true;
}

/* RIS's receive bits (RX, RT) and FR's (RXFE, RXFF) as expected? */
static int check(const char *when, u32 ris, u32 fr)
{
	u32 r = reg(UART_RIS) & (INT_RX | INT_RT), f = reg(UART_FR) & (FR_RXFE | FR_RXFF);

	if (r != ris || f != fr)
		return fail("%s: RIS rx/rt 0x%x (want 0x%x), FR rxfe/rxff 0x%x (want 0x%x)", when,
		            r, ris, f, fr);
	return 0;
}

static int read_n(u32 n, u32 *seq)
{
	for (u32 i = 0; i < n; i++, (*seq)++) {
		u32 c = reg(UART_DR) & 0xff;

		if (c != '0' + *seq % 10)
			return fail("character %u is '%c', want '%c'", *seq, (char)c,
			            (char)('0' + *seq % 10));
	}
	return 0;
}

static int fifo_on(void)
{
	u32 seq = 0;

	mmio_write32(UART_BASE + UART_LCR_H, LCR_FEN);
	mmio_write32(UART_BASE + UART_IFLS, 2u << 3); /* receive at 1/2: 16 */
	printf("uartfifo: ready 1\n");
	if (!wait_fr(FR_RXFF))
		return fail("the FIFO never filled");
	/* The 8 typed beyond the FIFO's 32 come through a host pipe and QEMU's
	 * UART: on a loaded host they may reach the hypervisor after the FIFO
	 * filled, and "20 left" counts them. Give them time to arrive. */
	timer_delay_ms(1000);
	if (check("40 typed", INT_RX, FR_RXFF) || read_n(20, &seq) || check("20 left", INT_RX, 0) ||
	    read_n(10, &seq) || check("10 left", INT_RT, 0) || read_n(10, &seq) ||
	    check("empty", 0, FR_RXFE))
		return 1;
	return 0;
}

static int fifo_off(void)
{
	u32 seq = 0;

	mmio_write32(UART_BASE + UART_LCR_H, 0);
	printf("uartfifo: ready 2\n");
	if (!wait_fr(FR_RXFF))
		return fail("the holding register never filled");
	if (check("holding register", INT_RX, FR_RXFF) || read_n(1, &seq))
		return 1;
	if (!wait_fr(FR_RXFF))
		return fail("the second character never came");
	return check("second", INT_RX, FR_RXFF) || read_n(1, &seq) || check("empty", 0, FR_RXFE);
}

static int level_eighth(void)
{
	u32 seq = 0;
	u64 end = timer_now() + timer_ns_to_ticks(WAIT_INPUT_S * NSEC_PER_SEC);

	mmio_write32(UART_BASE + UART_LCR_H, LCR_FEN);
	mmio_write32(UART_BASE + UART_IFLS, 0); /* receive at 1/8: 4 */
	printf("uartfifo: ready 3\n");
	while (!(reg(UART_RIS) & (INT_RX | INT_RT)))
		if (timer_now() > end)
			return fail("no receive interrupt status for 3 characters");
	timer_delay_us(200000); /* all three are in */
	if (check("3 typed", INT_RT, 0))
		return 1;
	printf("uartfifo: ready 4\n");
	while (!(reg(UART_RIS) & INT_RX))
		if (timer_now() > end)
			return fail("no RX at the level");
	return check("4 typed", INT_RX, 0) || read_n(4, &seq) || check("empty", 0, FR_RXFE);
}

int main(const char *params)
{
	(void)params;
	mmio_write32(UART_BASE + UART_IMSC, 0); /* polled: the interrupt stays masked */
	if (fifo_on() || fifo_off() || level_eighth())
		return 1;
	printf("uartfifo: PASS\n");
	return 0;
}
