/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device side of a split virtqueue (VIRTIO 1.2, 2.7) in a client VM's
 * RAM: the avail ring walked, descriptor chains checked, the used ring
 * written, with event index (VIRTIO_F_RING_EVENT_IDX) both ways. Pure: the
 * client's RAM is reached only through struct virtq_mem, so that every
 * address the client gives is checked against its RAM before it is used
 * (host-tested and fuzzed: tests/host/test_virtq.c, fuzz_virtq.c).
 *
 * Everything in the rings is the client's: a head or next index out of the
 * queue, a chain longer than the queue (a loop), an indirect descriptor (not
 * offered), a readable descriptor after a writable one, a segment outside
 * its RAM, a total length above the caller's limit or an avail index more
 * than the queue size ahead are errors: the caller stops the device
 * (DEVICE_NEEDS_RESET). Work is bounded: a chain has at most num
 * descriptors, and a pop takes one chain.
 */
#ifndef CORE_VIRTQ_H
#define CORE_VIRTQ_H

#include "lib/types.h"

#define VIRTQ_DESC_F_NEXT          1u
#define VIRTQ_DESC_F_WRITE         2u
#define VIRTQ_DESC_F_INDIRECT      4u
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1u
#define VIRTQ_MAX_SIZE             256u /* the queue size the device offers (QueueNumMax) */
#define VIRTQ_MAX_SEGS             32u  /* descriptors of one chain the device takes */

/* The client's RAM: read and write len bytes at ipa (false: not all of it
 * is RAM; nothing is copied then), and whether [ipa, ipa + len) is RAM. */
struct virtq_mem {
	bool (*read)(void *ctx, u64 ipa, void *dst, u64 len);
	bool (*write)(void *ctx, u64 ipa, const void *src, u64 len);
	bool (*valid)(void *ctx, u64 ipa, u64 len);
	void *ctx;
};

struct virtq {
	u16 num; /* 0: not set up */
	u64 desc, avail, used;
	bool event_idx;
	u16 last_avail; /* next avail entry to take (private) */
	u16 used_idx;   /* next used entry (private; published by virtq_push) */
	u16 signalled;  /* used_idx when the driver was last interrupted */
};

struct virtq_seg {
	u64 addr;
	u32 len;
};

/* A chain: its readable segments first (nout), then its writable ones (nin). */
struct virtq_chain {
	u16 head;
	u16 nout, nin;
	u32 out_len, in_len;
	struct virtq_seg seg[VIRTQ_MAX_SEGS];
};

enum virtq_res {
	VIRTQ_OK = 0,
	VIRTQ_EMPTY = 1,    /* no chain available */
	VIRTQ_E_RING = -1,  /* a ring is not in its RAM */
	VIRTQ_E_IDX = -2,   /* the avail index ran more than num ahead */
	VIRTQ_E_HEAD = -3,  /* a head or next index not below num */
	VIRTQ_E_LOOP = -4,  /* a chain longer than the queue (a loop) */
	VIRTQ_E_FLAGS = -5, /* indirect, or readable after writable */
	VIRTQ_E_ADDR = -6,  /* a segment outside its RAM */
	VIRTQ_E_LEN = -7,   /* total length above the limit */
	VIRTQ_E_SEGS = -8,  /* more than VIRTQ_MAX_SEGS descriptors */
	VIRTQ_E_KINDS = 9,
};

/* Sets the queue up (QueueReady): num a power of two up to
 * VIRTQ_MAX_SIZE; false if the rings are not aligned (16, 2, 4) or not in
 * its RAM (nothing set then). */
bool virtq_setup(struct virtq *q, const struct virtq_mem *m, u16 num, u64 desc, u64 avail, u64 used,
                 bool event_idx);

/* Takes the next available chain into c: VIRTQ_OK, VIRTQ_EMPTY or an
 * error (the queue is then unusable until a reset). max_len bounds the
 * chain's total bytes. */
enum virtq_res virtq_pop(struct virtq *q, const struct virtq_mem *m, u32 max_len,
                         struct virtq_chain *c);
/* Gives the last n chains taken back (taken but not consumed). */
void virtq_unpop(struct virtq *q, u16 n);
/* Number of chains the driver made available and the device has not taken
 * (0 on a bad index: virtq_pop reports it). */
u16 virtq_pending(const struct virtq *q, const struct virtq_mem *m);

/* Puts a chain on the used ring (len bytes written into it) and publishes
 * the used index. False if the used ring is not in its RAM. */
bool virtq_push(struct virtq *q, const struct virtq_mem *m, u16 head, u32 len);
/* Whether the driver wants an interrupt for what was pushed since the last
 * call (event index: its used_event; else its NO_INTERRUPT flag). */
bool virtq_need_irq(struct virtq *q, const struct virtq_mem *m);
/* Event index: asks the driver to notify when it adds past what was taken
 * (avail_event = last_avail). True if more became available meanwhile (the
 * caller looks again). */
bool virtq_want_notify(struct virtq *q, const struct virtq_mem *m);

/* Copies len bytes of the chain's readable bytes from offset off to dst /
 * of src into its writable bytes at offset off. False if the chain is too
 * short or a segment is no longer RAM. */
bool virtq_read_chain(const struct virtq_mem *m, const struct virtq_chain *c, u32 off, void *dst,
                      u32 len);
bool virtq_write_chain(const struct virtq_mem *m, const struct virtq_chain *c, u32 off,
                       const void *src, u32 len);

#endif
