/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the generic 16550 driver (hypervisor/drivers/uart/
 * ns16550.c) against the 16550 register model (uart16550_model.h), for
 * every register spacing it honours; the last check drives a byte-spaced
 * UART with the 32-bit spacing and sees the model notice.
 */
#include <stdio.h>

#include "uart16550_model.h"

extern const struct uart_ops ns16550_ops;

int main(void)
{
	static const u8 spacing[][2] = { { 0, 1 }, { 1, 1 }, { 2, 1 }, { 2, 4 } };

	for (size_t i = 0; i < sizeof(spacing) / sizeof(spacing[0]); i++) {
		const struct uart_dev dev = { .ops = &ns16550_ops,
			                      .base = MODEL_BASE,
			                      .reg_shift = spacing[i][0],
			                      .reg_io_width = spacing[i][1] };

		model_reset(spacing[i][0], spacing[i][1], false);
		model_console_run(&dev);
		if (m.bad_access)
			fprintf(stderr, "reg_shift %u, reg_io_width %u: %u bad accesses\n",
			        spacing[i][0], spacing[i][1], m.bad_access);
		CHECK(m.bad_access == 0);
	}
	{
		const struct uart_dev wrong = {
			.ops = &ns16550_ops, .base = MODEL_BASE, .reg_shift = 2, .reg_io_width = 4
		};

		model_reset(0, 1, false);
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
