// SPDX-License-Identifier: Apache-2.0
/*
 * setway: data-cache maintenance by set/way from a guest (issue #10 item 2).
 * Writes a pattern to a buffer, cleans it by VA, then issues DC ISW, DC CSW
 * and DC CISW over every set and way of every data/unified cache level up
 * to the level of coherence (as Linux and firmware do), and reads the
 * pattern back. The hypervisor traps each operation (HCR_EL2.TSW) and
 * reports how many it trapped when the VM ends; the guest keeps running and
 * its data stays intact (an invalidate is never performed bare).
 *
 * Params: passes (times the three operations are repeated, default 1).
 * Lines: "setway: L<n> <sets> sets x <ways> ways, line <b> B" per level,
 *        "setway: PASS (<n> set/way operations, pattern intact)" or
 *        "setway: FAIL (<reason>)".
 */
#include "runtime.h"

#define BUF_WORDS 8192 /* 64 KiB */

static u64 buf[BUF_WORDS];

static u64 pattern(u64 i)
{
	return (i * 0x9e3779b97f4a7c15ul) ^ 0x5e7a5e7a00000000ul;
}

static unsigned log2_ceil(u32 x)
{
	unsigned n = 0;

	while ((1u << n) < x)
		n++;
	return n;
}

/* Issues op (0 ISW, 1 CSW, 2 CISW) on every set and way of level lvl
 * (1-based); returns the number of operations issued. */
static u64 setway_level(u32 lvl, int op, bool verbose)
{
	u64 ccsidr, n = 0;
	u32 sets, ways, line;
	unsigned ls, ws;

	write_sysreg((u64)(lvl - 1) << 1, csselr_el1);
	__asm__ volatile("isb" ::: "memory");
	ccsidr = read_sysreg(ccsidr_el1);
	if ((read_sysreg(id_aa64mmfr2_el1) >> 20) & 0xf) {
		ways = (u32)((ccsidr >> 3) & 0x1fffff) + 1;
		sets = (u32)((ccsidr >> 32) & 0xffffff) + 1;
	} else {
		ways = (u32)((ccsidr >> 3) & 0x3ff) + 1;
		sets = (u32)((ccsidr >> 13) & 0x7fff) + 1;
	}
	line = 16u << (ccsidr & 7);
	ls = log2_ceil(line);
	ws = 32 - log2_ceil(ways);
	if (verbose)
		printf("setway: L%u %u sets x %u ways, line %u B\n", lvl, sets, ways, line);
	for (u32 w = 0; w < ways; w++) {
		for (u32 s = 0; s < sets; s++) {
			u64 v =
			    ((u64)(lvl - 1) << 1) | ((u64)s << ls) | (ways > 1 ? (u64)w << ws : 0);

			if (op == 0)
				__asm__ volatile("dc isw, %0" ::"r"(v) : "memory");
			else if (op == 1)
				__asm__ volatile("dc csw, %0" ::"r"(v) : "memory");
			else
				__asm__ volatile("dc cisw, %0" ::"r"(v) : "memory");
			n++;
		}
	}
	__asm__ volatile("dsb sy" ::: "memory");
	return n;
}

int main(const char *params)
{
	u64 passes = param_u64("passes", 1);
	u64 clidr = read_sysreg(clidr_el1);
	u32 loc = (u32)((clidr >> 24) & 7);
	u64 ops = 0;

	(void)params;
	for (u64 i = 0; i < BUF_WORDS; i++)
		buf[i] = pattern(i);
	for (u64 i = 0; i < BUF_WORDS; i += 8)
		__asm__ volatile("dc cvac, %0" ::"r"(&buf[i]) : "memory");
	__asm__ volatile("dsb sy" ::: "memory");

	for (u64 p = 0; p < passes; p++) {
		for (int op = 0; op < 3; op++) {
			for (u32 lvl = 1; lvl <= loc; lvl++) {
				u32 ctype = (u32)(clidr >> (3 * (lvl - 1))) & 7;

				if (ctype >= 2) /* data, separate or unified */
					ops += setway_level(lvl, op, p == 0 && op == 0);
			}
		}
	}
	for (u64 i = 0; i < BUF_WORDS; i++) {
		if (buf[i] != pattern(i)) {
			printf("setway: FAIL (word %lu is 0x%lx, expected 0x%lx)\n", i, buf[i],
			       pattern(i));
			return 1;
		}
	}
	if (!ops) {
		printf("setway: FAIL (the CPU reports no data cache up to the LoC)\n");
		return 1;
	}
	printf("setway: PASS (%lu set/way operations, pattern intact)\n", ops);
	return 0;
}
