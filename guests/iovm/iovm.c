// SPDX-License-Identifier: Apache-2.0
/*
 * iovm: the I/O VM of shared I/O (docs/io.md). Owns a network device
 * (netdev.h: virtio-net over virtio-mmio, or the ZynqMP's Cadence GEM) and
 * shares it among client VMs through per-client frame rings (ioring.h).
 *
 * Transmit (client -> network): work-conserving weighted round-robin by
 * frame (iosched.h): whenever the device takes a frame, the next client in
 * turn with something in its ring gets it (io<i>_weight frames per turn,
 * optional rate cap io<i>_cap frames/s); an idle client's share goes to the
 * others. A slot is copied once, straight into the device's transmit buffer,
 * and checked there. A client's garbage (malformed slot, runt, forged source
 * MAC) costs it its own turn and is counted.
 * io_rate: the capacity C (frames/s) the guarantees are stated for: while
 * anyone is backlogged the I/O VM must serve at least C frames/s; a service
 * that starts more than one frame time (1 / C) after the previous one's
 * schedule is counted as an overrun.
 * Receive (network -> clients): each frame goes to the client whose MAC is
 * its destination (broadcast: every client), copied once into its ring; a
 * full client ring drops it (counted for that client only); each client is
 * rung at most once per batch, and not while it says it polls.
 * Measured per client while it is backlogged (a frame visible when the I/O
 * VM looks): frames served, the longest wait from the end of its previous
 * service (or the start of its backlog) to its next service (delta), the
 * rate it got (alpha) and its share of the frames served meanwhile.
 *
 * Params (written by `bulkhead build` from the io: section): io_clients,
 * io_driver (virtio | gem), io_base, io_irq, io_rate, io_mac, io<i>_{vm,shm,queue,weight,mac,cap};
 * stats_ms (1000): every this much virtual time (0: never) and at the end, one line per client
 * "iovm: stats client=<vm> tx=.. tx_bytes=.. rx=.. rx_bytes=.. rx_drops=.. malformed=.. runt=..
 * spoofed=.. alpha_fps=.. delta_us=.. overruns=.." (one BH_HC_CONSOLE_WRITE each; what `bulkhead
 * run --stats` shows; alpha and delta so far, while backlogged);
 * bad_rx (0): 1 writes four malformed slots (a bad flag, lengths 1600 and 5000, an index out of
 * range) into client 0's rx ring before anything else, which the client must drop and count
 * (tests/qemu/test_io_linux.py); max_ms (60000): give up after this much virtual time; poll (0): 1
 * busy-waits when idle instead of sleeping in WFI (benchmark: no icount idle warps in the timings),
 * looking every poll_us (5) microseconds, with its doorbells and the device's interrupt disabled
 * and io_polling set in every control page (the clients ring no doorbell); io_poll (0, `io.poll`):
 * the same; nap_us (1000): its longest sleep when nothing is pending (a safety net: every
 * wake-up has its interrupt).
 * disk_clients without io_clients: the shared disk alone (blkserve.c, its own params); with
 * io_clients too, both (docs/io.md "One I/O VM for both"): each pass of the loop serves at most
 * one disk request (blkserve_step: the disk's own scheduler) and at most one frame, so a frame
 * time is 1 / io_rate + 1 / disk_iops in the measurements (an idle device's turn goes to the
 * other); the disk's lines as blkserve.c prints them, after
 * "iovm: both disk_requests_between_frames=.." (requests served while a client of the network was
 * backlogged).
 * mode=direct (benchmark baseline, no clients, no io: section): the device is
 * this VM's alone; it runs the echo exchange (lib/include/echo.h) itself with
 * frames (100), size (200), window (16), peer_mac, mac (02:00:00:00:00:0d).
 * Lines: "iovm: device <base> mac <mac>, <n> clients, capacity <rate> frames/s, work-conserving",
 * "iovm: ready", per client at the end four lines
 * "iovm: client <vm> tx=.. tx_bytes=.. rx=.. rx_bytes=.. rx_drops=.. doorbells_skipped=..
 * tx_doorbells=..",
 * "iovm: client <vm> malformed=.. bad_flag=.. bad_len=.. bad_index=.. runt=.. spoofed=..",
 * "iovm: client <vm> served_backlogged=.. backlog_us=.. periods=.. alpha_fps=.. share_permille=..",
 * "iovm: client <vm> delta_us=.. supply_delta_us=.. gap_slots=.. overruns=..",
 * alpha_fps: frames served / time backlogged; share_permille: of the frames served while it was
 * backlogged; delta_us: longest wait from the end of its service to its next one; supply_delta_us:
 * the smallest delta with served >= alpha * (t - delta) at every service of every backlog period,
 * alpha = its guaranteed rate (weight share of io_rate, or its cap); gap_slots: most frames of
 * other clients between two of its frames; overruns: services that started more than one frame
 * time late (at io_rate) while it was backlogged (the time guarantees assume none).
 * "iovm: device tx=.. rx=.. rx_unknown=.. rx_bad=.. tx_full=.. overruns=.. slot_ns=..
 * capacity_fps=..", "iovm: device notifies=.. notify_skipped=.. rx_notify_skipped=.. stall_us=..
 * stall_max_us=..", "iovm: cpu exits=.. irq_exits=.. doorbell_irqs=.. sleeps=.. wake_max_us=.."
 * (its physical CPU's exits and physical interrupts, BH_HC_CPU_EXITS, the doorbell interrupts it
 * took, the times it slept, the longest time from the device's interrupt to its next look at
 * the device), "iovm: cpu late_wakes=.. late_tx=.. late_rx=.." (sleeps that ran to the nap
 * and found work: a client's slot, a received frame; a lost wake-up),
 * "iovm: cpu loop_exits=.. loop_irq_exits=.. hypercalls=.." (exits and
 * interrupts from its serving loop's start to its end, when the clients are done; its
 * hypercalls there: doorbells rung, stats lines written),
 * "iovm: PASS" or "iovm: FAIL (<why>)".
 */
