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

#include "netdev.h"

#define VNET_QSIZE 128

/* The driver behind netdev.h ("virtio"). */
extern const struct netdev_ops vnet_ops;

#endif
