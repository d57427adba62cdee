// SPDX-License-Identifier: Apache-2.0
/*
 * ioclient: a client of the shared I/O device (docs/io.md) that exchanges
 * frames with a peer outside the machine through the I/O VM.
 *
 * Frame: Ethernet header (dst, src = io_mac, type 0x88b5), then kind (u8:
 * 1 echo request, 2 echo reply, 3 sink), pad (u8), dlen (u16), seq (u32),
 * csum (u32, FNV-1a of the data), echo_csum (u32: in a reply, the FNV-1a
 * the peer computed over the request's data), data[dlen]; little endian.
 * The peer answers a request with the data reversed and XORed with 0xa5.
 *
 * mode=echo (default): sends `frames` requests of `size` data bytes to
 *   peer_mac with at most `window` outstanding, checks every reply (its own
 *   checksum, the peer's checksum of the request, the transformed data).
 * mode=flood: sends `frames` sink frames as fast as the ring takes them.
 * mode=bad: first writes malformed slots into its transmit ring (a bad flag,
 *   lengths 0, 1600 and 5000, an index out of range, a runt frame, a forged
 *   source MAC), then runs echo.
 * Params: io_shm, io_queue, io_mac (from the io: section), mode, frames (20),
 * size (200), window (io_queue), peer_mac (02:00:00:00:00:fe), timeout_ms (30000).
 * Lines: "ioclient: <mode>: mac <mac> queue <q>", "ioclient: PASS (<n> frames sent, <m> replies
 * verified both ways)" or "ioclient: FAIL (<why>)".
 */
#include "ethframe.h"
#include "ioring.h"
#include "runtime.h"

#define ETHERTYPE 0x88b5
#define K_REQ     1
#define K_REPLY   2
#define K_SINK    3
#define P_OFF     ETH_HLEN
#define D_OFF     (ETH_HLEN + 16)
#define DATA_MAX  (ETH_FRAME_MAX - D_OFF)

static struct ioring tx, rx;
static struct ioring_ctrl *ctrl;
static u8 mac[ETH_ALEN], peer[ETH_ALEN];
static u8 fbuf[ETH_FRAME_MAX], rbuf[ETH_FRAME_MAX], expect[DATA_MAX];
static u32 shm, seed;
static volatile u32 rings;

/* Reports the failure, tells the I/O VM this client is done, returns 1. */
#define fail(...) (done(), rt_fail("ioclient", __VA_ARGS__))

static void done(void)
{
	if (ctrl)
		ioring_store_release(&ctrl->client_state, IORING_STATE_DONE);
}

static u32 fnv(const u8 *p, u32 n)
{
	u32 h = 0x811c9dc5u, i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x01000193u;
	}
	return h;
}

