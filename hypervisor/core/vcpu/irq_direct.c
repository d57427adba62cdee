/* SPDX-License-Identifier: Apache-2.0 */
#include "core/vcpu/irq_direct.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sdei.h"
#include "arch/aarch64/sysregs.h" /* ISS_*, SYSREG() */
#include "arch/aarch64/timer.h"
#include "core/irq/irq.h"
#include "core/vcpu/sgi_filter.h"
#include "core/vcpu/vcpu.h"
#include "core/vgic/vgic_regs.h" /* GICD_ISPENDR, GICD_ICPENDR */
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "core/vpmu/vpmu.h"
#include "drivers/gic/gic.h"
#include "lib/log.h"

extern char el2_vectors_direct[]; /* arch/aarch64/vectors.S */

/* The interrupt bound to each pending bit on this CPU (0: none). */
static u32 irq_direct_intid[ARCH_MAX_CPUS][3];

/*
 * SGIs the guest sends. ICH_HCR_EL2.TC (set at every vCPU reset, with En
 * clear: no virtual CPU interface) traps non-secure EL1 accesses to the
 * CPU interface registers common to Group 0 and Group 1 (Arm IHI 0069,
 * ICH_HCR_EL2.TC; QEMU arm_gicv3_cpuif.c gicv3_irqfiq_access): the SGI
 * generation registers, ICC_PMR_EL1, ICC_CTLR_EL1, ICC_RPR_EL1 and
 * ICC_DIR_EL1. The Group 1 ones (IAR1, EOIR1, HPPIR1, BPR1, AP1Rn,
 * IGRPEN1) stay untrapped: receiving costs no exit.
 */
#define ICH_HCR_TC    BIT(10)
#define ICH_HCR_TALL0 BIT(11) /* the Group 0 registers, with FMO set (FIQ mode) */

/*
 * How this system's direct CPUs receive the hypervisor's events, chosen
 * at the first one's init: Group 0 FIQs to EL2 when the GIC has one
 * security state (gic_group0_ours: no EL3, QEMU virt booted by -kernel),
 * otherwise the secure firmware's SDEI (docs/interrupts.md).
 */
static bool irq_direct_fiq;

#define SR_ICC_PMR     SYSREG(3, 0, 4, 6, 0)
#define SR_ICC_DIR     SYSREG(3, 0, 12, 11, 1)
#define SR_ICC_RPR     SYSREG(3, 0, 12, 11, 3)
#define SR_ICC_SGI1R   SYSREG(3, 0, 12, 11, 5)
#define SR_ICC_ASGI1R  SYSREG(3, 0, 12, 11, 6)
#define SR_ICC_SGI0R   SYSREG(3, 0, 12, 11, 7)
#define SR_ICC_CTLR    SYSREG(3, 0, 12, 12, 4)
#define SR_ICC_IGRPEN0 SYSREG(3, 0, 12, 12, 6)
/* ICC_IAR0, EOIR0, HPPIR0, BPR0, AP0R0-3_EL1: op0 3, op1 0, CRn 12, CRm 8 */
#define SR_ICC_GRP0(reg) (((reg) & ~(u64)SYSREG(0, 0, 0, 0, 7)) == SYSREG(3, 0, 12, 8, 0))

/* ICC_CTLR_EL1 bits a guest may set (the rest read-only or the firmware's) */
#define ICC_CTLR_GUEST (BIT(0) | BIT(1)) /* CBPR, EOImode */

/* Per CPU: the physical MPIDRs of its VM's CPUs (index = vCPU index),
 * how many, and the SGI writes dropped (a reserved SGI ID, a CPU outside
 * the VM named, ICC_SGI0R_EL1 or ICC_ASGI1R_EL1). */
static u64 irq_direct_peer[ARCH_MAX_CPUS][CFG_MAX_CPUS];
static u32 irq_direct_npeers[ARCH_MAX_CPUS];
static u64 irq_direct_dropped[ARCH_MAX_CPUS];
static u8 irq_direct_logged[ARCH_MAX_CPUS]; /* BIT(kind) once logged */

static void irq_direct_bind(struct vcpu *v, u32 intid, u32 bit)
{
	s64 ev = sdei_bind(intid);
	s64 ret;

	if (ev < 0)
		panic("vm %s (interrupts: direct): SDEI cannot bind INTID %u (%ld): the firmware "
		      "needs "
		      "dynamic private event slots (docs/interrupts.md)",
		      v->vm->cfg->name, intid, ev);
	ret = sdei_register_enable((u32)ev, bit);
	if (ret < 0)
		panic("vm %s (interrupts: direct): SDEI event %ld (INTID %u) not registered (%ld)",
		      v->vm->cfg->name, ev, intid, ret);
	irq_direct_intid[cpu_index()][bit] = intid;
}

