/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GICv3 driver of drivers/gic/gic.h: distributor, redistributors and the
 * EL2 view of the CPU interface (ICC_* for the hypervisor's own
 * interrupts, ICH_* for the virtual CPU interface).
 */
#include "drivers/gic/gic.h"

#include "drivers/gic/gic_dist.h"
#include "drivers/gic/gicv3_hot.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sysregs.h"
#include "lib/features.h"
#include "lib/log.h"

#define GICD_IROUTER     0x6000
#define GICD_CTLR_RWP    BIT(31)
#define GICD_CTLR_ARE_NS BIT(4)
#define GICD_CTLR_GRP1NS BIT(1)
#define GICD_CTLR_GRP0   BIT(0) /* with DS: Group 0 enabled */
#define GICD_CTLR_DS     BIT(6) /* one security state: no EL3 owns Group 0 */

#define GICR_CTLR         0x0000
#define GICR_TYPER        0x0008
#define GICR_WAKER        0x0014
#define GICR_SGI          0x10000
#define GICR_TYPER_LAST   BIT(4)
#define GICR_WAKER_SLEEP  (1u << 1)
#define GICR_WAKER_ASLEEP (1u << 2)

/* ICC_SRE_EL2 */
#define ICC_SRE_SRE    BIT(0)
#define ICC_SRE_ENABLE BIT(3)

/* ICH_HCR_EL2 */
#define ICH_HCR_EN    BIT(0)
#define ICH_HCR_UIE   BIT(1)
#define ICH_HCR_TALL1 BIT(12)
#define ICH_HCR_TDIR  BIT(14)
/* The virtual interface while a guest runs: enabled; with the platform quirk
 * gic.virq: software, the guest's Group 1 registers and DIR trapped
 * (core/vgic/vgic_v3_virq.c emulates them) */
#define ICH_HCR_GUEST (ICH_HCR_EN | (IS_ENABLED(SOFT_VIRQ) ? ICH_HCR_TALL1 | ICH_HCR_TDIR : 0))

static u64 gicd_base, gicr_base, gicr_stride;
static u32 gic_intids;
static bool gicv3_group0;    /* gic_group0_enable: Group 0 is the hypervisor's */
u64 gicv3_rd[ARCH_MAX_CPUS]; /* redistributor of each CPU, by CPU index (gicv3_its.c too) */

static inline u32 gicd_read(u64 off)
{
	return *gic_reg32(gicd_base, off);
}

static inline void gicd_write(u64 off, u32 v)
{
	*gic_reg32(gicd_base, off) = v;
}

static void gicd_wait_rwp(void)
{
	while (gicd_read(GICD_CTLR) & GICD_CTLR_RWP)
		;
}

static void gicv3_init(const struct gic_dev *f)
{
	gicd_base = f->gicd;
	gicr_base = f->gicr;
	gicr_stride = f->gicr_stride;
	gic_intids = gic_dist_intids(gicd_base);

	gicd_write(GICD_CTLR, 0);
	gicd_wait_rwp();
	gic_dist_reset_spis(gicd_base, gic_intids);
	for (u32 i = 32; i < gic_intids; i += 32)
		gicd_write(GICD_IGROUPR + i / 8, ~0u); /* Group 1 */
	gicd_wait_rwp();
	gicd_write(GICD_CTLR, GICD_CTLR_ARE_NS | GICD_CTLR_GRP1NS);
	gicd_wait_rwp();
}

static u32 gicv3_nr_intids(void)
{
	return gic_intids;
}

static u64 gic_rdist(void)
{
	u64 mpidr = sysreg_read(mpidr_el1);
	u32 aff = (u32)((mpidr & 0xffffff) | ((mpidr >> 8) & 0xff000000));

	for (u64 rd = gicr_base;; rd += gicr_stride) {
		u64 typer = *(volatile u64 *)(uintptr_t)(rd + GICR_TYPER);

		if ((u32)(typer >> 32) == aff)
			return rd;
		if (typer & GICR_TYPER_LAST)
			break;
	}
	panic("no GIC redistributor for MPIDR %lx", mpidr);
}

