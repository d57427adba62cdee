// SPDX-License-Identifier: Apache-2.0
/*
 * vioattack: a hostile client of the hypervisor's virtio bridge (docs/io.md
 * "VirtIO"), for its network device (dev=net, default) or its block device
 * (dev=blk). It drives the virtio-mmio transport with plain register writes
 * (no virtio library) and, one case after the other, sets the device up
 * (reset, VERSION_1, FEATURES_OK, the request queue of 8 descriptors in its
 * RAM: net's transmit queue 1, blk's queue 0; DRIVER_OK) and, each on a
 * reset device:
 *   ring      the descriptor table at victim_ipa (0x48000000: the victim's
 *             RAM by physical address, an IPA outside the attacker's RAM),
 *             the used ring on the transport page: QueueReady must stay 0;
 *   features  every feature bit in words 0-2, then features without
 *             VERSION_1: FEATURES_OK must not stick; queue sizes 3, 512
 *             and 0: QueueReady must stay 0;
 *   regs      0xffffffff written to, and read from, every word of the 4 KiB
 *             transport page, then byte and halfword accesses to each of the
 *             first 64 words (the transport refuses them: the aborts come
 *             back to it, counted); the device must come up again;
 *   resets    `resets` (1000) set-ups, each reset at once (a reset storm);
 *             then one good request must be served (net: an echo request
 *             to peer_mac; blk: a read of sector 0, status OK);
 *   flood     `flood` (100000) QueueNotify writes with nothing queued on a
 *             healthy device, which must stay healthy.
 * Then it queues one bad chain on a fresh device and notifies, the device
 * must say DEVICE_NEEDS_RESET after each:
 *   loop    two descriptors naming each other;
 *   long    all 8 chained in a ring: longer than the queue;
 *   index   the avail index 100 ahead of a queue of 8;
 *   addr    a descriptor outside its RAM (IPA 0x1000);
 *   victim  a descriptor at victim_ipa;
 *   mmio    a descriptor on the distributor (IPA 0x08000000), emulated MMIO;
 *   huge    a descriptor of 0xffffffff bytes;
 * the seven again and again until `ms` (0: once) have passed since it
 * started ("vioattack: chains: <n> rounds"). Last (net only), stall: a
 * receive queue but no buffer ever posted, `requests` (32) echo requests one
 * at a time and `stall_ms` (100) of waiting: the replies fill its rx ring
 * and the I/O VM drops the rest (its rx_drops).
 * Then it powers off.
 * Params: dev, virtio_base / virtio_irq or virtio_blk_base (from the io: or
 * disk: section), ms, victim_ipa, resets, flood, requests, stall_ms,
 * peer_mac.
 * Lines: "vioattack: <case>: status 0x.. (needs reset)", "vioattack: ring:
 * ready 0", "vioattack: features: status 0x.. 0x.., ready 0 0 0",
 * "vioattack: regs: <n> words, <m> aborts of <k> narrow accesses, status
 * 0x..", "vioattack: resets: <n>, then a request served (status 0x..)",
 * "vioattack: flood: <n> notifications, status 0x..", "vioattack: stall: <n>
 * requests, no receive buffer, status 0x..", "vioattack: PASS (<dev>)" or
 * "vioattack: FAIL (<why>)".
 */
#include "echo.h"
#include "exc.h"
#include "runtime.h"
#include "virtio_mmio.h"

#define NUM    8u
#define F_NEXT 1u
#define F_WR   2u
#define ST_UP  (VIRTIO_ST_ACK | VIRTIO_ST_DRIVER | VIRTIO_ST_FEATURES_OK)

#define fail(...) rt_fail("vioattack", __VA_ARGS__)

struct desc {
	u64 addr;
	u32 len;
	u16 flags;
	u16 next;
};

static uptr base;
static bool blk;
static u32 rq; /* the request queue: net's transmit (1), blk's (0) */
static struct desc *descs;
static volatile u16 *avail;
static u8 *buf;
static volatile u32 aborts;

static void wr(u32 off, u32 val)
{
	mmio_write32(base + off, val);
}

static u32 rd(u32 off)
{
	return mmio_read32(base + off);
}

static void wr64(u32 off, u64 val)
{
	wr(off, (u32)val);
	wr(off + 4, (u32)(val >> 32));
}

static u8 *ram(void)
{
	return (u8 *)ALIGN_UP(rt_free_start(), 4096);
}

static volatile u16 *used_idx(void)
{
	return (volatile u16 *)((u8 *)descs + 2 * 4096 + 2);
}

