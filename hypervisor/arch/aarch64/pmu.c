/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/pmu.h"

#include "arch/aarch64/sysregs.h"

#define PMCR_N_SHIFT 11
#define PMCR_N_MASK  (0x1full << PMCR_N_SHIFT)

u32 pmu_counters(void)
{
	return (u32)((sysreg_read(pmcr_el0) & PMCR_N_MASK) >> PMCR_N_SHIFT);
}

void pmu_init_cpu(void)
{
	u32 n = pmu_counters();
	u64 hpmn = n ? n - 1 : 0;

	sysreg_write(mdcr_el2, (hpmn & MDCR_HPMN_MASK) | MDCR_TPM | MDCR_TPMCR);
	isb();
}

u64 pmu_guest_pmcr(void)
{
	return sysreg_read(pmcr_el0) & ~(PMCR_N_MASK | 0x7full);
}

#define PMCR_E  BIT(0)
#define PMCR_LC BIT(6)

/* PMEVTYPER/PMCCFILTR: P = 0, U = 0 (count EL1 and EL0), NSH = 1 (and EL2) */
#define PMU_FILTER_NSH BIT(27)
#define PMU_FILTER_ALL PMU_FILTER_NSH

u32 pmu_hyp_reserve(u32 n)
{
	u32 total = pmu_counters();
	u64 hpmn = total > n ? total - n : 0;

	if (!n)
		hpmn = total ? total - 1 : 0; /* the default partition of pmu_init_cpu */
	sysreg_write(mdcr_el2, (hpmn & MDCR_HPMN_MASK) | MDCR_TPM | MDCR_TPMCR | MDCR_HPME);
	/* PMCR_EL0.E enables the cycle counter (and, on some models, the
	 * overflow interrupt); LC = 0: the cycle counter overflows at 32 bits.
	 * Guests never see or write PMCR (TPMCR), nor enable their counters. */
	sysreg_write(pmcr_el0, (sysreg_read(pmcr_el0) & ~PMCR_LC) | PMCR_E);
	isb();
	return (u32)hpmn;
}

static void pmu_select(u32 idx)
{
	sysreg_write(pmselr_el0, idx);
	isb();
}

void pmu_hyp_start(u32 idx, u32 event, u32 value)
{
	if (idx == PMU_CYCLE_COUNTER) {
		sysreg_write(pmccfiltr_el0, PMU_FILTER_ALL);
	} else {
		pmu_select(idx);
		sysreg_write(pmxevtyper_el0, PMU_FILTER_ALL | (event & 0xffffu));
	}
	pmu_hyp_write(idx, value);
	sysreg_write(pmovsclr_el0, BIT(idx));
	sysreg_write(pmintenset_el1, BIT(idx));
	sysreg_write(pmcntenset_el0, BIT(idx));
	isb();
}

void pmu_hyp_stop(u32 idx)
{
	sysreg_write(pmcntenclr_el0, BIT(idx));
	sysreg_write(pmintenclr_el1, BIT(idx));
	sysreg_write(pmovsclr_el0, BIT(idx));
	isb();
}

u32 pmu_hyp_read_event(u32 idx)
{
	pmu_select(idx);
	return (u32)sysreg_read(pmxevcntr_el0);
}

void pmu_hyp_write_event(u32 idx, u32 value)
{
	pmu_select(idx);
	sysreg_write(pmxevcntr_el0, (u64)value);
}

u32 pmu_overflow_status(u32 mask)
{
	return (u32)sysreg_read(pmovsset_el0) & mask;
}

void pmu_overflow_clear(u32 mask)
{
	sysreg_write(pmovsclr_el0, mask);
	isb();
}