#include "blkserve.h"
#include "echo.h"
#include "ioring.h"
#include "iosched.h"
#include "netdev.h"
#include "runtime.h"

#define MAX_CLIENTS IOSCHED_MAX_CLIENTS
#define TX_BATCH    16 /* frames queued in the device per notification, at most */

struct client {
	const char *vm;
	u32 shm, queue, weight;
	u8 mac[ETH_ALEN];
	u64 cap_ticks;
	struct ioring_ctrl *ctrl;
	struct ioring tx, rx;
	u32 doorbell_irq;
	bool ring_peer;
	u64 doorbells_skipped; /* rx batches it was not rung for: it polled */
	u32 tx_wait_seen;      /* the client_tx_wait value it was last rung for */
	u64 tx_doorbells;      /* doorbells for room in its tx ring */
	u64 fwd, fwd_bytes;    /* frames forwarded to the device */
	u64 rx_drops, runt, spoofed;
	/* measurement while backlogged */
	bool backlogged;
	u64 backlog_start, backlog_ticks, wait_start, last_end, max_gap;
	u64 served_bl, slots_bl;
	u32 others_since, max_others;
	/* bounded-delay check: ticks per frame at the guaranteed rate alpha, frames
	 * served in the current backlog period, backlog periods, the smallest delta
	 * for which served(t) >= alpha * (t - delta) held at every service */
	u64 tpf, period_served, periods, supply_delta;
	u64 overruns; /* services that started a frame time late while it was backlogged */
};

static struct client cl[MAX_CLIENTS];
static struct iosched sched;
static u32 ncl;
static bool disk;     /* the shared disk too (blkserve.h): one request between two frames */
static u64 disk_busy; /* disk requests served between two frames while a client was backlogged */
static u64 rx_unknown, overruns, doorbell_irqs;
/* the device's interrupt: when it came (0: none since the last look at the
 * device), and the longest time from one to the next look (wake_max_us) */
static u64 dev_irq_at, wake_max;
static u64 sleeps;                              /* times the I/O VM went to sleep (WFI) */
static u64 late_wakes, late_tx, late_rx;        /* sleeps that ran to the nap with work */
static struct bh_cpu_exits loop_ex;             /* its CPU's exits in its loop (at its end) */
static u64 hypercalls;                          /* doorbells rung, stats lines written */
static u64 svc_ticks;                           /* one frame time at the capacity io_rate */
static bool busy;                               /* someone was backlogged at the last service */
static u64 busy_frames, busy_ticks, busy_since; /* the capacity measured */
/* The device's stalls: time its transmit queue stayed full while a client
 * had a frame (on QEMU: its backend had not drained the queue yet). The
 * per-client figures are measured on the device's clock, t - stall_ticks:
 * the guarantee is stated for a device that takes C frames/s. */
