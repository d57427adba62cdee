// SPDX-License-Identifier: Apache-2.0
/*
 * bwprobe: observes memory bandwidth regulation from inside a VM.
 *
 * The guest timestamps its own progress with the virtual counter in a tight
 * loop. A jump between two timestamps larger than gap_ns is a stall (the
 * vCPU did not run); the time between two stalls is a run. With a budget B
 * per period P, a regulated vCPU that never stops working sees runs of
 * about B and stalls of about P - B. The first, partial run is dropped.
 *
 * Params (defaults):
 *   mode     measure | seq | reclaim | exits | manage | overhead (measure)
 *   load     spin | mem | mask | pmu                           (mem)
 *            spin: timestamps only; mem: 8 stores per step; mask: mem
 *            with all interrupts masked (DAIF); pmu: mem plus writes to
 *            every PMU register each step (PMCR, PMCCNTR, PMOVSCLR, the
 *            hypervisor's counter...), which trap
 *   segs     runs to record per measurement (16, at most 64)
 *   gap_ns   shortest stall (5000); gap2_ns for the reclaim mode's
 *            second phase, where a busy sibling shares QEMU (400000)
 *   window_ms  give up measuring after this long (200)
 *   tamper   1: before measuring, try to read and reprogram the PMU (0)
 *   settle_ms  reclaim: wait for the sibling's budget to settle (20)
 *   work     exits: iterations of the computation, with a hypercall
 *            every 10000 (2000000)
 *   target, at_ms, budget, period_us: manage: BH_HC_BW_SET(target, budget,
 *            period_us) after at_ms (unregulated manager VM)
 *
 * Lines ("bwprobe: " prefix):
 *   vcpu <i> seg <k> run_ns=<n> stall_ns=<n> work=<n>    per run
 *   vcpu <i> <phase> segs=<n>                              per measurement
 *   pmu pmcr=0x<x> pmccntr=<n> evcntr=<n> after_writes=<n> (tamper)
 *   stats <vcpu0|vcpu1|..|vm> last=<n> max=<n> mean=<n> throttles=<n> stalled_ns=<n>
 *            (measure: right after the measured runs, before their lines)
 *   sample <k> vcpu0=<last> vcpu1=<last> vm=<last>         (reclaim, phase 2)
 *   exits exits=<n> irq=<n> reg=<n> sum=0x<x>              (exits)
 *   overhead window_ns=<n> work=<n> gaps=<n> lost_ns=<n> max_gap_ns=<n> min_gap_ns=<n>
 *            (overhead: steps done in window_ms, and the clock jumps
 *            above gap_ns: time the vCPU did not run)
 *   cpu_exits exits=<n> irq=<n> reg=<n>                    (measure/seq/reclaim: own CPU)
 *   set <ret> / self_set <ret>                             (manage, and every mode: a
 *                                                           non-manager's BH_HC_BW_SET)
 *   PASS (<mode>)
 */
#include "runtime.h"

#define MAX_SEGS 64

struct seg {
	u32 run_ns;
	u32 stall_ns;
	u32 work;
};

static struct seg segs[RT_MAX_CPUS][MAX_SEGS];
static u64 buf[RT_MAX_CPUS][1024] __aligned(64);
static u32 nsegs;
static u64 gap_ns, gap2_ns, window_ms;
static const char *load;
static volatile u32 stop_sibling;
static volatile u32 handover;

static inline u64 now_ticks(void)
{
	u64 t;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t) : : "memory");
	return t;
}

