/* SPDX-License-Identifier: Apache-2.0 */
/* The hypervisor's own (EL2 stage-1) identity map. */
#ifndef ARCH_MMU_H
#define ARCH_MMU_H

#include "lib/types.h"

enum mmu_kind {
	MMU_NORMAL, /* write-back cacheable, inner shareable */
	MMU_DEVICE, /* Device-nGnRE, never executable */
};

/* Adds an identity mapping to the EL2 tables (boot CPU, before mmu_enable). */
void mmu_map_identity(u64 base, u64 size, enum mmu_kind kind);

/* Turns on the EL2 MMU and caches on the calling CPU with the tables built
 * so far. Every CPU calls it once. */
void mmu_enable(void);

#endif
