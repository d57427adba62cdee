// SPDX-License-Identifier: Apache-2.0
/* Cadence GEM driver (gem.h). Registers and descriptor bits: Xilinx UG1087
 * (GEM registers) and UG1085 (GEM chapter: buffer descriptors). */
#include "gem.h"

#include "runtime.h"

#define GEM_NWCTRL   0x000 /* network control */
#define GEM_NWCFG    0x004 /* network configuration */
#define GEM_DMACFG   0x010
#define GEM_TXSTATUS 0x014
#define GEM_RXQBASE  0x018
#define GEM_TXQBASE  0x01c
#define GEM_RXSTATUS 0x020
#define GEM_ISR      0x024
#define GEM_IER      0x028
#define GEM_IDR      0x02c
#define GEM_SPADDR1L 0x088 /* specific address 1, bottom: MAC bytes 0-3 */
#define GEM_SPADDR1H 0x08c /* top: bytes 4-5 */
#define GEM_TXQ1BASE 0x440 /* priority queue 1 */
#define GEM_RXQ1BASE 0x480

#define NWCTRL_RXEN   BIT(2)
#define NWCTRL_TXEN   BIT(3)
#define NWCTRL_MDEN   BIT(4)
#define NWCTRL_CLRST  BIT(5)
#define NWCTRL_TSTART BIT(9)

#define NWCFG_COPYALL BIT(4)  /* promiscuous */
#define NWCFG_FCSREM  BIT(17) /* FCS not written to memory */

#define DMACFG_RXBUF_SHIFT 16 /* receive buffer size in 64-byte units */
#define DMACFG_RXBUF_MASK  (0xffu << DMACFG_RXBUF_SHIFT)
#define DMACFG_BD_EXT      (BIT(28) | BIT(29)) /* extended (timestamp) descriptors */
#define DMACFG_ADDR64      BIT(30)

#define INT_RXCMPL BIT(1)

/* Receive descriptor: word 0 address | WRAP | OWN (1: a frame is in it, the
 * software's), word 1 status: length 12:0, SOF 14, EOF 15. */
#define RX_OWN  BIT(0)
#define RX_WRAP BIT(1)
#define RX_LEN  0x1fffu
#define RX_SOF  BIT(14)
#define RX_EOF  BIT(15)
/* Transmit descriptor: word 0 address; word 1 length 13:0, LAST 15, WRAP 30,
 * USED 31 (1: the software's; the GEM sets it on the frame's first
 * descriptor once it is sent). */
#define TX_LEN  0x3fffu
#define TX_LAST BIT(15)
#define TX_WRAP BIT(30)
#define TX_USED BIT(31)

#define BUF_SIZE 2048
#define LINE     64

struct gem_desc {
	u32 addr;
	u32 ctrl;
};

struct gem_ring {
	struct gem_desc desc[GEM_QSIZE] __aligned(4096);
	u8 buf[GEM_QSIZE][BUF_SIZE] __aligned(4096);
	u32 head; /* tx: next to fill; rx: next to look at */
	u32 tail; /* tx: oldest in flight */
	u32 pending;
};

static struct gem_ring rxr, txr;
static struct gem_desc parked[2] __aligned(64); /* queue 1: rx (OWN) and tx (USED) */
static uptr gbase;
static struct netdev_stats st;
static bool rx_held;

static u32 rd(u32 off)
{
	return mmio_read32(gbase + off);
}

static void wr(u32 off, u32 v)
{
	mmio_write32(gbase + off, v);
}

/* The GEM is not cache-coherent on the ZynqMP unless the boot loader made it
 * so: descriptors and buffers are cleaned and invalidated around each use. */
static void flush(const void *p, u32 len)
{
	uptr a = (uptr)p & ~(uptr)(LINE - 1), end = (uptr)p + len;

	for (; a < end; a += LINE)
		__asm__ volatile("dc civac, %0" ::"r"(a) : "memory");
	dsb_sy();
}

static int fail(const char *what, u64 v)
{
	printf("iovm: gem: %s (0x%lx)\n", what, v);
	return -1;
}

