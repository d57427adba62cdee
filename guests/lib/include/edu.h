/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QEMU's `edu` PCI device (hw/misc/edu.c, docs/specs/edu.rst), as the DMA
 * guests drive it (guests/edudma, guests/dmareset): vendor 0x1234, device
 * 0x11e8. BAR0: identification 0x010000ed, liveness (reads back the
 * complement), interrupt status and its acknowledge, a DMA engine (source,
 * destination, count, command: bit 0 start, cleared when done; bit 1
 * direction, 1: edu buffer -> RAM; bit 2 raise an interrupt) and a 4 KiB
 * buffer. A transfer completes 100 ms of virtual time after it starts.
 */
#ifndef GUEST_EDU_H
#define GUEST_EDU_H

#define EDU_VENDOR   0x1234
#define EDU_DEVICE   0x11e8
#define EDU_ID       0x00 /* BAR0 registers */
#define EDU_ALIVE    0x04
#define EDU_IRQST    0x24
#define EDU_IRQRAISE 0x60 /* raise its interrupt (INTx or its MSI) */
#define EDU_IRQACK   0x64
#define EDU_SRC      0x80
#define EDU_DST      0x88
#define EDU_CNT      0x90
#define EDU_CMD      0x98
#define EDU_BUF      0x40000 /* the buffer, as the device addresses it */
#define EDU_RUN      1u      /* EDU_CMD bits */
#define EDU_TO_RAM   2u
#define EDU_IRQ      4u
#define EDU_DMA_IRQ  0x100u /* EDU_IRQST: a transfer ended */

#endif
