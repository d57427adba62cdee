// SPDX-License-Identifier: Apache-2.0
/*
 * ticker: prints "tick <i>/<n>" every period_ms milliseconds, driven by the
 * virtual timer interrupt (the vCPU sleeps in WFI between ticks), then
 * "ticker: PASS (<n> ticks)" and powers off.
 *
 * Params: ticks (default 10), period_ms (default 100).
 * FAIL lines: "ticker: FAIL (<reason>)" if the ticks came early or the
 * timer stopped firing.
 */
#include "runtime.h"

static u64 period; /* in counter ticks */
static u64 next_deadline;
static u32 total;
static volatile u32 fired; /* ticks signalled by the IRQ handler */

static void tick_irq(u32 intid)
{
	(void)intid;
	fired++;
	if (fired >= total) {
		timer_stop();
		return;
	}
	next_deadline += period;
	timer_set_deadline(next_deadline);
}

int main(const char *params)
{
	u64 period_ms = param_u64("period_ms", 100);
	u64 start, elapsed_ns, watchdog;
	u32 printed = 0, now;

	(void)params;
	total = (u32)param_u64("ticks", 10);
	if (!period_ms)
		period_ms = 1;
	printf("ticker: %u ticks every %lu ms\n", total, period_ms);
	if (!total) {
		printf("ticker: PASS (0 ticks)\n");
		return 0;
	}

	gic_init();
	irq_register(TIMER_VIRT_INTID, tick_irq);
	gic_irq_enable(TIMER_VIRT_INTID);

	period = timer_ns_to_ticks(period_ms * NSEC_PER_MSEC);
	start = timer_now();
	next_deadline = start + period;
	timer_set_deadline(next_deadline);

	while (printed < total) {
		/* Masked WFI: an interrupt between the check and WFI still wakes us. */
		irq_local_disable();
		while (READ_ONCE(fired) == printed) {
			wfi();
			irq_local_enable();
			isb();
			irq_local_disable();
			/* Generous watchdog: 10 periods + 5 s without a tick. */
			watchdog =
			    next_deadline + 10 * period + timer_ns_to_ticks(5 * NSEC_PER_SEC);
			if (READ_ONCE(fired) == printed && timer_now() > watchdog) {
				irq_local_enable();
				printf("ticker: FAIL (timer stopped after %u ticks)\n", printed);
				return 1;
			}
		}
		irq_local_enable();
		now = READ_ONCE(fired);
		while (printed < now)
			printf("tick %u/%u\n", ++printed, total);
	}

	elapsed_ns = timer_ticks_to_ns(timer_now() - start);
	if (elapsed_ns + NSEC_PER_MSEC < (u64)total * period_ms * NSEC_PER_MSEC) {
		printf("ticker: FAIL (%u ticks took only %lu ms)\n", total,
		       elapsed_ns / NSEC_PER_MSEC);
		return 1;
	}
	printf("ticker: PASS (%u ticks)\n", total);
	return 0;
}
