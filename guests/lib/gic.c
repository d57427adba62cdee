// SPDX-License-Identifier: Apache-2.0
/*
 * The VM's GIC, GICv3 (distributor, redistributors, ICC system registers)
 * or GICv2 (distributor with banked SGI/PPI registers, memory-mapped CPU
 * interface): the version is read from the distributor at the first
 * gic_init()/gic_cpu_init() (GICD_PIDR2 of a GICv2 at 0xFE8; a GICv3's is
 * at 0xFFE8, and its 0xFE8 reads as zero).
 */
#include "arch.h"
#include "gic.h"
#include "lib.h"
#include "runtime.h"
#include "timer.h"
#include "uart.h"

#define GICD_CTLR_RWP        BIT(31)
#define GICD_CTLR_ARE_NS     BIT(4)
#define GICD_CTLR_ENABLE_G1A BIT(1)
#define GICD_CTLR_ENABLE_G1  BIT(0)

#define GICR_CTLR                  0x0000
#define GICR_CTLR_RWP              BIT(3)
#define GICR_WAKER                 0x0014
#define GICR_WAKER_PROCESSOR_SLEEP BIT(1)
#define GICR_WAKER_CHILDREN_ASLEEP BIT(2)

/* In the SGI_base frame. */
#define GICR_IGROUPR0      0x0080
#define GICR_ISENABLER0    0x0100
#define GICR_ICENABLER0    0x0180
#define GICR_ISPENDR0      0x0200
#define GICR_ICPENDR0      0x0280
#define GICR_IPRIORITYR(n) (0x0400 + 4 * (n))
#define GICR_ICFGR0        0x0C00
#define GICR_ICFGR1        0x0C04

#define ICC_SRE_SRE BIT(0)

/* GICv2 */
#define GICD_ITARGETSR(intid) (0x0800 + (intid))
#define GICD_SGIR             0x0F00
#define GICD_PIDR2_V2         0x0FE8
#define GICC_CTLR             0x0000
#define GICC_PMR              0x0004
#define GICC_BPR              0x0008
#define GICC_IAR              0x000C
#define GICC_EOIR             0x0010

static u32 gic_version;
static u32 gic_last_iar[RT_MAX_CPUS]; /* GICv2: EOIR takes the SGI's source back */

u32 gic_arch_version(void)
{
	if (!gic_version)
		gic_version = ((mmio_read32(GICD_BASE + GICD_PIDR2_V2) >> 4) & 0xf) == 2 ? 2 : 3;
	return gic_version;
}

static bool gic_v2(void)
{
	return gic_arch_version() == 2;
}

/* Serialises read-modify-write of shared GICD registers. */
static spinlock_t gicd_lock = SPINLOCK_INIT;

#define GICR_TYPER      0x0008
#define GICR_TYPER_LAST BIT(4)

static uptr gicr_frame[RT_MAX_CPUS]; /* by cpu_id(): found once */

/* This vCPU's redistributor (gic.h): the frame whose GICR_TYPER affinity is this
 * vCPU's MPIDR (frame cpu_id() under the hypervisor's usual numbering; a
 * VM with direct interrupts sees its physical MPIDRs, docs/interrupts.md). */
uptr gic_redist(void)
{
	u32 id = cpu_id() % RT_MAX_CPUS;
	u64 mpidr, aff;

	if (gicr_frame[id])
		return gicr_frame[id];
	mpidr = read_sysreg(mpidr_el1);
	aff = (mpidr & 0xffffff) | ((mpidr >> 8) & 0xff000000);
	for (uptr rd = GICR_BASE;; rd += GICR_STRIDE) {
		u64 typer = mmio_read64(rd + GICR_TYPER);

		if ((typer >> 32) == aff)
			return gicr_frame[id] = rd;
		if ((typer & GICR_TYPER_LAST) || rd >= GICR_BASE + 64 * GICR_STRIDE)
			break;
	}
	return gicr_frame[id] = GICR_BASE + (uptr)cpu_id() * GICR_STRIDE;
}

/* The frame of an SGI/PPI's registers: GICv3 SGI_base, GICv2 the banked GICD. */
static uptr gicr_sgi(void)
{
	return gic_v2() ? GICD_BASE : gic_redist() + GICR_SGI_OFFSET;
}

u32 gic_dist_read(u32 off)
{
	return mmio_read32(GICD_BASE + off);
}

void gic_dist_write(u32 off, u32 val)
{
	mmio_write32(GICD_BASE + off, val);
}

u32 gic_num_intids(void)
{
	u32 n = 32 * ((gic_dist_read(GICD_TYPER) & 0x1f) + 1);

	return n > 1020 ? 1020 : n;
}

static void wait_rwp(uptr reg, u32 bit, const char *what)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(1000000000ul);

	while (mmio_read32(reg) & bit) {
		if (timer_now() > deadline) {
			printf("gic: timeout waiting for %s RWP\n", what);
			return;
		}
		cpu_relax();
	}
}

static void gicd_wait_rwp(void)
{
	if (!gic_v2())
		wait_rwp(GICD_BASE + GICD_CTLR, GICD_CTLR_RWP, "GICD");
}

