// SPDX-License-Identifier: Apache-2.0
/*
 * its: sets up its VM's virtual ITS (docs/interrupts.md "Message-signalled
 * interrupts") for its PCI function and checks that its LPI arrives, then
 * plays hostile with it. One vCPU, GICv3.
 *
 * Parameters: `devid` (8: the function's requester ID, 00:01.0: its ITS
 * DeviceID), `bdf` (devid: where its configuration space is in the ECAM;
 * behind a conventional bridge devid is the bridge's alias), `its`
 * (0x08080000, the ITS's address), `floods` (200 rounds of 127 SYNC
 * commands), `msis` (1000 writes to GITS_TRANSLATER), `reset` (0; 1: then
 * SYSTEM_RESET, after which its ITS must be as at power-on and work), `edu`
 * (0: none; n: after the deliveries, the function's own MSI n times: the
 * edu's MSI capability aimed at GITS_TRANSLATER with event 0, then n rounds
 * of raising its interrupt and waiting in WFI, interrupts masked, until the
 * LPI is pending, taking it, acknowledging it at the edu; the CPU's exits
 * meanwhile counted: none on a GICv4 with direct injection; and the time
 * from the raising write to the handler), `ecam` (0x3f000000), `bench` (0;
 * 1: set-up, INT, the edu's MSIs and stop: bench/msilat.py, which also runs
 * it without a hypervisor, where it assigns the edu's BAR0 and gives the
 * ITS a collection table), `lpi_base` (8192: the first of the VM's LPIs;
 * the toolchain gives it to a VM with `interrupts: direct`, whose LPIs are
 * physical ones), `vdevs` (1; 0: a device ID none of its functions is
 * refused, as in a direct VM, instead of the virtual-only device checks).
 *
 * Set-up: LPI configuration and pending tables (GICR_PROPBASER, PENDBASER,
 * EnableLPIs), a command queue in its RAM, then MAPD (4 events), MAPC
 * (collection 0 -> vCPU 0), MAPTI (event 0 -> LPI lpi_base + 5: 8197), SYNC. Deliveries:
 * an INT command; a CPU write of event 0 to GITS_TRANSLATER; a masked LPI
 * (configuration byte disabled, INV) that stays pending until enabled again
 * and INV'd; the function's own MSI (its MSI capability programmed with the
 * doorbell and event 0, edu told to raise its interrupt): a DMA write through
 * the SMMU to the physical ITS. A device ID that is none of its functions
 * (devid + 8): a virtual-only device of its own ITS (MAPD of 256 events,
 * event 255 -> LPI 8198), whose INT reaches this VM's handler; after it, the
 * function's own MSI still arrives (`edu`); three more fill the VM's four
 * virtual-only devices. Hostile, each of which must stall the ITS
 * (GITS_CREADR.Stalled) and leave the mappings as they were (the queue is
 * reset after each): a fifth foreign device ID (the table full), an event
 * beyond the device's 4, an LPI beyond the VM's (the next block's) and one
 * below its first, an ITT outside its RAM, a
 * command queue outside its RAM, a GICv4 command (VMAPP); 10 more foreign
 * ones (the hypervisor logs the first 8 of a VM's refusals only); then a
 * flood of commands and one of MSI writes; after all of it an INT still
 * arrives.
 *
 * Lines: "its: typer lpis=<0|1> idbits=<n> gits_typer=<hex>",
 *        "its: tables baser0=<hex> baser1=<hex> baser2=<hex>" (their
 *        read-only fields: type, entry size, page size),
 *        "its: attributes stick baser0=<0|1> cbaser=<0|1>" (the cacheability
 *        and shareability it wrote read back, as Linux's driver checks),
 *        "its: device cap <id> at <offset>",
 *        "its: lpi <intid> via <how> count=<n>",
 *        "its: virtual-only device <id> ran=<0|1> lpi <intid> count=<n>",
 *        "its: virtual-only devices filled=<0|1>",
 *        "its: refused <case> stalled=<0|1>", "its: refused again n=10 stalled=<n>",
 *        "its: flood commands=<n> drained=<0|1>",
 *        "its: msi flood writes=<n> lpis=<n>",
 *        "its: edu msis=<n> lpis=<n> exits=<n> irq_exits=<n>",
 *        "its: edu regulated throttles=<n>" (a VM with a bandwidth budget),
 *        "result bench=edumsi samples=<n> min_ns=<n> mean_ns=<x.y> max_ns=<n>",
 *        then "its: PASS" or "its: FAIL <why>"; with `reset`, "its: resetting",
 *        "its: after reset ctlr=<hex> cbaser=<hex>", "its: ignored stale
 *        ran=<0|1> stalled=<0|1>" (an INT of the first boot's event: not
 *        mapped, so ignored without a stall and no LPI), "its: PASS (reset)".
 */
