// SPDX-License-Identifier: Apache-2.0
/*
 * latency: memory access latency by pointer chasing on vCPU 0. The buffer's
 * 64-byte lines are linked in a random cyclic order (Sattolo's shuffle, so
 * the order is one cycle through every line); each load depends on the
 * previous one, so the time per access is the latency of one line fetch.
 *
 * Before timing, the guest follows the chain once from line 0 and checks
 * that it returns to line 0 after exactly as many steps as there are lines:
 * the permutation is a single cycle covering the whole buffer.
 *
 * Params: size (buffer bytes, default 4M; reduced to fit in RAM),
 *         iterations (timed walks over the whole chain, default 2),
 *         seed (shuffle seed, default 1), sync, sync_timeout_ms (as in
 *         bandwidth).
 * Lines: "latency: <k> KiB, <l> lines, <it> iterations",
 *        "latency: permutation is a single cycle over <l> lines",
 *        "result bench=latency cpu=0 size=<bytes> lines=<l> accesses=<a>
 *         ns=<t> ns_per_access=<x.xxx> start_ns=<t0> end_ns=<t1>" (t0, t1: the
 *         measured walk, virtual counter in ns: bench_stamp_ns),
 *        "latency: <x.xxx> ns per access",
 *        "latency: PASS (<a> accesses)" or "latency: FAIL (<reason>)".
 */
#include "bench.h"
#include "runtime.h"

static u64 rng_state;

static u64 rng_next(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dul;
}

#define WORDS_PER_LINE (BENCH_LINE / 8)

/* Line i's first word holds the address of the next line of the chain. */
static void build_chain(u64 *buf, u64 lines)
{
	u64 i, j, tmp;

	for (i = 0; i < lines; i++)
		buf[i * WORDS_PER_LINE] = i;
	/* Sattolo: j < i strictly, which yields a single cycle. */
	for (i = lines - 1; i > 0; i--) {
		j = rng_next() % i;
		tmp = buf[i * WORDS_PER_LINE];
		buf[i * WORDS_PER_LINE] = buf[j * WORDS_PER_LINE];
		buf[j * WORDS_PER_LINE] = tmp;
	}
	for (i = 0; i < lines; i++)
		buf[i * WORDS_PER_LINE] = (u64)(uptr)&buf[buf[i * WORDS_PER_LINE] * WORDS_PER_LINE];
}

/* Steps from line 0 back to line 0 (0 if the chain leaves the buffer). */
static u64 cycle_length(u64 *buf, u64 lines)
{
	uptr lo = (uptr)buf, hi = (uptr)buf + lines * BENCH_LINE, p = lo;
	u64 steps = 0;

	do {
		p = *(const u64 *)p;
		steps++;
		if (p < lo || p >= hi || (p - lo) % BENCH_LINE)
			return 0;
	} while (p != lo && steps <= lines);
	return steps;
}

static uptr chase(uptr p, u64 accesses)
{
	u64 i;

	for (i = 0; i + 8 <= accesses; i += 8) {
		p = *(volatile const uptr *)p;
		p = *(volatile const uptr *)p;
		p = *(volatile const uptr *)p;
		p = *(volatile const uptr *)p;
		p = *(volatile const uptr *)p;
		p = *(volatile const uptr *)p;
		p = *(volatile const uptr *)p;
		p = *(volatile const uptr *)p;
	}
	for (; i < accesses; i++)
		p = *(volatile const uptr *)p;
	return p;
}

static int run(void)
{
	u64 size = param_u64("size", MiB(4)), iterations = param_u64("iterations", 2);
	u64 lines, steps, accesses, start, stop, ns;
	char nspa[BENCH_FIXED_LEN];
	uptr base, end;

	rng_state = param_u64("seed", 1) | 1;
	if (!iterations)
		iterations = 1;
	base = bench_buffers(1, &size);
	if (!base || size < 2 * BENCH_LINE) {
		printf("latency: FAIL (no memory for the buffer)\n");
		return 1;
	}
	lines = size / BENCH_LINE;
	accesses = lines * iterations;
	printf("latency: %lu KiB, %lu lines, %lu iterations\n", size >> 10, lines, iterations);

	build_chain((u64 *)base, lines);
	steps = cycle_length((u64 *)base, lines);
	if (steps != lines) {
		printf("latency: FAIL (the chain from line 0 returns after %lu steps, not %lu)\n",
		       steps, lines);
		return 1;
	}
	printf("latency: permutation is a single cycle over %lu lines\n", lines);

	if (!bench_sync_begin("latency"))
		return 1;

	bench_phase(BENCH_PHASE_LATENCY);
	start = timer_now();
	end = chase(base, accesses);
	stop = timer_now();
	ns = timer_ticks_to_ns(stop - start);
	bench_phase(BENCH_PHASE_END);
	if (!ns)
		ns = 1;
	/* Whole walks over a single cycle end where they started. */
	if (end != base) {
		printf("latency: FAIL (walk ended at 0x%lx, not 0x%lx)\n", end, base);
		return 1;
	}
	bench_fixed(nspa, ns, accesses);
	printf("result bench=latency cpu=0 size=%lu lines=%lu accesses=%lu ns=%lu "
	       "ns_per_access=%s start_ns=%lu end_ns=%lu\n",
	       size, lines, accesses, ns, nspa, bench_stamp_ns(start), bench_stamp_ns(stop));
	printf("latency: %s ns per access\n", nspa);
	printf("latency: PASS (%lu accesses)\n", accesses);
	return 0;
}

int main(const char *params)
{
	(void)params;
	return bench_main(run);
}
