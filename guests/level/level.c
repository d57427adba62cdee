// SPDX-License-Identifier: Apache-2.0
/*
 * level: level-triggered interrupts follow their line (issue #17 item 1).
 *
 * For each level source (EL1 virtual timer PPI 27, EL1 physical timer
 * PPI 30 and, with rtc=1, the passthrough PL031 RTC on SPI 34) with IRQs
 * masked at EL1 (the hypervisor still takes the physical interrupt):
 *   1. assert the source and wait: the GIC must read it pending;
 *   2. deassert it at the source (timer ENABLE = 0, then IMASK = 1 in a
 *      second pass; RTC interrupt cleared): the GIC must read it not
 *      pending, and unmasking IRQs must deliver nothing;
 *   3. assert it again with IRQs unmasked: delivered exactly once (the
 *      handler deasserts it before EOI);
 *   4. assert it while disabled in the GIC, IRQs unmasked: not delivered
 *      until enabled, then exactly once.
 *
 * Params: rtc (default 0), rtc_base (0x09010000), rtc_irq (34).
 * Lines: "level: <source> <step> ok" and "level: PASS (<n> sources)", or
 *        "level: FAIL (<source>: <reason>)".
 */
#include "runtime.h"

#define PTIMER_INTID 30
#define CTL_ENABLE   BIT(0)
#define CTL_IMASK    BIT(1)

#define RTC_DR   0x00
#define RTC_MR   0x04
#define RTC_CR   0x0c
#define RTC_IMSC 0x10
#define RTC_RIS  0x14
#define RTC_ICR  0x1c

static volatile u32 irqs[1024];
static uptr rtc_base;

struct source {
	const char *name;
	u32 intid;
	void (*assert_line)(void);
	void (*deassert)(u32 how); /* how: 0 = disable, 1 = mask */
	bool (*asserted)(void);
};

static void vt_assert(void)
{
	write_sysreg(timer_now(), cntv_cval_el0);
	write_sysreg(CTL_ENABLE, cntv_ctl_el0);
	isb();
}

static void vt_deassert(u32 how)
{
	write_sysreg(how ? CTL_ENABLE | CTL_IMASK : 0, cntv_ctl_el0);
	isb();
}

static bool vt_asserted(void)
{
	return (read_sysreg(cntv_ctl_el0) & 7) == (CTL_ENABLE | BIT(2));
}

static void pt_assert(void)
{
	isb();
	write_sysreg(read_sysreg(cntpct_el0), cntp_cval_el0);
	write_sysreg(CTL_ENABLE, cntp_ctl_el0);
	isb();
}

static void pt_deassert(u32 how)
{
	write_sysreg(how ? CTL_ENABLE | CTL_IMASK : 0, cntp_ctl_el0);
	isb();
}

static bool pt_asserted(void)
{
	return (read_sysreg(cntp_ctl_el0) & 7) == (CTL_ENABLE | BIT(2));
}

static void rtc_assert(void)
{
	u32 now = mmio_read32(rtc_base + RTC_DR);
	u64 until = timer_now() + timer_ns_to_ticks(3 * NSEC_PER_SEC);

	mmio_write32(rtc_base + RTC_IMSC, 0);
	mmio_write32(rtc_base + RTC_MR, now + 1);
	mmio_write32(rtc_base + RTC_ICR, 1);
	while (!(mmio_read32(rtc_base + RTC_RIS) & 1) && timer_now() < until)
		;
	mmio_write32(rtc_base + RTC_IMSC, 1);
}

static void rtc_deassert(u32 how)
{
	(void)how;
	mmio_write32(rtc_base + RTC_IMSC, 0);
	mmio_write32(rtc_base + RTC_ICR, 1);
}

static bool rtc_asserted(void)
{
	return (mmio_read32(rtc_base + RTC_RIS) & 1) && (mmio_read32(rtc_base + RTC_IMSC) & 1);
}

static const struct source *current;

static void on_irq(u32 intid)
{
	irqs[intid]++;
	if (current && current->intid == intid)
		current->deassert(0); /* the line drops before the EOI */
}

