/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/spintable.h"
#include "arch/aarch64/cache.h"

void spintable_release(u64 release, u32 index)
{
	volatile u64 *slot = (volatile u64 *)(uintptr_t)release;

	*slot = (u64)(uintptr_t)spintable_entries + (u64)index * SPINTABLE_ENTRY_SIZE;
	/* the parked CPU reads with its MMU (and so its caches) off */
	cache_clean_inval_range(release, sizeof(u64));
	__asm__ volatile("dsb sy\n\tsev" ::: "memory");
}
