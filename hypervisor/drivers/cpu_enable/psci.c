/* SPDX-License-Identifier: Apache-2.0 */
/* PSCI CPU_ON over SMC, the default method: the firmware starts the CPU at
 * the secondary entry with x0 = its index. No data. */
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/psci_fw.h"
#include "arch/aarch64/smccc.h"
#include "drivers/cpu_enable/cpu_enable.h"
#include "lib/log.h"

static void psci_cpu_on(const struct cpu_enable_dev *d, u32 index, u64 mpidr)
{
	u64 entry = (u64)(uintptr_t)secondary_entry;
	s64 ret = (s64)smccc_smc_inline(PSCI_CPU_ON_64, mpidr & PSCI_MPIDR_AFF, entry, index).x0;

	(void)d;
	if (ret)
		panic("PSCI CPU_ON of CPU %u failed (%ld)", index, ret);
}

const struct cpu_enable_ops psci_cpu_enable_ops = { .cpu_on = psci_cpu_on };
