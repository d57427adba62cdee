/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/virtq.h"

struct virtq_desc {
	u64 addr;
	u32 len;
	u16 flags;
	u16 next;
};

#define AVAIL_IDX(q)     ((q)->avail + 2)
#define AVAIL_RING(q, i) ((q)->avail + 4 + 2ull * (i))
#define USED_EVENT(q)    ((q)->avail + 4 + 2ull * (q)->num)
#define USED_IDX(q)      ((q)->used + 2)
#define USED_RING(q, i)  ((q)->used + 4 + 8ull * (i))
#define AVAIL_EVENT(q)   ((q)->used + 4 + 8ull * (q)->num)

static bool rd16(const struct virtq_mem *m, u64 ipa, u16 *v)
{
	return m->read(m->ctx, ipa, v, sizeof(*v));
}

static bool wr16(const struct virtq_mem *m, u64 ipa, u16 v)
{
	return m->write(m->ctx, ipa, &v, sizeof(v));
}

bool virtq_setup(struct virtq *q, const struct virtq_mem *m, u16 num, u64 desc, u64 avail, u64 used,
                 bool event_idx)
{
	if (!num || num > VIRTQ_MAX_SIZE || (num & (num - 1)) || !IS_ALIGNED(desc, 16) ||
	    !IS_ALIGNED(avail, 2) || !IS_ALIGNED(used, 4) || !m->valid(m->ctx, desc, 16ull * num) ||
	    !m->valid(m->ctx, avail, 6 + 2ull * num) || !m->valid(m->ctx, used, 6 + 8ull * num))
		return false;
	*q = (struct virtq){
		.num = num, .desc = desc, .avail = avail, .used = used, .event_idx = event_idx
	};
	return true;
}

u16 virtq_pending(const struct virtq *q, const struct virtq_mem *m)
{
	u16 idx, n;

	if (!q->num || !rd16(m, AVAIL_IDX(q), &idx))
		return 0;
	n = (u16)(idx - q->last_avail);
	return n > q->num ? 0 : n;
}

/* Reads one descriptor and checks it (flags, RAM, order of kinds). */
static enum virtq_res virtq_desc(const struct virtq *q, const struct virtq_mem *m, u16 i,
                                 struct virtq_chain *c, u32 max_len, struct virtq_desc *d)
{
	bool wr;

	if (!m->read(m->ctx, q->desc + 16ull * i, d, sizeof(*d)))
		return VIRTQ_E_RING;
	if (d->flags & VIRTQ_DESC_F_INDIRECT)
		return VIRTQ_E_FLAGS;
	wr = d->flags & VIRTQ_DESC_F_WRITE;
	if (!wr && c->nin)
		return VIRTQ_E_FLAGS; /* readable after writable */
	if ((u64)c->out_len + c->in_len + d->len > max_len)
		return VIRTQ_E_LEN;
	if (d->len && !m->valid(m->ctx, d->addr, d->len))
		return VIRTQ_E_ADDR;
	if (c->nout + c->nin == VIRTQ_MAX_SEGS)
		return VIRTQ_E_SEGS;
	c->seg[c->nout + c->nin] = (struct virtq_seg){ .addr = d->addr, .len = d->len };
	if (wr) {
		c->nin++;
		c->in_len += d->len;
	} else {
		c->nout++;
		c->out_len += d->len;
	}
	return VIRTQ_OK;
}

enum virtq_res virtq_pop(struct virtq *q, const struct virtq_mem *m, u32 max_len,
                         struct virtq_chain *c)
{
	u16 idx, head, i;
	struct virtq_desc d;
	enum virtq_res r;

	if (!q->num)
		return VIRTQ_EMPTY;
	if (!rd16(m, AVAIL_IDX(q), &idx))
		return VIRTQ_E_RING;
	if ((u16)(idx - q->last_avail) > q->num)
		return VIRTQ_E_IDX;
	if (idx == q->last_avail)
		return VIRTQ_EMPTY;
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the index before the entries */
	if (!rd16(m, AVAIL_RING(q, q->last_avail & (q->num - 1)), &head))
		return VIRTQ_E_RING;
	if (head >= q->num)
		return VIRTQ_E_HEAD;
	*c = (struct virtq_chain){ .head = head };
	for (u32 n = 0, next = head;; n++) {
		if (n == q->num)
			return VIRTQ_E_LOOP;
		i = (u16)next;
		r = virtq_desc(q, m, i, c, max_len, &d);
		if (r != VIRTQ_OK)
			return r;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		if (d.next >= q->num)
			return VIRTQ_E_HEAD;
		next = d.next;
	}
	q->last_avail++;
	return VIRTQ_OK;
}

void virtq_unpop(struct virtq *q, u16 n)
{
	q->last_avail = (u16)(q->last_avail - n);
}

bool virtq_push(struct virtq *q, const struct virtq_mem *m, u16 head, u32 len)
{
	u32 elem[2] = { head, len };

	if (!m->write(m->ctx, USED_RING(q, q->used_idx & (q->num - 1)), elem, sizeof(elem)))
		return false;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* the entry before the index */
	if (!wr16(m, USED_IDX(q), (u16)(q->used_idx + 1)))
		return false;
	q->used_idx++;
	return true;
}

bool virtq_need_irq(struct virtq *q, const struct virtq_mem *m)
{
	u16 old = q->signalled, now = q->used_idx, v;

	if (old == now)
		return false;
	q->signalled = now;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the used index before the driver's words */
	if (q->event_idx) {
		if (!rd16(m, USED_EVENT(q), &v))
			return true;
		/* the driver's used_event in [old, now) */
		return (u16)(now - v - 1) < (u16)(now - old);
	}
	if (!rd16(m, q->avail, &v))
		return true;
	return !(v & VIRTQ_AVAIL_F_NO_INTERRUPT);
}

bool virtq_want_notify(struct virtq *q, const struct virtq_mem *m)
{
	u16 idx;

	if (!q->num)
		return false;
	if (q->event_idx && !wr16(m, AVAIL_EVENT(q), q->last_avail))
		return false;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the event before the look */
	return rd16(m, AVAIL_IDX(q), &idx) && idx != q->last_avail;
}

/* The copy of len bytes at offset off of the chain's segments [from, to). */
static bool virtq_copy(const struct virtq_mem *m, const struct virtq_chain *c, u32 from, u32 to,
                       u32 off, u8 *buf, u32 len, bool write)
{
	for (u32 s = from; s < to && len; s++) {
		const struct virtq_seg *g = &c->seg[s];
		u32 n;

		if (off >= g->len) {
			off -= g->len;
			continue;
		}
		n = MIN(g->len - off, len);
		if (write ? !m->write(m->ctx, g->addr + off, buf, n)
		          : !m->read(m->ctx, g->addr + off, buf, n))
			return false;
		buf += n;
		len -= n;
		off = 0;
	}
	return len == 0;
}

bool virtq_read_chain(const struct virtq_mem *m, const struct virtq_chain *c, u32 off, void *dst,
                      u32 len)
{
	return virtq_copy(m, c, 0, c->nout, off, dst, len, false);
}

bool virtq_write_chain(const struct virtq_mem *m, const struct virtq_chain *c, u32 off,
                       const void *src, u32 len)
{
	return virtq_copy(m, c, c->nout, c->nout + c->nin, off, (u8 *)(uintptr_t)src, len, true);
}