/* A 32-bit DMA address of p (the rings run without 64-bit addressing). */
static int dma_addr(const void *p, u32 *out)
{
	u64 pa = netdev_pa_of(p);

	if (!pa)
		return fail("no PA (BH_HC_IPA_INFO)", (uptr)p);
	if (pa >> 32)
		return fail("memory above 4 GiB: the I/O VM's RAM must be in the low DDR bank", pa);
	*out = (u32)pa;
	return 0;
}

static int gem_init(uptr base, u8 mac_out[6])
{
	u32 i, a, lo, hi, rxq, txq, park;

	gbase = base;
	/* stop, clear the statistics and every status */
	wr(GEM_NWCTRL, NWCTRL_MDEN);
	wr(GEM_NWCTRL, NWCTRL_MDEN | NWCTRL_CLRST);
	wr(GEM_IDR, ~0u);
	(void)rd(GEM_ISR);
	wr(GEM_ISR, ~0u);
	wr(GEM_TXSTATUS, ~0u);
	wr(GEM_RXSTATUS, ~0u);
	for (i = 0; i < GEM_QSIZE; i++) {
		if (dma_addr(rxr.buf[i], &a))
			return -1;
		rxr.desc[i].addr = a | (i == GEM_QSIZE - 1 ? RX_WRAP : 0);
		rxr.desc[i].ctrl = 0;
		if (dma_addr(txr.buf[i], &a))
			return -1;
		txr.desc[i].addr = a;
		txr.desc[i].ctrl = TX_USED | (i == GEM_QSIZE - 1 ? TX_WRAP : 0);
	}
	parked[0] = (struct gem_desc){ RX_OWN | RX_WRAP, 0 };
	parked[1] = (struct gem_desc){ 0, TX_USED | TX_WRAP };
	rxr.head = txr.head = txr.tail = txr.pending = 0;
	flush(&rxr, sizeof(rxr.desc));
	flush(&txr, sizeof(txr.desc));
	flush(parked, sizeof(parked));
	if (dma_addr(rxr.desc, &rxq) || dma_addr(txr.desc, &txq) || dma_addr(parked, &park))
		return -1;
	wr(GEM_DMACFG, (rd(GEM_DMACFG) & ~(DMACFG_RXBUF_MASK | DMACFG_BD_EXT | DMACFG_ADDR64)) |
	                   (BUF_SIZE / 64) << DMACFG_RXBUF_SHIFT);
	wr(GEM_NWCFG, rd(GEM_NWCFG) | NWCFG_COPYALL | NWCFG_FCSREM);
	wr(GEM_RXQBASE, rxq);
	wr(GEM_TXQBASE, txq);
	wr(GEM_RXQ1BASE, park);
	wr(GEM_TXQ1BASE, park + (u32)sizeof(struct gem_desc));
	lo = rd(GEM_SPADDR1L);
	hi = rd(GEM_SPADDR1H);
	for (i = 0; i < 4; i++)
		mac_out[i] = (u8)(lo >> (8 * i));
	mac_out[4] = (u8)hi;
	mac_out[5] = (u8)(hi >> 8);
	dsb_sy(); /* no interrupt until asked for (gem_rx_irq) */
	wr(GEM_NWCTRL, NWCTRL_MDEN | NWCTRL_RXEN | NWCTRL_TXEN);
	return 0;
}

/* Frames the GEM has sent give their descriptors back. */
static void tx_reclaim(void)
{
	while (txr.pending) {
		struct gem_desc *d = &txr.desc[txr.tail];

		flush(d, sizeof(*d));
		if (!(READ_ONCE(d->ctrl) & TX_USED))
			break;
		txr.tail = (txr.tail + 1) % GEM_QSIZE;
		txr.pending--;
	}
}

static bool gem_can_send(void)
{
	tx_reclaim();
	return txr.pending < GEM_QSIZE;
}

static u8 *gem_tx_buf(u32 *cap)
{
	if (!gem_can_send()) {
		st.tx_full++;
		return NULL;
	}
	*cap = BUF_SIZE;
	return txr.buf[txr.head];
}

