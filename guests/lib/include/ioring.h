/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/*
 * ioring: wait-free single-producer/single-consumer frame rings in shared
 * memory between a client VM and the I/O VM (docs/io.md).
 *
 * A ring is an array of fixed-size slots in shared memory. Each slot carries
 * a flag (EMPTY or FULL) and a small header; the producer fills the slot at
 * its own private index and publishes it with a store-release of FULL, the
 * consumer reads the slot at its own private index after a load-acquire of
 * FULL, copies the frame out, and hands the slot back with a store-release of
 * EMPTY. No index is shared, so neither side ever waits for the other or
 * trusts a value the other can write: everything read from a slot (flag,
 * length, index) is read once, checked, and a malformed slot is dropped and
 * counted.
 *
 * The same code runs in bare-metal clients, in the I/O VM and natively in the
 * host unit test (tests/host/test_ioring.c): no runtime dependency beyond
 * memcpy and the compiler's __atomic builtins (LDAR/STLR on AArch64).
 */
#ifndef GUEST_IORING_H
#define GUEST_IORING_H

#include "types.h"

#define IORING_SLOT_SIZE 2048u
#define IORING_HDR_SIZE  16u
#define IORING_DATA_MAX  (IORING_SLOT_SIZE - IORING_HDR_SIZE) /* 2032 bytes */
#define IORING_MAX_SLOTS 256u

#define IORING_EMPTY 0u
#define IORING_FULL  0x4c4c5546u /* "FULL" */

/* Region layout (one region per client): control page, then the client's
 * transmit ring (client -> I/O VM), then its receive ring (I/O VM -> client). */
#define IORING_CTRL_SIZE  4096u
#define IORING_CTRL_MAGIC 0x474e5249u /* "IRNG" */
#define IORING_VERSION    1u

/* Control-page states (client_state / io_state). */
#define IORING_STATE_NONE  0u
#define IORING_STATE_READY 1u
#define IORING_STATE_DONE  2u

struct ioring_slot {
	u32 flag;  /* IORING_EMPTY or IORING_FULL; anything else is malformed */
	u32 len;   /* bytes of data, 1..IORING_DATA_MAX */
	u32 index; /* the slot's own position in the ring, 0..nslots-1 */
	u32 seq;   /* free for the producer (not checked) */
	u8 data[IORING_DATA_MAX];
};

/* First page of a region. Each side writes only its own fields. */
struct ioring_ctrl {
	u32 magic;   /* I/O VM: IORING_CTRL_MAGIC once the rings are reset */
	u32 version; /* I/O VM */
	u32 nslots;  /* I/O VM: slots per ring (informational: each side uses its configured value)
	              */
	u32 slot_size;    /* I/O VM */
	u32 io_state;     /* I/O VM: READY, DONE */
	u32 client_state; /* client: READY, DONE */
	/* I/O VM: its counters for this client, updated as it serves (each a
	 * single 64-bit store; informational, the client cannot change them) */
	u64 st_tx_frames; /* frames forwarded to the device */
	u64 st_rx_frames; /* frames delivered into the rx ring */
	u64 st_rx_drops;  /* frames dropped because the rx ring was full */
	u64 st_malformed; /* malformed slots dropped */
	u64 st_runt;      /* frames shorter than an Ethernet header */
	u64 st_spoofed;   /* frames with another source MAC */
	/* Doorbell suppression (hints: a wrong value only costs its writer):
	 * a side that polls its ring says so, and the peer then rings no
	 * doorbell. A side clears its flag, then issues a full barrier and
	 * looks at its ring once more before it sleeps; the peer publishes its
	 * slot, issues a full barrier and then reads the flag: one of the two
	 * sees the other (ioring_peer_polling). */
	u32 io_polling;     /* I/O VM: 1 while it polls the clients' tx rings */
	u32 client_polling; /* client: 1 while it polls its rx ring */
	/* client: a new non-zero value each time it finds its tx ring full
	 * and waits for room (0: not waiting); the I/O VM, having freed a
	 * slot, issues a full barrier, reads it and rings the client once per
	 * value (the hypervisor's virtio bridge, docs/io.md "VirtIO") */
	u32 client_tx_wait;
	u8 pad[4096 - 24 - 6 * 8 - 12];
};

