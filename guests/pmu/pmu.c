// SPDX-License-Identifier: Apache-2.0
/*
 * pmu: a guest that uses its own PMU (hypervisor/core/vpmu/vpmu.c).
 *
 *   1. reads PMCR_EL0 and reports N (the counters it was given) and whether
 *      the cycle counter is its own (it counts);
 *   2. counts INST_RETIRED (0x08) on counter 0 and CPU_CYCLES (0x11) on
 *      counter 1 (and on PMCCNTR when it has it) over a loop of `loop`
 *      iterations of 2 instructions, EL1 and EL0 only;
 *   3. takes `overflows` overflow interrupts of counter 0 preloaded to wrap
 *      after `step` instructions; the handler clears the flag (PMOVSCLR) and
 *      re-arms. Then one more overflow whose flag the handler does not clear:
 *      the interrupt must come once only, not again and again (`storm`);
 *   4. counters beyond N and the reserved ones read 0 whatever it writes;
 *   5. software increment (PMSWINC_EL0, event SW_INCR 0x00): counters 0 and
 *      1 count SW_INCR, only counter 0 enabled; 5 writes of bits 0 and 1
 *      count 5 on counter 0 and nothing on counter 1; 3 more with PMCR.E
 *      clear count nothing; from 0xffffffff one write wraps counter 0 to 0
 *      and sets its overflow flag.
 *
 * Params: irq (PMU PPI: the toolchain's pmu_irq in a direct VM, else 23),
 * loop (1000000), overflows (4), step (100000),
 * counter (0: event counter 0 counting `event`, default INST_RETIRED; 1:
 * PMCCNTR). The wait for an interrupt polls PMOVSSET (a trapped read):
 * QEMU notices an event counter's overflow only at an exception entry.
 * Output: "pmu: pmcr=0x<x> n=<N> cycle_counter=<0|1>",
 *         "pmu: loop=<L> inst=<n> cycles=<n> ccnt=<n>",
 *         "pmu: overflow irqs=<n> flags=<n> bad=<n> late=<events>",
 *         "pmu: storm irqs=<n>",
 *         "pmu: beyond=<n>",
 *         "pmu: swinc counted=<n> unenabled=<n> stopped=<n> wrapped=<n> ovf=<0|1>",
 *         then "pmu: PASS" (or "pmu: FAIL (<why>)").
 */
#include "runtime.h"

#define PMCR_E  (1u << 0)
#define PMCR_P  (1u << 1)
#define PMCR_C  (1u << 2)
#define EV_INST 0x08
#define EV_CYC  0x11
#define CCNT    (1ul << 31)

static volatile u32 irqs, flags, bad, rearm;
static volatile u64 late; /* most events counted past an overflow when its handler ran */
static u32 step, ctr;     /* the overflowing counter: 0, or 31 (PMCCNTR) */

static void sel_write(u32 idx, u64 type, u64 val)
{
	write_sysreg(idx, pmselr_el0);
	isb();
	write_sysreg(type, pmxevtyper_el0);
	write_sysreg(val, pmxevcntr_el0);
	isb();
}

static u64 sel_read(u32 idx)
{
	write_sysreg(idx, pmselr_el0);
	isb();
	return read_sysreg(pmxevcntr_el0);
}

static void pmu_irq(u32 intid)
{
	u64 ovs = read_sysreg(pmovsclr_el0);

	u64 past = ctr == 31 ? read_sysreg(pmccntr_el0) : read_sysreg(pmevcntr0_el0);

	(void)intid;
	irqs++;
	if ((u32)past > late)
		late = (u32)past;
	if (ovs != 1ul << ctr) {
		bad++;
		write_sysreg(ovs, pmovsclr_el0);
		return;
	}
	if (!rearm)
		return; /* leave the flag set: no further interrupt may come */
	flags++;
	if (ctr == 31)
		write_sysreg(0x100000000ul - step, pmccntr_el0);
	else
		write_sysreg(0x100000000ul - step, pmevcntr0_el0);
	write_sysreg(ovs, pmovsclr_el0);
	isb();
}

/* Spins until irqs reaches want or max_ns passed. */
static void wait_irqs(u32 want, u64 max_ns)
{
	u64 end = timer_now() + timer_ns_to_ticks(max_ns);

	while (READ_ONCE(irqs) < want && timer_now() < end) {
		for (volatile u32 i = 0; i < 1000; i++)
			;
		/* a trapped read: QEMU notices an event counter's overflow only at
		 * an exception entry (its cycle counter's on time) */
		(void)read_sysreg(pmovsset_el0);
	}
}

