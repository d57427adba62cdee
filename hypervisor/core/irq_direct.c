/* SPDX-License-Identifier: Apache-2.0 */
#include "core/irq_direct.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sdei.h"
#include "arch/aarch64/sysregs.h"
#include "arch/aarch64/timer.h"
#include "core/irq.h"
#include "core/vcpu.h"
#include "core/vpmu.h"
#include "drivers/gic/gic.h"
#include "lib/log.h"

extern char el2_vectors_direct[]; /* arch/aarch64/vectors.S */

/* The interrupt bound to each pending bit on this CPU (0: none). */
static u32 irq_direct_intid[ARCH_MAX_CPUS][3];

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

void irq_direct_cpu_init(void)
{
	struct vcpu *v = vcpu_current();
	const struct cfg_platform *p = cfg_system.platform;
	s64 ver, ret;

	if (!v || !v->direct)
		return;
	ver = sdei_version();
	if (ver < 0 || (ver >> 48) != 1)
		panic(
		    "vm %s has interrupts: direct, but the firmware answers SDEI_VERSION with %ld: "
		    "boot through TF-A built with SDEI_SUPPORT=1 (docs/interrupts.md)",
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

u32 irq_direct_poll(void)
{
	struct cpu *cpu = cpu_this();
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
		 * guest clears its flag (core/vpmu.c), or the PPI would fire again */
		sysreg_write(pmintenset_el1, (bits >> 32) & ~(u32)sysreg_read(pmovsset_el0));
	}
	isb();
	return ran;
}

void irq_direct_vcpu_reset(struct vcpu *v)
{
	(void)v;
	sysreg_write(S3_0_C12_C12_7, 0); /* ICC_IGRPEN1_EL1 */
	sysreg_write(S3_0_C4_C6_0, 0);   /* ICC_PMR_EL1: all masked */
	sysreg_write(S3_0_C12_C12_3, 0); /* ICC_BPR1_EL1 */
	sysreg_write(S3_0_C12_C12_4, 0); /* ICC_CTLR_EL1: EOImode 0 */
	sysreg_write(S3_0_C12_C9_0, 0);  /* ICC_AP1R0_EL1: no active priority */
	isb();
	for (u32 i = 0; i < GIC_PRIV_MAX; i++) /* the firmware's Group 0 ones: WI */
		gic_clear_active_local(i);
	/* as the virtual redistributor says after reset (vgic_vcpu_init): SGIs
	 * enabled at priority 0 (the non-secure view), the PPIs off */
	for (u32 i = 0; i < GIC_SGI_MAX; i++) {
		gic_set_priority(i, 0);
		gic_enable(i);
	}
	gic_disable(IRQ_PPI_VTIMER);
	gic_disable(IRQ_PPI_PTIMER);
	gic_vif_off();
}
