/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the DesignWare APB UART driver (hypervisor/drivers/uart/
 * dw8250.c) against the 16550 register model (uart16550_model.h) with
 * DesignWare's 32-bit registers every 4 bytes (reg-shift 2, reg-io-width 4)
 * and its USR: a busy-detect interrupt is cleared by reading USR.
 */
#include <stdio.h>

#include "uart16550_model.h"

extern const struct uart_ops dw8250_ops;
/* as config.c has it for the RK3588 (the descriptor's spacing) */
static const struct uart_dev dev = {
	.ops = &dw8250_ops, .base = MODEL_BASE, .reg_shift = 2, .reg_io_width = 4
};

static void test_busy_detect(void)
{
	m.busy_detect = true;
	CHECK(uart_getc() == -1);
	CHECK(m.usr_reads == 1 && !m.busy_detect); /* cleared by reading USR */
	CHECK(uart_getc() == -1 && m.usr_reads == 1);
}

int main(void)
{
	model_reset(2, 4, true);
	model_console_run(&dev);
	CHECK(m.usr_reads == 0); /* USR only for a busy-detect */
	test_busy_detect();
	CHECK(m.bad_access == 0);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_dw8250: ok\n");
	return 0;
}
