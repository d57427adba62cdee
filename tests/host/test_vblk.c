// SPDX-License-Identifier: Apache-2.0
/* Host test of core/virtio/vblk.c: the virtio-blk bridge between a client's
 * request queue and its block request rings (requests cut into 4 KiB
 * parts, responses copied back and the status byte written once every
 * part is back; refusals at once; malformed chains; a full request ring; a
 * malformed, stale or unexpected response; a device reset). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/virtio/vblk.h"

#define RAM_BASE 0x40000000ull
#define RAM_SIZE 0x10000ull
#define DESC     (RAM_BASE + 0x0000)
#define AVAIL    (RAM_BASE + 0x1000)
#define USED     (RAM_BASE + 0x2000)
#define HDR      (RAM_BASE + 0x3000)
#define STATUS   (RAM_BASE + 0x3100)
#define BUF      (RAM_BASE + 0x4000)
#define NUM      8
#define SLOTS    4
#define CAPACITY 2048u /* sectors */

#include "virtq_ram.h"
#include "virtq_driver.h"

/* a slot: its header and its data */
struct tslot {
	struct vblk_slot h;
	u8 data[VBLK_PART];
};
static struct tslot reqs[SLOTS], rsps[SLOTS];
static u32 rsp_pos;

static struct vblk_slot *slot(void *ctx, bool is_rsp, u32 i)
{
	(void)ctx;
	return i < SLOTS ? (is_rsp ? &rsps[i].h : &reqs[i].h) : NULL;
}

static bool copy(void *ctx, bool is_rsp, u32 i, u32 off, void *buf, u32 len, bool to_slot)
{
	u8 *d;

	(void)ctx;
	if (i >= SLOTS || off > VBLK_PART || len > VBLK_PART - off)
		return false;
	d = (is_rsp ? rsps : reqs)[i].data + off;
	memcpy(to_slot ? d : buf, to_slot ? buf : d, len);
	return true;
}

static const struct vblk_rings rings = { .slot = slot, .copy = copy, .nslots = SLOTS };

/* A request at descriptors 0-2: header, len data bytes (written by the
 * device for a read), a status byte. */
static void request(u32 type, u64 sector, u32 len, bool write_data)
{
	u8 *h = ram + (HDR - RAM_BASE);

	memset(h, 0, 16);
	memcpy(h, &type, 4);
	memcpy(h + 8, &sector, 8);
	ram[STATUS - RAM_BASE] = 0xff;
	desc(0, HDR, 16, VIRTQ_DESC_F_NEXT, 1);
	desc(1, BUF, len, VIRTQ_DESC_F_NEXT | (write_data ? VIRTQ_DESC_F_WRITE : 0), 2);
	desc(2, STATUS, 1, VIRTQ_DESC_F_WRITE, 0);
	offer(0);
}

static void fresh(struct vblk *b)
{
	memset(ram, 0, sizeof(ram));
	memset(reqs, 0, sizeof(reqs));
	memset(rsps, 0, sizeof(rsps));
	memset(b, 0, sizeof(*b));
	rsp_pos = 0;
	vblk_reset(b);
	b->capacity = CAPACITY;
	CHECK(virtq_setup(&b->q, &mem, NUM, DESC, AVAIL, USED, false));
}

/* The I/O VM: answers request slot i (and frees it) with status and its
 * data filled with fill. */
static void serve(u32 i, u32 status, u8 fill)
{
	struct vblk_slot *q = &reqs[i].h, *s = &rsps[rsp_pos].h;

	s->index = rsp_pos;
	s->op = q->op;
	s->tag = q->tag;
	s->status = status;
	s->len = q->op == VIRTIO_BLK_T_IN       ? q->count * VBLK_SECTOR
	         : q->op == VIRTIO_BLK_T_GET_ID ? 20
	                                        : 0;
	memset(rsps[rsp_pos].data, fill, VBLK_PART);
	s->flag = VBLK_SLOT_FULL;
	q->flag = VBLK_SLOT_EMPTY;
	rsp_pos = (rsp_pos + 1) % SLOTS;
}

static u32 used_len(u16 n)
{
	return get32(USED + 4 + 8u * n + 4);
}