static u64 stall_ticks, stall_max, stall_run;

#define fail(...) rt_fail("iovm", __VA_ARGS__)

static const char *cparam(u32 i, const char *what)
{
	char key[24];

	snprintf(key, sizeof(key), "io%u_%s", i, what);
	return param_str(key);
}

static u64 cparam_u64(u32 i, const char *what, u64 def)
{
	const char *s = cparam(i, what);
	u64 v;

	return s && parse_u64(s, &v) ? v : def;
}

static void irq_doorbell(u32 intid)
{
	(void)intid; /* a wake-up only: the loop polls the rings */
	doorbell_irqs++;
}

static void irq_device(u32 intid)
{
	(void)intid;
	netdev_irq_ack();
	if (!dev_irq_at)
		dev_irq_at = timer_now();
}

static int setup_client(u32 i)
{
	struct client *c = &cl[i];
	struct bh_shmem_info sh;
	void *mem;

	c->vm = cparam(i, "vm");
	c->shm = (u32)cparam_u64(i, "shm", ~0ull);
	c->queue = (u32)cparam_u64(i, "queue", 0);
	c->weight = (u32)cparam_u64(i, "weight", 1);
	if (!c->vm || !eth_parse_mac(cparam(i, "mac"), c->mac))
		return fail("client %u: missing io%u_vm or bad io%u_mac", i, i, i);
	if (cparam_u64(i, "cap", 0))
		c->cap_ticks = timer_freq() / cparam_u64(i, "cap", 1);
	if (!c->weight)
		c->weight = 1;
	if (bh_shmem_info(c->shm, &sh) != BH_OK)
		return fail("client %s: no shared-memory region %u", c->vm, c->shm);
	if (sh.size < ioring_region_size(c->queue))
		return fail("client %s: region of %lu bytes too small for %u slots", c->vm, sh.size,
		            c->queue);
	mem = (void *)sh.ipa;
	c->ctrl = ioring_ctrl(mem);
	if (!ioring_attach(&c->tx, ioring_tx_mem(mem), c->queue) ||
	    !ioring_attach(&c->rx, ioring_rx_mem(mem, c->queue), c->queue))
		return fail("client %s: bad queue size %u", c->vm, c->queue);
	ioring_reset(&c->tx);
	ioring_reset(&c->rx);
	c->ctrl->version = IORING_VERSION;
	c->ctrl->nslots = c->queue;
	c->ctrl->slot_size = IORING_SLOT_SIZE;
	ioring_store_release(&c->ctrl->magic, IORING_CTRL_MAGIC);
	ioring_store_release(&c->ctrl->io_state, IORING_STATE_READY);
	c->doorbell_irq = sh.doorbell_irq;
	gic_doorbell_setup(c->doorbell_irq, irq_doorbell, false); /* doorbells(): when it sleeps */
	c->ring_peer = true; /* the rings are up: a VirtIO client's link with them */
	return 0;
}

/* Test hook (bad_rx=1): a hostile I/O VM's slots in client 0's rx ring. */
static void write_bad_rx(struct client *c)
{
	static const u8 junk[64] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }; /* broadcast */

	ioring_put_raw(&c->rx, 0xdeadbeef, sizeof(junk), c->rx.pos, junk, sizeof(junk));
	ioring_put_raw(&c->rx, IORING_FULL, 1600, c->rx.pos, junk, sizeof(junk));
	ioring_put_raw(&c->rx, IORING_FULL, 5000, c->rx.pos, junk, sizeof(junk));
	ioring_put_raw(&c->rx, IORING_FULL, sizeof(junk), 999, junk, sizeof(junk));
	printf("iovm: wrote 4 malformed slots into %s's rx ring\n", c->vm);
}

static u32 dev_irq; /* the device's SPI, or 0 */

