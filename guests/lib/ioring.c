// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
/*
 * ioring: wait-free frame rings in shared memory (include/ioring.h,
 * docs/io.md). Every value read from shared memory is read exactly once into
 * a local, checked, and only the local is used.
 */
#include "ioring.h"

bool ioring_attach(struct ioring *r, void *mem, u32 nslots)
{
	u32 i;

	if (!mem || nslots == 0 || nslots > IORING_MAX_SLOTS)
		return false;
	r->slots = mem;
	r->nslots = nslots;
	r->pos = 0;
	r->seq = 0;
	r->frames = 0;
	r->bytes = 0;
	r->full = 0;
	r->malformed = 0;
	for (i = 0; i < IORING_BAD_KINDS; i++)
		r->bad[i] = 0;
	return true;
}

void ioring_reset(struct ioring *r)
{
	u32 i;

	for (i = 0; i < r->nslots; i++) {
		struct ioring_slot *s = &r->slots[i];

		s->len = 0;
		s->index = i;
		s->seq = 0;
		ioring_store_release(&s->flag, IORING_EMPTY);
	}
}

static void advance(struct ioring *r)
{
	r->pos = r->pos + 1 == r->nslots ? 0 : r->pos + 1;
}

bool ioring_can_send(const struct ioring *r)
{
	return ioring_load_acquire(&r->slots[r->pos].flag) == IORING_EMPTY;
}

u8 *ioring_reserve(struct ioring *r)
{
	/* Acquire: the consumer's reads of this slot are done before we write. */
	if (ioring_load_acquire(&r->slots[r->pos].flag) != IORING_EMPTY) {
		r->full++;
		return NULL;
	}
	return r->slots[r->pos].data;
}

int ioring_publish(struct ioring *r, u32 len)
{
	struct ioring_slot *s = &r->slots[r->pos];

	if (len == 0 || len > IORING_DATA_MAX)
		return -2;
	__atomic_store_n(&s->len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&s->index, r->pos, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, r->seq, __ATOMIC_RELAXED);
	/* Release: data and header are visible before FULL. */
	ioring_store_release(&s->flag, IORING_FULL);
	r->seq++;
	r->frames++;
	r->bytes += len;
	advance(r);
	return 0;
}

int ioring_send(struct ioring *r, const void *data, u32 len)
{
	u8 *d;

	if (len == 0 || len > IORING_DATA_MAX)
		return -2;
	d = ioring_reserve(r);
	if (!d)
		return -1;
	__builtin_memcpy(d, data, len);
	return ioring_publish(r, len);
}

void ioring_put_raw(struct ioring *r, u32 flag, u32 len, u32 index, const void *data, u32 n)
{
	struct ioring_slot *s = &r->slots[r->pos];

	__builtin_memcpy(s->data, data, n < IORING_DATA_MAX ? n : IORING_DATA_MAX);
	__atomic_store_n(&s->len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&s->index, index, __ATOMIC_RELAXED);
	ioring_store_release(&s->flag, flag);
	advance(r);
}

bool ioring_pending(const struct ioring *r)
{
	return ioring_load_acquire(&r->slots[r->pos].flag) != IORING_EMPTY;
}

static int drop(struct ioring *r, struct ioring_slot *s, enum ioring_bad why)
{
	r->bad[why]++;
	r->malformed++;
	ioring_store_release(&s->flag, IORING_EMPTY);
	advance(r);
	return -1;
}

int ioring_recv(struct ioring *r, void *buf, u32 cap, u32 *seq)
{
	struct ioring_slot *s = &r->slots[r->pos];
	u32 flag, len, index, sq;

	flag = ioring_load_acquire(&s->flag);
	if (flag == IORING_EMPTY)
		return 0;
	if (flag != IORING_FULL)
		return drop(r, s, IORING_BAD_FLAG);
	len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
	index = __atomic_load_n(&s->index, __ATOMIC_RELAXED);
	sq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	if (index != r->pos)
		return drop(r, s, IORING_BAD_INDEX);
	if (len == 0 || len > IORING_DATA_MAX || len > cap)
		return drop(r, s, IORING_BAD_LEN);
	__builtin_memcpy(buf, s->data, len);
	/* Release: our copy is complete before the producer may reuse the slot. */
	ioring_store_release(&s->flag, IORING_EMPTY);
	if (seq)
		*seq = sq;
	r->frames++;
	r->bytes += len;
	advance(r);
	return (int)len;
}
