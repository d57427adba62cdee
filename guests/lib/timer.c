// SPDX-License-Identifier: Apache-2.0
/* Generic-timer helpers. */
#include "arch.h"
#include "exc.h"
#include "gic.h"
#include "timer.h"

#define CNTV_CTL_ENABLE BIT(0)
#define CNTV_CTL_IMASK  BIT(1)

u64 timer_now(void)
{
	isb();
	return read_sysreg(cntvct_el0);
}

u64 timer_freq(void)
{
	u64 f = read_sysreg(cntfrq_el0) & 0xffffffffu;

	return f ? f : 62500000ul;
}

u64 timer_ns_to_ticks(u64 ns)
{
	u64 f = timer_freq();

	return (ns / NSEC_PER_SEC) * f + (ns % NSEC_PER_SEC) * f / NSEC_PER_SEC;
}

u64 timer_ticks_to_ns(u64 ticks)
{
	u64 f = timer_freq();

	return (ticks / f) * NSEC_PER_SEC + (ticks % f) * NSEC_PER_SEC / f;
}

u64 timer_now_ns(void)
{
	return timer_ticks_to_ns(timer_now());
}

u64 timer_now_us(void)
{
	return timer_now_ns() / NSEC_PER_USEC;
}

void timer_set_deadline(u64 ticks)
{
	write_sysreg(ticks, cntv_cval_el0);
	write_sysreg(CNTV_CTL_ENABLE, cntv_ctl_el0);
	isb();
}

void timer_oneshot_ns(u64 ns)
{
	timer_set_deadline(timer_now() + timer_ns_to_ticks(ns));
}

void timer_stop(void)
{
	write_sysreg(CNTV_CTL_IMASK, cntv_ctl_el0);
	isb();
}

void timer_delay_ticks(u64 ticks)
{
	u64 end = timer_now() + ticks;

	while (timer_now() < end)
		cpu_relax();
}

void timer_delay_us(u64 us)
{
	timer_delay_ticks(timer_ns_to_ticks(us * NSEC_PER_USEC));
}

void timer_delay_ms(u64 ms)
{
	timer_delay_ticks(timer_ns_to_ticks(ms * NSEC_PER_MSEC));
}

static void wait_timer_irq(u32 intid)
{
	(void)intid;
	timer_stop();
}

void timer_wait_arm(void)
{
	irq_register(TIMER_VIRT_INTID, wait_timer_irq);
	gic_irq_enable(TIMER_VIRT_INTID);
}

bool timer_wait_armed(bool (*cond)(void *arg), void *arg, u64 deadline)
{
	u64 flags = irq_local_save();
	bool done;

	for (;;) {
		done = cond(arg);
		if (done || timer_now() >= deadline)
			break;
		timer_set_deadline(deadline);
		wfi();
		/* Take whatever woke us, then re-check. */
		irq_local_enable();
		isb();
		irq_local_disable();
	}
	timer_stop();
	irq_local_restore(flags);
	return done;
}

static bool timer_never(void *arg)
{
	(void)arg;
	return false;
}

void timer_sleep_until(u64 deadline)
{
	timer_wait_arm();
	timer_wait_armed(timer_never, NULL, deadline);
}

void timer_sleep_ns(u64 ns)
{
	timer_sleep_until(timer_now() + timer_ns_to_ticks(ns));
}

bool timer_wait_until(bool (*cond)(void *arg), void *arg, u64 timeout_ns)
{
	u64 deadline = timer_now() + timer_ns_to_ticks(timeout_ns);

	timer_wait_arm();
	return timer_wait_armed(cond, arg, deadline);
}