static void gem_tx_commit(u32 len)
{
	struct gem_desc *d;
	u32 i = txr.head;

	flush(txr.buf[i], len);
	d = &txr.desc[i];
	/* USED cleared last: the GEM may look at the descriptor at any time */
	WRITE_ONCE(d->ctrl, len | TX_LAST | (i == GEM_QSIZE - 1 ? TX_WRAP : 0));
	flush(d, sizeof(*d));
	txr.head = (i + 1) % GEM_QSIZE;
	txr.pending++;
	wr(GEM_NWCTRL, NWCTRL_MDEN | NWCTRL_RXEN | NWCTRL_TXEN | NWCTRL_TSTART);
	st.tx_frames++;
	st.tx_bytes += len;
}

static int gem_send(const void *frame, u32 len)
{
	u32 cap;
	u8 *buf;

	if (len > BUF_SIZE || len > TX_LEN)
		return -2;
	buf = gem_tx_buf(&cap);
	if (!buf)
		return -1;
	memcpy(buf, frame, len);
	gem_tx_commit(len);
	return 0;
}

/* Gives the descriptor at head back to the GEM and moves on. */
static void rx_release(void)
{
	struct gem_desc *d = &rxr.desc[rxr.head];

	d->ctrl = 0;
	WRITE_ONCE(d->addr, d->addr & ~RX_OWN);
	flush(d, sizeof(*d));
	rxr.head = (rxr.head + 1) % GEM_QSIZE;
	/* a GEM that found no free buffer looks again (and takes what waited) */
	wr(GEM_NWCTRL, NWCTRL_MDEN | NWCTRL_RXEN | NWCTRL_TXEN);
}

static u32 gem_recv(const u8 **frame)
{
	for (;;) {
		struct gem_desc *d = &rxr.desc[rxr.head];
		u32 st_word, len;

		flush(d, sizeof(*d));
		if (!(READ_ONCE(d->addr) & RX_OWN))
			return 0;
		st_word = READ_ONCE(d->ctrl);
		len = st_word & RX_LEN;
		/* one buffer holds a whole frame (2 KiB): anything else is dropped */
		if (len == 0 || len > BUF_SIZE ||
		    (st_word & (RX_SOF | RX_EOF)) != (RX_SOF | RX_EOF)) {
			st.rx_bad++;
			rx_release();
			continue;
		}
		flush(rxr.buf[rxr.head], len);
		*frame = rxr.buf[rxr.head];
		rx_held = true;
		st.rx_frames++;
		st.rx_bytes += len;
		return len;
	}
}

static void gem_rx_done(void)
{
	if (!rx_held)
		return;
	rx_held = false;
	rx_release();
}

static void gem_irq_ack(void)
{
	u32 s = rd(GEM_ISR); /* clear-on-read, or write-one-to-clear: both */

	if (s)
		wr(GEM_ISR, s);
	wr(GEM_RXSTATUS, rd(GEM_RXSTATUS));
}

static bool gem_rx_ready(void)
{
	const struct gem_desc *d = &rxr.desc[rxr.head];

	flush(d, sizeof(*d));
	return (READ_ONCE(d->addr) & RX_OWN) != 0;
}

static void gem_rx_irq(bool on)
{
	if (on)
		gem_irq_ack(); /* what was latched while masked: rx_ready tells */
	wr(on ? GEM_IER : GEM_IDR, INT_RXCMPL);
	dsb_sy(); /* before the caller looks at the ring once more */
}

static const struct netdev_stats *gem_stats(void)
{
	return &st;
}

const struct netdev_ops gem_ops = {
	.name = "gem",
	.init = gem_init,
	.send = gem_send,
	.tx_buf = gem_tx_buf,
	.tx_commit = gem_tx_commit,
	.can_send = gem_can_send,
	.recv = gem_recv,
	.rx_done = gem_rx_done,
	.rx_ready = gem_rx_ready,
	.rx_irq = gem_rx_irq,
	.irq_ack = gem_irq_ack,
	.stats = gem_stats,
};
