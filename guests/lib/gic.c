// SPDX-License-Identifier: Apache-2.0
/* GICv3 driver (distributor, redistributors, ICC system registers). */
#include "arch.h"
#include "gic.h"
#include "lib.h"
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

/* Serialises read-modify-write of shared GICD registers. */
static spinlock_t gicd_lock = SPINLOCK_INIT;

static uptr gicr_rd(void)
{
	return GICR_BASE + (uptr)cpu_id() * GICR_STRIDE;
}

static uptr gicr_sgi(void)
{
	return gicr_rd() + GICR_SGI_OFFSET;
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
	wait_rwp(GICD_BASE + GICD_CTLR, GICD_CTLR_RWP, "GICD");
}

static void gicr_wait_rwp(void)
{
	wait_rwp(gicr_rd() + GICR_CTLR, GICR_CTLR_RWP, "GICR");
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

	/* Affinity routing first, then the groups. */
	gic_dist_write(GICD_CTLR, GICD_CTLR_ARE_NS);
	gicd_wait_rwp();
	gic_dist_write(GICD_CTLR, GICD_CTLR_ARE_NS | GICD_CTLR_ENABLE_G1A | GICD_CTLR_ENABLE_G1);
	gicd_wait_rwp();

	gic_cpu_init();
}

void gic_cpu_init(void)
{
	uptr rd = gicr_rd(), sgi = gicr_sgi();
	u64 deadline;
	u32 i;

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
	if (intid >= 32)
		mmio_write64(GICD_BASE + GICD_IROUTER(intid), mpidr & MPIDR_AFF_MASK);
}

void gic_spi_setup(u32 intid, bool edge)
{
	gic_irq_disable(intid);
	gic_route_spi(intid, cpu_mpidr());
	gic_set_edge(intid, edge);
	gic_set_priority(intid, GIC_DEFAULT_PRIO);
	gic_irq_enable(intid);
}

void gic_send_sgi(u32 cpu, u32 intid)
{
	u64 val = ((u64)(intid & 0xf) << 24) | BIT(cpu & 15) | ((u64)((cpu >> 4) & 0xf) << 44);

	dsb_ishst();
	write_sysreg(val, icc_sgi1r_el1);
	isb();
}

u32 gic_ack(void)
{
	u32 intid = (u32)read_sysreg(icc_iar1_el1) & 0xffffff;

	dsb_sy();
	return intid;
}

void gic_eoi(u32 intid)
{
	write_sysreg(intid, icc_eoir1_el1);
	isb();
}
