/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The physical UART owned by the hypervisor (polled output, RX interrupt).
 * One driver per build, named by the platform file's uart.driver (Makefile
 * UART=<driver>): drivers/uart/<driver>.c, e.g. pl011.c (Arm PL011) or
 * cadence.c (Cadence UART of the Zynq UltraScale+). Every .c file here but
 * uart.c (what they all share) is a driver; a new one is a new file.
 */
#ifndef DRIVERS_UART_H
#define DRIVERS_UART_H

#include "lib/types.h"

void uart_init(u64 base);
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