#include "runtime.h"

#define GITS_CTLR       0x0000
#define GITS_TYPER      0x0008
#define GITS_CBASER     0x0080
#define GITS_CWRITER    0x0088
#define GITS_CREADR     0x0090
#define GITS_BASER0     0x0100
#define GITS_TRANSLATER 0x10040
#define GICR_CTLR       0x0000
#define GICR_PROPBASER  0x0070
#define GICR_PENDBASER  0x0078
#define VALID           (1ul << 63)
#define STALLED         1ul
/* InnerCache RaWaWb, Inner Shareable: what Linux writes to GITS_BASERn and CBASER */
#define ATTRS (7ul << 59 | 1ul << 10)
/* BASER0's type (Devices), entry size (8 bytes) and page size (64 KiB) */
#define DEVICES (1ul << 56 | 7ul << 48 | 2ul << 8)

/* the VM's LPIs are 256 from lpi_base: 8192 on, or in a direct VM its
 * block of physical LPIs (the `lpi_base` parameter) */
#define LPI       (lpi_base + 5)
#define VLPI      (lpi_base + 6) /* the virtual-only device's */
#define PRIO_ON   (0xa0 | 1)
#define QBYTES    4096u
#define WAIT_NS   (2 * NSEC_PER_SEC)
#define EDU_RAISE 0x60 /* edu BAR0: raise its interrupt (hw/misc/edu.c) */
#define EDU_ACK   0x64

static u8 prop[8192] __attribute__((aligned(4096))); /* LPIs 8192-16383 (14 ID bits) */
static u8 pend[8192] __attribute__((aligned(65536)));
static u8 devtab[4096] __attribute__((aligned(65536))); /* 64 KiB pages (GITS_BASERn.Page_Size) */
static u8 colltab[4096] __attribute__((aligned(65536)));
static u8 itt[256] __attribute__((aligned(256)));
static u8 vitt[2048] __attribute__((aligned(256))); /* 256 events of 8 bytes */
static u64 cmdq[QBYTES / 8] __attribute__((aligned(4096)));
static u32 cw;
static uptr its;
static u32 devid;
static u32 lpi_base;
static volatile u32 lpis, last_lpi;
static volatile u64 lpi_at; /* the counter when the handler last ran */

static void lpi_irq(u32 intid)
{
	lpi_at = timer_now();
	last_lpi = intid;
	lpis++;
}

static void cmd(u64 d0, u64 d1, u64 d2, u64 d3)
{
	u64 *c = &cmdq[cw / 8];

	c[0] = d0;
	c[1] = d1;
	c[2] = d2;
	c[3] = d3;
	cw = (cw + 32) % QBYTES;
}

static bool drained(void *arg)
{
	u64 r = mmio_read64(its + GITS_CREADR);

	(void)arg;
	return (r & STALLED) || r == cw;
}

/* CWRITER written; true when every command ran, false when the ITS stalled */
static bool kick(void)
{
	dsb_ish();
	mmio_write64(its + GITS_CWRITER, cw);
	timer_wait_until(drained, NULL, WAIT_NS);
	return mmio_read64(its + GITS_CREADR) == cw;
}