/* Queue q of NUM descriptors at mem (desc), mem + 4 KiB (avail), mem + 8 KiB (used). */
static void queue(u32 q, u8 *mem)
{
	wr(VMMIO_QUEUE_SEL, q);
	wr(VMMIO_QUEUE_NUM, NUM);
	wr64(VMMIO_QUEUE_DESC, (uptr)mem);
	wr64(VMMIO_QUEUE_DRIVER, (uptr)(mem + 4096));
	wr64(VMMIO_QUEUE_DEVICE, (uptr)(mem + 2 * 4096));
	wr(VMMIO_QUEUE_READY, 1);
}

/* Reset, then ACKNOWLEDGE | DRIVER and the driver's feature words 0 and 1. */
static void negotiate(u32 lo, u32 hi)
{
	wr(VMMIO_STATUS, 0);
	wr(VMMIO_STATUS, VIRTIO_ST_ACK | VIRTIO_ST_DRIVER);
	wr(VMMIO_DRV_FEAT_SEL, 0);
	wr(VMMIO_DRV_FEATURES, lo);
	wr(VMMIO_DRV_FEAT_SEL, 1);
	wr(VMMIO_DRV_FEATURES, hi);
	wr(VMMIO_STATUS, ST_UP);
}

/* Reset and bring the request queue up, and with rx an empty receive queue
 * (0) of the network device; false if the device refuses. */
static bool setup(bool rx)
{
	u8 *mem = ram();

	descs = (struct desc *)mem;
	avail = (volatile u16 *)(mem + 4096);
	buf = mem + 3 * 4096;
	memset(mem, 0, 7 * 4096);
	negotiate(0, 1); /* VERSION_1 */
	if (!(rd(VMMIO_STATUS) & VIRTIO_ST_FEATURES_OK))
		return false;
	queue(rq, mem);
	if (rd(VMMIO_QUEUE_READY) != 1)
		return false;
	if (rx)
		queue(0, mem + 4 * 4096);
	wr(VMMIO_STATUS, ST_UP | VIRTIO_ST_DRIVER_OK);
	return rd(VMMIO_STATUS) == (ST_UP | VIRTIO_ST_DRIVER_OK);
}

static void chain(u32 i, u64 addr, u32 len, u16 flags, u16 next)
{
	descs[i] = (struct desc){ .addr = addr, .len = len, .flags = flags, .next = next };
}

/* Puts head in the avail ring's entry idx - 1, publishes avail index idx
 * and notifies the request queue. */
static void offer(u16 head, u16 idx)
{
	avail[2 + (u16)(idx - 1) % NUM] = head;
	dsb_ish();
	avail[1] = idx;
	dsb_ish();
	wr(VMMIO_QUEUE_NOTIFY, rq);
}

static const char *const chains[] = { "loop", "long", "index", "addr", "victim", "mmio", "huge" };

/* Queues bad chain `name` on a fresh device; the device must stop. */
static int bad_chain(const char *name, bool say)
{
	u64 victim = param_u64("victim_ipa", 0x48000000);
	u32 st;

	if (!setup(false))
		return fail("%s: the device was not set up (status 0x%x)", name, rd(VMMIO_STATUS));
	if (!strcmp(name, "loop")) {
		chain(0, (uptr)buf, 64, F_NEXT, 1);
		chain(1, (uptr)buf, 64, F_NEXT, 0);
		offer(0, 1);
	} else if (!strcmp(name, "long")) {
		for (u16 i = 0; i < NUM; i++)
			chain(i, (uptr)buf, 16, F_NEXT, (u16)((i + 1) % NUM));
		offer(3, 1);
	} else if (!strcmp(name, "index")) {
		chain(0, (uptr)buf, 64, 0, 0);
		offer(0, 100);
	} else if (!strcmp(name, "huge")) {
		chain(0, (uptr)buf, 0xffffffffu, 0, 0);
		offer(0, 1);
	} else {
		u64 at = !strcmp(name, "addr")     ? 0x1000
		         : !strcmp(name, "victim") ? victim
		                                   : 0x08000000;

		/* blk: a header there, then a status byte in its RAM */
		chain(0, at, blk ? 16 : 64, blk ? F_NEXT : 0, 1);
		chain(1, (uptr)buf, 1, F_WR, 0);
		offer(0, 1);
	}
	st = rd(VMMIO_STATUS);
	wr(VMMIO_IRQ_ACK, rd(VMMIO_IRQ_STATUS));
	if (say)
		printf("vioattack: %s: status 0x%x%s\n", name, st,
		       (st & VIRTIO_ST_NEEDS_RESET) ? " (needs reset)" : "");
	return (st & VIRTIO_ST_NEEDS_RESET) ? 0 : fail("%s: the device did not stop", name);
}

