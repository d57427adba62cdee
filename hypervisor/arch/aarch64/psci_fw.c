/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/psci_fw.h"

void psci_fw_system_off_hvc(void)
{
	register u64 x0 __asm__("x0") = PSCI_SYSTEM_OFF;

	__asm__ volatile("hvc #0" : "+r"(x0) : : "x1", "x2", "x3", "memory");
	for (;;)
		__asm__ volatile("wfi");
}
