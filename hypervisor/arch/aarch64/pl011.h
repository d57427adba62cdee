/* SPDX-License-Identifier: Apache-2.0 */
/* The physical PL011 UART owned by the hypervisor (polled output, RX interrupt). */
#ifndef ARCH_PL011_H
#define ARCH_PL011_H

#include "lib/types.h"

void pl011_init(u64 base);
void pl011_putc(char c);
void pl011_write(const char *s, size_t len);
/* Returns the next received character, or -1 when the RX FIFO is empty. */
int pl011_getc(void);
/* Unmasks (on) or masks the receive and receive-timeout interrupts. */
void pl011_set_rx_irq(bool on);

#endif