/* Rings outside its RAM: QueueReady must stay 0. */
static int bad_ring(void)
{
	u64 victim = param_u64("victim_ipa", 0x48000000);
	u32 ready[2];
	u8 *mem = ram();

	for (u32 k = 0; k < 2; k++) {
		negotiate(0, 1);
		wr(VMMIO_QUEUE_SEL, rq);
		wr(VMMIO_QUEUE_NUM, NUM);
		wr64(VMMIO_QUEUE_DESC, k ? (uptr)mem : victim);
		wr64(VMMIO_QUEUE_DRIVER, (uptr)(mem + 4096));
		wr64(VMMIO_QUEUE_DEVICE, k ? base : (uptr)(mem + 2 * 4096));
		wr(VMMIO_QUEUE_READY, 1);
		ready[k] = rd(VMMIO_QUEUE_READY);
	}
	printf("vioattack: ring: ready %u %u\n", ready[0], ready[1]);
	return ready[0] || ready[1] ? fail("ring: a ring outside its RAM was taken") : 0;
}

/* Malformed feature negotiation and queue sizes. */
static int bad_features(void)
{
	static const u32 sizes[] = { 3, 512, 0 };
	u32 st[2], ready[3];

	negotiate(~0u, ~0u);
	wr(VMMIO_DRV_FEAT_SEL, 2);
	wr(VMMIO_DRV_FEATURES, ~0u);
	wr(VMMIO_STATUS, ST_UP);
	st[0] = rd(VMMIO_STATUS);
	negotiate(0, 0); /* no VERSION_1 */
	st[1] = rd(VMMIO_STATUS);
	for (u32 k = 0; k < ARRAY_SIZE(sizes); k++) {
		u8 *mem = ram();

		negotiate(0, 1);
		wr(VMMIO_QUEUE_SEL, rq);
		wr(VMMIO_QUEUE_NUM, sizes[k]);
		wr64(VMMIO_QUEUE_DESC, (uptr)mem);
		wr64(VMMIO_QUEUE_DRIVER, (uptr)(mem + 4096));
		wr64(VMMIO_QUEUE_DEVICE, (uptr)(mem + 2 * 4096));
		wr(VMMIO_QUEUE_READY, 1);
		ready[k] = rd(VMMIO_QUEUE_READY);
	}
	printf("vioattack: features: status 0x%x 0x%x, ready %u %u %u\n", st[0], st[1], ready[0],
	       ready[1], ready[2]);
	if ((st[0] | st[1]) & VIRTIO_ST_FEATURES_OK)
		return fail(
		    "features: FEATURES_OK kept for features not offered or without VERSION_1");
	return ready[0] | ready[1] | ready[2] ? fail("features: a bad queue size was taken") : 0;
}

/* A refused transport access comes back as a data abort: counted, skipped. */
static u64 on_abort(u64 esr, u64 far, u64 elr, struct exc_frame *frame)
{
	(void)far;
	(void)frame;
	if (ESR_EC(esr) != 0x25)
		return 0;
	aborts++;
	return elr + 4;
}

/* A byte or halfword access (one instruction: an abort skips it). */
static void narrow_read(uptr a, bool half)
{
	u32 v;

	if (half)
		__asm__ volatile("ldrh %w0, [%1]" : "=r"(v) : "r"(a) : "memory");
	else
		__asm__ volatile("ldrb %w0, [%1]" : "=r"(v) : "r"(a) : "memory");
	(void)v;
}

static void narrow_write(uptr a, bool half)
{
	if (half)
		__asm__ volatile("strh %w0, [%1]" : : "r"(0xffffu), "r"(a) : "memory");
	else
		__asm__ volatile("strb %w0, [%1]" : : "r"(0xffu), "r"(a) : "memory");
}

/* Every word of the page written with ones and read; narrow accesses. */
static int bad_regs(void)
{
	u32 narrow = 0, st;

	wr(VMMIO_STATUS, 0);
	for (u32 off = 0; off < 4096; off += 4) {
		wr(off, ~0u);
		(void)rd(off);
	}
	wr(VMMIO_STATUS, 0);
	exc_set_sync_handler(on_abort);
	for (u32 off = 0; off < 0x100; off += 4, narrow += 4) {
		narrow_read(base + off + 1, false);
		narrow_write(base + off + 3, false);
		narrow_read(base + off + 2, true);
		narrow_write(base + off, true);
	}
	exc_set_sync_handler(NULL);
	wr(VMMIO_STATUS, 0);
	st = setup(false) ? rd(VMMIO_STATUS) : 0;
	printf("vioattack: regs: 1024 words, %u aborts of %u narrow accesses, status 0x%x\n",
	       aborts, narrow, st);
	if (!st)
		return fail("regs: the device did not come up again");
	return aborts ? 0 : fail("regs: no narrow access was refused");
}

/* One good request, served: net an echo request to the peer (header and
 * frame in one descriptor), blk a read of sector 0; false if not used in
 * 1 s or (blk) its status is not OK. */
