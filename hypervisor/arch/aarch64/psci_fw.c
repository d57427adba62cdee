/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/psci_fw.h"
#include "arch/aarch64/smccc.h"

static u64 psci_fw_call(u32 fn, u64 a1, u64 a2, u64 a3)
{
	return smccc_smc(fn, a1, a2, a3).x0;
}

s64 psci_fw_cpu_on(u64 mpidr, u64 entry, u64 context)
{
	return (s64)psci_fw_call(PSCI_CPU_ON_64, mpidr & 0xff00ffffffull, entry, context);
}

void psci_fw_system_off(void)
{
	psci_fw_call(PSCI_SYSTEM_OFF, 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi");
}

void psci_fw_system_off_hvc(void)
{
	register u64 x0 __asm__("x0") = PSCI_SYSTEM_OFF;

	__asm__ volatile("hvc #0" : "+r"(x0) : : "x1", "x2", "x3", "memory");
	for (;;)
		__asm__ volatile("wfi");
}
