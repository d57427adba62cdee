/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the guests' timed sleeps (guests/lib/timer.c, built over
 * guest_arch/arch.h): the test is the virtual counter, which moves `step`
 * ticks at every read (a vCPU the host preempts between two reads), and
 * the virtual timer, whose WFI jumps the counter to the armed compare value
 * and whose interrupt is taken when the guest unmasks IRQs. For every step
 * and every deadline near the counter (passed, about to pass between two
 * reads, ahead), timer_sleep_until must return once the counter reached
 * the deadline, in at most one WFI, never having armed the timer later than
 * the deadline: a sleep computed as timer_wait_until(deadline - timer_now())
 * arms it centuries ahead when the second read is past the deadline (the
 * victim guest's hang, tests/qemu/test_pci.py). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exc.h"
#include "gic.h"
#include "timer.h"

#define CNTV_ENABLE BIT(0)
#define CNTV_IMASK  BIT(1)
#define MAX_WFIS    4
#define DAIF_I      BIT(7)

static u64 cnt, step, cval, ctl, daif, armed_max;
static unsigned wfis, unmasks;
static bool armed;
static irq_handler_t timer_handler;

u64 mock_sysreg_read(const char *reg)
{
	if (!strcmp(reg, "cntvct_el0")) {
		u64 now = cnt;

		cnt += step;
		return now;
	}
	if (!strcmp(reg, "cntfrq_el0"))
		return 62500000;
	if (!strcmp(reg, "daif"))
		return daif;
	fprintf(stderr, "read of %s\n", reg);
	abort();
}

void mock_sysreg_write(const char *reg, u64 val)
{
	if (!strcmp(reg, "cntv_cval_el0")) {
		cval = val;
	} else if (!strcmp(reg, "cntv_ctl_el0")) {
		ctl = val;
		if (ctl == CNTV_ENABLE && (!armed || cval > armed_max)) {
			armed_max = cval;
			armed = true;
		}
	} else if (!strcmp(reg, "daif")) {
		daif = val;
	} else {
		fprintf(stderr, "write of %s\n", reg);
		abort();
	}
}

static bool timer_firing(void)
{
	return ctl == CNTV_ENABLE && cnt >= cval;
}

/* Sleeps until the armed timer fires; a WFI with none armed sleeps forever. */
void mock_wfi(void)
{
	if (++wfis > MAX_WFIS || ctl != CNTV_ENABLE) {
		fprintf(stderr, "WFI %u with the timer %s: the guest sleeps forever\n", wfis,
		        ctl == CNTV_ENABLE ? "armed" : "off");
		exit(1);
	}
	if (cnt < cval)
		cnt = cval;
}

void mock_irq_unmask(void)
{
	unmasks++;
	daif &= ~DAIF_I;
	if (timer_firing() && timer_handler)
		timer_handler(TIMER_VIRT_INTID);
}

void mock_irq_mask(void)
{
	daif |= DAIF_I;
}

u64 mock_irq_save(void)
{
	u64 flags = daif;

	mock_irq_mask();
	return flags;
}

void irq_register(u32 intid, irq_handler_t fn)
{
	CHECK(intid == TIMER_VIRT_INTID);
	timer_handler = fn;
}

void gic_irq_enable(u32 intid)
{
	CHECK(intid == TIMER_VIRT_INTID);
}

static void reset(u64 at, u64 moves)
{
	cnt = at;
	step = moves;
	cval = ctl = armed_max = 0;
	armed = false;
	wfis = unmasks = 0;
	daif = 0;
}

static void test_sleep_until_every_race(void)
{
	for (u64 moves = 0; moves <= 40; moves++)
		for (u64 ahead = 0; ahead <= 64; ahead++) {
			const u64 base = 1000000, deadline = base + ahead;

			reset(base, moves);
			timer_sleep_until(deadline);
			CHECK(cnt >= deadline);
			CHECK(!armed || armed_max <= deadline);
			CHECK(wfis <= 1);
			CHECK(unmasks == wfis);    /* the interrupt taken after each WFI */
			CHECK(ctl != CNTV_ENABLE); /* stopped on the way out */
			CHECK(daif == 0);          /* the mask as it was */
			/* a counter still short of the deadline has to sleep */
			if (moves == 0 && ahead > 0)
				CHECK(wfis == 1 && cnt == deadline);
		}
}

static void test_sleep_until_passed_deadline(void)
{
	reset(5000, 3);
	timer_sleep_until(100);
	CHECK(wfis == 0 && !armed);
	reset(5000, 0);
	timer_sleep_until(5000);
	CHECK(wfis == 0 && !armed);
}

static void test_sleep_ns(void)
{
	/* 1 ms at 62.5 MHz: 62,500 ticks */
	reset(777, 0);
	timer_sleep_ns(1000000);
	CHECK(cnt == 777 + 62500 && wfis == 1 && armed_max == 777 + 62500);
	reset(777, 5);
	timer_sleep_ns(0);
	CHECK(wfis == 0);
}

int main(void)
{
	test_sleep_until_every_race();
	test_sleep_until_passed_deadline();
	test_sleep_ns();
	if (failures)
		return 1;
	printf("test_guest_timer: ok\n");
	return 0;
}