static bool good_request(u16 idx)
{
	u64 end = timer_now() + timer_ns_to_ticks(1000000000ull);

	if (blk) {
		memset(buf, 0, 16); /* type IN, sector 0 */
		buf[1024] = 0xff;
		chain(0, (uptr)buf, 16, F_NEXT, 1);
		chain(1, (uptr)buf + 512, 512, F_NEXT | F_WR, 2);
		chain(2, (uptr)buf + 1024, 1, F_WR, 0);
	} else {
		u8 mac[ETH_ALEN], peer[ETH_ALEN];
		u32 len;

		eth_parse_mac(param_str_default("peer_mac", "02:00:00:00:00:fe"), peer);
		for (u32 i = 0; i < ETH_ALEN; i += 2) { /* the device's MAC, aligned words */
			u32 w = rd(VMMIO_CONFIG + (i & ~3u));

			mac[i] = (u8)(w >> (8 * (i & 3)));
			mac[i + 1] = (u8)(w >> (8 * ((i & 3) + 1)));
		}
		len = echo_build(buf + 12, peer, mac, ECHO_K_REQ, idx, 200, 7);
		memset(buf, 0, 12); /* virtio_net_hdr: nothing asked */
		chain(0, (uptr)buf, 12 + len, 0, 0);
	}
	offer(0, (u16)(idx + 1));
	while (*used_idx() != (u16)(idx + 1))
		if (timer_now() > end)
			return false;
	return !blk || buf[1024] == 0;
}

static int reset_storm(u32 n)
{
	u32 st;

	for (u32 i = 0; i < n; i++) {
		if (!setup(false))
			return fail("resets: set-up %u refused (status 0x%x)", i, rd(VMMIO_STATUS));
		wr(VMMIO_STATUS, 0);
	}
	if (!setup(false) || !good_request(0))
		return fail("resets: no request served after %u resets (status 0x%x)", n,
		            rd(VMMIO_STATUS));
	st = rd(VMMIO_STATUS);
	printf("vioattack: resets: %u, then a request served (status 0x%x)\n", n, st);
	return 0;
}

/* Sends n echo requests one at a time, each once the previous is used;
 * never posts a receive buffer. */
static int stall(u32 n, u64 ms)
{
	u32 st;

	for (u32 i = 0; i < n; i++)
		if (!good_request((u16)i))
			return fail("stall: request %u not taken", i);
	timer_delay_ms(ms);
	st = rd(VMMIO_STATUS);
	printf("vioattack: stall: %u requests, no receive buffer, status 0x%x\n", n, st);
	return (st & VIRTIO_ST_NEEDS_RESET) ? fail("stall: the device stopped") : 0;
}

int main(const char *params)
{
	u64 flood = param_u64("flood", 100000), end;
	u32 rounds = 0, st;

	(void)params;
	blk = !strcmp(param_str_default("dev", "net"), "blk");
	rq = blk ? 0 : 1;
	base = (uptr)param_u64(blk ? "virtio_blk_base" : "virtio_base", 0);
	if (!base || rd(VMMIO_MAGIC) != VMMIO_MAGIC_VALUE || rd(VMMIO_VERSION) != 2 ||
	    rd(VMMIO_DEVICE_ID) != (blk ? VIRTIO_ID_BLOCK : VIRTIO_ID_NET))
		return fail("no virtio-mmio %s device at 0x%lx", blk ? "block" : "network",
		            (u64)base);
	end = timer_now() + timer_ns_to_ticks(param_u64("ms", 0) * 1000000ull);
	if (bad_ring() || bad_features() || bad_regs() ||
	    reset_storm((u32)param_u64("resets", 1000)))
		return 1;
	if (!setup(false))
		return fail("flood: the device was not set up");
	for (u64 i = 0; i < flood; i++)
		wr(VMMIO_QUEUE_NOTIFY, rq);
	st = rd(VMMIO_STATUS);
	printf("vioattack: flood: %lu notifications, status 0x%x\n", flood, st);
	if (st & VIRTIO_ST_NEEDS_RESET)
		return fail("flood: a notification with nothing queued stopped the device");
	do {
		for (u32 i = 0; i < ARRAY_SIZE(chains); i++)
			if (bad_chain(chains[i], !rounds))
				return 1;
		rounds++;
	} while (timer_now() < end);
	printf("vioattack: chains: %u rounds\n", rounds);
	if (!blk) {
		if (!setup(true))
			return fail("stall: the device was not set up");
		if (stall((u32)param_u64("requests", 32), param_u64("stall_ms", 100)))
			return 1;
	}
	wr(VMMIO_STATUS, 0);
	printf("vioattack: PASS (%s)\n", blk ? "blk" : "net");
	return 0;
}
