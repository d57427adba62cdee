/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a client's virtqueues and the frames of its rings as
 * the virtio-net bridge sees them (core/virtio/virtq.c, vnet.c). The
 * client's RAM (descriptors, rings, buffers) and the rings' slots come
 * from the input (with or without the transmit offloads), then a sequence
 * of transmit and receive runs while the
 * input rewrites RAM and slots between them. Every access stays inside
 * the client's RAM (the accessors abort otherwise), a taken chain has at
 * most min(num, VIRTQ_MAX_SEGS) segments within the limit, a published tx
 * slot holds a frame of 14 to 1514 bytes at its own index, a run puts at most num
 * entries on the used ring (the client may overwrite its own rings), and after
 * an error the device is not used again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/virtio/virtq.h"
#include "core/virtio/vnet.h"

#define RAM_BASE 0x40000000ull
#define RAM_SIZE 0x8000ull
#define SLOTS    4

#include "virtq_ram.h"
#include "virtq_fuzz.h"

static struct vnet_slot tx[SLOTS], rx[SLOTS];

static struct vnet_slot *slot(void *ctx, bool is_rx, u32 i)
{
	(void)ctx;
	return virtq_fuzz_slot(tx, rx, sizeof(*tx), is_rx, i);
}

static const struct vnet_rings rings = { .slot = slot, .nslots = SLOTS };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnet n;
	struct virtq_chain c;
	struct virtq_fuzz_step step;
	size_t pos = 8;

	if (size < 8)
		return 0;
	memset(ram, 0, sizeof(ram));
	memset(tx, 0, sizeof(tx));
	memset(rx, 0, sizeof(rx));
	memset(&n, 0, sizeof(n));
	n.mrg = data[0] & 1;
	n.csum = n.tso = data[0] & 4; /* the offloads negotiated */
	/* rx queue rings at 0x0000/0x1000/0x1800, tx at 0x2000/0x3000/0x3800 */
	for (u32 k = 0; k < 2; k++) {
		u16 num = (u16)(1u << (data[1 + k] % 9)); /* 1 .. 256 */
		u64 b = RAM_BASE + 0x2000ull * k;

		if (!virtq_setup(&n.q[k], &mem, num, b, b + 0x1000, b + 0x1800, data[0] & 2))
			abort();
	}
	while (virtq_fuzz_next(data, size, &pos, &step)) {
		u8 op = step.op;
		u32 arg = step.arg, len = step.len;
		u16 u0 = n.q[0].used_idx, u1 = n.q[1].used_idx;
		/* a TSO send taken in an earlier step is used in this one, beside at
		 * most a queue's worth of chains the driver offers now */
		u16 held = n.gso.busy;
		int r = 0;

		if (op == 2) { /* the I/O VM writes an rx slot, honest or not */
			struct vnet_slot *s = &rx[arg % SLOTS];

			s->len = (arg & 0x80) ? arg * 7 : len * 8 + 1;
			s->index = (arg & 0x8000) ? len : arg % SLOTS;
			s->flag = (len & 3) ? VNET_SLOT_FULL : len;
			continue;
		}
		if (op == 3) { /* the I/O VM takes a tx slot */
			tx[arg % SLOTS].flag = VNET_SLOT_EMPTY;
			continue;
		}
		if (op == 4) {
			r = virtq_pop(&n.q[arg & 1], &mem, len * 64, &c);
			if (r == VIRTQ_OK) {
				if (c.head >= n.q[arg & 1].num ||
				    c.nout + c.nin > n.q[arg & 1].num ||
				    c.nout + c.nin > VIRTQ_MAX_SEGS ||
				    c.out_len + c.in_len > len * 64)
					abort();
				for (u32 s = 0; s < (u32)c.nout + c.nin; s++)
					if (c.seg[s].len &&
					    !valid(NULL, c.seg[s].addr, c.seg[s].len))
						abort();
				if (!virtq_push(&n.q[arg & 1], &mem, c.head, 0))
					abort();
			}
		} else if (op == 5) {
			r = vnet_tx(&n, &mem, &rings, arg % 300);
		} else if (op == 6) {
			r = arg & 8 ? vnet_rx_all(&n, &mem, &rings)
			            : vnet_rx(&n, &mem, &rings, arg % 8);
		} else if (arg & 2) {
			r = vnet_tx_drop(&n, &mem, arg % 300);
		} else {
			virtq_need_irq(&n.q[arg & 1], &mem);
			virtq_want_notify(&n.q[arg & 1], &mem);
		}
		if (r < 0)
			break; /* the device stops */
		if ((u16)(n.q[0].used_idx - u0) > n.q[0].num ||
		    (u16)(n.q[1].used_idx - u1) > n.q[1].num + held)
			abort();
		for (u32 i = 0; i < SLOTS; i++)
			if (tx[i].flag == VNET_SLOT_FULL &&
			    (tx[i].index != i || tx[i].len < VNET_FRAME_MIN ||
			     tx[i].len > VNET_FRAME_MAX))
				abort();
	}
	return 0;
}