/* the ITS off, its queue at base (from the start), on again */
static void queue_at(u64 base)
{
	mmio_write32(its + GITS_CTLR, 0);
	mmio_write64(its + GITS_CBASER, VALID | ATTRS | base);
	cw = 0;
	mmio_write64(its + GITS_CWRITER, 0);
	mmio_write32(its + GITS_CTLR, 1);
}

static bool got(void *arg)
{
	return lpis >= *(u32 *)arg;
}

static bool wait_lpi(u32 count, const char *how)
{
	timer_wait_until(got, &count, WAIT_NS);
	printf("its: lpi %u via %s count=%u\n", last_lpi, how, lpis);
	return lpis == count && last_lpi == LPI;
}

static u64 w0(u8 op, u32 dev)
{
	return op | (u64)dev << 32;
}

/* one hostile command: the ITS must stall; the queue is reset after */
static bool refused(const char *what, u64 d0, u64 d1, u64 d2)
{
	bool ran;

	cmd(d0, d1, d2, 0);
	ran = kick();
	printf("its: refused %s stalled=%lu\n", what, mmio_read64(its + GITS_CREADR) & STALLED);
	queue_at((uptr)cmdq);
	return !ran;
}

static bool setup(void)
{
	uptr rd;
	u32 typer;

	gic_init();        /* the distributor's Group 1 enable gates LPIs too */
	rd = gic_redist(); /* (a direct VM's vCPU sees its physical MPIDR) */
	typer = gic_dist_read(GICD_TYPER);

	printf("its: typer lpis=%u idbits=%u gits_typer=%lx\n", (typer >> 17) & 1,
	       ((typer >> 19) & 0x1f) + 1, mmio_read64(its + GITS_TYPER));
	if (!((typer >> 17) & 1))
		return false;
	prop[LPI - 8192] = PRIO_ON;
	dsb_ish();
	mmio_write64(rd + GICR_PROPBASER, (uptr)prop | 13);
	mmio_write64(rd + GICR_PENDBASER, (uptr)pend);
	mmio_write32(rd + GICR_CTLR, 1);
	printf("its: tables baser0=%lx baser1=%lx baser2=%lx\n", mmio_read64(its + GITS_BASER0),
	       mmio_read64(its + GITS_BASER0 + 8), mmio_read64(its + GITS_BASER0 + 16));
	mmio_write64(its + GITS_BASER0, VALID | ATTRS | DEVICES | (uptr)devtab);
	if (((mmio_read64(its + GITS_BASER0 + 8) >> 56) & 7) == 4) /* a collection table to give */
		mmio_write64(its + GITS_BASER0 + 8, VALID | (uptr)colltab);
	queue_at((uptr)cmdq);
	/* the attributes stick, as Linux's driver checks */
	printf("its: attributes stick baser0=%u cbaser=%u\n",
	       mmio_read64(its + GITS_BASER0) == (VALID | ATTRS | DEVICES | (uptr)devtab),
	       mmio_read64(its + GITS_CBASER) == (VALID | ATTRS | (uptr)cmdq));
	irq_register_lpi(lpi_irq);
	cmd(w0(0x08, devid), 1, VALID | (uptr)itt, 0);  /* MAPD: 2 event ID bits */
	cmd(0x09, 0, VALID | 0 << 16 | 0, 0);           /* MAPC: collection 0 -> vCPU 0 */
	cmd(w0(0x0a, devid), 0 | (u64)LPI << 32, 0, 0); /* MAPTI: event 0 -> LPI, collection 0 */
	cmd(0x05, 0, 0, 0);                             /* SYNC */
	return kick();
}

static int fail(const char *why)
{
	printf("its: FAIL %s\n", why);
	return 1;
}

