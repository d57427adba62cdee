/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver side of a virtio-mmio transport (virtio 1.x, "modern",
 * Version 2), for any device behind it: probe, reset, feature negotiation,
 * queue set-up, notifications, interrupt acknowledge and configuration
 * space. Register offsets and bits are the VIRTIO 1.2 specification's
 * (section 4.2.2). The split virtqueues themselves: virtq.h.
 */
#ifndef GUEST_VIRTIO_MMIO_H
#define GUEST_VIRTIO_MMIO_H

#include "types.h"

#define VMMIO_MAGIC         0x000
#define VMMIO_VERSION       0x004
#define VMMIO_DEVICE_ID     0x008
#define VMMIO_VENDOR_ID     0x00c
#define VMMIO_DEV_FEATURES  0x010
#define VMMIO_DEV_FEAT_SEL  0x014
#define VMMIO_DRV_FEATURES  0x020
#define VMMIO_DRV_FEAT_SEL  0x024
#define VMMIO_QUEUE_SEL     0x030
#define VMMIO_QUEUE_NUM_MAX 0x034
#define VMMIO_QUEUE_NUM     0x038
#define VMMIO_QUEUE_READY   0x044
#define VMMIO_QUEUE_NOTIFY  0x050
#define VMMIO_IRQ_STATUS    0x060
#define VMMIO_IRQ_ACK       0x064
#define VMMIO_STATUS        0x070
#define VMMIO_QUEUE_DESC    0x080
#define VMMIO_QUEUE_DRIVER  0x090
#define VMMIO_QUEUE_DEVICE  0x0a0
#define VMMIO_CONFIG_GEN    0x0fc
#define VMMIO_CONFIG        0x100

#define VMMIO_MAGIC_VALUE 0x74726976u /* "virt" */

#define VIRTIO_ID_NET   1
#define VIRTIO_ID_BLOCK 2

/* Device status bits. */
#define VIRTIO_ST_ACK         1u
#define VIRTIO_ST_DRIVER      2u
#define VIRTIO_ST_DRIVER_OK   4u
#define VIRTIO_ST_FEATURES_OK 8u
#define VIRTIO_ST_NEEDS_RESET 64u
#define VIRTIO_ST_FAILED      128u

/* Device-independent feature bits (bit numbers in the 64-bit set). */
#define VIRTIO_F_RING_EVENT_IDX 29
#define VIRTIO_F_VERSION_1      32

/* InterruptStatus bits. */
#define VMMIO_INT_VRING  1u
#define VMMIO_INT_CONFIG 2u

struct vmmio {
	uptr base;
	u32 version;   /* 1 legacy, 2 modern */
	u32 device_id; /* 0: no device behind the transport */
};

u32 vmmio_read(const struct vmmio *d, u32 off);
void vmmio_write(const struct vmmio *d, u32 off, u32 val);
/* Reads magic, version and device id at base: 0 if the magic is right
 * (d->version and d->device_id tell the rest), -1 otherwise. */
int vmmio_probe(struct vmmio *d, uptr base);
/* Writes 0 to Status and waits (a bounded number of reads) until it reads 0:
 * true if the device completed the reset. */
bool vmmio_reset(const struct vmmio *d);
u32 vmmio_status(const struct vmmio *d);
/* Sets bits in Status (read-modify-write). */
void vmmio_status_set(const struct vmmio *d, u32 bits);
u64 vmmio_device_features(const struct vmmio *d);
/* Writes the driver's features and FEATURES_OK: true if the device kept
 * FEATURES_OK (accepted the set). */
bool vmmio_features_ok(const struct vmmio *d, u64 features);
/* Selects queue sel, checks it is not live and takes size entries, writes
 * the three parts' addresses (as the device sees them) and sets it ready:
 * 0, -1 if it is already live, -2 if it takes fewer than size entries. */
int vmmio_queue_setup(const struct vmmio *d, u32 sel, u32 size, u64 desc, u64 avail, u64 used);
u32 vmmio_queue_max(const struct vmmio *d, u32 sel);
bool vmmio_queue_ready(const struct vmmio *d, u32 sel);
void vmmio_notify(const struct vmmio *d, u32 sel);
/* Reads InterruptStatus and acknowledges what it found; returns it. */
u32 vmmio_irq_ack(const struct vmmio *d);
u8 vmmio_config8(const struct vmmio *d, u32 off);
u32 vmmio_config32(const struct vmmio *d, u32 off);
/* A 64-bit field read as two words, retried until ConfigGeneration is stable. */
u64 vmmio_config64(const struct vmmio *d, u32 off);
/* Sets FAILED in Status (the driver gave up on the device). */
void vmmio_fail(const struct vmmio *d);
/* Probes the transport at base for device `id`, resets it and negotiates
 * VERSION_1 (required: a modern transport) and what else of `wanted` the
 * device offers, into *features. NULL on success (FEATURES_OK set), else why
 * the device was refused (then FAILED is set where it got that far). */
const char *vmmio_open(struct vmmio *d, uptr base, u32 id, u64 wanted, u64 *features);

#endif