static int fail(const struct source *s, const char *why)
{
	printf("level: FAIL (%s: %s)\n", s->name, why);
	return 1;
}

/* Gives the hypervisor time to take the physical interrupt. */
static void settle(void)
{
	timer_delay_us(2000);
}

static int check_source(const struct source *s)
{
	for (u32 how = 0; how < 2; how++) {
		if (s->deassert == rtc_deassert && how)
			break; /* the RTC has one way to drop its line */
		irq_local_disable();
		current = s;
		irqs[s->intid] = 0;
		s->assert_line();
		settle();
		if (!s->asserted())
			return fail(s, "source did not assert");
		if (!gic_irq_is_pending(s->intid))
			return fail(s, "asserted but not pending in the GIC");
		s->deassert(how);
		if (gic_irq_is_pending(s->intid))
			return fail(s, how ? "still pending after IMASK"
			                   : "still pending after disable");
		irq_local_enable();
		settle();
		if (irqs[s->intid])
			return fail(s, "delivered after the source dropped its line");
		printf("level: %s %s ok\n", s->name, how ? "masked" : "disabled");
	}
	/* Positive control: asserted with IRQs unmasked, delivered once. */
	irq_local_enable();
	irqs[s->intid] = 0;
	s->assert_line();
	settle();
	settle();
	current = NULL;
	if (irqs[s->intid] != 1) {
		printf("level: FAIL (%s: delivered %u times, expected once)\n", s->name,
		       irqs[s->intid]);
		return 1;
	}
	if (gic_irq_is_pending(s->intid))
		return fail(s, "pending after the handler dropped the line");
	printf("level: %s delivered once ok\n", s->name);
	/* Asserted while disabled in the GIC (IRQs unmasked): nothing until it
	 * is enabled, then delivered once (the hypervisor's hot path declines a
	 * disabled interrupt; a timer's stays latched pending meanwhile). */
	irqs[s->intid] = 0;
	current = s;
	gic_irq_disable(s->intid);
	s->assert_line();
	settle();
	if (irqs[s->intid])
		return fail(s, "delivered while disabled in the GIC");
	gic_irq_enable(s->intid);
	settle();
	settle();
	current = NULL;
	if (irqs[s->intid] != 1) {
		printf("level: FAIL (%s: delivered %u times once enabled, expected once)\n",
		       s->name, irqs[s->intid]);
		return 1;
	}
	printf("level: %s enabled once ok\n", s->name);
	return 0;
}

int main(const char *params)
{
	static const struct source vt = { "vtimer", TIMER_VIRT_INTID, vt_assert, vt_deassert,
		                          vt_asserted };
	static const struct source pt = { "ptimer", PTIMER_INTID, pt_assert, pt_deassert,
		                          pt_asserted };
	static struct source rtc = { "rtc", 34, rtc_assert, rtc_deassert, rtc_asserted };
	const struct source *all[3] = { &vt, &pt, &rtc };
	u32 n = param_u64("rtc", 0) ? 3 : 2;

	(void)params;
	rtc_base = param_u64("rtc_base", 0x09010000ul);
	rtc.intid = (u32)param_u64("rtc_irq", 34);

	gic_init();
	irq_local_disable();
	vt_deassert(0);
	pt_deassert(0);
	for (u32 i = 0; i < n; i++) {
		irq_register(all[i]->intid, on_irq);
		if (all[i]->intid >= 32) {
			mmio_write32(rtc_base + RTC_IMSC, 0);
			mmio_write32(rtc_base + RTC_ICR, 1);
			if (!(mmio_read32(rtc_base + RTC_CR) & 1))
				mmio_write32(rtc_base + RTC_CR, 1);
			gic_spi_setup(all[i]->intid, false);
		} else {
			gic_irq_enable(all[i]->intid);
		}
	}
	for (u32 i = 0; i < n; i++)
		if (check_source(all[i]))
			return 1;
	printf("level: PASS (%u sources)\n", n);
	return 0;
}
