// SPDX-License-Identifier: Apache-2.0
/* PSCI client. */
#include "arch.h"
#include "hvc.h"
#include "psci.h"
#include "runtime.h"

static s64 psci_call(u32 fid, u64 a1, u64 a2, u64 a3)
{
	return bh_call(fid, a1, a2, a3, 0, 0).x0;
}

s64 psci_version(void)
{
	return psci_call(PSCI_VERSION, 0, 0, 0);
}

s64 psci_features(u32 fid)
{
	return psci_call(PSCI_FEATURES, fid, 0, 0);
}

/* PSCI target_cpu values carry the affinity fields only (no bit 31). */
s64 psci_cpu_on(u64 mpidr, u64 entry, u64 ctx)
{
	return psci_call(PSCI_CPU_ON, mpidr & MPIDR_AFF_MASK, entry, ctx);
}

s64 psci_cpu_on_index(u32 cpu, u64 ctx)
{
	return psci_cpu_on(cpu_index_to_mpidr(cpu), (u64)(uptr)secondary_entry, ctx);
}

s64 psci_cpu_off(void)
{
	return psci_call(PSCI_CPU_OFF, 0, 0, 0);
}

s64 psci_affinity_info(u64 mpidr)
{
	return psci_call(PSCI_AFFINITY_INFO, mpidr & MPIDR_AFF_MASK, 0, 0);
}

void psci_system_off(void)
{
	psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	for (;;)
		wfi();
}

void psci_system_reset(void)
{
	psci_call(PSCI_SYSTEM_RESET, 0, 0, 0);
	for (;;)
		wfi();
}
