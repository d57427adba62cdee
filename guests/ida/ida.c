// SPDX-License-Identifier: Apache-2.0
/*
 * ida: BH_HC_IDA_PREPARE (invalidation-driven allocation) from inside a VM.
 *
 * Reads the last-level cache's geometry itself (CLIDR_EL1, CCSIDR_EL1) and
 * its colors (BH_HC_COLOR_INFO), then asks the hypervisor to prepare the
 * whole partition and checks the answer against its own arithmetic: every
 * way of exactly the sets of its colors (sets x k / N for k of N colors),
 * the sets' colors being exactly its own; then a partial request of `lines`
 * lines (the first sets in ascending order: colors among its own). Times
 * each call (counter ticks; virtual time under -icount).
 *
 * Parameters: uncolored=1 (expect the call to be refused: an uncolored VM
 * shares every set), lines (partial request, default 100), reps (timed
 * repetitions of the full call, default 4).
 *
 * fill=<passes>: the invalidation-driven fill itself, for the cache model
 * (docs/model.md). Fills its LLC partition with one buffer of exactly the
 * partition's size, prepares it (BH_HC_IDA_PREPARE; not with prepare=0), then
 * reads a second buffer of the same size <passes> times, one load per line,
 * inside phase marker BENCH_PHASE_IDA: prepared, the model counts one miss
 * per line whatever its replacement policy (every fill finds an invalid
 * way); unprepared, with random replacement, more.
 * Lines: "ida: preparations so far <n>" (at the first call: 1 + those at
 * start and period starts), "ida: LLC L<n> <size> KiB <w>-way <l> B lines, <sets> sets",
 * "ida: full: <lines> lines (<KiB> KiB) in <sets> sets, colors 0x<bitmap>, <ns> ns per KiB",
 * "ida: partial: ...", "ida: PASS" (or "ida: FAIL (...)").
 */
#include "bench.h"
#include "runtime.h"

static int fail(const char *why, u64 a, u64 b)
{
	printf("ida: FAIL (%s: 0x%lx 0x%lx)\n", why, a, b);
	return 1;
}

static u64 sysreg_clidr(void)
{
	u64 v;

	__asm__ volatile("mrs %0, clidr_el1" : "=r"(v));
	return v;
}

/* Geometry of the data or unified cache at level (1-based): false if none. */
static bool cache_geom(u32 level, u64 *line, u64 *ways, u64 *sets)
{
	u64 ctype = (sysreg_clidr() >> (3 * (level - 1))) & 7, ccsidr;

	if (ctype < 2)
		return false;
	__asm__ volatile("msr csselr_el1, %0; isb; mrs %1, ccsidr_el1"
	                 : "=r"(ccsidr)
	                 : "r"((u64)(level - 1) << 1));
	*line = 16ull << (ccsidr & 7);
	*ways = ((ccsidr >> 3) & 0x3ff) + 1;
	*sets = ((ccsidr >> 13) & 0x7fff) + 1;
	return true;
}

static u64 popcount(u64 x)
{
	u64 n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

/* One load per line of [buf, buf + size), passes times. */
static u64 touch(volatile const u8 *buf, u64 size, u64 line, u64 passes)
{
	u64 sum = 0;

	for (u64 p = 0; p < passes; p++)
		for (u64 off = 0; off < size; off += line)
			sum += buf[off];
	return sum;
}

static int fill_phase(u64 partition, u64 line, u64 passes)
{
	uptr a = (rt_free_start() + 0xfff) & ~(uptr)0xfff, b = a + partition;
	struct bh_ret r;

	if (b + partition > rt_free_end())
		return fail("fill: two partition-sized buffers do not fit", partition,
		            rt_free_end());
	touch((const u8 *)a, partition, line, 1); /* the partition holds valid lines */
	if (param_u64("prepare", 1)) {
		r = bh_call(BH_HC_IDA_PREPARE, 0, 0, 0, 0, 0);
		if (r.x0 != BH_OK)
			return fail("fill: prepare refused", (u64)r.x0, 0);
	}
	bench_phase(BENCH_PHASE_IDA);
	touch((const u8 *)b, partition, line, passes);
	bench_phase(BENCH_PHASE_END);
	printf("ida: fill: %lu lines, %lu passes, %s\n", partition / line, passes,
	       param_u64("prepare", 1) ? "prepared" : "not prepared");
	printf("ida: PASS\n");
	return 0;
}

int main(const char *params)
{
	u64 line = 0, ways = 0, sets = 0, want_sets, ncolors, k, reps = param_u64("reps", 4);
	u64 partial = param_u64("lines", 100), t0, best = ~0ull;
	u32 llc = 0;
	struct bh_color_info ci;
	struct bh_ret r = { 0 };

	(void)params;
	if (bh_color_info(&ci) != BH_OK)
		return fail("BH_HC_COLOR_INFO", 0, 0);
	if (param_u64("uncolored", 0)) {
		r = bh_call(BH_HC_IDA_PREPARE, 0, 0, 0, 0, 0);
		if (r.x0 != BH_E_INVALID)
			return fail("an uncolored VM's request was not refused", (u64)r.x0, 0);
		printf("ida: uncolored VM refused (%ld)\n", r.x0);
		printf("ida: PASS\n");
		return 0;
	}
	for (u32 level = 1; level <= 7; level++)
		if (cache_geom(level, &line, &ways, &sets))
			llc = level;
	if (!llc || !cache_geom(llc, &line, &ways, &sets))
		return fail("no cache reported", 0, 0);
	printf("ida: LLC L%u %lu KiB %lu-way %lu B lines, %lu sets\n", llc,
	       line * ways * sets / 1024, ways, line, sets);
	ncolors = 1ull << popcount(ci.llc_mask);
	k = popcount(ci.llc_colors);
	want_sets = sets * k / ncolors;
	if (param_u64("fill", 0))
		return fill_phase(want_sets * ways * line, line, param_u64("fill", 0));

	for (u64 i = 0; i < reps; i++) {
		t0 = timer_now();
		r = bh_call(BH_HC_IDA_PREPARE, 0, 0, 0, 0, 0);
		t0 = timer_now() - t0;
		if (r.x0 != BH_OK)
			return fail("full prepare refused", (u64)r.x0, 0);
		if (!i)
			printf("ida: preparations so far %lu\n", r.x4);
		if (r.x2 != want_sets || r.x1 != want_sets * ways)
			return fail("full prepare: sets, lines", r.x2, r.x1);
		if (r.x3 != ci.llc_colors)
			return fail("full prepare: the sets' colors are not the VM's", r.x3,
			            ci.llc_colors);
		if (t0 < best)
			best = t0;
	}
	printf("ida: full: %lu lines (%lu KiB) in %lu sets, colors 0x%lx, %lu ns per KiB "
	       "(best of %lu)\n",
	       r.x1, r.x1 * line / 1024, r.x2, r.x3, timer_ticks_to_ns(best) * 1024 / (r.x1 * line),
	       reps);

	r = bh_call(BH_HC_IDA_PREPARE, partial, 0, 0, 0, 0);
	if (r.x0 != BH_OK || r.x1 != partial || r.x2 != (partial + ways - 1) / ways)
		return fail("partial prepare: lines, sets", r.x1, r.x2);
	if (!r.x3 || (r.x3 & ~ci.llc_colors))
		return fail("partial prepare: a set of another color", r.x3, ci.llc_colors);
	printf("ida: partial: %lu lines in %lu sets, colors 0x%lx\n", r.x1, r.x2, r.x3);
	printf("ida: PASS\n");
	return 0;
}