static void put16(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static void put32(u8 *p, u32 v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}

static u32 get16(const u8 *p)
{
	return p[0] | (u32)p[1] << 8;
}

static u32 get32(const u8 *p)
{
	return get16(p) | get16(p + 2) << 16;
}

static void gen_data(u8 *d, u32 n, u32 seq)
{
	u32 i;

	for (i = 0; i < n; i++)
		d[i] = (u8)((seed * 131 + seq * 7 + i * 13) ^ (i >> 3));
}

/* A frame of kind k, data n bytes; returns its length. */
static u32 build(u8 *f, u32 kind, u32 seq, u32 n)
{
	struct eth_hdr *h = (struct eth_hdr *)f;

	memcpy(h->dst, peer, ETH_ALEN);
	memcpy(h->src, mac, ETH_ALEN);
	h->type[0] = ETHERTYPE >> 8;
	h->type[1] = ETHERTYPE & 0xff;
	f[P_OFF] = (u8)kind;
	f[P_OFF + 1] = 0;
	put16(f + P_OFF + 2, n);
	put32(f + P_OFF + 4, seq);
	gen_data(f + D_OFF, n, seq);
	put32(f + P_OFF + 8, fnv(f + D_OFF, n));
	put32(f + P_OFF + 12, 0);
	return D_OFF + n;
}

static void doorbell_irq(u32 intid)
{
	(void)intid;
	atomic_add32(&rings, 1);
}

static bool rx_ready(void *arg)
{
	(void)arg;
	return ioring_pending(&rx);
}

/* Checks one reply; 0 if good, else a negative code (reason printed). */
static int check_reply(const u8 *f, int n, u32 size, u32 *seq_out)
{
	const struct eth_hdr *h = (const struct eth_hdr *)f;
	u32 dlen, seq, i;

	if (n < D_OFF || h->type[0] != ETHERTYPE >> 8 || h->type[1] != (ETHERTYPE & 0xff) ||
	    f[P_OFF] != K_REPLY)
		return fail("unexpected frame of %d bytes, kind %u", n, n > P_OFF ? f[P_OFF] : 0),
		       -1;
	if (!eth_mac_eq(h->dst, mac))
		return fail("reply for another MAC"), -1;
	dlen = get16(f + P_OFF + 2);
	seq = get32(f + P_OFF + 4);
	if (dlen != size || (u32)n != D_OFF + dlen)
		return fail("reply %u: length %u, frame %d, expected %u", seq, dlen, n, size), -1;
	if (fnv(f + D_OFF, dlen) != get32(f + P_OFF + 8))
		return fail("reply %u: its checksum does not match its data", seq), -1;
	gen_data(expect, size, seq);
	if (get32(f + P_OFF + 12) != fnv(expect, size))
		return fail("reply %u: the peer's checksum of our request is wrong", seq), -1;
	for (i = 0; i < size; i++)
		if (f[D_OFF + i] != (expect[size - 1 - i] ^ 0xa5))
			return fail("reply %u: data byte %u differs", seq, i), -1;
	*seq_out = seq;
	return 0;
}

static int run_echo(u32 frames, u32 size, u32 window, u64 timeout_ms)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(timeout_ms * 1000000ull);
	u32 sent = 0, got = 0, seq;

	while (got < frames) {
		bool rang = false;
		int n;

		while (sent < frames && sent - got < window && ioring_can_send(&tx)) {
			u32 len = build(fbuf, K_REQ, sent, size);

			if (ioring_send(&tx, fbuf, len))
				return fail("ioring_send refused frame %u", sent);
			sent++;
			rang = true;
		}
		if (rang)
			bh_doorbell(shm);
		n = ioring_recv(&rx, rbuf, sizeof(rbuf), NULL);
		if (n > 0) {
			if (check_reply(rbuf, n, size, &seq))
				return 1;
			got++;
			continue;
		}
		if (n < 0)
			return fail("malformed slot from the I/O VM");
		if (timer_now() > deadline)
			return fail("%u of %u replies after %lu ms (%u sent)", got, frames,
			            timeout_ms, sent);
		timer_wait_until(rx_ready, NULL, 1000000);
	}
	printf("ioclient: PASS (%u frames sent, %u replies verified both ways)\n", sent, got);
	return 0;
}

static int run_flood(u32 frames, u32 size)
{
	u32 sent = 0;

	while (sent < frames) {
		if (!ioring_can_send(&tx)) {
			cpu_relax();
			continue;
		}
		ioring_send(&tx, fbuf, build(fbuf, K_SINK, sent, size));
		if (++sent % 16 == 0)
			bh_doorbell(shm);
	}
	bh_doorbell(shm);
	printf("ioclient: PASS (%u frames sent, 0 replies verified both ways)\n", sent);
	return 0;
}

/* Writes a raw slot at the ring's position (bypassing ioring_send). */
static void raw_slot(u32 flag, u32 len, u32 index, const u8 *data, u32 n)
{
	struct ioring_slot *s = &tx.slots[tx.pos];

	memcpy(s->data, data, n);
	s->len = len;
	s->index = index;
	ioring_store_release(&s->flag, flag);
	tx.pos = tx.pos + 1 == tx.nslots ? 0 : tx.pos + 1;
}

