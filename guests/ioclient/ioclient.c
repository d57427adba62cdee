// SPDX-License-Identifier: Apache-2.0
/*
 * ioclient: a client of the shared I/O device (docs/io.md) that exchanges
 * frames with a peer outside the machine through the I/O VM.
 *
 * Frames: lib/include/echo.h (the peer: bulkhead/run/netpeer.py).
 *
 * mode=echo (default): sends `frames` requests of `size` data bytes to
 *   peer_mac with at most `window` outstanding, checks every reply (its own
 *   checksum, the peer's checksum of the request, the transformed data).
 * mode=flood: sends `frames` sink frames as fast as the ring takes them (waiting 20 us in WFI
 *   when it is full, unless poll=1); frames=0: no limit; until_ms (0: none): stops after this
 *   much time (the counter's: host time without -icount).
 * mode=hostile: `rounds` (1000) rounds, each writing its whole tx ring with malformed slots (bad
 *   flags, lengths, indices) and junk into every word of its control page it may write and also
 *   those it may not (the I/O VM's), then ringing the doorbell `doorbells` (50) times; it never
 *   reads its rx ring (the I/O VM must drop and count what it delivers there). Then it marks
 *   itself done. Lines: "ioclient: hostile: <n> slots, <m> doorbells".
 * mode=stall: sends `frames` echo requests and never reads its rx ring, so the replies fill it
 *   and the rest are dropped and counted by the I/O VM; waits `stall_ms` (200) more, then done.
 *   Line: "ioclient: stalled: <n> requests, rx ring never read".
 * mode=blk, blkflood, blkdev: the shared disk's block ring (blkclient.c).
 * mode=bad: first writes malformed slots into its transmit ring (a bad flag,
 *   lengths 0, 1600 and 5000, an index out of range, a runt frame, a forged
 *   source MAC), then runs echo.
 * wait_go (0): 1 waits (up to timeout_ms) for the peer's "go" frame (kind 4, broadcast) before
 *   the exchange, so that a test can start it while other clients are busy.
 * Params: io_shm, io_queue, io_mac (from the io: section), mode, frames (20),
 * size (200), window (io_queue), peer_mac (02:00:00:00:00:fe), timeout_ms (30000), poll (0:
 * wait for replies in WFI; 1: busy-wait, as the benchmark does).
 * Lines: "ioclient: <mode>: mac <mac> queue <q>", echo: "ioclient: result frames=.. elapsed_us=..
 * fps=.. rtt_min_us=.. rtt_mean_us=.. rtt_max_us=.." (virtual counter time), the I/O VM's counters
 * for it from the control page "ioclient: seen by the I/O VM: tx=.. rx=.. rx_drops=.. malformed=..
 * runt=.. spoofed=..", "ioclient: PASS (<n> frames sent, <m> replies verified both ways)" or
 * "ioclient: FAIL (<why>)".
 */
#include "blkclient.h"
#include "echo.h"
#include "ioring.h"
#include "runtime.h"

static struct ioring tx, rx;
static struct ioring_ctrl *ctrl;
static u8 mac[ETH_ALEN], peer[ETH_ALEN];
static u8 fbuf[ETH_FRAME_MAX];
static u32 shm, seed;
static volatile u32 rings;

/* Reports the failure, tells the I/O VM this client is done, returns 1. */
#define fail(...) (done(), rt_fail("ioclient", __VA_ARGS__))

