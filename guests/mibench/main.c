// SPDX-License-Identifier: Apache-2.0
/*
 * mibench: the MiBench/TACLeBench-style kernels of mibench.h, bare-metal.
 * For each selected kernel: make its inputs in the VM's free RAM, then run it
 * `iterations` times inside a phase marker (BENCH_PHASE_MIBENCH, so the cache
 * model measures exactly the kernels' work), timed by the virtual counter.
 * Every iteration must give the same checksum.
 *
 * Params: kernels (comma-separated names, default all, in mibench.h's
 *         order), size (small|large, default small), iterations (default 1),
 *         seed (default 1), sync and sync_timeout_ms (the handshake with
 *         interferers, lib/include/bench.h).
 * Lines: "mibench: <k> kernels, size <s>, <it> iterations, seed <x>",
 *        "mibench: sync: <p> of <q> interfering VMs ready" (with sync),
 *        per kernel "result bench=mibench kernel=<name> size=<s>
 *        iterations=<it> ns=<t> checksum=<16 hex digits> start_ns=<t0>
 *        end_ns=<t1>" (the experiment runner derives ns_per_iter) and
 *        "mibench: <name>: n=<n>, <k> KiB, <x.xxx> ns per iteration",
 *        "mibench: PASS (<k> kernels)" or "mibench: FAIL (<reason>)".
 */
#include "bench.h"
#include "mibench.h"
#include "runtime.h"

#define MAX_SELECTED 32

static const struct mb_kernel *selected[MAX_SELECTED];
static u32 nselected;

/* The "kernels" parameter into selected[]; false (after FAIL) if bad. */
static bool select_kernels(void)
{
	const char *list = param_str("kernels"), *p;

	if (!list || !*list || !strcmp(list, "all")) {
		for (nselected = 0; nselected < mb_nkernels; nselected++)
			selected[nselected] = mb_kernels[nselected];
		return true;
	}
	for (p = list; *p;) {
		size_t len = 0;
		const struct mb_kernel *k;

		while (p[len] && p[len] != ',')
			len++;
		k = mb_find(p, len);
		if (!k) {
			printf("mibench: FAIL (unknown kernel in '%s')\n", list);
			return false;
		}
		if (nselected == MAX_SELECTED) {
			printf("mibench: FAIL (more than %u kernels)\n", MAX_SELECTED);
			return false;
		}
		selected[nselected++] = k;
		p += len;
		if (*p == ',')
			p++;
	}
	return nselected > 0;
}

static bool measure(const struct mb_kernel *k, bool large, u64 iterations, u64 seed)
{
	u32 n = large ? k->n_large : k->n_small;
	uptr mem = ALIGN_UP(rt_free_start(), 64);
	u64 bytes = k->bytes(n), sum = 0, start, end, ns, it;
	char nspi[BENCH_FIXED_LEN];

	if (mem + bytes > rt_free_end()) {
		printf("mibench: FAIL (%s needs %lu KiB, the VM has %lu KiB free)\n", k->name,
		       bytes >> 10, (rt_free_end() - mem) >> 10);
		return false;
	}
	k->init((void *)mem, n, seed);
	bench_phase(BENCH_PHASE_MIBENCH);
	start = timer_now();
	for (it = 0; it < iterations; it++) {
		u64 c = k->run((void *)mem, n);

		if (it && c != sum) {
			bench_phase(BENCH_PHASE_END);
			printf("mibench: FAIL (%s: iteration %lu checksum %016lx, first %016lx)\n",
			       k->name, it, c, sum);
			return false;
		}
		sum = c;
	}
	end = timer_now();
	bench_phase(BENCH_PHASE_END);
	ns = timer_ticks_to_ns(end - start);
	/* At most 150 characters: the console's lines are 160 at most. */
	printf("result bench=mibench kernel=%s size=%s iterations=%lu ns=%lu checksum=%016lx "
	       "start_ns=%lu end_ns=%lu\n",
	       k->name, large ? "large" : "small", iterations, ns, sum, bench_stamp_ns(start),
	       bench_stamp_ns(end));
	printf("mibench: %s: n=%u, %lu KiB, %s ns per iteration\n", k->name, n, bytes >> 10,
	       bench_fixed(nspi, ns, iterations));
	return true;
}

static int run(void)
{
	const char *size = param_str_default("size", "small");
	u64 iterations = param_u64("iterations", 1), seed = param_u64("seed", 1);
	bool large = !strcmp(size, "large");

	if (!large && strcmp(size, "small")) {
		printf("mibench: FAIL (unknown size '%s'; expected small or large)\n", size);
		return 1;
	}
	if (!iterations)
		iterations = 1;
	if (!select_kernels())
		return 1;
	printf("mibench: %u kernels, size %s, %lu iterations, seed %lu\n", nselected, size,
	       iterations, seed);
	if (!bench_sync_begin("mibench"))
		return 1;
	for (u32 i = 0; i < nselected; i++)
		if (!measure(selected[i], large, iterations, seed))
			return 1;
	bench_report_regulator(1);
	printf("mibench: PASS (%u kernels)\n", nselected);
	return 0;
}

int main(const char *params)
{
	(void)params;
	return bench_main(run);
}
