// SPDX-License-Identifier: Apache-2.0
/*
 * vioattack: a hostile client of the hypervisor's virtio-net bridge
 * (docs/io.md "VirtIO"). It drives its virtio-mmio transport with plain
 * register writes (no virtio library) and, one case after the other, sets
 * the device up (reset, VERSION_1, FEATURES_OK, the transmit queue of 8
 * descriptors in its RAM, DRIVER_OK), queues one bad chain and notifies:
 *   loop  two descriptors naming each other;
 *   long  all 8 chained in a ring: longer than the queue;
 *   index the avail index 100 ahead of a queue of 8;
 *   addr  a descriptor outside its RAM (IPA 0x1000);
 *   huge  a descriptor of 0xffffffff bytes.
 * After each the device must say DEVICE_NEEDS_RESET. Then a notification
 * flood (`flood` (100000) QueueNotify writes with nothing queued) on a
 * healthy device, which must stay healthy; then, with a receive queue but
 * no buffer ever posted, `requests` (32) echo requests to the peer
 * (peer_mac, 02:00:00:00:00:fe), one at a time, and `stall_ms` (100) of
 * waiting: the replies fill its rx ring and the I/O VM drops the rest
 * (its rx_drops); then it powers off.
 * Params: virtio_base, virtio_irq (from the io: section), flood, requests, stall_ms, peer_mac.
 * Lines: "vioattack: <case>: status 0x.. (needs reset)", "vioattack: flood:
 * <n> notifications, status 0x..", "vioattack: stall: <n> requests, no receive buffer, status
 * 0x..", "vioattack: PASS" or "vioattack: FAIL (<why>)".
 */
#include "echo.h"
#include "runtime.h"

#define R_MAGIC        0x000
#define R_VERSION      0x004
#define R_DRV_FEAT     0x020
#define R_DRV_FEAT_SEL 0x024
#define R_QUEUE_SEL    0x030
#define R_QUEUE_NUM    0x038
#define R_QUEUE_READY  0x044
#define R_QUEUE_NOTIFY 0x050
#define R_INT_ACK      0x064
#define R_STATUS       0x070
#define R_QUEUE_DESC   0x080
#define R_QUEUE_AVAIL  0x090
#define R_QUEUE_USED   0x0a0
#define ST_ACK         1u
#define ST_DRIVER      2u
#define ST_DRIVER_OK   4u
#define ST_FEATURES_OK 8u
#define ST_NEEDS_RESET 64u
#define NUM            8u
#define F_NEXT         1u

#define fail(...) rt_fail("vioattack", __VA_ARGS__)

struct desc {
	u64 addr;
	u32 len;
	u16 flags;
	u16 next;
};

static uptr base;
static struct desc *descs;
static volatile u16 *avail;
static u8 *buf;

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

/* Queue q of NUM descriptors at mem (desc), mem + 4 KiB (avail), mem + 8 KiB (used). */
static void queue(u32 q, u8 *mem)
{
	wr(R_QUEUE_SEL, q);
	wr(R_QUEUE_NUM, NUM);
	wr64(R_QUEUE_DESC, (uptr)mem);
	wr64(R_QUEUE_AVAIL, (uptr)(mem + 4096));
	wr64(R_QUEUE_USED, (uptr)(mem + 2 * 4096));
	wr(R_QUEUE_READY, 1);
}

/* Reset and bring the transmit queue (1) up, and with rx an empty receive
 * queue (0); false if the device refuses. */