/* The doorbells' and the device's interrupts, enabled once when the I/O VM
 * sleeps when idle. Its loop runs with interrupts masked (PSTATE.I) and
 * takes them only in its sleep, and nothing interrupts its work: the
 * clients ring only while its io_polling flags are clear, the device only
 * when asked to (netdev_rx_irq). Enabling and disabling them at every sleep
 * cost about ten exits with two clients (trapped distributor writes and
 * reads). With poll=1 they stay disabled: a doorbell or device interrupt
 * would only cost an exit (vgic_inject kicks no CPU for a disabled
 * interrupt). */
static void doorbells(bool on)
{
	u32 i;

	if (dev_irq)
		gic_irq_set(dev_irq, on);
	for (i = 0; i < ncl; i++)
		if (cl[i].doorbell_irq >= 32 && cl[i].doorbell_irq < 1020)
			gic_irq_set(cl[i].doorbell_irq, on);
}

/* The client's counters in its control page (ioring_ctrl.st_*). */
static void publish(struct client *c)
{
	struct ioring_ctrl *k = c->ctrl;

	WRITE_ONCE(k->st_tx_frames, c->fwd);
	WRITE_ONCE(k->st_rx_frames, c->rx.frames);
	WRITE_ONCE(k->st_rx_drops, c->rx_drops);
	WRITE_ONCE(k->st_malformed, c->tx.malformed);
	WRITE_ONCE(k->st_runt, c->runt);
	WRITE_ONCE(k->st_spoofed, c->spoofed);
}

/* network -> clients: every frame the device has (at most its queue),
 * copied once into each addressed client's ring; each client rung once for
 * the batch, unless it says it polls. */
static void deliver(void)
{
	const u8 *f;
	u32 len, i;

	while ((len = netdev_recv(&f)) != 0) {
		const struct eth_hdr *h = (const struct eth_hdr *)f;
		bool bcast = len >= ETH_HLEN && eth_is_broadcast(h->dst), hit = false;

		for (i = 0; len >= ETH_HLEN && i < ncl; i++) {
			struct client *c = &cl[i];

			if (!bcast && !eth_mac_eq(h->dst, c->mac))
				continue;
			hit = true;
			if (ioring_send(&c->rx, f, len) == 0)
				c->ring_peer = true;
			else
				c->rx_drops++;
		}
		if (!hit)
			rx_unknown++;
		netdev_rx_done();
	}
	for (i = 0; i < ncl; i++) {
		struct client *c = &cl[i];

		if (!c->ring_peer)
			continue;
		c->ring_peer = false;
		publish(c);
		if (ioring_peer_polling(&c->ctrl->client_polling))
			c->doorbells_skipped++;
		else
			hypercalls++;
		bh_doorbell(c->shm);
	}
}

/* Bit i: client i has a slot waiting in its tx ring (a frame or garbage). */
static u32 pending_mask(void)
{
	u32 m = 0, i;

	for (i = 0; i < ncl; i++)
		if (ioring_pending(&cl[i].tx))
			m |= 1u << i;
	return m;
}

static void track_backlog(u64 t, u32 pending)
{
	u32 i;

	for (i = 0; i < ncl; i++) {
		struct client *c = &cl[i];
		bool pend = pending >> i & 1;

		if (pend && !c->backlogged) {
			c->backlogged = true;
			c->backlog_start = c->wait_start = c->last_end = t;
			c->others_since = 0;
			c->period_served = 0;
			c->periods++;
		} else if (!pend && c->backlogged) {
			c->backlogged = false;
			if (c->last_end > c->backlog_start)
				c->backlog_ticks += c->last_end - c->backlog_start;
		}
	}
}

/* A service: the I/O VM is busy (someone is backlogged) from the first. */
static void account_service(u64 t)
{
	if (!busy) {
		busy = true;
		busy_since = t;
	}
	busy_frames++;
}

static void end_busy(u64 t)
{
	if (busy && t > busy_since)
		busy_ticks += t - busy_since;
	busy = false;
}

/* One frame (or one malformed slot) of client s, started at t: copied once
 * from its ring straight into the device's transmit buffer, checked there
 * (where the client can no longer change it) and queued, or dropped. */
