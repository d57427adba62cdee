/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Virtual PL011 (enough for Linux's amba-pl011 driver and earlycon): output
 * goes to the console, input comes from it; the interrupt is a level
 * (RIS & IMSC) on the configured virtual INTID.
 *
 * Input is lossless: received characters wait in a per-VM buffer of
 * VUART_RX_BUF bytes; the guest sees its head through a PL011 r1p5 receive
 * FIFO of VUART_RX_FIFO entries (1 with LCR_H.FEN clear) with the
 * hardware's flags (RXFE, RXFF) and interrupts: RX when the FIFO holds at
 * least the IFLS level, RT (receive timeout) when it holds less but is not
 * empty (the buffer behind it is then empty: no character is coming). When
 * the buffer is full the console stops reading the physical UART (input
 * waits there, or in QEMU's character backend) until the guest has read
 * half of it.
 */
#ifndef CORE_VUART_H
#define CORE_VUART_H

#include "core/vm/vuart_state.h"
#include "lib/types.h"

struct vm;

/* Registers the device (once). */
void vuart_init(struct vm *vm);
/* Resets its registers and FIFO (at every VM start). */
void vuart_init_state(struct vm *vm);
/* Makes the virtual UARTs the console's input sink (once, at init): typed
 * characters go to the input VM's receive FIFO; a full FIFO pauses the
 * console's physical input (console_rx_pause) until the guest has read half
 * of it, the VM is reloaded or it stops. */
void vuart_attach_console(void);
/* The VM stopped: input paused for it flows again (and is dropped). */
void vuart_stop(struct vm *vm);

#endif
