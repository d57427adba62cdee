// SPDX-License-Identifier: Apache-2.0
/*
 * timers: arms the EL1 virtual timer (PPI 27) and the EL1 physical timer
 * (PPI 30) with different compare values and checks that each interrupt
 * arrives, and at or after its own compare value (read on the counter the
 * timer compares against: CNTVCT for the virtual, CNTPCT for the physical).
 * On Bulkhead the physical timer and CNTPCT must not trap (a trap would be
 * an undefined-instruction exception, "guest: ..." on the console).
 *
 * Params: rounds (default 3), delay_ms (default 20: virtual timer delay;
 * the physical one fires delay_ms / 2 later).
 * Lines: "timers: round <i> virt late <ticks> phys late <ticks>",
 * "timers: PASS (<n> rounds)" or "timers: FAIL (<reason>)".
 */
#include "runtime.h"

#define TIMER_PHYS_INTID 30
#define CTL_ENABLE       BIT(0)
#define CTL_IMASK        BIT(1)
#define CTL_ISTATUS      BIT(2)

static volatile u64 virt_at, phys_at; /* counter when the IRQ was taken */
static volatile u32 virt_irqs, phys_irqs;

static u64 phys_now(void)
{
	isb();
	return read_sysreg(cntpct_el0);
}

static void virt_irq(u32 intid)
{
	(void)intid;
	virt_at = timer_now();
	virt_irqs++;
	timer_stop(); /* IMASK: the level line drops */
}

static void phys_irq(u32 intid)
{
	(void)intid;
	phys_at = phys_now();
	if (!(read_sysreg(cntp_ctl_el0) & CTL_ISTATUS))
		phys_at = 0; /* taken without the condition met: reported below */
	phys_irqs++;
	write_sysreg(CTL_IMASK, cntp_ctl_el0);
	isb();
}

static int round_once(u32 i, u64 delay)
{
	u64 vcval = timer_now() + delay;
	u64 pcval = phys_now() + delay + delay / 2;
	u64 watchdog = timer_now() + 4 * delay + timer_ns_to_ticks(2 * NSEC_PER_SEC);
	u32 v0 = virt_irqs, p0 = phys_irqs;

	write_sysreg(pcval, cntp_cval_el0);
	write_sysreg(CTL_ENABLE, cntp_ctl_el0);
	timer_set_deadline(vcval);
	irq_local_disable();
	while ((READ_ONCE(virt_irqs) == v0 || READ_ONCE(phys_irqs) == p0) &&
	       timer_now() < watchdog) {
		wfi();
		irq_local_enable();
		isb();
		irq_local_disable();
	}
	irq_local_enable();
	if (virt_irqs != v0 + 1 || phys_irqs != p0 + 1) {
		printf("timers: FAIL (round %u: %u virtual, %u physical interrupts)\n", i,
		       virt_irqs - v0, phys_irqs - p0);
		return 1;
	}
	if (virt_at < vcval || phys_at < pcval) {
		printf("timers: FAIL (round %u: early: virt %lu < %lu or phys %lu < %lu)\n", i,
		       virt_at, vcval, phys_at, pcval);
		return 1;
	}
	printf("timers: round %u virt late %lu phys late %lu\n", i, virt_at - vcval,
	       phys_at - pcval);
	return 0;
}

int main(const char *params)
{
	u32 rounds = (u32)param_u64("rounds", 3);
	u64 delay_ms = param_u64("delay_ms", 20);
	u64 delay;

	(void)params;
	if (!delay_ms)
		delay_ms = 1;
	delay = timer_ns_to_ticks(delay_ms * NSEC_PER_MSEC);
	printf("timers: %u rounds, virtual %lu ms, physical %lu ms\n", rounds, delay_ms,
	       delay_ms + delay_ms / 2);
	gic_init();
	irq_register(TIMER_VIRT_INTID, virt_irq);
	irq_register(TIMER_PHYS_INTID, phys_irq);
	gic_irq_enable(TIMER_VIRT_INTID);
	gic_irq_enable(TIMER_PHYS_INTID);
	for (u32 i = 0; i < rounds; i++)
		if (round_once(i, delay))
			return 1;
	/* Both stopped: no further interrupt may arrive. */
	timer_delay_ticks(2 * delay);
	if (virt_irqs != rounds || phys_irqs != rounds) {
		printf("timers: FAIL (%u virtual, %u physical interrupts after stop)\n", virt_irqs,
		       phys_irqs);
		return 1;
	}
	printf("timers: PASS (%u rounds)\n", rounds);
	return 0;
}
