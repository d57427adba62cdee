/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/vblk.h"
#include "core/virtio/vslot.h"

#define ID_MASK     0xffffffu
#define SECTORS_PER (VBLK_PART / VBLK_SECTOR)
#define BOUNCE      256u /* bytes moved at once between a chain and a slot */

/* struct virtio_blk_req's header (little-endian) */
struct vblk_hdr {
	u32 type;
	u32 reserved;
	u64 sector;
};

void vblk_reset(struct vblk *b)
{
	b->q = (struct virtq){ 0 };
	for (u32 i = 0; i < VBLK_INFLIGHT; i++)
		b->req[i].busy = false;
	b->cur = -1;
	b->epoch = b->next_id;
}

/* Writes the status byte after the chain's data and uses it. */
static enum virtq_res finish(struct vblk *b, const struct virtq_mem *m, struct vblk_req *e)
{
	u8 st = e->status;

	e->busy = false;
	b->st.reqs++;
	if (!virtq_write_chain(m, &e->c, e->c.in_len - 1, &st, 1))
		return VIRTQ_E_ADDR;
	return virtq_push(&b->q, m, e->c.head, e->written + 1) ? VIRTQ_OK : VIRTQ_E_RING;
}

/* What request e (its chain popped, its header read) is: its parts, or a
 * status at once (parts 0). */
static void classify(struct vblk *b, struct vblk_req *e, const struct vblk_hdr *h)
{
	const struct virtq_chain *c = &e->c;

	e->type = h->type;
	e->sector = h->sector;
	e->status = VIRTIO_BLK_S_OK;
	e->bytes = 0;
	e->parts = 1;
	e->sent = e->done = e->written = 0;
	switch (h->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		e->bytes = h->type == VIRTIO_BLK_T_IN ? c->in_len - 1 : c->out_len - VBLK_HDR_LEN;
		if ((h->type == VIRTIO_BLK_T_IN && c->out_len != VBLK_HDR_LEN) || !e->bytes ||
		    e->bytes % VBLK_SECTOR || e->bytes > VBLK_DATA_MAX || h->sector > b->capacity ||
		    e->bytes / VBLK_SECTOR > b->capacity - h->sector) {
			e->status = VIRTIO_BLK_S_IOERR;
			e->parts = 0;
			b->st.ioerr++;
		} else {
			e->parts = (e->bytes + VBLK_PART - 1) / VBLK_PART;
		}
		break;
	case VIRTIO_BLK_T_FLUSH:
		break;
	case VIRTIO_BLK_T_GET_ID:
		e->bytes = MIN(c->in_len - 1, VBLK_ID_LEN);
		break;
	default:
		e->status = VIRTIO_BLK_S_UNSUPP;
		e->parts = 0;
		b->st.unsupp++;
	}
}

/* A free request entry, or NULL. */
static struct vblk_req *free_req(struct vblk *b, u32 *idx)
{
	for (u32 i = 0; i < VBLK_INFLIGHT; i++)
		if (!b->req[i].busy) {
			*idx = i;
			return &b->req[i];
		}
	return NULL;
}

/* Takes the next chain into a new request: VIRTQ_OK (b->cur set, or
 * completed at once: *used), VIRTQ_EMPTY (no chain, or no free entry) or
 * an error. */
static enum virtq_res take(struct vblk *b, const struct virtq_mem *m, bool *used)
{
	struct vblk_hdr h;
	struct vblk_req *e;
	enum virtq_res res;
	u32 i;

	e = free_req(b, &i);
	if (!e)
		return VIRTQ_EMPTY;
	res = virtq_pop(&b->q, m, VBLK_HDR_LEN + VBLK_DATA_MAX + 1, &e->c);
	if (res != VIRTQ_OK)
		return res;
	/* a header to read, a status byte to write */
	if (e->c.out_len < VBLK_HDR_LEN || !e->c.in_len)
		return VIRTQ_E_FLAGS;
	if (!virtq_read_chain(m, &e->c, 0, &h, sizeof(h)))
		return VIRTQ_E_ADDR;
	e->busy = true;
	e->id = b->next_id;
	b->next_id = (b->next_id + 1) & ID_MASK;
	classify(b, e, &h);
	if (!e->parts) {
		*used = true;
		return finish(b, m, e);
	}
	b->cur = (int)i;
	return VIRTQ_OK;
}

/* Moves len bytes between the chain's bytes at offset at (readable ones
 * into the request slot i, or from the response slot i into writable
 * ones), through a bounce buffer. */
static bool move(const struct virtq_mem *m, const struct vblk_rings *r, const struct virtq_chain *c,
                 u32 i, u32 at, u32 len, bool to_slot)
{
	u8 buf[BOUNCE];

	for (u32 off = 0; off < len; off += BOUNCE) {
		u32 n = MIN(BOUNCE, len - off);

		if (to_slot ? !virtq_read_chain(m, c, at + off, buf, n) ||
		                  !r->copy(r->ctx, false, i, off, buf, n, true)
		            : !r->copy(r->ctx, true, i, off, buf, n, false) ||
		                  !virtq_write_chain(m, c, at + off, buf, n))
			return false;
	}
	return true;
}

/* Publishes the parts of request e while request slots are free: VIRTQ_OK
 * (all out), VIRTQ_EMPTY (the ring is full) or an error. */