/* After a SYSTEM_RESET: the ITS as at power-on (disabled, no queue), and
 * nothing of the first boot's mappings (an INT of its event 0 or of the
 * virtual-only device's event 255 names nothing: ignored, no LPI). */
static int after_reset(void)
{
	u32 ctlr = mmio_read32(its + GITS_CTLR);
	u64 cbaser = mmio_read64(its + GITS_CBASER);
	bool ran;

	printf("its: after reset ctlr=%x cbaser=%lx\n", ctlr, cbaser);
	queue_at((uptr)cmdq);
	cmd(w0(0x03, devid), 0, 0, 0);
	cmd(w0(0x03, devid + 8), 255, 0, 0);
	ran = kick();
	printf("its: ignored stale ran=%u stalled=%lu\n", ran,
	       mmio_read64(its + GITS_CREADR) & STALLED);
	queue_at((uptr)cmdq);
	if ((ctlr & 1) || cbaser || !ran)
		return fail("the first boot's ITS survived the reset");
	if (!setup())
		return fail("set-up after the reset");
	irq_local_enable();
	cmd(w0(0x03, devid), 0, 0, 0);
	if (!kick() || !wait_lpi(1, "command after the reset"))
		return fail("no LPI after the reset");
	printf("its: PASS (reset)\n");
	return 0;
}

/* The edu's own MSIs (the `edu` parameter): each one reaches the handler;
 * the exits they cost the CPU are printed. */
/* The edu's config space (ECAM) and the BAR it answers at, memory and bus
 * mastering on; its MSI capability (at *at) sent to the ITS's doorbell with
 * event 0, one vector. 0: it has no MSI capability. */
static uptr edu_msi_on(uptr *cfg, u32 *at)
{
	uptr c = (uptr)param_u64("ecam", 0x3f000000) + ((uptr)param_u64("bdf", devid) << 12), bar;
	u32 a = mmio_read32(c + 0x34) & 0xfc;
	bool is64;

	mmio_write32(c + 0x04, (mmio_read32(c + 0x04) & 0xffff) | 0x6); /* memory, bus master */
	bar = mmio_read32(c + 0x10) & ~0xfu;
	if (!bar) { /* no hypervisor nor firmware assigned it: QEMU virt's MMIO window */
		bar = 0x10000000;
		mmio_write32(c + 0x10, (u32)bar);
	}
	while (a >= 0x40 && (mmio_read32(c + a) & 0xff) != 0x05)
		a = (mmio_read32(c + a) >> 8) & 0xfc;
	if (a < 0x40)
		return 0;
	is64 = (mmio_read32(c + a) >> 16) & 0x80;
	mmio_write32(c + a + 4, (u32)(its + GITS_TRANSLATER));
	if (is64)
		mmio_write32(c + a + 8, 0);
	mmio_write32(c + a + (is64 ? 0xc : 0x8), 0); /* data: event 0 */
	mmio_write32(c + a, 0x00010000);             /* MSI enable, one vector */
	*cfg = c;
	*at = a;
	return bar;
}

