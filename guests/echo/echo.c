// SPDX-License-Identifier: Apache-2.0
/*
 * echo: receives one line of console input through the virtual PL011's
 * receive interrupt and prints it back, then powers off.
 *
 * Lines: "echo: ready" once the receive interrupt is enabled,
 *        "echo: got '<line>'" then "echo: PASS".
 * Params: none.
 */
#include "runtime.h"

#define UART_IMSC   0x038
#define UART_ICR    0x044
#define UART_INT_RX (1u << 4)
#define UART_INT_RT (1u << 6)

static char line[80];
static volatile u32 len;
static volatile bool done;

static void echo_irq(u32 intid)
{
	int c;

	(void)intid;
	while ((c = uart_getc()) >= 0) {
		if (c == '\r' || c == '\n') {
			if (len)
				done = true;
			continue;
		}
		if (len < sizeof(line) - 1)
			line[len++] = (char)c;
	}
	mmio_write32(UART_BASE + UART_ICR, UART_INT_RX | UART_INT_RT);
}

static bool echo_done(void *arg)
{
	(void)arg;
	return done;
}

int main(const char *params)
{
	(void)params;
	gic_init();
	irq_register(UART_INTID, echo_irq);
	gic_spi_setup(UART_INTID, false);
	mmio_write32(UART_BASE + UART_IMSC, UART_INT_RX | UART_INT_RT);
	printf("echo: ready\n");
	while (!timer_wait_until(echo_done, NULL, 60ull * NSEC_PER_SEC))
		;
	line[len] = '\0';
	printf("echo: got '%s'\n", line);
	printf("echo: PASS\n");
	return 0;
}
