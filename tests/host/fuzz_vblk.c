/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a client's request queue and the I/O VM's responses as
 * the virtio-blk bridge sees them (core/virtio/virtq.c, vblk.c). The
 * client's RAM (descriptors, rings, buffers) comes from the input, then a
 * sequence of submit and complete runs, device resets, the I/O VM taking
 * request slots and writing response slots (honest or not), while the
 * input rewrites RAM between them. Every access stays inside the client's
 * RAM (the accessors abort otherwise), a published request slot is at its
 * own index with a known op, a count of at most 8 sectors and (for a read
 * or a write) sectors inside the capacity, a run puts at most num entries
 * on the used ring, and after an error the device is not used again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/virtio/vblk.h"

#define RAM_BASE 0x40000000ull
#define RAM_SIZE 0x8000ull
#define SLOTS    4
#define CAPACITY 64u

#include "virtq_ram.h"
#include "virtq_fuzz.h"

/* a slot: its header and its data */
struct tslot {
	struct vblk_slot h;
	u8 data[VBLK_PART];
};
static struct tslot reqs[SLOTS], rsps[SLOTS];

static struct tslot *tslot(bool is_rsp, u32 i)
{
	return virtq_fuzz_slot(reqs, rsps, sizeof(*reqs), is_rsp, i);
}

static struct vblk_slot *slot(void *ctx, bool is_rsp, u32 i)
{
	(void)ctx;
	return &tslot(is_rsp, i)->h;
}

static bool copy(void *ctx, bool is_rsp, u32 i, u32 off, void *buf, u32 len, bool to_slot)
{
	u8 *d;

	(void)ctx;
	if (off > VBLK_PART || len > VBLK_PART - off)
		abort();
	d = tslot(is_rsp, i)->data + off;
	memcpy(to_slot ? d : buf, to_slot ? buf : d, len);
	return true;
}

static const struct vblk_rings rings = { .slot = slot, .copy = copy, .nslots = SLOTS };

static void check_requests(void)
{
	for (u32 i = 0; i < SLOTS; i++) {
		const struct vblk_slot *s = &reqs[i].h;

		if (s->flag != VBLK_SLOT_FULL)
			continue;
		if (s->index != i || s->count > VBLK_PART / VBLK_SECTOR)
			abort();
		if (s->op == VIRTIO_BLK_T_IN || s->op == VIRTIO_BLK_T_OUT) {
			if (!s->count || s->sector > CAPACITY || s->count > CAPACITY - s->sector)
				abort();
		} else if ((s->op != VIRTIO_BLK_T_FLUSH && s->op != VIRTIO_BLK_T_GET_ID) ||
		           s->count) {
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vblk b;
	struct virtq_fuzz_step step;
	size_t pos = 8;
	u16 num;

	if (size < 8)
		return 0;
	memset(ram, 0, sizeof(ram));
	memset(reqs, 0, sizeof(reqs));
	memset(rsps, 0, sizeof(rsps));
	memset(&b, 0, sizeof(b));
	vblk_reset(&b);
	b.capacity = CAPACITY;
	num = (u16)(1u << (data[1] % 9)); /* 1 .. 256 */
	/* rings at 0x0000/0x1000/0x1800 */
	if (!virtq_setup(&b.q, &mem, num, RAM_BASE, RAM_BASE + 0x1000, RAM_BASE + 0x1800,
	                 data[0] & 2))
		abort();
	while (virtq_fuzz_next(data, size, &pos, &step)) {
		u8 op = step.op;
		u32 arg = step.arg, len = step.len;
		u16 u0 = b.q.used_idx;
		bool used = false;
		int r = 0;

		if (op == 2) { /* the I/O VM answers a request slot, honest or not */
			struct vblk_slot *q = &reqs[arg % SLOTS].h,
			                 *s = &rsps[(arg >> 2) % SLOTS].h;

			s->tag = (len & 0x80) ? q->tag ^ len : q->tag;
			s->index = (len & 0x40) ? len : (arg >> 2) % SLOTS;
			s->status = len & 3;
			s->len = (len & 0x20) ? arg * 37 : q->count * VBLK_SECTOR;
			s->op = q->op;
			s->flag = (len & 0x10) ? len : VBLK_SLOT_FULL;
			q->flag = VBLK_SLOT_EMPTY;
			continue;
		}
		if (op == 3) { /* the I/O VM takes a request slot */
			reqs[arg % SLOTS].h.flag = VBLK_SLOT_EMPTY;
			continue;
		}
		if (op == 4) {
			vblk_reset(&b);
			if (!virtq_setup(&b.q, &mem, num, RAM_BASE, RAM_BASE + 0x1000,
			                 RAM_BASE + 0x1800, arg & 1))
				abort();
			continue;
		}
		if (op == 5)
			r = vblk_submit(&b, &mem, &rings, arg % 300, &used);
		else if (op == 6)
			r = vblk_complete(&b, &mem, &rings, arg % 8);
		else
			virtq_need_irq(&b.q, &mem);
		if (r < 0)
			break; /* the device stops */
		if ((u16)(b.q.used_idx - u0) > b.q.num)
			abort();
		check_requests();
	}
	return 0;
}