static bool edu_msis(u32 n)
{
	u32 at = 0, before = lpis, want = lpis;
	struct bh_cpu_exits e0 = { 0 }, e1 = { 0 }; /* (no hypervisor: stay 0) */
	struct bh_bw_stats bw;
	u64 sum = 0, lo = ~0ull, hi = 0;
	uptr c = 0, bar = edu_msi_on(&c, &at);
	bool hyp;

	if (!bar)
		return false;
	irq_local_disable();
	hyp = bh_cpu_exits(BH_CPU_SELF, &e0) == BH_OK;
	for (u32 i = 0; i < n; i++) {
		u64 deadline = timer_now() + timer_ns_to_ticks(WAIT_NS), t0, ns;

		want++;
		t0 = timer_now();
		mmio_write32(bar + EDU_RAISE, 1);
		timer_set_deadline(deadline); /* the timer wakes a lost one */
		while (lpis < want && timer_now() < deadline) {
			wfi(); /* woken by the pending LPI, masked as it is */
			irq_local_enable();
			isb();
			irq_local_disable();
		}
		mmio_write32(bar + EDU_ACK, 1);
		ns = timer_ticks_to_ns(lpi_at - t0);
		sum += ns;
		lo = ns < lo ? ns : lo;
		hi = ns > hi ? ns : hi;
	}
	bh_cpu_exits(BH_CPU_SELF, &e1);
	timer_stop();
	irq_local_enable();
	mmio_write32(c + at, 0);
	printf("its: edu msis=%u lpis=%u exits=%lu irq_exits=%lu\n", n, lpis - before,
	       e1.exits - e0.exits - hyp, e1.irq_exits - e0.irq_exits);
	if (bh_bw_stats(0, &bw) == BH_OK) /* a regulated VM: how often it was held */
		printf("its: edu regulated throttles=%lu\n", bw.throttles);
	/* from the edu register write to the handler (-icount: 1 ns per instruction) */
	printf("result bench=edumsi samples=%u min_ns=%lu mean_ns=%lu.%lu max_ns=%lu\n", n, lo,
	       sum / n, sum * 10 / n % 10, hi);
	return lpis - before == n && last_lpi == LPI;
}

/* A device ID that is none of its functions: a virtual-only device (up to
 * 256 events) whose INT reaches this VM; its own function's MSI still
 * arrives after it (`edu`); three more fill the VM's four. */
static bool virtual_only(void)
{
	u32 before = lpis, want = lpis + 1;
	bool ran, filled = true;

	prop[VLPI - 8192] = PRIO_ON;
	dsb_ish();
	cmd(w0(0x08, devid + 8), 7, VALID | (uptr)vitt, 0);    /* MAPD: 8 event ID bits */
	cmd(w0(0x0a, devid + 8), 255 | (u64)VLPI << 32, 0, 0); /* MAPTI: 255 -> VLPI, coll 0 */
	cmd(w0(0x03, devid + 8), 255, 0, 0);                   /* INT */
	ran = kick();
	timer_wait_until(got, &want, WAIT_NS);
	printf("its: virtual-only device %u ran=%u lpi %u count=%u\n", devid + 8, ran, last_lpi,
	       lpis - before);
	if (!ran || last_lpi != VLPI || lpis != want)
		return false;
	if (param_u64("edu", 0) && !edu_msis(1))
		return false;
	for (u32 i = 9; i < 12; i++) {
		cmd(w0(0x08, devid + i), 1, VALID | (uptr)vitt, 0);
		filled &= kick();
	}
	printf("its: virtual-only devices filled=%u\n", filled);
	return filled;
}

