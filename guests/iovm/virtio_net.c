// SPDX-License-Identifier: Apache-2.0
/* virtio-net over modern virtio-mmio, polled (virtio_net.h). Register
 * offsets and bits from the virtio 1.x specification. */
#include "virtio_net.h"

#include "runtime.h"

#define VMMIO_MAGIC         0x000
#define VMMIO_VERSION       0x004
#define VMMIO_DEVICE_ID     0x008
#define VMMIO_DEV_FEATURES  0x010
#define VMMIO_DEV_FEAT_SEL  0x014
#define VMMIO_DRV_FEATURES  0x020
#define VMMIO_DRV_FEAT_SEL  0x024
#define VMMIO_QUEUE_SEL     0x030
#define VMMIO_QUEUE_NUM_MAX 0x034
#define VMMIO_QUEUE_NUM     0x038
#define VMMIO_QUEUE_READY   0x044
#define VMMIO_QUEUE_NOTIFY  0x050
#define VMMIO_IRQ_STATUS    0x060
#define VMMIO_IRQ_ACK       0x064
#define VMMIO_STATUS        0x070
#define VMMIO_QUEUE_DESC    0x080
#define VMMIO_QUEUE_DRIVER  0x090
#define VMMIO_QUEUE_DEVICE  0x0a0
#define VMMIO_CONFIG        0x100

#define VMMIO_MAGIC_VALUE 0x74726976u /* "virt" */
#define VIRTIO_ID_NET     1

#define ST_ACK         1u
#define ST_DRIVER      2u
#define ST_DRIVER_OK   4u
#define ST_FEATURES_OK 8u
#define ST_FAILED      128u

#define F_NET_MAC              5 /* bit in word 0 */
#define F_VERSION_1            0 /* bit 32: bit 0 of word 1 */
#define DESC_F_WRITE           2u
#define VRING_USED_F_NO_NOTIFY 1u

#define NET_HDR_LEN 12 /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define BUF_SIZE    2048
#define RXQ         0
#define TXQ         1

struct vq_desc {
	u64 addr;
	u32 len;
	u16 flags;
	u16 next;
};

struct vq_avail {
	u16 flags;
	u16 idx;
	u16 ring[VNET_QSIZE];
	u16 used_event;
};

struct vq_used_elem {
	u32 id;
	u32 len;
};

struct vq_used {
	u16 flags;
	u16 idx;
	struct vq_used_elem ring[VNET_QSIZE];
	u16 avail_event;
};

/* Each ring part in its own page so that one translation covers it. */
struct vq {
	struct vq_desc desc[VNET_QSIZE] __aligned(4096);
	struct vq_avail avail __aligned(4096);
	struct vq_used used __aligned(4096);
	u8 buf[VNET_QSIZE][BUF_SIZE] __aligned(4096);
	u16 last_used;
	u16 avail_idx;
	u16 nfree; /* tx: free descriptors */
	u16 free[VNET_QSIZE];
};

static struct vq rxq, txq;
static uptr vbase;
static struct netdev_stats st;

static void vnet_rx_done(void);
static u16 rx_cur = 0xffff;

static u32 rd(u32 off)
{
	return mmio_read32(vbase + off);
}

static void wr(u32 off, u32 v)
{
	mmio_write32(vbase + off, v);
}

static int fail(const char *what, u32 v)
{
	printf("iovm: virtio-net: %s (0x%x)\n", what, v);
	wr(VMMIO_STATUS, rd(VMMIO_STATUS) | ST_FAILED);
	return -1;
}

