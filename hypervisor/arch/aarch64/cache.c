/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/cache.h"

#include "arch/aarch64/sysregs.h"

void cache_clean_range(u64 va, u64 size)
{
	u64 ctr = sysreg_read(ctr_el0);
	u64 line = 4ull << ((ctr >> 16) & 0xf);
	u64 end = va + size;

	for (u64 p = ALIGN_DOWN(va, line); p < end; p += line)
		__asm__ volatile("dc cvac, %0" : : "r"(p) : "memory");
	dsb(ish);
}

void icache_invalidate_all(void)
{
	__asm__ volatile("ic ialluis" ::: "memory");
	dsb(ish);
	isb();
}