static void pmu_pokes(void)
{
	/* every one of these traps to the hypervisor, which applies it to the
	 * guest's counters only (hypervisor/core/vpmu/vpmu.c): the reserved one (the
	 * cycle counter, or the last event counter) is out of reach */
	write_sysreg(0x7f, pmcr_el0);              /* E, P, C, D, X, DP, LC */
	write_sysreg(0x7e, pmcr_el0);              /* E = 0 */
	write_sysreg(0, pmccntr_el0);              /* the hypervisor's cycle counter */
	write_sysreg(~0ul, pmovsclr_el0);          /* overflow flags */
	write_sysreg(~0ul, pmovsset_el0);          /* fake overflows */
	write_sysreg(~0ul, pmcntenclr_el0);        /* stop every counter */
	write_sysreg(~0ul, pmintenclr_el1);        /* mask every overflow interrupt */
	write_sysreg(~0ul, pmswinc_el0);           /* software increments */
	write_sysreg(0xf8000000ul, pmccfiltr_el0); /* do not count EL0/EL1/EL2 */
	write_sysreg(31, pmselr_el0);
	write_sysreg(0xf8000000ul, pmxevtyper_el0); /* PMCCFILTR through PMSELR */
	write_sysreg(0, pmxevcntr_el0);
	write_sysreg(5, pmselr_el0);
	write_sysreg(0, pmxevcntr_el0); /* counter 5 through PMSELR */
	write_sysreg(0xf8000000ul, pmxevtyper_el0);
	write_sysreg(0, S3_3_C14_C8_5); /* PMEVCNTR5_EL0: reserved with event counters */
	write_sysreg(0xf8000000ul, S3_3_C14_C12_5); /* PMEVTYPER5_EL0 */
	write_sysreg(1, pmuserenr_el0);
}

static inline void step(u64 *b, u32 i, bool pmu)
{
	u32 o = (i * 8) & 1023;

	b[o] = i;
	b[o + 1] = i;
	b[o + 2] = i;
	b[o + 3] = i;
	b[o + 4] = i;
	b[o + 5] = i;
	b[o + 6] = i;
	b[o + 7] = i;
	if (pmu)
		pmu_pokes();
}

static void all_stats(u32 ncpus);

/* Records up to nsegs runs of this vCPU, then prints them; returns how
 * many. stats: print the regulator's statistics first, so that they cover
 * the measured periods and not the console output's traps. */
static u32 measure(u32 cpu, u64 gap, const char *phase, bool stats)
{
	u64 gap_t = timer_ns_to_ticks(gap), limit = timer_ns_to_ticks(window_ms * 1000000ul);
	u64 start = now_ticks(), prev = start, run_start = start, t;
	bool spin = !strcmp(load, "spin"), pmu = !strcmp(load, "pmu"), mask = !strcmp(load, "mask");
	u64 *b = buf[cpu];
	u32 work = 0, i = 0, n = 0;
	bool first = true;
	u64 daif = 0;

	if (mask) {
		daif = read_sysreg(daif);
		write_sysreg(0x3c0, daif);
	}
	for (;;) {
		if (!spin)
			step(b, i++, pmu);
		work++;
		t = now_ticks();
		if (t - prev > gap_t) {
			if (!first) {
				segs[cpu][n].run_ns = (u32)timer_ticks_to_ns(prev - run_start);
				segs[cpu][n].stall_ns = (u32)timer_ticks_to_ns(t - prev);
				segs[cpu][n].work = work;
				if (++n >= nsegs)
					break;
			}
			first = false;
			run_start = t;
			work = 0;
		}
		prev = t;
		if (t - start > limit)
			break;
	}
	if (mask)
		write_sysreg(daif, daif);
	if (stats)
		all_stats(1);
	for (u32 k = 0; k < n; k++)
		printf("bwprobe: vcpu %u seg %u run_ns=%u stall_ns=%u work=%u\n", cpu, k,
		       segs[cpu][k].run_ns, segs[cpu][k].stall_ns, segs[cpu][k].work);
	printf("bwprobe: vcpu %u %s segs=%u\n", cpu, phase, n);
	return n;
}

static void tamper(void)
{
	u64 pmcr = read_sysreg(pmcr_el0), cc, ev, after;
	u32 last = (u32)(pmcr >> 11) & 0x1f; /* the first counter it does not have */

	cc = read_sysreg(pmccntr_el0);
	write_sysreg(last, pmselr_el0);
	ev = read_sysreg(pmxevcntr_el0);
	pmu_pokes();
	write_sysreg(last, pmselr_el0);
	write_sysreg(0, pmxevcntr_el0);
	after = read_sysreg(pmccntr_el0) | read_sysreg(pmxevcntr_el0);
	printf("bwprobe: pmu pmcr=0x%lx pmccntr=%lu evcntr=%lu after_writes=%lu\n", pmcr, cc, ev,
	       after);
}

