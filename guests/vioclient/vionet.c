// SPDX-License-Identifier: Apache-2.0
/*
 * vioclient's virtio-net front end: the echo exchange (echo.h) with the
 * outside peer (bulkhead/run/netpeer.py) through a virtio-net device.
 *
 * Features: VERSION_1, and where offered and listed in `features` (default
 * all): mac (MAC from config space, else `mac`), mrg_rxbuf (a frame may span
 * several receive buffers: num_buffers), event_idx (RING_EVENT_IDX).
 * Params: frames (32), size (200: data bytes), window (8), queue (64
 * entries per queue, a power of two, at most 256), rxbuf (2048: bytes per
 * receive buffer; below 1526 only with mrg_rxbuf), mac (02:00:00:00:00:51),
 * peer_mac (02:00:00:00:00:fe), timeout_ms (20000).
 * Lines: "vioclient: net: mac <mac> queue <q> rxbuf <b> features 0x<f>",
 * echo's "vioclient: result frames=..", "vioclient: net: tx=<n> rx=<n>
 * merged=<frames over more than one buffer> rx_bad=<n> kicks=<n>
 * kicks_skipped=<n>", "vioclient: PASS (<n> frames sent, <m> replies verified
 * both ways)".
 */
#include "echo.h"
#include "vioclient.h"

#define F_MAC        5
#define F_MRG_RXBUF  15
#define F_STATUS     16 /* VIRTIO_NET_F_STATUS: config byte 6 bit 0 is the link */
#define LINK_WAIT_MS 30000
#define NET_HDR      12 /* virtio_net_hdr incl. num_buffers (VERSION_1) */
#define QMAX         256
#define TXBUF        2048
#define RXPOOL       (QMAX * 2048)
#define RXQ          0
#define TXQ          1

struct ring {
	VIRTQ_MEM(QMAX, 16);
	struct virtq q;
};

static struct ring rx, tx;
static u8 rxmem[RXPOOL] __aligned(64);
static u8 txmem[QMAX][TXBUF] __aligned(64);
static u16 txfree[QMAX], ntxfree;
static struct vio *vn;
static u32 qsize, rxbuf;
static u8 mac[ETH_ALEN], peer[ETH_ALEN];
static u64 timeout_ms;
static u64 n_tx, n_rx, n_merged, n_bad, n_kicks, n_skipped;

/* Frame assembly across merged buffers: what is left of the current one. */
static u32 want, got_len;
static bool dropping;

static u8 *rx_buf(u32 id)
{
	return rxmem + id * rxbuf;
}

static void kick(u32 sel, struct virtq *q)
{
	virtq_publish(q);
	if (virtq_kick_needed(q)) {
		vmmio_notify(&vn->mmio, sel);
		n_kicks++;
	} else {
		n_skipped++;
	}
}

static void rx_repost(u32 id)
{
	rx.desc[id].addr = (uptr)rx_buf(id);
	rx.desc[id].len = rxbuf;
	rx.desc[id].flags = VIRTQ_DESC_F_WRITE;
	virtq_push(&rx.q, (u16)id);
}

static void tx_reclaim(void)
{
	u32 id, len;

	while (virtq_pop_used(&tx.q, &id, &len)) {
		if (id < qsize && ntxfree < qsize)
			txfree[ntxfree++] = (u16)id;
		else
			n_bad++;
	}
}

static bool port_can_send(void)
{
	tx_reclaim();
	return ntxfree > 0;
}

static int port_send(const void *frame, u32 len)
{
	u16 d;

	if (len + NET_HDR > TXBUF || !port_can_send())
		return -1;
	d = txfree[--ntxfree];
	memset(txmem[d], 0, NET_HDR); /* no offloads: flags, gso_type NONE */
	memcpy(txmem[d] + NET_HDR, frame, len);
	tx.desc[d].addr = (uptr)txmem[d];
	tx.desc[d].len = NET_HDR + len;
	tx.desc[d].flags = 0;
	virtq_push(&tx.q, d);
	n_tx++;
	return 0;
}

static void port_kick(void)
{
	kick(TXQ, &tx.q);
}

/* One frame, assembled from as many used buffers as its header says
 * (num_buffers; 1 without MRG_RXBUF); every buffer goes straight back to the
 * device. Bad ids/lengths/counts drop the frame and are counted. */
static int port_recv(void *buf, u32 cap)
{
	u32 id, len, n = 0, posted = 0;
	int ret = 0;

	while (!ret && virtq_pop_used(&rx.q, &id, &len)) {
		const u8 *p;

		if (id >= qsize || len > rxbuf) {
			n_bad++; /* a bad id cannot be reposted; the frame is lost */
			want = 0;
			dropping = false;
			continue;
		}
		p = rx_buf(id);
		if (!want) { /* first buffer of a frame */
			u32 nb = vio_has(vn, F_MRG_RXBUF) ? (u32)(p[10] | p[11] << 8) : 1;

			dropping = len < NET_HDR || nb == 0 || nb > qsize;
			want = dropping ? 1 : nb;
			got_len = 0;
			n += nb > 1;
			p += NET_HDR;
			len = len < NET_HDR ? 0 : len - NET_HDR;
		}
		if (!dropping && got_len + len <= cap)
			memcpy((u8 *)buf + got_len, p, len);
		else
			dropping = true;
		got_len += len;
		rx_repost(id);
		posted++;
		if (--want == 0) {
			if (dropping || !got_len)
				n_bad++;
			else
				ret = (int)got_len, n_rx++;
			dropping = false;
		}
	}
	n_merged += n;
	if (posted)
		kick(RXQ, &rx.q);
	return ret;
}