static void serve(struct client *s, u64 t)
{
	u32 cap = 0, i;
	u8 *buf = netdev_tx_buf(&cap);
	/* at most an Ethernet frame: anything longer is a bad length */
	int n = buf ? ioring_recv(&s->tx, buf, cap < ETH_FRAME_MAX ? cap : ETH_FRAME_MAX, NULL) : 0;
	const struct eth_hdr *h = (const struct eth_hdr *)buf;
	u64 end;

	if (n > 0 && (u32)n < ETH_HLEN)
		s->runt++;
	else if (n > 0 && !eth_mac_eq(h->src, s->mac))
		s->spoofed++;
	else if (n > 0) {
		netdev_tx_commit((u32)n);
		s->fwd++;
		s->fwd_bytes += (u32)n;
	}
	publish(s);
	if (n != 0) {
		/* a slot freed: a client waiting for room is rung once per wait */
		u32 w;

		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		w = __atomic_load_n(&s->ctrl->client_tx_wait, __ATOMIC_RELAXED);
		if (w && w != s->tx_wait_seen) {
			s->tx_wait_seen = w;
			s->tx_doorbells++;
			hypercalls++;
			bh_doorbell(s->shm);
		}
	}
	end = timer_now() - stall_ticks;
	for (i = 0; i < ncl; i++) {
		struct client *c = &cl[i];

		if (!c->backlogged)
			continue;
		c->slots_bl++;
		if (c != s) {
			c->others_since++;
			continue;
		}
		if (t > c->wait_start && t - c->wait_start > c->max_gap)
			c->max_gap = t - c->wait_start;
		if (c->others_since > c->max_others)
			c->max_others = c->others_since;
		c->others_since = 0;
		if (t - c->backlog_start > c->period_served * c->tpf &&
		    t - c->backlog_start - c->period_served * c->tpf > c->supply_delta)
			c->supply_delta = t - c->backlog_start - c->period_served * c->tpf;
		c->period_served++;
		c->served_bl++;
		c->wait_start = c->last_end = end;
	}
}

static bool all_done(void)
{
	u32 i;

	for (i = 0; i < ncl; i++)
		if (ioring_load_acquire(&cl[i].ctrl->client_state) != IORING_STATE_DONE ||
		    ioring_pending(&cl[i].tx))
			return false;
	return true;
}

/* Wakes the idle loop when a client that had nothing pending (or was only
 * held back by its cap: bits in *seen) has something new, or a frame came
 * from the network. */
static bool wake_cond(void *arg)
{
	return READ_ONCE(dev_irq_at) || netdev_rx_ready() ||
	       (pending_mask() & ~*(const u32 *)arg) != 0 || (disk && blkserve_pending());
}

/* A sleep that ran to its nap (nobody was held back by a cap) and found
 * work: no interrupt woke the I/O VM for it (a lost wake-up). Which kind. */
static void late_wake(void)
{
	late_wakes++;
	late_tx += pending_mask() != 0;
	late_rx += netdev_rx_ready();
}

static bool direct_can_send(void)
{
	return netdev_can_send();
}

static int direct_send(const void *f, u32 len)
{
	return netdev_send(f, len);
}

static int direct_recv(void *buf, u32 cap)
{
	const u8 *f;
	u32 n = netdev_recv(&f);

	if (n > cap)
		n = 0; /* cannot happen: cap is a whole frame */
	if (n)
		memcpy(buf, f, n);
	netdev_rx_done();
	return (int)n;
}

static void direct_wait(u64 max_ns)
{
	(void)max_ns;
	timer_delay_us(5);
}

/* The device passed straight through to this VM, no rings: the baseline. */
static int run_direct(u64 base)
{
	static const struct echo_port port = { direct_can_send, direct_send, direct_recv, NULL,
		                               direct_wait };
	u8 mac[ETH_ALEN], me[ETH_ALEN], peer[ETH_ALEN];
	struct echo_result res;
	const char *bad;

	if (!eth_parse_mac(param_str_default("mac", "02:00:00:00:00:0d"), me) ||
	    !eth_parse_mac(param_str_default("peer_mac", "02:00:00:00:00:fe"), peer))
		return fail("bad mac or peer_mac");
	if (netdev_init(param_str("io_driver"), base, mac))
		return fail("no %s device at 0x%lx", param_str_default("io_driver", "virtio"),
		            base);
	bad = echo_run(&port, peer, me, 0x5eed, (u32)param_u64("frames", 100),
	               (u32)param_u64("size", 200), (u32)param_u64("window", 16),
	               param_u64("timeout_ms", 30000), &res);
	if (bad)
		return fail("direct: %s", bad);
	echo_print_result("iovm", &res);
	printf("iovm: PASS (direct, %u frames)\n", res.got);
	return 0;
}