static int setup_queue(u32 sel, struct vq *q)
{
	u64 d = netdev_pa_of(q->desc), a = netdev_pa_of(&q->avail), u = netdev_pa_of(&q->used);
	u32 i;

	if (!d || !a || !u)
		return fail("no PA for a virtqueue (BH_HC_IPA_INFO)", sel);
	wr(VMMIO_QUEUE_SEL, sel);
	if (rd(VMMIO_QUEUE_READY))
		return fail("queue already live", sel);
	if (rd(VMMIO_QUEUE_NUM_MAX) < VNET_QSIZE)
		return fail("queue too small", rd(VMMIO_QUEUE_NUM_MAX));
	wr(VMMIO_QUEUE_NUM, VNET_QSIZE);
	wr(VMMIO_QUEUE_DESC, (u32)d);
	wr(VMMIO_QUEUE_DESC + 4, (u32)(d >> 32));
	wr(VMMIO_QUEUE_DRIVER, (u32)a);
	wr(VMMIO_QUEUE_DRIVER + 4, (u32)(a >> 32));
	wr(VMMIO_QUEUE_DEVICE, (u32)u);
	wr(VMMIO_QUEUE_DEVICE + 4, (u32)(u >> 32));
	for (i = 0; i < VNET_QSIZE; i++) {
		u64 pa = netdev_pa_of(q->buf[i]);

		if (!pa)
			return fail("no PA for a buffer", i);
		q->desc[i].addr = pa;
		q->desc[i].len = BUF_SIZE;
		q->desc[i].flags = sel == RXQ ? DESC_F_WRITE : 0;
		q->desc[i].next = 0;
		q->free[i] = (u16)i;
	}
	q->nfree = VNET_QSIZE;
	wr(VMMIO_QUEUE_READY, 1);
	return 0;
}