static bool rx_or_tx_done(void *arg)
{
	(void)arg;
	virtq_irq_enable(&rx.q);
	virtq_irq_enable(&tx.q);
	return virtq_used_pending(&rx.q) || (!ntxfree && virtq_used_pending(&tx.q));
}

static void port_wait(u64 max_ns)
{
	vio_wait(vn, rx_or_tx_done, NULL, max_ns);
}

const char *vionet_setup(struct vio *v, uptr base)
{
	u64 wanted = BIT(F_MAC) | BIT(F_MRG_RXBUF) | BIT(F_STATUS) | BIT(VIRTIO_F_RING_EVENT_IDX);
	const char *f = param_str_default("features", "all"), *why;
	u32 i;

	if (strcmp(f, "all")) {
		wanted = 0;
		wanted |= has_word(f, "mac") ? BIT(F_MAC) : 0;
		wanted |= has_word(f, "mrg_rxbuf") ? BIT(F_MRG_RXBUF) : 0;
		wanted |= has_word(f, "event_idx") ? BIT(VIRTIO_F_RING_EVENT_IDX) : 0;
		wanted |= has_word(f, "status") ? BIT(F_STATUS) : 0;
	}
	why = vio_open(v, base, VIRTIO_ID_NET, wanted);
	if (why)
		return why;
	if (rxbuf < NET_HDR + ETH_FRAME_MAX && !vio_has(v, F_MRG_RXBUF)) {
		vmmio_fail(&v->mmio);
		return "rxbuf below a whole frame without VIRTIO_NET_F_MRG_RXBUF";
	}
	if ((why = vio_queue(v, RXQ, &rx.q, (u16)qsize, rx.desc, rx.avail, rx.used)) ||
	    (why = vio_queue(v, TXQ, &tx.q, (u16)qsize, tx.desc, tx.avail, tx.used)))
		return why;
	for (i = 0; i < qsize; i++) {
		rx_repost(i);
		txfree[i] = (u16)(qsize - 1 - i);
	}
	ntxfree = (u16)qsize;
	want = got_len = 0;
	dropping = false;
	virtq_publish(&rx.q);
	vio_start(v);
	kick(RXQ, &rx.q);
	/* with VIRTIO_NET_F_STATUS, nothing is sent before the device says the
	 * link is up (a bridge's link comes up when the I/O VM has its rings) */
	for (i = 0; vio_has(v, F_STATUS) && !(vmmio_config8(&v->mmio, 6) & 1); i++) {
		if (i == LINK_WAIT_MS)
			return "the link did not come up";
		timer_delay_ms(1);
	}
	return NULL;
}

const char *vionet_echo(u32 frames, u32 size, u32 window)
{
	static const struct echo_port port = { port_can_send, port_send, port_recv, port_kick,
		                               port_wait };
	struct echo_result res;
	const char *why =
	    echo_run(&port, peer, mac, mac[5], frames, size, window, timeout_ms, &res);

	printf("vioclient: net: tx=%lu rx=%lu merged=%lu rx_bad=%lu kicks=%lu kicks_skipped=%lu\n",
	       n_tx, n_rx, n_merged, n_bad, n_kicks, n_skipped);
	if (!why)
		echo_print_result("vioclient", &res);
	return why;
}

static bool tx_all_back(void *arg)
{
	(void)arg;
	virtq_irq_enable(&tx.q);
	tx_reclaim();
	return ntxfree == qsize;
}

bool vionet_tx_idle(u64 timeout_ns)
{
	return vio_wait(vn, tx_all_back, NULL, timeout_ns);
}

struct virtq *vionet_txq(void)
{
	return &tx.q;
}

void *vionet_txbuf(u32 i)
{
	return txmem[i % QMAX];
}

int vionet_run(struct vio *v, uptr base)
{
	u32 frames = (u32)param_u64("frames", 32), size = (u32)param_u64("size", 200);
	u32 window = (u32)param_u64("window", 8), i;
	const char *why;

	vn = v;
	qsize = (u32)param_u64("queue", 64);
	rxbuf = (u32)param_u64("rxbuf", 2048);
	timeout_ms = param_u64("timeout_ms", 20000);
	if (!qsize || qsize > QMAX || (qsize & (qsize - 1)))
		return rt_fail("vioclient", "queue %u: a power of two up to %u", qsize, QMAX);
	if (rxbuf < NET_HDR + 64 || rxbuf > RXPOOL / qsize)
		return rt_fail("vioclient", "rxbuf %u out of range", rxbuf);
	if (size > ECHO_DATA_MAX || !window)
		return rt_fail("vioclient", "size %u or window %u out of range", size, window);
	if (!eth_parse_mac(param_str_default("mac", "02:00:00:00:00:51"), mac) ||
	    !eth_parse_mac(param_str_default("peer_mac", "02:00:00:00:00:fe"), peer))
		return rt_fail("vioclient", "bad mac or peer_mac");
	why = vionet_setup(v, base);
	if (why)
		return rt_fail("vioclient", "net: %s (status 0x%x)", why, vmmio_status(&v->mmio));
	if (vio_has(v, F_MAC))
		for (i = 0; i < ETH_ALEN; i++)
			mac[i] = vmmio_config8(&v->mmio, i);
	printf("vioclient: net: mac %02x:%02x:%02x:%02x:%02x:%02x queue %u rxbuf %u features "
	       "0x%lx\n",
	       mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], qsize, rxbuf, v->features);
	if (!strcmp(param_str_default("mode", "echo"), "hostile"))
		return vionet_hostile(v, base, qsize);
	why = vionet_echo(frames, size, window);
	if (why)
		return vio_fail(v, "net", why);
	printf("vioclient: PASS (%u frames sent, %u replies verified both ways)\n", frames, frames);
	return 0;
}
