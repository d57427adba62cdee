/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/psci_fw.h"

static u64 psci_fw_call(u64 fn, u64 a1, u64 a2, u64 a3)
{
	register u64 x0 __asm__("x0") = fn;
	register u64 x1 __asm__("x1") = a1;
	register u64 x2 __asm__("x2") = a2;
	register u64 x3 __asm__("x3") = a3;

	__asm__ volatile("smc #0"
	                 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
	                 :
	                 : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14",
	                   "x15", "x16", "x17", "memory");
	return x0;
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
