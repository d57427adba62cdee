/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GICv3 virtual CPU interface's IRQ line in software (vgic_v3_virq.h),
 * built only for a platform with gic.virq: software.
 *
 * Why: QEMU 10.0's imx8mp-evk connects the GIC's IRQ and FIQ outputs to the
 * CPUs and not its virtual IRQ/FIQ outputs (hw/arm/fsl-imx8mp.c
 * fsl_imx8mp_realize: ARM_CPU_IRQ, ARM_CPU_FIQ only). The CPU interface
 * computes the line (hw/intc/arm_gicv3_cpuif.c
 * gicv3_cpuif_virt_irq_fiq_update) and raises nothing, so no list register
 * ever interrupts the guest. The CPU's virtual IRQ is the OR of that line
 * and HCR_EL2.VI (target/arm/cpu.c arm_cpu_update_virq), and the
 * maintenance interrupt is connected (fsl-imx8mp.c:
 * gicv3-maintenance-interrupt), but no maintenance condition reports an
 * acknowledge with other interrupts still pending or the priority drop of a
 * HW interrupt's EOI; a trap reports both.
 *
 * How: at every entry to the guest (vgic_flush, after the list registers
 * are filled; on the hot path, vgic_fast.h, after one is) HCR_EL2.VI is set
 * exactly when the interface would signal: a pending list register (all
 * are Group 1) with Group 1 enabled (ICH_VMCR_EL2.VENG1), its priority below
 * the mask (VPMR) and its group priority above the running priority (the
 * active priorities, ICH_AP0Rn/AP1Rn_EL2), as CanSignalVirtualInterrupt()
 * and QEMU's icv_hppi_can_preempt. At every exit (vgic_sync) VI is cleared,
 * so that no WFI of the hypervisor's sees a virtual interrupt pending
 * (QEMU's would not sleep). Only the guest's Group 1 registers and ICC_DIR_EL1
 * change that while it runs; ICH_HCR_EL2.TALL1 and TDIR (drivers/gic/gicv3.c)
 * trap them and they are emulated below on the list registers, VMCR and the
 * active-priority registers, as the architecture's pseudocode does (QEMU:
 * icv_iar_read, icv_eoir_write, icv_dir_write), each trap leaving through
 * the exit path, which sets VI again. Not followed: ICC_PMR_EL1 (it traps
 * only with ICH_HCR_EL2.TC, with CTLR and RPR): a guest that lowers its mask
 * sees an interrupt the mask held back at its next exit; one that raises it
 * may take an interrupt whose acknowledge reads 1023 (spurious).
 *
 * The list registers' shadow (struct vgic_cpu lr[]) follows the states set
 * here, as vgic_sync would read them back.
 */
#include "core/vgic/vgic_v3_virq.h"

#include "arch/aarch64/sysregs.h"
#include "core/vm/vcpu.h"
#include "drivers/gic/gic.h"

/* ICH_VMCR_EL2 */
#define VMCR_VENG1       BIT(1)
#define VMCR_VCBPR       BIT(4)
#define VMCR_VEOIM       BIT(9)
#define VMCR_VBPR1_SHIFT 18
#define VMCR_VBPR0_SHIFT 21
#define VMCR_VPMR_SHIFT  24

#define SR_ICC_AP1R0   SYSREG(3, 0, 12, 9, 0)
#define SR_ICC_AP1R3   SYSREG(3, 0, 12, 9, 3)
#define SR_ICC_DIR     SYSREG(3, 0, 12, 11, 1)
#define SR_ICC_IAR1    SYSREG(3, 0, 12, 12, 0)
#define SR_ICC_EOIR1   SYSREG(3, 0, 12, 12, 1)
#define SR_ICC_HPPIR1  SYSREG(3, 0, 12, 12, 2)
#define SR_ICC_BPR1    SYSREG(3, 0, 12, 12, 3)
#define SR_ICC_IGRPEN1 SYSREG(3, 0, 12, 12, 7)

#define SOFT_NONE     0xffu /* no list register; the idle priority */
#define INTID_SPECIAL 1020  /* 1020-1023 */

/* What every decision reads: VMCR, the implemented preemption bits
 * (ICH_VTR_EL2.PREbits + 1, 5-7) and the Group 1 priority-group mask. */
struct virq_ctx {
	u64 vmcr;
	u32 pre;
	u32 mask;
};

static struct virq_ctx virq_ctx(void)
{
	struct virq_ctx c;
	u32 bpr;

