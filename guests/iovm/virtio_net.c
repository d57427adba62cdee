// SPDX-License-Identifier: Apache-2.0
/* virtio-net over modern virtio-mmio, polled (virtio_net.h), on the
 * transport and split-virtqueue library (lib/virtio_mmio.c, lib/virtq.c). */
#include "virtio_net.h"

#include "runtime.h"
#include "virtio_mmio.h"
#include "virtq.h"

#define F_NET_MAC 5

#define NET_HDR_LEN 12 /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define BUF_SIZE    2048
#define RXQ         0
#define TXQ         1

/* The header 4 bytes into each buffer, so that its frame starts on a word
 * (16 bytes in), as a ring slot's data does: the copies between the two
 * take whole words, without shifting them together. */
#define HDR_OFF   4u
#define FRAME_OFF (HDR_OFF + NET_HDR_LEN)
#define DESC_LEN  (BUF_SIZE - HDR_OFF)

/* Each ring part in its own page so that one translation covers it. */
struct vq {
	VIRTQ_MEM(VNET_QSIZE, 4096);
	u8 buf[VNET_QSIZE][BUF_SIZE] __aligned(4096);
	struct virtq q;
	u16 nfree; /* tx: free descriptors */
	u16 free[VNET_QSIZE];
};

static struct vq rxq, txq;
static struct vmmio dev;
static struct netdev_stats st;

static void vnet_rx_done(void);
static u16 rx_cur = 0xffff;

static int fail(const char *what, u32 v)
{
	printf("iovm: virtio-net: %s (0x%x)\n", what, v);
	vmmio_fail(&dev);
	return -1;
}

static int setup_queue(u32 sel, struct vq *q)
{
	u64 d = netdev_pa_of(q->desc), a = netdev_pa_of(q->avail), u = netdev_pa_of(q->used);
	u32 i;
	int rc;

	if (!d || !a || !u)
		return fail("no PA for a virtqueue (BH_HC_IPA_INFO)", sel);
	virtq_init(&q->q, VNET_QSIZE, q->desc, q->avail, q->used, false);
	for (i = 0; i < VNET_QSIZE; i++) {
		u64 pa = netdev_pa_of(q->buf[i]);

		if (!pa)
			return fail("no PA for a buffer", i);
		q->desc[i].addr = pa + HDR_OFF;
		q->desc[i].len = DESC_LEN;
		q->desc[i].flags = sel == RXQ ? VIRTQ_DESC_F_WRITE : 0;
		q->free[i] = (u16)i;
	}
	q->nfree = VNET_QSIZE;
	rc = vmmio_queue_setup(&dev, sel, VNET_QSIZE, d, a, u);
	if (rc == -1)
		return fail("queue already live", sel);
	if (rc)
		return fail("queue too small", vmmio_queue_max(&dev, sel));
	return 0;
}

static int vnet_init(uptr base, u8 mac_out[6])
{
	u64 f;
	u32 i;

	if (vmmio_probe(&dev, base))
		return fail("no virtio-mmio transport (magic)", vmmio_read(&dev, VMMIO_MAGIC));
	if (dev.version != 2)
		return fail("not a modern (version 2) transport; QEMU needs -global "
		            "virtio-mmio.force-legacy=false",
		            dev.version);
	if (dev.device_id != VIRTIO_ID_NET)
		return fail("no network device on this transport (device id)", dev.device_id);
	vmmio_write(&dev, VMMIO_STATUS, 0);
	vmmio_status_set(&dev, VIRTIO_ST_ACK);
	vmmio_status_set(&dev, VIRTIO_ST_DRIVER);
	f = vmmio_device_features(&dev);
	if (!(f & BIT(VIRTIO_F_VERSION_1)))
		return fail("device does not offer VIRTIO_F_VERSION_1", 0);
	f &= BIT(F_NET_MAC);
	if (!vmmio_features_ok(&dev, f | BIT(VIRTIO_F_VERSION_1)))
		return fail("features not accepted", vmmio_status(&dev));
	if (setup_queue(RXQ, &rxq) || setup_queue(TXQ, &txq))
		return -1;
	for (i = 0; i < 6; i++)
		mac_out[i] = f ? vmmio_config8(&dev, i) : 0;
	/* every receive buffer to the device */
	for (i = 0; i < VNET_QSIZE; i++)
		virtq_push(&rxq.q, (u16)i);
	rxq.nfree = 0;
	virtq_publish(&rxq.q);
	/* no interrupts until asked for (vnet_rx_irq): transmit completions
	 * are reclaimed when the I/O VM sends */
	virtq_irq_disable(&txq.q);
	virtq_irq_disable(&rxq.q);
	vmmio_status_set(&dev, VIRTIO_ST_DRIVER_OK);
	dsb_sy();
	vmmio_notify(&dev, RXQ);
	return 0;
}