/* Time c has been backlogged so far, including a backlog period still open. */
static u64 backlog_so_far(const struct client *c)
{
	u64 t = c->backlog_ticks;

	if (c->backlogged && c->last_end > c->backlog_start)
		t += c->last_end - c->backlog_start;
	return t;
}

static u64 alpha_fps(const struct client *c)
{
	u64 bl = backlog_so_far(c);

	return bl ? c->served_bl * timer_freq() / bl : 0;
}

/* One "iovm: stats" line per client, each in one console hypercall (cheap
 * enough to print while serving). */
static void print_stats(void)
{
	char line[320];
	u32 i;

	for (i = 0; i < ncl; i++) {
		const struct client *c = &cl[i];
		int n = snprintf(line, sizeof(line),
		                 "iovm: stats client=%s tx=%lu tx_bytes=%lu rx=%lu rx_bytes=%lu "
		                 "rx_drops=%lu malformed=%lu runt=%lu spoofed=%lu alpha_fps=%lu "
		                 "delta_us=%lu overruns=%lu\n",
		                 c->vm, c->fwd, c->fwd_bytes, c->rx.frames, c->rx.bytes,
		                 c->rx_drops, c->tx.malformed, c->runt, c->spoofed, alpha_fps(c),
		                 timer_ticks_to_ns(c->max_gap) / 1000, c->overruns);

		if (n > 0) {
			hypercalls++;
			bh_console_write(line, (u64)n < sizeof(line) ? (u64)n : sizeof(line) - 1);
		}
	}
}

/* loop_ex: the CPU's counters at the loop's start, then (end) the exits since. */
static void loop_exits(bool end)
{
	struct bh_cpu_exits now = { 0 };

	bh_cpu_exits(BH_CPU_SELF, &now);
	if (!end) {
		loop_ex = now;
		return;
	}
	loop_ex.exits = now.exits - loop_ex.exits;
	loop_ex.irq_exits = now.irq_exits - loop_ex.irq_exits;
}

