/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Next-compliant-address lookups: the hypervisor's color_set_next()
 * (hypervisor/isolation/color.c, a few bit operations whatever the gap)
 * against a linear scan that tries page after page. Native, host gcc -O2:
 *   gcc -O2 -std=c11 -Ihypervisor bench/color_lookup.c hypervisor/isolation/color.c
 * Run by bench/coloring.sh; one run prints one line per scenario with the
 * time per lookup of both (best of 5 repetitions) and their ratio. Both
 * give the same answers (their sums are compared).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "isolation/color.h"

static u64 rng_state = 0x2545f4914f6cdd1dull;

static u64 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static u64 scan_next(const struct cfg_color *c, u64 addr)
{
	addr = (addr + 0xfff) & ~0xfffull;
	while (!color_set_match(c, addr))
		addr += 0x1000;
	return addr;
}

struct scenario {
	const char *name;
	struct cfg_color color;
	u64 base, span; /* random addresses in [base, base + span) */
	int walk;       /* 1: walk consecutive pages (next(prev + 4K)), as at VM setup */
};

/* Sum of the answers for n lookups, by color_set_next (scan = 0) or a scan. */
static u64 lookups(const struct scenario *s, const u64 *addrs, u64 n, int scan)
{
	u64 sum = 0, a = s->base;

	for (u64 i = 0; i < n; i++) {
		u64 from = s->walk ? (i ? a + 0x1000 : a) : (addrs[i] + 0xfff) & ~0xfffull;

		a = scan ? scan_next(&s->color, from) : color_set_next(&s->color, from);
		sum += a;
	}
	return sum;
}

/* Best of REPEAT runs of each (the machine may be shared). */
#define REPEAT 5

static void run(const struct scenario *s, u64 n)
{
	u64 *addrs = malloc(n * sizeof(*addrs));
	double best[2] = { 1e300, 1e300 };
	u64 sums[2] = { 0, 0 };

	if (!addrs)
		exit(1);
	for (u64 i = 0; i < n; i++)
		addrs[i] = s->base + (rnd() % s->span);
	for (int r = 0; r < REPEAT; r++) {
		for (int scan = 0; scan < 2; scan++) {
			double t0 = now_ns();

			sums[scan] = lookups(s, addrs, n, scan);
			t0 = now_ns() - t0;
			if (t0 < best[scan])
				best[scan] = t0;
		}
	}
	if (sums[0] != sums[1]) {
		printf("color_lookup: %s: MISMATCH\n", s->name);
		exit(1);
	}
	printf("color_lookup: %-44s next %8.1f ns  linear scan %10.1f ns  ratio %7.1fx\n", s->name,
	       best[0] / (double)n, best[1] / (double)n, best[1] / best[0]);
	free(addrs);
}

int main(void)
{
	/* qemu-virt model: LLC bits 12-15, bank bits 16-17 */
	static const u64 one_of_64[] = { 0x5000 | 0x20000 }; /* LLC 5 x bank 2 */
	static const u64 half_llc[] = { 0x0 };               /* LLC 0-7: bit 15 clear */
	static const u64 llc_0_3_8[] = { 0x0, 0x8000 };      /* LLC 0-3 (mask 0xc000), 8-11 */
	static const u64 tegra[] = { 0x80000000ull };        /* bank bit 31 set, LLC 0-3 */
	const struct scenario scenarios[] = {
		{ "random, LLC 0-7 (1 pattern)",
		  { 0x8000, 1, half_llc },
		  0x40000000,
		  1ull << 31,
		  0 },
		{ "random, LLC 0-3,8-11 (2 patterns)",
		  { 0xc000, 2, llc_0_3_8 },
		  0x40000000,
		  1ull << 31,
		  0 },
		{ "random, LLC 5 x bank 2 (1/64 of pages)",
		  { 0x3f000, 1, one_of_64 },
		  0x40000000,
		  1ull << 31,
		  0 },
		{ "random, bank bit 31 + LLC 0-3 of 32",
		  { 0x80018000ull, 1, tegra },
		  0x0,
		  1ull << 31,
		  0 },
		{ "walk 1 GiB, LLC 0-7", { 0x8000, 1, half_llc }, 0x40000000, 1, 1 },
		{ "walk 1 GiB, LLC 5 x bank 2", { 0x3f000, 1, one_of_64 }, 0x40000000, 1, 1 },
	};
	const u64 n[] = { 1000000, 1000000, 500000, 40, 262144, 262144 };

	for (unsigned i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run(&scenarios[i], n[i]);
	return 0;
}
