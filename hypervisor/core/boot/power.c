/* SPDX-License-Identifier: Apache-2.0 */
#include "core/boot/power.h"
#include "core/config/config.h"

void power_cpu_on(u32 index)
{
	const struct cfg_platform *p = cfg_system.platform;

	p->cpu_enable.ops->cpu_on(&p->cpu_enable, index, p->mpidr[index]);
}

void power_system_off(void)
{
	const struct power_off_dev *d = &cfg_system.platform->power_off;

	d->ops->off(d);
}
