// SPDX-License-Identifier: Apache-2.0
/* Host test of core/virtio/virtq.c and vnet.c: the split virtqueue's device
 * side over a client's RAM (chains checked: loops, indices, addresses,
 * lengths, flags; used ring and event index) and the virtio-net bridge to
 * the frame rings (transmit into slots, receive into posted buffers with
 * the header, mergeable buffers, a full ring, a frame waiting for buffers,
 * malformed slots). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/virtio/vcopy.h"
#include "core/virtio/virtq.h"
#include "core/virtio/vnet.h"

#define RAM_BASE 0x40000000ull
#define RAM_SIZE 0x10000ull
#define DESC     (RAM_BASE + 0x0000)
#define AVAIL    (RAM_BASE + 0x1000)
#define USED     (RAM_BASE + 0x2000)
#define BUF      (RAM_BASE + 0x4000)
#define NUM      8

#include "virtq_ram.h"
#include "virtq_driver.h"

static void fresh(struct virtq *q, bool event_idx)
{
	memset(ram, 0, sizeof(ram));
	CHECK(virtq_setup(q, &mem, NUM, DESC, AVAIL, USED, event_idx));
}

static void test_setup(void)
{
	struct virtq q = { 0 };

	CHECK(!virtq_setup(&q, &mem, 6, DESC, AVAIL, USED, false));   /* not a power of two */
	CHECK(!virtq_setup(&q, &mem, 512, DESC, AVAIL, USED, false)); /* above the maximum */
	CHECK(!virtq_setup(&q, &mem, NUM, DESC + 8, AVAIL, USED, false));
	CHECK(!virtq_setup(&q, &mem, NUM, DESC, AVAIL + 1, USED, false));
	CHECK(!virtq_setup(&q, &mem, NUM, DESC, AVAIL, USED + 2, false));
	CHECK(!virtq_setup(&q, &mem, NUM, DESC, AVAIL, RAM_BASE + RAM_SIZE - 8, false));
	CHECK(!virtq_setup(&q, &mem, NUM, 0x1000, AVAIL, USED, false)); /* not RAM */
	CHECK(q.num == 0);
	CHECK(virtq_setup(&q, &mem, NUM, DESC, AVAIL, USED, false));
}

static void test_pop_push(void)
{
	struct virtq q;
	struct virtq_chain c;

	fresh(&q, false);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_EMPTY);
	desc(3, BUF, 12, VIRTQ_DESC_F_NEXT, 5);
	desc(5, BUF + 0x100, 100, VIRTQ_DESC_F_NEXT, 6);
	desc(6, BUF + 0x200, 64, VIRTQ_DESC_F_WRITE, 0);
	offer(3);
	CHECK(virtq_pending(&q, &mem) == 1);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK);
	CHECK(c.head == 3 && c.nout == 2 && c.nin == 1 && c.out_len == 112 && c.in_len == 64);
	CHECK(c.seg[1].addr == BUF + 0x100 && c.seg[2].len == 64);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_EMPTY);
	/* gather and scatter across segments */
	memset(ram + (BUF - RAM_BASE), 0xaa, 12);
	memset(ram + (BUF + 0x100 - RAM_BASE), 0xbb, 100);
	{
		u8 out[20], in[70] = { 0 };

		CHECK(virtq_read_chain(&mem, &c, 8, out, 20));
		CHECK(out[3] == 0xaa && out[4] == 0xbb && out[19] == 0xbb);
		CHECK(!virtq_read_chain(&mem, &c, 100, out, 20)); /* past its readable bytes */
		CHECK(virtq_write_chain(&mem, &c, 0, in, 64));
		CHECK(!virtq_write_chain(&mem, &c, 0, in, 65));
	}
	CHECK(virtq_push(&q, &mem, 3, 40));
	CHECK(get16(USED + 2) == 1 && get32(USED + 4) == 3 && get32(USED + 8) == 40);
	/* no event index: the NO_INTERRUPT flag decides */
	CHECK(virtq_need_irq(&q, &mem));
	CHECK(!virtq_need_irq(&q, &mem)); /* nothing new */
	put16(AVAIL, VIRTQ_AVAIL_F_NO_INTERRUPT);
	desc(0, BUF, 20, 0, 0);
	offer(0);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK);
	CHECK(virtq_push(&q, &mem, 0, 0));
	CHECK(!virtq_need_irq(&q, &mem));
	/* unpop gives a chain back */
	desc(1, BUF, 20, 0, 0);
	offer(1);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK && c.head == 1);
	virtq_unpop(&q, 1);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK && c.head == 1);
}