static u64 gic_this_rd(void)
{
	return gicv3_rd[cpu_index()];
}

static void gicv3_cpu_init(void)
{
	u64 rd = gic_rdist();
	volatile u32 *waker = gic_reg32(rd, GICR_WAKER);

	gicv3_rd[cpu_index()] = rd;
	*waker &= ~GICR_WAKER_SLEEP;
	while (*waker & GICR_WAKER_ASLEEP)
		;
	*gic_reg32(rd, GICR_SGI + GICD_ICENABLER) = ~0u;
	*gic_reg32(rd, GICR_SGI + GICD_ICPENDR) = ~0u;
	*gic_reg32(rd, GICR_SGI + GICD_ICACTIVER) = ~0u;
	*gic_reg32(rd, GICR_SGI + GICD_IGROUPR) = ~0u;
	for (u32 i = 0; i < 32; i += 4)
		*gic_reg32(rd, GICR_SGI + GICD_IPRIORITYR + i) = 0x01010101u * GIC_PRIO_HYP;

	sysreg_write(S3_4_C12_C9_5, ICC_SRE_SRE | ICC_SRE_ENABLE); /* ICC_SRE_EL2 */
	isb();
	sysreg_write(S3_0_C12_C12_5, ICC_SRE_SRE); /* ICC_SRE_EL1 */
	isb();
	sysreg_write(S3_0_C4_C6_0, 0xff);     /* ICC_PMR_EL1 */
	sysreg_write(S3_0_C12_C12_3, 0);      /* ICC_BPR1_EL1 */
	sysreg_write(S3_0_C12_C12_4, BIT(1)); /* ICC_CTLR_EL1.EOImode */
	sysreg_write(S3_0_C12_C12_7, 1);      /* ICC_IGRPEN1_EL1 */
	isb();
	gic_vif_reset();
}

u32 gic_ack(void)
{
	return gic_hot_ack();
}

void gic_eoi(u32 intid)
{
	sysreg_write(S3_0_C12_C12_1, intid); /* ICC_EOIR1_EL1 */
	isb();
}

void gic_deactivate(u32 intid)
{
	sysreg_write(S3_0_C12_C11_1, intid); /* ICC_DIR_EL1 */
	isb();
}

void gic_eoi_deactivate(u32 intid)
{
	gic_hot_eoi_deactivate(intid);
}

static u64 gic_bank(u32 intid)
{
	return intid < GIC_PRIV_MAX ? gic_this_rd() + GICR_SGI : gicd_base;
}

static void gicv3_enable(u32 intid)
{
	*gic_reg32(gic_bank(intid), GICD_ISENABLER + (intid / 32) * 4) = 1u << (intid % 32);
}

static void gicv3_disable(u32 intid)
{
	*gic_reg32(gic_bank(intid), GICD_ICENABLER + (intid / 32) * 4) = 1u << (intid % 32);
	if (intid >= GIC_PRIV_MAX)
		gicd_wait_rwp();
}

bool gic_is_pending(u32 intid)
{
	return *gic_reg32(gic_bank(intid), GICD_ISPENDR + (intid / 32) * 4) & (1u << (intid % 32));
}

static void gicv3_set_priority(u32 intid, u8 prio)
{
	*(volatile u8 *)(uintptr_t)(gic_bank(intid) + GICD_IPRIORITYR + intid) = prio;
}

static void gicv3_set_edge(u32 intid, bool edge)
{
	gic_dist_set_edge(gicd_base, intid, edge);
}

static void gicv3_route_spi(u32 intid, u64 mpidr)
{
	volatile u64 *r = (volatile u64 *)(uintptr_t)(gicd_base + GICD_IROUTER + 8ull * intid);

	*r = mpidr & 0xff00ffffffull;
}

static u64 gic_bank_cpu(u32 cpu, u32 intid)
{
	return intid < GIC_PRIV_MAX ? gicv3_rd[cpu] + GICR_SGI : gicd_base;
}