static enum virtq_res publish(struct vblk *b, const struct virtq_mem *m, const struct vblk_rings *r,
                              struct vblk_req *e, u32 *sent)
{
	while (e->sent < e->parts) {
		struct vblk_slot *s = r->slot(r->ctx, false, b->req_pos);
		u32 off = e->sent * VBLK_PART, count = 0;
		u64 sector = 0;

		if (!s || vslot_flag(&s->flag) != VBLK_SLOT_EMPTY) {
			b->st.ring_full++;
			return VIRTQ_EMPTY;
		}
		if (e->type == VIRTIO_BLK_T_IN || e->type == VIRTIO_BLK_T_OUT) {
			count = MIN(e->bytes - off, VBLK_PART) / VBLK_SECTOR;
			sector = e->sector + (u64)e->sent * SECTORS_PER;
		}
		if (e->type == VIRTIO_BLK_T_OUT &&
		    !move(m, r, &e->c, b->req_pos, VBLK_HDR_LEN + off, count * VBLK_SECTOR, true))
			return VIRTQ_E_ADDR;
		__atomic_store_n(&s->index, b->req_pos, __ATOMIC_RELAXED);
		__atomic_store_n(&s->op, e->type, __ATOMIC_RELAXED);
		__atomic_store_n(&s->count, count, __ATOMIC_RELAXED);
		__atomic_store_n(&s->sector, sector, __ATOMIC_RELAXED);
		__atomic_store_n(&s->tag, e->id << 8 | e->sent, __ATOMIC_RELAXED);
		__atomic_store_n(&s->status, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->len, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->seq, b->seq++, __ATOMIC_RELAXED);
		vslot_set_flag(&s->flag, VBLK_SLOT_FULL);
		b->req_pos = (b->req_pos + 1) % r->nslots;
		e->sent++;
		b->st.parts++;
		(*sent)++;
	}
	return VIRTQ_OK;
}

int vblk_submit(struct vblk *b, const struct virtq_mem *m, const struct vblk_rings *r, u32 budget,
                bool *used)
{
	u32 sent = 0;

	for (u32 k = 0; k < budget; k++) {
		enum virtq_res res;

		if (b->cur < 0) {
			res = take(b, m, used);
			if (res == VIRTQ_EMPTY)
				break;
			if (res != VIRTQ_OK)
				return res;
			if (b->cur < 0)
				continue; /* completed at once */
		}
		res = publish(b, m, r, &b->req[b->cur], &sent);
		if (res == VIRTQ_EMPTY)
			break; /* the I/O VM's responses free slots */
		if (res != VIRTQ_OK)
			return res;
		b->cur = -1;
	}
	return (int)sent;
}

/* The request waiting for the part tagged tag, or NULL. */
static struct vblk_req *waiting(struct vblk *b, u32 tag)
{
	for (u32 i = 0; i < VBLK_INFLIGHT; i++) {
		struct vblk_req *e = &b->req[i];

		if (e->busy && e->id == tag >> 8 && (tag & 0xffu) < e->sent && e->done < e->sent)
			return e;
	}
	return NULL;
}

/* One well-formed response: into its request's buffers; VIRTQ_OK, or
 * VIRTQ_EMPTY when it is dropped (counted), or an error. */
static enum virtq_res answer(struct vblk *b, const struct virtq_mem *m, const struct vblk_rings *r,
                             u32 tag, u32 status, u32 len, bool *used)
{
	struct vblk_req *e = waiting(b, tag);
	u32 off = (tag & 0xffu) * VBLK_PART, n;

	if (!e) {
		if ((((tag >> 8) - b->epoch) & ID_MASK) >= ((b->next_id - b->epoch) & ID_MASK))
			b->st.stale++;
		else
			b->st.rsp_bad++;
		return VIRTQ_EMPTY;
	}
	if (status != VIRTIO_BLK_S_OK && e->status == VIRTIO_BLK_S_OK)
		e->status = (u8)status;
	if (status == VIRTIO_BLK_S_OK &&
	    (e->type == VIRTIO_BLK_T_IN || e->type == VIRTIO_BLK_T_GET_ID)) {
		n = MIN(len, e->bytes - off);
		if (e->type == VIRTIO_BLK_T_IN && n != MIN(e->bytes - off, VBLK_PART) &&
		    e->status == VIRTIO_BLK_S_OK)
			e->status = VIRTIO_BLK_S_IOERR; /* a short read */
		if (!move(m, r, &e->c, b->rsp_pos, off, n, false))
			return VIRTQ_E_ADDR;
		e->written += n;
	}
	e->done++;
	if (e->done < e->parts)
		return VIRTQ_OK;
	*used = true;
	return finish(b, m, e);
}

int vblk_complete(struct vblk *b, const struct virtq_mem *m, const struct vblk_rings *r, u32 budget)
{
	u32 got = 0;

	for (u32 k = 0; k < budget; k++) {
		struct vblk_slot *s = r->slot(r->ctx, true, b->rsp_pos);
		u32 flag, index, op, tag, status, len;
		enum virtq_res res = VIRTQ_EMPTY;
		bool used = false;

		if (!s)
			break;
		flag = vslot_flag(&s->flag);
		if (flag == VBLK_SLOT_EMPTY)
			break;
		index = __atomic_load_n(&s->index, __ATOMIC_RELAXED);
		op = __atomic_load_n(&s->op, __ATOMIC_RELAXED);
		tag = __atomic_load_n(&s->tag, __ATOMIC_RELAXED);
		status = __atomic_load_n(&s->status, __ATOMIC_RELAXED);
		len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
		(void)op;
		if (flag != VBLK_SLOT_FULL || index != b->rsp_pos || len > VBLK_PART ||
		    status > VIRTIO_BLK_S_UNSUPP)
			b->st.rsp_bad++;
		else
			res = answer(b, m, r, tag, status, len, &used);
		vslot_set_flag(&s->flag, VBLK_SLOT_EMPTY);
		b->rsp_pos = (b->rsp_pos + 1) % r->nslots;
		if (res < 0)
			return res;
		got += used;
	}
	return (int)got;
}
