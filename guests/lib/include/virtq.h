/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The driver side of a split virtqueue (VIRTIO 1.2, section 2.7): the
 * descriptor table, the available ring the driver produces and the used ring
 * the device produces, in memory the caller provides (no allocation; each
 * part in memory the device can reach, see VIRTQ_*_BYTES and alignment
 * rules: 16, 2 and 4 bytes). Optional VIRTIO_F_RING_EVENT_IDX: the
 * used_event / avail_event words after the rings.
 *
 * The caller owns descriptors (which are free, how chains are built) and
 * checks every id and length the device puts on the used ring.
 */
#ifndef GUEST_VIRTQ_H
#define GUEST_VIRTQ_H

#include "types.h"

#define VIRTQ_DESC_F_NEXT     1u
#define VIRTQ_DESC_F_WRITE    2u
#define VIRTQ_AVAIL_F_NO_INTR 1u /* VRING_AVAIL_F_NO_INTERRUPT */
#define VIRTQ_USED_F_NO_NOTE  1u /* VRING_USED_F_NO_NOTIFY */

struct virtq_desc {
	u64 addr;
	u32 len;
	u16 flags;
	u16 next;
};

struct virtq_avail {
	u16 flags;
	u16 idx;
	u16 ring[]; /* size entries, then used_event */
};

struct virtq_used_elem {
	u32 id;
	u32 len;
};

struct virtq_used {
	u16 flags;
	u16 idx;
	struct virtq_used_elem ring[]; /* size entries, then avail_event */
};

#define VIRTQ_DESC_BYTES(n)  (16u * (n))
#define VIRTQ_AVAIL_BYTES(n) (6u + 2u * (n))
#define VIRTQ_USED_BYTES(n)  (6u + 8u * (n))

/* Memory for a queue of n entries, each part aligned to `align` (at least
 * 16; 4096 puts each in its own page). A struct type, also usable as an
 * anonymous member (C11): its fields desc, avail, used. */
#define VIRTQ_MEM(n, align)                                      \
	struct {                                                 \
		struct virtq_desc desc[n] __aligned(align);      \
		u8 avail[VIRTQ_AVAIL_BYTES(n)] __aligned(align); \
		u8 used[VIRTQ_USED_BYTES(n)] __aligned(align);   \
	}

struct virtq {
	struct virtq_desc *desc;
	struct virtq_avail *avail;
	struct virtq_used *used;
	u16 size;       /* entries (a power of two) */
	u16 avail_idx;  /* next available-ring index (private copy) */
	u16 last_used;  /* next used-ring entry to read */
	u16 kicked_idx; /* avail_idx at the last notification decision */
	bool event_idx; /* VIRTIO_F_RING_EVENT_IDX negotiated */
};

/* Clears the three parts and sets q up over them. */
void virtq_init(struct virtq *q, u16 size, void *desc, void *avail, void *used, bool event_idx);
/* Puts descriptor chain head on the available ring (not yet visible). */
void virtq_push(struct virtq *q, u16 head);
/* Makes everything pushed so far visible to the device (release order). */
void virtq_publish(struct virtq *q);
/* After virtq_publish: whether the device wants a notification (its
 * avail_event with event_idx, else its NO_NOTIFY flag). */
bool virtq_kick_needed(struct virtq *q);
/* The next used element: true and *id, *len (unchecked), or false. */
bool virtq_pop_used(struct virtq *q, u32 *id, u32 *len);
bool virtq_used_pending(const struct virtq *q);
/* Asks for an interrupt at the next used buffer (used_event with event_idx,
 * else clears NO_INTERRUPT), or suppresses them. */
void virtq_irq_enable(struct virtq *q);
void virtq_irq_disable(struct virtq *q);

#endif