static int write_bad(u32 size)
{
	u32 len = build(fbuf, K_SINK, 0, size);

	if (tx.nslots < 8)
		return fail("mode=bad needs io_queue >= 8");
	raw_slot(0xdeadbeef, len, tx.pos, fbuf, len);   /* bad flag */
	raw_slot(IORING_FULL, 0, tx.pos, fbuf, len);    /* length 0 */
	raw_slot(IORING_FULL, 1600, tx.pos, fbuf, len); /* above a frame */
	raw_slot(IORING_FULL, 5000, tx.pos, fbuf, len); /* above the slot */
	raw_slot(IORING_FULL, len, 999, fbuf, len);     /* index out of range */
	raw_slot(IORING_FULL, 8, tx.pos, fbuf, len);    /* runt */
	fbuf[ETH_ALEN] ^= 0x40;                         /* forged source MAC */
	raw_slot(IORING_FULL, len, tx.pos, fbuf, len);
	bh_doorbell(shm);
	printf("ioclient: wrote 7 malformed slots\n");
	return 0;
}

int main(const char *params)
{
	const char *mode = param_str_default("mode", "echo");
	u32 q = (u32)param_u64("io_queue", 0), frames = (u32)param_u64("frames", 20);
	u32 size = (u32)param_u64("size", 200), window = (u32)param_u64("window", q);
	u64 timeout_ms = param_u64("timeout_ms", 30000), deadline;
	struct bh_shmem_info sh;
	const char *vm = param_str_default("vm", "?");
	void *mem;

	(void)params;
	shm = (u32)param_u64("io_shm", ~0ull);
	if (!eth_parse_mac(param_str("io_mac"), mac) ||
	    !eth_parse_mac(param_str_default("peer_mac", "02:00:00:00:00:fe"), peer))
		return fail("bad io_mac or peer_mac");
	if (size == 0 || size > DATA_MAX || window == 0)
		return fail("size must be 1-%u, window >= 1", DATA_MAX);
	if (bh_shmem_info(shm, &sh) != BH_OK || sh.size < ioring_region_size(q))
		return fail("no shared-memory region %u for %u slots", shm, q);
	seed = fnv((const u8 *)vm, strlen(vm));
	mem = (void *)sh.ipa;
	ctrl = ioring_ctrl(mem);
	if (!ioring_attach(&tx, ioring_tx_mem(mem), q) ||
	    !ioring_attach(&rx, ioring_rx_mem(mem, q), q))
		return fail("bad io_queue %u", q);
	gic_init();
	if (sh.doorbell_irq >= 32 && sh.doorbell_irq < 1020) {
		irq_register(sh.doorbell_irq, doorbell_irq);
		gic_spi_setup(sh.doorbell_irq, true);
	}
	printf("ioclient: %s: mac %s queue %u\n", mode, param_str("io_mac"), q);
	deadline = timer_now() + timer_ns_to_ticks(20 * NSEC_PER_SEC);
	while (ioring_load_acquire(&ctrl->magic) != IORING_CTRL_MAGIC ||
	       ioring_load_acquire(&ctrl->io_state) != IORING_STATE_READY) {
		if (timer_now() > deadline)
			return fail("the I/O VM did not get ready");
		timer_delay_us(100);
	}
	ioring_store_release(&ctrl->client_state, IORING_STATE_READY);
	if (!strcmp(mode, "bad")) {
		if (write_bad(size))
			return 1;
		mode = "echo";
	}
	if (!strcmp(mode, "echo")) {
		if (run_echo(frames, size, window, timeout_ms))
			return 1;
	} else if (!strcmp(mode, "flood")) {
		run_flood(frames, size);
	} else {
		return fail("unknown mode '%s' (echo, flood, bad)", mode);
	}
	ioring_store_release(&ctrl->client_state, IORING_STATE_DONE);
	return 0;
}