int main(const char *params)
{
	u32 floods = (u32)param_u64("floods", 200), msis = (u32)param_u64("msis", 1000);
	u64 sent = 0;
	bool ok = true;
	struct bh_vm_info info;

	(void)params;
	its = (uptr)param_u64("its", 0x08080000);
	devid = (u32)param_u64("devid", 8);
	lpi_base = (u32)param_u64("lpi_base", 8192);
	if (bh_vm_info(&info) == BH_OK && info.resets)
		return after_reset();
	if (!setup())
		return fail("set-up");
	irq_local_enable();
	cmd(w0(0x03, devid), 0, 0, 0); /* INT event 0 */
	if (!kick() || !wait_lpi(1, "command"))
		return fail("no LPI from INT");
	if (param_u64("bench", 0)) /* (without a hypervisor, a CPU's MSI write has no device ID) */
		return edu_msis((u32)param_u64("edu", 1)) ? (printf("its: PASS (bench)\n"), 0)
		                                          : fail("the edu's MSIs");
	mmio_write32(its + GITS_TRANSLATER, 0);
	if (!wait_lpi(2, "translater"))
		return fail("no LPI from GITS_TRANSLATER");
	/* masked: pending, not delivered, until enabled again */
	prop[LPI - 8192] = 0xa0;
	dsb_ish();
	cmd(w0(0x0c, devid), 0, 0, 0); /* INV */
	cmd(w0(0x03, devid), 0, 0, 0);
	kick();
	timer_delay_ms(20);
	printf("its: masked lpi held count=%u\n", lpis);
	if (lpis != 2)
		return fail("a masked LPI was delivered");
	prop[LPI - 8192] = PRIO_ON;
	dsb_ish();
	cmd(w0(0x0c, devid), 0, 0, 0);
	kick();
	if (!wait_lpi(3, "inv"))
		return fail("the pending LPI was not delivered after INV");
	{
		/* the function's own MSI (event 0): a DMA write to the doorbell
		 * through the SMMU's view, to the physical ITS */
		u32 at = 0;
		uptr c = 0, bar = edu_msi_on(&c, &at);

		printf("its: device cap %x at %x\n", bar ? mmio_read32(c + at) & 0xff : 0, at);
		if (!bar)
			return fail("the edu shows no MSI capability");
		mmio_write32(bar + EDU_RAISE, 1);
		if (!wait_lpi(4, "device msi"))
			return fail("no LPI from the device's MSI");
		mmio_write32(bar + EDU_ACK, 1);
	}
	if (param_u64("edu", 0) && !edu_msis((u32)param_u64("edu", 0)))
		return fail("the edu's MSIs");

	if (param_u64("vdevs", 1)) /* (none in a direct VM) */
		ok &= virtual_only();
	else
		ok &= refused("virtual-only", w0(0x08, devid + 8), 7, VALID | (uptr)vitt);
	ok &= refused("foreign", w0(0x08, devid + 12), 1, VALID | (uptr)itt);
	ok &= refused("event", w0(0x0a, devid), 4 | (u64)(LPI + 1) << 32, 0);
	/* the next VM's block (a direct VM's LPIs are physical) */
	ok &= refused("lpi", w0(0x0a, devid), 1 | (u64)(LPI + 256) << 32, 0);
	ok &= refused("lpi below", w0(0x0a, devid), 1 | (u64)(lpi_base - 1) << 32, 0);
	ok &= refused("itt", w0(0x08, devid), 1, VALID | 0x100000000ul);
	ok &= refused("vmapp", 0x29, 0, 0);
	queue_at(0x48000000); /* not its RAM: another VM's */
	cmd(0x05, 0, 0, 0);
	ok &= !kick();
	printf("its: refused queue stalled=%lu\n", mmio_read64(its + GITS_CREADR) & STALLED);
	queue_at((uptr)cmdq);
	if (!ok)
		return fail("a hostile command was not refused");
	{
		u32 stalls = 0;

		for (u32 i = 0; i < 10; i++)
			stalls += refused("again", w0(0x08, devid + 12), 1, VALID | (uptr)itt);
		printf("its: refused again n=10 stalled=%u\n", stalls);
		if (stalls != 10)
			return fail("a repeated hostile command was not refused");
	}

	for (u32 round = 0; round < floods && ok; round++) {
		for (u32 i = 0; i < QBYTES / 32 - 1; i++)
			cmd(0x05, 0, 0, 0);
		ok = kick();
		sent += QBYTES / 32 - 1;
	}
	printf("its: flood commands=%lu drained=%u\n", sent, ok);
	sent = lpis;
	for (u32 i = 0; i < msis; i++)
		mmio_write32(its + GITS_TRANSLATER, 0);
	timer_delay_ms(20);
	printf("its: msi flood writes=%u lpis=%lu\n", msis, lpis - sent);
	cmd(w0(0x03, devid), 0, 0, 0);
	{
		u32 want = lpis + 1;

		if (!ok || !kick() || !wait_lpi(want, "command after the floods"))
			return fail("the ITS no longer works");
	}
	printf("its: PASS\n");
	if (param_u64("reset", 0)) {
		printf("its: resetting\n");
		psci_system_reset();
	}
	return 0;
}
