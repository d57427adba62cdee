/* SPDX-License-Identifier: Apache-2.0 */
/* The PMU as EL2 sees it: counter partitioning and guest traps. */
#ifndef ARCH_PMU_H
#define ARCH_PMU_H

#include "arch/aarch64/sysregs.h"
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

/*
 * Counters the hypervisor keeps for itself (the bandwidth regulator). A
 * counter is named by its index: an event counter at or above HPMN, or
 * PMU_CYCLE_COUNTER for PMCCNTR_EL0. Hypervisor counters count at EL0, EL1
 * and EL2 (what the hypervisor does for a guest is charged to it), in 32
 * bits: they overflow from 0xffffffff to 0, raising the PMU interrupt when
 * enabled. Per CPU, called at EL2 only.
 */
#define PMU_CYCLE_COUNTER 31u

/* Reserves the last n event counters for EL2 (MDCR_EL2.HPMN = N - n, HPME
 * on); returns the index of the first one. n may be 0 (cycle counter only). */
u32 pmu_hyp_reserve(u32 n);
/* Programs counter idx to count event (ignored for the cycle counter) from
 * value, with its overflow interrupt on, and starts it. */
void pmu_hyp_start(u32 idx, u32 event, u32 value);
/* Stops counter idx and masks its overflow interrupt. */
void pmu_hyp_stop(u32 idx);
u32 pmu_hyp_read_event(u32 idx);
void pmu_hyp_write_event(u32 idx, u32 value);

static inline u32 pmu_hyp_read(u32 idx)
{
	if (idx == PMU_CYCLE_COUNTER)
		return (u32)sysreg_read(pmccntr_el0);
	return pmu_hyp_read_event(idx);
}

/* Takes effect by the next context synchronisation (ERET at the latest). */
static inline void pmu_hyp_write(u32 idx, u32 value)
{
	if (idx == PMU_CYCLE_COUNTER)
		sysreg_write(pmccntr_el0, (u64)value);
	else
		pmu_hyp_write_event(idx, value);
}

/* Overflow flags (PMOVSSET_EL0 bit idx) of the counters in mask; clearing
 * them drops the interrupt request. */
u32 pmu_overflow_status(u32 mask);
void pmu_overflow_clear(u32 mask);

#endif
