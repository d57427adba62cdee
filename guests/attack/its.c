// SPDX-License-Identifier: Apache-2.0
/*
 * attack mode `its` (attack.c): a VM that owns an edu turns its virtual ITS
 * against the VM beside it (issue #41 item 5; tests/qemu/test_attack.py).
 *
 * vCPU 0 sets its ITS up as a guest should (LPI tables, device and
 * collection tables, a 4 KiB queue; its edu's DeviceID with 4 events, event
 * 0 -> LPI 8197 on vCPU 0, event 1 -> LPI 8198 on vCPU 1) and its edu's MSI
 * must arrive. Then each pass, until the time is up:
 *  - foreign device IDs (the victim's 8 or 16, 0, 0xffff, a random one):
 *    MAPD, MAPTI, INT; then MAPD V=0 and DISCARD on the victim's;
 *  - 8 seeded malformed commands (random words, random opcodes);
 *  - the command queue, its device's ITT and GITS_BASER0/1 at addresses
 *    outside its RAM (past its end; 0x48000000 and 0x48100000, where the
 *    attack suite's ITS tests put the victim's RAM and pattern by physical
 *    address; the ECAM, the doorbell page, 2 GiB, 4 GiB, 2^47): the queue
 *    and the ITT must be refused (the ITS stalls);
 *  - a flood of 127 commands (INT, INV, INVALL, SYNC) on its own device;
 *  - its edu's MSI for unmapped events (3, 0xffff, and 0 after a DISCARD).
 * vCPU 1 gives its redistributor LPI tables outside its RAM, at the
 * victim's physical addresses (PROPBASER 0x48000000, PENDBASER
 * 0x48100000), then writes random event IDs to
 * GITS_TRANSLATER; vCPUs 2-3 access the ITS frame with seeded garbage (1-8
 * bytes, read or write, anywhere but CTLR, CBASER and CWRITER).
 * A refused case that ran, a set-up that failed or an own MSI that did not
 * arrive is a violation. Its report line gives the counter's time (ms)
 * from the end of its set-up until the end of the attack.
 */
#include "attack.h"
#include "edu.h"
#include "gits.h"
#include "runtime.h"

#define LPI0      8197u /* event 0, vCPU 0 */
#define LPI1      8198u /* event 1, vCPU 1 */
#define LPI_OTHER 8199u /* the foreign device IDs' event 0 */
#define WAIT_NS   (20 * NSEC_PER_MSEC)

static u8 prop[8192] __attribute__((aligned(4096)));
static u8 pend[8192] __attribute__((aligned(65536)));
static u8 devtab[4096] __attribute__((aligned(65536)));
static u8 colltab[4096] __attribute__((aligned(65536)));
static u8 itt[256] __attribute__((aligned(256)));
static u8 itt_other[256] __attribute__((aligned(256)));
static u64 cmdq[4096 / 8] __attribute__((aligned(4096)));
static struct gits its = { .base = GITS_BASE_DEFAULT, .queue = cmdq, .bytes = sizeof(cmdq) };
static u32 own_dev;
static uptr edu_cfg, edu_bar;
static volatile u32 ready; /* vCPU 0's set-up done (1) or failed (2) */
static volatile u64 own_lpis, other_lpis;
static u64 stalls, msis, translater, garbage, baser0, baser1;
static bool tables_out; /* vCPU 1's */
static u64 its_from;    /* the counter when its set-up was done */

/* IPAs outside its RAM (0x40000000-0x40ffffff) */
static const u64 outside[] = { 0x41000000, 0x48000000, 0x48100000,  0x3f000000,
	                       0x08090000, 0x80000000, 0x100000000, 0x7ffffff00000ull };

static void lpi_irq(u32 intid)
{
	if (intid == LPI0 || intid == LPI1)
		own_lpis++;
	else
		other_lpis++;
}

static bool lpi_came(void *arg)
{
	return own_lpis >= *(u64 *)arg;
}

static u64 w0(u32 op, u32 dev)
{
	return op | (u64)dev << 32;
}

/* the queue run; a stall is counted and the queue reset. True: it ran. */
static bool run_queue(void)
{
	bool ran = gits_kick(&its, WAIT_NS);

	if (!ran) {
		stalls++;
		gits_queue_at(&its, (uptr)cmdq);
	}
	return ran;
}

