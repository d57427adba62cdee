// SPDX-License-Identifier: Apache-2.0
/*
 * rtc: drives a passthrough PL031 RTC and its interrupt (physical SPI
 * injected into the VM). Reads the time (must be nonzero), then `rounds`
 * times: sets the match register to now + 1 s, unmasks the RTC interrupt,
 * sleeps in WFI until it arrives, clears it in the RTC (ICR) and EOIs.
 *
 * Params: base (default 0x09010000), irq (default 34), rounds (default 2),
 * tick_race (default 0; 1: the first round writes MR only once the second
 * read before it is over, so its match is reached as it is armed).
 * Lines: "rtc: time <seconds>",
 *        "rtc: interrupt <i>/<n> at <seconds>",
 *        "rtc: PASS (<n> interrupts)" or "rtc: FAIL (<reason>)".
 */
#include "runtime.h"

#define RTC_DR   0x00 /* data (seconds), RO */
#define RTC_MR   0x04 /* match */
#define RTC_LR   0x08 /* load */
#define RTC_CR   0x0c /* control: bit 0 start */
#define RTC_IMSC 0x10 /* interrupt mask set/clear: bit 0 enabled */
#define RTC_RIS  0x14 /* raw interrupt status */
#define RTC_MIS  0x18 /* masked interrupt status */
#define RTC_ICR  0x1c /* interrupt clear */

static uptr rtc_base;
static volatile u32 irqs;
static volatile u32 spurious;

static u32 rtc_read(u32 off)
{
	return mmio_read32(rtc_base + off);
}

static void rtc_write(u32 off, u32 val)
{
	mmio_write32(rtc_base + off, val);
}

static void rtc_irq(u32 intid)
{
	(void)intid;
	if (!(rtc_read(RTC_MIS) & 1)) {
		spurious++;
		return;
	}
	/* Deassert the level before the dispatcher's EOI. */
	rtc_write(RTC_IMSC, 0);
	rtc_write(RTC_ICR, 1);
	irqs++;
}

static bool got_irq(void *arg)
{
	return READ_ONCE(irqs) >= *(u32 *)arg;
}

int main(const char *params)
{
	u32 intid = (u32)param_u64("irq", 34);
	u32 rounds = (u32)param_u64("rounds", 2);
	u32 race = (u32)param_u64("tick_race", 0);
	u32 i, now;

	(void)params;
	rtc_base = param_u64("base", 0x09010000ul);

	now = rtc_read(RTC_DR);
	printf("rtc: time %u\n", now);
	if (!now) {
		printf("rtc: FAIL (RTC reads 0)\n");
		return 1;
	}
	if (!(rtc_read(RTC_CR) & 1))
		rtc_write(RTC_CR, 1);

	rtc_write(RTC_IMSC, 0);
	rtc_write(RTC_ICR, 1);

	gic_init();
	irq_register(intid, rtc_irq);
	gic_spi_setup(intid, false); /* level-sensitive */

	for (i = 1; i <= rounds; i++) {
		/* Clear a stale match before arming the next one, never after:
		 * if the second ticks between reading DR and writing MR, the
		 * match is reached as MR is written (QEMU's PL031 raises it
		 * then), and an ICR write after MR cleared that interrupt for
		 * good ("no interrupt within 5 s; RIS=0" under load). DR gone
		 * past MR (over a second between the two): arm again. */
		rtc_write(RTC_ICR, 1);
		do {
			now = rtc_read(RTC_DR);
			if (i == 1 && race) /* tick_race: force that window */
				while (rtc_read(RTC_DR) == now)
					;
			rtc_write(RTC_MR, now + 1);
		} while ((s32)(rtc_read(RTC_DR) - (now + 1)) > 0);
		rtc_write(RTC_IMSC, 1);
		if (!timer_wait_until(got_irq, &i, 5 * NSEC_PER_SEC)) {
			printf("rtc: FAIL (no interrupt %u within 5 s; RIS=%u, "
			       "isenabler=%u)\n",
			       i, rtc_read(RTC_RIS), gic_irq_is_enabled(intid) ? 1 : 0);
			return 1;
		}
		printf("rtc: interrupt %u/%u at %u\n", i, rounds, rtc_read(RTC_DR));
	}
	gic_irq_disable(intid);
	if (spurious)
		printf("rtc: %u spurious interrupts\n", spurious);
	printf("rtc: PASS (%u interrupts)\n", rounds);
	return 0;
}
