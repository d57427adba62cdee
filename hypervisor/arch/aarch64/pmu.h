/* SPDX-License-Identifier: Apache-2.0 */
/* The PMU as EL2 sees it: counter partitioning and guest traps. */
#ifndef ARCH_PMU_H
#define ARCH_PMU_H

#include "lib/types.h"

/* Number of event counters the PMU implements (PMCR_EL0.N). */
u32 pmu_counters(void);

/* Per CPU: reserves the last event counter for EL2 (MDCR_EL2.HPMN = N - 1)
 * and traps every guest PMU access (TPM, TPMCR) so the core can emulate a
 * PMU without the reserved counter and without the cycle counter. */
void pmu_init_cpu(void);

/* The PMCR_EL0 value a guest reads: the real one with N = 0 and the
 * counters disabled. */
u64 pmu_guest_pmcr(void);

#endif