static bool setup(void)
{
	u64 want = 1;

	edu_cfg = gits_edu_find(0x3f000000, 0, &own_dev);
	if (!edu_cfg)
		return false;
	prop[LPI0 - 8192] = prop[LPI1 - 8192] = prop[LPI_OTHER - 8192] = 0xa0 | 1;
	gits_lpis_on((uptr)prop, 14, (uptr)pend);
	baser0 = mmio_read64(its.base + GITS_BASER);
	baser1 = mmio_read64(its.base + GITS_BASER + 8);
	mmio_write64(its.base + GITS_BASER, GITS_VALID | baser0 | (uptr)devtab);
	if (((baser1 >> 56) & 7) == 4) /* a collection table to give */
		mmio_write64(its.base + GITS_BASER + 8, GITS_VALID | baser1 | (uptr)colltab);
	gits_queue_at(&its, (uptr)cmdq);
	irq_register_lpi(lpi_irq);
	gits_cmd(&its, w0(GITS_MAPD, own_dev), 1, GITS_VALID | (uptr)itt, 0);
	gits_cmd(&its, GITS_MAPC, 0, GITS_VALID | 0 << 16 | 0, 0); /* collection 0 -> vCPU 0 */
	gits_cmd(&its, GITS_MAPC, 0, GITS_VALID | 1 << 16 | 1, 0); /* collection 1 -> vCPU 1 */
	gits_cmd(&its, w0(GITS_MAPTI, own_dev), 0 | (u64)LPI0 << 32, 0, 0);
	gits_cmd(&its, w0(GITS_MAPTI, own_dev), 1 | (u64)LPI1 << 32, 1, 0);
	gits_cmd(&its, GITS_SYNC, 0, 0, 0);
	if (!gits_kick(&its, WAIT_NS))
		return false;
	edu_bar = gits_edu_msi(edu_cfg, its.base + GITS_TRANSLATER, 0);
	if (!edu_bar)
		return false;
	mmio_write32(edu_bar + EDU_IRQRAISE, 1);
	timer_wait_until(lpi_came, &want, WAIT_NS);
	mmio_write32(edu_bar + EDU_IRQACK, 1);
	printf("attack: its devid=%u own msi lpis=%lu\n", own_dev, own_lpis);
	return own_lpis == 1;
}

static void foreign_ids(u64 *st)
{
	u32 victim = own_dev == 8 ? 16 : 8;
	const u32 ids[] = { victim, 0, 0xffff, (u32)rnd(st) & 0xffff };

	for (u32 i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (ids[i] == own_dev)
			continue;
		gits_cmd(&its, w0(GITS_MAPD, ids[i]), 0, GITS_VALID | (uptr)itt_other, 0);
		gits_cmd(&its, w0(GITS_MAPTI, ids[i]), 0 | (u64)LPI_OTHER << 32, 0, 0);
		gits_cmd(&its, w0(GITS_INT, ids[i]), 0, 0, 0);
		run_queue();
	}
	gits_cmd(&its, w0(GITS_DISCARD, victim), 0, 0, 0);
	gits_cmd(&its, w0(GITS_MAPD, victim), 0, 0, 0); /* V=0: unmap */
	run_queue();
}

static void malformed(u64 *st)
{
	for (u32 i = 0; i < 8; i++) {
		u64 d0 = rnd(st);

		/* not its own device: it must keep working */
		if ((u32)(d0 >> 32) == own_dev)
			d0 ^= 1ull << 40;
		gits_cmd(&its, d0, rnd(st), rnd(st), rnd(st));
	}
	run_queue();
}

/* each must be refused; a violation when it ran */
static void tables_outside(void)
{
	for (u32 i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		u64 a = outside[i];

		gits_queue_at(&its, a);
		gits_cmd(&its, GITS_SYNC, 0, 0, 0);
		if (run_queue())
			extra[0]++;
		gits_queue_at(&its, (uptr)cmdq);
		gits_cmd(&its, w0(GITS_MAPD, own_dev), 1, GITS_VALID | a, 0);
		if (run_queue())
			extra[0]++;
		mmio_write32(its.base + GITS_CTLR, 0);
		mmio_write64(its.base + GITS_BASER, GITS_VALID | baser0 | a);
		mmio_write64(its.base + GITS_BASER + 8, GITS_VALID | baser1 | a);
		mmio_write64(its.base + GITS_BASER, GITS_VALID | baser0 | (uptr)devtab);
		mmio_write64(its.base + GITS_BASER + 8, GITS_VALID | baser1 | (uptr)colltab);
		mmio_write32(its.base + GITS_CTLR, 1);
	}
	/* its own device as it was: the MAPD refused above changed nothing */
	gits_cmd(&its, w0(GITS_INT, own_dev), 0, 0, 0);
	run_queue();
}