static void report(void)
{
	const struct netdev_stats *vs = netdev_stats();
	struct bh_cpu_exits ex = { 0 };
	u32 i;

	end_busy(timer_now());
	print_stats();
	for (i = 0; i < ncl; i++) {
		struct client *c = &cl[i];
		u64 bl_ns = timer_ticks_to_ns(backlog_so_far(c));
		u64 alpha = alpha_fps(c);
		u64 share = c->slots_bl ? c->served_bl * 1000 / c->slots_bl : 0;

		printf("iovm: client %s tx=%lu tx_bytes=%lu rx=%lu rx_bytes=%lu rx_drops=%lu "
		       "doorbells_skipped=%lu tx_doorbells=%lu\n",
		       c->vm, c->fwd, c->fwd_bytes, c->rx.frames, c->rx.bytes, c->rx_drops,
		       c->doorbells_skipped, c->tx_doorbells);
		printf(
		    "iovm: client %s malformed=%lu bad_flag=%lu bad_len=%lu bad_index=%lu runt=%lu "
		    "spoofed=%lu\n",
		    c->vm, c->tx.malformed, c->tx.bad[IORING_BAD_FLAG], c->tx.bad[IORING_BAD_LEN],
		    c->tx.bad[IORING_BAD_INDEX], c->runt, c->spoofed);
		printf("iovm: client %s served_backlogged=%lu backlog_us=%lu periods=%lu "
		       "alpha_fps=%lu "
		       "share_permille=%lu\n",
		       c->vm, c->served_bl, bl_ns / 1000, c->periods, alpha, share);
		printf(
		    "iovm: client %s delta_us=%lu supply_delta_us=%lu gap_slots=%u overruns=%lu\n",
		    c->vm, timer_ticks_to_ns(c->max_gap) / 1000,
		    timer_ticks_to_ns(c->supply_delta) / 1000, c->max_others, c->overruns);
		ioring_store_release(&c->ctrl->io_state, IORING_STATE_DONE);
	}
	/* two lines: the hypervisor's console splits a line at CONSOLE_LINE_MAX (160) */
	printf("iovm: device tx=%lu rx=%lu rx_unknown=%lu rx_bad=%lu tx_full=%lu overruns=%lu "
	       "slot_ns=%lu capacity_fps=%lu\n",
	       vs->tx_frames, vs->rx_frames, rx_unknown, vs->rx_bad, vs->tx_full, overruns,
	       timer_ticks_to_ns(svc_ticks),
	       busy_ticks ? busy_frames * timer_freq() / busy_ticks : 0);
	printf("iovm: device notifies=%lu notify_skipped=%lu rx_notify_skipped=%lu stall_us=%lu "
	       "stall_max_us=%lu\n",
	       vs->tx_notifies, vs->tx_notify_skipped, vs->rx_notify_skipped,
	       timer_ticks_to_ns(stall_ticks) / 1000, timer_ticks_to_ns(stall_max) / 1000);
	bh_cpu_exits(BH_CPU_SELF, &ex);
	printf("iovm: cpu exits=%lu irq_exits=%lu doorbell_irqs=%lu sleeps=%lu wake_max_us=%lu\n",
	       ex.exits, ex.irq_exits, doorbell_irqs, sleeps, timer_ticks_to_ns(wake_max) / 1000);
	printf("iovm: cpu late_wakes=%lu late_tx=%lu late_rx=%lu\n", late_wakes, late_tx, late_rx);
	printf("iovm: cpu loop_exits=%lu loop_irq_exits=%lu hypercalls=%lu\n", loop_ex.exits,
	       loop_ex.irq_exits, hypercalls);
	if (disk) {
		printf("iovm: both disk_requests_between_frames=%lu\n", disk_busy);
		blkserve_report();
	}
}