static void gicr_wait_rwp(void)
{
	if (!gic_v2())
		wait_rwp(gic_redist() + GICR_CTLR, GICR_CTLR_RWP, "GICR");
}

void gic_init(void)
{
	u32 n = gic_num_intids(), i;

	/* Disable, then configure every SPI: Group 1, disabled, default priority. */
	gic_dist_write(GICD_CTLR, 0);
	gicd_wait_rwp();
	for (i = 32; i < n; i += 32) {
		gic_dist_write(GICD_ICENABLER(i / 32), ~0u);
		gic_dist_write(GICD_ICPENDR(i / 32), ~0u);
		gic_dist_write(GICD_IGROUPR(i / 32), ~0u);
	}
	for (i = 32; i < n; i += 4)
		gic_dist_write(GICD_IPRIORITYR(i / 4), 0x01010101u * GIC_DEFAULT_PRIO);
	gicd_wait_rwp();

	if (gic_v2()) {
		gic_dist_write(GICD_CTLR, 1); /* Group 0 (all interrupts) */
		gic_cpu_init();
		return;
	}
	/* Affinity routing first, then the groups. */
	gic_dist_write(GICD_CTLR, GICD_CTLR_ARE_NS);
	gicd_wait_rwp();
	gic_dist_write(GICD_CTLR, GICD_CTLR_ARE_NS | GICD_CTLR_ENABLE_G1A | GICD_CTLR_ENABLE_G1);
	gicd_wait_rwp();

	gic_cpu_init();
}

void gic_cpu_init(void)
{
	uptr rd, sgi;
	u64 deadline;
	u32 i;

	if (gic_v2()) {
		/* SGIs and PPIs (banked): disabled, default priority; then the
		 * CPU interface, EOImode 0. */
		gic_dist_write(GICD_ICENABLER(0), ~0u);
		gic_dist_write(GICD_ICPENDR(0), ~0u);
		for (i = 0; i < 32; i += 4)
			gic_dist_write(GICD_IPRIORITYR(i / 4), 0x01010101u * GIC_DEFAULT_PRIO);
		mmio_write32(GICC_BASE + GICC_PMR, 0xff);
		mmio_write32(GICC_BASE + GICC_BPR, 0);
		mmio_write32(GICC_BASE + GICC_CTLR, 1);
		return;
	}
	rd = gic_redist(); /* GICv3 only: it reads the redistributors' GICR_TYPER */
	sgi = gicr_sgi();
	/* Wake the redistributor. */
	mmio_write32(rd + GICR_WAKER, mmio_read32(rd + GICR_WAKER) & ~GICR_WAKER_PROCESSOR_SLEEP);
	deadline = timer_now() + timer_ns_to_ticks(1000000000ul);
	while (mmio_read32(rd + GICR_WAKER) & GICR_WAKER_CHILDREN_ASLEEP) {
		if (timer_now() > deadline) {
			printf("gic: vcpu %u: redistributor does not wake up\n", cpu_id());
			break;
		}
		cpu_relax();
	}

	/* SGIs and PPIs: Group 1, disabled, default priority. */
	mmio_write32(sgi + GICR_ICENABLER0, ~0u);
	mmio_write32(sgi + GICR_ICPENDR0, ~0u);
	mmio_write32(sgi + GICR_IGROUPR0, ~0u);
	for (i = 0; i < 32; i += 4)
		mmio_write32(sgi + GICR_IPRIORITYR(i / 4), 0x01010101u * GIC_DEFAULT_PRIO);
	gicr_wait_rwp();

	/* CPU interface. */
	write_sysreg(read_sysreg(icc_sre_el1) | ICC_SRE_SRE, icc_sre_el1);
	isb();
	write_sysreg(0xff, icc_pmr_el1);
	write_sysreg(0, icc_bpr1_el1);
	write_sysreg(0, icc_ctlr_el1); /* EOImode 0 */
	write_sysreg(1, icc_igrpen1_el1);
	isb();
}

void gic_irq_enable(u32 intid)
{
	if (intid < 32)
		mmio_write32(gicr_sgi() + GICR_ISENABLER0, BIT(intid));
	else
		gic_dist_write(GICD_ISENABLER(intid / 32), BIT(intid % 32));
}

void gic_irq_disable(u32 intid)
{
	if (intid < 32) {
		mmio_write32(gicr_sgi() + GICR_ICENABLER0, BIT(intid));
		gicr_wait_rwp();
	} else {
		gic_dist_write(GICD_ICENABLER(intid / 32), BIT(intid % 32));
		gicd_wait_rwp();
	}
}

/* Bit intid of a set-bit register bank: GICR (SGI frame) for SGIs/PPIs,
 * GICD for SPIs; reg0 is the bank's first register (GICD == GICR offsets). */
static bool gic_bank_bit(u32 intid, u32 reg0)
{
	u32 v;

	if (intid < 32)
		v = mmio_read32(gicr_sgi() + reg0);
	else
		v = gic_dist_read(reg0 + 4 * (intid / 32));
	return v & BIT(intid % 32);
}

