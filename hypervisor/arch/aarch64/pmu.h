/* SPDX-License-Identifier: Apache-2.0 */
/* The PMU as EL2 sees it: counter partitioning and guest traps. */
#ifndef ARCH_PMU_H
#define ARCH_PMU_H

#include "arch/aarch64/sysregs.h"
#include "lib/types.h"

/* Number of event counters the PMU implements (PMCR_EL0.N). */
u32 pmu_counters(void);

#define PMCR_E  BIT(0)
#define PMCR_P  BIT(1)
#define PMCR_C  BIT(2)
#define PMCR_D  BIT(3)
#define PMCR_X  BIT(4)
#define PMCR_DP BIT(5)
#define PMCR_LC BIT(6)

/* PMEVTYPER<n>_EL0 / PMCCFILTR_EL0 */
#define PMU_FILTER_P     BIT(31) /* do not count at EL1 */
#define PMU_FILTER_U     BIT(30) /* do not count at EL0 */
#define PMU_FILTER_NSH   BIT(27) /* count at EL2 */
#define PMU_FILTER_EVENT 0xffffu

/* Per CPU: every counter is the guest's (MDCR_EL2.HPMN = N), stopped and
 * zeroed, PMCR_EL0.E set for good; every guest PMU access traps (TPM,
 * TPMCR) to core/vpmu/vpmu.c, which emulates the guest's share. */
void pmu_init_cpu(void);

/* This CPU's partition: the counters the hypervisor reserved (bit i: event
 * counter i, PMU_CYCLE_BIT: the cycle counter) and the number of event
 * counters left to the guest (MDCR_EL2.HPMN): [0, HPMN). */
u32 pmu_reserved_mask(void);
u32 pmu_guest_counters(void);
/* Programs the event filter (PMEVTYPER, or PMCCFILTR for the cycle counter). */
void pmu_write_filter(u32 idx, u32 filter);
u32 pmu_read_filter(u32 idx);

/*
 * Counters the hypervisor keeps for itself (the bandwidth regulator). A
 * counter is named by its index: an event counter at or above HPMN, or
 * PMU_CYCLE_COUNTER for PMCCNTR_EL0. Hypervisor counters count at EL0, EL1
 * and EL2 (what the hypervisor does for a guest is charged to it), in 32
 * bits: they overflow from 0xffffffff to 0, raising the PMU interrupt when
 * enabled. Per CPU, called at EL2 only.
 */
#define PMU_CYCLE_COUNTER 31u
#define PMU_CYCLE_BIT     ((u32)BIT(PMU_CYCLE_COUNTER))

/* Reserves the last n event counters for EL2 (MDCR_EL2.HPMN = N - n, HPME
 * on when n > 0) and, if cycles, the cycle counter; returns the index of the
 * first reserved event counter (= HPMN). */
u32 pmu_hyp_reserve(u32 n, bool cycles);
/* Programs counter idx to count event (ignored for the cycle counter) from
 * value, with its overflow interrupt on, and starts it. */
void pmu_hyp_start(u32 idx, u32 event, u32 value);
/* Stops counter idx and masks its overflow interrupt. */
void pmu_hyp_stop(u32 idx);
/* The hypervisor's counters of this CPU count at EL2 all the time, its own
 * work included (vectors.S no longer stops them on interrupts). */
void pmu_hyp_count_el2_always(void);
/* Stops the hypervisor's counters of this CPU at EL2 (NSH = 0, as on an
 * interrupt's entry) for work a trap does that is not the trapping guest's;
 * returns whether they were counting there, for pmu_hyp_el2_resume. Does
 * nothing where they already do not count (the hypervisor's own work, an
 * unregulated CPU) or count all the time (pmu_hyp_count_el2_always). */
bool pmu_hyp_el2_pause(void);
/* Undoes pmu_hyp_el2_pause (paused: what it returned). */
void pmu_hyp_el2_resume(bool paused);

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

/* Reads the counter, writes value (32 bits) and clears the overflow flags
 * ovf (its own: BIT(idx)) (the regulator's period end; no barrier after:
 * the caller re-arms its timer, with one, and ERETs soon). u64 arguments:
 * no zero-extension before the writes. */
static inline u32 pmu_hyp_swap(u32 idx, u64 value, u64 ovf)
{
	u32 old;

	if (__builtin_expect(idx == PMU_CYCLE_COUNTER, 1)) {
		old = (u32)sysreg_read(pmccntr_el0);
		sysreg_write(pmccntr_el0, value);
	} else {
		sysreg_write(pmselr_el0, idx);
		isb(); /* PMXEVCNTR uses the selection: an indirect read of PMSELR */
		old = (u32)sysreg_read(pmxevcntr_el0);
		sysreg_write(pmxevcntr_el0, value);
	}
	sysreg_write(pmovsclr_el0, ovf);
	return old;
}

/* Whether this CPU counts the common event (PMCEID0/1_EL0; events above
 * 0x3f: true). QEMU implements none of the Cortex-A53's memory events. */
bool pmu_event_implemented(u32 event);
/* Overflow flags (PMOVSSET_EL0 bit idx) of the counters in mask; clearing
 * them drops the interrupt request. */
u32 pmu_overflow_status(u32 mask);
void pmu_overflow_clear(u32 mask);

#endif
