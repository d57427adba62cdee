/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/timer.h"

#include "arch/aarch64/sysregs.h"
#include "lib/div128.h"

u64 timer_freq(void)
{
	return arch_counter_freq();
}

void timer_hyp_stop(void)
{
	sysreg_write(cnthp_ctl_el2, 0);
	isb();
}

u64 timer_hyp_deadline(void)
{
	return sysreg_read(cnthp_cval_el2);
}

u64 timer_ticks_to_ns(u64 ticks)
{
	u64 hz = timer_freq();

	return (u64)div128((u128)ticks * 1000000000u, hz, NULL);
}

u64 timer_ns_to_ticks(u64 ns)
{
	u64 hz = timer_freq();

	return (u64)div128((u128)ns * hz, 1000000000u, NULL);
}