static void print_stats(const char *who, u32 idx)
{
	struct bh_bw_stats st;
	s64 r = bh_bw_stats(idx, &st);

	if (r != BH_OK) {
		printf("bwprobe: stats %s error %ld\n", who, r);
		return;
	}
	printf("bwprobe: stats %s last=%lu max=%lu mean=%lu throttles=%lu stalled_ns=%lu\n", who,
	       st.last, st.max, st.mean, st.throttles, st.stalled_ns);
}

static void all_stats(u32 ncpus)
{
	char name[16];

	for (u32 i = 0; i < ncpus; i++) {
		snprintf(name, sizeof(name), "vcpu%u", i);
		print_stats(name, i);
	}
	print_stats("vm", BH_BW_VM_TOTAL);
}

/* Returns BH_HC_BW_SET's answer for the VM itself, printed later: console
 * output traps (counted) stay out of the measured periods. */
static s64 self_set(void)
{
	struct bh_vm_info vi;

	/* a VM that is not a manager may not change any budget */
	if (bh_vm_info(&vi) != BH_OK)
		return 1;
	return bh_bw_set(vi.vm_id, 1, 0);
}

static void print_self_set(s64 r)
{
	if (r != 1)
		printf("bwprobe: self_set %ld\n", r);
}

/* --- seq: each vCPU measures alone, in turn --------------------------- */

static u32 ncpus;

static void seq_turn(u32 cpu)
{
	measure(cpu, gap_ns, "seq", false);
	if (cpu + 1 < ncpus) {
		s64 r = psci_cpu_on_index(cpu + 1, 0);

		if (r != PSCI_SUCCESS) {
			printf("bwprobe: FAIL (CPU_ON %u: %ld)\n", cpu + 1, r);
			rt_halt();
		}
		return; /* this vCPU goes off; the next one measures alone */
	}
	all_stats(ncpus);
	printf("bwprobe: PASS (seq)\n");
	rt_halt();
}

/* --- reclaim: alone, then beside a busy sibling ------------------------ */

static void sibling_spin(u32 cpu)
{
	u64 *b = buf[cpu];
	u32 i = 0;

	atomic_store32(&handover, 1);
	while (!atomic_load32(&stop_sibling))
		step(b, i++, false);
}

static void reclaim(void)
{
	u64 settle = param_u64("settle_ms", 20);
	s64 r;

	measure(0, gap_ns, "alone", false);
	print_stats("vcpu0", 0);
	r = psci_cpu_on_index(1, 0);
	if (r != PSCI_SUCCESS) {
		printf("bwprobe: FAIL (CPU_ON 1: %ld)\n", r);
		return;
	}
	while (!atomic_load32(&handover))
		;
	timer_delay_us(settle * 1000);
	for (u32 k = 0; k < 8; k++) {
		struct bh_bw_stats a, b2, vm;

		timer_delay_us(3000);
		bh_bw_stats(0, &a);
		bh_bw_stats(1, &b2);
		bh_bw_stats(BH_BW_VM_TOTAL, &vm);
		printf("bwprobe: sample %u vcpu0=%lu vcpu1=%lu vm=%lu\n", k, a.last, b2.last,
		       vm.last);
	}
	measure(0, gap2_ns, "shared", false);
	atomic_store32(&stop_sibling, 1);
	while (psci_affinity_info(cpu_index_to_mpidr(1)) != PSCI_AFF_OFF)
		;
}

/* --- exits: an unregulated neighbour counts its own exits ---------------- */

static void print_exits(const char *what)
{
	struct bh_cpu_exits ex;
	s64 r = bh_cpu_exits(BH_CPU_SELF, &ex);

	if (r != BH_OK)
		printf("bwprobe: %s error %ld\n", what, r);
	else
		printf("bwprobe: %s exits=%lu irq=%lu reg=%lu\n", what, ex.exits, ex.irq_exits,
		       ex.reg_exits);
}