static int vnet_init(uptr base, u8 mac_out[6])
{
	u32 v, i;

	vbase = base;
	if ((v = rd(VMMIO_MAGIC)) != VMMIO_MAGIC_VALUE)
		return fail("no virtio-mmio transport (magic)", v);
	if ((v = rd(VMMIO_VERSION)) != 2)
		return fail("not a modern (version 2) transport; QEMU needs -global "
		            "virtio-mmio.force-legacy=false",
		            v);
	if ((v = rd(VMMIO_DEVICE_ID)) != VIRTIO_ID_NET)
		return fail("no network device on this transport (device id)", v);
	wr(VMMIO_STATUS, 0);
	wr(VMMIO_STATUS, ST_ACK);
	wr(VMMIO_STATUS, ST_ACK | ST_DRIVER);
	wr(VMMIO_DEV_FEAT_SEL, 1);
	if (!(rd(VMMIO_DEV_FEATURES) & BIT(F_VERSION_1)))
		return fail("device does not offer VIRTIO_F_VERSION_1", 0);
	wr(VMMIO_DEV_FEAT_SEL, 0);
	v = rd(VMMIO_DEV_FEATURES) & BIT(F_NET_MAC);
	wr(VMMIO_DRV_FEAT_SEL, 0);
	wr(VMMIO_DRV_FEATURES, v);
	wr(VMMIO_DRV_FEAT_SEL, 1);
	wr(VMMIO_DRV_FEATURES, BIT(F_VERSION_1));
	wr(VMMIO_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
	if (!(rd(VMMIO_STATUS) & ST_FEATURES_OK))
		return fail("features not accepted", rd(VMMIO_STATUS));
	if (setup_queue(RXQ, &rxq) || setup_queue(TXQ, &txq))
		return -1;
	for (i = 0; i < 6; i++)
		mac_out[i] = v ? *(volatile u8 *)(vbase + VMMIO_CONFIG + i) : 0;
	/* every receive buffer to the device */
	for (i = 0; i < VNET_QSIZE; i++)
		rxq.avail.ring[i] = (u16)i;
	rxq.nfree = 0;
	dmb_ish();
	rxq.avail_idx = VNET_QSIZE;
	WRITE_ONCE(rxq.avail.idx, rxq.avail_idx);
	wr(VMMIO_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
	dsb_sy();
	wr(VMMIO_QUEUE_NOTIFY, RXQ);
	return 0;
}

static void tx_reclaim(void)
{
	u16 used = READ_ONCE(txq.used.idx);

	dmb_ish();
	while (txq.last_used != used) {
		u32 id = READ_ONCE(txq.used.ring[txq.last_used % VNET_QSIZE].id);

		if (id < VNET_QSIZE && txq.nfree < VNET_QSIZE)
			txq.free[txq.nfree++] = (u16)id;
		txq.last_used++;
	}
}

static bool vnet_can_send(void)
{
	tx_reclaim();
	return txq.nfree > 0;
}

static u8 *vnet_tx_buf(u32 *cap)
{
	tx_reclaim();
	if (!txq.nfree) {
		st.tx_full++;
		return NULL;
	}
	*cap = BUF_SIZE - NET_HDR_LEN;
	return txq.buf[txq.free[txq.nfree - 1]] + NET_HDR_LEN;
}

/* Queues the frame in the buffer vnet_tx_buf gave; notifies the device
 * unless it said it needs no notification (VRING_USED_F_NO_NOTIFY: QEMU's
 * transmit handler is already scheduled and will see the new index). */
static void vnet_tx_commit(u32 len)
{
	u16 d = txq.free[--txq.nfree];

	memset(txq.buf[d], 0, NET_HDR_LEN);
	txq.desc[d].len = NET_HDR_LEN + len;
	txq.desc[d].flags = 0;
	txq.avail.ring[txq.avail_idx % VNET_QSIZE] = d;
	dmb_ish(); /* descriptor and buffer before the index */
	txq.avail_idx++;
	WRITE_ONCE(txq.avail.idx, txq.avail_idx);
	dsb_sy(); /* the index before the flags' read and the notification */
	if (!(READ_ONCE(txq.used.flags) & VRING_USED_F_NO_NOTIFY))
		wr(VMMIO_QUEUE_NOTIFY, TXQ);
	else
		st.tx_notify_skipped++;
	st.tx_frames++;
	st.tx_bytes += len;
}

static int vnet_send(const void *frame, u32 len)
{
	u32 cap;
	u8 *buf;

	if (len + NET_HDR_LEN > BUF_SIZE)
		return -2;
	buf = vnet_tx_buf(&cap);
	if (!buf)
		return -1;
	memcpy(buf, frame, len);
	vnet_tx_commit(len);
	return 0;
}

static u32 vnet_recv(const u8 **frame)
{
	u16 used = READ_ONCE(rxq.used.idx);
	struct vq_used_elem e;

	dmb_ish();
	while (rxq.last_used != used) {
		e.id = READ_ONCE(rxq.used.ring[rxq.last_used % VNET_QSIZE].id);
		e.len = READ_ONCE(rxq.used.ring[rxq.last_used % VNET_QSIZE].len);
		rxq.last_used++;
		if (e.id >= VNET_QSIZE || e.len <= NET_HDR_LEN || e.len > BUF_SIZE) {
			st.rx_bad++;
			if (e.id < VNET_QSIZE) {
				rx_cur = (u16)e.id;
				vnet_rx_done();
			}
			continue;
		}
		rx_cur = (u16)e.id;
		*frame = rxq.buf[e.id] + NET_HDR_LEN;
		st.rx_frames++;
		st.rx_bytes += e.len - NET_HDR_LEN;
		return e.len - NET_HDR_LEN;
	}
	return 0;
}

static void vnet_rx_done(void)
{
	if (rx_cur >= VNET_QSIZE)
		return;
	rxq.desc[rx_cur].len = BUF_SIZE;
	rxq.avail.ring[rxq.avail_idx % VNET_QSIZE] = rx_cur;
	rx_cur = 0xffff;
	dmb_ish();
	rxq.avail_idx++;
	WRITE_ONCE(rxq.avail.idx, rxq.avail_idx);
	dsb_sy(); /* the index before the flags' read and the notification */
	if (!(READ_ONCE(rxq.used.flags) & VRING_USED_F_NO_NOTIFY))
		wr(VMMIO_QUEUE_NOTIFY, RXQ);
	else
		st.rx_notify_skipped++;
}

static void vnet_irq_ack(void)
{
	u32 s = rd(VMMIO_IRQ_STATUS);

	if (s)
		wr(VMMIO_IRQ_ACK, s);
}

static const struct netdev_stats *vnet_stats(void)
{
	return &st;
}

const struct netdev_ops vnet_ops = {
	.name = "virtio",
	.init = vnet_init,
	.send = vnet_send,
	.tx_buf = vnet_tx_buf,
	.tx_commit = vnet_tx_commit,
	.can_send = vnet_can_send,
	.recv = vnet_recv,
	.rx_done = vnet_rx_done,
	.irq_ack = vnet_irq_ack,
	.stats = vnet_stats,
};
