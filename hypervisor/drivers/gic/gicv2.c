/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GICv2 (GIC-400) driver of drivers/gic/gic.h: the distributor, the CPU
 * interface (GICC) and the virtual interface control (GICH) are memory
 * mapped; the GICH frame is banked per CPU.
 *
 * Groups: interrupts stay in the group the firmware left them (Group 0 on
 * a GIC without the Security Extensions, as QEMU's xlnx-zcu102 without
 * secure=on; Group 1 in the Non-secure view on a board under TF-A) and
 * bit 0 / bit 9 of GICC_CTLR enable and split EOI for that group in both
 * views. Virtual interrupts are Group 0 (the guest enables Group 0 of its
 * virtual CPU interface, signalled as IRQ).
 *
 * The second 4 KiB page of the CPU interface (GICC_DIR) sits at
 * gicc + page_stride: 0x1000 in the architected layout, 0x10000 on SoCs
 * that alias each 4 KiB page over 64 KiB (ZynqMP).
 */
#include "drivers/gic/gic.h"

#include "drivers/gic/gic_dist.h"
#include "drivers/gic/gicv2_hot.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sysregs.h"
#include "lib/log.h"

#define GICD_ITARGETSR 0x0800
#define GICD_SGIR      0x0f00

#define GICC_CTLR         0x0000
#define GICC_PMR          0x0004
#define GICC_BPR          0x0008
#define GICC_DIR          0x0000 /* in the second page */
#define GICC_CTLR_EN      BIT(0)
#define GICC_CTLR_EOIMODE BIT(9)

#define GICH_HCR     0x0000
#define GICH_VTR     0x0004
#define GICH_VMCR    0x0008
#define GICH_APR     0x00f0
#define GICH_HCR_EN  BIT(0)
#define GICH_HCR_UIE BIT(1)

static u64 gicd_base;
u64 gicv2_gicc_dir;
u64 gicv2_gicc_base, gicv2_gich_base; /* gicv2_hot.h */
static u32 gic_intids;
static u8 gic_cpu_mask[ARCH_MAX_CPUS];        /* CPU interface bit of each CPU index */
static u64 gic_cpu_mpidr[ARCH_MAX_CPUS];      /* and its MPIDR affinity */
u8 gicv2_sgi_src[ARCH_MAX_CPUS][GIC_SGI_MAX]; /* gicv2_hot.h */

static inline u32 gicd_read(u64 off)
{
	return *gic_reg32(gicd_base, off);
}

static inline void gicd_write(u64 off, u32 v)
{
	*gic_reg32(gicd_base, off) = v;
}

static void gicv2_init(const struct gic_dev *f)
{
	gicd_base = f->gicd;
	gicv2_gicc_base = f->gicc;
	gicv2_gicc_dir = f->gicc + (f->gicc_page_stride ? f->gicc_page_stride : 0x1000);
	gicv2_gich_base = f->gich;
	gic_intids = gic_dist_intids(gicd_base);

	gicd_write(GICD_CTLR, 0);
	gic_dist_reset_spis(gicd_base, gic_intids);
	gicd_write(GICD_CTLR, 1);
}

static u32 gicv2_nr_intids(void)
{
	return gic_intids;
}

static void gicv2_cpu_init(void)
{
	u32 me = cpu_index();
	u32 mask = gicd_read(GICD_ITARGETSR) & 0xff; /* banked: this CPU's interface */

	if (!mask)
		panic("GICv2: no CPU interface number for CPU %u", me);
	gic_cpu_mask[me] = (u8)mask;
	gic_cpu_mpidr[me] = sysreg_read(mpidr_el1) & 0xff00ffffffull;
	gicd_write(GICD_ICENABLER, ~0u);
	gicd_write(GICD_ICPENDR, ~0u);
	gicd_write(GICD_ICACTIVER, ~0u);
	for (u32 i = 0; i < 32; i += 4)
		gicd_write(GICD_IPRIORITYR + i, 0x01010101u * GIC_PRIO_HYP);
	*gic_reg32(gicv2_gicc_base, GICC_PMR) = 0xff;
	*gic_reg32(gicv2_gicc_base, GICC_BPR) = 0;
	*gic_reg32(gicv2_gicc_base, GICC_CTLR) = GICC_CTLR_EN | GICC_CTLR_EOIMODE;
	gic_vif_reset();
}

