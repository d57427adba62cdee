// SPDX-License-Identifier: Apache-2.0
/*
 * stride: bandwidth as a function of the step between consecutive accesses,
 * to find the slowest (sustainable) rate of the memory system. Step sizes
 * double from min_step (64 B) to max_step. For a step s the buffer is walked
 * s / 64 times, starting at offsets 0, 64, ..., s - 64, each walk touching
 * every s-th line: every step touches each line of the buffer exactly once
 * per pass, so all steps move the same number of bytes and only the access
 * pattern differs (row-buffer, bank and TLB locality).
 *
 * The guest checks that it visited every step and touched size / 64 lines
 * per pass at each of them (reads: the sum of the values read; writes: the
 * values left in the lines).
 *
 * Params: mode (read|write, default read), size (buffer bytes, default 4M;
 *         reduced to fit in RAM, rounded down to a power of two), min_step
 *         (default 64), max_step (default min(size / 2, 1M)), passes (per
 *         step, default 1), sync, sync_timeout_ms (as in bandwidth).
 * Lines: "stride: <k> KiB, mode <m>, steps <min>..<max> B, <p> passes",
 *        "result bench=stride kind=step cpu=0 mode=<m> step=<s> lines=<l>
 *         bytes=<b> ns=<t> mbps=<x.xxx> ns_per_line=<x.xxx>" per step,
 *        "stride: step <s> B: <x.xxx> MB/s" per step,
 *        "result bench=stride kind=summary cpu=0 mode=<m> steps=<n>
 *         slowest_step=<s> min_mbps=<x.xxx> fastest_step=<s> max_mbps=<x.xxx>
 *         start_ns=<t0> end_ns=<t1>" (first step's start to last step's end),
 *        "stride: sustainable <x.xxx> MB/s at step <s> B",
 *        "stride: PASS (<n> steps)" or "stride: FAIL (<reason>)".
 */
#include "bench.h"
#include "memwalk.h"
#include "runtime.h"

#define WORDS_PER_LINE MEMWALK_LINE_WORDS
#define MAX_STEPS      40

static u64 pow2_floor(u64 x)
{
	u64 p = 1;

	while (p <= x / 2)
		p <<= 1;
	return p;
}

/*
 * One pass at a step: returns the lines touched; *sum accumulates reads.
 * size and step are powers of two, step <= size: each walk touches size / step
 * lines; a write pass stores 0, 1, ... in visiting order.
 */
static u64 pass(volatile u64 *buf, u64 size, u64 step, bool write, u64 *sum)
{
	u64 off, touched = 0, s = 0, per_walk = size / step;

	for (off = 0; off < step; off += BENCH_LINE, touched += per_walk) {
		if (write)
			memwalk_write_seq(buf + off / 8, per_walk, step / 8, touched);
		else
			s += memwalk_read(buf + off / 8, per_walk, step / 8);
	}
	*sum += s;
	return touched;
}