static void done(void)
{
	if (ctrl)
		ioring_store_release(&ctrl->client_state, IORING_STATE_DONE);
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

static bool port_can_send(void)
{
	return ioring_can_send(&tx);
}

static int port_send(const void *f, u32 len)
{
	return ioring_send(&tx, f, len);
}

static int port_recv(void *buf, u32 cap)
{
	return ioring_recv(&rx, buf, cap, NULL);
}

static bool poll_mode;
static u64 kicks_skipped;

/* After publishing frames: ring the I/O VM unless it said it polls. */
static void port_kick(void)
{
	if (ioring_peer_polling(&ctrl->io_polling))
		kicks_skipped++;
	else
		bh_doorbell(shm);
}

static void port_wait(u64 max_ns)
{
	if (poll_mode)
		timer_delay_us(5); /* busy: no WFI, so no icount idle warp in the timings */
	else
		timer_wait_until(rx_ready, NULL, max_ns);
}

/* Waits for the peer's go frame; any other frame before it is a failure. */
static int wait_go(u64 timeout_ms)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(timeout_ms * 1000000ull);
	const struct eth_hdr *h = (const struct eth_hdr *)fbuf;
	int n;

	printf("ioclient: waiting for the peer's go\n");
	while ((n = ioring_recv(&rx, fbuf, sizeof(fbuf), NULL)) == 0) {
		if (timer_now() > deadline)
			return fail("no go frame from the peer after %lu ms", timeout_ms);
		port_wait(1000000);
	}
	if (n < (int)ECHO_HLEN || h->type[0] != ECHO_ETHERTYPE >> 8 ||
	    h->type[1] != (ECHO_ETHERTYPE & 0xff) || fbuf[ETH_HLEN] != ECHO_K_GO)
		return fail("expected the peer's go frame, got %d bytes", n);
	printf("ioclient: go\n");
	return 0;
}

/* The I/O VM publishes a client's counters after the batch of frames it
 * delivered, so a client that took the last reply from its ring may see
 * them a batch behind: wait (at most 100 ms) until they count every reply. */
static void wait_published(u32 replies)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(100 * 1000000ull);

	while (READ_ONCE(ctrl->st_rx_frames) < replies && timer_now() < deadline)
		cpu_relax();
}

static int run_echo(u32 frames, u32 size, u32 window, u64 timeout_ms)
{
	static const struct echo_port port = { port_can_send, port_send, port_recv, port_kick,
		                               port_wait };
	struct echo_result res;
	const char *bad = echo_run(&port, peer, mac, seed, frames, size, window, timeout_ms, &res);

	if (bad)
		return fail("%s", bad);
	echo_print_result("ioclient", &res);
	printf("ioclient: PASS (%u frames sent, %u replies verified both ways)\n", res.sent,
	       res.got);
	return 0;
}

static bool tx_space(void *arg)
{
	(void)arg;
	return ioring_can_send(&tx);
}

static int run_flood(u32 frames, u32 size, u64 until_ms)
{
	u64 end = until_ms ? timer_now() + timer_ns_to_ticks(until_ms * 1000000ull) : 0;
	u32 sent = 0;

	while ((!frames || sent < frames) && (!end || timer_now() < end)) {
		if (!ioring_can_send(&tx)) {
			port_kick();
			if (poll_mode)
				cpu_relax();
			else
				timer_wait_until(tx_space, NULL, 20000);
			continue;
		}
		ioring_send(&tx, fbuf, echo_build(fbuf, peer, mac, ECHO_K_SINK, sent, size, seed));
		sent++;
		port_kick(); /* nothing while the I/O VM says it polls */
	}
	printf("ioclient: PASS (%u frames sent, 0 replies verified both ways)\n", sent);
	return 0;
}

/* Requests whose replies it never reads: its rx ring fills up. */
static void run_stall(u32 frames, u32 size, u64 stall_ms)
{
	u32 sent = 0;

	while (sent < frames) {
		if (!ioring_can_send(&tx)) {
			timer_wait_until(tx_space, NULL, 20000);
			continue;
		}
		ioring_send(&tx, fbuf, echo_build(fbuf, peer, mac, ECHO_K_REQ, sent, size, seed));
		sent++;
		port_kick();
	}
	timer_sleep_ns(stall_ms * NSEC_PER_MSEC);
	printf("ioclient: stalled: %u requests, rx ring never read\n", sent);
}

/* A hostile client: garbage in every slot of its tx ring and in its control
 * page, doorbell floods, and an rx ring it never reads. */