	c.vmcr = sysreg_read(S3_4_C12_C11_7); /* ICH_VMCR_EL2 */
	c.pre = (u32)((sysreg_read(S3_4_C12_C11_1) >> 26) & 7) + 1;
	/* VGroupBits(): VBPR1 - 1 group-priority bits are dropped (the
	 * minimum VBPR1 is 8 - pre), or VBPR0 + 1 with VCBPR */
	if (c.vmcr & VMCR_VCBPR) {
		bpr = (u32)(c.vmcr >> VMCR_VBPR0_SHIFT) & 7;
		bpr = (bpr < 7 - c.pre ? 7 - c.pre : bpr) + 1;
	} else {
		bpr = (u32)(c.vmcr >> VMCR_VBPR1_SHIFT) & 7;
		bpr = bpr < 8 - c.pre ? 8 - c.pre : bpr;
	}
	c.mask = (0xffu << bpr) & 0xff;
	return c;
}

#define APR_CASE(k, crm, op2)                                    \
	case k:                                                  \
		if (write)                                       \
			sysreg_write(S3_4_C12_##crm##_##op2, v); \
		else                                             \
			v = sysreg_read(S3_4_C12_##crm##_##op2); \
		break

/* ICH_AP0R<n>_EL2 (group 0) or ICH_AP1R<n>_EL2 (group 1), n 0-3. */
static u64 virq_apr(u32 group, u32 n, bool write, u64 v)
{
	switch (group * 4 + n) {
		APR_CASE(0, C8, 0);
		APR_CASE(1, C8, 1);
		APR_CASE(2, C8, 2);
		APR_CASE(3, C8, 3);
		APR_CASE(4, C9, 0);
		APR_CASE(5, C9, 1);
		APR_CASE(6, C9, 2);
		APR_CASE(7, C9, 3);
	default:
		break;
	}
	return v;
}

/* The active-priority registers per group: 1, 2 or 4 (5, 6, 7 bits). */
static u32 virq_nr_aprs(const struct virq_ctx *c)
{
	return 1u << (c->pre - 5);
}

/* The running priority (the lowest active-priority bit of either group),
 * SOFT_NONE when nothing is active; drop: clear that bit (group 0's first
 * at equal priority), the priority drop of an EOI. */
static u32 virq_running(const struct virq_ctx *c, bool drop)
{
	for (u32 n = 0; n < virq_nr_aprs(c); n++) {
		u32 a0 = (u32)virq_apr(0, n, false, 0);
		u32 a1 = (u32)virq_apr(1, n, false, 0);
		u32 bit0 = a0 ? (u32)__builtin_ctz(a0) : 32,
		    bit1 = a1 ? (u32)__builtin_ctz(a1) : 32;
		u32 bit = bit0 <= bit1 ? bit0 : bit1;

		if (bit == 32)
			continue;
		if (drop && bit0 <= bit1)
			virq_apr(0, n, true, a0 & (a0 - 1));
		else if (drop)
			virq_apr(1, n, true, a1 & (a1 - 1));
		return ((n * 32 + bit) << (8 - c->pre)) & 0xff;
	}
	return SOFT_NONE;
}

/* The highest-priority pending list register of v (lowest priority value,
 * the first at equal ones; priority 0xff never), SOFT_NONE without one or
 * with Group 1 disabled; *lr its value. */
static u32 virq_best(const struct vcpu *v, const struct virq_ctx *c, struct gic_lr *lr)
{
	u32 best = SOFT_NONE, prio = 0xff;

	if (!(c->vmcr & VMCR_VENG1))
		return SOFT_NONE;
	for (u32 held = v->vgic.lr_used & ~gic_lr_empty(); held; held &= held - 1) {
		u32 n = (u32)__builtin_ctz(held);
		struct gic_lr cur;

		gic_lr_read(n, &cur);
		if (cur.state == GIC_LR_PENDING && cur.prio < prio) {
			prio = cur.prio;
			best = n;
			*lr = cur;
		}
	}
	return best;
}

/* Whether the interface signals lr (pending, Group 1 enabled): below the
 * priority mask and preempting the running priority's group. */
static bool virq_signals(const struct virq_ctx *c, const struct gic_lr *lr)
{
	u32 running = virq_running(c, false);

	if (lr->prio >= (u32)(c->vmcr >> VMCR_VPMR_SHIFT))
		return false;
	return running == SOFT_NONE || (lr->prio & c->mask) < (running & c->mask);
}

static void virq_lr_set(struct vcpu *v, u32 n, struct gic_lr *lr, u8 state)
{
	lr->state = state;
	gic_lr_write(n, lr);
	v->vgic.lr[n].state = state;
}

void vgic_v3_virq_exit(void)
{
	u64 hcr = sysreg_read(hcr_el2);

	if (hcr & HCR_VI)
		sysreg_write(hcr_el2, hcr & ~HCR_VI);
}

void vgic_v3_virq_line(struct vcpu *v)
{
	u64 hcr = sysreg_read(hcr_el2);
	struct virq_ctx c;
	struct gic_lr lr;

	/* Clear since the exit (vgic_sync), or set at an earlier entry for a
	 * list register the guest has not acknowledged since (that would have
	 * trapped): only a rise is left to find. */
	if ((hcr & HCR_VI) || !(v->vgic.lr_used & ~gic_lr_empty()))
		return;
	c = virq_ctx();
	if (virq_best(v, &c, &lr) != SOFT_NONE && virq_signals(&c, &lr))
		sysreg_write(hcr_el2, hcr | HCR_VI);
}

/* ICV_IAR1_EL1: the interrupt the interface signals, made active (its
 * group priority's active bit set), or 1023. */
static u64 virq_ack(struct vcpu *v, const struct virq_ctx *c)
{
	struct gic_lr lr;
	u32 n = virq_best(v, c, &lr), bit;

	if (n == SOFT_NONE || !virq_signals(c, &lr))
		return GIC_SPURIOUS;
	if (lr.vintid >= INTID_SPECIAL && lr.vintid <= GIC_SPURIOUS) {
		virq_lr_set(v, n, &lr, 0); /* pending to invalid, its number returned */
		return lr.vintid;
	}
	bit = (lr.prio & c->mask) >> (8 - c->pre);
	virq_apr(1, bit / 32, true, virq_apr(1, bit / 32, false, 0) | (1ull << (bit % 32)));
	virq_lr_set(v, n, &lr, GIC_LR_ACTIVE);
	return lr.vintid;
}

/* Deactivates the active interrupt intid (its list register's active state;
 * with the HW bit the physical interrupt too). Priority: the group priority
 * an EOI dropped, which must be the interrupt's; SOFT_NONE: any (DIR). */
static void virq_deactivate(struct vcpu *v, const struct virq_ctx *c, u32 intid, u32 prio)
{
	for (u32 held = v->vgic.lr_used & ~gic_lr_empty(); held; held &= held - 1) {
		u32 n = (u32)__builtin_ctz(held);
		struct gic_lr lr;

		gic_lr_read(n, &lr);
		if (!(lr.state & GIC_LR_ACTIVE) || lr.vintid != intid)
			continue;
		if (prio != SOFT_NONE && (lr.prio & c->mask) != prio)
			return;
		if (lr.hw && lr.pintid < INTID_SPECIAL)
			gic_deactivate(lr.pintid);
		virq_lr_set(v, n, &lr, lr.state & (u8)~GIC_LR_ACTIVE);
		return;
	}
}

static u64 virq_vmcr_field(const struct virq_ctx *c, u32 shift, bool write, u64 val, u32 bits)
{
	u64 m = ((1ull << bits) - 1) << shift;

	if (write)
		sysreg_write(S3_4_C12_C11_7, (c->vmcr & ~m) | ((val << shift) & m));
	return (c->vmcr & m) >> shift;
}

bool vgic_v3_virq_icv(struct vcpu *v, u64 reg, bool read, u64 *val)
{
	struct virq_ctx c = virq_ctx();
	u32 intid = (u32)(*val & 0xffffff);
	struct gic_lr lr;
	u32 n, prio;

	if (reg == SR_ICC_IAR1 && read) {
		*val = virq_ack(v, &c);
	} else if (reg == SR_ICC_EOIR1 && !read) {
		if (intid >= INTID_SPECIAL && intid <= GIC_SPURIOUS)
			return true;
		prio = virq_running(&c, true);
		if (prio != SOFT_NONE && !(c.vmcr & VMCR_VEOIM))
			virq_deactivate(v, &c, intid, prio);
	} else if (reg == SR_ICC_DIR && !read) {
		if (intid < INTID_SPECIAL && (c.vmcr & VMCR_VEOIM))
			virq_deactivate(v, &c, intid, SOFT_NONE);
	} else if (reg == SR_ICC_HPPIR1 && read) {
		n = virq_best(v, &c, &lr);
		*val = n == SOFT_NONE ? GIC_SPURIOUS : lr.vintid;
	} else if (reg == SR_ICC_BPR1) {
		/* with VCBPR: VBPR0 + 1 (at most 7) read, writes ignored */
		if (c.vmcr & VMCR_VCBPR) {
			u64 b0 = virq_vmcr_field(&c, VMCR_VBPR0_SHIFT, false, 0, 3) + 1;
			*val = read ? (b0 > 7 ? 7 : b0) : *val;
		} else if (read) {
			*val = virq_vmcr_field(&c, VMCR_VBPR1_SHIFT, false, 0, 3);
		} else {
			u64 b = *val & 7;
			virq_vmcr_field(&c, VMCR_VBPR1_SHIFT, true, b < 8 - c.pre ? 8 - c.pre : b,
			                3);
		}
	} else if (reg == SR_ICC_IGRPEN1) {
		*val = virq_vmcr_field(&c, 1, !read, *val & 1, 1);
	} else if (reg >= SR_ICC_AP1R0 && reg <= SR_ICC_AP1R3) {
		n = (u32)(reg - SR_ICC_AP1R0);
		if (n >= virq_nr_aprs(&c)) /* not implemented: RAZ/WI */
			*val = 0;
		else
			*val = virq_apr(1, n, !read, *val);
	} else {
		return false;
	}
	return true;
}
