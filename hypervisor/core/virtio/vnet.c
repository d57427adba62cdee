/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/vnet.h"
#include "core/virtio/vslot.h"

/* struct virtio_net_hdr (little-endian, VERSION_1) */
struct vnet_hdr {
	u8 flags;
	u8 gso_type;
	u16 hdr_len, gso_size, csum_start, csum_offset, num_buffers;
};

#define VNET_HDR_F_NEEDS_CSUM 1u
#define VNET_GSO_TCPV4        1u

/* Publishes slot s holding a frame of len bytes. */
static void tx_publish(struct vnet *n, const struct vnet_rings *r, struct vnet_slot *s, u32 len)
{
	__atomic_store_n(&s->len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&s->index, n->tx_pos, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, n->seq++, __ATOMIC_RELAXED);
	vslot_set_flag(&s->flag, VNET_SLOT_FULL);
	n->tx_pos = (n->tx_pos + 1) % r->nslots;
	n->st.tx_frames++;
}

/* The tx slot at the producer's position if it is free, else NULL. */
static struct vnet_slot *tx_slot(struct vnet *n, const struct vnet_rings *r)
{
	struct vnet_slot *s = r->slot(r->ctx, false, n->tx_pos);

	return s && vslot_flag(&s->flag) == VNET_SLOT_EMPTY ? s : NULL;
}

/* The frames of the segmentation in progress while slots are free:
 * VIRTQ_OK when its last frame is out (its chain is to be used),
 * VIRTQ_EMPTY when it waits for slots, or an error. */
static enum virtq_res tx_gso(struct vnet *n, const struct virtq_mem *m, const struct vnet_rings *r,
                             u32 *sent)
{
	while (vnet_gso_left(&n->gso)) {
		struct vnet_slot *s = tx_slot(n, r);
		u32 len;

		if (!s)
			return VIRTQ_EMPTY;
		len = vnet_gso_next(&n->gso, m, VNET_HDR_LEN, s->data);
		if (!len)
			return VIRTQ_E_ADDR;
		tx_publish(n, r, s, len);
		(*sent)++;
	}
	n->st.tx_tso++;
	return VIRTQ_OK;
}

/* One chain c into slot s, or cut into frames: VIRTQ_OK (c is to be
 * used), VIRTQ_EMPTY (a segmentation of c waits for slots: c is the
 * segmentation's until its last frame), or an error. */
static enum virtq_res tx_chain(struct vnet *n, const struct virtq_mem *m,
                               const struct vnet_rings *r, const struct virtq_chain *c,
                               struct vnet_slot *s, u32 *sent)
{
	struct vnet_hdr h;
	u32 len = c->out_len - VNET_HDR_LEN;

	if (!virtq_read_chain(m, c, 0, &h, VNET_HDR_LEN))
		return VIRTQ_E_ADDR;
	if (h.gso_type) {
		if (!n->tso || h.gso_type != VNET_GSO_TCPV4 ||
		    !vnet_gso_start(&n->gso, m, c, VNET_HDR_LEN, len, h.gso_size)) {
			n->st.tx_bad++;
			return VIRTQ_OK;
		}
		return tx_gso(n, m, r, sent);
	}
	if (len > VNET_FRAME_MAX) {
		n->st.tx_bad++;
		return VIRTQ_OK;
	}
	if (!virtq_read_chain(m, c, VNET_HDR_LEN, s->data, len))
		return VIRTQ_E_ADDR;
	if ((h.flags & VNET_HDR_F_NEEDS_CSUM) &&
	    (!n->csum || !vnet_csum_fill(s->data, len, h.csum_start, h.csum_offset))) {
		n->st.tx_bad++;
		return VIRTQ_OK;
	}
	tx_publish(n, r, s, len);
	(*sent)++;
	return VIRTQ_OK;
}

int vnet_tx(struct vnet *n, const struct virtq_mem *m, const struct vnet_rings *r, u32 budget)
{
	struct virtq *q = &n->q[1];
	struct virtq_chain c;
	u32 sent = 0;

	for (u32 k = 0; k < budget; k++) {
		struct vnet_slot *s;
		enum virtq_res res;

		if (n->gso.busy) { /* the segmentation a full ring stopped goes on first */
			res = tx_gso(n, m, r, &sent);
			if (res == VIRTQ_EMPTY)
				n->st.tx_full++;
			if (res != VIRTQ_OK)
				return res == VIRTQ_EMPTY ? (int)sent : res;
			if (!virtq_push(q, m, n->gso.c.head, 0))
				return VIRTQ_E_RING;
			continue;
		}
		s = tx_slot(n, r);
		if (!s) {
			if (virtq_pending(q, m))
				n->st.tx_full++;
			break;
		}
		res = virtq_pop(q, m, VNET_HDR_LEN + (n->tso ? VNET_GSO_MAX : VNET_FRAME_MAX), &c);
		if (res == VIRTQ_EMPTY)
			break;
		if (res != VIRTQ_OK)
			return res;
		if (c.nin)
			return VIRTQ_E_FLAGS; /* the transmit queue's buffers are read only */
		if (c.out_len < VNET_HDR_LEN + VNET_FRAME_MIN) {
			n->st.tx_runt++;
		} else {
			res = tx_chain(n, m, r, &c, s, &sent);
			if (res == VIRTQ_EMPTY) {
				n->st.tx_full++; /* the segmentation waits for slots */
				break;
			}
			if (res != VIRTQ_OK)
				return res;
		}
		if (!virtq_push(q, m, c.head, 0))
			return VIRTQ_E_RING;
	}
	return (int)sent;
}