/* Every hostile chain is refused, and the avail position does not move. */
static void test_hostile(void)
{
	struct virtq q;
	struct virtq_chain c;
	u16 before;

	fresh(&q, false);
	desc(0, BUF, 10, VIRTQ_DESC_F_NEXT, 1);
	desc(1, BUF, 10, VIRTQ_DESC_F_NEXT, 0); /* a loop */
	offer(0);
	CHECK(virtq_pop(&q, &mem, 1u << 20, &c) == VIRTQ_E_LOOP);
	CHECK(q.last_avail == 0);

	fresh(&q, false);
	offer(NUM); /* head out of the queue */
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_HEAD);
	fresh(&q, false);
	desc(0, BUF, 10, VIRTQ_DESC_F_NEXT, 200); /* next out of the queue */
	offer(0);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_HEAD);

	fresh(&q, false);
	desc(0, RAM_BASE + RAM_SIZE - 4, 8, 0, 0); /* past its RAM */
	offer(0);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_ADDR);
	fresh(&q, false);
	desc(0, 0x1000, 8, 0, 0); /* not RAM */
	offer(0);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_ADDR);

	fresh(&q, false);
	desc(0, BUF, 0xffffffffu, VIRTQ_DESC_F_NEXT, 1); /* a huge length */
	desc(1, BUF, 0xffffffffu, 0, 0);
	offer(0);
	CHECK(virtq_pop(&q, &mem, 1u << 20, &c) == VIRTQ_E_LEN);
	fresh(&q, false);
	desc(0, BUF, 3000, VIRTQ_DESC_F_NEXT, 1); /* each fits, not together */
	desc(1, BUF, 3000, 0, 0);
	offer(0);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_LEN);

	fresh(&q, false);
	desc(0, BUF, 16, VIRTQ_DESC_F_INDIRECT, 0);
	offer(0);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_FLAGS);
	fresh(&q, false);
	desc(0, BUF, 16, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
	desc(1, BUF, 16, 0, 0); /* readable after writable */
	offer(0);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_FLAGS);

	fresh(&q, false);
	put16(AVAIL + 2, NUM + 1); /* more than the queue made available */
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_IDX);
	CHECK(virtq_pending(&q, &mem) == 0);
	before = q.last_avail;
	CHECK(before == 0);
}

/* a chain of more descriptors than the device takes, in a bigger queue */
static void test_segs(void)
{
	struct virtq q;
	struct virtq_chain c;

	memset(ram, 0, sizeof(ram));
	CHECK(virtq_setup(&q, &mem, 64, DESC, AVAIL + 0x400, USED + 0x400, false));
	for (u16 i = 0; i < 40; i++)
		desc(i, BUF, 1, VIRTQ_DESC_F_NEXT, (u16)(i + 1));
	desc(40, BUF, 1, 0, 0);
	put16(AVAIL + 0x400 + 4, 0);
	put16(AVAIL + 0x400 + 2, 1);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_E_SEGS);
}

static void test_event_idx(void)
{
	struct virtq q;
	struct virtq_chain c;

	fresh(&q, true);
	for (u16 i = 0; i < 4; i++) {
		desc(i, BUF, 20, 0, 0);
		offer(i);
	}
	/* the driver wants an interrupt after the 3rd used entry (used_event 2) */
	put16(AVAIL + 4 + 2 * NUM, 2);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK && virtq_push(&q, &mem, c.head, 0));
	CHECK(!virtq_need_irq(&q, &mem));
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK && virtq_push(&q, &mem, c.head, 0));
	CHECK(!virtq_need_irq(&q, &mem));
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK && virtq_push(&q, &mem, c.head, 0));
	CHECK(virtq_need_irq(&q, &mem));
	/* avail_event: notify me past what I took; one more is there already */
	CHECK(virtq_want_notify(&q, &mem));
	CHECK(get16(USED + 4 + 8 * NUM) == 3);
	CHECK(virtq_pop(&q, &mem, 4096, &c) == VIRTQ_OK);
	CHECK(!virtq_want_notify(&q, &mem));
	CHECK(get16(USED + 4 + 8 * NUM) == 4);
}

/* --- the net bridge --- */

#define SLOTS 4
static struct vnet_slot tx[SLOTS], rx[SLOTS];

static struct vnet_slot *slot(void *ctx, bool is_rx, u32 i)
{
	(void)ctx;
	return i < SLOTS ? (is_rx ? &rx[i] : &tx[i]) : NULL;
}

static const struct vnet_rings rings = { .slot = slot, .nslots = SLOTS };

static void net_fresh(struct vnet *n, bool mrg)
{
	memset(ram, 0, sizeof(ram));
	memset(tx, 0, sizeof(tx));
	memset(rx, 0, sizeof(rx));
	memset(n, 0, sizeof(*n));
	n->mrg = mrg;
	/* both queues share the rings' memory in these tests: one at a time */
	CHECK(virtq_setup(&n->q[0], &mem, NUM, DESC, AVAIL, USED, true));
	CHECK(virtq_setup(&n->q[1], &mem, NUM, DESC, AVAIL, USED, true));
}

static void put_rx(u32 i, u32 flag, u32 len, u32 index, u8 fill)
{
	rx[i].len = len;
	rx[i].index = index;
	memset(rx[i].data, fill, sizeof(rx[i].data));
	rx[i].flag = flag;
}

static void test_net_tx(void)
{
	struct vnet n;

	net_fresh(&n, true);
	memset(ram + (BUF - RAM_BASE), 0, 12); /* virtio_net_hdr: no offload */
	memset(ram + (BUF + 0x100 - RAM_BASE), 0x22, 60);
	for (u16 i = 0; i < 6; i++) {
		desc((u16)(2 * i), BUF, 12, VIRTQ_DESC_F_NEXT, (u16)(2 * i + 1));
		desc((u16)(2 * i + 1) % NUM, BUF + 0x100, 60, 0, 0);
	}
	/* two frames; then a runt (header only) */
	offer(0);
	offer(2);
	desc(4, BUF, 12, 0, 0);
	offer(4);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 2);
	CHECK(tx[0].flag == VNET_SLOT_FULL && tx[0].len == 60 && tx[0].index == 0);
	CHECK(tx[0].data[0] == 0x22 && tx[0].data[59] == 0x22);
	CHECK(tx[1].flag == VNET_SLOT_FULL && tx[1].index == 1);
	CHECK(tx[2].flag == VNET_SLOT_EMPTY);
	CHECK(n.st.tx_runt == 1 && n.st.tx_frames == 2);
	CHECK(get16(USED + 2) == 3); /* all three used */
	/* a full ring leaves the chains queued */
	tx[2].flag = tx[3].flag = VNET_SLOT_FULL;
	desc(6, BUF, 12, VIRTQ_DESC_F_NEXT, 7);
	desc(7, BUF + 0x100, 60, 0, 0);
	offer(6);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 0);
	CHECK(n.st.tx_full == 1 && virtq_pending(&n.q[1], &mem) == 1);
	tx[2].flag = VNET_SLOT_EMPTY; /* the I/O VM took one */
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 1);
	CHECK(tx[2].flag == VNET_SLOT_FULL && tx[2].len == 60);
	/* a frame above the maximum stops the device */
	desc(0, BUF, 12, VIRTQ_DESC_F_NEXT, 1);
	desc(1, BUF, 2000, 0, 0);
	offer(0);
	tx[3].flag = VNET_SLOT_EMPTY;
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == VIRTQ_E_LEN);
	/* no rings yet (no link): chains taken, checked and dropped */
	net_fresh(&n, true);
	desc(0, BUF, 12, VIRTQ_DESC_F_NEXT, 1);
	desc(1, BUF + 0x100, 60, 0, 0);
	offer(0);
	offer(0);
	CHECK(vnet_tx_drop(&n, &mem, NUM) == 2 && n.st.tx_nolink == 2 && get16(USED + 2) == 2);
	CHECK(tx[0].flag == VNET_SLOT_EMPTY && n.st.tx_frames == 0);
	desc(1, BUF, 2000, 0, 0);
	offer(0);
	CHECK(vnet_tx_drop(&n, &mem, NUM) == VIRTQ_E_LEN); /* a hostile chain all the same */
	/* a writable buffer on the transmit queue too */
	net_fresh(&n, true);
	desc(0, BUF, 100, VIRTQ_DESC_F_WRITE, 0);
	offer(0);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == VIRTQ_E_FLAGS);
}

