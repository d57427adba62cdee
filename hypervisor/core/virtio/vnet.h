/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtio-net bridge between a client's virtqueues and its frame rings
 * (docs/io.md "VirtIO"): transmit chains are copied into the client's tx
 * ring slots, frames of its rx ring into the receive buffers it posted
 * (with the 12-byte virtio_net_hdr, mergeable receive buffers when
 * negotiated); with the transmit offloads a partial checksum is completed
 * and a TCP segment cut into frames (vnet_offload.c). Pure: the rings'
 * slots come from struct vnet_rings, the client's RAM from struct
 * virtq_mem (host-tested and fuzzed with the virtqueue parser:
 * tests/host/test_virtq.c, fuzz_virtq.c).
 *
 * The slot format mirrors guests/lib/include/ioring.h (docs/io.md "Ring
 * format"): a frame is published with a store-release of FULL and taken
 * after a load-acquire of FULL, its length and index read once and
 * checked; a malformed rx slot is dropped, counted and handed back. A full
 * tx ring leaves the chains (and the rest of a segmentation) in the
 * virtqueue: the caller asks the I/O VM for a doorbell (client_tx_wait);
 * an rx frame with no buffer posted waits in the rx ring. Each call takes
 * at most budget chains.
 */
#ifndef CORE_VNET_H
#define CORE_VNET_H

#include "core/virtio/vnet_offload.h"

#define VNET_HDR_LEN       12u /* struct virtio_net_hdr_mrg_rxbuf (VERSION_1) */
#define VNET_FRAME_MIN     14u /* an Ethernet header */
#define VNET_FRAME_MAX     1514u
#define VNET_GSO_MAX       65600u /* a TCP segment to cut (HOST_TSO4): IPv4's 64 KiB and Ethernet */
#define VNET_RX_BUF_MAX    65536u /* bytes of one posted receive chain */
#define VNET_RX_MAX_BUFS   16u    /* receive chains one frame may take (mergeable) */
#define VNET_SLOT_DATA_MAX 2032u
#define VNET_SLOT_EMPTY    0u
#define VNET_SLOT_FULL     0x4c4c5546u

#define VIRTIO_NET_F_CSUM      0
#define VIRTIO_NET_F_MAC       5
#define VIRTIO_NET_F_HOST_TSO4 11
#define VIRTIO_NET_F_MRG_RXBUF 15
#define VIRTIO_NET_F_STATUS    16

struct vnet_slot {
	u32 flag;
	u32 len;
	u32 index;
	u32 seq;
	u8 data[VNET_SLOT_DATA_MAX];
};

/* The client's two rings of nslots slots: slot i of its tx (rx false) or
 * rx ring, NULL if it is not mapped. */
struct vnet_rings {
	struct vnet_slot *(*slot)(void *ctx, bool rx, u32 i);
	void *ctx;
	u32 nslots;
};

/* Counters (kept across device resets). */
struct vnet_stats {
	u64 tx_frames, rx_frames;
	u64 tx_full;   /* times the tx ring had no free slot */
	u64 tx_runt;   /* chains shorter than a header and an Ethernet header, dropped */
	u64 tx_nolink; /* chains dropped before the I/O VM had set the rings up */
	u64 tx_bad;    /* frames dropped: a bad offload request (checksum, segmentation) */
	u64 tx_tso;    /* TCP segments cut into frames */
	u64 rx_wait;   /* times a frame waited for receive buffers */
	u64 rx_short;  /* frames dropped: the posted buffers could not hold them */
	u64 rx_bad;    /* malformed rx slots dropped */
};

struct vnet {
	struct virtq q[2]; /* receiveq (0), transmitq (1) */
	bool mrg;          /* VIRTIO_NET_F_MRG_RXBUF negotiated */
	bool csum, tso;    /* VIRTIO_NET_F_CSUM, VIRTIO_NET_F_HOST_TSO4 negotiated */
	struct vnet_gso gso;
	u32 tx_pos, rx_pos, seq;
	struct vnet_stats st;
};

/* Moves what the client queued for transmission into its tx ring: the
 * number of frames published, or a virtq error (the device must stop). */
int vnet_tx(struct vnet *n, const struct virtq_mem *m, const struct vnet_rings *r, u32 budget);
/* Takes what the client queued for transmission and drops it (counted):
 * the rings are not set up. The number dropped, or a virtq error. */
int vnet_tx_drop(struct vnet *n, const struct virtq_mem *m, u32 budget);
/* Moves frames of its rx ring into its posted buffers: the number of
 * frames delivered, or a virtq error. */
int vnet_rx(struct vnet *n, const struct virtq_mem *m, const struct vnet_rings *r, u32 budget);
/* vnet_rx over the whole ring, then the receive queue's next notification
 * asked for (virtq_want_notify); while a frame waits for buffers and the
 * driver posted some meanwhile (it may have read the old event index and
 * not notify for them), once more. The frames delivered, or an error. */
int vnet_rx_all(struct vnet *n, const struct virtq_mem *m, const struct vnet_rings *r);

#endif
