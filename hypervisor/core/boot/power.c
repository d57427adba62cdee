/* SPDX-License-Identifier: Apache-2.0 */
#include "core/boot/power.h"
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/psci_fw.h"
#include "arch/aarch64/spintable.h"
#include "core/config/config.h"
#include "drivers/power/bcm2835_pm.h"
#include "lib/log.h"

void power_cpu_on(u32 index)
{
	const struct cfg_platform *p = cfg_system.platform;
	s64 ret;

	if (p->cpu_enable == CFG_CPU_ENABLE_SPIN_TABLE) {
		spintable_release(p->cpu_release[index], index);
		return;
	}
	ret = psci_fw_cpu_on(p->mpidr[index], (u64)(uintptr_t)secondary_entry, index);
	if (ret)
		panic("PSCI CPU_ON of CPU %u failed (%ld)", index, ret);
}

void power_system_off(void)
{
	const struct cfg_platform *p = cfg_system.platform;

	if (p->power_off == CFG_POWER_OFF_BCM2835_PM)
		bcm2835_pm_halt(p->power_off_base);
	psci_fw_system_off();
}