static void flood(void)
{
	for (u32 i = 0; i < 4096 / 32 - 1; i++) {
		static const u32 ops[] = { GITS_INT, GITS_INV, GITS_SYNC, GITS_INVALL };
		u32 op = ops[i % 4];

		gits_cmd(&its, w0(op, op == GITS_INVALL || op == GITS_SYNC ? 0 : own_dev), 0, 0, 0);
	}
	run_queue();
}

static void unmapped_msis(void)
{
	static const u32 events[] = { 3, 0xffff };

	for (u32 i = 0; i < sizeof(events) / sizeof(events[0]); i++, msis++) {
		gits_edu_msi_data(edu_cfg, events[i]);
		mmio_write32(edu_bar + EDU_IRQRAISE, 1);
		mmio_write32(edu_bar + EDU_IRQACK, 1);
	}
	gits_edu_msi_data(edu_cfg, 0);
	gits_cmd(&its, w0(GITS_DISCARD, own_dev), 0, 0, 0);
	run_queue();
	mmio_write32(edu_bar + EDU_IRQRAISE, 1); /* event 0, now unmapped */
	mmio_write32(edu_bar + EDU_IRQACK, 1);
	msis++;
	gits_cmd(&its, w0(GITS_MAPTI, own_dev), 0 | (u64)LPI0 << 32, 0, 0);
	run_queue();
}

static u64 run_cpu0(u64 end)
{
	static u64 st;

	if (!ready) {
		st = seed * 0x9e3779b97f4a7c15ull + 1;
		ready = setup() ? 1 : 2;
		its_from = timer_now();
		if (ready != 1)
			extra[0]++;
	}
	if (ready != 1)
		return 0;
	foreign_ids(&st);
	if (timer_now() < end)
		malformed(&st);
	if (timer_now() < end)
		tables_outside();
	if (timer_now() < end)
		flood();
	if (timer_now() < end)
		unmapped_msis();
	return 1;
}

u64 run_its(u32 cpu, u64 end)
{
	u64 st = seed * 0x9e3779b97f4a7c15ull + cpu + 1 + timer_now(), n = 0;

	irq_local_disable();
	if (cpu == 0) {
		n = run_cpu0(end);
		irq_local_enable(); /* its LPIs pending meanwhile taken */
		isb();
		return n;
	}
	while (!ready)
		cpu_relax();
	if (cpu == 1) {
		if (!tables_out) {
			tables_out = true;
			gits_lpis_on(0x48000000, 14, 0x48100000);
		}
		for (; n < 1000 && timer_now() < end; n++)
			mmio_write32(its.base + GITS_TRANSLATER, (u32)rnd(&st) >> (rnd(&st) & 31));
		translater += n;
		return n;
	}
	for (; n < 1000 && timer_now() < end; n++) {
		u64 r = rnd(&st);
		u32 size = 1u << ((r >> 1) & 3);
		u64 off = ((r >> 8) % 0x20000) & ~(u64)(size - 1);

		if (off < GITS_CTLR + 4 || (off >= GITS_CBASER && off < GITS_CWRITER + 8))
			continue; /* vCPU 0's queue */
		garbage_access(its.base + off, size, (r >> 3) & 1, rnd(&st));
	}
	atomic_add64(&garbage, n);
	return n;
}

void its_report(void)
{
	printf("attack: its stalls=%lu own_lpis=%lu other_lpis=%lu msis=%lu translater=%lu "
	       "garbage=%lu from_ms=%lu until_ms=%lu\n",
	       stalls, own_lpis, other_lpis, msis, translater, garbage,
	       timer_ticks_to_ns(its_from) / NSEC_PER_MSEC,
	       timer_ticks_to_ns(timer_now()) / NSEC_PER_MSEC);
}