static void tx_reclaim(void)
{
	u32 id, len;

	while (virtq_pop_used(&txq.q, &id, &len)) {
		if (id < VNET_QSIZE && txq.nfree < VNET_QSIZE)
			txq.free[txq.nfree++] = (u16)id;
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
	*cap = BUF_SIZE - FRAME_OFF;
	return txq.buf[txq.free[txq.nfree - 1]] + FRAME_OFF;
}

/* Queues the frame in the buffer vnet_tx_buf gave (the device sees it at
 * the next vnet_tx_flush, or earlier if its handler is running). */
static void vnet_tx_commit(u32 len)
{
	u16 d = txq.free[--txq.nfree];

	memset(txq.buf[d] + HDR_OFF, 0, NET_HDR_LEN);
	txq.desc[d].len = NET_HDR_LEN + len;
	txq.desc[d].flags = 0;
	virtq_push(&txq.q, d);
	virtq_publish(&txq.q);
	st.tx_frames++;
	st.tx_bytes += len;
}

/* One notification for the frames queued since the last, unless the device
 * said it needs none (VRING_USED_F_NO_NOTIFY: QEMU's transmit handler is
 * already scheduled and will see the new index). */
static void vnet_tx_flush(void)
{
	if (txq.q.kicked_idx == txq.q.avail_idx)
		return;
	if (virtq_kick_needed(&txq.q)) {
		vmmio_notify(&dev, TXQ);
		st.tx_notifies++;
	} else {
		st.tx_notify_skipped++;
	}
}

static int vnet_send(const void *frame, u32 len)
{
	u32 cap;
	u8 *buf;

	if (len + FRAME_OFF > BUF_SIZE)
		return -2;
	buf = vnet_tx_buf(&cap);
	if (!buf)
		return -1;
	memcpy(buf, frame, len);
	vnet_tx_commit(len);
	vnet_tx_flush();
	return 0;
}

static u32 vnet_recv(const u8 **frame)
{
	u32 id, len;

	while (virtq_pop_used(&rxq.q, &id, &len)) {
		if (id >= VNET_QSIZE || len <= NET_HDR_LEN || len > DESC_LEN) {
			st.rx_bad++;
			if (id < VNET_QSIZE) {
				rx_cur = (u16)id;
				vnet_rx_done();
			}
			continue;
		}
		rx_cur = (u16)id;
		*frame = rxq.buf[id] + FRAME_OFF;
		st.rx_frames++;
		st.rx_bytes += len - NET_HDR_LEN;
		return len - NET_HDR_LEN;
	}
	return 0;
}

static void vnet_rx_done(void)
{
	if (rx_cur >= VNET_QSIZE)
		return;
	rxq.desc[rx_cur].len = DESC_LEN;
	virtq_push(&rxq.q, rx_cur);
	rx_cur = 0xffff;
	virtq_publish(&rxq.q);
	if (virtq_kick_needed(&rxq.q))
		vmmio_notify(&dev, RXQ);
	else
		st.rx_notify_skipped++;
}

static bool vnet_rx_ready(void)
{
	return virtq_used_pending(&rxq.q);
}

static void vnet_rx_irq(bool on)
{
	if (on)
		virtq_irq_enable(&rxq.q);
	else
		virtq_irq_disable(&rxq.q);
}

static void vnet_irq_ack(void)
{
	vmmio_irq_ack(&dev);
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
	.tx_flush = vnet_tx_flush,
	.can_send = vnet_can_send,
	.recv = vnet_recv,
	.rx_done = vnet_rx_done,
	.rx_ready = vnet_rx_ready,
	.rx_irq = vnet_rx_irq,
	.irq_ack = vnet_irq_ack,
	.stats = vnet_stats,
};
