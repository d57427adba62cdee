/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/cache.h"

#include "arch/aarch64/sysregs.h"

/* The smallest data-cache line (CTR_EL0.DminLine). */
static u64 cache_dline(void)
{
	return 4ull << ((sysreg_read(ctr_el0) >> 16) & 0xf);
}

void cache_clean_range(u64 va, u64 size)
{
	u64 line = cache_dline();

	for (u64 p = ALIGN_DOWN(va, line); p < va + size; p += line)
		__asm__ volatile("dc cvac, %0" : : "r"(p) : "memory");
	dsb(ish);
}

void cache_clean_inval_range(u64 va, u64 size)
{
	u64 line = cache_dline();

	for (u64 p = ALIGN_DOWN(va, line); p < va + size; p += line)
		__asm__ volatile("dc civac, %0" : : "r"(p) : "memory");
	dsb(ish);
}

void icache_invalidate_all(void)
{
	__asm__ volatile("ic ialluis" ::: "memory");
	dsb(ish);
	isb();
}
