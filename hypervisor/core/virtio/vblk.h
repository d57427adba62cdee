/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The virtio-blk bridge between a client's request queue and its block
 * request rings (docs/io.md "VirtIO"): each request chain (a 16-byte
 * header, data, a status byte) is checked and cut into 4 KiB block ring
 * requests in the client's request ring; the I/O VM's responses are copied
 * into the chain's data buffers and, once every part is back, its status
 * byte is written and the chain used. Pure: the rings' slots come from
 * struct vblk_rings, the client's RAM from struct virtq_mem (host-tested
 * and fuzzed with the virtqueue parser: tests/host/test_virtq.c,
 * fuzz_virtq.c).
 *
 * The slot format mirrors guests/lib/include/blkring.h (docs/io.md "Block
 * ring format"): a request is published with a store-release of FULL; a
 * response is taken after a load-acquire of FULL, its fields read once and
 * checked, and a malformed one (or one no request waits for) is dropped,
 * counted and handed back. Operation and status codes are virtio-blk's.
 *
 * A chain without a header, without a writable status byte, or with a
 * readable descriptor after a writable one stops the device (as a virtqueue
 * error); a request outside the client's capacity, with data not a whole
 * number of sectors, or above VBLK_DATA_MAX bytes gets VIRTIO_BLK_S_IOERR
 * without reaching the I/O VM; an unknown type VIRTIO_BLK_S_UNSUPP. At most
 * VBLK_INFLIGHT requests are in flight; a request whose parts find the
 * request ring full waits (the I/O VM's responses free slots and ring the
 * client's doorbell). Each call takes at most budget chains or responses.
 */
#ifndef CORE_VBLK_H
#define CORE_VBLK_H

#include "core/virtio/virtq.h"

#define VBLK_SECTOR     512u
#define VBLK_HDR_LEN    16u                /* struct virtio_blk_req's header */
#define VBLK_PART       4096u              /* bytes of one block ring request */
#define VBLK_DATA_MAX   (256u * VBLK_PART) /* bytes of one request (256 parts) */
#define VBLK_INFLIGHT   32u
#define VBLK_ID_LEN     20u /* VIRTIO_BLK_ID_BYTES */
#define VBLK_SLOT_HDR   64u
#define VBLK_SLOT_EMPTY 0u
#define VBLK_SLOT_FULL  0x4c4c5546u
#define VBLK_CTRL_MAGIC 0x474e5242u /* "BRNG": the I/O VM reset the rings */

#define VIRTIO_BLK_T_IN     0u
#define VIRTIO_BLK_T_OUT    1u
#define VIRTIO_BLK_T_FLUSH  4u
#define VIRTIO_BLK_T_GET_ID 8u
#define VIRTIO_BLK_S_OK     0u
#define VIRTIO_BLK_S_IOERR  1u
#define VIRTIO_BLK_S_UNSUPP 2u

#define VIRTIO_BLK_F_SIZE_MAX 1
#define VIRTIO_BLK_F_SEG_MAX  2
#define VIRTIO_BLK_F_BLK_SIZE 6
#define VIRTIO_BLK_F_FLUSH    9

/* The header of a slot of either ring (guests/lib/include/blkring.h struct
 * blkring_slot: its data's VBLK_PART bytes follow). */
struct vblk_slot {
	u32 flag;
	u32 index;
	u32 op;
	u32 count;
	u64 sector;
	u32 tag;
	u32 status;
	u32 len;
	u32 seq;
	u8 pad[VBLK_SLOT_HDR - 40];
};

/* The client's two rings of nslots slots: the header of slot i of its
 * request (rsp false) or response ring, NULL if it is not mapped; and a
 * copy of len bytes between buf and that slot's data at offset off (into
 * the slot if to_slot; false: not mapped). A slot's data may cross pages
 * (slots are 4160 bytes): it is reached only through copy. */
struct vblk_rings {
	struct vblk_slot *(*slot)(void *ctx, bool rsp, u32 i);
	bool (*copy)(void *ctx, bool rsp, u32 i, u32 off, void *buf, u32 len, bool to_slot);
	void *ctx;
	u32 nslots;
};

/* Counters (kept across device resets). */
struct vblk_stats {
	u64 reqs;      /* requests completed (any status) */
	u64 parts;     /* block ring requests published */
	u64 ioerr;     /* refused here: outside the capacity, not whole sectors, too long */
	u64 unsupp;    /* unknown request types */
	u64 ring_full; /* times a part waited for a request slot */
	u64 rsp_bad;   /* malformed responses, or for no waiting request, dropped */
	u64 stale;     /* responses to requests of before a device reset, dropped */
};

/* A request in flight: its chain, how many parts went out and came back. */
struct vblk_req {
	bool busy;
	u8 status; /* the worst status of its parts so far */
	u32 type;
	u32 id; /* tags of its parts: id << 8 | part */
	u64 sector;
	u32 bytes;   /* data bytes */
	u32 parts;   /* parts in all */
	u32 sent;    /* parts published */
	u32 done;    /* parts answered */
	u32 written; /* bytes written into the chain (its used length, without the status) */
	struct virtq_chain c;
};

struct vblk {
	struct virtq q;
	u64 capacity; /* sectors of the client's region */
	u32 req_pos, rsp_pos, seq;
	u32 next_id; /* the next request's id (24 bits) */
	u32 epoch;   /* ids below this are of before the last reset */
	int cur;     /* the request whose parts are being published, -1: none */
	struct vblk_req req[VBLK_INFLIGHT];
	struct vblk_stats st;
};

/* Back to no request in flight (a device reset or power-on); the rings'
 * positions, ids and counters are kept (responses to the old requests are
 * recognised and dropped). */
void vblk_reset(struct vblk *b);
/* Takes the client's new requests into its request ring: the number of
 * parts published, or a virtq error (the device must stop). Requests
 * refused here are completed at once (*used set when a chain was used). */
int vblk_submit(struct vblk *b, const struct virtq_mem *m, const struct vblk_rings *r, u32 budget,
                bool *used);
/* Takes the I/O VM's responses into the waiting requests' buffers, using
 * each request whose parts are all back: the number of requests used, or a
 * virtq error. */
int vblk_complete(struct vblk *b, const struct virtq_mem *m, const struct vblk_rings *r,
                  u32 budget);

#endif