void gic_cpu_bank_write(u32 cpu, u32 bank, u32 intid)
{
	*gic_reg32(gic_bank_cpu(cpu, intid), bank + (intid / 32) * 4) = 1u << (intid % 32);
}

bool gic_cpu_bank_read(u32 cpu, u32 bank, u32 intid)
{
	return *gic_reg32(gic_bank_cpu(cpu, intid), bank + (intid / 32) * 4) & (1u << (intid % 32));
}

static void gicv3_cpu_set_priority(u32 cpu, u32 intid, u8 prio)
{
	*(volatile u8 *)(uintptr_t)(gic_bank_cpu(cpu, intid) + GICD_IPRIORITYR + intid) = prio;
}

void gic_clear_active_local(u32 intid)
{
	*gic_reg32(gic_this_rd() + GICR_SGI, GICD_ICACTIVER) = 1u << intid;
}

/* ICC_SGI0R_EL1 / ICC_SGI1R_EL1's value for SGI intid at the CPU mpidr */
static inline u64 gicv3_sgir(u32 intid, u64 mpidr)
{
	return ((u64)intid << 24) | (1ull << (mpidr & 0xf)) | (((mpidr >> 8) & 0xff) << 16) |
	       (((mpidr >> 16) & 0xff) << 32) | (((mpidr >> 32) & 0xff) << 48) |
	       (((mpidr >> 4) & 0xf) << 44);
}

void gic_send_sgi(u32 intid, u64 mpidr)
{
	dsb(ishst);
	sysreg_write(S3_0_C12_C11_5, gicv3_sgir(intid, mpidr)); /* ICC_SGI1R_EL1 */
	isb();
}

/* No EL3 (QEMU virt booted by -kernel): the GIC has one security state
 * and DS reads 1. */
bool gic_group0_ours(void)
{
	return gicd_read(GICD_CTLR) & GICD_CTLR_DS;
}

void gic_group0_enable(void)
{
	gicv3_group0 = true;
	gicd_write(GICD_CTLR, gicd_read(GICD_CTLR) | GICD_CTLR_GRP0);
	gicd_wait_rwp();
}

/* A direct guest's priority: in the non-secure view (prio >> 1 | 0x80)
 * when Group 0 is the hypervisor's, below its Group 0 priorities as TF-A's
 * GIC keeps it below the secure ones (docs/interrupts.md). */
u8 gic_guest_prio(u8 prio)
{
	return gicv3_group0 ? (u8)(0x80 | prio >> 1) : prio;
}

void gic_group0_set(u32 intid)
{
	volatile u32 *r = gic_reg32(gic_bank(intid), GICD_IGROUPR + (intid / 32) * 4);

	*r &= ~(1u << (intid % 32));
	gicv3_set_priority(intid, GIC_PRIO_GROUP0);
}

bool gic_spi_routed_here(u32 intid)
{
	u64 r = *(volatile u64 *)(uintptr_t)(gicd_base + GICD_IROUTER + 8ull * intid);
	u64 mpidr = sysreg_read(mpidr_el1) & 0xff00ffffffull;

	return !(r & BIT(31)) && r == mpidr;
}

void gic_send_sgi0(u32 intid, u64 mpidr)
{
	dsb(ishst);
	sysreg_write(S3_0_C12_C11_7, gicv3_sgir(intid, mpidr)); /* ICC_SGI0R_EL1 */
	isb();
}

u32 gic_ack0(void)
{
	u32 intid = (u32)sysreg_read(S3_0_C12_C8_0); /* ICC_IAR0_EL1 */

	dsb(sy); /* (as gic_hot_ack) the interrupt's state before its handler */
	return intid;
}

void gic_eoi0(u32 intid)
{
	sysreg_write(S3_0_C12_C8_1, intid);          /* ICC_EOIR0_EL1 */
	if (sysreg_read(S3_0_C12_C12_4) & BIT(1))    /* ICC_CTLR_EL1.EOImode: the guest's */
		sysreg_write(S3_0_C12_C11_1, intid); /* ICC_DIR_EL1 */
	isb();
}

