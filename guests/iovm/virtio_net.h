/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal virtio-net driver over virtio-mmio (virtio 1.x "modern" transport,
 * version 2), polled: one receive and one transmit split virtqueue of
 * VNET_QSIZE descriptors, each with its own 2 KiB buffer in the I/O VM's RAM.
 * The device does DMA with physical addresses: every buffer and ring is
 * translated IPA -> PA once at init (BH_HC_IPA_INFO), and none crosses a page.
 */
#ifndef IOVM_VIRTIO_NET_H
#define IOVM_VIRTIO_NET_H

#include "types.h"

#define VNET_QSIZE 16

struct vnet_stats {
	u64 tx_frames, tx_bytes, tx_full;
	u64 rx_frames, rx_bytes, rx_bad;
};

/* 0 on success; a negative code and a printed reason otherwise. */
int vnet_init(uptr base, u8 mac_out[6]);
/* Queue one frame for transmission: 0, or -1 if no transmit descriptor is free. */
int vnet_send(const void *frame, u32 len);
/* True if vnet_send would find a free descriptor (after reclaiming). */
bool vnet_can_send(void);
/* Next received frame: its length and *frame pointing into the driver's buffer
 * (valid until vnet_rx_done), or 0 if none. */
u32 vnet_recv(const u8 **frame);
void vnet_rx_done(void);
/* Acknowledge the device's interrupt status (from its interrupt handler). */
void vnet_irq_ack(void);
const struct vnet_stats *vnet_stats(void);

#endif