int main(const char *params)
{
	u32 irq = (u32)param_u64("irq", param_u64("pmu_irq", 23)),
	    overflows = (u32)param_u64("overflows", 4);
	u64 loop = param_u64("loop", 1000000), pmcr = read_sysreg(pmcr_el0);
	u32 n = (u32)(pmcr >> 11) & 0x1f, want;
	u64 inst, cyc, ccnt, beyond = 0;
	bool has_cc;

	(void)params;
	step = (u32)param_u64("step", 100000);
	write_sysreg(0, pmccntr_el0);
	write_sysreg(CCNT, pmcntenset_el0);
	write_sysreg(pmcr | PMCR_E, pmcr_el0);
	isb();
	for (volatile u32 i = 0; i < 100; i++)
		;
	has_cc = read_sysreg(pmccntr_el0) != 0;
	write_sysreg(~0ul, pmcntenclr_el0);
	printf("pmu: pmcr=0x%lx n=%u cycle_counter=%u\n", pmcr, n, has_cc);
	if (n < 2) {
		printf("pmu: FAIL (%u counters)\n", n);
		return 1;
	}

	/* 2. count a known loop: subs + b.ne per iteration */
	write_sysreg(PMCR_E | PMCR_P | PMCR_C, pmcr_el0);
	sel_write(0, EV_INST, 0);
	sel_write(1, EV_CYC, 0);
	write_sysreg(0, pmccfiltr_el0);
	isb();
	{
		u64 x = loop;

		write_sysreg(3ul | CCNT, pmcntenset_el0);
		isb();
		__asm__ volatile("1: subs %0, %0, #1\n b.ne 1b" : "+r"(x));
		write_sysreg(3ul | CCNT, pmcntenclr_el0);
		isb();
	}
	inst = sel_read(0);
	cyc = sel_read(1);
	ccnt = read_sysreg(pmccntr_el0);
	printf("pmu: loop=%lu inst=%lu cycles=%lu ccnt=%lu\n", loop, inst, cyc, ccnt);

	/* 3. overflow interrupts of counter 0 */
	gic_init();
	irq_register(irq, pmu_irq);
	gic_irq_enable(irq);
	rearm = 1;
	ctr = param_u64("counter", 0) ? 31 : 0;
	write_sysreg(1ul << ctr, pmovsclr_el0);
	if (ctr == 31) {
		write_sysreg(PMCR_E, pmcr_el0); /* LC = 0: PMCCNTR overflows at 32 bits */
		write_sysreg(0x100000000ul - step, pmccntr_el0);
	} else {
		sel_write(0, param_u64("event", EV_INST), 0x100000000ul - step);
	}
	write_sysreg(1ul << ctr, pmintenset_el1);
	write_sysreg(1ul << ctr, pmcntenset_el0);
	isb();
	wait_irqs(overflows, 1000ul * step + 50 * NSEC_PER_MSEC);
	rearm = 0;
	want = READ_ONCE(irqs) + 1;
	printf("pmu: overflow irqs=%u flags=%u bad=%u late=%lu\n", irqs, flags, bad, late);
	/* the last re-arm overflows once more; its flag stays set */
	wait_irqs(want, 1000ul * step + 50 * NSEC_PER_MSEC);
	wait_irqs(want + 1, 20 * NSEC_PER_MSEC); /* nothing more may come */
	printf("pmu: storm irqs=%u\n", irqs - want + 1);
	write_sysreg(1ul << ctr, pmcntenclr_el0);
	write_sysreg(1ul << ctr, pmintenclr_el1);
	write_sysreg(1ul << ctr, pmovsclr_el0);

	/* 4. counters it does not have: writes lost, reads 0 */
	for (u32 i = n; i < 31; i++) {
		sel_write(i, EV_INST, 12345);
		beyond |= sel_read(i);
	}
	printf("pmu: beyond=%lu\n", beyond);

	/* 5. software increment */
	{
		u64 counted, unenabled, stopped, wrapped, ovf;

		write_sysreg(~0ul, pmintenclr_el1);
		write_sysreg(~0ul, pmcntenclr_el0);
		sel_write(0, 0x00, 0); /* SW_INCR, counting at EL1 and EL0 */
		sel_write(1, 0x00, 0);
		write_sysreg(1ul, pmcntenset_el0);
		write_sysreg(PMCR_E, pmcr_el0);
		isb();
		for (u32 i = 0; i < 5; i++)
			write_sysreg(3ul, pmswinc_el0);
		isb();
		counted = sel_read(0);
		unenabled = sel_read(1);
		write_sysreg(0, pmcr_el0);
		isb();
		for (u32 i = 0; i < 3; i++)
			write_sysreg(3ul, pmswinc_el0);
		isb();
		stopped = sel_read(0) - counted;
		write_sysreg(1ul, pmovsclr_el0);
		write_sysreg(PMCR_E, pmcr_el0);
		sel_write(0, 0x00, 0xfffffffful);
		write_sysreg(1ul, pmswinc_el0);
		isb();
		wrapped = sel_read(0);
		ovf = read_sysreg(pmovsset_el0) & 1;
		write_sysreg(1ul, pmovsclr_el0);
		write_sysreg(~0ul, pmcntenclr_el0);
		printf("pmu: swinc counted=%lu unenabled=%lu stopped=%lu wrapped=%lu ovf=%lu\n",
		       counted, unenabled, stopped, wrapped, ovf);
		if (counted != 5 || unenabled || stopped || wrapped || !ovf) {
			printf("pmu: FAIL (software increment)\n");
			return 1;
		}
	}
	printf("pmu: PASS\n");
	return 0;
}