static void test_net_rx(void)
{
	struct vnet n;

	net_fresh(&n, true);
	/* no buffer posted: the frame waits in the ring */
	put_rx(0, VNET_SLOT_FULL, 100, 0, 0x33);
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == 0);
	CHECK(rx[0].flag == VNET_SLOT_FULL && n.st.rx_wait == 1);
	/* a 2 KiB buffer: header and frame */
	desc(0, BUF, 2048, VIRTQ_DESC_F_WRITE, 0);
	offer(0);
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == 1);
	CHECK(rx[0].flag == VNET_SLOT_EMPTY && n.st.rx_frames == 1);
	CHECK(get16(USED + 2) == 1 && get32(USED + 8) == 112);
	CHECK(get16(BUF + 10) == 1 && ram[BUF - RAM_BASE] == 0); /* num_buffers; no flags */
	CHECK(ram[BUF + 12 - RAM_BASE] == 0x33 && ram[BUF + 111 - RAM_BASE] == 0x33);
	/* mergeable: a 1200-byte frame over buffers of 512 bytes */
	put_rx(1, VNET_SLOT_FULL, 1200, 1, 0x44);
	for (u16 i = 1; i < 4; i++) {
		desc(i, BUF + 0x1000u * i, 512, VIRTQ_DESC_F_WRITE, 0);
		offer(i);
	}
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == 1);
	CHECK(get16(USED + 2) == 4);
	CHECK(get32(USED + 4 + 8 * 1 + 4) == 512 && get32(USED + 4 + 8 * 2 + 4) == 512 &&
	      get32(USED + 4 + 8 * 3 + 4) == 1200u + 12 - 1024);
	CHECK(get16(BUF + 0x1000 + 10) == 3);
	CHECK(ram[BUF + 0x3000 - RAM_BASE] == 0x44);
	/* not enough buffers for the next: it waits, the buffer stays posted */
	put_rx(2, VNET_SLOT_FULL, 1000, 2, 0x55);
	desc(4, BUF + 0x4000, 512, VIRTQ_DESC_F_WRITE, 0);
	offer(4);
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == 0 && rx[2].flag == VNET_SLOT_FULL);
	CHECK(virtq_pending(&n.q[0], &mem) == 1);
	desc(5, BUF + 0x5000, 2048, VIRTQ_DESC_F_WRITE, 0);
	offer(5);
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == 1 && rx[2].flag == VNET_SLOT_EMPTY);
	/* malformed slots: dropped, counted, handed back */
	put_rx(3, 0x1234, 100, 3, 0);
	put_rx(0, VNET_SLOT_FULL, 5000, 0, 0);
	put_rx(1, VNET_SLOT_FULL, 100, 7, 0);
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == 0);
	CHECK(n.st.rx_bad == 3 && rx[3].flag == VNET_SLOT_EMPTY && rx[1].flag == VNET_SLOT_EMPTY);
	/* without mergeable buffers a frame that does not fit is dropped */
	net_fresh(&n, false);
	put_rx(0, VNET_SLOT_FULL, 1000, 0, 0x66);
	desc(0, BUF, 512, VIRTQ_DESC_F_WRITE, 0);
	offer(0);
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == 1 && n.st.rx_short == 1 && n.st.rx_frames == 0);
	CHECK(virtq_pending(&n.q[0], &mem) == 1); /* the buffer is still the client's */
	/* a receive buffer smaller than the header stops the device */
	put_rx(1, VNET_SLOT_FULL, 100, 1, 0);
	net_fresh(&n, true);
	put_rx(0, VNET_SLOT_FULL, 100, 0, 0);
	desc(0, BUF, 8, VIRTQ_DESC_F_WRITE, 0);
	offer(0);
	CHECK(vnet_rx(&n, &mem, &rings, SLOTS) == VIRTQ_E_LEN);
}

/* The driver posts a 2 KiB buffer when the bridge writes the receive
 * queue's event index: another of the client's CPUs posting just as the
 * bridge asks for the next notification, having read the old index. */
static bool posted_late;

static void post_at_event(u64 ipa, u64 len)
{
	(void)len;
	if (ipa == USED + 4 + 8 * NUM && !posted_late) {
		posted_late = true;
		desc(0, BUF, 2048, VIRTQ_DESC_F_WRITE, 0);
		offer(0);
	}
}

/* A frame waiting for buffers is delivered into one posted while the bridge
 * asked for the next notification (vnet_rx_all looks once more): before,
 * it waited for the next ring or notification, which need not come. */