static int run(void)
{
	const char *m = param_str_default("mode", "read");
	u64 size = param_u64("size", MiB(4)), passes = param_u64("passes", 1);
	u64 min_step = param_u64("min_step", BENCH_LINE), max_step, step, lines, touched;
	u64 sum, want_sum, start, ns, bytes, p, first = 0, last = 0;
	u64 min_mbps_milli = ~0ul, max_mbps_milli = 0, slowest = 0, fastest = 0;
	char mbps[BENCH_FIXED_LEN], nspl[BENCH_FIXED_LEN], lo[BENCH_FIXED_LEN], hi[BENCH_FIXED_LEN];
	u32 nsteps = 0, expected_steps = 0, failures = 0;
	bool write;
	uptr base;

	if (!strcmp(m, "read")) {
		write = false;
	} else if (!strcmp(m, "write")) {
		write = true;
	} else {
		printf("stride: FAIL (unknown mode '%s'; expected read or write)\n", m);
		return 1;
	}
	if (!passes)
		passes = 1;
	base = bench_buffers(1, &size);
	if (!base || size < 2 * BENCH_LINE) {
		printf("stride: FAIL (no memory for the buffer)\n");
		return 1;
	}
	size = pow2_floor(size);
	lines = size / BENCH_LINE;
	min_step = pow2_floor(min_step < BENCH_LINE ? BENCH_LINE : min_step);
	max_step = param_u64("max_step", size / 2 < MiB(1) ? size / 2 : MiB(1));
	max_step = pow2_floor(max_step < min_step ? min_step : max_step);
	if (max_step > size)
		max_step = size;
	if (min_step > max_step)
		min_step = max_step;
	for (step = min_step; step <= max_step; step <<= 1)
		expected_steps++;
	printf("stride: %lu KiB, mode %s, steps %lu..%lu B, %lu passes\n", size >> 10, m, min_step,
	       max_step, passes);

	memwalk_write_seq((volatile u64 *)base, lines, WORDS_PER_LINE, 0);
	/* Reads sum each line's first word; a write pass leaves line-order values. */
	want_sum = lines * (lines - 1) / 2;

	if (!bench_sync_begin("stride"))
		return 1;

	for (step = min_step; step <= max_step && nsteps < MAX_STEPS; step <<= 1) {
		u64 milli;

		touched = 0;
		sum = 0;
		bench_phase(BENCH_PHASE_STRIDE);
		start = timer_now();
		if (!nsteps)
			first = start;
		for (p = 0; p < passes; p++)
			touched += pass((volatile u64 *)base, size, step, write, &sum);
		last = timer_now();
		ns = timer_ticks_to_ns(last - start);
		bench_phase(BENCH_PHASE_END);
		if (!ns)
			ns = 1;
		nsteps++;
		if (touched != lines * passes) {
			printf("stride: FAIL (step %lu: touched %lu lines, expected %lu)\n", step,
			       touched, lines * passes);
			failures++;
		}
		/*
		 * Reads see line i's value: i initially, or its index in the
		 * last write pass's visiting order. Either way a permutation of
		 * 0..lines-1, so the sum is the same.
		 */
		if (!write && sum != want_sum * passes) {
			printf("stride: FAIL (step %lu: sum %lu, expected %lu)\n", step, sum,
			       want_sum * passes);
			failures++;
		}
		if (write) {
			/* Untimed: the lines hold 0..lines-1 in this step's order. */
			sum = memwalk_read((volatile u64 *)base, lines, WORDS_PER_LINE);
			if (sum != want_sum) {
				printf("stride: FAIL (step %lu: lines sum to %lu after writing, "
				       "expected %lu)\n",
				       step, sum, want_sum);
				failures++;
			}
		}
		bytes = touched * BENCH_LINE;
		milli = bytes * 1000000 / ns;
		if (milli < min_mbps_milli) {
			min_mbps_milli = milli;
			slowest = step;
		}
		if (milli > max_mbps_milli) {
			max_mbps_milli = milli;
			fastest = step;
		}
		bench_mbps(mbps, bytes, ns);
		bench_fixed(nspl, ns, touched);
		printf("result bench=stride kind=step cpu=0 mode=%s step=%lu lines=%lu bytes=%lu "
		       "ns=%lu mbps=%s ns_per_line=%s\n",
		       m, step, touched, bytes, ns, mbps, nspl);
		printf("stride: step %lu B: %s MB/s\n", step, mbps);
	}

	if (nsteps != expected_steps) {
		printf("stride: FAIL (visited %u steps, expected %u)\n", nsteps, expected_steps);
		return 1;
	}
	bench_fixed(lo, min_mbps_milli, 1000);
	bench_fixed(hi, max_mbps_milli, 1000);
	printf("result bench=stride kind=summary cpu=0 mode=%s steps=%u slowest_step=%lu "
	       "min_mbps=%s fastest_step=%lu max_mbps=%s start_ns=%lu end_ns=%lu\n",
	       m, nsteps, slowest, lo, fastest, hi, bench_stamp_ns(first), bench_stamp_ns(last));
	printf("stride: sustainable %s MB/s at step %lu B\n", lo, slowest);
	if (failures) {
		printf("stride: FAIL (%u errors)\n", failures);
		return 1;
	}
	printf("stride: PASS (%u steps)\n", nsteps);
	return 0;
}

int main(const char *params)
{
	(void)params;
	return bench_main(run);
}
