// SPDX-License-Identifier: Apache-2.0
/*
 * irqlat: latency of the virtual timer interrupt as the guest sees it, on
 * vCPU 0. The timer is armed for a deadline (CNTV_CVAL); the IRQ handler
 * reads the virtual counter first thing, and the difference is one sample:
 * everything between the timer firing and the guest's handler running
 * (under Bulkhead: the physical interrupt trapping to EL2, injection into
 * the vGIC, the exception entry at EL1 and the GIC acknowledge). The next
 * deadline is one period after the handler ran.
 *
 * Between interrupts the vCPU waits in WFI (wait=wfi) or spins (wait=busy).
 * The guest checks that it collected every sample and that none arrived
 * before its deadline.
 *
 * Params: samples (default 1000), period_us (default 100), warmup (samples
 *         discarded first, default 10), wait (wfi|busy, default wfi), sync,
 *         sync_timeout_ms (as in bandwidth), mark (0|1, default 0: a
 *         BH_HC_VERSION call just before the first interrupt is armed and
 *         one after the last, bench/hyptrace.py window_exits' markers).
 * Lines: "irqlat: <n> samples every <p> us, wait <w>, timer <f> Hz",
 *        "result bench=irqlat cpu=0 samples=<n> period_us=<p> wait=<w>
 *         min_ns=<a> mean_ns=<x.xxx> p50_ns=<b> p99_ns=<c> max_ns=<d>
 *         start_ns=<t0> end_ns=<t1>" (the sampling, bench_stamp_ns),
 *        "irqlat: min <a> ns, mean <x.xxx> ns, p99 <c> ns, max <d> ns",
 *        "irqlat: PASS (<n> samples)" or "irqlat: FAIL (<reason>)".
 */
#include "bench.h"
#include "runtime.h"

static u64 *lat;   /* samples, in counter ticks */
static u64 period; /* ticks */
static u64 warmup;
static u64 wanted;         /* warmup + samples */
static volatile u64 taken; /* interrupts handled */
static volatile u64 early; /* interrupts before their deadline */
static volatile u64 deadline;

static void timer_irq(u32 intid)
{
	u64 now = timer_now(), d = deadline, n = taken;

	(void)intid;
	if (now < d) {
		early++;
	} else if (n >= warmup) {
		lat[n - warmup] = now - d;
	}
	taken = ++n;
	if (n >= wanted) {
		timer_stop();
		return;
	}
	deadline = now + period;
	timer_set_deadline(deadline);
}

static void shell_sort(u64 *a, u64 n)
{
	static const u64 gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };
	u64 g, i, j, v, gap;

	for (g = 0; g < ARRAY_SIZE(gaps); g++) {
		gap = gaps[g];
		for (i = gap; i < n; i++) {
			v = a[i];
			for (j = i; j >= gap && a[j - gap] > v; j -= gap)
				a[j] = a[j - gap];
			a[j] = v;
		}
	}
}

static bool wait_samples(bool busy)
{
	u64 last = 0, mark = timer_now(), limit = 10 * period + timer_ns_to_ticks(5 * NSEC_PER_SEC);

	while (taken < wanted) {
		if (busy) {
			cpu_relax();
		} else {
			/* Masked WFI: an interrupt between the check and WFI still wakes us. */
			irq_local_disable();
			if (taken < wanted)
				wfi();
			irq_local_enable();
			isb();
		}
		if (taken != last) {
			last = taken;
			mark = timer_now();
		} else if (timer_now() - mark > limit) {
			return false;
		}
	}
	return true;
}

static int run(void)
{
	u64 samples = param_u64("samples", 1000), period_us = param_u64("period_us", 100);
	const char *wait = param_str_default("wait", "wfi");
	u64 bytes, sum = 0, i, p50, p99, first, last;
	char mean[BENCH_FIXED_LEN];
	bool busy, ok, mark = param_u64("mark", 0) != 0;

	warmup = param_u64("warmup", 10);
	if (!strcmp(wait, "busy")) {
		busy = true;
	} else if (!strcmp(wait, "wfi")) {
		busy = false;
	} else {
		printf("irqlat: FAIL (unknown wait '%s'; expected wfi or busy)\n", wait);
		return 1;
	}
	if (!samples)
		samples = 1;
	if (!period_us)
		period_us = 1;
	bytes = ALIGN_UP(samples * sizeof(u64), BENCH_LINE);
	lat = (u64 *)bench_buffers(1, &bytes);
	if (!lat || bytes < samples * sizeof(u64)) {
		printf("irqlat: FAIL (no memory for %lu samples)\n", samples);
		return 1;
	}
	wanted = warmup + samples;
	period = timer_ns_to_ticks(period_us * NSEC_PER_USEC);
	if (!period)
		period = 1;
	printf("irqlat: %lu samples every %lu us, wait %s, timer %lu Hz\n", samples, period_us,
	       wait, timer_freq());

	if (!bench_sync_begin("irqlat"))
		return 1;

	gic_init();
	irq_register(TIMER_VIRT_INTID, timer_irq);
	gic_irq_enable(TIMER_VIRT_INTID);
	if (mark)
		(void)bh_version();
	first = timer_now();
	deadline = first + period;
	timer_set_deadline(deadline);
	ok = wait_samples(busy);
	last = timer_now();
	if (mark)
		(void)bh_version();
	if (!ok) {
		timer_stop();
		printf("irqlat: FAIL (timer stopped after %lu of %lu interrupts)\n", taken, wanted);
		return 1;
	}
	gic_irq_disable(TIMER_VIRT_INTID);
	if (early) {
		printf("irqlat: FAIL (%lu interrupts before their deadline)\n", early);
		return 1;
	}
	if (taken - warmup != samples) {
		printf("irqlat: FAIL (got %lu samples, expected %lu)\n", taken - warmup, samples);
		return 1;
	}

	shell_sort(lat, samples);
	for (i = 0; i < samples; i++)
		sum += lat[i];
	p50 = lat[(samples - 1) / 2];
	p99 = lat[(samples * 99 + 99) / 100 - 1]; /* ceil(0.99 n)-th smallest */
	bench_fixed(mean, timer_ticks_to_ns(sum), samples);
	printf("result bench=irqlat cpu=0 samples=%lu period_us=%lu wait=%s min_ns=%lu "
	       "mean_ns=%s p50_ns=%lu p99_ns=%lu max_ns=%lu start_ns=%lu end_ns=%lu\n",
	       samples, period_us, wait, timer_ticks_to_ns(lat[0]), mean, timer_ticks_to_ns(p50),
	       timer_ticks_to_ns(p99), timer_ticks_to_ns(lat[samples - 1]), bench_stamp_ns(first),
	       bench_stamp_ns(last));
	printf("irqlat: min %lu ns, mean %s ns, p99 %lu ns, max %lu ns\n",
	       timer_ticks_to_ns(lat[0]), mean, timer_ticks_to_ns(p99),
	       timer_ticks_to_ns(lat[samples - 1]));
	printf("irqlat: PASS (%lu samples)\n", samples);
	return 0;
}

int main(const char *params)
{
	(void)params;
	return bench_main(run);
}