u32 gic_lr_count(void)
{
	return (u32)(sysreg_read(S3_4_C12_C11_1) & 0x1f) + 1; /* ICH_VTR_EL2.ListRegs */
}

#define LR_CASE(n, crm, op2)                                     \
	case n:                                                  \
		if (write)                                       \
			sysreg_write(S3_4_C12_##crm##_##op2, v); \
		else                                             \
			v = sysreg_read(S3_4_C12_##crm##_##op2); \
		break

static u64 gic_lr_access(u32 n, bool write, u64 v)
{
	switch (n) {
		LR_CASE(0, C12, 0);
		LR_CASE(1, C12, 1);
		LR_CASE(2, C12, 2);
		LR_CASE(3, C12, 3);
		LR_CASE(4, C12, 4);
		LR_CASE(5, C12, 5);
		LR_CASE(6, C12, 6);
		LR_CASE(7, C12, 7);
		LR_CASE(8, C13, 0);
		LR_CASE(9, C13, 1);
		LR_CASE(10, C13, 2);
		LR_CASE(11, C13, 3);
		LR_CASE(12, C13, 4);
		LR_CASE(13, C13, 5);
		LR_CASE(14, C13, 6);
		LR_CASE(15, C13, 7);
	default:
		break;
	}
	return v;
}

void gic_lr_read(u32 n, struct gic_lr *lr)
{
	u64 v = gic_lr_access(n, false, 0);

	lr->vintid = (u32)(v & ICH_LR_VINTID_MASK);
	lr->hw = (v & ICH_LR_HW) != 0;
	lr->pintid = lr->hw ? (u32)((v >> ICH_LR_PINTID_SHIFT) & ICH_LR_PINTID_MASK) : 0;
	lr->eoi_maint = !lr->hw && (v & ICH_LR_EOI);
	lr->prio = (u8)(v >> ICH_LR_PRIO_SHIFT);
	lr->state = (u8)(v >> ICH_LR_STATE_SHIFT);
	lr->source = 0;
}

void gic_lr_write(u32 n, const struct gic_lr *lr)
{
	u64 v = 0;

	if (lr->state) {
		v = lr->vintid | ((u64)lr->prio << ICH_LR_PRIO_SHIFT) | ICH_LR_GROUP1 |
		    ((u64)(lr->state & 3) << ICH_LR_STATE_SHIFT);
		if (lr->hw)
			v |= ICH_LR_HW | ((u64)lr->pintid << ICH_LR_PINTID_SHIFT);
		else if (lr->eoi_maint)
			v |= ICH_LR_EOI;
	}
	gic_lr_access(n, true, v);
}

u32 gic_lr_empty(void)
{
	return gic_hot_lr_empty();
}

static void gic_hcr_write(u64 v)
{
	sysreg_write(S3_4_C12_C11_0, v); /* ICH_HCR_EL2 */
	isb();
}

void gic_vif_ctl(bool underflow)
{
	gic_hcr_write(ICH_HCR_GUEST | (underflow ? ICH_HCR_UIE : 0));
}

void gic_vif_off(void)
{
	gic_hcr_write(0);
}

void gic_vif_reset(void)
{
	for (u32 n = 0; n < gic_lr_count(); n++)
		gic_lr_access(n, true, 0);
	sysreg_write(S3_4_C12_C11_7, 0); /* ICH_VMCR_EL2 */
	gic_hcr_write(ICH_HCR_GUEST);
}

const struct gic_ops gicv3_ops = {
	.version = 3,
	.init = gicv3_init,
	.cpu_init = gicv3_cpu_init,
	.nr_intids = gicv3_nr_intids,
	.enable = gicv3_enable,
	.disable = gicv3_disable,
	.set_priority = gicv3_set_priority,
	.set_edge = gicv3_set_edge,
	.route_spi = gicv3_route_spi,
	.cpu_set_priority = gicv3_cpu_set_priority,
};
