/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/*
 * blkring: wait-free block request rings in shared memory between a client
 * (or the hypervisor's virtio-blk bridge on the client's CPU) and the I/O VM,
 * which serves the requests on its disk (docs/io.md "Block ring format").
 *
 * The same discipline as ioring.h: a ring is an array of fixed-size slots;
 * each slot carries a flag (EMPTY or FULL); the producer fills the slot at its
 * own private index and publishes it with a store-release of FULL; the
 * consumer reads it after a load-acquire of FULL, copies everything out and
 * frees it with a store-release of EMPTY. No index is shared; every header
 * field is read exactly once into a local and checked; a malformed slot is
 * freed, skipped and counted.
 *
 * A region holds a control page, the request ring (client -> I/O VM) and the
 * response ring (I/O VM -> client), both of nslots slots. The client numbers
 * sectors from 0 in its own region of the disk; the I/O VM adds the region's
 * base and refuses a request that leaves the region. Operation and status
 * codes are virtio-blk's (VIRTIO_BLK_T_*, VIRTIO_BLK_S_*), so the bridge
 * passes them through.
 *
 * No runtime dependency beyond memcpy and the compiler's __atomic builtins;
 * host-tested (tests/host/test_blkring.c) and fuzzed (fuzz_blkring.c).
 */
#ifndef GUEST_BLKRING_H
#define GUEST_BLKRING_H

#include "types.h"

#define BLKRING_SECTOR    512u
#define BLKRING_DATA_MAX  4096u /* a 4 KiB read or write is one slot */
#define BLKRING_MAX_COUNT (BLKRING_DATA_MAX / BLKRING_SECTOR) /* 8 sectors */
#define BLKRING_HDR_SIZE  64u
#define BLKRING_SLOT_SIZE (BLKRING_HDR_SIZE + BLKRING_DATA_MAX) /* 4160 bytes */
#define BLKRING_MAX_SLOTS 64u
#define BLKRING_ID_LEN    20u /* get-id: VIRTIO_BLK_ID_BYTES */

#define BLKRING_EMPTY 0u
#define BLKRING_FULL  0x4c4c5546u /* "FULL", as ioring */

/* Operations (virtio-blk's request types). */
#define BLKRING_OP_READ   0u
#define BLKRING_OP_WRITE  1u
#define BLKRING_OP_FLUSH  4u
#define BLKRING_OP_GET_ID 8u

/* Response status (virtio-blk's). */
#define BLKRING_S_OK     0u
#define BLKRING_S_IOERR  1u /* failed, or outside the client's region */
#define BLKRING_S_UNSUPP 2u

#define BLKRING_CTRL_SIZE  4096u
#define BLKRING_CTRL_MAGIC 0x474e5242u /* "BRNG" */
#define BLKRING_VERSION    1u

/* A slot, in either ring. Request: op, count, sector, tag (and count sectors
 * of data for a write). Response: op and tag of its request, status, len
 * bytes of data (a read's sectors, get-id's identifier). */
struct blkring_slot {
	u32 flag;   /* BLKRING_EMPTY or BLKRING_FULL; anything else is malformed */
	u32 index;  /* the slot's own position in the ring, 0..nslots-1 */
	u32 op;     /* BLKRING_OP_* */
	u32 count;  /* request: sectors, 1..BLKRING_MAX_COUNT for read/write, 0 otherwise */
	u64 sector; /* request: first sector, in the client's region */
	u32 tag;    /* chosen by the client, echoed in the response (never checked) */
	u32 status; /* response: BLKRING_S_* */
	u32 len;    /* response: bytes of data, 0..BLKRING_DATA_MAX */
	u32 seq;    /* free for the producer (not checked) */
	u8 pad[BLKRING_HDR_SIZE - 40];
	u8 data[BLKRING_DATA_MAX];
};

/* First page of a region. Each side writes only its own fields. */
struct blkring_ctrl {
	u32 magic;        /* I/O VM: BLKRING_CTRL_MAGIC once the rings are reset */
	u32 version;      /* I/O VM */
	u32 nslots;       /* I/O VM (informational: each side uses its configured value) */
	u32 slot_size;    /* I/O VM */
	u32 io_state;     /* I/O VM: IORING_STATE_* values (1 ready, 2 done) */
	u32 client_state; /* client: the same */
	u64 sectors;      /* I/O VM: the size of the client's region (informational) */
	/* I/O VM: its counters for this client (single 64-bit stores) */
	u64 st_requests; /* requests served (any status) */
	u64 st_read;     /* bytes read */
	u64 st_written;  /* bytes written */
	u64 st_refused;  /* requests outside the region (IOERR) */
	u64 st_errors;   /* device errors and unsupported operations */
	u64 st_malformed;
	u32 io_polling;     /* I/O VM: 1 while it polls the request rings */
	u32 client_polling; /* client: 1 while it polls its response ring */
	u8 pad[4096 - 24 - 7 * 8 - 8];
};

