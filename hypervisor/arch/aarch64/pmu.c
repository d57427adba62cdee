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
