/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/pmu.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sysregs.h"
#include "lib/log.h"

#define PMCR_N_SHIFT 11
#define PMCR_N_MASK  (0x1full << PMCR_N_SHIFT)

/* Per CPU: the counters the hypervisor reserved (bit i: event counter i,
 * bit 31: the cycle counter) and MDCR_EL2.HPMN. Written by the CPU itself. */
static u32 pmu_reserved[ARCH_MAX_CPUS];
static u32 pmu_hpmn[ARCH_MAX_CPUS];
static bool pmu_el2_always[ARCH_MAX_CPUS]; /* pmu_hyp_count_el2_always */

u32 pmu_counters(void)
{
	return (u32)((sysreg_read(pmcr_el0) & PMCR_N_MASK) >> PMCR_N_SHIFT);
}

static void pmu_partition(u32 hpmn, u32 reserved)
{
	u64 mdcr = (hpmn & MDCR_HPMN_MASK) | MDCR_TPM | MDCR_TPMCR;

	if (reserved & ~PMU_CYCLE_BIT)
		mdcr |= MDCR_HPME;
	pmu_hpmn[cpu_index()] = hpmn;
	pmu_reserved[cpu_index()] = reserved;
	sysreg_write(mdcr_el2, mdcr);
	isb();
}

void pmu_init_cpu(void)
{
	/* every counter the guest's (HPMN = N), all stopped, zeroed, without
	 * interrupts; PMCR.E = 1 for good: guests' enables are virtual
	 * (core/vpmu/vpmu.c), each counter is started by its PMCNTENSET bit */
	sysreg_write(pmcntenclr_el0, 0xffffffffull);
	sysreg_write(pmintenclr_el1, 0xffffffffull);
	sysreg_write(pmovsclr_el0, 0xffffffffull);
	sysreg_write(pmuserenr_el0, 0);
	sysreg_write(pmccfiltr_el0, 0);
	sysreg_write(pmcr_el0, PMCR_E | PMCR_P | PMCR_C);
	pmu_partition(pmu_counters(), 0);
}

u32 pmu_reserved_mask(void)
{
	return pmu_reserved[cpu_index()];
}

u32 pmu_guest_counters(void)
{
	return pmu_hpmn[cpu_index()];
}

/* PMEVTYPER/PMCCFILTR of the hypervisor's counters: P = 0, U = 0 (count
 * EL1 and EL0), NSH = 1 (and EL2) while the guest runs and while a trap it
 * caused is handled; vectors.S clears NSH on an interrupt's entry (the
 * hypervisor's own work: the regulator, interrupt delivery) and sets it
 * again just before the ERET (docs/bandwidth.md "Counter"). Written here
 * with NSH = 0: this runs in the hypervisor's own work. */
extern char el2_vectors[], el2_vectors_pmu[]; /* boot.S and vectors.S */

static void pmu_vectors(const char *table)
{
	sysreg_write(vbar_el2, (u64)(uintptr_t)table);
	isb();
}

/* The words of struct cpu pmu_el2 (vectors.S pmu_el2): the cycle counter's
 * filter as it is, an event counter's with its index and bit 63. */
#define PMU_EL2_EVENT BIT(63)

static u64 pmu_el2_word(u32 idx, u32 filter)
{
	if (idx == PMU_CYCLE_COUNTER)
		return filter;
	return PMU_EL2_EVENT | ((u64)idx << 32) | filter;
}

static u32 pmu_el2_index(u64 word)
{
	return word & PMU_EL2_EVENT ? (u32)(word >> 32) & 31u : PMU_CYCLE_COUNTER;
}

/* The counter counts at EL2 from the next return to the guest on, except
 * in the hypervisor's own work: this CPU takes the table that toggles. The
 * cycle counter is the only one when it is there (a CPU regulates one vCPU
 * on either the cycle counter or its event counters): slot 0. */
static void pmu_el2_register(u32 idx, u32 filter)
{
	u64 *slot = cpu_this()->pmu_el2;
	u64 word = pmu_el2_word(idx, filter | PMU_FILTER_NSH);

	for (u32 i = 0; i < 2; i++) {
		if (!slot[i] || pmu_el2_index(slot[i]) == idx) {
			if (i && (idx == PMU_CYCLE_COUNTER || !(slot[0] & PMU_EL2_EVENT)))
				panic("pmu: the cycle counter toggles alone");
			slot[i] = word;
			pmu_vectors(el2_vectors_pmu);
			return;
		}
	}
}

