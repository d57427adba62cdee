/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The physical UART owned by the hypervisor (polled output, RX interrupt).
 * One driver per build, named by the platform file's uart.driver (Makefile
 * UART=<driver>): drivers/uart/<driver>.c defines the driver's operations,
 * const struct uart_ops <driver>_ops, and config.c describes the device
 * (struct uart_dev: those operations, its base and register spacing, from
 * the platform file and the driver's descriptor bulkhead/drivers/uart/
 * <driver>.py). uart.c is the front end the rest of the hypervisor calls;
 * every other .c file here is a driver, and a new one is a new file.
 */
#ifndef DRIVERS_UART_H
#define DRIVERS_UART_H

#include "lib/types.h"

struct uart_dev;

/* A driver's operations, each on the device u (called through the front
 * end below). */
struct uart_ops {
	void (*init)(const struct uart_dev *u);
	void (*putc)(const struct uart_dev *u, char c); /* waits for room */
	int (*getc)(const struct uart_dev *u);          /* as uart_getc */
	void (*rx_irq_enable)(const struct uart_dev *u);
	void (*rx_irq_disable)(const struct uart_dev *u);
};

/* The device (config.c, from the platform file's uart:). */
struct uart_dev {
	const struct uart_ops *ops;
	u64 base;
	u8 reg_shift;    /* register i at base + (i << reg_shift) (a 16550's reg-shift) */
	u8 reg_io_width; /* bytes per register access: 1 or 4 (reg-io-width) */
};

/* The front end (uart.c): uart_init first (console_init, the first thing
 * the boot CPU does), then the others. */
void uart_init(const struct uart_dev *u);
void uart_putc(char c);
void uart_write(const char *s, size_t len); /* "\n" -> "\r\n" */
/* Returns the next received character, or -1 when the RX FIFO is empty
 * (the receive interrupt is then deasserted). */
int uart_getc(void);
void uart_enable_rx_irq(void);
/* Masks the receive interrupt; characters wait in the UART (the console
 * holds input while the input VM's buffer is full). */
void uart_disable_rx_irq(void);

#endif
