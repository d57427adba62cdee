/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vblk: a small polled virtio-blk driver over a modern virtio-mmio transport
 * (VIRTIO 1.2 section 5.2), one request at a time: the I/O VM's disk
 * (guests/iovm/blkserve.c) and a native reference client (ioclient
 * mode=blkdev). The device sees the driver's memory through `dma` (the I/O
 * VM: the host physical address of each page, BH_HC_IPA_INFO; NULL: the
 * address itself), so every buffer handed to it lies in one 4 KiB page.
 * One device per guest: the virtqueue's memory is the driver's own.
 */
#ifndef GUEST_VBLK_H
#define GUEST_VBLK_H

#include "types.h"
#include "virtio_mmio.h"

#define VBLK_SECTOR  512u
#define VBLK_MAX_LEN 4096u

/* Request types and statuses (virtio-blk's; blkring.h uses the same). */
#define VBLK_T_IN     0u
#define VBLK_T_OUT    1u
#define VBLK_T_FLUSH  4u
#define VBLK_T_GET_ID 8u
#define VBLK_S_OK     0u
#define VBLK_S_IOERR  1u
#define VBLK_S_UNSUPP 2u

#define VBLK_F_RO    5
#define VBLK_F_FLUSH 9

struct vblk {
	struct vmmio mmio;
	u64 features; /* negotiated */
	u64 capacity; /* sectors */
	u64 (*dma)(const void *p);
	u64 requests, errors, timeouts;
};

/* Brings up the virtio-blk device behind the transport at base (VERSION_1,
 * FLUSH and RO where offered; one queue). NULL or why it was refused. */
const char *vblk_open(struct vblk *b, uptr base, u64 (*dma)(const void *p));
/* One request, waited for by polling at most timeout_ns: the device's status
 * (VBLK_S_*), or -1 if it did not complete (the device is then failed and
 * every later call returns -1), -2 for a bad argument (len above
 * VBLK_MAX_LEN, not a multiple of a sector for IN/OUT, buf crossing a page,
 * an address `dma` cannot translate). buf holds len bytes: written for OUT,
 * read into for IN and GET_ID. */
int vblk_request(struct vblk *b, u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns);

#endif