u32 pmu_hyp_reserve(u32 n, bool cycles)
{
	u32 total = pmu_counters();
	u32 hpmn = total > n ? total - n : 0;
	u32 reserved = cycles ? PMU_CYCLE_BIT : 0;

	for (u32 i = hpmn; i < total; i++)
		reserved |= (u32)BIT(i);
	/* PMCR_EL0.E enables the cycle counter (and, on some models, the
	 * overflow interrupt); LC = 0: the cycle counter overflows at 32 bits.
	 * Guests never write PMCR (TPMCR): core/vpmu/vpmu.c keeps E and, while
	 * the cycle counter is the hypervisor's, LC. */
	sysreg_write(pmcr_el0, (sysreg_read(pmcr_el0) & ~(PMCR_LC | PMCR_D | PMCR_DP)) | PMCR_E);
	pmu_partition(hpmn, reserved);
	return hpmn;
}

static void pmu_select(u32 idx)
{
	sysreg_write(pmselr_el0, idx);
	isb();
}

void pmu_write_filter(u32 idx, u32 filter)
{
	if (idx == PMU_CYCLE_COUNTER) {
		sysreg_write(pmccfiltr_el0, filter);
	} else {
		pmu_select(idx);
		sysreg_write(pmxevtyper_el0, filter);
	}
}

u32 pmu_read_filter(u32 idx)
{
	if (idx == PMU_CYCLE_COUNTER)
		return (u32)sysreg_read(pmccfiltr_el0);
	pmu_select(idx);
	return (u32)sysreg_read(pmxevtyper_el0);
}

void pmu_hyp_start(u32 idx, u32 event, u32 value)
{
	u32 filter = idx == PMU_CYCLE_COUNTER ? 0 : event & 0xffffu;

	if (pmu_el2_always[cpu_index()])
		filter |= PMU_FILTER_NSH;
	else
		pmu_el2_register(idx, filter);
	pmu_write_filter(idx, filter);
	pmu_hyp_write(idx, value);
	sysreg_write(pmovsclr_el0, BIT(idx));
	sysreg_write(pmintenset_el1, BIT(idx));
	sysreg_write(pmcntenset_el0, BIT(idx));
	isb();
}

/* Writes the filter of every counter in slot (struct cpu pmu_el2), the one
 * vectors.S pmu_el2 writes: counting at EL2 (NSH set) or not. */
static void pmu_el2_filters(const u64 *slot, bool el2)
{
	for (u32 i = 0; i < 2 && slot[i]; i++)
		pmu_write_filter(pmu_el2_index(slot[i]),
		                 el2 ? (u32)slot[i] : (u32)slot[i] & ~(u32)PMU_FILTER_NSH);
}

void pmu_hyp_count_el2_always(void)
{
	u64 *slot = cpu_this()->pmu_el2;

	pmu_el2_always[cpu_index()] = true;
	pmu_vectors(el2_vectors); /* first: el2_vectors_pmu relies on slot 0 */
	pmu_el2_filters(slot, true);
	slot[0] = slot[1] = 0;
}

bool pmu_hyp_el2_pause(void)
{
	const u64 *slot = cpu_this()->pmu_el2;

	if (!slot[0] || !(pmu_read_filter(pmu_el2_index(slot[0])) & PMU_FILTER_NSH))
		return false;
	pmu_el2_filters(slot, false);
	isb();
	return true;
}

void pmu_hyp_el2_resume(bool paused)
{
	if (!paused)
		return;
	pmu_el2_filters(cpu_this()->pmu_el2, true);
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

#define PMU_EV_L1D_CACHE 0x04

/* PMCEID0/1_EL0 list the common events 0x00-0x3f this PE implements (bits
 * 0-31 of PMCEID0: 0x00-0x1f, of PMCEID1: 0x20-0x3f). The events above
 * (e.g. the Cortex-A76's L2D_CACHE_WR, 0x51) are not described there: they
 * are taken as implemented where the PMU counts cache accesses at all
 * (L1D_CACHE, which every core with a data cache counts), and as missing
 * where it does not (QEMU: PMCEID0 0x20101, no cache event counts). */
bool pmu_event_implemented(u32 event)
{
	if (event < 0x20)
		return (sysreg_read(pmceid0_el0) >> event) & 1;
	if (event < 0x40)
		return (sysreg_read(pmceid1_el0) >> (event - 0x20)) & 1;
	return (sysreg_read(pmceid0_el0) >> PMU_EV_L1D_CACHE) & 1;
}