static void test_read_write(void)
{
	struct vblk b;
	bool used = false;

	fresh(&b);
	request(VIRTIO_BLK_T_IN, 2, 8192, true);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 2 && !used);
	CHECK(reqs[0].h.flag == VBLK_SLOT_FULL && reqs[0].h.op == VIRTIO_BLK_T_IN &&
	      reqs[0].h.sector == 2 && reqs[0].h.count == 8 && reqs[0].h.index == 0);
	CHECK(reqs[1].h.flag == VBLK_SLOT_FULL && reqs[1].h.sector == 10 && reqs[1].h.count == 8 &&
	      reqs[1].h.tag == (reqs[0].h.tag | 1));
	serve(0, VIRTIO_BLK_S_OK, 0xa1);
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 0); /* one part of two */
	CHECK(get16(USED + 2) == 0 && ram[STATUS - RAM_BASE] == 0xff);
	serve(1, VIRTIO_BLK_S_OK, 0xa2);
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 1);
	CHECK(get16(USED + 2) == 1 && used_len(0) == 8193 && ram[STATUS - RAM_BASE] == 0);
	CHECK(ram[BUF - RAM_BASE] == 0xa1 && ram[BUF - RAM_BASE + 4095] == 0xa1);
	CHECK(ram[BUF - RAM_BASE + 4096] == 0xa2 && ram[BUF - RAM_BASE + 8191] == 0xa2);
	CHECK(rsps[0].h.flag == VBLK_SLOT_EMPTY && rsps[1].h.flag == VBLK_SLOT_EMPTY);
	/* a write of 1 KiB: its data in the slot */
	memset(ram + (BUF - RAM_BASE), 0x5c, 1024);
	request(VIRTIO_BLK_T_OUT, CAPACITY - 2, 1024, false);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 1);
	CHECK(reqs[2].h.op == VIRTIO_BLK_T_OUT && reqs[2].h.count == 2 &&
	      reqs[2].h.sector == CAPACITY - 2);
	CHECK(reqs[2].data[0] == 0x5c && reqs[2].data[1023] == 0x5c);
	serve(2, VIRTIO_BLK_S_IOERR, 0); /* the device failed it */
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 1);
	CHECK(used_len(1) == 1 && ram[STATUS - RAM_BASE] == VIRTIO_BLK_S_IOERR);
	/* flush and get-id */
	request(VIRTIO_BLK_T_FLUSH, 0, 0, false);
	desc(0, HDR, 16, VIRTQ_DESC_F_NEXT, 2); /* no data */
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 1 && reqs[3].h.op == VIRTIO_BLK_T_FLUSH);
	serve(3, VIRTIO_BLK_S_OK, 0);
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 1 && ram[STATUS - RAM_BASE] == 0);
	request(VIRTIO_BLK_T_GET_ID, 0, 20, true);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 1 &&
	      reqs[0].h.op == VIRTIO_BLK_T_GET_ID);
	serve(0, VIRTIO_BLK_S_OK, 'd');
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 1 && used_len(3) == 21);
	CHECK(ram[BUF - RAM_BASE + 19] == 'd' && b.st.reqs == 4 && b.st.parts == 5);
}

static void test_refused_at_once(void)
{
	struct vblk b;
	bool used = false;

	fresh(&b);
	request(VIRTIO_BLK_T_IN, CAPACITY - 1, 4096, true); /* past the end */
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 0 && used);
	CHECK(ram[STATUS - RAM_BASE] == VIRTIO_BLK_S_IOERR && used_len(0) == 1);
	request(VIRTIO_BLK_T_OUT, ~0ull - 2, 4096, false); /* sector + count wraps */
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 0);
	CHECK(ram[STATUS - RAM_BASE] == VIRTIO_BLK_S_IOERR);
	request(VIRTIO_BLK_T_IN, 0, 1000, true); /* not whole sectors */
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 0);
	CHECK(ram[STATUS - RAM_BASE] == VIRTIO_BLK_S_IOERR);
	request(7, 0, 512, true); /* an unknown type */
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 0);
	CHECK(ram[STATUS - RAM_BASE] == VIRTIO_BLK_S_UNSUPP);
	CHECK(b.st.ioerr == 3 && b.st.unsupp == 1 && get16(USED + 2) == 4);
	CHECK(reqs[0].h.flag == VBLK_SLOT_EMPTY &&
	      b.st.parts == 0); /* nothing reached the I/O VM */
}

