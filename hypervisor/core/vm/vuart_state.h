/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtual UART's registers and receive buffer in the VM object (struct
 * vm vuart). The device is the console's (core/console/vuart.h, which
 * includes this); the object needs the layout only.
 */
#ifndef CORE_VM_VUART_STATE_H
#define CORE_VM_VUART_STATE_H

#include "lib/types.h"

#define VUART_SIZE    0x1000
#define VUART_RX_FIFO 32
#define VUART_RX_BUF  4096

struct vuart {
	u32 irq;
	u32 cr, lcr_h, ibrd, fbrd, ifls, imsc, dmacr;
	u32 rx_head, rx_count;
	bool rx_held; /* the console paused physical input for this VM */
	u8 rx[VUART_RX_BUF];
};

#endif