static bool setup(bool rx)
{
	u8 *mem = (u8 *)ALIGN_UP(rt_free_start(), 4096);

	descs = (struct desc *)mem;
	avail = (volatile u16 *)(mem + 4096);
	buf = mem + 3 * 4096;
	memset(mem, 0, 7 * 4096);
	wr(R_STATUS, 0);
	wr(R_STATUS, ST_ACK | ST_DRIVER);
	wr(R_DRV_FEAT_SEL, 0);
	wr(R_DRV_FEAT, 0);
	wr(R_DRV_FEAT_SEL, 1);
	wr(R_DRV_FEAT, 1); /* VERSION_1 */
	wr(R_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK);
	if (!(rd(R_STATUS) & ST_FEATURES_OK))
		return false;
	queue(1, mem);
	if (rd(R_QUEUE_READY) != 1)
		return false;
	if (rx)
		queue(0, mem + 4 * 4096);
	wr(R_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
	return rd(R_STATUS) == (ST_ACK | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
}

static void chain(u32 i, u64 addr, u32 len, u16 flags, u16 next)
{
	descs[i] = (struct desc){ .addr = addr, .len = len, .flags = flags, .next = next };
}

/* Puts head in the avail ring's entry idx - 1, publishes avail index idx
 * and notifies. */
static void offer(u16 head, u16 idx)
{
	avail[2 + (u16)(idx - 1) % NUM] = head;
	dsb_ish();
	avail[1] = idx;
	dsb_ish();
	wr(R_QUEUE_NOTIFY, 1);
}

static int attack(const char *name)
{
	u32 st;

	if (!setup(false))
		return fail("%s: the device was not set up (status 0x%x)", name, rd(R_STATUS));
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
	} else if (!strcmp(name, "addr")) {
		chain(0, 0x1000, 64, 0, 0);
		offer(0, 1);
	} else {
		chain(0, (uptr)buf, 0xffffffffu, 0, 0);
		offer(0, 1);
	}
	st = rd(R_STATUS);
	wr(R_INT_ACK, rd(0x060));
	printf("vioattack: %s: status 0x%x%s\n", name, st,
	       (st & ST_NEEDS_RESET) ? " (needs reset)" : "");
	return (st & ST_NEEDS_RESET) ? 0 : fail("%s: the device did not stop", name);
}

/* Sends n echo requests one at a time (header and frame in one
 * descriptor), each once the previous is used; never posts a receive
 * buffer. */
static int stall(u32 n, u64 ms)
{
	volatile u16 *used_idx = (volatile u16 *)((u8 *)descs + 2 * 4096 + 2);
	u8 mac[ETH_ALEN], peer[ETH_ALEN];
	u64 end;
	u32 st;

	if (!eth_parse_mac(param_str_default("peer_mac", "02:00:00:00:00:fe"), peer))
		return fail("stall: bad peer_mac");
	for (u32 i = 0; i < ETH_ALEN; i += 2) { /* the device's MAC (config space), aligned words */
		u32 w = mmio_read32(base + 0x100 + (i & ~3u));

		mac[i] = (u8)(w >> (8 * (i & 3)));
		mac[i + 1] = (u8)(w >> (8 * ((i & 3) + 1)));
	}
	for (u32 i = 0; i < n; i++) {
		u32 len = echo_build(buf + 12, peer, mac, ECHO_K_REQ, i, 200, 7);

		memset(buf, 0, 12); /* virtio_net_hdr: nothing asked */
		chain(0, (uptr)buf, 12 + len, 0, 0);
		offer(0, (u16)(i + 1));
		end = timer_now() + timer_ns_to_ticks(1000000000ull);
		while (*used_idx != (u16)(i + 1))
			if (timer_now() > end)
				return fail("stall: request %u not taken", i);
	}
	timer_delay_ms(ms);
	st = rd(R_STATUS);
	printf("vioattack: stall: %u requests, no receive buffer, status 0x%x\n", n, st);
	return (st & ST_NEEDS_RESET) ? fail("stall: the device stopped") : 0;
}

int main(const char *params)
{
	static const char *const cases[] = { "loop", "long", "index", "addr", "huge" };
	u64 flood = param_u64("flood", 100000);
	u32 st;

	(void)params;
	base = (uptr)param_u64("virtio_base", 0);
	if (!base || rd(R_MAGIC) != 0x74726976u || rd(R_VERSION) != 2)
		return fail("no virtio-mmio device at 0x%lx", (u64)base);
	for (u32 i = 0; i < ARRAY_SIZE(cases); i++)
		if (attack(cases[i]))
			return 1;
	if (!setup(false))
		return fail("flood: the device was not set up");
	for (u64 i = 0; i < flood; i++)
		wr(R_QUEUE_NOTIFY, 1);
	st = rd(R_STATUS);
	printf("vioattack: flood: %lu notifications, status 0x%x\n", flood, st);
	if (st & ST_NEEDS_RESET)
		return fail("flood: a notification with nothing queued stopped the device");
	if (!setup(true))
		return fail("stall: the device was not set up");
	if (stall((u32)param_u64("requests", 32), param_u64("stall_ms", 100)))
		return 1;
	wr(R_STATUS, 0);
	printf("vioattack: PASS\n");
	return 0;
}
