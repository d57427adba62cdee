// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
/*
 * blkring: wait-free block request rings in shared memory (include/blkring.h,
 * docs/io.md). Every value read from shared memory is read exactly once into
 * a local, checked, and only the local is used.
 */
#include "blkring.h"
#include "ioring.h" /* the flag protocol's ordered word accesses */

static inline u32 load32(const u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void store32(u32 *p, u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

bool blkring_attach(struct blkring *r, void *mem, u32 nslots)
{
	u32 i;

	if (!mem || nslots == 0 || nslots > BLKRING_MAX_SLOTS)
		return false;
	r->slots = mem;
	r->nslots = nslots;
	r->pos = 0;
	r->seq = 0;
	r->msgs = 0;
	r->bytes = 0;
	r->full = 0;
	r->malformed = 0;
	for (i = 0; i < BLKRING_BAD_KINDS; i++)
		r->bad[i] = 0;
	return true;
}

void blkring_reset(struct blkring *r)
{
	u32 i;

	for (i = 0; i < r->nslots; i++) {
		struct blkring_slot *s = &r->slots[i];

		store32(&s->index, i);
		store32(&s->len, 0);
		ioring_store_release(&s->flag, BLKRING_EMPTY);
	}
}

static void advance(struct blkring *r)
{
	r->pos = r->pos + 1 == r->nslots ? 0 : r->pos + 1;
}

bool blkring_can_put(const struct blkring *r)
{
	return ioring_load_acquire(&r->slots[r->pos].flag) == BLKRING_EMPTY;
}

bool blkring_pending(const struct blkring *r)
{
	return ioring_load_acquire(&r->slots[r->pos].flag) != BLKRING_EMPTY;
}

/* Why a request would be malformed, or BLKRING_BAD_KINDS if it is well
 * formed: a known op, count 1..MAX_COUNT for read/write (0 for the others),
 * sector + count not wrapping. */
static enum blkring_bad request_check(u32 op, u64 sector, u32 count)
{
	switch (op) {
	case BLKRING_OP_READ:
	case BLKRING_OP_WRITE:
		if (count == 0 || count > BLKRING_MAX_COUNT)
			return BLKRING_BAD_COUNT;
		if (sector > ~0ull - count)
			return BLKRING_BAD_SECTOR;
		return BLKRING_BAD_KINDS;
	case BLKRING_OP_FLUSH:
	case BLKRING_OP_GET_ID:
		return count == 0 ? BLKRING_BAD_KINDS : BLKRING_BAD_COUNT;
	default:
		return BLKRING_BAD_OP;
	}
}

/* Fills the slot at the producer's index and publishes it. */
static void publish(struct blkring *r, const struct blkring_msg *m, const void *data, u32 len)
{
	struct blkring_slot *s = &r->slots[r->pos];

	if (len)
		__builtin_memcpy(s->data, data, len);
	store32(&s->index, r->pos);
	store32(&s->op, m->op);
	store32(&s->count, m->count);
	__atomic_store_n(&s->sector, m->sector, __ATOMIC_RELAXED);
	store32(&s->tag, m->tag);
	store32(&s->status, m->status);
	store32(&s->len, len);
	store32(&s->seq, r->seq);
	/* Release: data and header are visible before FULL. */
	ioring_store_release(&s->flag, BLKRING_FULL);
	r->seq++;
	r->msgs++;
	r->bytes += len;
	advance(r);
}

int blkring_submit(struct blkring *r, u32 op, u64 sector, u32 count, u32 tag, const void *data)
{
	struct blkring_msg m = { .op = op, .count = count, .sector = sector, .tag = tag };

	if (request_check(op, sector, count) != BLKRING_BAD_KINDS ||
	    (op == BLKRING_OP_WRITE && !data))
		return -2;
	if (!blkring_can_put(r)) {
		r->full++;
		return -1;
	}
	publish(r, &m, data, op == BLKRING_OP_WRITE ? count * BLKRING_SECTOR : 0);
	return 0;
}

int blkring_respond(struct blkring *r, const struct blkring_msg *m, u32 status, const void *data,
                    u32 len)
{
	struct blkring_msg out = *m;

	if (status > BLKRING_S_UNSUPP || len > BLKRING_DATA_MAX || (len && !data))
		return -2;
	if (!blkring_can_put(r)) {
		r->full++;
		return -1;
	}
	out.status = status;
	publish(r, &out, data, len);
	return 0;
}

void blkring_put_raw(struct blkring *r, u32 flag, u32 index, const struct blkring_msg *m,
                     const void *data, u32 n)
{
	struct blkring_slot *s = &r->slots[r->pos];

	__builtin_memcpy(s->data, data, n < BLKRING_DATA_MAX ? n : BLKRING_DATA_MAX);
	store32(&s->index, index);
	store32(&s->op, m->op);
	store32(&s->count, m->count);
	__atomic_store_n(&s->sector, m->sector, __ATOMIC_RELAXED);
	store32(&s->tag, m->tag);
	store32(&s->status, m->status);
	store32(&s->len, m->len);
	ioring_store_release(&s->flag, flag);
	advance(r);
}

static int drop(struct blkring *r, struct blkring_slot *s, enum blkring_bad why)
{
	r->bad[why]++;
	r->malformed++;
	ioring_store_release(&s->flag, BLKRING_EMPTY);
	advance(r);
	return -1;
}

/* Reads the header of the slot at the consumer's index once into m.
 * Returns 0 if EMPTY, 1 if FULL with its own index, else a drop (-1). */
static int read_header(struct blkring *r, struct blkring_slot *s, struct blkring_msg *m)
{
	u32 flag = ioring_load_acquire(&s->flag);

	if (flag == BLKRING_EMPTY)
		return 0;
	if (flag != BLKRING_FULL)
		return drop(r, s, BLKRING_BAD_FLAG);
	if (load32(&s->index) != r->pos)
		return drop(r, s, BLKRING_BAD_INDEX);
	m->op = load32(&s->op);
	m->count = load32(&s->count);
	m->sector = __atomic_load_n(&s->sector, __ATOMIC_RELAXED);
	m->tag = load32(&s->tag);
	m->status = load32(&s->status);
	m->len = load32(&s->len);
	m->seq = load32(&s->seq);
	return 1;
}

/* Copies len bytes of the slot's data out, frees the slot and advances. */
static int finish(struct blkring *r, struct blkring_slot *s, void *data, u32 len)
{
	if (len)
		__builtin_memcpy(data, s->data, len);
	/* Release: our copy is complete before the producer may reuse the slot. */
	ioring_store_release(&s->flag, BLKRING_EMPTY);
	r->msgs++;
	r->bytes += len;
	advance(r);
	return 1;
}

int blkring_take(struct blkring *r, struct blkring_msg *m, void *data)
{
	struct blkring_slot *s = &r->slots[r->pos];
	int got = read_header(r, s, m);
	enum blkring_bad bad;

	if (got <= 0)
		return got;
	bad = request_check(m->op, m->sector, m->count);
	if (bad != BLKRING_BAD_KINDS)
		return drop(r, s, bad);
	m->status = 0;
	m->len = m->op == BLKRING_OP_WRITE ? m->count * BLKRING_SECTOR : 0;
	return finish(r, s, data, m->len);
}

int blkring_complete(struct blkring *r, struct blkring_msg *m, void *data, u32 cap)
{
	struct blkring_slot *s = &r->slots[r->pos];
	int got = read_header(r, s, m);

	if (got <= 0)
		return got;
	if (m->status > BLKRING_S_UNSUPP)
		return drop(r, s, BLKRING_BAD_OP);
	if (m->len > BLKRING_DATA_MAX || m->len > cap)
		return drop(r, s, BLKRING_BAD_COUNT);
	return finish(r, s, data, m->len);
}