/* FIQ mode: the hypervisor's interrupts of this CPU (the kick SGI, its
 * PPIs, the SPIs routed here: the console's, the SMMUs'...) in Group 0,
 * taken at EL2 as FIQs (HCR_EL2.FMO, irq_direct_vcpu_reset), its Group 1
 * left to the guest. */
static void irq_direct_fiq_init(struct vcpu *v)
{
	const struct cfg_platform *p = cfg_system.platform;

	gic_disable(p->gic_maint_irq);
	gic_disable(IRQ_PPI_VTIMER);
	gic_disable(IRQ_PPI_PTIMER);
	for (u32 i = 0; i < v->vm->nvcpus; i++)
		irq_direct_peer[cpu_index()][i] = v->vm->vcpus[i]->pcpu_mpidr;
	irq_direct_npeers[cpu_index()] = v->vm->nvcpus;
	gic_group0_enable();
	gic_group0_set(IRQ_SGI_KICK_FIQ);
	gic_enable(IRQ_SGI_KICK_FIQ);
	for (u32 i = GIC_SGI_MAX; i < gic_nr_intids(); i++) {
		if (!irq_is_hyp(i) || (i >= GIC_PRIV_MAX && !gic_spi_routed_here(i)))
			continue;
		gic_group0_set(i);
		gic_enable(i);
	}
	sysreg_write(S3_0_C12_C8_3, 0);  /* ICC_BPR0_EL1: every priority preempts */
	sysreg_write(S3_0_C12_C12_6, 1); /* ICC_IGRPEN0_EL1 */
	sysreg_write(vbar_el2, (u64)(uintptr_t)el2_vectors_direct);
	isb();
	log_info("cpu %u: interrupts direct, the hypervisor's as Group 0 FIQs", cpu_index());
}

void irq_direct_cpu_init(void)
{
	struct vcpu *v = vcpu_current();
	const struct cfg_platform *p = cfg_system.platform;
	s64 ver, ret;

	if (!v || v->irq != &irq_direct_delivery)
		return;
	irq_direct_fiq = gic_group0_ours();
	if (irq_direct_fiq) {
		irq_direct_fiq_init(v);
		return;
	}
	ver = sdei_version();
	if (ver < 0 || (ver >> 48) != 1)
		panic("vm %s has interrupts: direct, but the GIC has two security states (Group 0 "
		      "is the firmware's) and the firmware answers SDEI_VERSION with %ld: boot "
		      "without EL3, or through TF-A built with SDEI_SUPPORT=1 (docs/interrupts.md)",
		      v->vm->cfg->name, ver);
	/* Group 1 here is the guest's: nothing of the hypervisor stays enabled */
	gic_disable(IRQ_SGI_KICK);
	gic_disable(p->gic_maint_irq);
	gic_disable(IRQ_PPI_VTIMER);
	gic_disable(IRQ_PPI_PTIMER);
	ret = sdei_register_enable(SDEI_EVENT_SOFTWARE, SDEI_BIT_KICK);
	if (ret < 0)
		panic("vm %s (interrupts: direct): SDEI event 0 not registered (%ld)",
		      v->vm->cfg->name, ret);
	irq_direct_bind(v, p->timer_hyp_irq, SDEI_BIT_TIMER);
	for (u32 i = 0; i < v->vm->nvcpus; i++)
		irq_direct_peer[cpu_index()][i] = v->vm->vcpus[i]->pcpu_mpidr;
	irq_direct_npeers[cpu_index()] = v->vm->nvcpus;
	if (p->pmu_irq && !p->pmu_spi[cpu_index()])
		irq_direct_bind(v, vpmu_hw_irq(), SDEI_BIT_PMU);
	sysreg_write(vbar_el2, (u64)(uintptr_t)el2_vectors_direct);
	isb();
	ret = sdei_unmask();
	if (ret < 0)
		panic("vm %s (interrupts: direct): SDEI_PE_UNMASK failed (%ld)", v->vm->cfg->name,
		      ret);
	log_info("cpu %u: interrupts direct (SDEI %ld.%ld), EL2 timer and PMU through SDEI",
	         cpu_index(), ver >> 48, (ver >> 32) & 0xffff);
}

/* A Group 0 interrupt acknowledged (FIQ mode): its handler, then its
 * end. The PMU's level PPI as sdei_entry does it: the overflowed
 * counters' enables off around the handler, back for those it cleared. */
