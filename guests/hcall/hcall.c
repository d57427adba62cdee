// SPDX-License-Identifier: Apache-2.0
/*
 * hcall: round-trip cost of the calls a guest makes into the hypervisor,
 * as the guest sees it: `calls` back-to-back calls of each kind, timed on
 * the virtual counter (under -icount shift=0 one instruction is 1 ns, so
 * the mean is the instruction count of one round trip, guest side included).
 *
 * Kinds: vendor (BH_HC_VERSION, HVC), psci (PSCI_VERSION, HVC), and, for
 * reference, nop (the loop without a call).
 *
 * Params: calls (default 10000).
 * Lines: "result bench=hcall kind=<k> calls=<n> mean_ns=<x.xxx>" per kind,
 *        "hcall: PASS" or "hcall: FAIL (<reason>)".
 */
#include "bench.h"
#include "runtime.h"

#define PSCI_VERSION_FN 0x84000000u

/* The cheapest call a guest can make: function ID in x0, nothing else. */
static u64 smc_hvc0(u32 fn)
{
	register u64 x0 __asm__("x0") = fn;

	__asm__ volatile("hvc #0" : "+r"(x0) : : "x1", "x2", "x3", "memory");
	return x0;
}

static void report(const char *kind, u64 calls, u64 ticks)
{
	u64 ps = timer_ticks_to_ns(ticks * 1000) / calls; /* picoseconds per call */

	printf("result bench=hcall kind=%s calls=%lu mean_ns=%lu.%03lu\n", kind, calls, ps / 1000,
	       ps % 1000);
}

int main(const char *params)
{
	u64 calls = param_u64("calls", 10000);
	static const struct {
		const char *kind;
		u32 fn;
	} kinds[] = { { "vendor", 0xC6000000u }, { "psci", PSCI_VERSION_FN } };
	u64 t0, t1;

	(void)params;
	if (!calls) {
		printf("hcall: FAIL (calls = 0)\n");
		return 1;
	}
	t0 = timer_now();
	for (u64 i = 0; i < calls; i++)
		__asm__ volatile("" ::: "memory");
	t1 = timer_now();
	report("nop", calls, t1 - t0);
	for (u32 k = 0; k < ARRAY_SIZE(kinds); k++) {
		u64 first = smc_hvc0(kinds[k].fn);

		if (first == (u64)-1) {
			printf("hcall: FAIL (%s call not supported)\n", kinds[k].kind);
			return 1;
		}
		t0 = timer_now();
		for (u64 i = 0; i < calls; i++)
			smc_hvc0(kinds[k].fn);
		t1 = timer_now();
		report(kinds[k].kind, calls, t1 - t0);
	}
	printf("hcall: PASS\n");
	return 0;
}