static void exits(void)
{
	u64 n = param_u64("work", 2000000), x = 0x9e3779b97f4a7c15ul, sum = 0;
	struct bh_cpu_exits ex;
	s64 r;

	for (u64 i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[0][i & 1023] = x;
		sum += buf[0][(i * 7) & 1023];
		if (!(i % 10000))
			bh_version(); /* exits of its own, interleaved with the neighbour's */
	}
	r = bh_cpu_exits(BH_CPU_SELF, &ex);
	if (r != BH_OK) {
		printf("bwprobe: FAIL (CPU_EXITS %ld)\n", r);
		return;
	}
	printf("bwprobe: exits exits=%lu irq=%lu reg=%lu sum=0x%lx\n", ex.exits, ex.irq_exits,
	       ex.reg_exits, sum);
}

/* --- overhead: what regulation costs a VM that never spends its budget ---- */

/* Works for window_ms; every jump of the clock above gap_ns is time the
 * vCPU did not run (the hypervisor's period handling, or a stall). */
static void overhead(void)
{
	u64 gap_t = timer_ns_to_ticks(gap_ns), limit = timer_ns_to_ticks(window_ms * 1000000ul);
	u64 start = now_ticks(), prev = start, t, lost = 0, gaps = 0, maxgap = 0, mingap = ~0ul;
	u64 *b = buf[0];
	u32 i = 0;

	do {
		step(b, i++, false);
		t = now_ticks();
		if (t - prev > gap_t) {
			gaps++;
			lost += t - prev;
			if (t - prev > maxgap)
				maxgap = t - prev;
			if (t - prev < mingap)
				mingap = t - prev;
		}
		prev = t;
	} while (t - start < limit);
	printf("bwprobe: overhead window_ns=%lu work=%u gaps=%lu lost_ns=%lu max_gap_ns=%lu "
	       "min_gap_ns=%lu\n",
	       timer_ticks_to_ns(t - start), i, gaps, timer_ticks_to_ns(lost),
	       timer_ticks_to_ns(maxgap), timer_ticks_to_ns(gaps ? mingap : 0));
}

/* --- manage: a manager VM changes another VM's budget --------------------- */

static void manage(void)
{
	u64 target = param_u64("target", 0), at = param_u64("at_ms", 20);
	u64 budget = param_u64("budget", 0), period = param_u64("period_us", 0);
	s64 r;

	timer_sleep_ns(at * NSEC_PER_MSEC);
	r = bh_bw_set((u32)target, budget, period);
	printf("bwprobe: set %ld\n", r);
	printf("bwprobe: set bad vm %ld\n", bh_bw_set(7, budget, period));
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)ctx;
	if (!strcmp(param_str_default("mode", "measure"), "reclaim"))
		sibling_spin(cpu);
	else
		seq_turn(cpu);
}

int main(const char *params)
{
	const char *mode = param_str_default("mode", "measure");

	(void)params;
	load = param_str_default("load", "mem");
	nsegs = (u32)param_u64("segs", 16);
	if (nsegs > MAX_SEGS)
		nsegs = MAX_SEGS;
	gap_ns = param_u64("gap_ns", 5000);
	gap2_ns = param_u64("gap2_ns", 400000);
	window_ms = param_u64("window_ms", 200);
	ncpus = rt_ncpus(1);
	if (ncpus > RT_MAX_CPUS)
		ncpus = RT_MAX_CPUS;

	if (!strcmp(mode, "exits")) {
		exits();
	} else if (!strcmp(mode, "overhead")) {
		overhead();
		all_stats(1);
	} else if (!strcmp(mode, "manage")) {
		manage();
	} else {
		if (param_u64("tamper", 0))
			tamper();
		s64 denied = self_set();

		if (!strcmp(mode, "seq")) {
			print_self_set(denied);
			seq_turn(0);
			psci_cpu_off(); /* vCPU 1 goes on; the last vCPU powers the VM off */
			printf("bwprobe: FAIL (CPU_OFF)\n");
			return 1;
		}
		if (!strcmp(mode, "reclaim")) {
			reclaim();
			all_stats(2);
		} else {
			measure(0, gap_ns, "measure", true);
		}
		print_self_set(denied);
		print_exits("cpu_exits");
	}
	printf("bwprobe: PASS (%s)\n", mode);
	return 0;
}