u32 gic_ack(void)
{
	return gic_hot_ack();
}

/* GICC_EOIR/GICC_DIR take the SGI's source CPU with its INTID. */
static u32 gic_iar_value(u32 intid)
{
	if (intid < GIC_SGI_MAX)
		return intid | (u32)gicv2_sgi_src[cpu_index()][intid] << 10;
	return intid;
}

void gic_eoi(u32 intid)
{
	*gic_reg32(gicv2_gicc_base, GICC_EOIR) = gic_iar_value(intid);
}

void gic_deactivate(u32 intid)
{
	*gic_reg32(gicv2_gicc_dir, GICC_DIR) = gic_iar_value(intid);
}

void gic_eoi_deactivate(u32 intid)
{
	gic_eoi(intid);
	gic_deactivate(intid);
}

static void gicv2_enable(u32 intid)
{
	gicd_write(GICD_ISENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

static void gicv2_disable(u32 intid)
{
	gicd_write(GICD_ICENABLER + (intid / 32) * 4, 1u << (intid % 32));
}

bool gic_is_pending(u32 intid)
{
	return gicd_read(GICD_ISPENDR + (intid / 32) * 4) & (1u << (intid % 32));
}

static void gicv2_set_priority(u32 intid, u8 prio)
{
	*(volatile u8 *)(uintptr_t)(gicd_base + GICD_IPRIORITYR + intid) = prio;
}

static void gicv2_set_edge(u32 intid, bool edge)
{
	gic_dist_set_edge(gicd_base, intid, edge);
}

/* The CPU interface bit of the CPU with this MPIDR: as recorded by its
 * gic_cpu_init(), else its Aff0 (one GIC-400 per cluster numbers its CPU
 * interfaces as the cluster numbers its cores). */
static u8 gic_mask_of(u64 mpidr)
{
	mpidr &= 0xff00ffffffull;
	for (u32 i = 0; i < ARCH_MAX_CPUS; i++)
		if (gic_cpu_mask[i] && gic_cpu_mpidr[i] == mpidr)
			return gic_cpu_mask[i];
	return (u8)(1u << (mpidr & 7));
}

static void gicv2_route_spi(u32 intid, u64 mpidr)
{
	if (intid < GIC_PRIV_MAX)
		return;
	*(volatile u8 *)(uintptr_t)(gicd_base + GICD_ITARGETSR + intid) = gic_mask_of(mpidr);
}

void gic_clear_active_local(u32 intid)
{
	gicd_write(GICD_ICACTIVER, 1u << intid);
}

void gic_send_sgi(u32 intid, u64 mpidr)
{
	dsb(ishst);
	gicd_write(GICD_SGIR, ((u32)gic_mask_of(mpidr) << 16) | (intid & 0xf));
}

/* Group 0 as the hypervisor's (drivers/gic/gic.h): direct mode needs a
 * GICv3, which check enforces; a GICv2 build of irq_direct.c links these. */
static __noreturn void gicv2_no_group0(void)
{
	panic("GICv2: no Group 0 FIQs for direct mode");
}

bool gic_group0_ours(void)
{
	return false;
}

void gic_group0_enable(void)
{
	gicv2_no_group0();
}

u8 gic_guest_prio(u8 prio)
{
	return prio;
}

void gic_group0_set(u32 intid)
{
	(void)intid;
	gicv2_no_group0();
}

bool gic_spi_routed_here(u32 intid)
{
	(void)intid;
	gicv2_no_group0();
}

void gic_send_sgi0(u32 intid, u64 mpidr)
{
	(void)intid;
	(void)mpidr;
	gicv2_no_group0();
}

u32 gic_ack0(void)
{
	gicv2_no_group0();
}

void gic_eoi0(u32 intid)
{
	(void)intid;
	gicv2_no_group0();
}

u32 gic_lr_empty(void)
{
	return gic_hot_lr_empty();
}

u32 gic_lr_count(void)
{
	return (*gic_reg32(gicv2_gich_base, GICH_VTR) & 0x3f) + 1;
}

void gic_lr_read(u32 n, struct gic_lr *lr)
{
	u32 v = *gic_reg32(gicv2_gich_base, GICH_LR + 4 * n);

	lr->vintid = v & LR_VID_MASK;
	lr->hw = (v & LR_HW) != 0;
	lr->pintid = lr->hw ? (v >> LR_PID_SHIFT) & LR_PID_MASK : 0;
	lr->eoi_maint = !lr->hw && (v & LR_EOI);
	lr->source = lr->hw ? 0 : (u8)((v >> LR_CPUID_SHIFT) & 7);
	lr->prio = (u8)(((v >> LR_PRIO_SHIFT) & 0x1f) << 3);
	lr->state = (u8)((v >> LR_STATE_SHIFT) & 3);
}

void gic_lr_write(u32 n, const struct gic_lr *lr)
{
	u32 v = 0;

	if (lr->state) {
		v = (lr->vintid & LR_VID_MASK) | ((u32)(lr->prio >> 3) << LR_PRIO_SHIFT) |
		    ((u32)(lr->state & 3) << LR_STATE_SHIFT);
		if (lr->hw)
			v |= LR_HW | ((lr->pintid & LR_PID_MASK) << LR_PID_SHIFT);
		else
			v |= (lr->eoi_maint ? LR_EOI : 0) |
			     (lr->vintid < GIC_SGI_MAX ? (u32)(lr->source & 7) << LR_CPUID_SHIFT
			                               : 0);
	}
	*gic_reg32(gicv2_gich_base, GICH_LR + 4 * n) = v;
}

void gic_vif_ctl(bool underflow)
{
	*gic_reg32(gicv2_gich_base, GICH_HCR) = GICH_HCR_EN | (underflow ? GICH_HCR_UIE : 0);
}

void gic_vif_reset(void)
{
	for (u32 n = 0; n < gic_lr_count(); n++)
		*gic_reg32(gicv2_gich_base, GICH_LR + 4 * n) = 0;
	*gic_reg32(gicv2_gich_base, GICH_APR) = 0;
	*gic_reg32(gicv2_gich_base, GICH_VMCR) = 0;
	gic_vif_ctl(false);
}

/* Direct interrupt mode is GICv3's (the toolchain rejects it on GICv2). */
void gic_cpu_bank_write(u32 cpu, u32 bank, u32 intid)
{
	panic("gicv2: no direct interrupt mode (cpu %u, bank %x, INTID %u)", cpu, bank, intid);
}

bool gic_cpu_bank_read(u32 cpu, u32 bank, u32 intid)
{
	panic("gicv2: no direct interrupt mode (cpu %u, bank %x, INTID %u)", cpu, bank, intid);
}

static void gicv2_cpu_set_priority(u32 cpu, u32 intid, u8 prio)
{
	panic("gicv2: no direct interrupt mode (cpu %u, INTID %u, priority %u)", cpu, intid, prio);
}

void gic_vif_off(void)
{
	panic("gicv2: no direct interrupt mode");
}

const struct gic_ops gicv2_ops = {
	.version = 2,
	.init = gicv2_init,
	.cpu_init = gicv2_cpu_init,
	.nr_intids = gicv2_nr_intids,
	.enable = gicv2_enable,
	.disable = gicv2_disable,
	.set_priority = gicv2_set_priority,
	.set_edge = gicv2_set_edge,
	.route_spi = gicv2_route_spi,
	.cpu_set_priority = gicv2_cpu_set_priority,
};