static void test_malformed(void)
{
	struct vblk b;
	bool used = false;

	/* a status descriptor the device cannot write */
	fresh(&b);
	request(VIRTIO_BLK_T_OUT, 0, 512, false);
	desc(2, STATUS, 1, 0, 0);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == VIRTQ_E_FLAGS);
	/* a header shorter than 16 bytes */
	fresh(&b);
	request(VIRTIO_BLK_T_IN, 0, 512, true);
	desc(0, HDR, 8, VIRTQ_DESC_F_NEXT, 1);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == VIRTQ_E_FLAGS);
	/* a descriptor loop */
	fresh(&b);
	request(VIRTIO_BLK_T_IN, 0, 512, true);
	desc(2, STATUS, 1, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == VIRTQ_E_LOOP);
	/* a huge length */
	fresh(&b);
	request(VIRTIO_BLK_T_IN, 0, 0x80000000u, true);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) < 0);
	/* data outside its RAM */
	fresh(&b);
	request(VIRTIO_BLK_T_IN, 0, 512, true);
	desc(1, RAM_BASE + RAM_SIZE, 512, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, 2);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == VIRTQ_E_ADDR);
	CHECK(reqs[0].h.flag == VBLK_SLOT_EMPTY);
}

static void test_ring_full_and_reset(void)
{
	struct vblk b;
	bool used = false;

	fresh(&b);
	request(VIRTIO_BLK_T_IN, 0, 6 * 4096, true); /* six parts, four slots */
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 4 && b.st.ring_full == 1);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 0);
	serve(0, VIRTIO_BLK_S_OK, 1);
	serve(1, VIRTIO_BLK_S_OK, 2);
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 0);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 2);
	CHECK(reqs[0].h.sector == 32 && reqs[1].h.sector == 40 &&
	      reqs[1].h.tag == (reqs[3].h.tag + 2));
	for (u32 i = 2; i < 6; i++)
		serve(i % SLOTS, VIRTIO_BLK_S_OK, (u8)(i + 1));
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 1);
	CHECK(used_len(0) == 6 * 4096 + 1 && ram[BUF - RAM_BASE + 5 * 4096] == 6);
	/* a malformed response, one for no request: dropped, counted */
	rsps[rsp_pos].h.index = rsp_pos + 1;
	rsps[rsp_pos].h.flag = VBLK_SLOT_FULL;
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 0 && b.st.rsp_bad == 1);
	rsp_pos = (rsp_pos + 1) % SLOTS;
	request(VIRTIO_BLK_T_IN, 0, 4096, true);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 1);
	reqs[2].h.tag ^= 0x100; /* an id no request has */
	serve(2, VIRTIO_BLK_S_OK, 0);
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 0);
	CHECK(b.st.rsp_bad + b.st.stale == 2 && get16(USED + 2) == 1);
	/* a reset while a request is out: its response is dropped as stale, the
	 * next request's is not confused with it */
	request(VIRTIO_BLK_T_IN, 8, 4096, true);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 1);
	vblk_reset(&b);
	memset(ram, 0, 0x3000); /* the driver sets the queue up again */
	CHECK(virtq_setup(&b.q, &mem, NUM, DESC, AVAIL, USED, false));
	request(VIRTIO_BLK_T_IN, 16, 4096, true);
	CHECK(vblk_submit(&b, &mem, &rings, NUM, &used) == 1);
	serve(3, VIRTIO_BLK_S_OK, 0x33); /* the old request's */
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 0 && b.st.stale >= 1);
	serve(0, VIRTIO_BLK_S_OK, 0x44);
	CHECK(vblk_complete(&b, &mem, &rings, SLOTS) == 1 && ram[BUF - RAM_BASE] == 0x44);
}

int main(void)
{
	test_read_write();
	test_refused_at_once();
	test_malformed();
	test_ring_full_and_reset();
	if (failures)
		return 1;
	printf("test_vblk: ok\n");
	return 0;
}