/* Why a slot was dropped (counters in struct ioring). */
enum ioring_bad {
	IORING_BAD_FLAG,  /* flag neither EMPTY nor FULL */
	IORING_BAD_LEN,   /* len 0 or above IORING_DATA_MAX or the caller's buffer */
	IORING_BAD_INDEX, /* index field not the slot's position */
	IORING_BAD_KINDS,
};

/* One side's private view of one ring (lives in the side's own memory). */
struct ioring {
	struct ioring_slot *slots; /* shared memory */
	u32 nslots;
	u32 pos; /* private index: next slot to fill (producer) or read (consumer) */
	u32 seq; /* producer: sequence number of the next frame */
	u64 frames;
	u64 bytes;
	u64 full;      /* producer: times the ring was full */
	u64 malformed; /* consumer: slots dropped (sum of bad[]) */
	u64 bad[IORING_BAD_KINDS];
};

/* Bytes of a region holding a control page and two rings of nslots slots. */
static inline u64 ioring_region_size(u32 nslots)
{
	return IORING_CTRL_SIZE + 2ull * nslots * IORING_SLOT_SIZE;
}

/* Binds ring to nslots slots at mem (the caller's side only; no shared write).
 * Returns false for nslots outside 1..IORING_MAX_SLOTS. */
bool ioring_attach(struct ioring *r, void *mem, u32 nslots);
/* Owner of the region (the I/O VM) only, before publishing the control page:
 * every slot EMPTY with its index. */
void ioring_reset(struct ioring *r);

/* Producer: copies len bytes into the slot at its index and publishes it.
 * 0 on success, -1 if the ring is full (the slot is not EMPTY), -2 for a bad
 * len (0 or > IORING_DATA_MAX). Never waits. */
int ioring_send(struct ioring *r, const void *data, u32 len);
/* Producer, in two steps (a frame copied in place, e.g. from scattered
 * buffers): the data area of the slot at its index, or NULL if the ring is
 * full (counted); then ioring_publish with the bytes written (1 ..
 * IORING_DATA_MAX, else the slot is not published and -2 returned). */
u8 *ioring_reserve(struct ioring *r);
int ioring_publish(struct ioring *r, u32 len);
/* Producer, for tests and hostile guests only: writes a slot at its index
 * with the given raw header (any flag, len and index field, nothing checked;
 * n bytes of data, at most IORING_DATA_MAX) and advances, whatever the slot
 * held. The consumer must drop and count what is malformed. */
void ioring_put_raw(struct ioring *r, u32 flag, u32 len, u32 index, const void *data, u32 n);
/* Producer: true if the next ioring_send would find its slot EMPTY. */
bool ioring_can_send(const struct ioring *r);

/* Consumer: if the slot at its index is FULL and well formed, copies the
 * frame to buf (at most cap bytes), frees the slot and returns its length.
 * Returns 0 if the slot is EMPTY (nothing to read). A malformed slot is
 * counted, freed and skipped; the call then returns -1 (call again for the
 * next). The slot's data is copied before it is freed; it is never used in
 * place. */
int ioring_recv(struct ioring *r, void *buf, u32 cap, u32 *seq);
/* Consumer: true if the slot at its index is not EMPTY (a frame or a
 * malformed slot is waiting). */
bool ioring_pending(const struct ioring *r);

/* The control page and the two rings of a region at mem. */
static inline struct ioring_ctrl *ioring_ctrl(void *mem)
{
	return (struct ioring_ctrl *)mem;
}
static inline void *ioring_tx_mem(void *mem)
{
	return (u8 *)mem + IORING_CTRL_SIZE;
}
static inline void *ioring_rx_mem(void *mem, u32 nslots)
{
	return (u8 *)mem + IORING_CTRL_SIZE + (u64)nslots * IORING_SLOT_SIZE;
}

/* Shared 32-bit words with acquire/release ordering (LDAR/STLR). */
static inline u32 ioring_load_acquire(const u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline void ioring_store_release(u32 *p, u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Whether the peer said it polls (its flag in the control page): call
 * after publishing slots; it orders them before the read (full barrier).
 * No doorbell is needed then. */
static inline bool ioring_peer_polling(const u32 *flag)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(flag, __ATOMIC_RELAXED) == 1;
}

/* Sets one's own polling flag; clearing it orders the store before the
 * last look at the ring that follows (full barrier). */
static inline void ioring_set_polling(u32 *flag, bool on)
{
	__atomic_store_n(flag, on ? 1u : 0u, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif
