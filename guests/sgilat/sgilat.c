// SPDX-License-Identifier: Apache-2.0
/*
 * sgilat: latency of a virtual SGI between two vCPUs of the VM (what a
 * Linux IPI costs): vCPU 0 reads the virtual counter and sends SGI 2 to
 * vCPU 1 (ICC_SGI1R_EL1 on GICv3, GICD_SGIR on GICv2: both trap to the
 * hypervisor); vCPU 1's handler reads the counter first thing (one sample:
 * the difference, both vCPUs read the same counter) and answers with SGI 3,
 * for which vCPU 0 waits in WFI. vCPU 1 waits in WFI (wait=wfi) or spins
 * with interrupts unmasked (wait=busy) between SGIs.
 *
 * Params: samples (default 1000, at most MAX_SAMPLES), wait (wfi|busy).
 * Lines: "result bench=sgilat samples=<n> wait=<w> min_ns=<a> mean_ns=<x.xxx>
 *         max_ns=<b>", "sgilat: PASS (<n> samples)" or "sgilat: FAIL (<reason>)".
 */
#include "bench.h"
#include "runtime.h"

#define SGI_PING    2
#define SGI_PONG    3
#define MAX_SAMPLES 2000
#define WAIT_NS     (5 * NSEC_PER_SEC)

static volatile u64 stamp; /* vCPU 1's handler: the counter */
static volatile u32 pings, pongs, ready, done, busy;

static void ping_irq(u32 intid)
{
	u64 now = timer_now();

	(void)intid;
	stamp = now;
	atomic_add32(&pings, 1);
	gic_send_sgi(0, SGI_PONG);
}

static void pong_irq(u32 intid)
{
	(void)intid;
	atomic_add32(&pongs, 1);
}

static void sgi_setup(u32 intid)
{
	gic_set_priority(intid, GIC_DEFAULT_PRIO);
	gic_irq_enable(intid);
}

/* Masked WFI: an interrupt between the check and WFI still wakes us. */
static void wfi_while(volatile u32 *p, u32 v)
{
	irq_local_disable();
	if (atomic_load32(p) == v)
		wfi();
	irq_local_enable();
	isb();
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)cpu;
	(void)ctx;
	gic_cpu_init();
	sgi_setup(SGI_PING);
	atomic_store32(&ready, 1);
	while (!atomic_load32(&done)) {
		if (busy)
			cpu_relax();
		else
			wfi_while(&done, 0);
	}
}

#define fail(...) rt_fail("sgilat", __VA_ARGS__)

int main(const char *params)
{
	u64 samples = param_u64("samples", 1000), sum = 0, min = ~0ull, max = 0, t0, d, deadline;
	const char *wait = param_str_default("wait", "wfi");
	char mean[BENCH_FIXED_LEN];
	s64 ret;

	(void)params;
	if (strcmp(wait, "wfi") && strcmp(wait, "busy"))
		return fail("unknown wait '%s' (want wfi or busy)", wait);
	if (!samples || samples > MAX_SAMPLES)
		return fail("samples %lu not in 1..%u", samples, MAX_SAMPLES);
	if (rt_ncpus(2) < 2)
		return fail("need 2 vCPUs");
	busy = !strcmp(wait, "busy");
	gic_init();
	irq_register(SGI_PING, ping_irq);
	irq_register(SGI_PONG, pong_irq);
	sgi_setup(SGI_PONG);
	ret = psci_cpu_on_index(1, 0);
	if (ret != PSCI_SUCCESS)
		return fail("CPU_ON vcpu 1 returned %ld", ret);
	deadline = timer_now() + timer_ns_to_ticks(WAIT_NS);
	while (!atomic_load32(&ready))
		if (timer_now() > deadline)
			return fail("vcpu 1 never came up");
	for (u32 i = 0; i < samples; i++) {
		u32 seen = atomic_load32(&pongs);

		deadline = timer_now() + timer_ns_to_ticks(WAIT_NS);
		t0 = timer_now();
		gic_send_sgi(1, SGI_PING);
		while (atomic_load32(&pongs) == seen) {
			if (timer_now() > deadline)
				return fail("no answer to SGI %u", i);
			wfi_while(&pongs, seen);
		}
		if (stamp < t0)
			return fail("sample %u: stamp before the send", i);
		d = stamp - t0;
		sum += d;
		min = d < min ? d : min;
		max = d > max ? d : max;
	}
	atomic_store32(&done, 1);
	dsb_ish();
	gic_send_sgi(1, SGI_PING); /* wakes vCPU 1 to see done */
	if (atomic_load32(&pings) < samples)
		return fail("vcpu 1 counted %u of %lu SGIs", pings, samples);
	bench_fixed(mean, timer_ticks_to_ns(sum), samples);
	printf("result bench=sgilat samples=%lu wait=%s min_ns=%lu mean_ns=%s max_ns=%lu\n",
	       samples, wait, timer_ticks_to_ns(min), mean, timer_ticks_to_ns(max));
	printf("sgilat: PASS (%lu samples)\n", samples);
	return 0;
}