static u32 irq_direct_fiq_one(u32 intid)
{
	u32 ran;

	if (intid == IRQ_SGI_KICK_FIQ) { /* the caller's exit path looks at the state */
		gic_eoi0(intid);
		return 0;
	}
	if (intid == vpmu_hw_irq()) {
		u64 ovs = (u32)sysreg_read(pmovsset_el0);

		sysreg_write(pmintenclr_el1, ovs);
		ran = irq_call_hyp(intid);
		sysreg_write(pmintenset_el1, ovs & ~(u32)sysreg_read(pmovsset_el0));
	} else {
		ran = irq_call_hyp(intid);
	}
	gic_eoi0(intid);
	return ran;
}

u32 irq_direct_fiq_from(u32 intid)
{
	u32 ran = 0;

	for (; intid < GIC_MAX_INTID; intid = gic_ack0())
		ran += irq_direct_fiq_one(intid);
	return ran;
}

u32 irq_direct_poll(void)
{
	struct cpu *cpu = cpu_this();

	if (irq_direct_fiq)
		return irq_direct_fiq_from(gic_ack0());
	u64 bits = __atomic_exchange_n(&cpu->sdei_pending, 0, __ATOMIC_ACQ_REL);
	u32 ran = 0;
	u32 *intid = irq_direct_intid[cpu->index];

	/* SDEI_BIT_KICK: nothing here, the caller's exit path looks at the state */
	if ((bits & BIT(SDEI_BIT_TIMER)) && irq_call_hyp(intid[SDEI_BIT_TIMER])) {
		u64 ctl = sysreg_read(cnthp_ctl_el2);

		ran++;
		if (ctl &
		    CNTHP_CTL_IMASK) /* sdei_entry's mask: still armed, as the handler left it */
			sysreg_write(cnthp_ctl_el2, ctl & ~CNTHP_CTL_IMASK);
	}
	if ((bits & BIT(SDEI_BIT_PMU)) && intid[SDEI_BIT_PMU]) {
		ran += irq_call_hyp(intid[SDEI_BIT_PMU]);
		/* sdei_entry cleared them: back for the overflows the handlers
		 * cleared (the regulator's); a guest counter's stays off until the
		 * guest clears its flag (core/vpmu/vpmu.c), or the PPI would fire again */
		sysreg_write(pmintenset_el1, (bits >> 32) & ~(u32)sysreg_read(pmovsset_el0));
	}
	isb();
	return ran;
}

void irq_direct_take_back(void)
{
	/* ICC_CTLR_EL1.PRIbits - 1: with n bits, AP1R bit k is priority k << (8 - n) */
	u32 n = (u32)((sysreg_read(S3_0_C12_C12_4) >> 8) & 7) + 1;
	u32 below = 0x80u >> (8 - n); /* the AP1R bits of priorities below 0x80 */

	sysreg_write(S3_0_C12_C9_0,
	             below < 32 ? sysreg_read(S3_0_C12_C9_0) & ~(BIT(below) - 1) & 0xffffffffull
	                        : 0); /* ICC_AP1R0_EL1, bit 63 the NMI's */
	if (below > 32)
		sysreg_write(S3_0_C12_C9_1, 0); /* ICC_AP1R1_EL1 */
	if (below > 64) {
		sysreg_write(S3_0_C12_C9_2, 0);
		sysreg_write(S3_0_C12_C9_3, 0);
	}
	isb();
	irq_direct_poll();
}

/* Handles the SDEI events taken meanwhile, then parks, pauses or stalls
 * the vCPU as needed: no list registers to flush. */
void irq_direct_exit_path(struct vcpu *v)
{
	irq_direct_poll();
	if (vcpu_must_wait(v, true))
		vcpu_exit_wait(v);
}

/* A kick is the Group 0 SGI 15 (FIQ mode) or the firmware's software
 * event 0 (SDEI_EVENT_SIGNAL): the guest owns that CPU's Group 1. */
static void irq_direct_kick(u64 mpidr)
{
	if (gic_group0_ours()) /* (the sender may run before any direct CPU's init) */
		gic_send_sgi0(IRQ_SGI_KICK_FIQ, mpidr);
	else
		sdei_signal(mpidr);
}

/* The VM's own physical interrupt, pending or not at the GIC: the
 * redistributor of t's CPU for a private one. */
static void irq_direct_raise(const struct vcpu *t, u32 intid, bool pend)
{
	gic_cpu_bank_write(t ? t->pcpu : 0, pend ? GICD_ISPENDR : GICD_ICPENDR, intid);
}