static int run_hostile(u32 rounds, u32 doorbells, u32 size)
{
	u32 len = echo_build(fbuf, peer, mac, ECHO_K_SINK, 0, size, seed), r, k, slots = 0;
	u32 *words = (u32 *)ctrl;
	u64 rang = 0;

	for (r = 0; r < rounds; r++) {
		for (k = 0; k < tx.nslots; k++, slots++) {
			u32 kind = (r * 7 + k) % 4;

			if (kind == 0)
				ioring_put_raw(&tx, 0xdeadbeef ^ r, len, tx.pos, fbuf, len);
			else if (kind == 1)
				ioring_put_raw(&tx, IORING_FULL, 0x80000000u + r, tx.pos, fbuf,
				               len);
			else if (kind == 2)
				ioring_put_raw(&tx, IORING_FULL, len, tx.pos + 1 + r, fbuf, len);
			else
				ioring_put_raw(&tx, IORING_FULL, 4, tx.pos, fbuf, len); /* runt */
		}
		/* every word of the control page, the I/O VM's included */
		for (k = 0; k < IORING_CTRL_SIZE / 4; k++)
			WRITE_ONCE(words[k], 0x5a5a0000u + r + k);
		for (k = 0; k < doorbells; k++, rang++)
			bh_doorbell(shm);
	}
	printf("ioclient: hostile: %u slots, %lu doorbells\n", slots, rang);
	return 0;
}

/* Writes a raw slot at the ring's position (bypassing ioring_send). */
static void raw_slot(u32 flag, u32 len, u32 index, const u8 *data, u32 n)
{
	ioring_put_raw(&tx, flag, len, index, data, n);
}

static int write_bad(u32 size)
{
	u32 len = echo_build(fbuf, peer, mac, ECHO_K_SINK, 0, size, seed);

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
	if (!strncmp(mode, "blk", 3))
		return blkclient_main(mode); /* the shared disk: blkclient.c */
	shm = (u32)param_u64("io_shm", ~0ull);
	poll_mode = param_u64("poll", 0) != 0;
	if (!eth_parse_mac(param_str("io_mac"), mac) ||
	    !eth_parse_mac(param_str_default("peer_mac", "02:00:00:00:00:fe"), peer))
		return fail("bad io_mac or peer_mac");
	if (size == 0 || size > ECHO_DATA_MAX || window == 0)
		return fail("size must be 1-%u, window >= 1", ECHO_DATA_MAX);
	if (bh_shmem_info(shm, &sh) != BH_OK || sh.size < ioring_region_size(q))
		return fail("no shared-memory region %u for %u slots", shm, q);
	seed = echo_fnv((const u8 *)vm, (u32)strlen(vm));
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
	ioring_set_polling(&ctrl->client_polling, poll_mode);
	ioring_store_release(&ctrl->client_state, IORING_STATE_READY);
	if (param_u64("wait_go", 0) && wait_go(timeout_ms))
		return 1;
	if (!strcmp(mode, "bad")) {
		if (write_bad(size))
			return 1;
		mode = "echo";
	}
	if (!strcmp(mode, "echo")) {
		if (run_echo(frames, size, window, timeout_ms))
			return 1;
		wait_published(frames);
	} else if (!strcmp(mode, "flood")) {
		run_flood(frames, size, param_u64("until_ms", 0));
	} else if (!strcmp(mode, "hostile")) {
		run_hostile((u32)param_u64("rounds", 1000), (u32)param_u64("doorbells", 50), size);
	} else if (!strcmp(mode, "stall")) {
		run_stall(frames, size, param_u64("stall_ms", 200));
	} else {
		return fail("unknown mode '%s' (echo, flood, bad, hostile, stall)", mode);
	}
	if (!strcmp(mode, "hostile")) { /* its control page is garbage */
		ioring_store_release(&ctrl->client_state, IORING_STATE_DONE);
		return 0;
	}
	printf("ioclient: seen by the I/O VM: tx=%lu rx=%lu rx_drops=%lu malformed=%lu runt=%lu "
	       "spoofed=%lu\n",
	       READ_ONCE(ctrl->st_tx_frames), READ_ONCE(ctrl->st_rx_frames),
	       READ_ONCE(ctrl->st_rx_drops), READ_ONCE(ctrl->st_malformed),
	       READ_ONCE(ctrl->st_runt), READ_ONCE(ctrl->st_spoofed));
	ioring_store_release(&ctrl->client_state, IORING_STATE_DONE);
	return 0;
}