bool gic_irq_is_enabled(u32 intid)
{
	return gic_bank_bit(intid, GICR_ISENABLER0);
}

bool gic_irq_is_pending(u32 intid)
{
	return gic_bank_bit(intid, GICR_ISPENDR0);
}

void gic_clear_pending(u32 intid)
{
	if (intid < 32)
		mmio_write32(gicr_sgi() + GICR_ICPENDR0, BIT(intid));
	else
		gic_dist_write(GICD_ICPENDR(intid / 32), BIT(intid % 32));
}

void gic_set_priority(u32 intid, u8 prio)
{
	u32 shift = (intid % 4) * 8;
	uptr reg;
	u64 flags;

	if (intid < 32) {
		reg = gicr_sgi() + GICR_IPRIORITYR(intid / 4);
		mmio_write32(reg, (mmio_read32(reg) & ~(0xffu << shift)) | ((u32)prio << shift));
		return;
	}
	reg = GICD_BASE + GICD_IPRIORITYR(intid / 4);
	flags = spin_lock_irqsave(&gicd_lock);
	mmio_write32(reg, (mmio_read32(reg) & ~(0xffu << shift)) | ((u32)prio << shift));
	spin_unlock_irqrestore(&gicd_lock, flags);
}

void gic_set_edge(u32 intid, bool edge)
{
	u32 shift = (intid % 16) * 2 + 1;
	uptr reg;
	u64 flags;
	u32 v;

	if (intid < 16)
		return; /* SGIs are always edge-triggered */
	if (intid < 32) {
		reg = gicr_sgi() + GICR_ICFGR1;
		v = mmio_read32(reg);
		mmio_write32(reg, edge ? v | BIT(shift) : v & ~BIT(shift));
		return;
	}
	reg = GICD_BASE + GICD_ICFGR(intid / 16);
	flags = spin_lock_irqsave(&gicd_lock);
	v = mmio_read32(reg);
	mmio_write32(reg, edge ? v | BIT(shift) : v & ~BIT(shift));
	spin_unlock_irqrestore(&gicd_lock, flags);
}

void gic_route_spi(u32 intid, u64 mpidr)
{
	if (intid >= 32 && gic_v2())
		mmio_write8(GICD_BASE + GICD_ITARGETSR(intid), (u8)(1u << (mpidr & 7)));
	else if (intid >= 32)
		mmio_write64(GICD_BASE + GICD_IROUTER(intid), mpidr & MPIDR_AFF_MASK);
}

/* An SPI routed to this CPU with the default priority, left disabled. */
static void spi_config(u32 intid, bool edge)
{
	gic_irq_disable(intid);
	gic_route_spi(intid, cpu_mpidr());
	gic_set_edge(intid, edge);
	gic_set_priority(intid, GIC_DEFAULT_PRIO);
}

void gic_spi_setup(u32 intid, bool edge)
{
	spi_config(intid, edge);
	gic_irq_enable(intid);
}

void gic_irq_set(u32 intid, bool on)
{
	if (on)
		gic_irq_enable(intid);
	else
		gic_irq_disable(intid);
}

void gic_doorbell_setup(u32 intid, void (*fn)(u32 intid), bool enabled)
{
	if (intid < 32 || intid >= 1020)
		return;
	irq_register(intid, fn);
	/* never enabled on the way when it is to stay disabled: a doorbell
	 * rung before would be taken then (the caller's CPU may not mask) */
	spi_config(intid, true);
	if (enabled)
		gic_irq_enable(intid);
}

void gic_send_sgi(u32 cpu, u32 intid)
{
	u64 val = ((u64)(intid & 0xf) << 24) | BIT(cpu & 15) | ((u64)((cpu >> 4) & 0xf) << 44);

	dsb_ishst();
	if (gic_v2()) {
		gic_dist_write(GICD_SGIR, (1u << (16 + (cpu & 7))) | (intid & 0xf));
		return;
	}
	write_sysreg(val, icc_sgi1r_el1);
	isb();
}

void gic_send_sgi_others(u32 intid)
{
	dsb_ishst();
	if (gic_v2()) {
		gic_dist_write(GICD_SGIR, (1u << 24) | (intid & 0xf)); /* all but self */
		return;
	}
	write_sysreg(((u64)(intid & 0xf) << 24) | BIT(40), icc_sgi1r_el1); /* IRM */
	isb();
}

u32 gic_ack(void)
{
	u32 intid;

	if (gic_v2()) {
		u32 iar = mmio_read32(GICC_BASE + GICC_IAR);

		dsb_sy();
		gic_last_iar[cpu_id() % RT_MAX_CPUS] = iar;
		return iar & 0x3ff;
	}
	intid = (u32)read_sysreg(icc_iar1_el1) & 0xffffff;
	dsb_sy();
	return intid;
}

void gic_eoi(u32 intid)
{
	if (gic_v2()) {
		u32 iar = gic_last_iar[cpu_id() % RT_MAX_CPUS];

		mmio_write32(GICC_BASE + GICC_EOIR, (iar & 0x3ff) == intid ? iar : intid);
		return;
	}
	write_sysreg(intid, icc_eoir1_el1);
	isb();
}
