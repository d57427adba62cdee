/* SPDX-License-Identifier: Apache-2.0 */
#ifndef ARCH_CACHE_H
#define ARCH_CACHE_H

#include "lib/types.h"

/* Cleans [va, va + size) to the point of coherency (for a guest that starts
 * with its caches off), and invalidates the instruction cache. */
void cache_clean_range(u64 va, u64 size);
void icache_invalidate_all(void);
/* Cleans and invalidates [va, va + size) to the point of coherency. */
void cache_clean_inval_range(u64 va, u64 size);

#endif
