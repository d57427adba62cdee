/* SPDX-License-Identifier: Apache-2.0 */
#include "core/boot/power.h"
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/psci_fw.h"
#include "arch/aarch64/spintable.h"
#include "arch/aarch64/timer.h"
#include "core/config/config.h"
#include "drivers/power/bcm2835_pm.h"
#include "lib/log.h"
#include "lib/spinlock.h"

/* How long a released CPU may take to reach cpu_init (arch/aarch64/cpu.c),
 * in counter time: generous for an emulator on a loaded host. */
#define POWER_SPIN_WAIT_NS 2000000000ull

/* The spin table gives no answer: wait until the CPU reports in (cpu_init
 * sets its index), so that a wrong release address stops the boot with a
 * message instead of leaving a VM that never starts. */
static void power_spin_wait(u32 index, u64 release)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(POWER_SPIN_WAIT_NS);

	while (READ_ONCE(cpu_data[index].index) != index) {
		if (timer_now() > deadline)
			panic("CPU %u did not leave the spin table (release address %lx) in 2 s",
			      index, release);
		__asm__ volatile("yield");
	}
}

void power_cpu_on(u32 index)
{
	const struct cfg_platform *p = cfg_system.platform;
	s64 ret;

	/* POWER_*: only the platform's methods are built (hypervisor/Makefile
	 * CPU_ENABLE, POWER_OFF); config.c refuses a build without its own */
	if (POWER_SPIN_TABLE && p->cpu_enable == CFG_CPU_ENABLE_SPIN_TABLE) {
		spintable_release(p->cpu_release[index], index);
		power_spin_wait(index, p->cpu_release[index]);
		return;
	}
	ret = psci_fw_cpu_on(p->mpidr[index], (u64)(uintptr_t)secondary_entry, index);
	if (ret)
		panic("PSCI CPU_ON of CPU %u failed (%ld)", index, ret);
}

void power_system_off(void)
{
	const struct cfg_platform *p = cfg_system.platform;

	if (POWER_BCM2835_PM && p->power_off == CFG_POWER_OFF_BCM2835_PM)
		bcm2835_pm_halt(p->power_off_base);
	psci_fw_system_off();
}
