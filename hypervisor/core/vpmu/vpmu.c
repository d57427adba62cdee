/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guest's PMU. Every guest PMU access traps (MDCR_EL2.TPM, TPMCR) and
 * is emulated here on the counters the hypervisor does not reserve on the
 * vCPU's CPU (arch/aarch64/pmu.h): event counters [0, HPMN) and the cycle
 * counter unless the bandwidth regulator counts on it. A regulated CPU's
 * guest sees PMCR_EL0.N = HPMN; an unregulated CPU's every counter.
 *
 *   PMCR_EL0.E/D/DP/LC   virtual (hardware E stays 1, hardware LC/D/DP are
 *                        the guest's only while it owns the cycle counter);
 *                        P and C reset the guest's counters only
 *   PMCNTEN, PMINTEN     virtual; the hardware bits of the guest's counters
 *                        are derived (vpmu_sync), the reserved ones untouched
 *   PMOVS                the hardware bits, masked to the guest's counters
 *   PMSWINC              emulated (vpmu_swinc): from EL2 the write would
 *                        count nothing, the guest's counters being
 *                        filtered out there
 *   PMSELR               virtual; PMXEV* and PMEV*<n> reach counter n only
 *                        for n < HPMN (else RAZ/WI)
 *   event filters        P, U and the event only: the guest's counters never
 *                        count at EL2 (NSH = 0) nor in Secure state
 *   PMCEID, PMUSERENR    the hardware registers (PMUSERENR is the vCPU's:
 *                        one vCPU per CPU)
 *
 * Overflow: the PMU interrupt belongs to the hypervisor (the regulator
 * shares it): the platform's PPI, or one SPI per CPU (ZynqMP) routed to its
 * CPU. VMs see the platform's PPI either way (cfg_platform.pmu_irq: the
 * guest platform's on ZynqMP). A guest counter's overflow masks that
 * counter's hardware interrupt and injects the virtual PMU PPI once; the guest's PMOVSCLR write
 * restores the hardware enable, and re-injects if another of its overflows is pending. So a guest
 * that never clears its flags takes one EL2 interrupt per overflow, no storm.
 * Where the PMU interrupt is not wired (QEMU's xlnx-zcu102), the guest's
 * trapped read of its overflow flags injects the virtual PPI for a pending
 * overflow it was not told about.
 */
#include "core/vpmu/vpmu.h"

#include "arch/aarch64/pmu.h"
#include "core/config/config.h"
#include "core/irq/irq.h"
#include "core/vgic/vgic.h"
#include "core/vgic/vgic_regs.h" /* GICD_ICPENDR */
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "lib/features.h"
#include "lib/log.h"

#define VPMU_PMCR_RW (PMCR_E | PMCR_D | PMCR_DP | PMCR_LC)
#define VPMU_PMCR_HW (PMCR_D | PMCR_DP | PMCR_LC) /* the guest's while it owns PMCCNTR */
#define VPMU_FILTER  (PMU_FILTER_P | PMU_FILTER_U)
#define VPMU_SEL     0x1fu
#define VPMU_USERENR 0xfu /* EN, SW, CR, ER */

struct vpmu {
	u32 pmcr;   /* VPMU_PMCR_RW bits as the guest wrote them */
	u32 cnten;  /* PMCNTENSET as the guest sees it */
	u32 inten;  /* PMINTENSET as the guest sees it */
	u32 raised; /* overflows the virtual PPI was injected for, not yet cleared */
	u32 selr;
};

/* Indexed by physical CPU: one vCPU per CPU, only its CPU touches it. */
static struct vpmu vpmu_cpus[CFG_MAX_CPUS];
static u32 vpmu_ppi; /* the virtual PMU PPI; 0: no PMU interrupt */
static void (*vpmu_hyp_overflow)(u32 intid);
static bool vpmu_direct_told; /* the direct-mode PMINTENSET message was logged */

/* The INTID of v's PMU overflow interrupt: the platform's PPI through a
 * list register, or in a direct VM the spare PPI the toolchain gave it
 * (cfg_vm.pmu_irq), which the VM owns and the hypervisor sets pending on
 * the physical redistributor (docs/interrupts.md "Emulated sources"); 0:
 * none. */
static u32 vpmu_vm_irq(const struct vcpu *v)
{
	if (delivery_physical(v->irq))
		return vpmu_ppi ? v->vm->cfg->pmu_irq : 0;
	return vpmu_ppi;
}

/* The guest's counters on this CPU: bit i event counter i, bit 31 cycles. */
static u32 vpmu_mask(void)
{
	u32 n = pmu_guest_counters();
	u32 m = n >= 31 ? 0x7fffffffu : (u32)BIT(n) - 1;

	if (!(pmu_reserved_mask() & PMU_CYCLE_BIT))
		m |= PMU_CYCLE_BIT;
	return m;
}

static bool vpmu_has(u32 mask, u32 idx)
{
	return idx < 32 && (mask & (u32)BIT(idx));
}

static u64 vpmu_counter_read(u32 idx)
{
	if (idx == PMU_CYCLE_COUNTER)
		return sysreg_read(pmccntr_el0);
	return pmu_hyp_read_event(idx);
}

static void vpmu_counter_write(u32 idx, u64 val)
{
	if (idx == PMU_CYCLE_COUNTER)
		sysreg_write(pmccntr_el0, val);
	else
		pmu_hyp_write_event(idx, (u32)val);
}

/*
 * The hardware enables of the guest's counters from its virtual state:
 * counting = PMCNTEN while PMCR.E; interrupt = PMINTEN of counters whose
 * overflow flag is clear. An overflow the guest has not been told about
 * (enabled interrupt, flag set, not injected) injects the virtual PPI.
 */
static void vpmu_sync(struct vcpu *v, struct vpmu *p, u32 mask)
{
	u32 run = p->pmcr & PMCR_E ? p->cnten & mask : 0;
	u32 ovs = pmu_overflow_status(mask);
	u32 irq = p->inten & mask & ~ovs;
	u32 news = p->inten & ovs & ~p->raised;

	sysreg_write(pmcntenset_el0, run);
	sysreg_write(pmcntenclr_el0, mask & ~run);
	sysreg_write(pmintenset_el1, irq);
	sysreg_write(pmintenclr_el1, mask & ~irq);
	isb();
	if (news && vpmu_vm_irq(v)) {
		p->raised |= news;
		vgic_inject(v->vm, v, vpmu_vm_irq(v));
	}
}

/* PMU PPI: the regulator's counters first, then the guest's. */
static void vpmu_overflow(u32 intid)
{
	struct vcpu *v = vcpu_current();

	if (vpmu_hyp_overflow)
		vpmu_hyp_overflow(intid);
	if (v && vpmu_cpus[v->pcpu].inten)
		vpmu_sync(v, &vpmu_cpus[v->pcpu], vpmu_mask());
}

u32 vpmu_hw_irq(void)
{
	const struct cfg_platform *p = cfg_system.platform;

	return p->pmu_spi[cpu_index()] ? p->pmu_spi[cpu_index()] : p->pmu_irq;
}

void vpmu_init(void)
{
	const struct cfg_platform *p = cfg_system.platform;

	vpmu_ppi = p->pmu_irq;
	if (!vpmu_ppi)
		return;
	irq_register_hyp(vpmu_ppi, vpmu_overflow);
	for (u32 i = 0; i < p->ncpus; i++)
		if (p->pmu_spi[i])
			irq_register_hyp(p->pmu_spi[i], vpmu_overflow);
}

void vpmu_cpu_init(void)
{
	if (vpmu_ppi && vcpu_current())
		irq_enable_hyp_local(vpmu_hw_irq());
}

void vpmu_set_hyp_overflow(void (*fn)(u32 intid))
{
	vpmu_hyp_overflow = fn;
}

void vpmu_reset(struct vcpu *v)
{
	struct vpmu *p = &vpmu_cpus[v->pcpu];
	u32 mask = vpmu_mask();

	if (vpmu_vm_irq(v)) { /* the PMU PPI is the guest's (its vGIC state was just reset) */
		u32 intid = vpmu_vm_irq(v);
		struct virq *q;

		spin_lock(&v->vm->vgic.lock);
		q = vgic_virq(v->vm, v, intid);
		if (q)
			q->flags = VIRQ_OWNED | VIRQ_EDGE;
		if (q && delivery_physical(v->irq)) {
			/* its own physical (spare) PPI on this CPU, edge, reset */
			q->flags |= VIRQ_HW;
			gic_disable(intid);
			v->irq->raise(v, intid, false);
			gic_clear_active_local(intid);
		}
		spin_unlock(&v->vm->vgic.lock);
	}
	p->pmcr = p->cnten = p->inten = p->raised = p->selr = 0;
	sysreg_write(pmcntenclr_el0, mask);
	sysreg_write(pmintenclr_el1, mask);
	sysreg_write(pmovsclr_el0, mask);
	sysreg_write(pmuserenr_el0, 0);
	if (mask & PMU_CYCLE_BIT)
		sysreg_write(pmcr_el0, (sysreg_read(pmcr_el0) & ~VPMU_PMCR_HW) | PMCR_E);
	for (u32 i = 0; i < 32; i++) {
		if (!vpmu_has(mask, i))
			continue;
		pmu_write_filter(i, 0);
		vpmu_counter_write(i, 0);
	}
	isb();
}

static u64 vpmu_pmcr_read(const struct vpmu *p)
{
	u64 hw = sysreg_read(pmcr_el0);

	return (hw & 0xffff0000u) | ((u64)pmu_guest_counters() << 11) | p->pmcr;
}

static void vpmu_pmcr_write(struct vcpu *v, struct vpmu *p, u32 mask, u64 val)
{
	p->pmcr = (u32)val & VPMU_PMCR_RW;
	for (u32 i = 0; i < 31 && (val & PMCR_P); i++)
		if (vpmu_has(mask, i))
			vpmu_counter_write(i, 0);
	if (mask & PMU_CYCLE_BIT) {
		if (val & PMCR_C)
			vpmu_counter_write(PMU_CYCLE_COUNTER, 0);
		sysreg_write(pmcr_el0, (sysreg_read(pmcr_el0) & ~VPMU_PMCR_HW) |
		                           (val & VPMU_PMCR_HW) | PMCR_E);
	}
	vpmu_sync(v, p, mask);
}

/* PMEVTYPER<n> / PMCCFILTR (n = 31) of a guest counter. */
static void vpmu_filter(u32 idx, bool read, u64 *val)
{
	u32 keep = idx == PMU_CYCLE_COUNTER ? VPMU_FILTER : VPMU_FILTER | PMU_FILTER_EVENT;

	if (read)
		*val = pmu_read_filter(idx) & keep;
	else
		pmu_write_filter(idx, (u32)*val & keep);
}

/* Counter idx's value or filter (PMEV*<n>, PMXEV*, PMCCNTR, PMCCFILTR). */
static void vpmu_counter(u32 mask, u32 idx, bool filter, bool read, u64 *val)
{
	if (!vpmu_has(mask, idx)) {
		if (read)
			*val = 0; /* the hypervisor's, or not implemented: RAZ/WI */
		return;
	}
	if (filter)
		vpmu_filter(idx, read, val);
	else if (read)
		*val = vpmu_counter_read(idx);
	else
		vpmu_counter_write(idx, *val);
	isb();
}

/* A set/clear register pair kept in *bits (PMCNTEN, PMINTEN). */
static void vpmu_setclr(u32 *bits, u32 mask, bool set, bool read, u64 *val)
{
	if (read)
		*val = *bits;
	else if (set)
		*bits |= (u32)*val & mask;
	else
		*bits &= ~((u32)*val & mask);
}

/*
 * PMSWINC_EL0 (Arm ARM, "SW_INCR"): each of the guest's event counters
 * whose bit is written 1, that is enabled (PMCR.E and PMCNTENSET as the
 * guest set them) and programmed with event 0x00 counts one; a counter that
 * wraps sets its overflow flag (and interrupts if the guest enabled that).
 */
static void vpmu_swinc(struct vcpu *v, struct vpmu *p, u32 mask, u32 w)
{
	u32 inc = p->pmcr & PMCR_E ? w & p->cnten & mask & ~PMU_CYCLE_BIT : 0;
	u32 wrapped = 0;

	for (u32 i = 0; i < 31 && inc; i++) {
		u32 c;

		if (!(inc & BIT(i)) || (pmu_read_filter(i) & PMU_FILTER_EVENT) != 0)
			continue;
		c = (u32)pmu_hyp_read_event(i) + 1;
		pmu_hyp_write_event(i, c);
		if (!c)
			wrapped |= (u32)BIT(i);
	}
	if (wrapped) {
		sysreg_write(pmovsset_el0, wrapped);
		isb();
		vpmu_sync(v, p, mask);
	}
}

bool vpmu_access(struct vcpu *v, u32 op1, u32 crn, u32 crm, u32 op2, bool read, u64 *val)
{
	struct vpmu *p = &vpmu_cpus[v->pcpu];
	u32 mask = vpmu_mask();
	u32 w = (u32)*val & mask;

	if (op1 == 3 && crn == 14 && crm >= 8) { /* PMEVCNTR<n>, PMEVTYPER<n>, PMCCFILTR */
		u32 n = ((crm & 3) << 3) | op2;

		if (crm >= 12 || n != PMU_CYCLE_COUNTER)
			vpmu_counter(mask, n, crm >= 12, read, val);
		else if (read)
			*val = 0;
		return true;
	}
	if (op1 == 0 && crn == 9 && crm == 14) { /* PMINTENSET/CLR_EL1, PMMIR_EL1 */
		if (op2 == 1 && !read && delivery_physical(v->irq) && !vpmu_vm_irq(v)) {
			/* a direct VM without a spare PPI (the toolchain gives one
			 * where the platform has any): no list register for the
			 * virtual PPI, and the physical one is the firmware's (SDEI,
			 * the regulator). The overflow interrupt is not offered
			 * (WI, reads 0); the counters and their flags work. */
			if (w && !vpmu_direct_told) {
				vpmu_direct_told = true;
				log_info(
				    "vm %s (interrupts: direct): guest PMU overflow interrupts "
				    "are not delivered; PMINTENSET_EL1 is WI, poll PMOVSSET_EL0",
				    v->vm->cfg->name);
			}
			return true;
		}
		if (op2 == 1 || op2 == 2) {
			vpmu_setclr(&p->inten, mask, op2 == 1, read, val);
			p->raised &= p->inten;
			if (!read)
				vpmu_sync(v, p, mask);
		} else if (read) {
			*val = 0;
		}
		return true;
	}
	if (op1 != 3 || crn != 9 || crm < 12 || crm > 14)
		return false;
	switch ((crm << 4) | op2) {
	case 0xc0: /* PMCR_EL0 */
		if (read)
			*val = vpmu_pmcr_read(p);
		else
			vpmu_pmcr_write(v, p, mask, *val);
		break;
	case 0xc1: /* PMCNTENSET_EL0 */
	case 0xc2: /* PMCNTENCLR_EL0 */
		vpmu_setclr(&p->cnten, mask, op2 == 1, read, val);
		if (!read)
			vpmu_sync(v, p, mask);
		break;
	case 0xc3: /* PMOVSCLR_EL0 */
	case 0xe3: /* PMOVSSET_EL0 */
		if (read) {
			*val = pmu_overflow_status(mask);
			/* an overflow whose interrupt the CPU did not deliver (QEMU's
			 * xlnx-zcu102 does not wire the PMU SPIs): injected now */
			if ((u32)*val & p->inten & ~p->raised)
				vpmu_sync(v, p, mask);
			break;
		}
		if (op2 == 3) {
			pmu_overflow_clear(w);
			p->raised &= ~w;
		} else {
			sysreg_write(pmovsset_el0, w);
			isb();
		}
		vpmu_sync(v, p, mask);
		break;
	case 0xc4: /* PMSWINC_EL0: event counters only */
		if (!read)
			vpmu_swinc(v, p, mask, w);
		break;
	case 0xc5: /* PMSELR_EL0 */
		if (read)
			*val = p->selr;
		else
			p->selr = (u32)*val & VPMU_SEL;
		break;
	case 0xc6: /* PMCEID0_EL0 */
		*val = read ? sysreg_read(pmceid0_el0) : 0;
		break;
	case 0xc7: /* PMCEID1_EL0 */
		*val = read ? sysreg_read(pmceid1_el0) : 0;
		break;
	case 0xd0: /* PMCCNTR_EL0 */
		vpmu_counter(mask, PMU_CYCLE_COUNTER, false, read, val);
		break;
	case 0xd1: /* PMXEVTYPER_EL0: PMSELR = 31 selects PMCCFILTR */
		vpmu_counter(mask, p->selr, true, read, val);
		break;
	case 0xd2: /* PMXEVCNTR_EL0 (PMSELR = 31: unpredictable, RAZ/WI) */
		vpmu_counter(p->selr == PMU_CYCLE_COUNTER ? 0 : mask, p->selr, false, read, val);
		break;
	case 0xe0: /* PMUSERENR_EL0: EL0 accesses trap to the guest's EL1 by it */
		if (read)
			*val = sysreg_read(pmuserenr_el0) & VPMU_USERENR;
		else
			sysreg_write(pmuserenr_el0, *val & VPMU_USERENR);
		break;
	default:
		if (read)
			*val = 0;
		break;
	}
	return true;
}
