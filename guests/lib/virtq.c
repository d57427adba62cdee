// SPDX-License-Identifier: Apache-2.0
/* The driver side of a split virtqueue (virtq.h). */
#include "virtq.h"

#ifdef BULKHEAD_HOST_TEST /* tests/host/test_virtq.c: the host compiler's fences */
#define dmb_ish() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define dsb_sy()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#else
#include "arch.h"
#endif

static u16 *virtq_used_event(struct virtq *q)
{
	return &q->avail->ring[q->size];
}

static u16 *virtq_avail_event(struct virtq *q)
{
	return (u16 *)&q->used->ring[q->size];
}

void virtq_init(struct virtq *q, u16 size, void *desc, void *avail, void *used, bool event_idx)
{
	__builtin_memset(desc, 0, VIRTQ_DESC_BYTES(size));
	__builtin_memset(avail, 0, VIRTQ_AVAIL_BYTES(size));
	__builtin_memset(used, 0, VIRTQ_USED_BYTES(size));
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	q->size = size;
	q->avail_idx = 0;
	q->last_used = 0;
	q->kicked_idx = 0;
	q->event_idx = event_idx;
}

void virtq_push(struct virtq *q, u16 head)
{
	q->avail->ring[(u16)(q->avail_idx & (q->size - 1))] = head;
	q->avail_idx++;
}

void virtq_publish(struct virtq *q)
{
	dmb_ish(); /* descriptors, buffers and ring entries before the index */
	WRITE_ONCE(q->avail->idx, q->avail_idx);
}

bool virtq_kick_needed(struct virtq *q)
{
	u16 old = q->kicked_idx, now = q->avail_idx;

	dsb_sy(); /* the index before the device's word is read (and the notify) */
	q->kicked_idx = now;
	if (q->event_idx) {
		u16 ev = READ_ONCE(*virtq_avail_event(q));

		/* notify if avail_event lies in [old, now) */
		return (u16)(now - ev - 1) < (u16)(now - old);
	}
	return !(READ_ONCE(q->used->flags) & VIRTQ_USED_F_NO_NOTE);
}

bool virtq_used_pending(const struct virtq *q)
{
	return READ_ONCE(q->used->idx) != q->last_used;
}

bool virtq_pop_used(struct virtq *q, u32 *id, u32 *len)
{
	const struct virtq_used_elem *e;

	if (!virtq_used_pending(q))
		return false;
	dmb_ish(); /* the index before the element it covers */
	e = &q->used->ring[q->last_used & (q->size - 1)];
	*id = READ_ONCE(e->id);
	*len = READ_ONCE(e->len);
	q->last_used++;
	return true;
}

void virtq_irq_enable(struct virtq *q)
{
	if (q->event_idx)
		WRITE_ONCE(*virtq_used_event(q), q->last_used);
	else
		WRITE_ONCE(q->avail->flags, 0);
	dsb_sy(); /* before the caller looks at the used ring once more */
}

void virtq_irq_disable(struct virtq *q)
{
	if (!q->event_idx)
		WRITE_ONCE(q->avail->flags, VIRTQ_AVAIL_F_NO_INTR);
	/* with event_idx: used_event stays behind, no interrupt until re-armed */
}