int main(const char *params)
{
	u64 base = param_u64("io_base", 0), irq = param_u64("io_irq", 0);
	u64 rate = param_u64("io_rate", 0), max_ms = param_u64("max_ms", 60000);
	u64 stats_ticks = timer_ns_to_ticks(param_u64("stats_ms", 1000) * 1000000ull), next_stats;
	u64 t, last_t = 0, end, wsum = 0, capt[MAX_CLIENTS], deadline;
	bool was_full = false, disk_served;
	u32 w[MAX_CLIENTS], unflushed = 0;
	bool poll = param_u64("poll", 0) != 0 || param_u64("io_poll", 0) != 0;
	u64 poll_us = param_u64("poll_us", 5);
	u64 nap_ticks = timer_ns_to_ticks(param_u64("nap_us", 1000) * 1000);
	u8 mac[ETH_ALEN];
	u32 i;

	(void)params;
	if (!strcmp(param_str_default("mode", "shared"), "direct"))
		return run_direct(base);
	ncl = (u32)param_u64("io_clients", 0);
	disk = param_u64("disk_clients", 0) != 0;
	if (!ncl && disk)
		return blkserve_main(); /* the shared disk alone (docs/io.md "Shared disk") */
	if (!base || !rate || ncl == 0 || ncl > MAX_CLIENTS)
		return fail("io_base, io_rate and io_clients (1-%u) are required", MAX_CLIENTS);
	if (!bh_present())
		return fail("no hypervisor");
	/* a frame's time, plus a disk request's (1 / disk_iops) when it serves both */
	svc_ticks = timer_freq() / rate;
	if (disk && param_u64("disk_iops", 0))
		svc_ticks += timer_freq() / param_u64("disk_iops", 0);
	gic_init();
	if (disk && blkserve_setup())
		return 1;
	for (i = 0; i < ncl; i++) {
		if (setup_client(i))
			return 1;
		wsum += cl[i].weight;
		w[i] = cl[i].weight;
		capt[i] = cl[i].cap_ticks;
	}
	iosched_init(&sched, ncl, w, capt);
	if (param_u64("bad_rx", 0))
		write_bad_rx(&cl[0]);
	for (i = 0; i < ncl; i++) { /* alpha_i = w_i / W * rate, or the cap if lower */
		cl[i].tpf = wsum * svc_ticks / cl[i].weight;
		if (cl[i].cap_ticks > cl[i].tpf)
			cl[i].tpf = cl[i].cap_ticks;
	}
	if (netdev_init(param_str("io_driver"), base, mac))
		return fail("no %s device at 0x%lx", param_str_default("io_driver", "virtio"),
		            base);
	if (irq >= 32 && irq < 1020) {
		irq_register((u32)irq, irq_device);
		gic_spi_setup((u32)irq, false);
		gic_irq_disable((u32)irq); /* doorbells(): when it sleeps */
		dev_irq = (u32)irq;
	}
	printf("iovm: device 0x%lx mac %02x:%02x:%02x:%02x:%02x:%02x, %u clients, capacity %lu "
	       "frames/s, work-conserving\n",
	       base, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], ncl, rate);
	printf("iovm: ready\n");

	end = timer_now() + timer_ns_to_ticks(max_ms * 1000000ull);
	next_stats = timer_now() + stats_ticks;
	for (i = 0; i < ncl; i++)
		ioring_set_polling(&cl[i].ctrl->io_polling, true);
	loop_exits(false);
	irq_local_disable(); /* interrupts are taken in the sleep only */
	if (!poll) {
		timer_wait_arm();
		doorbells(true);
	}
	for (;;) {
		u32 pending;
		int k;

		deliver();
		disk_served = disk && blkserve_step(timer_now()); /* one request between frames */
		disk_busy += disk_served && busy;
		t = timer_now();
		if (dev_irq_at) {
			if (t - dev_irq_at > wake_max)
				wake_max = t - dev_irq_at;
			dev_irq_at = 0;
		}
		if (was_full) { /* the device took nothing since the last look */
			stall_ticks += t - last_t;
			stall_run += t - last_t;
			stall_max = stall_run > stall_max ? stall_run : stall_max;
		} else if (busy && last_t && t - last_t > svc_ticks) {
			/* the I/O VM itself looked a whole frame time late (its own
			 * work or, on QEMU, other vCPUs' time slices) */
			overruns++;
			for (i = 0; i < ncl; i++)
				cl[i].overruns += cl[i].backlogged;
		}
		if (!was_full)
			stall_run = 0;
		last_t = t;
		was_full = false;
		if (stats_ticks && t >= next_stats) {
			print_stats();
			next_stats = t + stats_ticks;
		}
		if (t > end) {
			report();
			return fail("clients not done after %lu ms", max_ms);
		}
		pending = pending_mask();
		track_backlog(t - stall_ticks, pending);
		if (pending && netdev_can_send()) {
			k = iosched_pick(&sched, pending, t);
			if (k >= 0) {
				account_service(t);
				serve(&cl[k], t - stall_ticks);
				if (++unflushed == TX_BATCH) {
					netdev_tx_flush();
					unflushed = 0;
				}
				continue;
			}
		}
		/* the device learns of a batch of frames at once */
		netdev_tx_flush();
		unflushed = 0;
		if (pending && !netdev_can_send()) {
			was_full = true; /* the device's transmit queue is full */
			cpu_relax();
			continue;
		}
		end_busy(t); /* nobody pending is allowed to send */
		if (disk_served)
			continue;
		if (!pending && all_done() && (!disk || blkserve_done()))
			break;
		if (poll) {
			timer_delay_us(poll_us);
			continue;
		}
		/* sleep until a doorbell, a frame from the network, a cap's next
		 * frame or the next stats line */
		if (disk)
			blkserve_idle(true);
		for (i = 0; i < ncl; i++)
			ioring_set_polling(&cl[i].ctrl->io_polling, false);
		netdev_rx_irq(true);
		sleeps++;
		deadline =
		    timer_now() + (pending ? iosched_next_allowed(&sched, pending, t) : nap_ticks);
		if (timer_wait_armed(wake_cond, &pending, deadline) && !pending &&
		    timer_now() >= deadline)
			late_wake();
		netdev_rx_irq(false);
		for (i = 0; i < ncl; i++)
			ioring_set_polling(&cl[i].ctrl->io_polling, true);
		if (disk)
			blkserve_idle(false);
	}
	irq_local_enable();
	loop_exits(true);
	report();
	printf("iovm: PASS\n");
	return 0;
}