/* Why a slot was dropped (counters in struct blkring). */
enum blkring_bad {
	BLKRING_BAD_FLAG,   /* flag neither EMPTY nor FULL */
	BLKRING_BAD_INDEX,  /* index field not the slot's position */
	BLKRING_BAD_OP,     /* request: unknown op; response: op/status unknown */
	BLKRING_BAD_COUNT,  /* request: count out of range for its op; response: len */
	BLKRING_BAD_SECTOR, /* request: sector + count wraps around */
	BLKRING_BAD_KINDS,
};

/* A request or response as copied out of a slot (the consumer's own memory). */
struct blkring_msg {
	u32 op;
	u32 count;
	u64 sector;
	u32 tag;
	u32 status;
	u32 len; /* bytes in data: a write's count * BLKRING_SECTOR, a response's len */
	u32 seq;
};

/* One side's private view of one ring. */
struct blkring {
	struct blkring_slot *slots; /* shared memory */
	u32 nslots;
	u32 pos; /* private index */
	u32 seq;
	u64 msgs;
	u64 bytes;
	u64 full;      /* producer: times the ring was full */
	u64 malformed; /* consumer: slots dropped (sum of bad[]) */
	u64 bad[BLKRING_BAD_KINDS];
};

static inline u64 blkring_region_size(u32 nslots)
{
	return BLKRING_CTRL_SIZE + 2ull * nslots * BLKRING_SLOT_SIZE;
}
static inline struct blkring_ctrl *blkring_ctrl(void *mem)
{
	return (struct blkring_ctrl *)mem;
}
static inline void *blkring_req_mem(void *mem)
{
	return (u8 *)mem + BLKRING_CTRL_SIZE;
}
static inline void *blkring_rsp_mem(void *mem, u32 nslots)
{
	return (u8 *)mem + BLKRING_CTRL_SIZE + (u64)nslots * BLKRING_SLOT_SIZE;
}

/* Whether [sector, sector + count) lies in a region of `sectors` sectors
 * (no overflow for any input). */
static inline bool blkring_in_region(u64 sector, u32 count, u64 sectors)
{
	return sector <= sectors && count <= sectors - sector;
}

/* Binds r to nslots slots at mem; false for nslots outside 1..MAX_SLOTS. */
bool blkring_attach(struct blkring *r, void *mem, u32 nslots);
/* The region's owner (the I/O VM) only: every slot EMPTY with its index. */
void blkring_reset(struct blkring *r);
/* Producer: true if the slot at its index is EMPTY. */
bool blkring_can_put(const struct blkring *r);
/* Consumer: true if the slot at its index is not EMPTY. */
bool blkring_pending(const struct blkring *r);

/* Client: publishes a request. A write carries count sectors of data; other
 * ops carry none. 0 on success, -1 if the ring is full (counted), -2 for a
 * request the I/O VM would drop as malformed (unknown op, count out of range,
 * sector + count wrapping). Never waits. */
int blkring_submit(struct blkring *r, u32 op, u64 sector, u32 count, u32 tag, const void *data);
/* I/O VM: if the slot at its index holds a well-formed request, copies it to
 * m (and a write's data to data, BLKRING_DATA_MAX bytes), frees the slot and
 * returns 1; 0 if EMPTY; -1 for a malformed slot (counted, freed, skipped:
 * call again). Region checks are the caller's (blkring_in_region). */
int blkring_take(struct blkring *r, struct blkring_msg *m, void *data);
/* I/O VM: publishes the response to request m with status and len bytes of
 * data. 0, -1 if the ring is full (counted), -2 for a bad status or len. */
int blkring_respond(struct blkring *r, const struct blkring_msg *m, u32 status, const void *data,
                    u32 len);
/* Client: like blkring_take for a response, its data copied to data (at
 * most cap bytes; a longer response is malformed). */
int blkring_complete(struct blkring *r, struct blkring_msg *m, void *data, u32 cap);
/* For tests and hostile clients only: writes the slot at the producer's index
 * from raw header values and n bytes of data, nothing checked, and advances. */
void blkring_put_raw(struct blkring *r, u32 flag, u32 index, const struct blkring_msg *m,
                     const void *data, u32 n);

#endif