static void test_net_rx_posted_meanwhile(void)
{
	struct vnet n;

	net_fresh(&n, true);
	put_rx(0, VNET_SLOT_FULL, 100, 0, 0x33);
	posted_late = false;
	after_write = post_at_event;
	CHECK(vnet_rx_all(&n, &mem, &rings) == 1);
	after_write = NULL;
	CHECK(posted_late && rx[0].flag == VNET_SLOT_EMPTY && n.st.rx_frames == 1);
	/* nothing waits: the event index asks for the buffer after the last taken */
	CHECK(vnet_rx_all(&n, &mem, &rings) == 0);
	CHECK(get16(USED + 4 + 8 * NUM) == 1);
}

/* The ones' complement sum of p (big-endian words), folded. */
static u16 sum16(const u8 *p, u32 len, u32 sum)
{
	for (u32 i = 0; i < len; i++)
		sum += (i & 1) ? p[i] : (u32)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)sum;
}

/* Whether frame f (Ethernet, IPv4, TCP) has correct checksums. */
static bool tcp_ok(const u8 *f, u32 len)
{
	const u8 *ip = f + 14;
	u32 iph = (ip[0] & 15) * 4u, tl = ((u32)ip[2] << 8 | ip[3]) - iph;
	u32 pseudo = 6 + tl;

	for (u32 i = 12; i < 20; i += 2)
		pseudo += (u32)ip[i] << 8 | ip[i + 1];
	return 14 + iph + tl == len && sum16(ip, iph, 0) == 0xffff &&
	       sum16(ip + iph, tl, pseudo) == 0xffff;
}

/* A TCP/IPv4 frame of payload bytes at BUF + 12 (after a virtio_net_hdr):
 * its length. */
