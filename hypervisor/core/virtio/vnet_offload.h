/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The transmit offloads of the virtio-net bridge (docs/io.md "VirtIO"):
 * completing a checksum the driver left partial (VIRTIO_NET_F_CSUM) and
 * cutting a TCP/IPv4 segment of up to 64 KiB into frames of the driver's
 * MSS (VIRTIO_NET_F_HOST_TSO4), each with its own IPv4 and TCP header and
 * checksums. Pure (host-tested and fuzzed with the bridge): the frame is
 * the client's, everything in it is checked before it is used.
 */
#ifndef CORE_VNET_OFFLOAD_H
#define CORE_VNET_OFFLOAD_H

#include "core/virtio/virtq.h"

#define VNET_GSO_HDR_MAX 134u /* Ethernet, IPv4 and TCP headers with options */
#define VNET_GSO_MSS_MIN 64u

/* A segmentation in progress: the chain stays taken until its last frame
 * is out. */
struct vnet_gso {
	bool busy;
	struct virtq_chain c;
	u8 hdr[VNET_GSO_HDR_MAX];
	u32 hdrs, iph, tcph; /* header bytes; IPv4 and TCP header lengths */
	u32 mss, payload, seg;
	u16 id;
	u32 seq;
};

/* Completes the checksum the driver left partial in frame f of len bytes:
 * the ones' complement sum from start to the end, stored at start + off.
 * False if they are out of the frame. */
bool vnet_csum_fill(u8 *f, u32 len, u32 start, u32 off);

/* Starts cutting chain c (its frame from offset hdr_len of the chain, len
 * bytes) at gso_size bytes of payload per frame: false if it is not a
 * TCP/IPv4 frame with headers and MSS that fit a frame. */
bool vnet_gso_start(struct vnet_gso *g, const struct virtq_mem *m, const struct virtq_chain *c,
                    u32 hdr_len, u32 len, u32 gso_size);
/* Frames the segmentation still has to make. */
u32 vnet_gso_left(const struct vnet_gso *g);
/* Writes its next frame into out (VNET_FRAME_MAX bytes), advances and
 * returns its length; 0 if the chain can no longer be read. */
u32 vnet_gso_next(struct vnet_gso *g, const struct virtq_mem *m, u32 hdr_len, u8 *out);

#endif