/* Resets this CPU's physical CPU interface to what a guest finds at reset
 * (vcpu_boot of a direct vCPU): everything masked and inactive. */
static void irq_direct_vcpu_reset(struct vcpu *v)
{
	(void)v;
	sysreg_write(S3_0_C12_C12_7, 0);               /* ICC_IGRPEN1_EL1 */
	sysreg_write(S3_0_C4_C6_0, gic_guest_prio(0)); /* ICC_PMR_EL1: the guest's all masked */
	sysreg_write(S3_0_C12_C12_3, 0);               /* ICC_BPR1_EL1 */
	sysreg_write(S3_0_C12_C12_4, 0);               /* ICC_CTLR_EL1: EOImode 0 */
	sysreg_write(S3_0_C12_C9_0, 0);                /* ICC_AP1R0_EL1: no active priority */
	isb();
	for (u32 i = 0; i < GIC_PRIV_MAX; i++) /* the firmware's Group 0 ones: WI */
		if (!irq_direct_fiq || !irq_is_hyp(i))
			gic_clear_active_local(i);
	/* as the virtual redistributor says after reset (vgic_vcpu_init): SGIs
	 * enabled at priority 0 (the non-secure view), the PPIs off; SGI 15
	 * is the hypervisor's kick in FIQ mode */
	for (u32 i = 0; i < GIC_SGI_MAX - (irq_direct_fiq ? 1 : 0); i++) {
		gic_set_priority(i, gic_guest_prio(0));
		gic_enable(i);
	}
	gic_disable(IRQ_PPI_VTIMER);
	gic_disable(IRQ_PPI_PTIMER);
	/* ICH_HCR_EL2: the traps above (and the Group 0 registers'), En 0 */
	sysreg_write(S3_4_C12_C11_0, ICH_HCR_TC | (irq_direct_fiq ? ICH_HCR_TALL0 : 0));
	/* HCR_EL2 (vcpu_boot wrote it without IMO/FMO): FIQs to EL2 in FIQ mode */
	if (irq_direct_fiq)
		sysreg_write(hcr_el2, sysreg_read(hcr_el2) | HCR_FMO);
	isb();
}

/* WFI at EL2 with the guest's Group 1 interrupts masked (ICC_PMR_EL1),
 * restored after: a pending one would otherwise end the wait at once (the
 * CPU interface signals it whatever the routing) and the EL2 wait loops
 * (stall, pause, park) would spin. The firmware's Group 0 (SDEI events:
 * period timer, overflow, kicks) still ends it. */
static void irq_direct_wfi(void)
{
	/* the non-secure view: a write of 0 is 0x80, below every non-secure
	 * priority and above the firmware's (docs/interrupts.md); the value
	 * read is the guest's, written back as it was */
	u64 pmr = sysreg_read(S3_0_C4_C6_0);

	sysreg_write(S3_0_C4_C6_0, gic_guest_prio(0));
	isb();
	wfi();
	sysreg_write(S3_0_C4_C6_0, pmr);
	isb();
}

static const char *const irq_direct_drop_what[] = {
	"ICC_SGI1R_EL1 naming SGI 0 (the hypervisor's kick)",
	"ICC_SGI1R_EL1 naming a CPU outside the VM",
	"ICC_SGI0R_EL1",
	"ICC_ASGI1R_EL1",
	"ICC_SGI1R_EL1 naming SGI 15 (the hypervisor's kick)",
};

/* A priority as the guest reads it: in FIQ mode its writes went through
 * gic_guest_prio (>> 1 | 0x80), read back << 1; 0xff (idle) stays. */
static u64 irq_direct_ns_prio(u64 prio)
{
	return irq_direct_fiq && prio != 0xff ? (prio << 1) & 0xff : prio;
}

/* Counted; logged once per CPU and kind (a guest could flood the console). */
static void irq_direct_drop(const struct vcpu *v, u32 what, u64 val)
{
	u32 c = cpu_index();

	irq_direct_dropped[c]++;
	if (irq_direct_logged[c] & BIT(what))
		return;
	irq_direct_logged[c] |= (u8)BIT(what);
	log_info("vm %s vcpu %u: %s (%lx): dropped or filtered, SGIs go to the VM's own CPUs "
	         "only (further ones counted)",
	         v->vm->cfg->name, v->idx, irq_direct_drop_what[what], val);
}

/* irq_direct_delivery.sgi_dropped: the kick SGI, a CPU outside the VM named,
 * ICC_SGI0R_EL1 or ICC_ASGI1R_EL1, one per trapped write */