static u32 tcp_frame(u32 payload, u8 flags)
{
	u8 *f = ram + (BUF + 12 - RAM_BASE);
	u32 tl = 20 + 20 + payload;

	memset(f, 0, 54);
	f[12] = 0x08; /* IPv4 */
	f[14] = 0x45;
	f[16] = (u8)(tl >> 8);
	f[17] = (u8)tl;
	f[18] = 0x12; /* id 0x1234 */
	f[19] = 0x34;
	f[22] = 64;
	f[23] = 6;
	memcpy(f + 26, (u8[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	memcpy(f + 38, (u8[]){ 0, 0, 0x10, 0 }, 4); /* seq 0x1000 */
	f[46] = 0x50;
	f[47] = flags;
	for (u32 i = 0; i < payload; i++)
		f[54 + i] = (u8)(i * 7);
	return 54 + payload;
}

static void hdr(u8 flags, u8 gso_type, u16 gso_size, u16 csum_start, u16 csum_offset)
{
	u8 *h = ram + (BUF - RAM_BASE);

	memset(h, 0, 12);
	h[0] = flags;
	h[1] = gso_type;
	memcpy(h + 4, &gso_size, 2);
	memcpy(h + 6, &csum_start, 2);
	memcpy(h + 8, &csum_offset, 2);
}

/* The bridge's copy at every pair of offsets off the word and length (to a
 * page and a frame), against a byte loop, the bytes around untouched. */
static void test_vcopy(void)
{
	static u8 src[1600], dst[1600];
	static const u32 lens[] = { 0,  1,  7,  8,  15,  16,   17,   31,
		                    32, 39, 40, 66, 100, 1448, 1514, 1550 };

	for (u32 i = 0; i < sizeof(src); i++)
		src[i] = (u8)(i * 37 + 1);
	for (u32 doff = 0; doff < 16; doff++)
		for (u32 soff = 0; soff < 16; soff++)
			for (u32 k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
				bool ok = true;

				memset(dst, 0xee, sizeof(dst));
				vcopy(dst + doff, src + soff, lens[k]);
				for (u32 i = 0; i < sizeof(dst); i++)
					ok &= dst[i] == (i >= doff && i < doff + lens[k]
					                     ? src[soff + i - doff]
					                     : 0xee);
				CHECK(ok);
			}
}

/* The checksum of every start and length of f (mixed or all-ones bytes). */
static void csum_fill_all(u8 *f, u32 size, u32 fill)
{
	for (u32 i = 0; i < size; i++)
		f[i] = fill ? 0xff : (u8)(i * 151 + 7);
	for (u32 start = 0; start < 10; start++)
		for (u32 len = start + 2; len < 140 || len == 1514;
		     len = len < 140 ? len + 1 : 1515) {
			u16 want = (u16)~sum16(f + start, len - start, 0);

			CHECK(vnet_csum_fill(f, len, start, 0));
			CHECK((u16)(f[start] << 8 | f[start + 1]) == want);
			f[start] = fill ? 0xff : (u8)(start * 151 + 7);
			f[start + 1] = fill ? 0xff : (u8)((start + 1) * 151 + 7);
		}
}

/* A checksum completed at every start parity and length, against the byte
 * loop (the bridge sums whole words from an even start), on mixed bytes
 * and on all-ones bytes (a carry out of every word). */
static void test_net_csum_fill(void)
{
	static u8 f[1600];

	for (u32 fill = 0; fill < 2; fill++)
		csum_fill_all(f, sizeof(f), fill);
}

static void test_net_offloads(void)
{
	struct vnet n;
	u32 len;

	/* a partial checksum completed */
	net_fresh(&n, true);
	n.csum = n.tso = true;
	len = tcp_frame(100, 0x18);
	ram[BUF + 12 + 24 - RAM_BASE] = 0; /* the IPv4 checksum, as Linux leaves it filled */
	{
		u8 *ip = ram + (BUF + 12 + 14 - RAM_BASE);
		u16 c = (u16)~sum16(ip, 20, 0);

		ip[10] = (u8)(c >> 8);
		ip[11] = (u8)c;
		/* the TCP checksum field holds the pseudo-header's sum (CHECKSUM_PARTIAL) */
		c = sum16(ip + 12, 8, 6 + 20 + 100);
		ip[20 + 16] = (u8)(c >> 8);
		ip[20 + 17] = (u8)c;
	}
	hdr(1, 0, 0, 34, 16);
	desc(0, BUF, 12 + len, 0, 0);
	offer(0);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 1 && tcp_ok(tx[0].data, tx[0].len));
	/* out of the frame: dropped and counted */
	hdr(1, 0, 0, 150, 16);
	offer(0);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 0 && n.st.tx_bad == 1);
	/* a 3000-byte TCP segment, MSS 1000: three frames, two slots free first */
	net_fresh(&n, true);
	n.csum = n.tso = true;
	tx[0].flag = tx[1].flag = VNET_SLOT_FULL;
	len = tcp_frame(3000, 0x19); /* FIN, PSH, ACK */
	hdr(1, 1, 1000, 34, 16);
	desc(0, BUF, 12 + len, 0, 0);
	offer(0);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 0 && n.st.tx_full == 1);
	n.tx_pos = 2;
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 2 && n.gso.busy && get16(USED + 2) == 0);
	tx[0].flag = VNET_SLOT_EMPTY; /* the I/O VM took one */
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 1 && !n.gso.busy && get16(USED + 2) == 1);
	CHECK(n.st.tx_tso == 1 && n.st.tx_frames == 3);
	for (u32 i = 0; i < 3; i++) {
		const u8 *f = tx[(2 + i) % SLOTS].data;

		CHECK(tx[(2 + i) % SLOTS].len == 1054 && tcp_ok(f, 1054));
		CHECK(f[19] == 0x34 + i && f[40] == (u8)(0x10 + ((1000 * i) >> 8) % 256));
		CHECK((f[47] & 0x09) == (i == 2 ? 0x09 : 0) && (f[47] & 0x10));
		CHECK(f[54] == (u8)(1000 * i * 7) && f[54 + 999] == (u8)((1000 * i + 999) * 7));
	}
	/* not TCP/IPv4, an MSS too small, or not negotiated: dropped and counted */
	net_fresh(&n, true);
	n.csum = n.tso = true;
	len = tcp_frame(3000, 0x10);
	ram[BUF + 12 + 23 - RAM_BASE] = 17; /* UDP */
	hdr(1, 1, 1000, 34, 6);
	desc(0, BUF, 12 + len, 0, 0);
	offer(0);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 0 && n.st.tx_bad == 1);
	ram[BUF + 12 + 23 - RAM_BASE] = 6;
	hdr(1, 1, 10, 34, 16);
	offer(0);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == 0 && n.st.tx_bad == 2);
	n.tso = false;
	hdr(1, 1, 1000, 34, 16);
	offer(0);
	CHECK(vnet_tx(&n, &mem, &rings, NUM) == VIRTQ_E_LEN); /* 3066 bytes: above a frame */
	CHECK(get16(USED + 2) == 2 && tx[0].flag == VNET_SLOT_EMPTY);
}

int main(void)
{
	test_setup();
	test_pop_push();
	test_hostile();
	test_net_csum_fill();
	test_net_rx_posted_meanwhile();
	test_vcopy();
	test_segs();
	test_event_idx();
	test_net_tx();
	test_net_rx();
	test_net_offloads();
	if (failures)
		return 1;
	printf("test_virtq: ok\n");
	return 0;
}