int vnet_tx_drop(struct vnet *n, const struct virtq_mem *m, u32 budget)
{
	struct virtq *q = &n->q[1];
	struct virtq_chain c;
	u32 k;

	for (k = 0; k < budget; k++) {
		enum virtq_res res = virtq_pop(q, m, VNET_HDR_LEN + VNET_FRAME_MAX, &c);

		if (res == VIRTQ_EMPTY)
			break;
		if (res != VIRTQ_OK)
			return res;
		if (c.nin)
			return VIRTQ_E_FLAGS;
		if (!virtq_push(q, m, c.head, 0))
			return VIRTQ_E_RING;
		n->st.tx_nolink++;
	}
	return (int)k;
}

/* Pops one receive chain: VIRTQ_OK with c filled, VIRTQ_EMPTY, or an error. */
static enum virtq_res rx_pop(struct virtq *q, const struct virtq_mem *m, struct virtq_chain *c)
{
	enum virtq_res res = virtq_pop(q, m, VNET_RX_BUF_MAX, c);

	if (res == VIRTQ_OK && (c->nout || c->in_len < VNET_HDR_LEN))
		return c->nout ? VIRTQ_E_FLAGS : VIRTQ_E_LEN; /* write only, the header fits */
	return res;
}

/* Delivers one frame of len bytes at data: VIRTQ_OK (delivered, or
 * dropped for too little posted room: counted), VIRTQ_EMPTY (no buffer: it
 * waits), or an error. */
static enum virtq_res rx_frame(struct vnet *n, const struct virtq_mem *m, const u8 *data, u32 len)
{
	struct virtq *q = &n->q[0];
	struct virtq_chain first, c;
	u16 heads[VNET_RX_MAX_BUFS];
	u32 lens[VNET_RX_MAX_BUFS];
	u32 nb = 1, done;
	u16 hdr[6] = { 0 };
	enum virtq_res res = rx_pop(q, m, &first);

	if (res != VIRTQ_OK)
		return res;
	done = MIN(first.in_len - VNET_HDR_LEN, len);
	if (!virtq_write_chain(m, &first, VNET_HDR_LEN, data, done))
		return VIRTQ_E_ADDR;
	heads[0] = first.head;
	lens[0] = VNET_HDR_LEN + done;
	while (done < len) {
		if (!n->mrg || nb == VNET_RX_MAX_BUFS) {
			virtq_unpop(q, (u16)nb); /* the buffers are the client's again */
			n->st.rx_short++;
			return VIRTQ_OK;
		}
		res = rx_pop(q, m, &c);
		if (res == VIRTQ_EMPTY)
			virtq_unpop(q, (u16)nb);
		if (res != VIRTQ_OK)
			return res;
		heads[nb] = c.head;
		lens[nb] = MIN(c.in_len, len - done);
		if (!virtq_write_chain(m, &c, 0, data + done, lens[nb]))
			return VIRTQ_E_ADDR;
		done += lens[nb++];
	}
	hdr[5] = (u16)nb; /* num_buffers */
	if (!virtq_write_chain(m, &first, 0, hdr, VNET_HDR_LEN))
		return VIRTQ_E_ADDR;
	for (u32 i = 0; i < nb; i++)
		if (!virtq_push(q, m, heads[i], lens[i]))
			return VIRTQ_E_RING;
	n->st.rx_frames++;
	return VIRTQ_OK;
}

int vnet_rx(struct vnet *n, const struct virtq_mem *m, const struct vnet_rings *r, u32 budget)
{
	u32 got = 0;

	for (u32 k = 0; k < budget; k++) {
		struct vnet_slot *s = r->slot(r->ctx, true, n->rx_pos);
		u32 flag, len, index;
		enum virtq_res res;

		if (!s)
			break;
		flag = vslot_flag(&s->flag);
		if (flag == VNET_SLOT_EMPTY)
			break;
		len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
		index = __atomic_load_n(&s->index, __ATOMIC_RELAXED);
		if (flag != VNET_SLOT_FULL || index != n->rx_pos || !len ||
		    len > VNET_SLOT_DATA_MAX) {
			n->st.rx_bad++;
		} else {
			/* the I/O VM's frame, copied straight into the client's buffers:
			 * a frame it changes meanwhile only corrupts itself */
			res = rx_frame(n, m, s->data, len);
			if (res == VIRTQ_EMPTY) {
				n->st.rx_wait++;
				break;
			}
			if (res != VIRTQ_OK)
				return res;
			got++;
		}
		vslot_set_flag(&s->flag, VNET_SLOT_EMPTY);
		n->rx_pos = (n->rx_pos + 1) % r->nslots;
	}
	return (int)got;
}

int vnet_rx_all(struct vnet *n, const struct virtq_mem *m, const struct vnet_rings *r)
{
	int got = 0;

	/* each pass but the last delivers a frame or takes a buffer: bounded by
	 * the ring's frames */
	for (u32 pass = 0; pass <= r->nslots; pass++) {
		u64 waits = n->st.rx_wait;
		int k = vnet_rx(n, m, r, r->nslots);

		if (k < 0)
			return k;
		got += k;
		if (!virtq_want_notify(&n->q[0], m) || n->st.rx_wait == waits)
			break;
	}
	return got;
}
