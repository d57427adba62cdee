// SPDX-License-Identifier: Apache-2.0
/*
 * echo: receives console input through the virtual PL011's receive
 * interrupt and reports it, then powers off.
 *
 * Params: lines (default 1): how many lines to receive. With 1 the line is
 *         printed back; with more the PL011 FIFO is enabled (LCR_H.FEN,
 *         IFLS receive level 1/2, so both the level and the receive-timeout
 *         interrupt are needed) and each line is reported by length and
 *         FNV-1a hash (lines of up to 255 characters);
 *         line_delay_us (default 0): busy time after each line, in the
 *         receive interrupt (a guest slower than the input: what arrives
 *         meanwhile must wait in the hypervisor, not be dropped);
 *         echo (default 0): 1 writes each character back as it arrives,
 *         Enter as a newline, like a terminal's echo;
 *         wait_s (default 120): how long to wait for the lines.
 * Lines: "echo: ready" once the receive interrupt is enabled, then
 *        lines=1:  "echo: got '<line>'";
 *        lines>1:  "echo: line <i> len <n> fnv 0x<hash>" per line and
 *                  "echo: <n> lines <bytes> bytes";
 *        then "echo: PASS", or "echo: FAIL (timeout after <n> lines)".
 */
#include "runtime.h"

#define UART_LCR_H   0x02c
#define UART_IFLS    0x034
#define UART_IMSC    0x038
#define UART_ICR     0x044
#define UART_LCR_FEN (1u << 4)
#define UART_INT_RX  (1u << 4)
#define UART_INT_RT  (1u << 6)
#define MAX_LINES    256
#define FNV_OFFSET   0x811c9dc5u
#define FNV_PRIME    0x01000193u

static char line[256];
static volatile u32 len;
static volatile u32 nlines;
static u32 want = 1;
static u32 line_delay_us;
static u32 echo_typed;
static u32 line_len[MAX_LINES];
static u32 line_fnv[MAX_LINES];
static u32 fnv = FNV_OFFSET;

static void echo_irq(u32 intid)
{
	int c;

	(void)intid;
	while ((c = uart_getc()) >= 0) {
		if (echo_typed)
			uart_putc(c == '\r' ? '\n' : (char)c);
		if (c == '\r' || c == '\n') {
			if (len && nlines < MAX_LINES) {
				line_len[nlines] = len;
				line_fnv[nlines] = fnv;
				nlines = nlines + 1;
				if (line_delay_us)
					timer_delay_us(line_delay_us);
			}
			if (nlines < want)
				len = 0;
			fnv = FNV_OFFSET;
			continue;
		}
		if (nlines >= want)
			continue;
		fnv = (fnv ^ (u8)c) * FNV_PRIME;
		if (len < sizeof(line) - 1)
			line[len++] = (char)c;
	}
	mmio_write32(UART_BASE + UART_ICR, UART_INT_RX | UART_INT_RT);
}

static bool echo_done(void *arg)
{
	(void)arg;
	return nlines >= want;
}

int main(const char *params)
{
	u32 bytes = 0;
	u64 wait_s;

	(void)params;
	want = (u32)param_u64("lines", 1);
	line_delay_us = (u32)param_u64("line_delay_us", 0);
	echo_typed = (u32)param_u64("echo", 0);
	wait_s = param_u64("wait_s", 120);
	if (want < 1 || want > MAX_LINES)
		want = 1;
	gic_init();
	irq_register(UART_INTID, echo_irq);
	gic_spi_setup(UART_INTID, false);
	if (want > 1) {
		mmio_write32(UART_BASE + UART_LCR_H, UART_LCR_FEN);
		mmio_write32(UART_BASE + UART_IFLS, 2u << 3); /* receive at 1/2 */
	}
	mmio_write32(UART_BASE + UART_IMSC, UART_INT_RX | UART_INT_RT);
	printf("echo: ready\n");
	if (!timer_wait_until(echo_done, NULL, wait_s * NSEC_PER_SEC)) {
		printf("echo: FAIL (timeout after %u lines)\n", nlines);
		return 1;
	}
	if (want == 1) {
		line[len] = '\0';
		printf("echo: got '%s'\n", line);
	} else {
		for (u32 i = 0; i < want; i++) {
			printf("echo: line %u len %u fnv 0x%08x\n", i, line_len[i], line_fnv[i]);
			bytes += line_len[i] + 1;
		}
		printf("echo: %u lines %u bytes\n", want, bytes);
	}
	printf("echo: PASS\n");
	return 0;
}