static u64 irq_direct_sgi_dropped(const struct vm *vm)
{
	u64 n = 0;

	for (u32 i = 0; i < vm->nvcpus; i++)
		n += __atomic_load_n(&irq_direct_dropped[vm->vcpus[i]->pcpu], __ATOMIC_RELAXED);
	return n;
}

const struct vcpu_delivery irq_direct_delivery = {
	.hcr_clear = HCR_IMO | HCR_FMO,
	.physical = true,
	.poll = irq_direct_poll,
	.wait = irq_direct_wfi,
	.exit_path = irq_direct_exit_path,
	.enter = guest_enter_direct,
	.reset = irq_direct_vcpu_reset,
	.kick = irq_direct_kick,
	.raise = irq_direct_raise,
	.sgi_dropped = irq_direct_sgi_dropped,
};

/* A write of ICC_SGI1R_EL1: the SGI issued from EL2 at the CPUs of the
 * VM it names, nowhere else. */
static void irq_direct_sgi1r(const struct vcpu *v, u64 val)
{
	u32 c = cpu_index();
	u32 intid = SGI_FILTER_INTID(val);
	const u64 *peer = irq_direct_peer[c];
	u32 t;

	if (intid == (irq_direct_fiq ? IRQ_SGI_KICK_FIQ : IRQ_SGI_KICK)) {
		irq_direct_drop(v, irq_direct_fiq ? 4 : 0, val);
		return;
	}
	if (sgi_filter_foreign(peer, irq_direct_npeers[c], val))
		irq_direct_drop(v, 1, val);
	t = sgi_filter_targets(peer, irq_direct_npeers[c], v->idx, val);
	for (; t; t &= t - 1)
		gic_send_sgi(intid, peer[__builtin_ctz(t)]);
}

bool irq_direct_sysreg(struct vcpu *v, u64 iss)
{
	u64 reg = ISS_SYSREG(iss);
	u32 rt = ISS_RT(iss);
	u64 val = rt == 31 ? 0 : v->frame->x[rt];
	u64 out;

	if (SR_ICC_GRP0(reg) || reg == SR_ICC_IGRPEN0) {
		/* FIQ mode (ICH_HCR_EL2.TALL0): Group 0 is the hypervisor's; the
		 * guest sees none (IAR0/HPPIR0 spurious, the rest 0) and writes nothing */
		if (ISS_READ(iss) && rt != 31)
			v->frame->x[rt] = reg == SR_ICC_IGRPEN0 || (reg & 7) > 2 ? 0 : GIC_SPURIOUS;
		if (!ISS_READ(iss) && !(irq_direct_logged[cpu_index()] & BIT(5))) {
			irq_direct_logged[cpu_index()] |= (u8)BIT(5);
			log_info("vm %s vcpu %u: a Group 0 CPU interface register written (%lx): "
			         "ignored, Group 0 is the hypervisor's (further ones too)",
			         v->vm->cfg->name, v->idx, val);
		}
		return true;
	}
	if (ISS_READ(iss)) {
		if (reg == SR_ICC_PMR)
			out = irq_direct_ns_prio(sysreg_read(S3_0_C4_C6_0));
		else if (reg == SR_ICC_CTLR)
			out = sysreg_read(S3_0_C12_C12_4);
		else if (reg == SR_ICC_RPR)
			out = irq_direct_ns_prio(sysreg_read(S3_0_C12_C11_3));
		else
			return false; /* write-only: undefined (core/trap/sysreg.c) */
		if (rt != 31)
			v->frame->x[rt] = out;
		return true;
	}
	switch (reg) {
	case SR_ICC_SGI1R:
		irq_direct_sgi1r(v, val);
		return true;
	case SR_ICC_SGI0R:
		irq_direct_drop(v, 2, val);
		return true;
	case SR_ICC_ASGI1R:
		irq_direct_drop(v, 3, val);
		return true;
	case SR_ICC_PMR: /* a non-secure write: the lower half (value >> 1 | 0x80) */
		sysreg_write(S3_0_C4_C6_0, gic_guest_prio(val & 0xff));
		return true;
	case SR_ICC_CTLR:
		sysreg_write(S3_0_C12_C12_4, (sysreg_read(S3_0_C12_C12_4) & ~(u64)ICC_CTLR_GUEST) |
		                                 (val & ICC_CTLR_GUEST));
		return true;
	case SR_ICC_DIR:
		sysreg_write(S3_0_C12_C11_1, val & 0xffffff);
		return true;
	default:
		return false;
	}
}
