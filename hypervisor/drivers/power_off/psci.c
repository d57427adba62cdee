/* SPDX-License-Identifier: Apache-2.0 */
/* PSCI SYSTEM_OFF over SMC, the default method. No data. */
#include "arch/aarch64/psci_fw.h"
#include "arch/aarch64/smccc.h"
#include "drivers/power_off/power_off.h"

static __noreturn void psci_power_off(const struct power_off_dev *d)
{
	(void)d;
	smccc_smc_inline(PSCI_SYSTEM_OFF, 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi");
}

const struct power_off_ops psci_power_off_ops = { .off = psci_power_off };
