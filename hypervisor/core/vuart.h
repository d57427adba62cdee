/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Virtual PL011 (enough for Linux's amba-pl011 driver and earlycon): output
 * goes to the console, input comes from it; the interrupt is a level
 * (RIS & IMSC) on the configured virtual INTID.
 */
#ifndef CORE_VUART_H
#define CORE_VUART_H

#include "lib/types.h"

#define VUART_SIZE    0x1000
#define VUART_RX_FIFO 32

struct vuart {
	u32 irq;
	u32 cr, lcr_h, ibrd, fbrd, ifls, imsc, dmacr;
	u32 rx_head, rx_count;
	u8 rx[VUART_RX_FIFO];
};

struct vm;

/* Registers the device (once). */
void vuart_init(struct vm *vm);
/* Resets its registers and FIFO (at every VM start). */
void vuart_init_state(struct vm *vm);
/* Queues a received character (drops it when the FIFO is full). */
void vuart_rx(struct vm *vm, char c);

#endif
